"""A plan's steps: the copies a chosen recipe turns into, numbered by phase, in execution order.

The search (``copy_plan``) picks a recipe; this module emits its steps, marks the phases worth two
threads and the copies worth the copy kernel (by the same prices the search used), and gives copies
that may meet memmove's misalignment cliff an alternative made of short pieces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from . import copy_kernel
from .copy_axes import (
    banded,
    fill_element,
    gather_index,
    in_place_copies,
    simplify,
    through_temporary,
    widen,
)
from .costs import CopyCosts
from .pricing import copy_ways, gather_cost, on_two

REP_MOVSB_MIN = 2049  # glibc's memmove uses rep movsb from 2112 bytes up to L2's size (on AMD)...
PIECE = 2048  # ...so a misaligned copy moves pieces of at most this many bytes instead
ALT_MIN_BYTES = 64 << 10  # (not worth it for copies this small: the call costs more than the slow path)


@dataclass(frozen=True)
class Step:
    """One ``np.copyto(dst_view, src_view)``; refs name a buffer: "in", "out" or a temp index.

    A gather step (``index`` set) is instead ``np.take(rows, index, out=dst_view, mode="clip")``:
    ``dst_view`` is ``shape[0]`` contiguous chunks of ``width`` bytes and ``rows`` the source seen as
    ``rows`` such chunks; ``index`` names the source chunk of every destination chunk.
    """

    dst: str | int
    src: str | int
    shape: tuple[int, ...]
    dst_strides: tuple[int, ...]
    src_strides: tuple[int, ...]
    dst_offset: int = 0
    src_offset: int = 0
    width: int = 1  # bytes per element of the views: an unsigned int (1, 2, 4, 8) or an opaque chunk
    phase: int = 0  # steps of one phase are independent (disjoint writes, no reads of each other's writes)
    rows: int = 0
    index: np.ndarray | None = field(default=None, compare=False, repr=False)
    when: str = "always"  # or "aligned" / "misaligned": see misaligned_alternative()
    stream: bool = False  # run by the compiled copy kernel (streaming stores) instead of np.copyto

    @property
    def src_shape(self) -> tuple[int, ...]:
        """The shape of the source view: the step's shape, or the rows a gather picks from."""
        return self.shape if self.index is None else (self.rows,)


@dataclass(frozen=True)
class Plan:
    """Steps in execution order and the byte sizes of the temporaries they use."""

    steps: tuple[Step, ...]
    temps: tuple[int, ...]
    split: frozenset[int] = frozenset()  # phases that run on two threads (their steps, or one step, halved)
    kind: str = "direct"  # the outermost recipe: direct, band, gather, temp, double or fanout
    program: bool = False  # a one-step plan the copy kernel runs cheaper than two reshapes and np.copyto


class Emitter:
    """Turns a recipe into steps, numbering phases and marking those worth two threads."""

    def __init__(self, elem: int, costs: CopyCosts, threads: int, prefer: frozenset[str]):
        self.elem, self.costs, self.threads, self.prefer = elem, costs, threads, prefer
        self.steps: list[Step] = []
        self.temps: list[int] = []
        self.split: set[int] = set()
        self.phase = 0
        self.region = 0  # the bytes written around the copies being emitted, in their destination (step_cost)

    def plan(self, kind: str) -> Plan:
        """The emitted steps as a plan; for NumPy's copies, on a CPU that has the misalignment cliff,
        each that may meet it with its pieces (the copy kernel, when loaded, runs every copy but a
        gather, and moves long runs that meet the cliff with a store loop of its own)."""
        steps = tuple(self.steps)
        if not copy_kernel.available() and self.costs.movsb_cliff:
            steps = tuple(alt for step in steps for alt in misaligned_alternative(step, self.costs.l2_bytes))
        return Plan(steps, tuple(self.temps), frozenset(self.split), kind)

    def _phase(
        self, axes, fresh: int, bands: int = 1, to_out: bool = False, region: int = 0, written: bool = False
    ) -> tuple[int, bool]:
        """A new phase for a copy over ``axes``: its number, and whether the copy kernel runs it."""
        phase = self.phase
        self.phase += 1
        region = max(region, self.region)
        (one, two), (k_one, k_two) = copy_ways(
            axes, self.elem, self.costs, fresh, bands, to_out, self.prefer, region, written
        )
        best_one, best_two = min(one, k_one), min(two, k_two)
        split = self.threads > 1 and (
            on_two(best_one, best_two, self.costs) or ("split" in self.prefer and best_two < math.inf)
        )
        if split:
            self.split.add(phase)
        return phase, (k_two < two) if split else (k_one < one)

    def emit(self, axes, recipe, dst, dst_offset, src) -> None:
        """Append the steps of ``recipe`` (innermost block first) writing ``axes`` into ``dst``."""
        fresh = (dst == "out") + (src == "in")
        if recipe[0] == "gather":
            self._gather(axes, dst, dst_offset, src, fresh)
        elif recipe[0] == "direct":
            self._direct(axes, recipe[1], recipe[2], dst, dst_offset, src, fresh)
        elif recipe[0] in ("double", "fanout"):
            self._in_place(axes, recipe, dst, dst_offset, src)
        else:
            self._temp(axes, recipe, dst, dst_offset, src)

    def _gather(self, axes, dst, dst_offset, src, fresh: int) -> None:
        chunk = axes[-1][0] * self.elem
        index = gather_index(axes, chunk)
        phase = self.phase
        self.phase += 1
        if self.threads > 1:
            one, two = gather_cost(axes, self.elem, self.costs, fresh, self.region)
            if on_two(one, two, self.costs) or ("split" in self.prefer and two < math.inf):
                self.split.add(phase)
        rows = int(index.max()) + 1
        self.steps.append(
            Step(dst, src, (index.size,), (chunk,), (chunk,), dst_offset, 0, chunk, phase, rows, index)
        )

    def _direct(self, axes, axis: int, bands: int, dst, dst_offset, src, fresh: int) -> None:
        elem, to_out = self.elem, dst == "out"
        if bands == 1:
            self.steps.append(
                make_step(axes, elem, dst, dst_offset, src, 0, *self._phase(axes, fresh, 1, to_out))
            )
            return
        band_axes = banded(axes, axis, bands)
        phase, stream = self._phase(band_axes, fresh, bands, to_out)
        n, ds, ss = band_axes[axis]
        for k in range(bands):
            self.steps.append(
                make_step(band_axes, elem, dst, dst_offset + k * n * ds, src, k * n * ss, phase, stream)
            )

    def _in_place(self, axes, recipe, dst, dst_offset, src) -> None:
        """Write the first block, then copy it onto the rest: by one fan-out copy or by doubling."""
        kind, j, sub_recipe = recipe
        elem, prefix, suffix = self.elem, axes[:j], axes[j:]
        block = math.prod(a[0] for a in suffix)
        # The block on the calling thread alone: the copies read it next, and lines the worker wrote
        # would first have to come over from its core (1.8 MiB fanned out from a block written on
        # two threads took 54 us; one broadcasting copy, 50).
        count, stride = prefix[0][0], prefix[0][1]
        to_out = dst == "out"
        both = 2 * to_out
        fan, doubled, region = in_place_copies(count, stride, block, elem)
        threads, self.threads = self.threads, 1
        around, self.region = self.region, max(self.region, region)
        self.emit(simplify(suffix), sub_recipe, dst, dst_offset, src)
        self.threads, self.region = threads, around
        if kind == "fanout":
            phase = self._phase(fan, both, 1, to_out, region, True)
            self.steps.append(make_step(fan, elem, dst, dst_offset + stride, dst, dst_offset, *phase))
            return
        done = 1
        for chunk in doubled:  # each step one large memmove (it streams when large enough)
            phase = self._phase(chunk, both, 1, to_out, region, True)
            self.steps.append(
                make_step(chunk, elem, dst, dst_offset + done * stride, dst, dst_offset, *phase)
            )
            done += chunk[0][0] // block

    def _temp(self, axes, recipe, dst, dst_offset, src) -> None:
        """Pre-tile the inner axes into a new temporary, then repeat it into ``dst``."""
        _, j, sub_recipe = recipe
        elem, prefix, suffix = self.elem, axes[:j], axes[j:]
        block = math.prod(a[0] for a in suffix)
        data = tuple(a for a in prefix if a[2] != 0)
        sub_axes, final_axes = through_temporary(prefix, suffix, elem)
        self.temps.append(math.prod(a[0] for a in data) * block * elem)
        t = len(self.temps) - 1
        around, self.region = self.region, 0  # the temporary is written on its own
        self.emit(sub_axes, sub_recipe, t, 0, src)
        self.region = around
        phase = self._phase(final_axes, int(dst == "out"), 1, dst == "out", written=True)
        self.steps.append(make_step(final_axes, elem, dst, dst_offset, t, 0, *phase))


def make_step(axes, elem, dst, dst_offset, src, src_offset, phase: int, stream: bool = False) -> Step:
    """The step copying over ``axes``: widened for np.copyto, or as they are for the copy kernel."""
    if stream:  # the kernel joins runs itself: undo split_back_to_back; short rows become fills
        axes, width = fill_element(simplify(axes), elem)
    else:
        axes, width = widen(axes, elem)
    return Step(
        dst,
        src,
        tuple(a[0] for a in axes),
        tuple(a[1] for a in axes),
        tuple(a[2] for a in axes),
        dst_offset,
        src_offset,
        width,
        phase,
        stream=stream,
    )


def misaligned_alternative(step: Step, l2_bytes: int) -> tuple[Step, ...]:
    """The step itself, or, when its contiguous chunks fall in memmove's rep-movsb range and touch the
    caller's buffers (whose addresses only a call knows), three steps: the step for calls where the
    destination and source are aligned alike, and for the others the same copy as pieces of at most
    PIECE bytes (a body and a 64-byte tail per piece, views NumPy cannot merge back into one memmove).

    rep movsb is about 10x slower on this project's AMD machines when the destination sits 8-24 bytes
    past the source modulo 64 (bench/README.md); pieces below its threshold take the vector loop.
    """
    if (
        step.stream
        or step.index is not None
        or "in" not in (step.src, step.dst)
        and "out" not in (step.src, step.dst)
    ):
        return (step,)
    chunk, outer = memmove_chunks(step)
    if not REP_MOVSB_MIN <= chunk < l2_bytes or math.prod(step.shape) * step.width <= ALT_MIN_BYTES:
        return (step,)
    piece = max((p for p in range(128, PIECE + 1, 64) if chunk % p == 0), default=0)
    if not piece:
        return (step,)
    shape = step.shape[:outer] + (chunk // piece,)
    d_str, s_str = step.dst_strides[:outer] + (piece,), step.src_strides[:outer] + (piece,)
    at = (step.dst_offset, step.src_offset)
    body = Step(step.dst, step.src, shape, d_str, s_str, *at, piece - 64, step.phase, when="misaligned")
    tail_at = (step.dst_offset + piece - 64, step.src_offset + piece - 64)
    tail = Step(step.dst, step.src, shape, d_str, s_str, *tail_at, 64, step.phase, when="misaligned")
    return (replace(step, when="aligned"), body, tail)


def memmove_chunks(step: Step) -> tuple[int, int]:
    """(bytes, outer axes) of the contiguous chunks NumPy moves one memmove each when it copies
    ``step``: the innermost axis when it is contiguous in both views (an integer element), else the
    element itself, over the axes outside them; (0, 0) for an integer element copied one by one."""
    if step.width not in (1, 2, 4, 8):
        return step.width, len(step.shape)
    if not step.shape or step.dst_strides[-1] != step.width or step.src_strides[-1] != step.width:
        return 0, 0
    return step.shape[-1] * step.width, len(step.shape) - 1


def misaligned(dst_address: int, src_address: int) -> bool:
    """Whether a rep-movsb copy between these addresses hits the slow case: the destination 1-31 bytes
    past the source, modulo 64 (measured: 8-24 on one AMD machine, 1-15 on an EPYC one)."""
    return 0 < (dst_address - src_address) % 64 < 32


def element_type(width: int) -> np.dtype:
    """The NumPy type a step copies: an unsigned int of that width, or ``V<width>`` raw bytes."""
    return np.dtype(f"u{width}" if width in (1, 2, 4, 8) else f"V{width}")


def view(base: np.ndarray, offset: int, shape, strides, width: int) -> np.ndarray:
    """A strided view of ``width``-byte elements into the byte buffer of ``base``."""
    return np.ndarray(shape, element_type(width), base, offset, strides)
