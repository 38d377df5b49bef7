"""The copy planner behind the NumPy backend: Tile as a few broadcast copies, chosen once per descriptor.

Tile is one copy from a broadcast view of the input (``copy_axes``). The planner prices the ways to
run that copy (``pricing``) under the cost model's figures (``costs``): directly, in bands whose
source stays in L2, as a gather of whole rows, through small temporaries that pre-tile the inner
axes, or by writing a first block and doubling or fanning it out; each phase on one thread or two;
each copy into the output by np.copyto or, when the compiled copy kernel is loaded, with streaming
stores (``copy_kernel``). The cheapest recipe becomes steps (``copy_steps``). Every way writes the
same bytes, so the choice only changes the time.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache
from typing import Any

from . import copy_kernel
from .copy_axes import (
    Axis,
    banded,
    divisors,
    in_place_copies,
    packed_suffix,
    simplify,
    span,
    split_back_to_back,
    through_temporary,
    tile_axes,
)
from .copy_steps import REP_MOVSB_MIN, Emitter, Plan
from .costs import CopyCosts, machine_costs
from .pricing import (
    TWO_THREAD_MARGIN,
    cheaper,
    gather_cost,
    numpy_cost,
    program_cost,
    step_cost,
)

TEMP_LIMIT = 64 << 20  # largest temporary the planner allocates
MAX_BANDS = 4096  # a banded copy is at most this many np.copyto calls
GATHER_MIN_CHUNK = 64  # a gather's chunks are this large at least, so its index (8 bytes each) stays small
GATHER_MAX_INDEX = 16 << 20  # ...and the index is at most this many bytes
KINDS = frozenset({"direct", "band", "gather", "temp", "double", "fanout", "split", "stream"})
FAST_MAX_BYTES = 64 << 10  # up to here a one-step plan on arrays runs as two reshapes and np.copyto
# The share of the reshapes' price that a plan run by the plan runner must come under to replace them.
# Both prices come from calibrations in tight loops; in a call among other work each is off by up to
# a tenth, so the two can differ by a fifth: a 35 KiB output priced 2% under its reshapes as one
# kernel call ran 12% slower (2.07 against 1.85 us), a 384-byte fan-out priced 12% under them ran
# 8% slower (0.86 against 0.80 us).
RESHAPE_MARGIN = 0.8
# Up to this many output bytes a plan's price is mostly fixed costs (calls, odometer steps, the second
# thread's handoff), each calibrated in a tight loop, and the best plan on two threads is taken only
# under TWO_THREAD_MARGIN of the best on one, the margin of a single copy's two ways (on_two, less its
# one more handoff: the plan's price has its own). Recipes are priced each with its own copies'
# threads, and without it a direct copy of 46 KiB priced 1.66 us on two threads beat a temporary's
# copies priced 1.71 on one, then took 3.3-4.6 us a call against 2.5-2.7. On an EPYC VM the plans
# this margin moved to one thread, 45-169 KiB, took 0.74-0.94x as long; of 733 KiB and 3.6 MiB, where
# two threads' bytes decide, it would have made them 1.15-1.5x slower.
SMALL_PLAN_BYTES = 256 << 10


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
    whole = simplify(tile_axes(sizes, repeats, src_strides, dst_strides))
    (axes, rest, cost, recipe), threads = _threads_and_recipe(
        whole, elem, out_bytes_limit, costs, threads, prefer
    )
    # Any plan but one copy on one thread runs through the plan runner (its views, or one call of the
    # copy kernel through ctypes), a one-step plan on arrays as two reshapes and one np.copyto: on small
    # outputs that difference decides, and the recursion above cannot see it (it prices steps, not
    # calls). One copy is priced as it would run: through the runner like the recipe, or, on a small
    # output, as reshapes, whose np.copyto pays NumPy's loops (rows of 11 float16 repeated 13 times:
    # 2.3 us as reshapes, where a fan-out in one kernel call took 1.4). Reshapes exist only for a plan
    # of one step, so not when the chunks leave repeats over (rest). A forced plan is taken as it is.
    if not prefer:
        one, two = step_cost(axes, elem, costs, 0, 1, True, prefer)
        runner = costs.runner_work_ns + (costs.kernel_call_ns if copy_kernel.available() else 0.0)
        reshapes = math.inf
        if math.prod(a[0] for a in axes) * elem <= FAST_MAX_BYTES and rest is None:
            reshapes = numpy_cost(axes, elem, costs, 0)[0] * RESHAPE_MARGIN
        simple = min((cheaper(one, two, costs) if threads > 1 else one) + runner, reshapes)
        if recipe[0] != "direct" and simple < cost + runner:
            recipe = ("direct", -1, 1)
        if recipe == ("direct", -1, 1) and threads > 1 and reshapes < two + runner:
            # The copy would go to two threads, but as reshapes on one it costs less (504 rows of 96
            # bytes repeated: 3.2 us on two threads through the runner, 2.7 as reshapes).
            threads = 1
    emitter = Emitter(elem, costs, threads, prefer)
    emitter.emit(axes, recipe, "out", 0, "in")
    if rest is not None:  # the repeats the chunks leave over: one copy more
        emitter.emit(simplify(rest[0]), ("direct", -1, 1), "out", rest[1], "in")
    plan = emitter.plan("band" if recipe[0] == "direct" and recipe[2] > 1 else recipe[0])
    if recipe == ("direct", -1, 1) and not plan.split and not prefer and len(plan.steps) == 1:
        # One copy runs as two reshapes and np.copyto, whose loop pays per element or row; the kernel
        # moves short rows (thousands of 6-24 bytes) for a fraction of that, after a dearer call.
        # Both priced on the step as emitted (the element the reshapes view as), the program with the
        # runner's own work per call.
        step = plan.steps[0]
        step_axes = simplify(tuple(zip(step.shape, step.dst_strides, step.src_strides, strict=True)))
        numpy = numpy_cost(step_axes, step.width, costs, 0)[0]
        if program_cost(step_axes, step.width, costs) + costs.runner_work_ns < numpy * RESHAPE_MARGIN:
            plan = replace(plan, program=True)
    return plan


def _threads_and_recipe(
    whole: tuple[Axis, ...],
    elem: int,
    out_bytes_limit: int,
    costs: CopyCosts,
    threads: int,
    prefer: frozenset,
) -> tuple[tuple[tuple[Axis, ...], tuple | None, float, Recipe], int]:
    """(_chunks_or_whole's answer, the threads the plan may use): a small plan (SMALL_PLAN_BYTES) on
    two threads only under TWO_THREAD_MARGIN of the best plan on one."""
    chosen = _chunks_or_whole(whole, elem, out_bytes_limit, costs, threads, prefer)
    if threads > 1 and not prefer and math.prod(a[0] for a in whole) * elem <= SMALL_PLAN_BYTES:
        alone = _chunks_or_whole(whole, elem, out_bytes_limit, costs, 1, prefer)
        if chosen[2] >= TWO_THREAD_MARGIN * alone[2]:
            return alone, 1
    return chosen, threads


def _chunks_or_whole(
    whole: tuple[Axis, ...],
    elem: int,
    out_bytes_limit: int,
    costs: CopyCosts,
    threads: int,
    prefer: frozenset,
) -> tuple[tuple[Axis, ...], tuple | None, float, Recipe]:
    """(axes, rest, cost, recipe) of the copy over ``whole``: a row repeated back to back cut into
    chunks (split_back_to_back) with the repeats they leave over as one copy more, or, priced lower,
    the whole copy unsplit. The repeats left over are copied from the input as it is: from a strided
    input that the chunks' plan gathers first, that re-reads it element by element (rows of 21 float64
    48 bytes apart, 109 repeats cut into 4 chunks of 24 and 13 over: 2.5 ms, where the gathered rows
    fanned out whole took 1.5)."""
    axes, rest = split_back_to_back(whole, elem)
    cost, recipe = _best(axes, elem, out_bytes_limit, costs, threads, True, prefer)
    if rest is not None and not prefer:
        rest_cost = step_cost(simplify(rest[0]), elem, costs, 0, 1, True, prefer)
        whole_cost, whole_recipe = _best(whole, elem, out_bytes_limit, costs, threads, True, prefer)
        if whole_cost < cost + (cheaper(*rest_cost, costs) if threads > 1 else rest_cost[0]):
            return whole, None, whole_cost, whole_recipe
    return axes, rest, cost, recipe


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


def band_axis(
    axes: tuple[Axis, ...], elem: int, costs: CopyCosts, prefer: frozenset[str]
) -> tuple[int, list[int]]:
    """(axis, band counts to price): split the source-data axis with the largest stride into equal bands
    so that each band's source fits in L2 (the fewest bands that do), or into the most bands that do
    not: a size such as 1465 = 5 x 293 leaves only bands of 5 rows or of 293, and 293 bands shared with
    the second thread one by one cost more than bands that spill out of L2. (-1, []) when the source
    already fits."""
    data = [i for i, a in enumerate(axes) if a[2] != 0 and a[0] > 1]
    if not data:
        return -1, []
    i = max(data, key=lambda k: abs(axes[k][2]))
    counts = divisors(axes[i][0])
    footprint = span(axes, 2, elem)
    if "band" in prefer:
        return i, [min(d for d in counts if d > 1)]
    if footprint <= costs.block_bytes:
        return -1, []
    need = -(-footprint // costs.block_bytes)
    fit = min((d for d in counts if d >= need), default=axes[i][0])
    fewer = max((d for d in counts if 1 < d < need), default=0)
    return i, [n for n in (fit, fewer) if 1 < n <= MAX_BANDS]


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
    region: int = 0,
) -> tuple[float, Recipe]:
    """(cost, recipe) for writing ``axes`` from the caller's input; recursion over pre-tiling choices.
    ``region``: the bytes written around them in their destination (see step_cost), for the first
    block of a fan-out or a doubling.

    Recipes: ("direct", band_axis, bands), ("gather",), ("temp", j, sub), ("double", j, sub), ("fanout", j, sub).
    """

    def pick(one: float, two: float) -> float:
        if threads > 1 and "split" in prefer and two < math.inf:
            return two * 1e-9
        return cheaper(one, two, costs) if threads > 1 else one

    def biased(cost: float, kind: str) -> float:
        return cost * 1e-9 if kind in prefer else cost

    fresh = 1 + dst_out
    axis, band_counts = band_axis(axes, elem, costs, prefer)
    best: tuple[float, tuple[Any, ...]] = (
        biased(pick(*step_cost(axes, elem, costs, fresh, 1, dst_out, prefer, region)), "direct"),
        ("direct", -1, 1),
    )
    for bands in band_counts:
        band_axes = banded(axes, axis, bands)
        cost = biased(pick(*step_cost(band_axes, elem, costs, fresh, bands, dst_out, prefer, region)), "band")
        if cost < best[0]:
            best = (cost, ("direct", axis, bands))
    if gather_chunk(axes, elem, prefer):
        cost = biased(pick(*gather_cost(axes, elem, costs, fresh, region)), "gather")
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
            # The block is written by the calling thread alone (see Emitter._in_place).
            count, stride = prefix[0][0], prefix[0][1]
            fan, doubled, whole = in_place_copies(count, stride, block, elem)
            around = max(region, whole)
            sub_cost, sub_recipe = _best(
                simplify(suffix), elem, out_bytes_limit, costs, 1, dst_out, prefer, around
            )
            copying = (elem, costs, 2 * dst_out, 1, dst_out, prefer, around, True)
            fan_cost = biased(pick(*step_cost(fan, *copying)) + sub_cost, "fanout")
            if fan_cost < best[0]:
                best = (fan_cost, ("fanout", j, sub_recipe))
            if stride == block * elem:
                copies = (step_cost(c, *copying) for c in doubled)
                dbl = biased(sub_cost + sum(pick(*c) for c in copies), "double")
                if dbl < best[0]:
                    best = (dbl, ("double", j, sub_recipe))
            continue
        if temp_elems * elem > min(TEMP_LIMIT, out_bytes_limit) or temp_elems * 2 > total:
            continue
        sub_axes, final_axes = through_temporary(prefix, suffix, elem)
        sub_cost, sub_recipe = _best(sub_axes, elem, out_bytes_limit, costs, threads, False, prefer)
        final_cost = pick(*step_cost(final_axes, elem, costs, int(dst_out), 1, dst_out, prefer, region, True))
        final = biased(final_cost + sub_cost, "temp")
        if final < 0.95 * best[0]:
            best = (final, ("temp", j, sub_recipe))
    return best
