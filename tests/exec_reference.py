"""References for the execution tests: the expected output buffer by the package's per-element
definition of Tile (``dmltile.execute.reference``, which uses no planner), and a generator of random
valid descriptors with padded/zero input strides and padded, permuted output strides."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from dmltile.execute.reference import ReferenceTile

# DirectML Tile's data types (DML_TILE_OPERATOR_DESC, feature level 4.1) and their NumPy twins.
DTYPES = {
    "FLOAT32": "float32",
    "FLOAT16": "float16",
    "UINT32": "uint32",
    "UINT16": "uint16",
    "UINT8": "uint8",
    "INT32": "int32",
    "INT16": "int16",
    "INT8": "int8",
    "UINT64": "uint64",
    "INT64": "int64",
}
SENTINEL = 0xAB


def dword(n: int) -> int:
    return (n + 3) & ~3


def required_bytes(elem: int, sizes, strides) -> int:
    return dword((sum((s - 1) * st for s, st in zip(sizes, strides, strict=False)) + 1) * elem)


@st.composite
def descriptors(draw, max_out_elements: int = 2048, dtypes=tuple(DTYPES), aliasing: bool = False):
    """A dict descriptor (bare DML_TILE_OPERATOR_DESC) that DirectML 4.1+ accepts. With ``aliasing``,
    output strides are small random values, so output elements may share addresses (DML109)."""
    rank = draw(st.integers(1, 8))
    pick = st.sampled_from([1, 1, 1, 2, 3])
    sizes = [draw(pick) for _ in range(rank)]
    repeats = [draw(pick) for _ in range(rank)]
    out_sizes = [s * r for s, r in zip(sizes, repeats, strict=False)]
    if math.prod(out_sizes) > max_out_elements:  # keep the per-element reference fast
        repeats = [1] * rank
        out_sizes = list(sizes)
    dtype = draw(st.sampled_from(dtypes))
    elem = np.dtype(DTYPES[dtype]).itemsize
    layout = draw(st.sampled_from(["packed", "padded", "broadcast"]))
    in_strides = _strides(draw, sizes, pad=layout != "packed", order=list(range(rank)))
    if layout == "broadcast":  # zero strides: every index of that axis reads the same element
        in_strides = [0 if draw(st.booleans()) else s for s in in_strides]
    order = draw(st.permutations(list(range(rank))))
    out_strides = _strides(draw, out_sizes, pad=draw(st.booleans()), order=order)
    if aliasing:
        out_strides = [draw(st.integers(0, 3)) for _ in out_sizes]
    in_total = required_bytes(elem, sizes, in_strides) + 4 * draw(st.integers(0, 2))
    out_total = required_bytes(elem, out_sizes, out_strides) + 4 * draw(st.integers(0, 2))
    desc = {
        "InputTensor": {
            "DataType": dtype,
            "Sizes": sizes,
            "Strides": in_strides,
            "TotalTensorSizeInBytes": in_total,
        },
        "OutputTensor": {
            "DataType": dtype,
            "Sizes": out_sizes,
            "Strides": out_strides,
            "TotalTensorSizeInBytes": out_total,
        },
        "Repeats": repeats,
    }
    return desc


def _strides(draw, sizes, pad: bool, order) -> list[int]:
    """Non-overlapping strides laying out axes in ``order`` (last = innermost), with optional gaps."""
    strides = [0] * len(sizes)
    step = 1
    for axis in reversed(order):
        step += draw(st.integers(0, 2)) if pad else 0
        strides[axis] = step
        step *= sizes[axis]
    return strides


def run_naive(
    desc: dict, in_buf: bytes, out_len: int, fill: int = SENTINEL, poison: int | None = None
) -> bytearray:
    """The expected output buffer: ``fill`` everywhere, ``poison`` over TotalTensorSizeInBytes when given,
    then every output element written by the per-element definition."""
    total = desc["OutputTensor"]["TotalTensorSizeInBytes"]
    expected = bytearray([fill]) * out_len
    if poison is not None:
        expected[:total] = bytes([poison]) * total
    ReferenceTile(desc).run_buffers(in_buf, expected)
    return expected
