"""The NumPy backend: a bit-exact byte-buffer simulator of DML_OPERATOR_TILE.

A tensor is a byte buffer; element ``(i0..in)`` lives at byte ``sum(i_k * Strides[k]) * elem_size``
(DML_BUFFER_TENSOR_DESC). Tile copies bytes, so every DataType is moved as unsigned integers:
bit-exact, NaN payloads included. The copy is planned once per compiled op as a Recipe (``fast/``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.operator import OperatorDesc
from ..core.tensor import packed_strides
from ..errors import DmlTileError
from .buffers import (
    POISON_BYTE,
    CompiledTile,
    addressed_mask,
    buffer_views,
    byte_view,
    output_aliases,
    scatter_row_major,
    strided,
)
from .fast.emit import Runner
from .fast.recipe import Recipe, Traits, plan, this_machine, tile_axes

__all__ = ["POISON_BYTE", "NumpyTile", "addressed_mask", "byte_view", "run_tile_buffers", "strided"]


class NumpyTile(CompiledTile):
    """The NumPy backend's compiled op: a recipe for packed arrays and one for the descriptor's buffers."""

    backend = "numpy"
    provider = "numpy"

    def __init__(self, desc: OperatorDesc, threads: int = 2, traits: Traits | None = None):
        """``threads``: 1, or 2 to let large copies share a second thread; ``traits``: the machine to
        plan for (default: this one)."""
        if isinstance(threads, bool) or not isinstance(threads, int) or threads not in (1, 2):
            raise DmlTileError(f"threads must be 1 or 2, got {threads!r}")
        super().__init__(desc)
        traits = traits or this_machine()
        t_in, t_out = desc.input, desc.output
        elem = t_in.data_type.element_size
        self.threads = threads
        self.aliasing_output = output_aliases(t_out)
        packed = tile_axes(
            t_in.sizes,
            desc.repeats,
            [s * elem for s in packed_strides(t_in.sizes)],
            [s * elem for s in packed_strides(t_out.sizes)],
            elem,
        )
        self.array_recipe = plan(*packed, traits, threads)
        self.buffer_recipe: Recipe | None = None
        if not self.aliasing_output:
            strided_axes = tile_axes(
                t_in.sizes,
                desc.repeats,
                [s * elem for s in t_in.effective_strides],
                [s * elem for s in t_out.effective_strides],
                elem,
            )
            self.buffer_recipe = plan(*strided_axes, traits, threads)
        self._arrays = Runner(self.array_recipe)
        self._buffers = Runner(self.buffer_recipe) if self.buffer_recipe else None

    def plan_info(self, buffers: bool = False) -> dict[str, Any]:
        """How a call on arrays runs (on raw buffers with ``buffers``) as plain data: the recipe's kind,
        its merged axes, run, repeats copied forward and threads. An output whose strides alias has
        no buffer recipe: its buffers run through the arrays' recipe, then a scatter."""
        recipe = self.buffer_recipe if buffers and self.buffer_recipe else self.array_recipe
        return {
            "kind": recipe.kind,
            "axes": [[a.size, a.dst, a.src] for a in recipe.axes],
            "run": recipe.run,
            "replicate": sum(a.replicate for a in recipe.axes),
            "threads": recipe.threads,
            "stream": recipe.stream,
        }

    def __call__(self, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Tile ``x`` into ``out`` or a new array (CompiledTile's contract); the common call, matching
        arrays passed again, is checked with a few identity tests before running the recipe."""
        last = self._arrays.last
        if last is not None and last[0] is x and last[1] is out:  # checked when first seen
            last[2]()
            return out
        if (
            type(x) is np.ndarray
            and type(out) is np.ndarray
            and x.dtype is self.dtype
            and out.dtype is self.dtype
            and x.shape == self.in_shape
            and out.shape == self.out_shape
            and out.strides == self.out_strides
            and out.flags.writeable
        ):
            self._arrays(x if x.flags.c_contiguous else np.ascontiguousarray(x), out)
            return out
        return super().__call__(x, out)

    def tile_array(self, x: np.ndarray, out: np.ndarray) -> None:
        """Run the arrays' recipe (on a contiguous copy of ``x`` when it is not contiguous)."""
        self._arrays(np.ascontiguousarray(x), out)

    def run_buffers(self, in_buf: Any, out_buf: Any, poison_padding: bool = False) -> None:
        """Run on raw byte buffers honouring Strides and TotalTensorSizeInBytes.

        Output bytes the output desc does not address stay untouched, unless ``poison_padding``
        fills them with POISON_BYTE (DirectML may overwrite any byte of an output's
        TotalTensorSizeInBytes, so programs must not rely on padding surviving). Output strides that
        alias (DML109, a race on a GPU) are written in row-major order, the last write winning.
        """
        if self._buffers is not None and not poison_padding:
            self._buffers(in_buf, out_buf, self._buffer_views)
            return
        src, dst = buffer_views(self.desc, in_buf, out_buf, poison_padding)
        if self._buffers is None:  # the output aliases
            x = np.ascontiguousarray(strided(src, self.desc.input)).view(self.dtype)
            scatter_row_major(dst, self.desc.output, self(x))
        else:
            self._buffers(src, dst)

    def _buffer_views(self, in_buf: Any, out_buf: Any) -> tuple[np.ndarray, np.ndarray]:
        return buffer_views(self.desc, in_buf, out_buf, False)


def run_tile_buffers(desc: OperatorDesc, in_buf: Any, out_buf: Any, poison_padding: bool = False) -> None:
    """Execute ``desc`` from ``in_buf`` into ``out_buf`` once (plans on every call; prefer compile())."""
    NumpyTile(desc).run_buffers(in_buf, out_buf, poison_padding)
