"""The copy plan behind the NumPy backend: Tile as a few broadcast copies, chosen once per descriptor.

Tile writes ``out[i] = in[i mod s]`` on every axis. Split each axis ``k`` into a repeat sub-axis
(``Repeats[k]`` steps of ``Sizes[k]`` output elements, input stride 0) and a data sub-axis
(``Sizes[k]`` steps with the input's stride); the whole operator is then one ``np.copyto`` from a
broadcast view of the input. What costs time is the number of innermost contiguous chunks (a few ns
each), so the planner drops size-1 axes, merges neighbours that step alike, and, when the innermost
chunk is small, first tiles the inner axes into a small temporary (or into the output's first block)
that the final copy then repeats in large chunks. A tiny cost model picks among these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

Axis = tuple[int, int, int]  # (size, destination byte stride, source byte stride)

# Cost model in nanoseconds, rough numbers from this project's 2-core bench machine (DESIGN §7).
STEP_NS = 1500.0  # building the views and calling np.copyto once
CHUNK_NS = 6.0  # per innermost chunk of a copy
BYTE_NS = 0.11  # per byte written with ordinary stores
BIG_CHUNK_BYTE_NS = 0.06  # per byte when chunks are large enough for memmove's streaming stores

BIG_CHUNK = 64 << 20  # memcpy streams past the cache from about here (measured: 16 MiB no, 128 MiB yes)
TEMP_LIMIT = 64 << 20  # largest temporary the planner allocates
VOID_MAX = 64 << 10  # innermost chunks up to this size are copied as one opaque element
SPLIT_CHUNK = 4096  # innermost broadcast runs are split into chunks of about this many bytes


@dataclass(frozen=True)
class Step:
    """One ``np.copyto(dst_view, src_view)``; refs name a buffer: "in", "out" or a temp index."""

    dst: str | int
    src: str | int
    shape: tuple[int, ...]
    dst_strides: tuple[int, ...]
    src_strides: tuple[int, ...]
    dst_offset: int = 0
    src_offset: int = 0
    width: int = 1  # bytes per element of the views: an unsigned int (1, 2, 4, 8) or an opaque chunk


@dataclass(frozen=True)
class Plan:
    """Steps in execution order and the byte sizes of the temporaries they use."""

    steps: tuple[Step, ...]
    temps: tuple[int, ...]
    cost_ns: float


def tile_axes(sizes, repeats, src_strides, dst_strides) -> list[Axis]:
    """The repeat and data sub-axes of a Tile, with byte strides (before simplification)."""
    axes: list[Axis] = []
    for size, rep, ss, ds in zip(sizes, repeats, src_strides, dst_strides, strict=False):
        axes.append((int(rep), int(size) * int(ds), 0))
        axes.append((int(size), int(ds), int(ss) if size > 1 else 0))
    return axes


def simplify(axes) -> tuple[Axis, ...]:
    """Drop size-1 axes, order by destination stride (outermost first), merge neighbours that step alike."""
    kept = sorted((a for a in axes if a[0] > 1), key=lambda a: -a[1])
    merged: list[Axis] = []
    for a in kept:
        if merged:
            size, ds, ss = merged[-1]
            if ds == a[0] * a[1] and ss == a[0] * a[2]:
                merged[-1] = (size * a[0], a[1], a[2])
                continue
        merged.append(a)
    return tuple(merged)


def split_inner_broadcast(axes: tuple[Axis, ...], elem: int) -> tuple[Axis, ...]:
    """Split a long innermost broadcast run into (outer, inner) so a temporary can hold one chunk of it."""
    if not axes:
        return axes
    size, ds, ss = axes[-1]
    if ss != 0 or ds != elem or size * elem <= SPLIT_CHUNK:
        return axes
    best = max((f for f in _divisors(size) if f * elem <= SPLIT_CHUNK), default=1)
    if best <= 1:
        return axes
    return axes[:-1] + ((size // best, best * elem, 0), (best, elem, 0))


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in reversed(small)]


def packed_suffix(axes: tuple[Axis, ...], elem: int) -> int:
    """Index ``j`` such that ``axes[j:]`` lie packed (row-major, no gaps) in the destination."""
    j, step = len(axes), elem
    while j > 0 and axes[j - 1][1] == step:
        step *= axes[j - 1][0]
        j -= 1
    return j


def widen(axes: tuple[Axis, ...], elem: int) -> tuple[tuple[Axis, ...], int]:
    """View the copy through the widest element that holds the contiguous innermost chunk: the
    whole chunk as one opaque ``V<n>`` element when it is short (NumPy then copies it with one
    memmove inside its inner loop instead of paying its per-chunk iteration cost; measured 30-50%
    faster for 12-512 byte chunks), else the widest unsigned int that divides it."""
    if not axes:
        return axes, elem
    size, ds, ss = axes[-1]
    if ds != elem or ss != elem:
        return axes, elem
    chunk = size * elem
    if 8 < chunk <= VOID_MAX and len(axes) > 1:
        return axes[:-1], chunk
    for width in (8, 4, 2):
        if (
            width > elem
            and chunk % width == 0
            and all(a[1] % width == 0 and a[2] % width == 0 for a in axes[:-1])
        ):
            return axes[:-1] + ((chunk // width, width, width),), width
    return axes, elem


def copy_cost(axes: tuple[Axis, ...], elem: int) -> float:
    """Estimated ns for one np.copyto over ``axes``."""
    total = math.prod(a[0] for a in axes) if axes else 1
    inner = axes[-1][0] if axes else 1
    chunk_bytes = inner * (axes[-1][1] if axes and axes[-1][1] else elem)
    per_byte = BIG_CHUNK_BYTE_NS if chunk_bytes >= BIG_CHUNK else BYTE_NS
    return STEP_NS + (total // inner) * CHUNK_NS + total * elem * per_byte


def doubling_cost(count: int, block_bytes: int) -> float:
    """Estimated ns to repeat an output's first block ``count - 1`` times by doubling."""
    cost, done = 0.0, 1
    while done < count:
        k = min(done, count - done)
        per_byte = BIG_CHUNK_BYTE_NS if k * block_bytes >= BIG_CHUNK else BYTE_NS
        cost += STEP_NS + k * block_bytes * per_byte
        done += k
    return cost


@lru_cache(maxsize=256)
def _best(axes: tuple[Axis, ...], elem: int, out_bytes_limit: int) -> tuple[float, tuple]:
    """(cost, recipe) for writing ``axes`` from the source; recursion over pre-tiling choices."""
    best: tuple[float, tuple] = (copy_cost(axes, elem), ("direct",))
    start = packed_suffix(axes, elem)
    total = math.prod(a[0] for a in axes) if axes else 1
    for j in range(max(start, 1), len(axes)):
        prefix, suffix = axes[:j], axes[j:]
        if all(a[2] != 0 for a in prefix):
            continue  # nothing repeats outside the suffix: a temporary would be the whole output
        block = math.prod(a[0] for a in suffix)
        data = tuple(a for a in prefix if a[2] != 0)
        temp_elems = math.prod(a[0] for a in data) * block
        in_place = len(prefix) == 1 and prefix[0][2] == 0 and prefix[0][1] >= block * elem
        if not in_place and (temp_elems * elem > min(TEMP_LIMIT, out_bytes_limit) or temp_elems * 2 > total):
            continue
        sub_axes, final_axes = _split(prefix, suffix, data, block, elem, in_place)
        sub_cost, sub_recipe = _best(sub_axes, elem, out_bytes_limit)
        final = doubling_cost(prefix[0][0], block * elem) if in_place else copy_cost(final_axes, elem)
        cost = sub_cost + final
        if cost < 0.95 * best[0]:
            best = (cost, ("in_place" if in_place else "temp", j, sub_recipe))
    return best


def _split(prefix, suffix, data, block, elem, in_place):
    """The axes that build the block (sub) and the axes of the final copy that repeats it."""
    if in_place:
        return simplify(suffix), simplify(((prefix[0][0] - 1, prefix[0][1], 0), (block, elem, elem)))
    temp_stride, step = {}, block * elem
    for i in reversed(range(len(prefix))):
        if prefix[i][2] != 0:
            temp_stride[i] = step
            step *= prefix[i][0]
    sub = simplify(
        tuple((a[0], temp_stride[i], a[2]) for i, a in enumerate(prefix) if i in temp_stride)
        + _repack(suffix, elem)
    )
    final = simplify(
        tuple((a[0], a[1], temp_stride.get(i, 0)) for i, a in enumerate(prefix)) + ((block, elem, elem),)
    )
    return sub, final


def _repack(suffix, elem):
    """The suffix axes with the destination strides of a packed temporary."""
    out, step = [], elem
    for size, _, ss in reversed(suffix):
        out.append((size, step, ss))
        step *= size
    return tuple(reversed(out))


def make_plan(sizes, repeats, src_strides, dst_strides, elem: int, out_bytes_limit: int = TEMP_LIMIT) -> Plan:
    """Plan a Tile copy; strides are in bytes, ``elem`` is the element size in bytes."""
    axes = split_inner_broadcast(simplify(tile_axes(sizes, repeats, src_strides, dst_strides)), elem)
    cost, recipe = _best(axes, elem, out_bytes_limit)
    steps: list[Step] = []
    temps: list[int] = []
    _emit(axes, recipe, elem, "out", 0, "in", steps, temps)
    return Plan(tuple(steps), tuple(temps), cost)


def _emit(axes, recipe, elem, dst, dst_offset, src, steps, temps) -> None:
    """Append the steps of ``recipe`` (innermost block first) writing ``axes`` into ``dst``."""
    if recipe[0] == "direct":
        steps.append(_step(axes, elem, dst, dst_offset, src, 0))
        return
    kind, j, sub_recipe = recipe
    prefix, suffix = axes[:j], axes[j:]
    block = math.prod(a[0] for a in suffix)
    data = tuple(a for a in prefix if a[2] != 0)
    in_place = kind == "in_place"
    sub_axes, final_axes = _split(prefix, suffix, data, block, elem, in_place)
    if in_place:
        _emit(sub_axes, sub_recipe, elem, dst, dst_offset, src, steps, temps)
        count, stride = prefix[0][0], prefix[0][1]
        if stride != block * elem:  # padded blocks: one broadcast copy of block 0 into the others
            steps.append(_step(final_axes, elem, dst, dst_offset + stride, dst, dst_offset))
            return
        done = 1
        while done < count:  # doubling: each step is one large memmove, which streams past the cache
            k = min(done, count - done)
            steps.append(
                _step(((k * block, elem, elem),), elem, dst, dst_offset + done * stride, dst, dst_offset)
            )
            done += k
        return
    temps.append(math.prod(a[0] for a in data) * block * elem)
    t = len(temps) - 1
    _emit(sub_axes, sub_recipe, elem, t, 0, src, steps, temps)
    steps.append(_step(final_axes, elem, dst, dst_offset, t, 0))


def _step(axes, elem, dst, dst_offset, src, src_offset) -> Step:
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
    )


def element_type(width: int) -> np.dtype:
    """The NumPy type a step copies: an unsigned int of that width, or ``V<width>`` raw bytes."""
    return np.dtype(f"u{width}" if width in (1, 2, 4, 8) else f"V{width}")


def view(base: np.ndarray, offset: int, shape, strides, width: int) -> np.ndarray:
    """A strided view of ``width``-byte elements into the byte buffer of ``base``."""
    return np.ndarray(shape, element_type(width), base, offset, strides)
