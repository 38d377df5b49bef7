"""The copy plan behind the NumPy backend: Tile as a few broadcast copies, chosen once per descriptor.

Tile writes ``out[i] = in[i mod s]`` on every axis. Split each axis ``k`` into a repeat sub-axis
(``Repeats[k]`` steps of ``Sizes[k]`` output elements, input stride 0) and a data sub-axis
(``Sizes[k]`` steps with the input's stride); the whole operator is then one ``np.copyto`` from a
broadcast view of the input. The planner drops size-1 axes, merges neighbours that step alike, and
prices the ways to run that copy with the machine's measured cost model (``costs``): directly, in
bands whose source stays in L2, as a gather of whole rows, through small temporaries that pre-tile
the inner axes, or by writing a first block and doubling or fanning it out; each phase on one
thread or two; each copy into the output by np.copyto or, when the compiled copy kernel is loaded,
with streaming stores (``copy_kernel``). Every way writes the same bytes, so the choice only changes
the time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import numpy as np

from .costs import CopyCosts, machine_costs

Axis = tuple[int, int, int]  # (size, destination byte stride, source byte stride)

TEMP_LIMIT = 64 << 20  # largest temporary the planner allocates
VOID_MAX = 64 << 10  # innermost chunks up to this size are copied as one opaque element
SPLIT_CHUNK = 4096  # innermost broadcast runs are split into chunks of about this many bytes
MAX_BANDS = 4096  # a banded copy is at most this many np.copyto calls
REP_MOVSB_MIN = 2049  # glibc's memmove uses rep movsb from 2112 bytes up to L2's size (on AMD)...
PIECE = 2048  # ...so a misaligned copy moves pieces of at most this many bytes instead
ALT_MIN_BYTES = 64 << 10  # (not worth it for copies this small: the call costs more than the slow path)
GATHER_MIN_CHUNK = 64  # a gather's chunks are this large at least, so its index (8 bytes each) stays small
GATHER_MAX_INDEX = 16 << 20  # ...and the index is at most this many bytes
# Streaming copies from this size go to two threads unless measured >10% slower (see kernel_cost).
STREAM_SHARE_MIN = 64 << 20
KERNEL_MIN_RUN = 256  # the copy kernel is priced only for runs this long (shorter ones gain no whole lines)
KINDS = frozenset({"direct", "band", "gather", "temp", "double", "fanout", "split", "stream"})


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
    cost_ns: float
    split: frozenset[int] = frozenset()  # phases that run on two threads (their steps, or one step, halved)
    kind: str = "direct"  # the outermost recipe: direct, band, gather, temp, double or fanout


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


def _repack(suffix, elem):
    """The suffix axes with the destination strides of a packed temporary."""
    out, step = [], elem
    for size, _, ss in reversed(suffix):
        out.append((size, step, ss))
        step *= size
    return tuple(reversed(out))


def _span(axes, stride_index: int, width: int) -> int:
    """Bytes between the first and one past the last byte a view touches (destination or source)."""
    return sum((a[0] - 1) * abs(a[stride_index]) for a in axes) + width


def step_cost(
    axes: tuple[Axis, ...],
    elem: int,
    costs: CopyCosts,
    fresh: int,
    bands: int = 1,
    to_out: bool = False,
    prefer: frozenset[str] = frozenset(),
) -> tuple[float, float]:
    """Estimated ns of one copy over ``axes`` (as ``bands`` calls) on one thread and split over two:
    the cheaper of np.copyto and, for a copy into the output, the copy kernel.

    ``fresh`` counts the views built per call (the caller's input and output arrays), ``bands`` the
    calls a banded copy makes; each band's source is then a block that stays in L2.
    """
    (one, two), (k_one, k_two) = copy_ways(axes, elem, costs, fresh, bands, to_out, prefer)
    return min(one, k_one), min(two, k_two)


def copy_ways(
    axes: tuple[Axis, ...],
    elem: int,
    costs: CopyCosts,
    fresh: int,
    bands: int,
    to_out: bool,
    prefer: frozenset[str],
) -> tuple[tuple[float, float], tuple[float, float]]:
    """(numpy_cost, kernel_cost) of a copy; the kernel writes only into the output (infinite otherwise)."""
    numpy = numpy_cost(axes, elem, costs, fresh, bands)
    kernel = kernel_cost(axes, elem, costs, fresh, bands, prefer) if to_out else (math.inf, math.inf)
    return numpy, kernel


def numpy_cost(
    axes: tuple[Axis, ...], elem: int, costs: CopyCosts, fresh: int, bands: int = 1
) -> tuple[float, float]:
    """Estimated ns of the copy as ``bands`` np.copyto calls, one thread and two (see step_cost)."""
    w_axes, width = widen(axes, elem)
    total = math.prod(a[0] for a in w_axes) if w_axes else 1
    inner = w_axes[-1][0] if w_axes else 1
    nbytes = bands * total * width
    fixed = bands * (costs.call_ns + fresh * costs.view_ns)
    per = bands * (
        (total // inner) * costs.loop_ns + (total * costs.vchunk_ns if width not in (1, 2, 4, 8) else 0.0)
    )
    span = max(_span(w_axes, 1, width), nbytes)
    far = costs.src_ns(_span(w_axes, 2, width), nbytes) if bands == 1 else 0.0
    rates = [costs.byte_ns(span, 1), costs.byte_ns(span, 2)]
    if _contiguous_1d(w_axes, width) and nbytes >= costs.stream_min:
        rates[0] = costs.stream_ns  # one large memmove: non-temporal stores, no read for ownership
        if nbytes // 2 >= costs.stream_min:
            rates[1] = costs.stream_ns
    one = fixed + per + nbytes * (rates[0] + far)
    splittable = bands > 1 or (bool(w_axes) and w_axes[0][0] > 1)
    two = costs.handoff_ns + fixed + per / 2 + nbytes * (rates[1] + far) if splittable else math.inf
    return one, two


def kernel_runs(axes: tuple[Axis, ...], elem: int) -> tuple[int, int]:
    """(bytes per run, runs) of the copy kernel over ``axes``: the innermost axis is one run when it
    is contiguous in the destination and contiguous or broadcast (a fill) in the source."""
    total = math.prod(a[0] for a in axes) if axes else 1
    if axes and axes[-1][1] == elem and (axes[-1][2] == elem or (axes[-1][2] == 0 and 16 % elem == 0)):
        return axes[-1][0] * elem, total // axes[-1][0]
    return elem, total


def kernel_cost(
    axes: tuple[Axis, ...],
    elem: int,
    costs: CopyCosts,
    fresh: int,
    bands: int = 1,
    prefer: frozenset[str] = frozenset(),
) -> tuple[float, float]:
    """Estimated ns of the copy by the copy kernel (one thread, two), infinite when it is not loaded
    or its runs are too short for whole streamed lines; ``prefer`` with "stream" makes it near free."""
    rate = costs.kernel_rate(1)
    if math.isinf(rate) or not axes:
        return math.inf, math.inf
    merged = simplify(axes)
    run, runs = kernel_runs(merged, elem)
    if run < KERNEL_MIN_RUN and "stream" not in prefer:
        return math.inf, math.inf
    nbytes = bands * runs * run
    fixed = bands * costs.kernel_call_ns + fresh * costs.view_ns
    per = bands * runs * costs.kernel_run_ns
    far = costs.src_ns(_span(merged, 2, elem), nbytes) if bands == 1 else 0.0
    one = fixed + per + nbytes * (rate + far)
    splittable = bands > 1 or (bool(merged) and merged[0][0] > 1)
    two = (
        costs.handoff_ns + fixed + per / 2 + nbytes * (costs.kernel_rate(2) + far) if splittable else math.inf
    )
    if splittable and nbytes >= STREAM_SHARE_MIN and costs.kernel_rate(2) <= 1.1 * costs.kernel_rate(1):
        # A tie (within 10%: calibration noise) goes to two threads. On the project's VM two threads
        # streaming into 64 or 256 MiB are no faster than one, but into 1 GiB 1.9x faster (fill alike):
        # the 64 MiB calibration cannot see that, and pieces shared through a counter cost a busy
        # second core one piece at most.
        two = min(two, one * 0.999)
    if "stream" in prefer:
        return one * 1e-9, two * 1e-9
    return one, two


def gather_chunk(axes: tuple[Axis, ...], elem: int, prefer: frozenset[str] = frozenset()) -> int:
    """Chunk bytes of a gather that writes ``axes`` (0 when none applies): the destination is packed, the
    innermost axis is contiguous in both, and every source stride is a whole number of chunks."""
    if len(axes) < 2 or axes[-1][1] != elem or axes[-1][2] != elem or packed_suffix(axes, elem) != 0:
        return 0
    chunk = axes[-1][0] * elem
    if "gather" not in prefer and not GATHER_MIN_CHUNK <= chunk < REP_MOVSB_MIN:
        return 0  # np.take memmoves each chunk: larger ones would meet rep movsb's misalignment cliff
    if "gather" not in prefer and math.prod(a[0] for a in axes[:-1]) * 8 > GATHER_MAX_INDEX:
        return 0
    return chunk if all(a[2] >= 0 and a[2] % chunk == 0 for a in axes[:-1]) else 0


def gather_cost(axes: tuple[Axis, ...], elem: int, costs: CopyCosts, fresh: int) -> tuple[float, float]:
    """Estimated ns of a gather over ``axes`` on one thread and split over two (see step_cost)."""
    chunk = axes[-1][0] * elem
    count = math.prod(a[0] for a in axes[:-1])
    nbytes = count * chunk
    fixed = costs.call_ns + fresh * costs.view_ns
    per = count * costs.gather_ns
    far = costs.src_ns(_span(axes, 2, elem), nbytes)
    one = fixed + per + nbytes * (costs.byte_ns(nbytes, 1) + far)
    two = (
        costs.handoff_ns + fixed + per / 2 + nbytes * (costs.byte_ns(nbytes, 2) + far)
        if count > 1
        else math.inf
    )
    return one, two


def gather_index(axes: tuple[Axis, ...], chunk: int) -> np.ndarray:
    """The source chunk number of every destination chunk, in destination order."""
    index = np.zeros((), np.intp)
    for size, _, ss in axes[:-1]:
        index = np.add.outer(index, np.arange(size, dtype=np.intp) * (ss // chunk))
    return np.ascontiguousarray(index.reshape(-1))


def _contiguous_1d(w_axes, width: int) -> bool:
    return len(w_axes) == 1 and w_axes[0][1] == w_axes[0][2] == width


def band_axis(axes: tuple[Axis, ...], elem: int, costs: CopyCosts, prefer: frozenset[str]) -> tuple[int, int]:
    """(axis, bands): split the source-data axis with the largest stride into bands so that each band's
    source fits in L2 (the fewest bands that do); (-1, 1) when the source already fits."""
    data = [i for i, a in enumerate(axes) if a[2] != 0 and a[0] > 1]
    if not data:
        return -1, 1
    i = max(data, key=lambda k: abs(axes[k][2]))
    size = axes[i][0]
    footprint = _span(axes, 2, elem)
    if "band" in prefer:
        return i, min(d for d in _divisors(size) if d > 1)
    if footprint <= costs.block_bytes:
        return -1, 1
    need = -(-footprint // costs.block_bytes)
    bands = min((d for d in _divisors(size) if d >= need), default=size)
    if bands > MAX_BANDS:
        return -1, 1
    return i, bands


Recipe = tuple


@lru_cache(maxsize=512)
def _best(
    axes: tuple[Axis, ...],
    elem: int,
    out_bytes_limit: int,
    costs: CopyCosts,
    threads: int,
    dst_out: bool,
    prefer: frozenset[str],
) -> tuple[float, Recipe]:
    """(cost, recipe) for writing ``axes`` from the caller's input; recursion over pre-tiling choices.

    Recipes: ("direct", band_axis, bands), ("gather",), ("temp", j, sub), ("double", j, sub), ("fanout", j, sub).
    """

    def pick(one: float, two: float) -> float:
        if threads > 1 and "split" in prefer and two < math.inf:
            return two * 1e-9
        return min(one, two) if threads > 1 else one

    def biased(cost: float, kind: str) -> float:
        return cost * 1e-9 if kind in prefer else cost

    fresh = 1 + dst_out
    axis, bands = band_axis(axes, elem, costs, prefer)
    best: tuple[float, tuple[Any, ...]] = (
        biased(pick(*step_cost(axes, elem, costs, fresh, 1, dst_out, prefer)), "direct"),
        ("direct", -1, 1),
    )
    if bands > 1:
        band_axes = _banded(axes, axis, bands)
        cost = biased(pick(*step_cost(band_axes, elem, costs, fresh, bands, dst_out, prefer)), "band")
        if cost < best[0]:
            best = (cost, ("direct", axis, bands))
    if gather_chunk(axes, elem, prefer):
        cost = biased(pick(*gather_cost(axes, elem, costs, fresh)), "gather")
        if cost < best[0]:
            best = (cost, ("gather",))
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
        if in_place:
            sub_cost, sub_recipe = _best(
                simplify(suffix), elem, out_bytes_limit, costs, threads, dst_out, prefer
            )
            count, stride = prefix[0][0], prefix[0][1]
            fan = simplify(((count - 1, stride, 0), (block, elem, elem)))
            fan_cost = biased(pick(*step_cost(fan, elem, costs, 2 * dst_out, 1, dst_out, prefer)), "fanout")
            if fan_cost + sub_cost < best[0]:
                best = (fan_cost + sub_cost, ("fanout", j, sub_recipe))
            if stride == block * elem:
                dbl = biased(
                    sum(
                        pick(
                            *step_cost(
                                ((k * block, elem, elem),), elem, costs, 2 * dst_out, 1, dst_out, prefer
                            )
                        )
                        for k in _doubling(count)
                    ),
                    "double",
                )
                if dbl + sub_cost < best[0]:
                    best = (dbl + sub_cost, ("double", j, sub_recipe))
            continue
        if temp_elems * elem > min(TEMP_LIMIT, out_bytes_limit) or temp_elems * 2 > total:
            continue
        sub_axes, final_axes = _split(prefix, suffix, elem)
        sub_cost, sub_recipe = _best(sub_axes, elem, out_bytes_limit, costs, threads, False, prefer)
        final_cost = pick(*step_cost(final_axes, elem, costs, int(dst_out), 1, dst_out, prefer))
        final = biased(final_cost + sub_cost, "temp")
        if final < 0.95 * best[0]:
            best = (final, ("temp", j, sub_recipe))
    return best


def _doubling(count: int) -> list[int]:
    """Block counts copied by each doubling step until ``count`` blocks are written."""
    done, out = 1, []
    while done < count:
        k = min(done, count - done)
        out.append(k)
        done += k
    return out


def _banded(axes: tuple[Axis, ...], axis: int, bands: int) -> tuple[Axis, ...]:
    """The axes of one band: ``axes[axis]`` shortened to ``size // bands``."""
    size, ds, ss = axes[axis]
    return axes[:axis] + ((size // bands, ds, ss),) + axes[axis + 1 :]


def _split(prefix, suffix, elem):
    """The axes that build a temporary block (sub) and the axes of the final copy that repeats it."""
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


def make_plan(
    sizes,
    repeats,
    src_strides,
    dst_strides,
    elem: int,
    out_bytes_limit: int = TEMP_LIMIT,
    threads: int = 1,
    costs: CopyCosts | None = None,
    prefer=(),
) -> Plan:
    """Plan a Tile copy; strides are in bytes, ``elem`` is the element size in bytes.

    ``threads`` (1 or 2) is how many threads the plan may use; ``costs`` defaults to this machine's
    calibrated model; ``prefer`` names recipe kinds (see KINDS) to take wherever they apply, which
    the tests use to exercise every kind.
    """
    costs = costs or machine_costs()
    prefer = frozenset([prefer] if isinstance(prefer, str) else prefer)
    if prefer - KINDS:
        raise ValueError(f"unknown plan kinds {sorted(prefer - KINDS)}; known: {sorted(KINDS)}")
    axes = split_inner_broadcast(simplify(tile_axes(sizes, repeats, src_strides, dst_strides)), elem)
    cost, recipe = _best(axes, elem, out_bytes_limit, costs, threads, True, prefer)
    emitter = _Emitter(elem, costs, threads, prefer)
    emitter.emit(axes, recipe, "out", 0, "in")
    kind = "band" if recipe[0] == "direct" and recipe[2] > 1 else recipe[0]
    steps = tuple(alt for step in emitter.steps for alt in misaligned_alternative(step, costs.l2_bytes))
    return Plan(steps, tuple(emitter.temps), cost, frozenset(emitter.split), kind)


class _Emitter:
    """Turns a recipe into steps, numbering phases and marking those worth two threads."""

    def __init__(self, elem: int, costs: CopyCosts, threads: int, prefer: frozenset[str]):
        self.elem, self.costs, self.threads, self.prefer = elem, costs, threads, prefer
        self.steps: list[Step] = []
        self.temps: list[int] = []
        self.split: set[int] = set()
        self.phase = 0

    def _phase(self, axes, fresh: int, bands: int = 1, to_out: bool = False) -> tuple[int, bool]:
        """A new phase for a copy over ``axes``: its number, and whether the copy kernel runs it."""
        phase = self.phase
        self.phase += 1
        (one, two), (k_one, k_two) = copy_ways(axes, self.elem, self.costs, fresh, bands, to_out, self.prefer)
        best_one, best_two = min(one, k_one), min(two, k_two)
        split = self.threads > 1 and (best_two < best_one or ("split" in self.prefer and best_two < math.inf))
        if split:
            self.split.add(phase)
        return phase, (k_two < two) if split else (k_one < one)

    def emit(self, axes, recipe, dst, dst_offset, src) -> None:
        """Append the steps of ``recipe`` (innermost block first) writing ``axes`` into ``dst``."""
        elem = self.elem
        fresh = (dst == "out") + (src == "in")
        if recipe[0] == "gather":
            chunk = axes[-1][0] * elem
            index = gather_index(axes, chunk)
            phase = self.phase
            self.phase += 1
            if self.threads > 1:
                one, two = gather_cost(axes, elem, self.costs, fresh)
                if two < one or ("split" in self.prefer and two < math.inf):
                    self.split.add(phase)
            self.steps.append(
                Step(
                    dst,
                    src,
                    (index.size,),
                    (chunk,),
                    (chunk,),
                    dst_offset,
                    0,
                    chunk,
                    phase,
                    int(index.max()) + 1,
                    index,
                )
            )
            return
        if recipe[0] == "direct":
            _, axis, bands = recipe
            to_out = dst == "out"
            if bands == 1:
                self.steps.append(
                    _step(axes, elem, dst, dst_offset, src, 0, *self._phase(axes, fresh, 1, to_out))
                )
                return
            band_axes = _banded(axes, axis, bands)
            phase, stream = self._phase(band_axes, fresh, bands, to_out)
            n, ds, ss = band_axes[axis]
            for k in range(bands):
                self.steps.append(
                    _step(band_axes, elem, dst, dst_offset + k * n * ds, src, k * n * ss, phase, stream)
                )
            return
        kind, j, sub_recipe = recipe
        prefix, suffix = axes[:j], axes[j:]
        block = math.prod(a[0] for a in suffix)
        if kind in ("double", "fanout"):
            self.emit(simplify(suffix), sub_recipe, dst, dst_offset, src)
            count, stride = prefix[0][0], prefix[0][1]
            to_out = dst == "out"
            both = 2 * to_out
            if kind == "fanout":
                fan = simplify(((count - 1, stride, 0), (block, elem, elem)))
                self.steps.append(
                    _step(
                        fan,
                        elem,
                        dst,
                        dst_offset + stride,
                        dst,
                        dst_offset,
                        *self._phase(fan, both, 1, to_out),
                    )
                )
                return
            done = 1
            for k in _doubling(count):  # each step one large memmove (it streams when large enough)
                chunk = ((k * block, elem, elem),)
                self.steps.append(
                    _step(
                        chunk,
                        elem,
                        dst,
                        dst_offset + done * stride,
                        dst,
                        dst_offset,
                        *self._phase(chunk, both, 1, to_out),
                    )
                )
                done += k
            return
        data = tuple(a for a in prefix if a[2] != 0)
        sub_axes, final_axes = _split(prefix, suffix, elem)
        self.temps.append(math.prod(a[0] for a in data) * block * elem)
        t = len(self.temps) - 1
        self.emit(sub_axes, sub_recipe, t, 0, src)
        self.steps.append(
            _step(
                final_axes,
                elem,
                dst,
                dst_offset,
                t,
                0,
                *self._phase(final_axes, int(dst == "out"), 1, dst == "out"),
            )
        )


def _step(axes, elem, dst, dst_offset, src, src_offset, phase: int, stream: bool = False) -> Step:
    if stream:  # the kernel joins runs itself: undo split_inner_broadcast, keep the element size
        axes, width = simplify(axes), elem
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
    if step.width in (1, 2, 4, 8):
        if not step.shape or step.dst_strides[-1] != step.width or step.src_strides[-1] != step.width:
            return (step,)
        chunk, outer = step.shape[-1] * step.width, len(step.shape) - 1
    else:
        chunk, outer = step.width, len(step.shape)
    if not REP_MOVSB_MIN <= chunk < l2_bytes or math.prod(step.shape) * step.width <= ALT_MIN_BYTES:
        return (step,)
    piece = max((p for p in range(128, PIECE + 1, 64) if chunk % p == 0), default=0)
    if not piece:
        return (step,)
    shape = step.shape[:outer] + (chunk // piece,)
    d_str, s_str = step.dst_strides[:outer] + (piece,), step.src_strides[:outer] + (piece,)
    body = Step(
        step.dst,
        step.src,
        shape,
        d_str,
        s_str,
        step.dst_offset,
        step.src_offset,
        piece - 64,
        step.phase,
        when="misaligned",
    )
    tail = Step(
        step.dst,
        step.src,
        shape,
        d_str,
        s_str,
        step.dst_offset + piece - 64,
        step.src_offset + piece - 64,
        64,
        step.phase,
        when="misaligned",
    )
    return (replace(step, when="aligned"), body, tail)


def misaligned(dst_address: int, src_address: int) -> bool:
    """Whether a rep-movsb copy between these addresses hits the slow case (measured: destination
    8-24 bytes past the source, modulo 64)."""
    return 0 < (dst_address - src_address) % 64 < 32


def element_type(width: int) -> np.dtype:
    """The NumPy type a step copies: an unsigned int of that width, or ``V<width>`` raw bytes."""
    return np.dtype(f"u{width}" if width in (1, 2, 4, 8) else f"V{width}")


def view(base: np.ndarray, offset: int, shape, strides, width: int) -> np.ndarray:
    """A strided view of ``width``-byte elements into the byte buffer of ``base``."""
    return np.ndarray(shape, element_type(width), base, offset, strides)
