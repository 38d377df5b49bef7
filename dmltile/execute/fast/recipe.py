"""Recipes: how one Tile is copied, as a typed value (docs/planner.md).

A Tile's output, seen as twice as many axes as its input (for each input axis, its repeat outside
its size), is one broadcasting copy: the repeat axes have input stride 0. ``tile_axes`` writes that
copy down and merges it (size-1 axes dropped, neighbours that step alike fused, the contiguous
innermost ones folded into the run). ``plan`` then picks, for the machine's Traits, whether the
kernel runs it and on how many threads, and which repeat axes copy their first block forward.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from . import kernel


@dataclass(frozen=True)
class Axis:
    """One axis of the copy: its size and byte strides in the output and the input (0: a repeat)."""

    size: int
    dst: int
    src: int
    replicate: bool = False  # a repeat whose first block is copied forward rather than filled again


@dataclass(frozen=True)
class Recipe:
    """A Tile as one copy: axes outermost first over runs of ``run`` bytes contiguous in both buffers;
    ``kind`` "kernel" runs in one call of the compiled kernel on ``threads`` threads, "numpy" as one
    np.copyto of broadcast views."""

    kind: Literal["kernel", "numpy"]
    axes: tuple[Axis, ...]
    run: int
    threads: int = 1
    stream: bool = False  # written with streaming stores (outputs larger than the last-level cache)

    @property
    def out_bytes(self) -> int:
        """The bytes the recipe writes."""
        return self.run * math.prod(a.size for a in self.axes)


@dataclass(frozen=True)
class Traits:
    """What the planner knows of the machine and the kernel: one value, passed in, never read behind
    its back, so a recipe made for it cannot go stale."""

    kernel: bool  # the compiled kernel is loaded
    worker: bool  # it shares recipes with a thread of its own
    cores: int  # CPUs this process may run on
    llc_bytes: int = 0  # the last-level cache (0: unknown, never stream)
    max_dims: int = 0  # the most axes the kernel takes
    two_thread_min: int = 0  # output bytes from which the kernel shares a copy with its worker


def this_machine() -> Traits:
    """This process's Traits; ``DMLTILE_MACHINE=cores=N,llc=BYTES`` fakes the core count and cache
    size (``make test-machines``)."""
    figures = kernel.table()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    fake = dict(p.split("=", 1) for p in os.environ.get("DMLTILE_MACHINE", "").split(",") if "=" in p)
    return Traits(
        kernel=bool(figures),
        worker=bool(figures.get("worker")),
        cores=int(fake.get("cores", cores)),
        llc_bytes=int(fake.get("llc", last_level_cache())),
        max_dims=figures.get("max_dims", 0),
        two_thread_min=figures.get("two_thread_min", 0),
    )


def last_level_cache() -> int:
    """The largest cache the system reports for CPU 0, in bytes (0 when it reports none)."""
    sizes = [0]
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        sizes.append(int(text.rstrip("KMG") or 0) * scale)
    return max(sizes)


def tile_axes(
    sizes: Sequence[int],
    repeats: Sequence[int],
    in_strides: Sequence[int],
    out_strides: Sequence[int],
    elem: int,
) -> tuple[tuple[Axis, ...], int]:
    """The merged axes and run of a Tile with these byte strides: output index ``j * n + i`` of an
    axis of size ``n`` is repeat ``j`` (stride ``n`` times the output's, 0 in the input) of index ``i``."""
    axes = []
    for n, r, s_in, s_out in zip(sizes, repeats, in_strides, out_strides, strict=True):
        axes += [Axis(r, n * s_out, 0), Axis(n, s_out, s_in)]
    return merge(axes, elem)


def merge(axes: Sequence[Axis], run: int) -> tuple[tuple[Axis, ...], int]:
    """Drop size-1 axes, fuse an axis into the one outside it where both step as one, and fold the
    innermost axes that are contiguous in both buffers into the run."""
    if any(a.size == 0 for a in axes):
        return (Axis(0, 0, 0),), run
    merged: list[Axis] = []
    for a in axes:
        if a.size == 1:
            continue
        outer = merged[-1] if merged else None
        if outer is not None and outer.dst == a.size * a.dst and outer.src == a.size * a.src:
            merged[-1] = Axis(outer.size * a.size, a.dst, a.src)
        else:
            merged.append(a)
    while merged and merged[-1].dst == run and merged[-1].src == run:
        run *= merged.pop().size
    return tuple(merged), run


def replicating(axes: Sequence[Axis], run: int) -> tuple[Axis, ...]:
    """The axes with ``replicate`` set on each repeat whose blocks are back to back in the output and
    each one contiguous span: there the first block is copied forward (doubling), every other
    repeat is filled again from the input."""
    marked = []
    packed, block = True, run
    for a in reversed(axes):
        packed = packed and a.dst == block
        marked.append(replace(a, replicate=packed and a.src == 0))
        block = a.size * a.dst
    return tuple(reversed(marked))


def plan(axes: Sequence[Axis], run: int, traits: Traits, threads: int = 2) -> Recipe:
    """The recipe for these merged axes: the kernel when loaded (NumPy otherwise), every repeat it can
    copy forward doing so; two threads when allowed, the kernel has its worker, this process has two
    cores and the output reaches the kernel's two_thread_min; streaming stores for an output larger
    than the last-level cache (it would not stay there anyway)."""
    if not traits.kernel or len(axes) > traits.max_dims:
        return Recipe("numpy", tuple(axes), run)
    recipe = Recipe("kernel", replicating(axes, run), run)
    two = threads > 1 and traits.worker and traits.cores > 1 and recipe.out_bytes >= traits.two_thread_min
    stream = 0 < traits.llc_bytes < recipe.out_bytes
    return replace(recipe, threads=2 if two else 1, stream=stream)


def simplest(axes: Sequence[Axis], run: int, traits: Traits) -> Recipe:
    """The plainest recipe: one strided copy of every run on one thread, through the kernel when it is
    loaded (what the bench's "simplest" column times)."""
    return Recipe("kernel" if traits.kernel else "numpy", tuple(axes), run)
