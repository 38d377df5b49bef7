"""What one copy of a plan costs under the cost model's figures (``costs.CopyCosts``), in nanoseconds.

A copy over some axes is priced three ways, each on one thread and split over two: as a plain copy
(by the compiled copy kernel when it is loaded, which then runs every plan but a single small copy
and gathers; else as ``bands`` ``np.copyto`` calls), as a gather of whole rows (``np.take``), and,
for a copy into the output, by the copy kernel with streaming stores; a plan of one copy also as
one call of the kernel. The planner compares these prices; nothing here reads the machine, so the
same figures always give the same prices.
"""

from __future__ import annotations

import math

from . import copy_kernel
from .copy_axes import Axis, fill_element, reread_span, simplify, span, widen
from .copy_kernel import SHARE_PIECES, share_pieces
from .costs import CopyCosts

# Streaming copies from this size go to two threads unless measured >10% slower (see kernel_cost).
STREAM_SHARE_MIN = 16 << 20
# Shorter runs gain few whole lines of their own: the copy kernel is not priced for them, unless each
# starts where the one before it ends: it then streams runs shorter than BOUNCE_RUN through a small
# buffer, whole lines together (its own BOUNCE_RUN), except copies of LINE_RUN_MIN bytes or more,
# whose whole lines it streams straight from the source, putting together only the lines where two
# runs meet (its own LINE_RUN_MIN).
KERNEL_MIN_RUN = 256
BOUNCE_RUN = 4096
LINE_RUN_MIN = 128
# Two threads are taken only when priced under this share of one. Their price is the less certain:
# the second core's lines, its load and the worker's wake are calibrated in tight loops, and a Tile
# of 423 KiB fanned out from a block the calling thread had just gathered was priced 2% under one
# thread on two and ran 5-12% slower.
TWO_THREAD_MARGIN = 0.9


# Runs up to this many bytes are written with vector stores (the copy kernel's own moves, memcpy's
# loop or its rep movsb start-up), longer ones by rep movsb at the rates calibration measures on long
# rows (the kernel's LONG_MAX).
SHORT_RUN_MAX = 8192


def write_ns(run: int, dst_span: int, costs: CopyCosts, threads: int = 1) -> float:
    """Per-byte time of runs of ``run`` bytes written by ``threads`` threads into a destination
    spanning ``dst_span`` bytes: the write rate there (costs.byte_ns), and for runs too short for rep
    movsb, once each thread's share spans more than twice L2, the calibrated share of that rate more.
    A 38 MiB Tile of 960-byte rows gathered on two threads took 673 us where its temporary's runs of
    34560 bytes took 391, both priced at one rate (465 and 452 us); charged on outputs of just past
    L2, two threads' plans of 1-2 MiB went to one thread's fan-outs 1.5-1.7x slower. A share, not a
    fixed extra: priced at the extra timed into the last level, a 34 MiB Tile writing 2446-byte runs
    20 times each took 1134 us where one copy of its 1.8 MB runs took 299; with a fixed extra timed
    past the last level charged past its edge, Tiles of 20 MiB went from two threads' plain copies to
    one thread's streamed ones 2-5x slower."""
    rate = costs.byte_ns(dst_span, threads)
    if run > SHORT_RUN_MAX or dst_span <= threads * 2 * costs.l2_bytes:
        return rate
    return rate + costs.short_run_ratio * rate


def two_thread_bound(one: float, costs: CopyCosts) -> float:
    """The price under which a copy priced ``one`` ns on one thread goes to two: two must save a share
    of one (TWO_THREAD_MARGIN) and, besides, one more handoff to the second thread. The handoff is
    timed at its best, with the worker spinning and the other core idle; in use it can take a few
    times as long, which on a small copy is more than the work it saves: on an EPYC VM a 51 KiB Tile
    priced 1.6 us on two threads and 1.9 on one took 3.3-5.7 us on two and 2.4 on one, a 21 KiB one
    2.0-4.0 us on two and 2.3 on one."""
    return TWO_THREAD_MARGIN * one - costs.handoff_ns


def on_two(one: float, two: float, costs: CopyCosts) -> bool:
    """Whether a copy priced ``one`` ns on one thread and ``two`` on two goes to two threads."""
    return two < two_thread_bound(one, costs)


def cheaper(one: float, two: float, costs: CopyCosts) -> float:
    """The price of a copy on the threads it would run on (see on_two)."""
    return two if on_two(one, two, costs) else one


def step_cost(
    axes: tuple[Axis, ...],
    elem: int,
    costs: CopyCosts,
    fresh: int,
    bands: int = 1,
    to_out: bool = False,
    prefer: frozenset[str] = frozenset(),
    region: int = 0,
    written: bool = False,
) -> tuple[float, float]:
    """Estimated ns of one copy over ``axes`` (as ``bands`` calls) on one thread and split over two:
    the cheaper of np.copyto and, for a copy into the output, the copy kernel.

    ``fresh`` counts the views built per call (the caller's input and output arrays), ``bands`` the
    calls a banded copy makes; each band's source is then a block that stays in L2. ``region``: the
    bytes of the destination that the plan writes in all around this copy's own (a doubling step's
    destination, or a fan-out's first block, is a slice of it, and the other steps' writes push it out
    of the caches as much as its own do). ``written``: the source is what the calling thread has just
    written (a temporary, or the output's first block for a fan-out or a doubling).
    """
    (one, two), (k_one, k_two) = copy_ways(axes, elem, costs, fresh, bands, to_out, prefer, region, written)
    return min(one, k_one), min(two, k_two)


def copy_ways(
    axes: tuple[Axis, ...],
    elem: int,
    costs: CopyCosts,
    fresh: int,
    bands: int,
    to_out: bool,
    prefer: frozenset[str],
    region: int = 0,
    written: bool = False,
) -> tuple[tuple[float, float], tuple[float, float]]:
    """(plain copy, streamed copy) prices of a copy: the plain one by the copy kernel when it is loaded
    (it runs the plain copies of every plan but a single small copy), else by np.copyto; the streamed
    one writes only into the output (infinite otherwise)."""
    if math.isinf(costs.kernel_rate(1)):
        numpy = numpy_cost(axes, elem, costs, fresh, bands, region)
    else:
        numpy = plain_kernel_cost(axes, elem, costs, bands, region)
    # A copy inside the output (a fan-out, a doubling) or from a temporary reads what the calling
    # thread has just written: on two threads the worker first takes those lines from the other
    # core's cache (1.3 MiB fanned out from a 219 KiB block took 28 us on two threads and on one).
    moved = span(axes, 2, elem) * costs.moved_ns if written else 0.0
    kernel = (
        kernel_cost(axes, elem, costs, fresh, bands, prefer, moved, written, region)
        if to_out
        else (math.inf, math.inf)
    )
    return (numpy[0], numpy[1] + moved), kernel


def numpy_cost(
    axes: tuple[Axis, ...],
    elem: int,
    costs: CopyCosts,
    fresh: int,
    bands: int = 1,
    region: int = 0,
) -> tuple[float, float]:
    """Estimated ns of the copy as ``bands`` np.copyto calls, one thread and two (see step_cost)."""
    w_axes, width = widen(axes, elem)
    total = math.prod(a[0] for a in w_axes) if w_axes else 1
    inner = w_axes[-1][0] if w_axes else 1
    nbytes = bands * total * width
    fixed = bands * (costs.call_ns + fresh * costs.view_ns)
    per = bands * (
        (total // inner) * costs.loop_ns
        + (total * costs.vchunk_ns if width not in (1, 2, 4, 8) else 0.0)
        + (total * costs.strided_ns if w_axes and w_axes[-1][2] not in (0, width) else 0.0)
    )
    dst_span = max(span(w_axes, 1, width), nbytes, region)
    far = source_ns(span(w_axes, 2, width), nbytes, bands, costs)
    run = inner * width if w_axes and w_axes[-1][1] == w_axes[-1][2] == width else width
    rates = [write_ns(run, dst_span, costs, t) for t in (1, 2)]
    if _contiguous_1d(w_axes, width) and nbytes >= costs.stream_min:
        rates[0] = costs.stream_ns  # one large memmove: non-temporal stores, no read for ownership
        if nbytes // 2 >= costs.stream_min:
            rates[1] = costs.stream_ns
    one = fixed + per + nbytes * (rates[0] + far)
    splittable = bands > 1 or (bool(w_axes) and w_axes[0][0] > 1)
    two = costs.handoffs_ns(bands) + fixed + per / 2 + nbytes * (rates[1] + far) if splittable else math.inf
    return one, two


# How far the copy kernel goes to loop over a larger outer axis (see kernel_loops).
SWAP_MAX = 4
SWAP_WIDE = 8
SWAP_RUN = 16
SWAP_SPAN = 256 << 10


def kernel_loops(
    axes: tuple[Axis, ...], elem: int, whole: int | None = None
) -> tuple[int, int, int, bool, bool, int]:
    """(bytes per run, runs, odometer steps, whether the runs are fills, whether they are joined: each
    run of a tight loop starts where the one before it ends, the output vectors of a period of byte
    shuffles when the runs are shuffled, else 0) of the copy kernel over ``axes``, as its plan_loops
    and plan_shuffle decide them (the tests hold the two equal): the innermost axis is one run when
    it is contiguous in the destination and contiguous (a copy) or broadcast (a fill) in the source;
    a short run repeated back to back is a fill of the whole row; the axis outside the runs is a
    tight loop, unless its runs are too few to shuffle and the rows they make are shuffled instead
    (then the axis outside those rows is the tight loop, its items rows of runs: joined means each row
    starts where the one before it ends); when that loop is short, the largest outer axis whose
    destination spans at most SWAP_SPAN takes its place if the runs are SWAP_RUN bytes at most or the
    whole step (``whole`` bytes; by default the copy over ``axes``) writes at most the kernel's
    swap_step, as calibration set it;
    every other axis is an odometer step."""
    shape = [a[0] for a in axes]
    dst = [a[1] for a in axes]
    src = [a[2] for a in axes]
    outer, run, fill, unit = len(axes), elem, False, elem
    if axes and dst[-1] == elem and (src[-1] == elem or (src[-1] == 0 and elem <= 16 and 16 % elem == 0)):
        outer, run, fill = outer - 1, shape[-1] * elem, src[-1] == 0
    if (
        not fill
        and outer > 0
        and src[outer - 1] == 0
        and dst[outer - 1] == run
        and run <= 16
        and 16 % run == 0
    ):
        outer, unit, run, fill = outer - 1, run, run * shape[outer - 1], True
    loop, inner = outer - 1, 1
    vectors = _rows_vectors(shape, dst, src, loop, run, fill, unit)
    if vectors:  # the rows are the tight loop's items
        loop, inner = loop - 1, shape[loop]
    else:
        step = math.prod(shape) * elem if whole is None else whole
        _swap_short_loop(shape, dst, src, loop, run, run <= SWAP_RUN or step <= copy_kernel.swap_step())
        count = shape[loop] if loop >= 0 and dst[loop] == run else 0
        vectors = shuffle_vectors(count, src[loop] if loop >= 0 else 0, run, fill, unit)
    runs = math.prod(shape[:outer])
    joined = loop < 0 or shape[loop] == 1 or dst[loop] == run * inner
    return run, runs, runs // (shape[loop] * inner if loop >= 0 else 1), fill, joined, vectors


def _rows_vectors(
    shape: list[int], dst: list[int], src: list[int], loop: int, run: int, fill: bool, unit: int
) -> int:
    """The output vectors of a period of the shuffles the kernel writes the rows with that its tight
    loop (axis ``loop``: joined runs under 16 bytes, too few to shuffle on their own) makes back to
    back, as items of the axis outside it; 0 when it does not."""
    if loop < 1 or run >= 16 or dst[loop] != run or dst[loop - 1] != shape[loop] * run:
        return 0
    if shuffle_vectors(shape[loop], src[loop], run, fill, unit) or not copy_kernel.shuffles():
        return 0
    return shuffle_vectors(shape[loop - 1], src[loop - 1], run, fill, unit, shape[loop], src[loop])


def _swap_short_loop(
    shape: list[int], dst: list[int], src: list[int], loop: int, run: int, allowed: bool
) -> None:
    """The kernel's swap of a short tight loop (axis ``loop``, of SWAP_MAX runs of ``run`` bytes at
    most, or SWAP_WIDE of runs it moves inline that it would not gather 16 bytes at a time), where
    ``allowed``, with the largest outer axis whose destination spans at most SWAP_SPAN, made in place
    on the three lists."""
    gathered = loop >= 0 and dst[loop] == run and run in (4, 8)
    most = SWAP_WIDE if run <= FEW_RUNS[1] and not gathered else SWAP_MAX
    near = [i for i in range(loop) if abs(dst[i]) * shape[i] <= SWAP_SPAN] if loop >= 1 else []
    if allowed and near and shape[loop] <= most:
        k = max(near, key=lambda i: shape[i])
        if shape[k] >= 4 * shape[loop]:
            for values in (shape, dst, src):
                values[k], values[loop] = values[loop], values[k]


# The kernel's: at most this many output vectors before the pattern repeats, 8 for runs of 8 bytes or
# more, and at least this many periods in a copy.
SHUFFLE_PERIOD = 32
SHUFFLE_MIN_PERIODS = 16


def shuffle_vectors(
    count: int, s_step: int, run: int, fill: bool, unit: int, inner: int = 1, s_inner: int = 0
) -> int:
    """The output vectors of a period of the kernel's byte shuffles for ``count`` items ``s_step``
    apart in the source, joined in the destination, each ``inner`` runs of ``run`` bytes (``s_inner``
    apart in the source; a fill's element: ``unit`` bytes), as its plan_shuffle decides: runs under 16
    bytes whose 16 output bytes each come from under 32 source bytes, and enough of them; 0 when not
    shuffled."""
    apart, item = (s_inner if inner > 1 else s_step), inner * run
    if run >= 16 or not 0 <= apart < 32 or s_step < 0:
        return 0
    if not fill and apart == run and (inner == 1 or s_step == item):  # one plain copy
        return 0
    vectors = item // min(16, item & -item)
    too_few = count * item < SHUFFLE_MIN_PERIODS * 16 * vectors
    if vectors > (SHUFFLE_PERIOD if run < 8 else SHUFFLE_PERIOD // 4) or too_few:
        return 0
    r = t = reach = 0
    mod = unit - 1 if fill else 31
    for _ in range(vectors):
        sources = []
        for _ in range(16):
            sources.append(r // inner * s_step + r % inner * s_inner + (t & mod))
            t += 1
            if t == run:
                t, r = 0, r + 1
        lo, hi = min(sources), max(sources)
        if hi - lo >= 32:
            return 0
        reach = max(reach, lo + (32 if hi - lo >= 16 else 16))
    # As many periods must keep their loads within the items' source bytes.
    read = (inner - 1) * s_inner + (unit if fill else run)
    last, per = (count - 1) * s_step + read - reach, r // inner
    periods = count // per if last >= 0 else 0
    if s_step > 0:
        periods = min(periods, last // (per * s_step) + 1)
    return vectors if periods >= SHUFFLE_MIN_PERIODS else 0


# Runs of this many bytes in a tight loop of at most FEW_COUNT of them are copied by the kernel's
# odometer itself (its FEW_MIN, FEW_MAX, FEW_COUNT), unless they go through its streaming buffer.
FEW_RUNS = (8, 64)
FEW_COUNT = 4


def few_runs(run: int, runs: int, steps: int, fill: bool, vectors: int) -> bool:
    """Whether the copy kernel moves the runs of its tight loop (kernel_loops' figures) in its
    odometer, two overlapping moves each: FEW_COUNT at most per step, of FEW_RUNS bytes, neither fills
    nor byte shuffles."""
    shuffled = bool(vectors) and copy_kernel.shuffles()
    return not (fill or shuffled) and FEW_RUNS[0] <= run <= FEW_RUNS[1] and runs <= FEW_COUNT * steps


def kernel_work_ns(
    axes: tuple[Axis, ...], elem: int, costs: CopyCosts, whole: int | None = None
) -> tuple[float, int, int]:
    """(ns, bytes, bytes per run) of the copy kernel's work over ``axes`` besides the bytes' rate: its
    odometer's steps and its runs (a fill of a short row costs more than a copy of one: its element is loaded
    per run), or, where it shuffles short runs, 16 output bytes at a time (rows of 12 bytes from one
    float16 pair, 41 MiB: priced as 3.5 million fills, one copy lost to a temporary that took twice
    as long). A step over a few short runs (few_runs) costs about one short run more than its runs: 53
    MiB of 56-byte rows each written twice took 2.9 ms that way, 2.5 as one loop of 112-byte runs.
    Streamed through the kernel's buffer, such steps have a calibrated cost of their own
    (kernel_cost)."""
    run, runs, steps, fill, _, shuffled = kernel_loops(axes, elem, whole)
    if shuffled and copy_kernel.shuffles():  # 16 output bytes at a time, whatever the runs
        return steps * costs.kernel_step_ns + runs * run / 16 * costs.kernel_shuffle_ns, run * runs, run
    few = few_runs(run, runs, steps, fill, shuffled)
    step_ns = costs.kernel_loop_ns if few else costs.kernel_step_ns
    if fill:
        per_run = costs.kernel_fill_ns
    elif run in (1, 2, 4, 8, 16):  # one move each
        per_run = costs.kernel_move_ns
    elif run < 64 or run in (64, 128, 256):  # two overlapping moves, or a fixed-size copy
        per_run = costs.kernel_loop_ns
    else:  # 32-byte moves (AVX) or a call of memcpy: priced alike, as calibrated on runs of 72 bytes
        per_run = costs.kernel_copy_ns
    return steps * step_ns + runs * per_run, run * runs, run


def plain_kernel_cost(
    axes: tuple[Axis, ...], elem: int, costs: CopyCosts, bands: int = 1, region: int = 0
) -> tuple[float, float]:
    """Estimated ns of the copy by the copy kernel with ordinary stores, one thread and two, as the
    plan runner gives it (the element np.copyto would use; on two threads as kernel calls on pieces):
    a cost per odometer step and per run, and the bytes at the rate of where the destination lives.
    No call cost on one thread: a one-thread plan is one kernel call, priced once per plan."""
    w_axes, width = widen(axes, elem)
    work, nbytes, run = kernel_work_ns(w_axes, width, costs)
    per, nbytes = bands * (work + costs.kernel_setup_ns), bands * nbytes
    dst_span = max(span(w_axes, 1, width), nbytes, region)
    far = source_ns(span(w_axes, 2, width), nbytes, bands, costs)
    one = per + nbytes * (write_ns(run, dst_span, costs) + far)
    if not (bands > 1 or (bool(w_axes) and w_axes[0][0] > 1)):
        return one, math.inf
    if costs.shares_in_kernel:  # one call: the pieces are taken inside the kernel
        calls = 0.0
        per = bands * (
            pieces_work_ns(w_axes, width, costs, share_pieces(nbytes // bands)) + costs.kernel_setup_ns
        )
    else:  # a kernel call per piece, as the plan runner cuts them
        calls = max(bands, min(SHARE_PIECES, bands * w_axes[0][0])) * costs.kernel_call_ns / 2
    rate = write_ns(run, dst_span, costs, 2)
    return one, costs.handoffs_ns(bands) + calls + per / 2 + nbytes * (rate + far)


def pieces_work_ns(axes: tuple[Axis, ...], elem: int, costs: CopyCosts, pieces: int) -> float:
    """kernel_work_ns of a copy cut into ``pieces`` along its outermost axis, as the kernel shares a
    step: each piece plans its own loops, and a piece too short in the axis the whole copy would loop
    over runs a short loop under more odometer steps (720 runs of 72 bytes on (12, 6, 5, 2) axes, the
    12 looped over: 2.2 us on one thread, 3.1-3.6 cut in two, each piece's loop of 2 runs)."""
    if not axes or pieces > axes[0][0]:  # cut across more axes: priced as the whole copy's work
        return kernel_work_ns(axes, elem, costs)[0]
    size, dst_stride, src_stride = axes[0]
    piece = ((-(-size // pieces), dst_stride, src_stride),) + axes[1:]
    return pieces * kernel_work_ns(piece, elem, costs, math.prod(a[0] for a in axes) * elem)[0]


def streamed_route(run: int, fill: bool, joined: bool, vectors: int) -> str:
    """How the copy kernel streams runs of ``run`` bytes (kernel_loops' other figures): "buffer" when
    they go out through its buffer (joined and shorter than BOUNCE_RUN, unless "lines"), "lines" when
    joined copies of LINE_RUN_MIN bytes or more have their whole lines streamed straight from the
    source, "runs" when each run is streamed on its own."""
    if not joined or run >= BOUNCE_RUN:
        return "runs"
    return "lines" if run >= LINE_RUN_MIN and not (fill or vectors) else "buffer"


def kernel_cost(
    axes: tuple[Axis, ...],
    elem: int,
    costs: CopyCosts,
    fresh: int,
    bands: int = 1,
    prefer: frozenset[str] = frozenset(),
    moved: float = 0.0,
    own_source: bool = False,
    region: int = 0,
) -> tuple[float, float]:
    """Estimated ns of the copy by the copy kernel (one thread, two), infinite when it is not loaded,
    its runs are too short for whole streamed lines and do not join into longer ones, or the output
    fits in the measured last level (for two threads, in the last level as two threads meet it);
    ``moved``: what two threads pay first to take the source from the calling thread's cache (see
    copy_ways); ``own_source``: the source is what the plan itself wrote (a block of the output or a
    temporary); ``region``: as for step_cost, what fits in the last level being the whole region.
    ``prefer`` with "stream" makes it near free.

    Streaming stores send every line to memory, past the cache. An output that fits in the last level
    is, with ordinary stores, written there and read from there by whatever consumes it; streamed, it
    goes to memory and its reader fetches it back from there. Measured here: one thread streams at the
    same 0.044 ns/B into 4 MiB as into 256 MiB, ordinary stores into 4-32 MiB take 0.034; on the
    sweep, outputs of 4-64 MiB streamed on two threads took 1.2-1.4x onnxruntime's one-thread stores."""
    rate = costs.kernel_rate(1)
    if math.isinf(rate) or not axes:
        return math.inf, math.inf
    merged, width = fill_element(simplify(axes), elem)
    run, runs, steps, fill, joined, vectors = kernel_loops(merged, width)
    route = streamed_route(run, fill, joined, vectors)
    if run < KERNEL_MIN_RUN and not joined and "stream" not in prefer:
        return math.inf, math.inf
    nbytes = bands * runs * run
    spanned = max(nbytes, region)
    if spanned <= costs.llc_bytes and "stream" not in prefer:  # fits either way (two_thread_llc >= it)
        return math.inf, math.inf
    fixed = bands * costs.kernel_call_ns + fresh * costs.view_ns
    # Streamed writes go to memory, and reads from the last level overlap them: a 70 MiB Tile from a
    # 17 MiB source streamed in 1.7 ms on two threads, the rate of writes alone. A source byte is read
    # from wherever the source lives once whatever the plan; it is read from memory again only when
    # the source read in between is past the last level. 117 rows of 342 KiB each repeated twice in
    # place (a 40 MiB source, a 32 MiB last level) streamed in 2.4 ms as one copy, read once; priced
    # by the whole source's span, it was cut into 13 bands that took 2.7. What the plan wrote itself is
    # read back on top of that, from wherever it went: a doubling's last steps, each copying 36-72 MiB
    # it had just written, were priced as free reads and chosen over a fan-out that took 0.8x as long.
    src_span = span(merged, 2, width) if own_source else reread_span(merged, width)
    near = source_ns(src_span, nbytes, bands, costs) if src_span > costs.llc_bytes else 0.0
    far = [near + costs.memory_src_ns(src_span, t) for t in (1, 2)]
    streamed = [nbytes * (costs.kernel_rate(t) + far[t - 1]) for t in (1, 2)]
    if route == "buffer" and few_runs(run, runs, steps, fill, vectors):
        # A few short runs per step are moved into the buffer as plain copies move them; what their
        # steps cost beyond the streaming is timed as such (on two threads, each half of the steps,
        # overlapping the other's streaming). 64 MiB of 32-byte rows each written twice, streamed,
        # took 6.0-6.3 ms on one thread and 3.1-3.9 on two: priced as odometer steps and runs under
        # the buffer's figures, 8.3 and 4.0 ms; so, 6.0 and 3.0.
        all_steps = bands * steps
        per = [all_steps * costs.kernel_few_ns + streamed[0], all_steps * costs.kernel_few2_ns + streamed[1]]
    elif route == "buffer":
        # Joined short runs are written with ordinary stores into a buffer in L1, as plain runs are,
        # and their bytes pay for going out through it: on two threads less than half of what one
        # pays, since it overlaps the other thread's streaming (its own figure). Writing the runs
        # into that buffer (their moves, fills or shuffles, timed in cache) overlaps the stores
        # draining to memory, and only what exceeds them costs: 137 MiB of 32-byte fills streamed
        # on two threads in 5.5 ms, the rate of the streaming alone, priced 9.1 ms as their sum.
        work = bands * kernel_work_ns(merged, width, costs)[0]
        bounce = [nbytes * costs.kernel_bounce_ns, nbytes * costs.kernel_bounce2_ns]
        per = [bounce[0] + max(work, streamed[0]), bounce[1] + max(work / 2, streamed[1])]
    else:  # each run's own cost is what streamed runs measured over long ones: on top of the bytes
        work = bands * runs * (costs.kernel_line_ns if route == "lines" else costs.kernel_run_ns)
        per = [work + streamed[0], work / 2 + streamed[1]]
    one = fixed + per[0]
    splittable = bands > 1 or (bool(merged) and merged[0][0] > 1)
    two = costs.handoffs_ns(bands) + moved + fixed + per[1] if splittable else math.inf
    if splittable and nbytes >= STREAM_SHARE_MIN and costs.kernel_rate(2) <= 1.1 * costs.kernel_rate(1):
        # A tie (within 10%: calibration noise) goes to two threads. On the project's VM two threads
        # streaming into 64 or 256 MiB are no faster than one, but into 1 GiB 1.9x faster (fill alike):
        # the 64 MiB calibration cannot see that, and pieces shared through a counter cost a busy
        # second core one piece at most. On the EPYC VM two threads meet its spells of a fast memory
        # rate, which its typical figures leave out: a 63 MiB Tile streamed in 1.24 ms on two threads
        # at best, 2.34 on one.
        two = min(two, two_thread_bound(one, costs) * 0.999)
    if "stream" in prefer:
        return one * 1e-9, two * 1e-9
    return one, (two if spanned > costs.two_thread_llc else math.inf)


def program_cost(axes: tuple[Axis, ...], elem: int, costs: CopyCosts) -> float:
    """Estimated ns of a one-step plan run as one call of the copy kernel (ordinary stores, one thread):
    its call, a move per run (short runs are constant-size moves, not NumPy's loop of memmoves or
    elements), a step of its odometer per loop of runs, and the bytes; infinite when the kernel is not
    loaded."""
    if math.isinf(costs.kernel_rate(1)) or not axes:
        return math.inf
    return costs.kernel_call_ns + plain_kernel_cost(axes, elem, costs)[0]


def gather_cost(
    axes: tuple[Axis, ...], elem: int, costs: CopyCosts, fresh: int, region: int = 0
) -> tuple[float, float]:
    """Estimated ns of a gather over ``axes`` on one thread and split over two (see step_cost)."""
    chunk = axes[-1][0] * elem
    count = math.prod(a[0] for a in axes[:-1])
    nbytes = count * chunk
    fixed = costs.call_ns + fresh * costs.view_ns
    per = count * costs.gather_ns
    dst_span = max(nbytes, region)
    far = costs.src_ns(span(axes, 2, elem), nbytes)
    rates = [write_ns(chunk, dst_span, costs, t) for t in (1, 2)]
    one = fixed + per + nbytes * (rates[0] + far)
    two = costs.handoff_ns + fixed + per / 2 + nbytes * (rates[1] + far) if count > 1 else math.inf
    return one, two


def source_ns(src_span: int, nbytes: int, bands: int, costs: CopyCosts) -> float:
    """Extra per-byte cost of reading the source: a band's source that fits in an L2 block is read
    there by every copy of it after the first, a larger one as a copy's source is (costs.src_ns)."""
    return 0.0 if bands > 1 and src_span <= costs.block_bytes else costs.src_ns(src_span, nbytes)


def _contiguous_1d(w_axes, width: int) -> bool:
    return len(w_axes) == 1 and w_axes[0][1] == w_axes[0][2] == width
