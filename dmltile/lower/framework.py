"""What every framework module hands to the DirectML mapping, and the checks they share.

A framework module (``from_onnx``, ``from_openvino``, ``from_numpy``) applies its framework's own
Tile rules and returns a ``FrameworkTile``: the node as that framework sees it (shape, repeats,
data type) and the equivalent same-rank, non-negative Tile that ``plan.py`` maps onto DirectML.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.shape import tile_output_sizes
from ..errors import FrameworkError

INT64_MAX = 2**63 - 1

# Data type names in NumPy terms, with the other spellings users write (ONNX, C, short forms).
_ALIASES = {
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "bf16": "bfloat16",
    "boolean": "bool",
    "f16": "float16",
    "f32": "float32",
    "f64": "float64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "str": "string",
    "bool_": "bool",
    "object": "string",
}
STRING_KINDS = ("U", "S", "O", "T")


def dtype_name(dtype: Any) -> str:
    """The data type's name in NumPy terms: ``"float32"``, ``"bfloat16"``, ``"bool"``, ``"string"``...

    Accepts a NumPy dtype, a name (``"float"``, ``"tensor(double)"`` and other aliases too), or
    ``str``/``bytes``/``object``, which all mean string elements.
    """
    if dtype in (str, bytes, object):
        return "string"
    if isinstance(dtype, str):
        name = dtype.strip().lower()
        if name.startswith("tensor(") and name.endswith(")"):
            name = name[7:-1]
        name = _ALIASES.get(name, name)
        if name in ("string", "bfloat16") or name in _ALIASES.values():
            return name
        dtype = name
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise FrameworkError(
            f"dtype {dtype!r} names no data type; use a NumPy name such as 'float32', "
            "'float16', 'bfloat16', 'bool', 'int64' or 'string'"
        ) from None
    if dt.kind in STRING_KINDS:
        return "string"
    try:
        return dt.name if np.dtype(dt.name) == dt else dt.str
    except TypeError:  # names NumPy prints but does not parse back, such as void24
        return dt.str


def itemsize(name: str) -> int | None:
    """Bytes per element of a NumPy-terms type name (None for strings)."""
    if name == "string":
        return None
    if name == "bfloat16":
        return 2
    return np.dtype(name).itemsize


@dataclass
class FrameworkTile:
    """One framework Tile node, after the framework's rules: what plan.py maps onto DirectML."""

    framework: str  # "onnx", "openvino" or "numpy"
    operator: str  # "ONNX Tile-13", "OpenVINO Tile-1", "numpy.tile"
    input_shape: tuple[int, ...]  # the data's shape as the framework receives it
    repeats: tuple[int, ...]  # the repeats as given (ONNX Tile-1: what its tiles and axis mean)
    dtype: str  # NumPy-terms name
    shape: tuple[int, ...]  # input shape after the framework's rank promotion
    effective_repeats: tuple[int, ...]  # one non-negative repeat per axis of ``shape``
    steps: list[str] = field(default_factory=list)

    @property
    def output_shape(self) -> tuple[int, ...]:
        """The framework's output shape."""
        return tile_output_sizes(self.shape, self.effective_repeats)


def check_shape(operator: str, input_shape: Any) -> tuple[int, ...]:
    """The data shape as a tuple of non-negative ints; FrameworkError naming the bad dimension."""
    if isinstance(input_shape, (str, bytes)) or not isinstance(input_shape, (Sequence, np.ndarray)):
        raise FrameworkError(
            f"{operator}: input_shape must be a sequence of dimension sizes; got {input_shape!r}"
        )
    dims = []
    for i, d in enumerate(input_shape):
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, numbers.Integral):
            raise FrameworkError(
                f"{operator}: input_shape[{i}] is {d!r}; a tensor dimension is a non-negative integer"
            )
        if d < 0:
            raise FrameworkError(f"{operator}: input_shape[{i}] is {d}; a tensor dimension is at least 0")
        dims.append(int(d))
    return tuple(dims)


def repeats_array(operator: str, repeats: Any, list_dtype: str = "int64") -> np.ndarray:
    """``repeats`` as an ndarray: lists are read as 1-D ``list_dtype``; arrays keep their dtype and
    shape for the framework to check. A list holding a non-integer is a FrameworkError (never
    truncated)."""
    if isinstance(repeats, np.ndarray):
        return repeats
    if isinstance(repeats, np.generic):
        return np.asarray(repeats)
    if isinstance(repeats, (str, bytes)) or not isinstance(repeats, Sequence):
        raise FrameworkError(f"{operator}: repeats must be a list or an ndarray of integers; got {repeats!r}")
    for i, r in enumerate(repeats):
        if isinstance(r, (bool, np.bool_)) or not isinstance(r, numbers.Integral):
            raise FrameworkError(f"{operator}: repeats[{i}] is {r!r}; repeats are integers ({list_dtype})")
    info = np.iinfo(list_dtype)
    for i, r in enumerate(repeats):
        if not info.min <= r <= info.max:
            raise FrameworkError(
                f"{operator}: repeats[{i}] is {r}, outside {list_dtype} ({info.min}..{info.max})"
            )
    return np.asarray(list(repeats), dtype=list_dtype).reshape(len(repeats))


def check_int64_dims(operator: str, shape: Sequence[int], repeats: Sequence[int]) -> None:
    """Reject an output dimension past int64 (ONNX and OpenVINO dimensions are int64)."""
    for i, (s, r, out) in enumerate(zip(shape, repeats, tile_output_sizes(shape, repeats), strict=False)):
        if out > INT64_MAX:
            raise FrameworkError(
                f"{operator}: output dimension {i} = {s} * {r} = {out} overflows int64 "
                f"(at most {INT64_MAX}); dimensions are int64"
            )


def element_count(shape: Sequence[int]) -> int:
    """Number of elements of a shape (exact, Python ints)."""
    return math.prod(shape)


def promote_ranks(
    operator: str,
    shape: tuple[int, ...],
    repeats: tuple[int, ...],
    data: str = "the data",
    reps: str = "repeats",
) -> tuple[tuple[int, ...], tuple[int, ...], list[str]]:
    """OpenVINO's and numpy's rule: the longer of shape and repeats sets the rank; the other gets
    leading 1s. Returns the promoted shape and repeats, and a sentence per promotion."""
    rank = max(len(shape), len(repeats))
    promoted_shape = (1,) * (rank - len(shape)) + tuple(shape)
    promoted_reps = (1,) * (rank - len(repeats)) + tuple(repeats)
    steps = []
    if promoted_shape != tuple(shape):
        added = rank - len(shape)
        steps.append(
            f"{operator}: promoted {data}'s shape {list(shape)} to {list(promoted_shape)} by prepending "
            f"{added} new axis{'es' * (added > 1)}, because {reps} has {len(repeats)} values."
        )
    if promoted_reps != tuple(repeats):
        steps.append(
            f"{operator}: promoted {reps} {list(repeats)} to {list(promoted_reps)} by prepending 1s, "
            f"because {data} has {len(shape)} dimensions."
        )
    return promoted_shape, promoted_reps, steps
