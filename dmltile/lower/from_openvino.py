"""OpenVINO ``Tile-1``: rank promotion both ways, negative repeats clamped to 0.

Sources: the OpenVINO Tile-1 specification (docs.openvino.ai, openvino_docs_ops_movement_Tile_1):
repeats is "a tensor of type T2: any integer type"; more repeats than data
axes promote the data "by prepending new axes"; fewer repeats are promoted "by prepending 1's";
the output rank is the larger of the two. The clamp of negative repeats to 0, the rank-1 check on
repeats and the size_t overflow check are in OpenVINO's own code: src/core/shape_inference/include/
tile_shape_inference.hpp ("Tile repeats must be of rank 1", ``negative_repeats_to_zero``) and
src/core/src/op/tile.cpp ("Tile repeats must have any integer element type", "Tile output shape is
too large and overflows size_t element count").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.shape import tile_output_sizes
from ..errors import FrameworkError
from .framework import (
    INT64_MAX,
    FrameworkTile,
    check_int64_dims,
    check_shape,
    element_count,
    promote_ranks,
    repeats_array,
)

OP = "OpenVINO Tile-1"
# OpenVINO element types that NumPy-terms names can spell (OpenVINO has no complex types).
OPENVINO_TYPES = (
    "bool",
    "bfloat16",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "string",
)
SIZE_T_MAX = 2**64 - 1


def openvino_tile(input_shape: Any, repeats: Any, dtype: str) -> FrameworkTile:
    """Apply OpenVINO Tile-1; FrameworkError when OpenVINO itself rejects the node."""
    shape = check_shape(OP, input_shape)
    if dtype not in OPENVINO_TYPES:
        raise FrameworkError(
            f"{OP}: data type {dtype} is not an OpenVINO element type (T1 is any supported type: "
            + ", ".join(OPENVINO_TYPES)
            + ")"
        )
    reps = repeats_array(OP, repeats)
    if reps.dtype == np.bool_ or not np.issubdtype(reps.dtype, np.integer):
        raise FrameworkError(
            f"{OP}: repeats has element type {reps.dtype}; Tile repeats must have an integer element type (T2)"
        )
    if reps.ndim != 1:
        raise FrameworkError(f"{OP}: repeats has shape {list(reps.shape)}; Tile repeats must be of rank 1")
    given = tuple(int(r) for r in reps)
    for i, r in enumerate(given):
        if r > INT64_MAX:  # uint64 repeats: OpenVINO reads them as int64, range-checked
            raise FrameworkError(
                f"{OP}: repeats[{i}] is {r}, past int64 ({INT64_MAX}), the type OpenVINO reads repeats as"
            )
    steps = []
    clamped = tuple(max(r, 0) for r in given)
    if clamped != given:
        steps.append(
            f"{OP}: clamped negative repeats to 0 ({list(given)} -> {list(clamped)}), "
            "as OpenVINO's shape inference does."
        )
    promoted_shape, promoted_reps, promotion = promote_ranks(OP, shape, clamped)
    steps += promotion
    check_int64_dims(OP, promoted_shape, promoted_reps)
    out_count = element_count(tile_output_sizes(promoted_shape, promoted_reps))
    if out_count > SIZE_T_MAX:
        raise FrameworkError(
            f"{OP}: the output would hold {out_count} elements; Tile output shape is too large "
            f"and overflows size_t element count ({SIZE_T_MAX})"
        )
    steps.append(f"{OP}: output_dim[i] = data_dim[i] * repeats[i] with repeats {list(promoted_reps)}.")
    return FrameworkTile("openvino", OP, shape, given, dtype, promoted_shape, promoted_reps, steps)
