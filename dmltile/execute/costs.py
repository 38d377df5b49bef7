"""The copy cost model behind the planner: its figures, measured on this machine at first use and cached.

A plan is a few ``np.copyto`` calls on strided views. What one call costs is a fixed part (the call
and any view built per call), a part per inner loop of NumPy's iteration and per opaque ``V<n>``
element (one memmove each), and a part per byte written, whose rate depends on where the
destination lives (L2, the last-level cache or memory), on whether the source stays in cache, and
on how many threads write. Calibration measures all of those in well under a second and stores them in
a small JSON file under the user's cache directory (``DMLTILE_CACHE_DIR`` overrides it; when it
cannot be written the measurement serves the process). When calibration fails, or with
``DMLTILE_CALIBRATE=0``, fixed constants measured on the project's bench machine stand in.

When the compiled copy kernel is loaded (``copy_kernel``), calibration also measures its call
cost, the set-up of each step, its cost per streamed run, per run with ordinary stores (of one move,
two, or a call of memcpy) and per short fill, per step of its odometer, and its streaming write rate
on one and two threads; two threads are then measured through the kernel's worker where it has one.
Without the kernel its rates are infinite, so the planner never chooses it.

Not calibrated (it would take a copy of a few hundred MiB): the size from which the C library's
memmove switches to non-temporal stores (glibc 2.36 here: 192 MiB, 3/4 of what it takes for the
shared cache), and their speed relative to ordinary stores; both are fixed below.

The cache sizes come from ``machine``, lowered to where this machine's copy rate is measured to
change (``measured_caches``), the core count from ``machine`` (``DMLTILE_MACHINE`` fakes both); what
a copy costs under these figures is priced in ``pricing``.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import sys
import threading
import time
from dataclasses import asdict, dataclass, fields, replace
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from . import copy_kernel
from .machine import Machine, cpu_model, this_machine

FORMAT = 49


@dataclass(frozen=True)
class CopyCosts:
    """Nanoseconds per unit of work of one ``np.copyto``; rates are per byte written."""

    call_ns: float = 420.0  # np.copyto on views built once
    view_ns: float = 400.0  # building one strided view of the caller's array, per call
    loop_ns: float = 2.5  # per inner loop of NumPy's iteration (outer index step)
    vchunk_ns: float = 1.4  # per opaque V<n> element (a memmove each)
    strided_ns: float = 0.25  # per element of an inner loop that is not contiguous in both views
    gather_ns: float = 1.0  # per chunk of np.take(mode="clip") into a given array
    # memmove's time for 64 KiB with the destination 16 bytes (mod 64) past the source over its time
    # with both on 64-byte boundaries (movsb_cliff)
    misaligned_ratio: float = 10.0
    l2_bytes: int = 512 << 10  # per-core L2: source blocks are sized to it
    llc_bytes: int = 32 << 20  # last-level cache
    llc2_bytes: int = 0  # the last level as both threads writing meet it (0: not measured, as one thread)
    byte_l2_ns: float = 0.012  # destination within L2, source in cache
    byte_llc_ns: float = 0.030  # destination a quarter of the last-level cache
    byte_mem_ns: float = 0.085  # destination far beyond the cache, source in L2
    byte_llc2_ns: float = 0.030  # the same two with both threads writing (time per byte of the whole copy)
    byte_mem2_ns: float = 0.052
    byte_far2_ns: float = 0.0  # both threads writing twice their own last level (0: not measured)
    byte_near2_ns: float = 0.030  # both threads writing a destination of twice L2 (each half fits one L2)
    byte_small2_ns: float = 0.030  # both threads writing a destination of half of L2
    far_src_ns: float = 0.034  # extra per byte when the source does not stay in L2
    # what runs of SHORT_RUN bytes take beyond long ones, over long ones' time, both written past the
    # last level (where byte_mem_ns is timed)
    short_run_ratio: float = 0.0
    mem_src_ns: float = 0.015  # extra per byte when the source lives in memory, past the last level
    mem_src2_ns: float = 0.005  # the same with both threads copying (time per byte of the whole copy)
    moved_ns: float = 0.034  # per byte the calling thread just wrote that a second thread reads first
    thread_ns: float = 25000.0  # handing half a copy to a Python thread and waiting for it
    share_ns: float = 1000.0  # what sharing a step with the copy kernel's own worker adds, worker awake
    kernel_shares: bool = False  # whether the figures for two threads were measured with that worker
    stream_min: int = 192 << 20  # memmove streams (non-temporal stores) from this size: not calibrated
    stream_ratio: float = 0.85  # its per-byte time relative to byte_mem_ns: not calibrated either
    kernel_call_ns: float = 200.0  # one call of the copy kernel through ctypes (its views built once)
    kernel_run_ns: float = 4.0  # per contiguous run it copies or fills
    kernel_setup_ns: float = 20.0  # per step of a plan it runs (setting up the step's loops)
    kernel_loop_ns: float = 0.6  # per short run of a plan it runs with ordinary stores (a 12-byte row)
    kernel_step_ns: float = 4.0  # per step of its odometer (each loop of runs over the axes outside them)
    kernel_fill_ns: float = 1.0  # per short fill (a row of one int32 repeated 3 times) of such a plan
    kernel_shuffle_ns: float = 0.4  # per 16 output bytes of short runs it writes as byte shuffles
    kernel_move_ns: float = 0.3  # per run of 1, 2, 4, 8 or 16 bytes (one move each) of such a plan
    kernel_copy_ns: float = 2.0  # per run longer than 64 bytes (but 128 and 256): AVX moves, or memcpy
    kernel_byte_ns: float = 0.047  # per byte written with streaming stores, one thread
    kernel_byte2_ns: float = 0.028  # the same with both threads (time per byte of the whole copy)
    kernel_bounce_ns: float = 0.03  # extra per byte of short joined runs streamed through its buffer
    kernel_bounce2_ns: float = 0.01  # the same with both threads (time per byte of the whole copy)
    kernel_line_ns: float = 0.5  # per joined run it copies line by line (pricing.LINE_RUN_MIN bytes on)
    kernel_few_ns: float = 4.0  # per odometer step of a few short runs streamed through its buffer
    kernel_few2_ns: float = 1.0  # the same with both threads (time per step of the whole copy)
    # The kernel's runs of 2880 bytes into 8 MiB, each a call of memcpy, over the same with its own
    # aligned 32-byte moves (long_avx)
    long_avx_ratio: float = 1.0
    # Runs of twice L2 written past the last level, each a call of memcpy, over the same with rep movsb
    # (big_movsb)
    big_movsb_ratio: float = 1.0
    # The largest step (bytes written) in which the kernel loops over a larger outer axis in place of a
    # short tight loop of runs longer than 16 bytes: the largest output measured faster that way
    swap_bytes: int = 1 << 20
    kernel_calibrated: bool = False  # whether the kernel_* numbers were measured (the kernel was loaded)
    calibrated: bool = False

    def kernel_rate(self, threads: int) -> float:
        """Per-byte time of the copy kernel (infinite when it is not loaded in this process)."""
        if not copy_kernel.available():
            return math.inf
        return self.kernel_byte2_ns if threads > 1 else self.kernel_byte_ns

    def byte_ns(self, dst_bytes: int, threads: int = 1) -> float:
        """Per-byte write rate for a destination spanning ``dst_bytes``, interpolated on log size."""
        llc, mem = (
            (self.byte_llc2_ns, self.byte_mem2_ns) if threads > 1 else (self.byte_llc_ns, self.byte_mem_ns)
        )
        edge = self.two_thread_llc if threads > 1 else self.llc_bytes
        near = (
            # Past L2 one thread writes at the last level's rate (where calibration found L2's edge):
            # a 5.7 MiB copy from a block in L2 took 239 us, 0.040 ns/B, where a line from L2's point
            # to the last level's at 16 MiB priced it 0.028.
            ((self.l2_bytes // 2, self.byte_l2_ns), (min(2 * self.l2_bytes, self.llc_bytes // 4), llc))
            if threads == 1
            else (
                (self.l2_bytes // 2, self.byte_small2_ns),
                (min(2 * self.l2_bytes, self.llc_bytes // 4), self.byte_near2_ns),
            )
        )
        measured_far = threads > 1 and self.llc2_bytes > 0 and self.byte_far2_ns > 0
        far = ((2 * edge, min(self.byte_far2_ns, mem)),) if measured_far else ()
        points: list[tuple[int, float]] = []
        for point in (
            *near,
            (self.llc_bytes // 4, llc),
            (edge, llc),  # the measured last level holds its rate up to its size
            # and, for one thread, no further: an output larger than the last level does not stay
            # there between two calls (the work between them evicts it), so its lines are read from
            # memory. In the sweep a 74 MiB output (last level 64 MiB) took 3.5-7.5 ms with ordinary
            # stores on two threads, the memory rate, where calibration's back-to-back rewrites
            # suggest 1.6. Where two threads' own edge was measured, their rate rises past it over
            # two doublings, how fast changing with what else the host's cache holds (an EPYC VM with
            # a 16 MiB edge, 0.012 ns/B into 16 MiB: one day 0.025 into 24 and 0.039 into 32, another
            # 0.016 into 19.5, 0.025 into 41, 0.030 into 50 and 0.036 into 100), through the rate
            # measured at twice the edge where there is one (on a Zen 5 EPYC, whose 32 MiB edge was
            # followed by memory's rate at 64 MiB, outputs of 68-84 MiB priced on the two doublings
            # went to ordinary stores on two threads and took 1.15-1.5x the fill's time).
            *far,
            (4 * edge if threads > 1 and self.llc2_bytes else edge + 1, mem),
        ):
            if not points or point[0] > points[-1][0]:  # a small last level can come before L2's points
                points.append(point)
        if dst_bytes <= points[0][0]:
            return points[0][1]
        for (s0, r0), (s1, r1) in pairwise(points):
            if dst_bytes <= s1:
                f = math.log(dst_bytes / s0) / math.log(s1 / s0)
                return r0 + f * (r1 - r0)
        return mem

    def src_ns(self, src_bytes: int, dst_bytes: int) -> float:
        """Extra per-byte cost of a source spanning ``src_bytes`` while ``dst_bytes`` are written: none
        while it stays in half of L2, else rising (on log size) to ``far_src_ns`` for a source of twice
        L2's size, which is read from the last level or memory (measured: a copy whose source is 4 MiB or
        more costs twice one from a 16 KiB row, 0.068 against 0.034 ns per byte, both in the last level)."""
        lo = self.l2_bytes // 2
        if src_bytes <= lo or dst_bytes <= 0:
            return 0.0
        return self.far_src_ns * min(1.0, math.log(src_bytes / lo) / math.log(4))

    def memory_src_ns(self, src_bytes: int, threads: int = 1) -> float:
        """What a streamed copy's source past the last level (as ``threads`` meet it) adds per byte to
        src_ns: read from memory, it rises over the doubling past the edge to ``mem_src_ns`` (two
        threads: ``mem_src2_ns``), less what src_ns already charges. On an EPYC VM whose last level
        reads cost nothing over L2's, a doubling plan's last steps, each reading 36-72 MiB back from
        memory, were priced as free reads and chosen over a fan-out that took 0.8x their time."""
        edge = self.two_thread_llc if threads > 1 else self.llc_bytes
        if src_bytes <= edge:
            return 0.0
        extra = max(0.0, (self.mem_src2_ns if threads > 1 else self.mem_src_ns) - self.far_src_ns)
        return extra * min(1.0, math.log(src_bytes / edge) / math.log(2))

    @property
    def two_thread_llc(self) -> int:
        """The output size up to which two threads write at the last level's rate. It can exceed one
        thread's: the two cores of a VM can sit under two last levels (on an EPYC VM reporting one of
        32 MiB, one thread rewrote 8 MiB at 0.02 ns/B and 16 MiB at 0.05, two threads 16 MiB at 0.012
        and 32 MiB at 0.039, the rate of streaming it to memory)."""
        return max(self.llc_bytes, self.llc2_bytes)

    @property
    def shares_in_kernel(self) -> bool:
        """Whether two-thread copies run in the copy kernel with its own worker thread (this process
        has such a kernel, and the two-thread figures were measured with it)."""
        return self.kernel_shares and copy_kernel.has_worker()

    @property
    def handoff_ns(self) -> float:
        """What using the second thread adds to a copy. With the kernel's worker: posting the step and
        waiting for the worker's last piece, measured with the worker awake (it spins a while after
        each step; asleep, it joins late and the calling thread copies more: never much worse than
        one thread). Else half the wake-up round trip of a Python thread, since the calling thread
        copies pieces from the start and the worker takes the rest when it wakes (a worker that wakes
        after the last piece is cancelled, not waited for)."""
        return self.share_ns if self.shares_in_kernel else self.thread_ns / 2

    def handoffs_ns(self, bands: int) -> float:
        """What the second thread adds to a copy made as ``bands`` calls: the kernel's worker is handed
        each band (a step of the program) on its own, a Python thread all of a phase's copies at once.
        A 70 MiB output in 293 bands of 5 rows took 2.2 ms on two threads, in 5 bands 1.7 ms."""
        return self.handoff_ns * (bands if self.shares_in_kernel else 1)

    @property
    def runner_work_ns(self) -> float:
        """The plan runner's own work per call, besides its copies and the kernel's call: its checks
        and the addresses it passes cost about what building one view does."""
        return self.view_ns

    @property
    def stream_ns(self) -> float:
        """Per-byte time of a memmove large enough to use non-temporal stores."""
        return self.byte_mem_ns * self.stream_ratio

    @property
    def movsb_cliff(self) -> bool:
        """Whether glibc's memmove, from 2112 bytes up to L2's size (rep movsb), is so much slower with
        the destination 1-31 bytes (mod 64) past the source that copies steer clear of it: about 10x
        on the AMD machines where it was found, 1.1-1.3x on a later EPYC. Where it is not, steering
        clear costs: the copy kernel's own store loop took twice memcpy's time there for runs written
        past L2 (a 2 MiB Tile of 137 KiB blocks, 38 against 21 us)."""
        return self.misaligned_ratio > MOVSB_CLIFF

    @property
    def long_avx(self) -> bool:
        """Whether the copy kernel moves runs of 512 bytes to 8 KiB with 32-byte moves of its own: where
        they were measured faster than memcpy's (on a Zen 5 EPYC, 1.3-1.9x for runs of 960-4096 bytes
        written past L2)."""
        return self.long_avx_ratio > MOVES_GAIN

    @property
    def big_movsb(self) -> bool:
        """Whether the copy kernel moves runs past 8 KiB with rep movsb itself: where that was measured
        faster than memcpy, whose loop of vector stores past L2 on AMD CPUs took 1.1-2.1x as long on a
        Zen 5 EPYC for runs of 1.8-2 MiB written into 38-256 MiB."""
        return self.big_movsb_ratio > MOVES_GAIN

    @property
    def block_bytes(self) -> int:
        """The source block a banded copy reads per call: L2's size. Not less: glibc's memmove copies
        sizes from 2112 bytes up to L2's size with ``rep movsb`` on AMD, which is ~10x slower when the
        destination sits 8-24 bytes (mod 64) past the source (bench/README.md), so band chunks stay above it."""
        return max(4096, self.l2_bytes)


MOVSB_CLIFF = 2.0  # a misaligned_ratio past this is a slow case worth the detours around it
# A ratio of memcpy's time to the kernel's own moves (long_avx_ratio, big_movsb_ratio) past this takes
# them (less is a tie)
MOVES_GAIN = 1.05
DEFAULT = CopyCosts()
_lock = threading.Lock()
_costs: CopyCosts | None = None


def cache_file(machine: Machine | None = None) -> Path:
    """Where the calibration is stored: $DMLTILE_CACHE_DIR, else the platform's user cache dir; a
    run with faked figures keeps its own file, so it never replaces the real machine's."""
    machine = machine or this_machine()
    if os.environ.get("DMLTILE_CACHE_DIR"):
        base = Path(os.environ["DMLTILE_CACHE_DIR"])
    elif sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local")) / "dmltile"
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches" / "dmltile"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dmltile"
    fake = machine.fake.replace("=", "").replace(",", "-")
    return base / (f"copy-costs-{fake}.json" if fake else "copy-costs.json")


def fingerprint(machine: Machine | None = None) -> dict:
    """What the measurements depend on: recalibrate when any of it changes (faked figures included)."""
    machine = machine or this_machine()
    return {
        "format": FORMAT,
        "machine": platform.machine(),
        "processor": cpu_model(),
        "cpus": machine.cpus,
        "numpy": np.__version__,
        "python": platform.python_version(),
    } | ({"fake": machine.fake} if machine.fake else {})


def machine_costs() -> CopyCosts:
    """The calibrated costs of this machine: from the cache file, else measured now (and stored)."""
    global _costs
    with _lock:
        if _costs is None:
            _costs = _load_or_calibrate(this_machine())
            copy_kernel.movsb_cliff(_costs.movsb_cliff)
            copy_kernel.long_avx(_costs.long_avx)
            copy_kernel.swap_step(_costs.swap_bytes)
            copy_kernel.big_movsb(_costs.big_movsb)
        return _costs


def _load_or_calibrate(machine: Machine) -> CopyCosts:
    if os.environ.get("DMLTILE_CALIBRATE", "1") == "0":
        return _fallback(machine)
    path = cache_file(machine)
    try:
        doc = json.loads(path.read_text())
        if doc.get("fingerprint") == fingerprint(machine):
            known = {f.name for f in fields(CopyCosts)}
            cached = replace(DEFAULT, **{k: v for k, v in doc["costs"].items() if k in known})
            if cached.kernel_calibrated or not copy_kernel.available():
                return cached  # else the kernel was built since: measure again, with it
    except (OSError, ValueError, TypeError, KeyError):
        pass
    try:
        reported = machine.llc_bytes
        if not machine.fake:  # faked figures are the test's to set; the real ones are measured
            machine = measured_caches(machine)
        costs = calibrate(machine=machine, mem_bytes=memory_bytes(reported, machine.llc_bytes))
    except (MemoryError, OSError, RuntimeError):
        return _fallback(machine)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"fingerprint": fingerprint(machine), "costs": asdict(costs)}, indent=1))
        os.replace(tmp, path)
    except OSError:  # a read-only home or a full disk: keep the measurement for this process only
        tmp.unlink(missing_ok=True)
    return costs


def _fallback(machine: Machine) -> CopyCosts:
    """The bench machine's constants, for a run that does not measure; faked cache sizes still apply."""
    return (
        replace(DEFAULT, l2_bytes=machine.l2_bytes, llc_bytes=machine.llc_bytes) if machine.fake else DEFAULT
    )


SHORT_RUN = 960  # the run length short_run_ratio is timed on
MEM_MAX = 256 << 20  # the largest buffer calibration writes: beyond the last level of most machines
SLOWER = 1.25  # a rate this much slower than the level below it marks a level's edge


def measured_caches(machine: Machine) -> Machine:
    """``machine`` with the L2 and last-level sizes where this machine's write rate actually changes.

    The operating system's figures can be wrong for what a copy meets: a VM may report its host's
    whole last level (480 MiB here, where a copy slows down past 64 MiB). So copies from a block in L1
    are timed into destinations of doubling size (64 KiB up to twice the reported last level, at most
    MEM_MAX; a running median of three smooths out a noisy point, and each size's time is the least
    of a few passes over all of them). L2 ends at twice the last size written at the rate of the
    smallest sizes, which holds while within SLOWER of theirs (the model's L2 point is half of L2); the
    last level ends at the last size written at the rate of the sizes just past L2, which holds while
    nearer to theirs than to the largest size's (_far_edge). A first change far past the L2 reported
    is the last level's, L2's staying as reported. Neither exceeds what the operating system reports,
    and without a visible change the reported figure stands.
    """
    top = max(16 << 20, min(MEM_MAX, 2 * machine.llc_bytes))
    dst = np.empty(top, np.uint8)
    dst.fill(1)
    src = np.arange(16 << 10, dtype=np.uint64).view(np.uint8)[: 16 << 10]
    sizes = [64 << 10]
    while sizes[-1] * 2 <= top:
        sizes.append(sizes[-1] * 2)
    raw = [math.inf] * len(sizes)
    for _ in range(CALIBRATION_RUNS):  # the least of a few passes over all sizes (see CALIBRATION_RUNS)
        for i, size in enumerate(sizes):
            d = dst[:size].reshape(-1, src.size)
            calls = max(1, (4 << 20) // size)
            t = _best(lambda d=d: np.copyto(d, src), calls, 5 if size < 16 << 20 else 3) / calls / size
            raw[i] = min(raw[i], t)
    return cache_points(sizes, raw, machine)


def cache_points(sizes: list[int], raw: list[float], machine: Machine) -> Machine:
    """``machine`` with L2 and the last level where a curve of write rates (time per byte into
    destinations of doubling ``sizes``) changes, as ``measured_caches`` describes."""
    rates = [
        sorted(raw[max(0, i - 1) : i + 2])[len(raw[max(0, i - 1) : i + 2]) // 2] for i in range(len(raw))
    ]
    l2_at, l2_ends = _edge(rates, 0)
    if l2_ends and sizes[l2_at] > 2 * machine.l2_bytes:
        # The first change comes far past the L2 reported, so it is the last level's (an EPYC VM
        # with 1 MiB of L2: 0.017-0.02 ns/B from 256 KiB to 8 MiB, 0.045 into 16 MiB).
        llc_at, llc_ends = _far_edge(rates, 0)
        l2_ends = False
    elif l2_ends and l2_at + 2 < len(sizes):
        llc_at, llc_ends = _far_edge(rates, l2_at + 2)
    else:
        llc_at, llc_ends = 0, False
    l2 = min(machine.l2_bytes, 2 * sizes[l2_at]) if l2_ends else machine.l2_bytes
    llc = min(machine.llc_bytes, sizes[llc_at]) if llc_ends else machine.llc_bytes
    return replace(machine, l2_bytes=l2, llc_bytes=max(l2, llc))


def _far_edge(rates: list[float], start: int) -> tuple[int, bool]:
    """As _edge for the last level, whose rate is "the same" while nearer, on log scale, to its level
    than to the rate of the largest size (in memory), once that is slower by SLOWER at least. Timed
    on a VM with busy neighbours, the last level's rates wandered by 1.3x from one size to the next
    (0.0175 to 0.026 ns/B between 256 KiB and 8 MiB), where memory's was 0.08: a step of SLOWER put
    the edge at 2 or 4 MiB in one calibration and at 8 in the next."""
    level = min(rates[start : start + 3])
    far = rates[-1]
    if far <= SLOWER * level:
        return len(rates) - 1, False
    middle = math.sqrt(level * far)
    for i in range(rates.index(level, start), len(rates)):
        if rates[i] > middle:
            return max(start, i - 1), True
    return len(rates) - 1, False


def _edge(rates: list[float], start: int) -> tuple[int, bool]:
    """(index of the last size from ``start`` written at the rate of the sizes just there, whether a
    slower size follows): the rate is "the same" within SLOWER of the best of the first three, from
    that best on (smaller sizes can be slower per byte for the call's own cost: 0.024 ns/B into 64 KiB
    and 0.018 into 256 KiB, both in L2, is no edge)."""
    level = min(rates[start : start + 3])
    for i in range(rates.index(level, start), len(rates)):
        if rates[i] > SLOWER * level:
            return max(start, i - 1), True
    return len(rates) - 1, False


# Whole calibrations taken, each figure the least of them: on a busy machine one takes the figures of
# the moment. Five in a row on an EPYC VM with busy neighbours put the one-thread rate into L2 at
# 0.026-0.044 ns/B and two threads' into half of L2 at 0.009-0.046, so that small copies went to two
# threads in one calibration and stayed on one in the next.
CALIBRATION_RUNS = 3
# Two threads writing memory on the EPYC VM switch between two rates, about 0.020 and 0.037 ns/B, for a
# few tenths of a second at a time, the fast one about a sixth of the time. A best time catches
# whichever figure happened to meet the fast rate, and the planner compares figures (plain copies and
# streamed ones on two threads) that each may or may not have: plain copies calibrated at 0.033 ns/B
# took 0.043 in a Tile of 67 MiB, chosen over a streamed copy that took 0.037; streaming calibrated at
# 0.020 beside plain copies at 0.044 streamed a 19.5 MiB Tile in 724 us that plain copies wrote in
# 332. Those figures take the typical time: of their timings in a calibration (which can all fall in
# one spell), and of the calibrations (spread over a second or two).
TYPICAL = statistics.median
TYPICAL_FIELDS = frozenset(
    {"byte_mem2_ns", "byte_far2_ns", "kernel_byte2_ns", "kernel_bounce2_ns", "kernel_few2_ns"}
)


def memory_bytes(*last_levels: int) -> int:
    """The destination memory rates are measured on: four times the largest of the last levels given
    (the one the system reports and the one measured), 64 MiB at least, MEM_MAX at most. Four times
    the measured one alone is not enough: on a Zen 5 EPYC reporting 32 MiB, where one thread's rate
    changed at 16 MiB in some calibrations, rewrites of 64 MiB took 0.019-0.025 ns/B (of 128 MiB
    0.026-0.031), and outputs of 70-140 MiB went to one thread's plain stores at 0.030."""
    return min(MEM_MAX, max(64 << 20, *(4 * size for size in last_levels)))


def calibrate(mem_bytes: int | None = None, machine: Machine | None = None) -> CopyCosts:
    """Measure the cost model's parameters on ``machine``'s figures (default: this machine's): about
    0.3 s a run on a quiet machine, most of it faulting in and writing the ``mem_bytes`` buffer that
    memory rates need (default: four times the last level, 64-256 MiB); see least_of."""
    machine = machine or this_machine()
    # With one CPU the two-thread figures are the one-thread ones and stay so.
    typical = TYPICAL_FIELDS if machine.cpus > 1 else frozenset()
    return least_of([_calibrate_once(mem_bytes, machine) for _ in range(CALIBRATION_RUNS)], typical)


# Sizes found where a rate changes, which a busy machine moves either way, and the share short runs add
# to a rate, which it lowers as often as it raises: the median of calibrations.
MEDIAN_FIELDS = frozenset({"llc2_bytes", "swap_bytes", "short_run_ratio"})


def least_of(runs: list[CopyCosts], typical: frozenset[str] = TYPICAL_FIELDS) -> CopyCosts:
    """The figures of several calibrations on one machine: each time the least one measured, since a
    busy machine only ever adds time, except the MEDIAN_FIELDS and the ``typical`` figures: the
    median."""
    merged: dict[str, Any] = {}
    for f in fields(CopyCosts):
        values = [getattr(run, f.name) for run in runs]
        if f.name in typical:
            merged[f.name] = TYPICAL(values)
        elif f.name in MEDIAN_FIELDS:
            merged[f.name] = sorted(values)[len(values) // 2]
        elif isinstance(values[0], float):
            merged[f.name] = min(values)
    return replace(runs[0], **merged)


def _calibrate_once(mem_bytes: int | None, machine: Machine) -> CopyCosts:
    """One measurement of every figure on ``machine``'s figures, best of a few timings each."""
    from concurrent.futures import ThreadPoolExecutor

    l2, llc = machine.l2_bytes, machine.llc_bytes
    # Memory rates need a destination well past the last level (64 MiB at least, MEM_MAX at most).
    mem_bytes = mem_bytes or memory_bytes(llc)
    # A source that stays in L2; at least the 32 KiB the loop and chunk measurements below read.
    block = max(32 << 10, l2 // 2)
    dst = np.empty(mem_bytes, np.uint8)
    dst.fill(1)
    src = np.arange(block // 8, dtype=np.uint64).view(np.uint8)

    a, b = dst[:8], src[:8]
    call = _best(lambda: np.copyto(a, b), 400, 5) / 400
    view = _best(lambda: np.ndarray((4, 2), np.uint8, dst, 0, (64, 8)), 400, 5) / 400
    n = 4096
    long_rows = (dst[: 2 * n * 4].view(np.uint32).reshape(2, n), src[: n * 4].view(np.uint32))
    short_rows = (
        np.ndarray((n, 2), np.uint32, dst, 0, (16, 4)),
        np.ndarray((n, 2), np.uint32, src, 0, (8, 4)),
    )
    t_long = _best(lambda: np.copyto(*long_rows), 20, 7)
    t_short = _best(lambda: np.copyto(*short_rows), 20, 7)
    loop = max(0.0, (t_short - t_long) / 20 / (n - 2))
    # Opaque chunks of 12 bytes (a row of 3 int32, as short rows of a Tile are), their few bytes left
    # in: NumPy moves each with a call of its own, on an EPYC VM 4-5 ns for chunks of 3-12 bytes and 2
    # ns for 32-128. (64-byte chunks, less the same bytes as rows of uint64, came out 0.3-1 ns there
    # and priced 1446 rows of 27 bytes at 1.3 us as reshapes; they took 4.6.)
    width = 12
    vd = np.ndarray((n,), f"V{width}", dst, 0, (width,))
    vs = np.ndarray((n,), f"V{width}", src, 0, (0,))
    vchunk = max(0.0, _best(lambda: np.copyto(vd, vs), 20, 7) / 20 - call) / n
    chunk = 64
    # Elements one at a time: 4-byte elements 20 bytes apart in the source, against one contiguous run.
    m = min(n, src.size // 20)
    sd = dst[: 4 * m * 4].view(np.uint32).reshape(4, m)
    ss = np.ndarray((4, m), np.uint32, src, 0, (0, 20))
    cs = np.ndarray((4, m), np.uint32, src, 0, (0, 4))
    strided = (
        max(0.0, _best(lambda: np.copyto(sd, ss), 20, 7) - _best(lambda: np.copyto(sd, cs), 20, 7))
        / 20
        / (4 * m)
    )
    rows = np.ndarray((n // 8,), f"V{chunk}", src, 0, (chunk,))
    index = np.arange(n, dtype=np.intp) % (n // 8)
    gd = np.ndarray((n,), f"V{chunk}", dst, 0, (chunk,))
    t_g = _best(lambda: np.take(rows, index, out=gd, mode="clip"), 20, 7) / 20
    # The gather's bytes as plain memmoves, from a source that stays in L2 (repeated when L2 is small).
    plain = min(n * chunk, src.size)
    c_dst, c_src = dst[: n * chunk // plain * plain].reshape(-1, plain), src[:plain]
    t_c = _best(lambda: np.copyto(c_dst, c_src), 20, 7) / 20
    gather = max(0.0, (t_g - t_c) / n)
    misaligned = _misaligned_ratio()

    pool = ThreadPoolExecutor(max_workers=1)

    def rate(
        nbytes: int, source: np.ndarray, threads: int = 1, as_used: bool = True, typical: bool = False
    ) -> float:
        d = dst[-(nbytes // source.size * source.size) :].reshape(-1, source.size)
        s = np.broadcast_to(source, d.shape)
        h = d.shape[0] // 2
        if threads == 1 and not as_used:
            return _best(lambda: np.copyto(d, s), 1, 3 if nbytes > 8 << 20 else 7) / d.size

        def both() -> None:
            future = pool.submit(np.copyto, d[h:], s[h:])
            np.copyto(d[:h], s[:h])
            future.result()

        def setup(value: int) -> None:
            d.reshape(-1).fill(value)
            if shared is not None and wake is not None:
                wake()  # the worker spins a while after a step: time it as a caller in a loop sees it

        shared = _shared_copy(d, s) if threads > 1 and copy_kernel.has_worker() else None
        if threads == 1:
            return _best_after(setup, 1, lambda: np.copyto(d, s), 9) / d.size
        if not as_used and shared is not None:
            return _best(shared, 1, 9) / d.size
        # Timed after the calling thread wrote the whole destination, as whatever used the output last
        # did: the second core then has to take its half's lines from the first one's cache. Back to
        # back, each core would find its half where it left it, and two threads would look up to 1.5x
        # faster than they are in use (measured here into 4 MiB: 0.033 against 0.049 ns/B).
        # Two threads vary more from one run to the next here (the second core's load): more rounds.
        rounds, pick = (5, TYPICAL) if typical else (3 if nbytes > 64 << 20 else 9, min)
        return _best_after(setup, 1, shared or both, rounds, pick) / d.size

    small = src[: block // 4]
    b_l2 = rate(block, small, 1, as_used=False)
    mid = min(llc // 4, mem_bytes // 4)
    # Rows of a Tile's source are mostly far smaller than L2; a source of half of a large L2 would
    # itself be pushed out by the written lines and price every copy as if re-reading it.
    row = src[: min(src.size, 256 << 10)]
    # At the last level's point one thread is timed as two are (below), after the calling thread
    # wrote the destination: compared back to back with two threads as used, one thread looked 1.1x
    # slower than two on a Zen 5 EPYC, where it took 1.3x as long as two both ways (as used 0.0098
    # against 0.0074 ns/B into 4 MiB, back to back 0.0084 against 0.0049), and an 8.6 MiB Tile stayed
    # on one thread at 77 us where two took 46.
    b_llc = rate(mid, row, 1, as_used=True)
    b_mem = rate(mem_bytes, row, 1, as_used=False)
    # Runs too short for rep movsb (vector stores, or rep movsb's start-up) into the same destination:
    # on a Zen 5 EPYC rows of 960 bytes took 1.3-1.7x the long rows' time into 8-128 MiB, rows of 2446
    # bytes 1.5-2.4x. Timed where memory's rate is: into 4 MiB the share came out 0.12-0.33 from one
    # timing to the next, where into 8 and 128 MiB it stayed within 0.29-0.37 (calibrations: 0.16-0.34).
    b_short = max(0.0, rate(mem_bytes, src[:SHORT_RUN], 1, as_used=False) / b_mem - 1)
    # A source as large as the destination, both at the last-level point: it is read from there.
    b_far = max(0.0, rate(mid, dst[:mid], 1, as_used=False) - rate(mid, row, 1, as_used=False))
    # 64 KiB of 256-byte rows shared with the kernel's worker (awake: back to back), and not: what
    # sharing costs beyond halving the copy is the posting, the wait for the worker's last piece and
    # the lines the other core has to take over (about 1 us here; a step of two rows, which the
    # worker never gets to, showed 0.3 us and made two threads look worth it on 16 KiB).
    small_d = dst[: 64 << 10].reshape(-1, 256)
    small_s = np.broadcast_to(src[:256], small_d.shape)
    wake = _shared_copy(small_d, small_s) if copy_kernel.has_worker() else None
    share = DEFAULT.share_ns / 1e9
    try:
        if machine.cpus > 1:
            thread = _best(lambda: pool.submit(int).result(), 50, 3) / 50
            if wake is not None:
                alone = _shared_copy(small_d, small_s, pieces=0)
                share = max(0.0, (_best(wake, 50, 7) - _best(alone, 50, 7) / 2) / 50)
            b_llc2, b_mem2 = rate(mid, row, 2), rate(mem_bytes, row, 2, typical=True)
            b_near2 = rate(min(2 * l2, mid), row, 2)
            # An output that fits in L2 is mostly rewritten by the same call, over and over (a batch
            # of them, a model run in a loop): each core's half is still in its cache, and the
            # worker awake. Measured here into 1 MiB: 10 us back to back, 15 us "as used" (below).
            b_small2 = rate(block, src[: max(64, block // 64)], 2, as_used=False)
            llc2 = _two_thread_llc(dst, row, llc) if wake is not None else 0
            # As memory's figure: the median, past a cache whose rate switches with the host's load.
            b_far2 = rate(2 * llc2, row, 2, typical=True) if 0 < 2 * llc2 <= dst.size else 0.0
            moved = _moved_rate(dst) if wake is not None else b_far
        else:  # one CPU: a second thread never pays (1e12 ns)
            b_llc2, b_mem2, b_near2, b_small2, thread, moved = b_llc, b_mem, b_llc, b_l2, 1e3, b_far
            llc2, b_far2 = 0, 0.0
        mem_src, mem_src2 = _memory_source(dst, row, machine.cpus > 1)
        kernel = _kernel_costs(dst, src, pool, b_l2, l2) if copy_kernel.available() else {}
    finally:
        pool.shutdown()
    ns = 1e9
    return CopyCosts(
        **kernel,
        call_ns=call * ns,
        view_ns=max(0.0, view * ns),
        loop_ns=loop * ns,
        vchunk_ns=vchunk * ns,
        strided_ns=strided * ns,
        gather_ns=gather * ns,
        misaligned_ratio=misaligned,
        l2_bytes=l2,
        llc_bytes=llc,
        llc2_bytes=llc2,
        byte_l2_ns=b_l2 * ns,
        byte_llc_ns=b_llc * ns,
        byte_mem_ns=b_mem * ns,
        byte_llc2_ns=b_llc2 * ns,
        byte_mem2_ns=b_mem2 * ns,
        byte_far2_ns=b_far2 * ns,
        byte_near2_ns=b_near2 * ns,
        byte_small2_ns=b_small2 * ns,
        far_src_ns=b_far * ns,
        short_run_ratio=b_short,
        mem_src_ns=mem_src * ns,
        mem_src2_ns=mem_src2 * ns,
        moved_ns=moved * ns,
        thread_ns=thread * ns,
        share_ns=share * ns,
        kernel_shares=wake is not None and machine.cpus > 1,
        calibrated=True,
    )


def _misaligned_ratio() -> float:
    """memmove's time for 64 KiB (rep movsb's range) with the destination 16 bytes (mod 64) past the
    source, over its time with both on 64-byte boundaries; both stay in L2."""
    n = 64 << 10
    raw_src, raw_dst = np.ones(n + 128, np.uint8), np.zeros(n + 128, np.uint8)
    src = raw_src[-raw_src.ctypes.data % 64 :][:n]
    at = -raw_dst.ctypes.data % 64
    aligned, shifted = raw_dst[at : at + n], raw_dst[at + 16 : at + 16 + n]
    return _best(lambda: np.copyto(shifted, src), 20, 7) / _best(lambda: np.copyto(aligned, src), 20, 7)


def _memory_source(dst: np.ndarray, block: np.ndarray, two: bool) -> tuple[float, float]:
    """Seconds per byte that a source in memory adds to a copy, one thread and two: half of ``dst``
    written from its other half (pushed out of the caches by rewriting the first half just before),
    against the same copy from ``block``, which stays in L2; with the copy kernel's streaming stores
    where it is loaded (past the last level, copies are streamed), else with np.copyto (then two
    threads are taken to pay what one does). The two threads' figure is the smaller here: on an EPYC
    VM one thread streamed 32 MiB from memory at 0.051 ns/B and from L2 at 0.037, two threads at
    0.042 and 0.038."""
    half = dst.size // 2 // block.size * block.size
    out = dst[:half].reshape(-1, block.size)
    sources = (dst[half : 2 * half].reshape(out.shape), np.broadcast_to(block, out.shape))

    def rewrite(value: int) -> None:
        out.fill(value)

    def extra(pieces: int | None) -> float:
        if copy_kernel.available():
            far, near = (_shared_copy(out, s, True, pieces) for s in sources)
        else:
            far, near = (lambda s=s: np.copyto(out, s) for s in sources)
        return max(0.0, _best_after(rewrite, 2, far, 3) - _best_after(rewrite, 2, near, 3)) / out.size

    one = extra(0)
    return one, extra(None) if two and copy_kernel.has_worker() else one


def _two_thread_llc(dst: np.ndarray, row: np.ndarray, llc: int) -> int:
    """The output size up to which the copy kernel's two threads, rewriting one output back to back,
    write at a rate nearer to their rate into one thread's last level (``llc``) than to memory's (see
    two_thread_edge); 0 when ``dst`` leaves no larger size to time. Best of seven rewrites, since a
    cache fills up over a few of them: two threads took 0.033, 0.023, 0.018, then 0.012 ns/B into
    16 MiB on the EPYC VM of two_thread_llc."""
    sizes = [llc // row.size * row.size]
    while sizes[-1] * 2 <= dst.size:
        sizes.append(sizes[-1] * 2)
    if len(sizes) < 2 or not sizes[0]:  # nothing past one thread's last level to compare with
        return 0
    rates = []
    for size in sizes:
        d = dst[:size].reshape(-1, row.size)
        rates.append(
            _best(_shared_copy(d, np.broadcast_to(row, d.shape)), 1, 7 if size <= 64 << 20 else 4) / size
        )
    return two_thread_edge(sizes, rates)


def two_thread_edge(sizes: list[int], rates: list[float]) -> int:
    """The last of ``sizes`` (doubling, from one thread's last level) that two threads write at the
    last level's rate by _far_edge's rule, the first size itself when the second is already nearer
    memory; 0 (nothing learnt) when the curve shows no change or there is no second size. Two
    threads' rate rises more gently past a cache than one thread's (16 MiB at 1.33x their 8 MiB rate,
    still in cache), so a fixed step such as SLOWER would cut it early."""
    at, ends = _far_edge(rates, 0)
    return sizes[at] if ends else 0


def _kernel_costs(dst: np.ndarray, src: np.ndarray, pool, byte_l2: float, l2: int) -> dict:
    """The copy kernel's call cost, cost per run (streamed, and short ones with ordinary stores) and
    streaming rates (one and two threads), in ns,
    writing ``dst`` (far larger than the cache) from ``src`` (a block that stays in L2)."""
    KernelCall, address = copy_kernel.KernelCall, copy_kernel.address
    d, s = address(dst), address(src)

    def program(shape, dst_strides, src_strides, width: int, calls: int, count: int = 1) -> float:
        """Seconds of one call of a plan of ``count`` such steps (the output from the input) run as a
        program."""
        run = copy_kernel.step_call(d, s, shape, dst_strides, src_strides, width, count=count)
        return _best(run, calls, 5) / calls

    # A call as a one-thread plan makes it (one program of one 8-byte copy): what every such plan pays.
    call = program((1,), (8,), (8,), 8, 200)
    # And each step more (a doubling's ten steps, say): the same copy nine times over.
    t_nine = program((1,), (8,), (8,), 8, 200, 9)
    block = src.size
    rows = dst.size // block
    long_runs = KernelCall((rows, block), (block, 1), (0, 1), 1)
    # Streamed runs of 256 bytes a line apart: runs that follow one another are streamed together
    # through the kernel's buffer, at about the rate of long runs; these pay their own.
    short, gap = 256, 64
    count = dst.size // (short + gap)
    short_runs = KernelCall((count, short), (short + gap, 1), (0, 1), 1)
    t_long = _best(lambda: long_runs(d, s), 1, 3)
    t_short = _best(lambda: short_runs(d, s), 1, 3)
    run = max(0.0, (t_short - t_long * count * short / (rows * block)) / count)
    if copy_kernel.has_worker():
        both = _shared_copy(
            dst[: rows * block].reshape(rows, block), np.broadcast_to(src, (rows, block)), True
        )
    else:
        halves = (long_runs.piece(0, rows // 2), long_runs.piece(rows // 2, rows))

        def both() -> None:
            future = pool.submit(halves[1], d, s)
            halves[0](d, s)
            future.result()

    t_two = _best(both, 1, 5, TYPICAL)
    n, width = 2048, 12  # rows of an odd width, as a Tile of 3 int32 writes them; all within L2
    t_loop = program((n,), (2 * width,), (width,), width, 20)
    # The same rows with an odometer step per STEP_ROWS of them.
    t_steps = program(*stepped_rows(n, width), width, 20)
    # Short fills: each row one int32 written 3 times, rows 12 bytes apart as the copy rows above,
    # from every fourth int32 of the source (elements that follow one another are repeated 16 bytes of
    # them at a time, a case of its own). Rows of 16 bytes that follow one another, the kernel's best
    # case, took half as long per row (0.6 against 1.2 ns), which priced a Tile of 5424 rows of 8 bytes
    # at 3.8 us on two threads where it took 8.9, and its plan through a temporary 3.6.
    t_fills = program((n, 3), (24, 4), (16, 0), 4, 20)
    # The same rows back to back, each from the next int32: the kernel writes them as byte shuffles
    # where it can (pricing.kernel_loops says where), 16 output bytes from one or two loads.
    t_shuffles = program((n, 3), (12, 4), (4, 0), 4, 20)
    t_moves = program((n,), (8,), (4,), 4, 20)  # runs of one int32: a single move each
    # Runs of 72 bytes, as many as the source holds (a block of L2's half): 32-byte moves on a CPU with
    # AVX (runs up to 511 bytes are), else a call of memcpy each.
    m = min(n, src.size // 72)
    t_calls = program((m,), (144,), (72,), 72, 20)
    # Runs of 2880 bytes (past MEDIUM_MAX, not a multiple of 64) into 8 MiB, past L2: a call of memcpy
    # each, then the kernel's own moves.
    long_run = 2880
    long_shape = ((8 << 20) // long_run, long_run), (long_run, 1), (0, 1)
    t_memcpy, t_avx = _timed_with(copy_kernel.long_avx, (False, True), lambda: program(*long_shape, 1, 3))
    swap = _swap_bytes(dst)
    big = _big_movsb_ratio(dst, 2 * l2)
    nbytes = rows * block
    copy = max(0.0, t_calls - call - m * 72 * byte_l2) / m  # its bytes priced apart
    bounce, bounce2 = _bounce_rates(dst, src, t_long / nbytes, t_two / nbytes, copy)
    few, few2 = _few_step_costs(dst, src, t_long / nbytes, t_two / nbytes)
    line = _line_run_cost(dst, src, t_long / nbytes)
    ns = 1e9
    return {
        "kernel_call_ns": call * ns,
        "kernel_setup_ns": max(0.0, t_nine - call) / 8 * ns,
        "kernel_run_ns": run * ns,
        "kernel_loop_ns": max(0.0, t_loop - call) / n * ns,
        "kernel_step_ns": max(0.0, t_steps - t_loop) / (n // STEP_ROWS) * ns,
        "kernel_fill_ns": max(0.0, t_fills - call) / n * ns,
        "kernel_shuffle_ns": max(0.0, t_shuffles - call) / (n * 12 / 16) * ns,
        "kernel_move_ns": max(0.0, t_moves - call) / n * ns,
        "kernel_copy_ns": copy * ns,
        "kernel_byte_ns": t_long / nbytes * ns,
        "kernel_byte2_ns": t_two / nbytes * ns,
        "kernel_bounce_ns": bounce * ns,
        "kernel_bounce2_ns": bounce2 * ns,
        "kernel_line_ns": line * ns,
        "kernel_few_ns": few * ns,
        "kernel_few2_ns": few2 * ns,
        "long_avx_ratio": t_memcpy / t_avx,
        "swap_bytes": swap,
        "big_movsb_ratio": big,
        "kernel_calibrated": True,
    }


def _timed_with(setting, values, timed) -> list[float]:
    """``timed()`` with the kernel's ``setting`` (a copy_kernel switch or bound) at each of ``values``
    in turn, the setting then as it was (machine_costs sets it from what calibration measured)."""
    before = setting()
    times = []
    try:
        for value in values:
            setting(value)
            times.append(timed())
    finally:
        setting(before)
    return times


# Rows per odometer step where the step's cost is timed: more than any tight loop the kernel swaps for
# a longer outer one (up to 8 inline runs), which would take the steps away. Timed on loops of 8 once
# the kernel swapped those, a step came out 1.2 ns on a Zen 5 EPYC, where unswapped steps took 5-6
# (runs of 72 and 128 bytes two per step, in L2), and medium int8 was priced at half its time.
STEP_ROWS = 16


def stepped_rows(n: int, width: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(shape, destination strides, source strides) of ``n`` rows of ``width`` bytes written a row
    apart, STEP_ROWS of them per odometer step."""
    k = STEP_ROWS
    return (n // k, k, 1), (2 * k * width, 2 * width, width), (k * width, width, width)


# The loop swap is timed on 128 rows of SWAP_ROW bytes, each written twice side by side, each block of
# rows twice (a Tile of [n, 128, 128] int8 by [1, 1, 2, 2]: two runs per odometer step unswapped, the 128
# rows swapped), into doubling outputs from SWAP_FIRST bytes, the source a quarter of the output.
SWAP_ROW = 128
SWAP_FIRST = 1 << 20


def _swap_bytes(dst: np.ndarray) -> int:
    """The largest of doubling outputs (from SWAP_FIRST, and its source, within ``dst``) up to which
    the kernel wrote every one faster with its short loop swapped than without: 0 when not even the
    first. On a Zen 5 EPYC swapping took 0.4x the time into 1-8 MiB, 0.6x into 16, 0.9x into 32 and as
    long into 64 MiB; on a Zen 4 EPYC 2-2.5x as long into 64 MiB."""
    row, address = SWAP_ROW, copy_kernel.address
    wide = 2 * row
    found, size = 0, SWAP_FIRST
    while size + size // 4 <= dst.size:
        shape = (size // (256 * wide), 2, 128, 2)
        strides = (256 * wide, 128 * wide, wide, row), (128 * row, 0, row, 0)
        call = copy_kernel.step_call(address(dst), address(dst[size:]), shape, *strides, row)
        # the kernel's bound below the step, then at it
        unswapped, swapped = _timed_with(copy_kernel.swap_step, (0, size), partial(_best, call, 1, 3))
        if swapped >= unswapped:
            break
        found, size = size, 2 * size
    return found


# Where rep movsb and memcpy are compared: past the last level of most machines, where the two differ
# most on the Zen 5 EPYC (2.1x into 38 MiB, 1.26x into 64, 1.2x into 128).
BIG_MOVSB_BYTES = 64 << 20


def _big_movsb_ratio(dst: np.ndarray, run: int) -> float:
    """The kernel's time for runs of ``run`` bytes (twice L2) written into the first half of ``dst``
    (up to BIG_MOVSB_BYTES of it), each from the same source in its second half, with memcpy, over its
    time with rep movsb."""
    half = dst.size // 2
    count = max(1, min(BIG_MOVSB_BYTES, half) // run)
    call = copy_kernel.step_call(
        copy_kernel.address(dst), copy_kernel.address(dst[half:]), (count, run), (run, 1), (0, 1), 1
    )
    t_memcpy, t_movsb = _timed_with(copy_kernel.big_movsb, (False, True), lambda: _best(call, 1, 3))
    return t_memcpy / t_movsb


# Copies of short runs that follow one another, streamed through the copy kernel's buffer, pay per
# byte beyond the streaming, by an amount that moves with their length and from one calibration to
# the next (one thread, the EPYC VM: runs of 24 to 100 bytes 0.015-0.053 ns/B more than long runs,
# the dearest length not the same each time). The median over a few lengths prices the typical run.
# Longer copies stream their whole lines straight from the source (pricing.LINE_RUN_MIN) and are not
# timed here.
BOUNCE_LENGTHS = (24, 40, 72, 100)


def _bounce_rates(dst: np.ndarray, src: np.ndarray, long1: float, long2: float, copy: float):
    """Seconds per byte that joined short runs pay for going out through the kernel's buffer, on one
    thread and on two: the median over BOUNCE_LENGTHS of what their copy took beyond the larger of
    long runs' streaming (``long1``, ``long2`` seconds per byte) and their runs' copies into the
    buffer (``copy`` seconds each), which overlaps it (pricing.kernel_cost)."""
    ones, twos = [], []
    for joined in BOUNCE_LENGTHS:
        view, source = _joined_runs(dst, src, joined)
        rows = view.shape[0]
        ones.append(max(0.0, _streamed_alone(view, source) - max(view.size * long1, rows * copy)) / view.size)
        if copy_kernel.has_worker():
            # Timed on two threads, each pays half of it, and part of that overlaps the other's
            # streaming: 0.003-0.021 ns/B there against 0.015-0.053 on one.
            t_two = _streamed_shared(view, source)
            twos.append(max(0.0, t_two - max(view.size * long2, rows * copy / 2)) / view.size)
    return _one_and_two(ones, twos)


def _streamed_alone(view: np.ndarray, source: np.ndarray) -> float:
    """Seconds of one streamed copy of ``source`` into ``view`` by the calling thread alone: the best
    of three."""
    return _best(_shared_copy(view, source, True, 0), 1, 3)


def _streamed_shared(view: np.ndarray, source: np.ndarray) -> float:
    """Seconds of the same copy shared with the kernel's worker: the typical of five, as every
    two-thread streaming figure (TYPICAL_FIELDS)."""
    return _best(_shared_copy(view, source, True), 1, 5, TYPICAL)


def _one_and_two(ones: list[float], twos: list[float]) -> tuple[float, float]:
    """The medians of a figure timed on one thread and on two; without the worker (no two-thread
    timings), a Python thread's half: what one thread pays for it."""
    one = float(np.median(ones))
    return one, (float(np.median(twos)) if twos else one / 2)


# A step of a few short runs streamed through the buffer (rows of FEW_LENGTHS bytes, each written twice,
# a step per row) moves them into it as plain copies do, two overlapping moves each, and pays its step
# beyond the streaming; how much of that the streaming hides is in the timing, not in a model of it.
# Timed on one thread (Zen 5 EPYC, 64 MiB), rows of 24-56 bytes took 3.9-4.4 ns a step over long runs'
# rate, on two threads 0.5-1.7 ns a step of the whole copy (each thread half the steps, overlapping
# the other's streaming). Priced as an odometer step and two runs in cache (7.4 ns), hidden under the
# streaming where less, with the buffer's cost per byte on top, such copies came out 1.1-1.5x what they took.
FEW_LENGTHS = (24, 40, 56)


def _few_step_costs(dst: np.ndarray, src: np.ndarray, long1: float, long2: float) -> tuple[float, float]:
    """Seconds per step that streamed copies of a few short runs per step take beyond long runs'
    streaming (``long1``, ``long2`` seconds per byte), on one thread and on two (per step of the whole
    copy): the median over FEW_LENGTHS of rows each written twice, their source cycling through ``src``
    (in L2)."""
    ones, twos = [], []
    for run in FEW_LENGTHS:
        view, source = _few_runs(dst, src, run)
        steps = view.size // (2 * run)
        ones.append(max(0.0, _streamed_alone(view, source) - view.size * long1) / steps)
        if copy_kernel.has_worker():
            twos.append(max(0.0, _streamed_shared(view, source) - view.size * long2) / steps)
    return _one_and_two(ones, twos)


def _few_runs(dst: np.ndarray, src: np.ndarray, run: int) -> tuple[np.ndarray, np.ndarray]:
    """``dst`` as rows of ``run`` bytes each written twice side by side, the rows back to back, and
    their source: the rows of ``src``, over and over."""
    per = src.size // run
    outer = dst.size // (per * 2 * run)
    shape = (outer, per, 2, run)
    view = np.lib.stride_tricks.as_strided(dst, shape, (per * 2 * run, 2 * run, run, 1))
    source = np.lib.stride_tricks.as_strided(src, shape, (0, run, 0, 1))
    return view, source


# Longer joined copies have their whole lines streamed straight from the source and only the lines
# where two runs meet put together: a cost per run (one thread, the EPYC VM: 1-2 ns for runs of 136 to
# 400 bytes over long runs' rate). Timed on lengths of a few lines, where it shows; the median of them.
LINE_LENGTHS = (136, 200, 265, 400)


def _line_run_cost(dst: np.ndarray, src: np.ndarray, long1: float) -> float:
    """Seconds per run that joined copies of LINE_LENGTHS bytes took, on one thread, beyond long runs'
    streaming (``long1`` seconds per byte): the median over the lengths."""
    costs = []
    for joined in LINE_LENGTHS:
        view, source = _joined_runs(dst, src, joined)
        costs.append(max(0.0, _streamed_alone(view, source) - view.size * long1) / view.shape[0])
    return float(np.median(costs))


def _joined_runs(dst: np.ndarray, src: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """``dst`` as rows of ``length`` bytes, each where the one before it ends, and the first
    ``length`` bytes of ``src`` broadcast to them: a copy of runs that follow one another."""
    rows = dst.size // length
    view = dst[: rows * length].reshape(rows, length)
    return view, np.broadcast_to(src[:length], view.shape)


def _shared_copy(d: np.ndarray, s: np.ndarray, stream: bool = False, pieces: int | None = None):
    """A function copying ``s`` into ``d`` (byte views of one shape) as one call of the copy kernel,
    its one step cut into ``pieces`` for the kernel's worker (0: the calling thread alone; by default
    as many as a plan's step of that size)."""
    address = copy_kernel.address
    pieces = copy_kernel.share_pieces(d.size) if pieces is None else pieces
    return copy_kernel.step_call(address(d), address(s), d.shape, d.strides, s.strides, 1, stream, pieces)


def _moved_rate(dst: np.ndarray) -> float:
    """Seconds per byte that a copy shared with the kernel's worker pays first when its source is a
    block the calling thread has just written: the worker reads those lines from the other core's
    cache, and the calling thread takes them back to write them again. A 30 KiB block fanned out 13
    times on two threads took 5.9 us back to back and 10.9 with the block rewritten before each
    call (the rewrite alone 0.7): 0.14 ns a byte, four times the rate of reading it from the last level,
    and as slow as the fan-out on one thread."""
    size = 30 << 10
    region = dst[: 14 * size]
    block, fan = region[:size], region[size:].reshape(13, size)
    both = _shared_copy(fan, np.broadcast_to(block, fan.shape))

    def rewrite() -> None:
        block.fill(7)

    def rewritten() -> None:
        rewrite()
        both()

    # The median over rounds of each round's difference: the difference of three best times took the
    # luckiest of each and came out 0.11-0.14 ns/B from one calibration to the next.
    rounds = sorted(_best(rewritten, 50, 1) - _best(rewrite, 50, 1) - _best(both, 50, 1) for _ in range(9))
    return max(0.0, rounds[len(rounds) // 2] / 50) / size


def _best_after(setup, value, fn, rounds: int, pick=min) -> float:
    """Best time (or ``pick`` of the times: TYPICAL) of ``rounds`` single calls of ``fn``, each right
    after ``setup(value)`` (untimed)."""
    times = []
    for _ in range(rounds):
        setup(value)
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(pick(times))


def _best(fn, inner: int, rounds: int, pick=min) -> float:
    """Best time (or ``pick`` of the times: TYPICAL) of ``rounds`` batches of ``inner`` calls, in
    seconds per batch."""
    fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append(time.perf_counter() - t0)
    return float(pick(times))
