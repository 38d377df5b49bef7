"""ONNX ``Tile``: versions 13, 6 and 1, each with its own inputs and type constraints.

Source: the ONNX operator page for Tile (onnx.ai/onnx/operators/onnx__Tile.html):
* Tile-13 and Tile-6: ``repeats`` is a "1D int64 tensor of the same length as input's dimension
  number"; ``output_dim[i] = input_dim[i] * repeats[i]``; "same as function tile in Numpy, but no
  broadcast". Tile-6 types: every tensor type but bfloat16; Tile-13 adds bfloat16.
* Tile-1: inputs ``tiles`` ("number of repeated copies") and ``axis`` ("axis along which to
  repeat"); data types float16, float and double only.
Negative repeats: the page only speaks of numbers of copies; onnxruntime rejects them ("Tile
repeat value must be non-negative"), so they are rejected here. Zero repeats make an empty output.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..errors import FrameworkError
from .framework import FrameworkTile, check_int64_dims, check_shape, repeats_array

_ALL_TYPES = (
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
    "string",
    "bool",
    "complex64",
    "complex128",
)
# Type constraint T of each version (checked against onnx.defs by the tests).
TILE_TYPES: dict[int, tuple[str, ...]] = {
    1: ("float16", "float32", "float64"),
    6: _ALL_TYPES,
    13: _ALL_TYPES + ("bfloat16",),
}
ONNX_NAMES = {"float32": "float", "float64": "double"}


def tile_version(opset: Any) -> int:
    """The Tile version in force at an ai.onnx opset: 1 (opsets 1-5), 6 (6-12) or 13 (13 on)."""
    if isinstance(opset, bool) or not isinstance(opset, numbers.Integral) or opset < 1:
        raise FrameworkError(f"ONNX: opset is {opset!r}; ai.onnx opsets are integers from 1")
    n = int(opset)
    return 13 if n >= 13 else 6 if n >= 6 else 1


def _type_names(version: int) -> str:
    return ", ".join(f"tensor({ONNX_NAMES.get(t, t)})" for t in TILE_TYPES[version])


def check_type(version: int, dtype: str) -> None:
    """FrameworkError unless ``dtype`` is in the version's type constraint T."""
    if dtype not in TILE_TYPES[version]:
        extra = " (bfloat16 arrives with Tile-13, opset 13)" if dtype == "bfloat16" and version == 6 else ""
        raise FrameworkError(
            f"ONNX Tile-{version}: input type {dtype} is not in T = ({_type_names(version)}){extra}"
        )


def onnx_tile(
    input_shape: Any, repeats: Any, dtype: str, opset: int = 13, tiles: Any = None, axis: Any = None
) -> FrameworkTile:
    """Apply ONNX Tile at ``opset`` to a node; FrameworkError when ONNX itself rejects it."""
    version = tile_version(opset)
    op = f"ONNX Tile-{version}"
    shape = check_shape(op, input_shape)
    check_type(version, dtype)
    if version == 1:
        if repeats is not None:
            raise FrameworkError(
                f"{op} (opset {opset}) has inputs tiles and axis, not repeats; "
                "pass repeats=None, tiles=N, axis=K (or use opset 6 or later)"
            )
        return _tile_1(op, shape, dtype, tiles, axis)
    if tiles is not None or axis is not None:
        raise FrameworkError(f"{op}: tiles and axis are inputs of Tile-1 (opsets 1-5); {op} takes repeats")
    if repeats is None:
        raise FrameworkError(
            f"{op}: the repeats input is required (a 1-D int64 tensor of length {len(shape)})"
        )
    reps = repeats_array(op, repeats)
    if reps.dtype != np.int64:
        raise FrameworkError(f"{op}: repeats has type tensor({reps.dtype}); T1 allows tensor(int64) only")
    if reps.ndim != 1:
        raise FrameworkError(f"{op}: repeats has shape {list(reps.shape)}; it must be a 1-D tensor")
    if len(reps) != len(shape):
        raise FrameworkError(
            f"{op}: repeats {reps.tolist()} has {len(reps)} values, but the input has rank "
            f"{len(shape)}; repeats has the same length as the input's dimension number (no broadcast)"
        )
    values = tuple(int(r) for r in reps)
    for i, r in enumerate(values):
        if r < 0:
            raise FrameworkError(f"{op}: repeats[{i}] is {r}; a repeat is a number of copies, at least 0")
    check_int64_dims(op, shape, values)
    steps = [f"{op}: output_dim[i] = input_dim[i] * repeats[i] with repeats {list(values)}."]
    return FrameworkTile("onnx", op, shape, values, dtype, shape, values, steps)


def _scalar_int(op: str, name: str, value: Any) -> int:
    arr = np.asarray(value)
    if arr.size != 1:
        raise FrameworkError(f"{op}: {name} is {arr.tolist()!r}; it is one integer")
    item = arr.reshape(()).item()
    if isinstance(item, bool) or not (isinstance(item, numbers.Integral) or float(item).is_integer()):
        raise FrameworkError(f"{op}: {name} is {item!r}; it must be a whole number")
    return int(item)


def _tile_1(op: str, shape: tuple[int, ...], dtype: str, tiles: Any, axis: Any) -> FrameworkTile:
    """Tile-1 repeats the whole tensor ``tiles`` times along one axis."""
    if tiles is None or axis is None:
        raise FrameworkError(
            f"{op}: both tiles and axis are required inputs (got tiles={tiles!r}, axis={axis!r})"
        )
    n_tiles, n_axis = _scalar_int(op, "tiles", tiles), _scalar_int(op, "axis", axis)
    if n_tiles < 0:
        raise FrameworkError(f"{op}: tiles is {n_tiles}; it is a number of copies, at least 0")
    if not 0 <= n_axis < len(shape):
        # Tile-1 predates the negative-axis convention of opset 11, so only 0..rank-1 names an axis.
        raise FrameworkError(
            f"{op}: axis is {n_axis}; for a rank-{len(shape)} input it must be in 0..{len(shape) - 1}"
            if shape
            else f"{op}: a rank-0 input has no axis to tile along"
        )
    values = tuple(n_tiles if i == n_axis else 1 for i in range(len(shape)))
    check_int64_dims(op, shape, values)
    steps = [f"{op}: tiles={n_tiles} along axis {n_axis} is repeats {list(values)}."]
    return FrameworkTile("onnx", op, shape, values, dtype, shape, values, steps)
