"""The definition of DirectML's Tile, one element at a time: what every backend must compute.

For every index ``o`` of the output, the output element at ``o`` is a copy of the bits of the input
element at ``o_k mod InputTensor.Sizes[k]`` (axis by axis). A tensor's element at index ``i`` sits
in its buffer at byte ``sum(i_k * Strides[k]) * element size`` (Strides packed when null), so the
definition is byte-exact on strided buffers: output bytes no element occupies are left alone,
and where output elements share an address the one last in row-major order wins.

It is written as a plain loop so that it is obviously right, and is therefore slow: it takes at
most MAX_REFERENCE_ELEMENTS output elements. Nothing here uses the planner or the copy kernel; the
tests and ``compare_backends`` hold the fast backends against it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.operator import OperatorDesc
from ..core.tensor import packed_strides
from ..errors import UnsupportedError
from .buffers import CompiledTile, buffer_views

MAX_REFERENCE_ELEMENTS = 1 << 20  # ~1 µs of Python per element: about a second at the limit


def source_index(out_index: Sequence[int], in_sizes: Sequence[int]) -> tuple[int, ...]:
    """The input index whose element Tile copies to output index ``out_index``."""
    return tuple(o % s for o, s in zip(out_index, in_sizes, strict=True))


def byte_offset(index: Sequence[int], strides: Sequence[int], element_size: int) -> int:
    """Where the element at ``index`` starts in a buffer laid out by ``strides`` (in elements)."""
    return sum(i * s for i, s in zip(index, strides, strict=True)) * element_size


def tile_bytes(
    in_bytes: Any,
    out_bytes: Any,
    element_size: int,
    in_sizes: Sequence[int],
    in_strides: Sequence[int],
    out_sizes: Sequence[int],
    out_strides: Sequence[int],
) -> None:
    """Write every output element into ``out_bytes`` (a writable buffer), in row-major index order."""
    count = math.prod(out_sizes)
    if count > MAX_REFERENCE_ELEMENTS:
        raise UnsupportedError(
            f"the per-element reference visits each of the {count} output elements (Sizes {list(out_sizes)}) "
            f"in Python and takes at most {MAX_REFERENCE_ELEMENTS}; compare a smaller descriptor"
        )
    for out_index in itertools.product(*(range(n) for n in out_sizes)):
        src = byte_offset(source_index(out_index, in_sizes), in_strides, element_size)
        dst = byte_offset(out_index, out_strides, element_size)
        out_bytes[dst : dst + element_size] = in_bytes[src : src + element_size]


class ReferenceTile(CompiledTile):
    """A descriptor run by the definition, with the same array and buffer contracts as every backend's
    compiled op (``op(x)``, ``op.run_buffers``). The descriptor is taken as given: validate it first."""

    backend = "reference"
    provider = "per-element loop"

    def __init__(self, desc: Any):
        super().__init__(desc if isinstance(desc, OperatorDesc) else OperatorDesc.model_validate(desc))
        self.element_size = self.data_type.element_size

    def tile_array(self, x: np.ndarray, out: np.ndarray) -> None:
        """The output array for an input array: both packed, so their strides are the packed ones."""
        packed_in = np.ascontiguousarray(x).reshape(-1).view(np.uint8)
        packed_out = out.reshape(-1).view(np.uint8)
        in_sizes, out_sizes = self.in_shape, self.out_shape
        tile_bytes(
            packed_in,
            packed_out,
            self.element_size,
            in_sizes,
            packed_strides(in_sizes),
            out_sizes,
            packed_strides(out_sizes),
        )

    def run_buffers(self, in_buf: Any, out_buf: Any, poison_padding: bool = False) -> None:
        """Run on raw byte buffers through both tensors' Strides; output bytes no element occupies are
        left as they are, or filled with POISON_BYTE with ``poison_padding`` (as the backends do)."""
        src, dst = buffer_views(self.desc, in_buf, out_buf, poison_padding)
        t_in, t_out = self.desc.input, self.desc.output
        tile_bytes(
            src,
            dst,
            self.element_size,
            t_in.sizes,
            t_in.effective_strides,
            t_out.sizes,
            t_out.effective_strides,
        )
