"""Building a correct descriptor from sizes and repeats (what ``dmltile new`` prints)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.enums import DataType
from ..core.operator import OperatorDesc
from ..core.shape import tile_output_sizes
from ..errors import DmlTileError
from .document import load


def tile_desc(
    input_sizes: Sequence[int],
    repeats: Sequence[int],
    dtype: Any = "FLOAT32",
    strides: Sequence[int] | None = None,
) -> OperatorDesc:
    """A correct Tile descriptor (``dtype``: FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT32, a NumPy dtype or
    its name): the input as given (packed unless ``strides``), a packed output
    of ``input_sizes * repeats``, and every count and byte size computed.

    Values no descriptor can hold (a negative size, an output size past UINT, an unknown data
    type) raise DescriptorError with paths into the canonical document, as ``load()`` does.
    """
    given: list[tuple[str, Any]] = [("input_sizes", input_sizes), ("repeats", repeats)]
    if strides is not None:
        given.append(("strides", strides))
    for name, values in given:
        if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
            raise DmlTileError(f"{name} must be a list of whole numbers, got {values!r}"[:200])
        for i, v in enumerate(values):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise DmlTileError(f"{name}[{i}] is {v!r}, not a whole number"[:200])
    input_sizes, repeats = [int(v) for v in input_sizes], [int(v) for v in repeats]
    dtype = data_type_of(dtype)
    if len(input_sizes) != len(repeats):
        raise DmlTileError(
            f"{len(repeats)} repeats for {len(input_sizes)} input sizes; give one repeat per dimension"
        )
    return load(
        {
            "InputTensor": {
                "DataType": dtype,
                "Sizes": list(input_sizes),
                "Strides": None if strides is None else [int(v) for v in strides],
            },
            "OutputTensor": {"DataType": dtype, "Sizes": list(tile_output_sizes(input_sizes, repeats))},
            "Repeats": list(repeats),
        }
    )


def data_type_of(dtype: Any) -> Any:
    """A DataType from a DirectML spelling, or from a NumPy dtype or its name (``np.float32``,
    ``"float32"``); anything else is passed on for the document's own error."""
    try:
        return DataType.parse(dtype)
    except ValueError:
        pass
    try:
        return DataType.from_numpy(np.dtype(dtype))
    except (TypeError, ValueError):
        return dtype
