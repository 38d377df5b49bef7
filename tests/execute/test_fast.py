"""The fast path (dmltile/execute/fast): every recipe kind against the reference, the axis merge,
the planner's rules, and the kernel's worker. Recipes are handed to the emitter directly."""

from __future__ import annotations

import multiprocessing
import threading
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.execute import numpy_backend
from dmltile.execute.fast import kernel
from dmltile.execute.fast.emit import Runner
from dmltile.execute.fast.recipe import (
    Axis,
    Recipe,
    Traits,
    plan,
    replicating,
    simplest,
    this_machine,
    tile_axes,
)
from tests.exec_reference import DTYPES, SENTINEL, descriptors, run_naive

KERNEL = kernel.loaded() is not None
WORKER = kernel.table().get("worker") == 1
needs_kernel = pytest.mark.skipif(not KERNEL, reason=f"the copy kernel is not loaded: {kernel.status()}")
needs_worker = pytest.mark.skipif(not WORKER, reason=f"no kernel worker here: {kernel.status()}")
# A machine with everything, for plans the tests run whatever this one has.
FULL = Traits(kernel=True, worker=True, cores=2, llc_bytes=1 << 20, max_dims=32, two_thread_min=1 << 16)


def kinds(axes, run) -> dict[str, Recipe]:
    """Every kind of recipe for these axes that this build can run, by name."""
    numpy = Recipe("numpy", tuple(axes), run)
    if not KERNEL:
        return {"numpy": numpy}
    planned = plan(axes, run, FULL)
    every = replace(planned, threads=2 if WORKER else 1, stream=True)
    return {
        "numpy": numpy,
        "simplest": simplest(axes, run, FULL),
        "replicate": replace(planned, threads=1, stream=False),
        "replicate+stream": replace(planned, threads=1, stream=True),
        "two-threads": replace(planned, threads=2 if WORKER else 1, stream=False),
        "all": every,
        "loops+two-threads+stream": replace(simplest(axes, run, FULL), threads=every.threads, stream=True),
    }


def buffer_axes(desc: dict):
    """The merged axes and run of a dict descriptor on its buffers' strides."""
    elem = np.dtype(DTYPES[desc["InputTensor"]["DataType"]]).itemsize
    t_in, t_out = desc["InputTensor"], desc["OutputTensor"]
    return tile_axes(
        t_in["Sizes"],
        desc["Repeats"],
        [s * elem for s in t_in["Strides"]],
        [s * elem for s in t_out["Strides"]],
        elem,
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(desc=descriptors(), seed=st.integers(0, 2**32 - 1))
def test_every_recipe_kind_matches_the_reference_and_leaves_padding_alone(desc, seed):
    # Padded and permuted output strides, padded and zero input strides: every kind writes exactly
    # the reference's bytes and none of the padding (the sentinel stays where no element lives).
    rng = np.random.default_rng(seed)
    in_buf = rng.integers(0, 256, desc["InputTensor"]["TotalTensorSizeInBytes"], dtype=np.uint8)
    size = desc["OutputTensor"]["TotalTensorSizeInBytes"] + 4
    expect = run_naive(desc, in_buf.tobytes(), size)
    for name, recipe in kinds(*buffer_axes(desc)).items():
        out = np.full(size, SENTINEL, np.uint8)
        Runner(recipe)(in_buf, out)
        assert out.tobytes() == expect, name


@st.composite
def tiles(draw, sizes_from=(1, 2, 3, 7, 16, 33), repeats_from=(1, 1, 2, 3, 5, 64), most=1 << 16):
    """(input sizes, repeats) of up to ``most`` output elements, the largest repeat (then size) set to 1
    until it fits: by default outputs up to a few hundred KiB, large enough to cut into chunks."""
    rank = draw(st.integers(1, 5))
    sizes = [draw(st.sampled_from(sizes_from)) for _ in range(rank)]
    repeats = [draw(st.sampled_from(repeats_from)) for _ in range(rank)]
    while np.prod(sizes) * np.prod(repeats) > most:
        if max(repeats) > 1:
            repeats[repeats.index(max(repeats))] = 1
        else:
            sizes[sizes.index(max(sizes))] = 1
    return sizes, repeats


@settings(max_examples=80, deadline=None)
@given(case=tiles(), dtype=st.sampled_from(["uint8", "uint16", "float32", "int64"]))
def test_every_recipe_kind_on_packed_arrays_equals_numpy_tile(case, dtype):
    sizes, repeats = case
    x = np.random.default_rng(len(sizes)).integers(0, 255, sizes).astype(dtype)
    elem = x.itemsize
    out_sizes = [s * r for s, r in zip(sizes, repeats, strict=True)]
    axes = tile_axes(sizes, repeats, _packed(sizes, elem), _packed(out_sizes, elem), elem)
    for name, recipe in kinds(*axes).items():
        out = np.zeros(out_sizes, dtype)
        for _ in range(2):  # the second call is served by the runner's cache
            Runner(recipe)(x, out)
            assert np.array_equal(out.view(np.uint8), np.tile(x, repeats).view(np.uint8)), name


def large_tiles():
    """(input sizes, repeats) with outputs of up to 1 Mi elements: enough bytes that a two-thread
    recipe cuts its phases into many chunks, ranges that cross the indices of the axes outside."""
    return tiles((1, 2, 3, 5, 17, 130), (1, 2, 3, 7, 40), 1 << 20)


@needs_kernel
@settings(max_examples=40, deadline=None)
@given(case=large_tiles(), dtype=st.sampled_from(["uint8", "int16", "int32", "int64"]), stream=st.booleans())
def test_two_thread_recipes_of_large_outputs_equal_numpy_tile(case, dtype, stream):
    # Chunks of every phase (the first blocks gathered, each repeat copied forward) on both threads.
    sizes, repeats = case
    x = np.random.default_rng(len(sizes)).integers(0, 127, sizes).astype(dtype)
    out_sizes = [s * r for s, r in zip(sizes, repeats, strict=True)]
    axes = tile_axes(sizes, repeats, _packed(sizes, x.itemsize), _packed(out_sizes, x.itemsize), x.itemsize)
    recipe = replace(plan(*axes, FULL), threads=2, stream=stream)
    out = np.zeros(out_sizes, dtype)
    Runner(recipe)(x, out)
    assert np.array_equal(out, np.tile(x, repeats))


def _packed(sizes, elem: int) -> list[int]:
    strides, step = [], elem
    for n in reversed(sizes):
        strides.append(step)
        step *= n
    return strides[::-1]


def test_the_merge_drops_size_one_axes_fuses_neighbours_and_folds_the_run():
    # The DirectML page's example: [1,1,2,3] x [1,1,3,3] FLOAT32 is three repeats of two rows of three
    # repeats of a 12-byte row; only the row is contiguous in both buffers.
    axes, run = tile_axes([1, 1, 2, 3], [1, 1, 3, 3], [24, 24, 12, 4], [216, 216, 36, 4], 4)
    assert run == 12
    assert axes == (Axis(3, 72, 0), Axis(2, 36, 12), Axis(3, 12, 0))
    # An outer repeat of a packed input: one axis of 64 repeats over one 16 MiB run.
    axes, run = tile_axes([1, 4096, 1024], [64, 1, 1], [1 << 24, 4096, 4], [1 << 24, 4096, 4], 4)
    assert (axes, run) == ((Axis(64, 16 << 20, 0),), 16 << 20)
    # Two neighbouring repeats fold into one; nothing repeated is the input, one run.
    assert tile_axes([1, 1], [2, 3], [4, 4], [12, 4], 4) == ((Axis(6, 4, 0),), 4)
    assert tile_axes([5, 6], [1, 1], [24, 4], [24, 4], 4) == ((), 120)


def test_only_repeats_whose_blocks_are_back_to_back_copy_forward():
    # A padded output row (stride 40 where 36 bytes are written) leaves gaps that a copy of the first
    # block would fill: the repeats outside it are looped; those inside it still double.
    axes, run = tile_axes([2, 3], [3, 3], [12, 4], [40, 4], 4)
    marked = replicating(axes, run)
    assert [a.replicate for a in marked] == [False, False, True]
    assert [a.replicate for a in replicating(*tile_axes([2, 3], [3, 3], [12, 4], [36, 4], 4))] == [
        True,
        False,
        True,
    ]


def test_the_planner_follows_the_traits_it_is_given():
    # Pinned where a bench class depends on it: "large outputs" stream past the last-level cache,
    # "two threads" and "busy second core" need the worker, two cores and two_thread_min bytes.
    axes, run = tile_axes([1024, 1024], [4, 4], [4096, 4], [16384, 4], 4)  # 64 MiB
    big = plan(axes, run, replace(FULL, llc_bytes=32 << 20, two_thread_min=512 << 10))
    assert big.kind == "kernel" and big.threads == 2 and big.stream
    assert plan(axes, run, replace(FULL, llc_bytes=1 << 30)).stream is False
    assert plan(axes, run, replace(FULL, cores=1)).threads == 1
    assert plan(axes, run, replace(FULL, worker=False)).threads == 1
    assert plan(axes, run, FULL, threads=1).threads == 1
    small = tile_axes([4, 4], [2, 2], [16, 4], [32, 4], 4)
    assert plan(*small, FULL).threads == 1
    assert plan(axes, run, replace(FULL, kernel=False)) == Recipe("numpy", axes, run)
    assert plan(axes, run, replace(FULL, llc_bytes=0)).stream is False  # unknown cache: never stream


def test_this_machine_reads_the_kernels_table_and_fakes_what_it_is_told(monkeypatch):
    monkeypatch.setenv("DMLTILE_MACHINE", "cores=1,llc=2097152")
    traits = this_machine()
    assert (traits.cores, traits.llc_bytes) == (1, 2 << 20)
    assert traits.kernel == KERNEL and traits.two_thread_min == kernel.table().get("two_thread_min", 0)


def test_without_the_kernel_recipes_run_on_numpy(monkeypatch):
    monkeypatch.setenv("DMLTILE_KERNEL", "0")
    kernel._load.cache_clear()
    try:
        assert kernel.loaded() is None and "DMLTILE_KERNEL=0" in kernel.status()
        op = numpy_backend.NumpyTile(dmltile.tile_desc([6, 5], [2, 3]), threads=2)
        assert op.plan_info()["kind"] == "numpy"
        x = np.arange(30, dtype=np.float32).reshape(6, 5)
        assert np.array_equal(op(x), np.tile(x, [2, 3]))
    finally:
        monkeypatch.delenv("DMLTILE_KERNEL")
        kernel._load.cache_clear()


@needs_kernel
def test_a_library_built_from_another_kernel_source_is_not_loaded(monkeypatch, tmp_path):
    (tmp_path / "kernel.c").write_text("/* another kernel */\n")
    (tmp_path / kernel.LIBRARY).write_bytes(kernel.library_path().read_bytes())
    monkeypatch.setattr(kernel, "SOURCE", tmp_path / "kernel.c")
    kernel._load.cache_clear()
    try:
        assert kernel.loaded() is None and "another kernel.c" in kernel.status()
    finally:
        monkeypatch.undo()
        kernel._load.cache_clear()
    assert kernel.loaded() is not None


@pytest.mark.parametrize("use_kernel", [True, False], ids=["kernel", "numpy-only"])
@pytest.mark.parametrize("sizes,repeats", [([4, 6], [3, 2]), ([2] * 6, [2] * 6), ([64, 1], [1, 512])])
def test_an_input_inside_the_output_is_read_first(use_kernel, sizes, repeats):
    # x a view of the very bytes the op overwrites: the result is the tile of x as it was.
    if use_kernel and not KERNEL:
        pytest.skip(f"the copy kernel is not loaded: {kernel.status()}")
    traits = this_machine() if use_kernel else replace(this_machine(), kernel=False)
    op = numpy_backend.NumpyTile(dmltile.tile_desc(sizes, repeats, dtype="UINT16"), threads=1, traits=traits)
    out = np.arange(int(np.prod(op.out_shape)), dtype=np.uint16).reshape(op.out_shape)
    n = int(np.prod(sizes))
    x = out.reshape(-1)[n : 2 * n].reshape(sizes)  # inside the output, not at its start
    expect = np.tile(x.copy(), repeats)
    assert np.array_equal(op(x, out), expect)
    buf = bytearray(np.arange(out.size, dtype=np.uint16).tobytes())
    before = np.frombuffer(bytes(buf), np.uint16)[:n].reshape(sizes)
    op.run_buffers(memoryview(buf)[: n * 2], buf)
    assert np.array_equal(
        np.frombuffer(bytes(buf), np.uint16).reshape(op.out_shape), np.tile(before, repeats)
    )


def _shared(rows: int, row: int) -> tuple[Runner, np.ndarray, np.ndarray]:
    """A two-thread recipe copying a (rows, row) uint8 array, its runner and both arrays."""
    src = np.random.default_rng(rows).integers(0, 256, (rows, row), dtype=np.uint8)
    dst = np.zeros_like(src)
    recipe = Recipe("kernel", (Axis(rows, row, row),), row, threads=2)
    return Runner(recipe), src, dst


@needs_worker
def test_the_worker_takes_chunks_of_a_large_copy():
    run, src, dst = _shared(128, 65536)  # 8 MiB: the worker wakes within the first few calls anywhere
    before = kernel.worker_chunks()
    for _ in range(500):
        run(src, dst)
        if kernel.worker_chunks() > before:
            break
    assert kernel.worker_chunks() > before
    assert np.array_equal(dst, src)


@needs_worker
def test_callers_on_many_threads_share_one_worker():
    # One job is offered to the worker at a time: the other callers copy theirs alone.
    failures: list[str] = []

    def caller(seed: int) -> None:
        run, src, dst = _shared(32 + seed, 8192)
        for k in range(30):
            src[k % 32] ^= 0xFF
            run(src, dst)
            if not np.array_equal(dst, src):
                failures.append(f"caller {seed}, call {k}")

    threads = [threading.Thread(target=caller, args=(seed,)) for seed in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def _child(queue) -> None:
    run, src, dst = _shared(128, 65536)
    before = kernel.worker_chunks()
    for _ in range(500):
        run(src, dst)
        if kernel.worker_chunks() > before:
            break
    queue.put((bool(np.array_equal(dst, src)), kernel.worker_chunks() > before))


@needs_worker
def test_a_forked_child_shares_with_a_worker_of_its_own():
    # The parent's worker exists; the child has only the forking thread, so it starts its own worker
    # and never waits for one it does not have.
    run, src, dst = _shared(16, 65536)
    run(src, dst)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child, args=(queue,))
    child.start()
    child.join(60)
    assert child.exitcode == 0, "the forked child hung or failed"
    assert queue.get(timeout=5) == (True, True)
