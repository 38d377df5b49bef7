"""Every plan kind the NumPy backend's planner can choose, forced, against a naive per-element loop.

The planner picks among direct broadcasting copies, banded copies (an L2-sized block of the
source per call), gathers of whole rows (np.take), temporaries, in-place doubling and fan-out,
each on one or two threads, by a cost model measured on the machine. A given machine only ever
takes some of those paths, so here each kind is preferred wherever it applies and checked bit for
bit on random descriptors (every dtype, padded, permuted and zero strides, padded outputs). Tests
that assert which plan is chosen plan with cost models built in the test (``machines``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.execute import copy_axes, copy_kernel, copy_steps, costs, numpy_backend, pricing
from dmltile.execute import copy_plan as plan
from dmltile.execute.machine import Machine, faked, this_machine
from tests.exec_reference import DTYPES, descriptors
from tests.execute.machines import BENCH, BENCH_NUMPY_ONLY, EPYC
from tests.execute.test_copy_kernel import kernel_set
from tests.execute.test_execution import assert_matches_naive

KINDS = ["direct", "band", "gather", "temp", "double", "fanout"]
# The copy kernel alone and under each recipe that writes the output with it (skipped without it).
STREAM_KINDS = ["stream", "band+stream", "temp+stream", "double+stream", "fanout+stream"]


def naive_tile(x: np.ndarray, repeats) -> np.ndarray:
    """out[i] = x[i mod sizes], one element at a time."""
    out = np.empty(tuple(s * r for s, r in zip(x.shape, repeats, strict=False)), x.dtype)
    for index in np.ndindex(*out.shape):
        out[index] = x[tuple(i % s for i, s in zip(index, x.shape, strict=False))]
    return out


# (kind, threads, copy kernel loaded, kernel's worker used): two-thread plans run in one kernel call
# with its worker, or as kernel calls shared with a Python thread where the kernel has none (Windows).
PARAMS = (
    [(k, t, True, True) for k in KINDS + STREAM_KINDS for t in (1, 2)]
    + [(k, 2, True, False) for k in KINDS + STREAM_KINDS]
    + [(k, t, False, False) for k in KINDS for t in (1, 2)]
)


def _param_id(p) -> str:
    return (
        f"{p[0]}-{p[1]}t" + ("" if p[2] else "-numpy-only") + ("-python-thread" if p[2] and not p[3] else "")
    )


@pytest.fixture(params=PARAMS, ids=_param_id)
def forced(request, monkeypatch):
    """NumpyTile planning with one kind preferred (and, on two threads, every phase split); with the
    copy kernel (plans then run in one kernel call, shared with its worker) or, switched off, NumPy
    alone."""
    kind, threads, kernel, worker = request.param
    if kernel and not copy_kernel.available():
        pytest.skip(f"the copy kernel is not loaded here: {copy_kernel.status()}")
    if worker and threads == 2 and not copy_kernel.has_worker():
        pytest.skip("the copy kernel has no worker thread on this platform")
    if not kernel:
        monkeypatch.setattr(copy_kernel, "_load", lambda: (None, "switched off by the test"))
    if not worker:
        monkeypatch.setattr(copy_kernel, "has_worker", lambda: False)
    prefer = tuple(kind.split("+")) + (("split",) if threads == 2 else ())
    monkeypatch.setattr(copy_axes, "SPLIT_CHUNK", 8)
    monkeypatch.setattr(numpy_backend, "make_plan", functools.partial(plan.make_plan, prefer=prefer))
    return kind, threads, kernel, worker


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(desc=descriptors(), seed=st.integers(0, 2**32 - 1), poison=st.booleans())
def test_forced_plans_match_the_naive_loop(forced, desc, seed, poison):
    _, threads, kernel, worker = forced
    op = numpy_backend.NumpyTile(dmltile.check(desc, "4.1"), threads=threads)
    info = op.plan_info()  # who runs the plan: one kernel call unless it is two reshapes or is split
    # and the kernel has no worker to share it with
    one_call = kernel and (worker or not info["threads"]) and not info["reshape"]
    assert info["one_kernel_call"] == one_call
    assert_matches_naive(op, desc, seed, poison)
    rng = np.random.default_rng(seed)
    dtype = np.dtype(DTYPES[desc["InputTensor"]["DataType"]])
    x = rng.integers(0, 100, desc["InputTensor"]["Sizes"]).astype(dtype)
    assert np.array_equal(op(x).view(np.uint8), naive_tile(x, desc["Repeats"]).view(np.uint8))


@pytest.mark.parametrize(
    "kind,sizes,repeats",
    [
        ("band", [6, 5, 4], [2, 3, 2]),
        ("gather", [6, 5, 4], [2, 3, 2]),
        ("temp", [2, 3, 4], [3, 2, 2]),
        ("double", [3, 4], [8, 1]),
        ("fanout", [3, 4], [5, 1]),
    ],
)
@pytest.mark.parametrize("dtype", ["INT8", "FLOAT16", "FLOAT32", "UINT64"])
def test_each_kind_is_really_taken(monkeypatch, kind, sizes, repeats, dtype):
    monkeypatch.setattr(numpy_backend, "make_plan", functools.partial(plan.make_plan, prefer=(kind, "split")))
    op = numpy_backend.NumpyTile(dmltile.tile_desc(sizes, repeats, dtype=dtype), threads=2, costs=BENCH)
    p = op.array_plan
    assert p.kind == kind and p.split
    if kind == "band":
        assert len({s.phase for s in p.steps}) < len(p.steps)  # bands share a phase
    if kind == "gather":
        assert any(s.index is not None for s in p.steps)
    x = np.arange(np.prod(sizes)).astype(DTYPES[dtype]).reshape(sizes)
    out = np.full(op.out_shape, 0, x.dtype)
    assert np.array_equal(op(x, out).view(np.uint8), naive_tile(x, repeats).view(np.uint8))


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown plan kinds"):
        plan.make_plan([2], [2], [4], [4], 4, prefer="fast")


def test_narrow_types_copy_wide_elements():
    # 128 int8 per row: the copy moves whole rows (one opaque element each, or uint64s), never bytes.
    desc = dmltile.tile_desc([1, 64, 128, 128], [1, 1, 2, 2], dtype="INT8")
    op = numpy_backend.NumpyTile(desc, costs=BENCH_NUMPY_ONLY)
    assert all(step.width >= 8 for step in op.array_plan.steps)


def test_calibration_is_cached_and_falls_back(tmp_path, monkeypatch):
    monkeypatch.setenv("DMLTILE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("DMLTILE_MACHINE", raising=False)
    monkeypatch.delenv("DMLTILE_CALIBRATE", raising=False)
    fake = costs.CopyCosts(call_ns=123.0, calibrated=True, kernel_calibrated=True)
    monkeypatch.setattr(costs, "calibrate", lambda machine, **_: fake)
    monkeypatch.setattr(costs, "_costs", None)
    assert costs.machine_costs() is fake
    doc = json.loads((tmp_path / "copy-costs.json").read_text())
    assert doc["costs"]["call_ns"] == 123.0 and doc["fingerprint"] == costs.fingerprint()
    monkeypatch.setattr(costs, "_costs", None)
    monkeypatch.setattr(
        costs, "calibrate", lambda machine, **_: pytest.fail("calibrated again despite the cache")
    )
    assert costs.machine_costs().call_ns == 123.0
    monkeypatch.setattr(costs, "_costs", None)
    monkeypatch.setenv("DMLTILE_CALIBRATE", "0")
    assert costs.machine_costs() == costs.DEFAULT


@pytest.mark.parametrize("ratio,long_ratio,big,swap", [(1.1, 1.3, 1.3, 32 << 20), (10.0, 1.0, 1.0, 0)])
def test_the_kernel_takes_its_own_moves_only_where_calibration_measured_them_faster(
    tmp_path, monkeypatch, ratio, long_ratio, big, swap
):
    # memmove of 64 KiB misaligned took 10x its aligned time on the AMD machines where the slow case
    # was found, 1.1x on a later EPYC, where the kernel's store loop around it then took 2x memcpy's;
    # there, runs of 960-4096 bytes took 1.3-1.9x as long with memcpy as with the kernel's own moves.
    if not copy_kernel.available():
        pytest.skip(f"the copy kernel is not loaded here: {copy_kernel.status()}")
    monkeypatch.setenv("DMLTILE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("DMLTILE_MACHINE", raising=False)
    monkeypatch.delenv("DMLTILE_CALIBRATE", raising=False)
    measured = costs.CopyCosts(
        misaligned_ratio=ratio,
        long_avx_ratio=long_ratio,
        big_movsb_ratio=big,
        swap_bytes=swap,
        calibrated=True,
        kernel_calibrated=True,
    )
    monkeypatch.setattr(costs, "measured_caches", lambda machine: machine)
    monkeypatch.setattr(costs, "calibrate", lambda machine, **_: measured)
    monkeypatch.setattr(costs, "_costs", None)
    opposite = (  # each told the opposite first, restored afterwards
        (copy_kernel.movsb_cliff, ratio < costs.MOVSB_CLIFF),
        (copy_kernel.long_avx, long_ratio < costs.MOVES_GAIN),
        (copy_kernel.big_movsb, big < costs.MOVES_GAIN),
        (copy_kernel.swap_step, MIB),
    )
    with contextlib.ExitStack() as settings:
        for setting, value in opposite:
            settings.enter_context(kernel_set(setting, value))
        loaded = costs.machine_costs()
        assert loaded.movsb_cliff == (ratio > costs.MOVSB_CLIFF) == copy_kernel.movsb_cliff()
        assert loaded.long_avx == (long_ratio > costs.MOVES_GAIN) == copy_kernel.long_avx()
        assert copy_kernel.swap_step() == swap
        assert loaded.big_movsb == (big > costs.MOVES_GAIN) == copy_kernel.big_movsb()


def test_memory_rates_are_measured_past_the_larger_of_the_reported_and_measured_last_level(
    tmp_path, monkeypatch
):
    # A Zen 5 EPYC reports 32 MiB; its one-thread rate changed at 16 MiB in some calibrations, and
    # memory measured at 64 MiB priced one thread's plain stores under what they took past 70 MiB.
    assert costs.memory_bytes(32 * MIB, 16 * MIB) == 128 * MIB
    assert costs.memory_bytes(480 * MIB, 64 * MIB) == costs.MEM_MAX  # a VM reporting its host's
    assert costs.memory_bytes(2 * MIB) == 64 * MIB
    monkeypatch.setenv("DMLTILE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("DMLTILE_MACHINE", raising=False)
    monkeypatch.delenv("DMLTILE_CALIBRATE", raising=False)
    monkeypatch.setattr(costs, "this_machine", lambda: Machine(l2_bytes=MIB, llc_bytes=32 * MIB, cpus=2))
    monkeypatch.setattr(
        costs, "measured_caches", lambda machine: dataclasses.replace(machine, llc_bytes=16 * MIB)
    )
    asked = []

    def calibrate(machine, mem_bytes=None):
        asked.append((machine.llc_bytes, mem_bytes))
        return costs.CopyCosts(calibrated=True, kernel_calibrated=True)

    monkeypatch.setattr(costs, "calibrate", calibrate)
    monkeypatch.setattr(costs, "_costs", None)
    costs.machine_costs()
    assert asked == [(16 * MIB, 128 * MIB)]


def test_faked_figures_calibrate_apart_and_never_touch_the_real_measurement(tmp_path, monkeypatch):
    monkeypatch.setenv("DMLTILE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("DMLTILE_CALIBRATE", raising=False)
    monkeypatch.delenv("DMLTILE_MACHINE", raising=False)
    real = costs.CopyCosts(call_ns=123.0, calibrated=True, kernel_calibrated=True)
    real_file = tmp_path / "copy-costs.json"
    real_file.write_text(json.dumps({"fingerprint": costs.fingerprint(), "costs": dataclasses.asdict(real)}))
    before = real_file.read_text()
    seen = []

    def calibrate(machine, **_):
        seen.append(machine)
        return costs.CopyCosts(l2_bytes=machine.l2_bytes, llc_bytes=machine.llc_bytes, calibrated=True)

    monkeypatch.setattr(costs, "calibrate", calibrate)
    monkeypatch.setattr(costs, "_costs", None)
    monkeypatch.setenv("DMLTILE_MACHINE", "l2=256KiB, llc=2MiB, cpus=1")
    small = costs.machine_costs()  # measured on the faked figures, not read from the real file
    assert (small.l2_bytes, small.llc_bytes, small.call_ns) == (256 << 10, 2 << 20, costs.DEFAULT.call_ns)
    assert seen[0].cpus == 1 and costs.cache_file() != real_file and costs.cache_file().exists()
    monkeypatch.setattr(costs, "_costs", None)
    monkeypatch.setenv("DMLTILE_MACHINE", "llc=1GiB")
    assert costs.machine_costs().llc_bytes == 1 << 30 and len(seen) == 2  # another fake: measured apart
    assert real_file.read_text() == before
    monkeypatch.setattr(costs, "_costs", None)
    monkeypatch.setenv("DMLTILE_CALIBRATE", "0")  # the fixed constants take the faked caches too
    assert costs.machine_costs() == dataclasses.replace(
        costs.DEFAULT, llc_bytes=1 << 30, l2_bytes=seen[1].l2_bytes
    )
    monkeypatch.setattr(costs, "_costs", None)
    monkeypatch.delenv("DMLTILE_CALIBRATE")
    monkeypatch.delenv("DMLTILE_MACHINE")
    assert costs.machine_costs() == real and len(seen) == 2  # the real machine's, untouched


@pytest.mark.parametrize(
    "text", ["llc=0", "llc=-2MiB", "llc=2 parsecs", "l3=2MiB", "cpus=2MiB", "llc", "l2=4MiB,llc=2MiB"]
)
def test_a_bad_machine_fake_is_refused_by_name(monkeypatch, text):
    monkeypatch.setenv("DMLTILE_MACHINE", text)
    with pytest.raises(dmltile.DmlTileError, match=f"DMLTILE_MACHINE: .*{text.split('=')[0]}"):
        this_machine()


def test_a_fake_replaces_only_the_figures_it_names():
    real = Machine(l2_bytes=2 << 20, llc_bytes=480 << 20, cpus=2)
    assert faked(real, "llc=1GiB") == Machine(2 << 20, 1 << 30, 2, "llc=1073741824")
    assert faked(real, "cpus=1, l2=512K") == Machine(512 << 10, 480 << 20, 1, "cpus=1,l2=524288")
    assert faked(real, "llc=1MiB").l2_bytes == 1 << 20  # a last level smaller than L2 takes L2 down


@pytest.mark.parametrize(
    "l2,llc,cpus",
    [(16 << 10, 2 << 20, 1), (256 << 10, 2 << 20, 2), (2 << 20, 1 << 30, 2)],
    ids=["16KiB-2MiB-1cpu", "256KiB-2MiB-2cpus", "2MiB-1GiB-2cpus"],
)
def test_calibration_measures_every_figure_on_the_given_machine(l2, llc, cpus):
    # Small L2s too: the measurements must fit whatever block of L2 they are given.
    measured = costs.calibrate(mem_bytes=16 << 20, machine=Machine(l2_bytes=l2, llc_bytes=llc, cpus=cpus))
    assert measured.calibrated and (measured.l2_bytes, measured.llc_bytes) == (l2, llc)
    rates = [v for k, v in dataclasses.asdict(measured).items() if k.endswith("_ns")]
    assert all(0 <= v < math.inf for v in rates) and measured.call_ns > 0 and measured.byte_mem_ns > 0
    assert 0 < measured.misaligned_ratio < math.inf and 0 < measured.long_avx_ratio < math.inf
    assert 0 < measured.big_movsb_ratio < math.inf
    # The loop swap's bound: 0 or one of the doubling outputs it was timed on, within the 16 MiB given.
    swaps = [costs.SWAP_FIRST << k for k in range(4)]
    assert measured.swap_bytes in ([0, *swaps] if copy_kernel.available() else [costs.DEFAULT.swap_bytes])
    if cpus == 1:  # one core: a second thread is never worth it
        assert measured.handoff_ns > 1e9 and measured.byte_mem2_ns == measured.byte_mem_ns


@pytest.mark.parametrize("llc", [2 << 20, 32 << 20, 1 << 30], ids=["2MiB", "32MiB", "1GiB"])
def test_write_rates_follow_where_the_destination_lives(llc):
    model = dataclasses.replace(BENCH, llc_bytes=llc, byte_l2_ns=0.01, byte_llc_ns=0.03, byte_mem_ns=0.08)
    assert model.byte_ns(1024) == 0.01  # within half of L2
    assert model.byte_ns(llc // 4) == pytest.approx(0.03)
    assert model.byte_ns(llc) == pytest.approx(0.03)
    assert model.byte_ns(llc + 4096) == model.byte_ns(64 * llc) == 0.08  # beyond the last-level cache
    sizes = [1 << k for k in range(10, 40)]
    assert all(a <= b for a, b in zip(map(model.byte_ns, sizes), map(model.byte_ns, sizes[1:]), strict=False))


def test_runs_too_short_for_rep_movsb_pay_their_measured_share_past_l2():
    # Runs of up to 8 KiB are written with vector stores, longer ones with rep movsb at the rates
    # calibration measures on long rows. A 38 MiB Tile of 960-byte rows gathered on two threads took
    # 673 us where its temporary's runs of 34560 bytes took 391, both priced at one rate. They pay a
    # share of the rate at their destination's size, whatever the threads' rate there.
    share = 0.3
    model, flat = (dataclasses.replace(BENCH, short_run_ratio=r) for r in (share, 0.0))

    def extra(nbytes: int, threads: int = 1) -> float:
        return nbytes * share * BENCH.byte_ns(nbytes, threads)

    rows = ((40000, 960, 0), (240, 4, 4))  # 38 MiB of 960-byte rows: past the last level
    nbytes = 40000 * 960
    assert BENCH.byte_ns(nbytes) > BENCH.byte_ns(20000 * 960)  # so the two sizes below pay apart
    charged = pricing.gather_cost(rows, 4, model, 1)
    flat_cost = pricing.gather_cost(rows, 4, flat, 1)
    assert charged == pytest.approx((flat_cost[0] + extra(nbytes), flat_cost[1] + extra(nbytes, 2)))
    numpy_rows = pricing.numpy_cost(rows, 4, model, 1)[0] - pricing.numpy_cost(rows, 4, flat, 1)[0]
    assert numpy_rows == pytest.approx(extra(nbytes))
    within = ((20000, 960, 0), (240, 4, 4))  # 19 MiB: within the last level
    (one, two), (flat_one, flat_two) = (pricing.gather_cost(within, 4, m, 1) for m in (model, flat))
    assert (one - flat_one, two - flat_two) == pytest.approx((extra(20000 * 960), extra(20000 * 960, 2)))
    # Runs past 8 KiB, and any runs into a destination within L2, are not charged.
    long_rows = ((1100, 34560, 0), (8640, 4, 4))
    assert pricing.numpy_cost(long_rows, 4, model, 1) == pricing.numpy_cost(long_rows, 4, flat, 1)
    small = ((100, 960, 0), (240, 4, 4))
    assert pricing.gather_cost(small, 4, model, 1) == pricing.gather_cost(small, 4, flat, 1)
    # 1.5 MiB: past twice L2 for one thread, within each of two threads' share of that (plans of 1-2
    # MiB charged on two threads went to one thread's fan-outs, 1.5-1.7x slower).
    mid = ((1638, 960, 0), (240, 4, 4))
    (one, two), (flat_one, flat_two) = (pricing.gather_cost(mid, 4, m, 1) for m in (model, flat))
    assert one == pytest.approx(flat_one + extra(1638 * 960)) and two == flat_two
    if copy_kernel.available():  # the kernel's plain copies: its runs as it loops over them
        kernel_rows = (
            pricing.plain_kernel_cost(rows, 4, model)[0] - pricing.plain_kernel_cost(rows, 4, flat)[0]
        )
        assert kernel_rows == pytest.approx(extra(nbytes))
        assert pricing.plain_kernel_cost(long_rows, 4, model) == pricing.plain_kernel_cost(long_rows, 4, flat)


def test_a_streamed_source_past_the_last_level_costs_what_reading_it_from_memory_was_measured_to_add():
    model = dataclasses.replace(EPYC, mem_src_ns=0.015, mem_src2_ns=0.005, kernel_byte2_ns=0.02)
    assert model.memory_src_ns(8 * MIB) == 0.0  # within one thread's last level
    assert model.memory_src_ns(16 * MIB) == pytest.approx(0.015)  # a doubling past its edge
    assert model.memory_src_ns(12 * MIB) == pytest.approx(0.015 * math.log(1.5) / math.log(2))
    assert model.memory_src_ns(16 * MIB, 2) == 0.0  # within two threads' own edge
    assert model.memory_src_ns(32 * MIB, 2) == model.memory_src_ns(1 << 30, 2) == pytest.approx(0.005)
    # What src_ns charges a source past L2 is not charged twice; a last level dearer than memory adds none.
    assert dataclasses.replace(model, far_src_ns=0.01).memory_src_ns(64 * MIB) == pytest.approx(0.005)
    assert dataclasses.replace(model, far_src_ns=0.03).memory_src_ns(64 * MIB) == 0.0
    # A streamed copy of 40 MiB the plan wrote itself pays it, one thread more than two; from the
    # caller's input, read once whatever the plan, it does not.
    block = ((40 * MIB, 1, 1),)
    # (two threads streaming well under one's time, so that no tie rule sets their price)
    base = dataclasses.replace(EPYC, mem_src_ns=0.0, mem_src2_ns=0.0, kernel_byte2_ns=0.02)
    if math.isinf(pricing.kernel_cost(block, 1, base, 1)[0]):
        pytest.skip(f"the copy kernel is not loaded here: {copy_kernel.status()}")
    for own, extra in ((True, (0.015, 0.005)), (False, (0.0, 0.0))):
        prices = [pricing.kernel_cost(block, 1, m, 1, own_source=own) for m in (base, model)]
        assert prices[1][0] - prices[0][0] == pytest.approx(40 * MIB * extra[0])
        assert prices[1][1] - prices[0][1] == pytest.approx(40 * MIB * extra[1])


def test_a_step_reading_back_what_the_plan_wrote_pays_for_reading_it_from_memory():
    # A 736-byte row repeated 271431 times (200 MiB) on an EPYC VM whose last level costs nothing to
    # read over L2: doubling it streams its last steps from 9-72 MiB of the output just written, which
    # comes back from memory (measured 8.8-9.2 ms), where a fan-out of a 2 KiB block took 7.4.
    if not copy_kernel.has_worker():
        pytest.skip(f"the copy kernel's worker is not here: {copy_kernel.status()}")
    # Each joined run is priced dear here (15 ns; 1.5 in the model) so that, reading its output back
    # for free, doubling's few long steps beat the fan-out's many block-long runs; reading it from
    # memory must turn that around.
    desc = dmltile.tile_desc([92], [271431], dtype="UINT64")
    model = dataclasses.replace(EPYC, kernel_line_ns=15.0)
    kinds = {
        mem: numpy_backend.NumpyTile(
            desc, costs=dataclasses.replace(model, mem_src_ns=mem, mem_src2_ns=mem / 3), threads=2
        ).plan_info()["kind"]
        for mem in (0.0, 0.015)
    }
    assert kinds == {0.0: "double", 0.015: "fanout"}


def test_two_threads_write_at_the_last_levels_rate_up_to_their_own_measured_edge():
    model = dataclasses.replace(
        BENCH, llc_bytes=8 << 20, llc2_bytes=16 << 20, byte_llc2_ns=0.01, byte_mem2_ns=0.04
    )
    assert model.two_thread_llc == 16 << 20
    assert model.byte_ns(12 << 20, 2) == pytest.approx(0.01)  # past one thread's edge, within two threads'
    assert model.byte_ns(12 << 20, 1) == model.byte_mem_ns
    # Past it, the rate rises over two doublings to memory's (on log size: halfway at twice the edge).
    assert model.byte_ns(32 << 20, 2) == pytest.approx(0.025)
    assert model.byte_ns(64 << 20, 2) == model.byte_ns(1 << 30, 2) == pytest.approx(0.04)
    # Not measured (0): two threads meet the last level where one does, and past it memory at once.
    same = dataclasses.replace(model, llc2_bytes=0)
    assert same.two_thread_llc == 8 << 20 and same.byte_ns((8 << 20) + 4096, 2) == 0.04
    # With a rate measured at twice the edge, through it; one past memory's is memory's.
    far = dataclasses.replace(model, byte_far2_ns=0.03)
    assert far.byte_ns(32 << 20, 2) == pytest.approx(0.03)
    assert far.byte_ns(int(2**25.5), 2) == pytest.approx(0.035, rel=1e-6)  # halfway to 64 MiB on log size
    assert far.byte_ns(16 << 20, 2) == pytest.approx(0.01) and far.byte_ns(64 << 20, 2) == pytest.approx(0.04)
    reached = dataclasses.replace(model, byte_far2_ns=0.05)
    assert reached.byte_ns(32 << 20, 2) == reached.byte_ns(48 << 20, 2) == pytest.approx(0.04)
    assert far.byte_ns(32 << 20, 1) == model.byte_ns(32 << 20, 1)  # one thread's curve is its own


MIB = 1 << 20


def test_two_threads_edge_is_the_last_size_nearer_the_caches_rate_than_memorys():
    sizes = [8 * MIB, 16 * MIB, 32 * MIB, 64 * MIB]
    # An EPYC VM's two threads rewriting an output in a loop (ns per byte): in cache up to 16 MiB.
    assert costs.two_thread_edge(sizes, [0.009, 0.012, 0.039, 0.045]) == 16 * MIB
    assert costs.two_thread_edge(sizes, [0.009, 0.013, 0.019, 0.045]) == 32 * MIB
    assert costs.two_thread_edge(sizes, [0.009, 0.03, 0.039, 0.045]) == 8 * MIB  # the next is nearer memory
    assert costs.two_thread_edge(sizes, [0.02, 0.021, 0.022, 0.024]) == 0  # no change: nothing learnt
    assert costs.two_thread_edge(sizes[:1], [0.02]) == 0


def test_several_calibrations_give_each_time_the_least_measured_and_the_median_edge():
    runs = [
        dataclasses.replace(BENCH, byte_l2_ns=0.04, share_ns=700.0, llc2_bytes=16 * MIB, swap_bytes=0),
        dataclasses.replace(BENCH, byte_l2_ns=0.02, share_ns=900.0, llc2_bytes=0, swap_bytes=64 * MIB),
        dataclasses.replace(BENCH, byte_l2_ns=0.03, share_ns=800.0, llc2_bytes=32 * MIB, swap_bytes=MIB),
    ]
    runs = [dataclasses.replace(run, short_run_ratio=r) for run, r in zip(runs, (0.5, 0.1, 0.3), strict=True)]
    merged = costs.least_of(runs)
    assert (merged.byte_l2_ns, merged.share_ns, merged.llc2_bytes) == (0.02, 700.0, 16 * MIB)
    assert merged.swap_bytes == MIB  # sizes where a rate changes: the median, as two threads' edge
    assert merged.short_run_ratio == 0.3  # a share, not a time: the median as well
    assert (merged.llc_bytes, merged.kernel_shares) == (BENCH.llc_bytes, BENCH.kernel_shares)
    # Two threads' memory rates, which switch between a fast and a slow one on some hosts, are the
    # typical ones: one calibration that met the fast rate does not set them.
    rates = [(0.037, 0.036, 0.01, 1.4), (0.021, 0.020, 0.0, 0.5), (0.040, 0.037, 0.012, 1.7)]
    runs = [
        dataclasses.replace(BENCH, byte_mem2_ns=m, kernel_byte2_ns=k, kernel_bounce2_ns=b, kernel_few2_ns=f)
        for m, k, b, f in rates
    ]
    merged = costs.least_of(runs)
    two = (merged.byte_mem2_ns, merged.kernel_byte2_ns, merged.kernel_bounce2_ns, merged.kernel_few2_ns)
    assert two == (0.037, 0.036, 0.01, 1.4)


def test_reused_arrays_see_new_contents():
    # Views of arrays passed again are cached: a changed input, another input or output must still be honoured.
    op = numpy_backend.NumpyTile(dmltile.tile_desc([2] * 8, [2] * 8), threads=1, costs=BENCH)
    assert len(op.array_plan.steps) > 1  # a multi-step plan, run through the cached views
    x = np.arange(256, dtype=np.float32).reshape([2] * 8)
    out = np.empty(op.out_shape, np.float32)
    for _ in range(2):
        assert np.array_equal(op(x, out), np.tile(x, [2] * 8))
        x *= 3
    other = np.empty_like(out)
    y = -x
    assert np.array_equal(op(y, other), np.tile(y, [2] * 8)) and np.array_equal(
        op(x, out), np.tile(x, [2] * 8)
    )
    non_contiguous = np.asfortranarray(x)
    assert np.array_equal(op(non_contiguous, out), np.tile(x, [2] * 8))


@pytest.mark.parametrize("cliff", [True, False], ids=["movsb-cliff", "no-cliff"])
@pytest.mark.parametrize("kernel", [False, True], ids=["numpy-only", "kernel"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shift", [0, 8, 16, 24, 32, 48, 56])
def test_misaligned_buffers_take_the_piecewise_copy(monkeypatch, threads, shift, kernel, cliff):
    # 4 KiB rows repeated: memmove would use rep movsb, slow on some CPUs when out sits 8-24 bytes
    # (mod 64) past x; NumPy's copies then move the rows as pieces instead. The copy kernel has its
    # own loop for that case, so with it loaded the plan has no alternative, and on a CPU calibrated
    # without the slow case neither has a plan of NumPy's copies. Every alignment gives the same bytes.
    if kernel and not copy_kernel.available():
        pytest.skip(f"the copy kernel is not loaded here: {copy_kernel.status()}")
    if not kernel:
        monkeypatch.setattr(copy_kernel, "_load", lambda: (None, "switched off by the test"))
    prefer = "split" if threads == 2 else ()
    monkeypatch.setattr(numpy_backend, "make_plan", functools.partial(plan.make_plan, prefer=prefer))
    desc = dmltile.tile_desc([64, 1024], [3, 4], dtype="FLOAT32")
    machine = dataclasses.replace(BENCH_NUMPY_ONLY, misaligned_ratio=10.0 if cliff else 1.1)
    op = numpy_backend.NumpyTile(desc, threads=threads, costs=machine)
    whens = {s.when for s in op.array_plan.steps}
    assert whens == {"always"} if kernel or not cliff else whens >= {"aligned", "misaligned"}
    raw_x = np.zeros(64 * 1024 * 4 + 128, np.uint8)
    raw_out = np.zeros(op.out_bytes + 128, np.uint8)
    x_at = -raw_x.ctypes.data % 64
    out_at = (-raw_out.ctypes.data + shift) % 64
    x = raw_x[x_at : x_at + 64 * 1024 * 4].view(np.float32).reshape(64, 1024)
    x[...] = np.arange(x.size, dtype=np.float32).reshape(x.shape)
    out = raw_out[out_at : out_at + op.out_bytes].view(np.float32).reshape(op.out_shape)
    assert copy_steps.misaligned(out.ctypes.data, x.ctypes.data) == (0 < shift < 32)
    assert np.array_equal(op(x, out), np.tile(x, (3, 4)))


def test_reused_arrays_on_the_one_copy_path():
    op = numpy_backend.NumpyTile(dmltile.tile_desc([2, 3, 4], [1, 2, 3]), costs=BENCH)
    assert op.plan_info()["reshape"]  # two reshapes and one copy, kept for arrays passed again
    out = np.empty(op.out_shape, np.float32)
    for x in (
        np.arange(24, dtype=np.float32).reshape(2, 3, 4),
        np.asfortranarray(np.ones((2, 3, 4), np.float32)),
    ):
        for k in range(3):
            x += k
            assert np.array_equal(op(x, out), np.tile(x, (1, 2, 3)))


# Write rates (ns per byte) into 64 KiB, 128 KiB, ... 256 MiB, as measured on the project's VM, which
# reports a 2 MiB L2 and a 480 MiB last level: the rate rises past 1 MiB and again past 64 MiB.
VM_SIZES = [64 << (10 + k) for k in range(13)]
VM_RATES = [0.019, 0.017, 0.016, 0.016, 0.016, 0.023, 0.035, 0.035, 0.036, 0.035, 0.038, 0.055, 0.08]


def test_cache_points_are_where_the_measured_rate_changes():
    reported = Machine(l2_bytes=2 << 20, llc_bytes=480 << 20, cpus=2)
    assert costs.cache_points(VM_SIZES, VM_RATES, reported) == Machine(2 << 20, 64 << 20, 2)
    noisy = VM_RATES[:7] + [0.046] + VM_RATES[8:]  # one slow point inside the last level: smoothed out
    assert costs.cache_points(VM_SIZES, noisy, reported).llc_bytes == 64 << 20
    # Never above what the system reports, and a curve without a change keeps the reported figures.
    small = Machine(l2_bytes=512 << 10, llc_bytes=32 << 20, cpus=2)
    assert costs.cache_points(VM_SIZES, VM_RATES, small) == small
    assert costs.cache_points(VM_SIZES, [0.02] * len(VM_SIZES), reported) == reported


def test_cache_points_on_a_noisy_curve_without_a_visible_l2_step():
    # An EPYC VM reporting 1 MiB of L2 and a 32 MiB last level, timed with busy neighbours: slower per
    # byte into 64 KiB than into 256 KiB (the call's own cost), a bump at 2 MiB, then 2x past 8 MiB.
    sizes = [64 << (10 + k) for k in range(11)]
    rates = [0.0237, 0.0197, 0.0179, 0.0166, 0.0174, 0.0265, 0.0182, 0.0180, 0.0412, 0.0706, 0.0770]
    reported = Machine(l2_bytes=1 << 20, llc_bytes=32 << 20, cpus=2)
    assert costs.cache_points(sizes, rates, reported) == Machine(1 << 20, 8 << 20, 2)
    bumpier = rates[:5] + [0.0222, 0.0195, 0.0260] + rates[8:]  # 1.3x the level inside the last level
    assert costs.cache_points(sizes, bumpier, reported) == Machine(1 << 20, 8 << 20, 2)


def test_a_faked_machine_is_not_measured(tmp_path, monkeypatch):
    monkeypatch.setenv("DMLTILE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("DMLTILE_CALIBRATE", raising=False)
    monkeypatch.setenv("DMLTILE_MACHINE", "l2=256KiB,llc=2MiB")
    monkeypatch.setattr(costs, "measured_caches", lambda machine: pytest.fail("a fake was measured"))
    monkeypatch.setattr(
        costs,
        "calibrate",
        lambda machine, **_: costs.CopyCosts(
            l2_bytes=machine.l2_bytes, llc_bytes=machine.llc_bytes, calibrated=True
        ),
    )
    monkeypatch.setattr(costs, "_costs", None)
    assert (costs.machine_costs().l2_bytes, costs.machine_costs().llc_bytes) == (256 << 10, 2 << 20)


def test_thousands_of_short_rows_run_as_one_kernel_call_and_long_rows_as_one_copy():
    # Rows of 3 int16 repeated 10 times: 3000 moves of 6 bytes, each an opaque element of NumPy's loop,
    # or a constant-size move in the copy kernel (whose call costs more). Long rows: one memmove a row.
    if not copy_kernel.available():
        pytest.skip(f"the copy kernel is not loaded here: {copy_kernel.status()}")
    model = dataclasses.replace(BENCH, kernel_calibrated=True)
    short = numpy_backend.NumpyTile(dmltile.tile_desc([300, 3], [1, 10], dtype="INT16"), costs=model)
    assert short.plan_info()["one_kernel_call"] and not short.plan_info()["reshape"]
    x = np.arange(900, dtype=np.int16).reshape(300, 3)
    assert np.array_equal(short(x), np.tile(x, [1, 10]))
    without = numpy_backend.NumpyTile(
        dmltile.tile_desc([300, 3], [1, 10], dtype="INT16"), costs=BENCH_NUMPY_ONLY
    )
    assert without.plan_info()["reshape"]
    long = numpy_backend.NumpyTile(dmltile.tile_desc([4, 1024], [2, 1], dtype="INT16"), costs=model)
    assert long.plan_info()["reshape"]


@pytest.mark.parametrize(("rows", "row", "kernel"), [(50, 12, False), (124, 3, True)])
def test_a_small_copy_leaves_its_reshapes_only_for_a_kernel_call_priced_well_under_them(rows, row, kernel):
    # Rows of int16 repeated 10 times, one copy: run as reshapes and np.copyto, or as one kernel call
    # when that is priced under RESHAPE_MARGIN of the reshapes (both prices are off by up to a tenth
    # in a call among other work). The first case is priced a little under its reshapes and stays.
    if not copy_kernel.available():
        pytest.skip(f"the copy kernel is not loaded here: {copy_kernel.status()}")
    model = dataclasses.replace(BENCH, kernel_calibrated=True)
    op = numpy_backend.NumpyTile(dmltile.tile_desc([rows, row], [1, 10], dtype="INT16"), costs=model)
    (step,) = op.array_plan.steps
    axes = copy_axes.simplify(tuple(zip(step.shape, step.dst_strides, step.src_strides, strict=True)))
    ratio = (pricing.program_cost(axes, step.width, model) + model.runner_work_ns) / pricing.numpy_cost(
        axes, step.width, model, 0
    )[0]
    assert (ratio < 1) and (ratio < plan.RESHAPE_MARGIN) == kernel
    assert op.plan_info()["reshape"] != kernel and op.plan_info()["one_kernel_call"] == kernel
    x = np.arange(rows * row, dtype=np.int16).reshape(rows, row)
    assert np.array_equal(op(x), np.tile(x, [1, 10]))


def test_a_tiny_fan_out_priced_a_little_under_its_reshapes_stays_reshapes(monkeypatch):
    # 384 bytes: a fan-out in one kernel call is priced some 12% under two reshapes and np.copyto, not
    # by RESHAPE_MARGIN; here one copy as reshapes ran in 0.80 us, the fan-out in 0.86.
    if not copy_kernel.available():
        pytest.skip(f"the copy kernel is not loaded here: {copy_kernel.status()}")
    model = dataclasses.replace(BENCH, kernel_calibrated=True)
    desc = dmltile.tile_desc([1, 4, 2], [1, 6, 4], dtype="FLOAT16")
    assert numpy_backend.NumpyTile(desc, costs=model).plan_info()["reshape"]
    monkeypatch.setattr(plan, "RESHAPE_MARGIN", 1.0)  # priced as they are, the fan-out wins
    assert numpy_backend.NumpyTile(desc, costs=model).plan_info()["kind"] == "fanout"


def test_a_small_copy_cheaper_as_reshapes_than_on_two_threads_stays_on_one():
    # 504 rows of 96 bytes (rows of 24 uint32 repeated 36 times, 47 KiB), priced with a 2-core VM's
    # figures: two threads through the runner pay its work, the kernel's call and the share; here they
    # ran in 3.2 us where two reshapes and np.copyto on one thread took 2.7. With sharing free, two
    # threads are priced under the reshapes and the copy goes to them.
    if not copy_kernel.available():
        pytest.skip(f"the copy kernel is not loaded here: {copy_kernel.status()}")
    vm = dataclasses.replace(
        BENCH,
        kernel_calibrated=True,
        kernel_shares=True,
        l2_bytes=2 << 20,
        llc_bytes=64 << 20,
        call_ns=303.0,
        view_ns=369.0,
        loop_ns=4.4,
        vchunk_ns=3.0,
        byte_l2_ns=0.024,
        byte_small2_ns=0.0123,
        share_ns=1223.0,
        kernel_call_ns=257.0,
        kernel_copy_ns=3.2,
    )
    desc = dmltile.tile_desc([14, 6, 4], [1, 36, 1], dtype="UINT32")
    x = np.arange(14 * 6 * 4, dtype=np.uint32).reshape(14, 6, 4)
    for model, threads in ((vm, []), (dataclasses.replace(vm, share_ns=0.0), [0])):
        op = numpy_backend.NumpyTile(desc, costs=model)
        assert op.plan_info()["threads"] == threads
        assert op.plan_info()["reshape"] == (threads == [])
        assert np.array_equal(op(x), np.tile(x, [1, 36, 1]))


def test_a_block_just_written_costs_two_threads_its_move_to_the_other_core():
    # A fan-out reads the block the calling thread has just written: on two threads the worker first
    # takes its lines from the other core, priced per byte of the block (moved_ns); one thread does not.
    fan = ((13, 31008, 0), (7752, 4, 4))
    region = 14 * 31008
    prices = [
        pricing.copy_ways(
            fan, 4, dataclasses.replace(BENCH, moved_ns=moved), 2, 1, True, frozenset(), region, True
        )
        for moved in (0.0, 0.1)
    ]
    (one_a, two_a), (one_b, two_b) = (p[0] for p in prices)
    assert one_a == one_b
    assert two_b - two_a == pytest.approx(31008 * 0.1)


def test_two_threads_are_taken_only_when_priced_well_under_one():
    # Two threads must save a share of one thread's price (TWO_THREAD_MARGIN) and one more handoff.
    # The fan-out of a 423 KiB Tile: as the lines its worker takes from the other core move its
    # two-thread price across that bound, the phase goes to two threads only under it.
    if not copy_kernel.available():
        pytest.skip(f"the copy kernel is not loaded here: {copy_kernel.status()}")
    model = dataclasses.replace(
        BENCH,
        kernel_calibrated=True,
        kernel_shares=True,
        share_ns=500.0,
        moved_ns=0.0,
        byte_small2_ns=0.001,  # two threads all but free, then priced up by the block's move below
        byte_near2_ns=0.001,
        byte_llc2_ns=0.001,
    )
    handoff = model.handoff_ns
    assert handoff > 0
    bound = pricing.TWO_THREAD_MARGIN * 1e5 - handoff
    assert pricing.on_two(1e5, bound - 1.0, model) and not pricing.on_two(1e5, bound + 1.0, model)
    assert pricing.on_two(1e5, bound + 1.0, dataclasses.replace(model, share_ns=0.0))  # the handoff counts
    fan = copy_axes.simplify(((13, 31008, 0), (7752, 4, 4)))
    one, two = pricing.step_cost(fan, 4, model, 2, 1, True, frozenset(), 14 * 31008)
    bound = pricing.TWO_THREAD_MARGIN * one - handoff
    for target, split in ((bound + 0.02 * one, False), (bound - 0.02 * one, True)):
        moved = model.moved_ns + (target - two) / 31008  # charged per byte of the block, two threads only
        assert moved >= 0
        emitter = copy_steps.Emitter(4, dataclasses.replace(model, moved_ns=moved), 2, frozenset())
        emitter.emit(((14, 31008, 0), (7752, 4, 4)), ("fanout", 1, ("direct", -1, 1)), "out", 0, "in")
        made = emitter.plan("fanout")
        (fan_step,) = [step for step in made.steps if step.src == "out"]
        assert (fan_step.phase in made.split) == split


def test_a_small_plan_goes_to_two_threads_only_under_the_margin_of_the_best_plan_on_one(monkeypatch):
    # Rows of 5 int64 each written twice, 118 of them repeated 5 and 2 times (92 KiB), priced with an
    # EPYC VM's figures: one direct copy on two threads comes out a little under the best plan on one
    # thread (a fan-out), not under TWO_THREAD_MARGIN of it; as small as this, the one-thread plan is
    # taken. Above SMALL_PLAN_BYTES the recipes' own prices decide, as before.
    if not copy_kernel.available():
        pytest.skip(f"the copy kernel is not loaded here: {copy_kernel.status()}")
    sizes, repeats = [1, 1, 118, 1, 1, 1, 5], [1, 5, 2, 1, 1, 2, 1]
    desc = dmltile.tile_desc(sizes, repeats, dtype="INT64")
    strides = [s * 8 for s in desc.input.effective_strides], [s * 8 for s in desc.output.effective_strides]
    whole = copy_axes.simplify(copy_axes.tile_axes(sizes, repeats, *strides))
    one, two = (plan._chunks_or_whole(whole, 8, plan.TEMP_LIMIT, EPYC, t, frozenset())[2] for t in (1, 2))
    assert pricing.TWO_THREAD_MARGIN * one <= two < one
    assert 94400 <= plan.SMALL_PLAN_BYTES
    x = np.arange(118 * 5, dtype=np.int64).reshape(sizes)
    for bound, threads in ((plan.SMALL_PLAN_BYTES, []), (94400 - 1, [0])):
        monkeypatch.setattr(plan, "SMALL_PLAN_BYTES", bound)
        op = numpy_backend.NumpyTile(desc, costs=EPYC)
        assert op.plan_info()["threads"] == threads
        assert np.array_equal(op(x), np.tile(x, repeats))


def test_plan_info_describes_the_plan_that_runs_buffers_when_asked():
    # A padded 2x3 input: arrays run as two reshapes and one copy, buffers through their own plan
    # (gathering the padded rows), which plan_info(buffers=True) describes.
    op = numpy_backend.NumpyTile(
        dmltile.tile_desc([2, 3], [1, 2], dtype="INT16", strides=[4, 1]), costs=BENCH
    )
    assert op.plan_info()["reshape"]
    info = op.plan_info(buffers=True)
    assert op.buffer_plan is not None and not info["reshape"]
    assert (info["kind"], info["steps"]) == (op.buffer_plan.kind, len(op.buffer_plan.steps))


def test_a_source_past_the_last_level_is_banded_only_when_it_is_read_again_from_there():
    # A 40 MiB int8 source on a machine with a 32 MiB last level. Rows of 342 KiB each repeated twice
    # in place read each source byte twice, 342 KiB apart (from L2 the second time): one streamed copy.
    # The whole source repeated twice reads it again 40 MiB later, from memory: bands of the source,
    # each repeated while it is in cache.
    if not copy_kernel.available():
        pytest.skip(f"the copy kernel is not loaded here: {copy_kernel.status()}")
    assert copy_axes.reread_span(((117, 699352, 349676), (2, 349676, 0), (349676, 1, 1)), 1) == 349676
    assert copy_axes.reread_span(((2, 40912092, 0), (40912092, 1, 1)), 1) == 40912092
    assert copy_axes.reread_span(((40912092, 1, 1),), 1) == 0
    model = dataclasses.replace(
        BENCH, kernel_calibrated=True, kernel_shares=True, l2_bytes=2 << 20, llc_bytes=32 << 20
    )
    in_place = numpy_backend.NumpyTile(dmltile.tile_desc([117, 8132, 43], [1, 2, 1], dtype="INT8"), 2, model)
    assert in_place.plan_info()["kind"] == "direct" and len(in_place.array_plan.steps) == 1
    assert in_place.plan_info()["stream"]
    whole = numpy_backend.NumpyTile(dmltile.tile_desc([117, 8132, 43], [2, 1, 1], dtype="INT8"), 2, model)
    assert whole.plan_info()["kind"] == "band" and len(whole.array_plan.steps) > 1


def test_a_doubling_step_is_priced_at_the_rate_of_the_whole_region_it_doubles_into():
    # The first steps of a doubling write slices far smaller than L2, but the later ones write the rest
    # of a 3.7 MiB region over them: on a 2 MiB L2 none of it stays there. Priced by the slice alone,
    # doubling beat pre-tiling a temporary here and ran 1.2x slower than it.
    model = dataclasses.replace(BENCH, l2_bytes=2 << 20, llc_bytes=64 << 20)
    step = ((64 << 10, 4, 4),)
    alone = pricing.numpy_cost(step, 4, model, 2)[0]
    assert pricing.numpy_cost(step, 4, model, 2, region=15 << 18)[0] > 1.5 * alone
    op = numpy_backend.NumpyTile(dmltile.tile_desc([4, 1, 1, 66, 76], [3, 6, 1, 1, 3], "UINT32"), 1, model)
    assert op.plan_info()["kind"] != "double"


def test_a_row_repeated_back_to_back_is_cut_into_chunks_with_the_rest_copied_apart():
    # A bias of 3 int16 repeated 4099 times (a prime): 6-byte rows fill one run of 24594 bytes. The
    # run is cut into chunks of 682 rows (4092 bytes, under SPLIT_CHUNK), 6 chunks, and the 7 rows
    # they leave are a second copy at the end.
    row = ((3, 2, 2),)
    axes, rest = copy_axes.split_back_to_back(((4099, 6, 0),) + row, 2)
    assert axes == ((6, 4092, 0), (682, 6, 0)) + row
    assert rest == (((7, 6, 0),) + row, 6 * 4092)
    # Outer axes keep their strides; a run whose count has a divisor near a chunk needs no rest.
    axes, rest = copy_axes.split_back_to_back(((5, 8 * 4096, 4), (4096, 8, 0), (2, 4, 4)), 4)
    assert axes == ((5, 8 * 4096, 4), (8, 4096, 0), (512, 8, 0), (2, 4, 4)) and rest is None
    # Rows that are not back to back (a gap between repeats), or already long runs, stay as they are.
    for unchanged in (((4099, 8, 0), (3, 2, 2)), ((10, 4000, 0), (2000, 2, 2))):
        assert copy_axes.split_back_to_back(unchanged, 2) == (unchanged, None)


@pytest.mark.parametrize("count", [4099, 4096, 30011])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_bias_row_broadcast_to_many_rows_equals_numpy_tile(count, threads):
    x = np.array([[1, -2, 3]], np.int16)
    op = numpy_backend.NumpyTile(dmltile.tile_desc([1, 3], [count, 1], dtype="INT16"), threads=threads)
    assert np.array_equal(op(x), np.tile(x, (count, 1)))


@pytest.mark.parametrize("model", [BENCH, BENCH_NUMPY_ONLY], ids=["kernel", "numpy-only"])
@pytest.mark.parametrize("threads", [1, 2])
def test_repeats_left_over_by_the_chunks_are_not_read_again_from_a_strided_input(model, threads):
    # Rows of 21 float64, 48 bytes apart (a padded input), each repeated 109 times. Cut into chunks of 24
    # repeats, 13 are left over; the chunks' plan gathers the rows first, and the left-over copy would
    # read the input again element by element: the whole fan-out from the gathered rows costs less.
    strides = [21 * 48, 48]
    p = plan.make_plan([2376, 21], [1, 109], strides, [109 * 168, 8], 8, threads=threads, costs=model)
    assert not any(step.src == "in" and step.dst == "out" for step in p.steps)
    assert any(step.src == "in" for step in p.steps)
    # And such a plan writes the Tile: a small one through the op, on raw buffers.
    desc = dmltile.tile_desc([6, 21], [1, 109], dtype="FLOAT64", strides=[21 * 6, 6])
    op = numpy_backend.NumpyTile(desc, threads=threads, costs=model)
    x = np.arange(6 * 21 * 6, dtype=np.float64)
    out = np.zeros(6 * 109 * 21)
    op.run_buffers(x, out)
    assert np.array_equal(out.reshape(6, -1), np.tile(x.reshape(6, 21, 6)[..., 0], (1, 109)))


def _at(raw: np.ndarray, offset: int, dtype, shape) -> np.ndarray:
    """An array of ``shape`` in ``raw`` starting ``offset`` bytes past a 64-byte boundary."""
    start = (-raw.ctypes.data) % 64 + offset
    return raw[start : start + int(np.prod(shape)) * np.dtype(dtype).itemsize].view(dtype).reshape(shape)


@pytest.mark.parametrize("shift", [0, 8, 40])
def test_small_copies_of_long_chunks_leave_np_copyto_where_rep_movsb_would_be_slow(shift):
    # Two rows of 1248 float32 repeated twice (19.5 KiB): one step, run as reshapes and np.copyto,
    # whose 9984-byte chunks memmove hands to rep movsb. With the output a few bytes past the input
    # (modulo 64) every chunk would meet its slow case; the same step then runs in the copy kernel.
    if not copy_kernel.available():
        pytest.skip(f"the copy kernel is not loaded here: {copy_kernel.status()}")
    op = numpy_backend.NumpyTile(dmltile.tile_desc([2, 1248], [2, 1]), threads=1, costs=BENCH)
    assert op.plan_info()["reshape"] and op._cliff == {d for d in range(64) if copy_steps.misaligned(d, 0)}
    raw_x, raw_out = np.zeros(10240 + 128, np.uint8), np.zeros(4 * 10240 + 128, np.uint8)
    x = _at(raw_x, 0, np.float32, (2, 1248))
    x[...] = np.arange(2 * 1248).reshape(2, 1248)
    out = _at(raw_out, shift, np.float32, (4, 1248))
    for _ in range(2):  # the first call decides, the second reuses the decision
        assert np.array_equal(op(x, out), np.tile(x, (2, 1)))
        assert (op._last_fast[2] is None) == copy_steps.misaligned(out.ctypes.data, x.ctypes.data)
    # Chunks of 2 KiB or less stay with np.copyto whatever the addresses; chunk copies whose address
    # difference steps through the residues meet the slow case for any base.
    assert not numpy_backend.NumpyTile(dmltile.tile_desc([2, 256], [2, 1]), costs=BENCH)._cliff
    # On a CPU calibrated without the slow case, np.copyto keeps every chunk whatever the addresses.
    no_cliff = dataclasses.replace(BENCH, misaligned_ratio=1.1)
    assert not numpy_backend.NumpyTile(dmltile.tile_desc([2, 1248], [2, 1]), threads=1, costs=no_cliff)._cliff
    assert (
        len(numpy_backend.NumpyTile(dmltile.tile_desc([729], [7], dtype="UINT64"), costs=BENCH)._cliff) == 64
    )


def test_a_fan_outs_first_block_is_priced_as_a_slice_of_the_output():
    # The block a fan-out copies from is a slice of the output, and the output's other writes push it
    # out of the caches on every call as much as its own do: a block that alone would fit in the last
    # level is priced at the whole output's rates, its ordinary stores at memory's, and streaming it
    # becomes a choice.
    if not copy_kernel.available():
        pytest.skip(f"the copy kernel is not loaded here: {copy_kernel.status()}")
    block = ((786432, 8, 8),)  # 6 MiB, under the model's 8 MiB last level
    alone = pricing.copy_ways(block, 8, EPYC, 1, 1, True, frozenset())
    inside = pricing.copy_ways(block, 8, EPYC, 1, 1, True, frozenset(), 7 * 6 << 20)
    assert alone[1] == (math.inf, math.inf)  # fits: never streamed
    assert inside[0][0] > alone[0][0]  # ordinary stores at the rate of an output in memory
    assert inside[1][0] < inside[0][0]  # and streaming it is cheaper


def test_a_slice_of_an_output_past_the_last_level_is_streamed_on_one_thread():
    # Seven copies of a 6 MiB input (42 MiB; the model's last level 8 MiB) on one thread: written as a
    # fan-out from a block with ordinary stores, the block's lines are read from memory before being
    # written on every call (84 MiB of seven copies of a 12 MiB input on the EPYC VM, two threads: 3.5
    # ms that way, 2.2 as one streamed copy, in the host's fast spells).
    if not copy_kernel.available():
        pytest.skip(f"the copy kernel is not loaded here: {copy_kernel.status()}")
    desc = dmltile.tile_desc([786432, 1], [7, 1], dtype="INT64")
    x = np.arange(786432, dtype=np.int64).reshape(-1, 1)
    op = numpy_backend.NumpyTile(desc, threads=1, costs=EPYC)
    assert all(step.stream for step in op.array_plan.steps if step.dst == "out")
    assert np.array_equal(op(x), np.tile(x, [7, 1]))
