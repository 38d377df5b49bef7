"""Tile as one strided copy, and the axis algebra the planner rewrites it with.

Tile writes ``out[i] = in[i mod s]`` on every axis. Split each axis ``k`` into a repeat sub-axis
(``Repeats[k]`` steps of ``Sizes[k]`` output elements, input stride 0) and a data sub-axis
(``Sizes[k]`` steps with the input's stride); the whole operator is then one copy from a
broadcast view of the input. An axis here is ``(size, destination byte stride, source byte
stride)``; every function below returns axes that address the same bytes in the same pairs, only
grouped differently, so none of them can change what a plan writes.
"""

from __future__ import annotations

import math

import numpy as np

Axis = tuple[int, int, int]  # (size, destination byte stride, source byte stride)

VOID_MAX = 64 << 10  # innermost chunks up to this size are copied as one opaque element
SPLIT_CHUNK = 4096  # innermost broadcast runs are split into chunks of about this many bytes


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


def split_back_to_back(axes: tuple[Axis, ...], elem: int) -> tuple[tuple[Axis, ...], tuple | None]:
    """Split a long run of one row repeated back to back into chunks a temporary can hold.

    The row is what the axes inside a broadcast axis write (one element for the innermost axis, or a
    whole packed row, as a bias of 3 elements repeated a million times); its repeats fill one
    contiguous run. The broadcast axis becomes (runs, chunk) with chunks of about SPLIT_CHUNK bytes,
    so a temporary can hold one chunk and the copies out of it are long. Returns the axes and the
    rest the chunks do not cover, as (axes, destination offset in bytes), or None: a chunk divides
    the run when a divisor of its count gives at least half a chunk, else the last repeats are a
    second, short copy.
    """
    for k in range(len(axes) - 1, -1, -1):
        size, ds, ss = axes[k]
        inner = axes[k + 1 :]
        row = elem * math.prod(a[0] for a in inner)
        if ss == 0 and size > 1 and ds == row and packed_suffix(axes, elem) <= k + 1:
            break
    else:
        return axes, None
    if size * row <= SPLIT_CHUNK or 2 * row > SPLIT_CHUNK:
        return axes, None
    chunk = max((f for f in divisors(size) if f * row <= SPLIT_CHUNK), default=1)
    if 2 * chunk * row <= SPLIT_CHUNK:
        chunk = SPLIT_CHUNK // row
    runs, rest = divmod(size, chunk)
    if runs < 2:
        return axes, None
    main = axes[:k] + ((runs, chunk * row, 0), (chunk, row, 0)) + inner
    if not rest:
        return main, None
    return main, (axes[:k] + ((rest, row, 0),) + inner, runs * chunk * row)


def divisors(n: int) -> list[int]:
    """Every divisor of ``n``, ascending."""
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
    whole chunk as one opaque ``V<n>`` element when it is short and no single integer holds it
    (NumPy then copies it with one memmove inside its inner loop instead of paying its per-chunk
    iteration cost; measured 30-50% faster for 12-512 byte chunks, and 2.5x for rows of 6 int8
    that would otherwise be inner loops of three uint16), else the widest unsigned int that divides it."""
    if not axes:
        return axes, elem
    size, ds, ss = axes[-1]
    if ds != elem or ss != elem:
        return axes, elem
    chunk = size * elem
    if (8 < chunk or chunk not in (1, 2, 4, 8)) and chunk <= VOID_MAX and len(axes) > 1:
        return axes[:-1], chunk
    for width in (8, 4, 2):
        if (
            width > elem
            and chunk % width == 0
            and all(a[1] % width == 0 and a[2] % width == 0 for a in axes[:-1])
        ):
            return axes[:-1] + ((chunk // width, width, width),), width
    return axes, elem


def fill_element(axes: tuple[Axis, ...], elem: int) -> tuple[tuple[Axis, ...], int]:
    """The axes for the copy kernel, and its element size: a contiguous innermost chunk of up to 16
    bytes repeated along a broadcast axis right outside it becomes one element of a fill (the kernel
    writes such runs as whole lines of a 16-byte pattern), else the axes as they are, in elements."""
    if len(axes) > 1:
        size, ds, ss = axes[-1]
        chunk = size * elem
        outer = axes[-2]
        if ds == ss == elem and chunk > elem and 16 % chunk == 0 and outer[1] == chunk and outer[2] == 0:
            return axes[:-1], chunk
    return axes, elem


def span(axes, stride_index: int, width: int) -> int:
    """Bytes between the first and one past the last byte a view touches: its destination
    (``stride_index`` 1) or its source (2)."""
    return sum((a[0] - 1) * abs(a[stride_index]) for a in axes) + width


def reread_span(axes: tuple[Axis, ...], width: int) -> int:
    """Source bytes a copy reads between two reads of the same byte: the source span of the axes inside
    its outermost broadcast axis (source stride 0), 0 when it reads each byte once."""
    for i, (size, _, src_stride) in enumerate(axes):
        if size > 1 and src_stride == 0:
            return span(axes[i + 1 :], 2, width)
    return 0


def banded(axes: tuple[Axis, ...], axis: int, bands: int) -> tuple[Axis, ...]:
    """The axes of one band: ``axes[axis]`` shortened to ``size // bands``."""
    size, ds, ss = axes[axis]
    return axes[:axis] + ((size // bands, ds, ss),) + axes[axis + 1 :]


def doubling(count: int) -> list[int]:
    """Block counts copied by each doubling step until ``count`` blocks are written."""
    done, out = 1, []
    while done < count:
        k = min(done, count - done)
        out.append(k)
        done += k
    return out


def in_place_copies(
    count: int, stride: int, block: int, elem: int
) -> tuple[tuple[Axis, ...], list[tuple[Axis, ...]], int]:
    """Once the first of ``count`` slots (``stride`` bytes apart) of a packed block of ``block``
    elements is written: the fan-out copy of it onto the other slots; the copies of a doubling (each
    copies what is written so far onto the slots after it; for slots side by side); and the bytes of
    the region they write into, every slot (their writes push the first slot, their source, out of L2
    as much as its own write did, so they are priced at that region's rate)."""
    fan = simplify(((count - 1, stride, 0), (block, elem, elem)))
    doubled: list[tuple[Axis, ...]] = [((k * block, elem, elem),) for k in doubling(count)]
    return fan, doubled, count * stride


def through_temporary(prefix, suffix, elem: int) -> tuple[tuple[Axis, ...], tuple[Axis, ...]]:
    """The axes that build a temporary block (the suffix axes and the prefix's data axes, packed)
    and the axes of the final copy that repeats that block along the prefix."""
    temp_stride, step = {}, math.prod(a[0] for a in suffix) * elem
    for i in reversed(range(len(prefix))):
        if prefix[i][2] != 0:
            temp_stride[i] = step
            step *= prefix[i][0]
    block = math.prod(a[0] for a in suffix)
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


def gather_index(axes: tuple[Axis, ...], chunk: int) -> np.ndarray:
    """The source chunk number of every destination chunk of a gather, in destination order."""
    index = np.zeros((), np.intp)
    for size, _, ss in axes[:-1]:
        index = np.add.outer(index, np.arange(size, dtype=np.intp) * (ss // chunk))
    return np.ascontiguousarray(index.reshape(-1))
