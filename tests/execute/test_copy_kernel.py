"""The compiled copy kernel: built by the install when a C compiler exists, equal to np.copyto on
any strided views, chosen by the planner only where its measured rate wins, and never required."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import math
import mmap
import os
import shutil
from dataclasses import asdict, replace

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.execute import copy_kernel, copy_steps, costs, numpy_backend, pricing
from dmltile.execute import copy_plan as plan
from tests.execute.machines import BENCH

needs_kernel = pytest.mark.skipif(
    not copy_kernel.available(), reason=f"the copy kernel is not loaded: {copy_kernel.status()}"
)


def test_the_install_built_the_kernel_when_a_compiler_exists():
    if os.environ.get("DMLTILE_KERNEL") == "0" or not any(map(shutil.which, ("cc", "gcc", "clang"))):
        pytest.skip("no C compiler here (or DMLTILE_KERNEL=0): NumPy-only plans are the expected state")
    assert copy_kernel.available(), copy_kernel.status()
    assert copy_kernel.status().startswith("loaded")


def destination(raw: np.ndarray, dtype, shape, pad, offset: int, reverse: bool) -> np.ndarray:
    """A view of ``shape`` into ``raw`` at byte ``offset``, inside a padded block, optionally reversed."""
    base = np.ndarray(tuple(n + p for n, p in zip(shape, pad, strict=True)), dtype, raw, offset)
    view = base[tuple(slice(0, n) for n in shape)] if shape else base
    return view[::-1] if reverse else view


@st.composite
def strided_pair(draw):
    """The makings of a destination view (padded or reversed, at any byte offset) and a source view
    of the same shape with arbitrary strides, zero (broadcast) included, of several element widths."""
    width = draw(st.sampled_from([1, 2, 4, 8, 3, 12, 16, 24]))
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(1, 40), min_size=ndim, max_size=ndim)))
    dtype = np.dtype(f"V{width}") if width not in (1, 2, 4, 8) else np.dtype(f"u{width}")
    pad = tuple(draw(st.lists(st.integers(0, 2), min_size=ndim, max_size=ndim)))
    layout = (dtype, shape, pad, draw(st.integers(0, 63)), ndim > 0 and draw(st.booleans()))
    src_shape = tuple(n if draw(st.booleans()) else 1 for n in shape)
    data = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).integers(
        0, 256, int(np.prod(src_shape)) * width + 7, dtype=np.uint8
    )
    src = np.ndarray(src_shape, dtype, data, draw(st.integers(0, 7)))
    return layout, np.broadcast_to(src, shape)


@needs_kernel
@settings(max_examples=300, deadline=None)
@given(pair=strided_pair())
def test_copy_kernel_equals_np_copyto(pair):
    (dtype, shape, pad, offset, reverse), src = pair
    size = int(np.prod([n + p for n, p in zip(shape, pad, strict=True)])) * dtype.itemsize + offset + 64
    raw, expect_raw = np.zeros(size, np.uint8), np.zeros(size, np.uint8)
    np.copyto(destination(expect_raw, dtype, shape, pad, offset, reverse), src)
    copy_kernel.stream_copy(destination(raw, dtype, shape, pad, offset, reverse), src)
    assert np.array_equal(raw, expect_raw)  # every byte: the view's and the padding around it


@needs_kernel
@settings(max_examples=300, deadline=None)
@given(pair=strided_pair())
def test_a_program_copy_with_ordinary_stores_equals_np_copyto(pair):
    # The path a one-thread plan takes: a program step without streaming stores (short fills included).
    (dtype, shape, pad, offset, reverse), src = pair
    size = int(np.prod([n + p for n, p in zip(shape, pad, strict=True)])) * dtype.itemsize + offset + 64
    raw, expect_raw = np.zeros(size, np.uint8), np.zeros(size, np.uint8)
    np.copyto(destination(expect_raw, dtype, shape, pad, offset, reverse), src)
    dst = destination(raw, dtype, shape, pad, offset, reverse)
    program = copy_kernel.Program()
    program.copy(1, 0, 0, 0, dst.shape, dst.strides, src.strides, dtype.itemsize)
    bases = (ctypes.c_void_p * 2)(copy_kernel.address(src), copy_kernel.address(dst))
    program.compile(ctypes.addressof(bases))()
    assert np.array_equal(raw, expect_raw)  # every byte: the view's and the padding around it


@needs_kernel
@pytest.mark.parametrize("offset", [0, 4, 16, 36, 60])
@pytest.mark.parametrize("width", [1, 2, 4, 8])
def test_long_streamed_runs_fill_and_copy_exactly(offset, width):
    # Runs long enough for whole streamed lines, starting at every kind of misalignment.
    rows, run = 37, 1000 * 8 // width
    dtype = np.dtype(f"u{width}")
    raw = np.zeros(rows * run * width + offset + 64, np.uint8)
    dst = np.ndarray((rows, run), dtype, raw, offset)
    x = np.arange(rows, dtype=dtype).reshape(rows, 1) * 3 + 1
    copy_kernel.stream_copy(dst, np.broadcast_to(x, dst.shape))  # a fill per row
    assert np.array_equal(dst, np.broadcast_to(x, dst.shape))
    assert not raw[:offset].any() and not raw[offset + dst.nbytes :].any()
    y = np.random.default_rng(width).integers(0, 2**8, (rows, run)).astype(dtype)
    copy_kernel.stream_copy(dst, y)  # a copy per row
    assert np.array_equal(dst, y)


@needs_kernel
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("offset", [0, 3, 16, 40])
@pytest.mark.parametrize("row,width", [(1, 1), (2, 1), (4, 2), (8, 4), (8, 8), (16, 4), (16, 8), (12, 4)])
@pytest.mark.parametrize("repeat", [1, 3, 5, 40, 333])
def test_short_rows_repeated_back_to_back_fill_exactly(stream, offset, row, width, repeat):
    # A row of up to 16 bytes repeated along the next axis is filled as one pattern per row of the
    # output (long fills as 16-byte stores of the pattern); a 12-byte row stays a copy per repeat.
    # Every byte equals np.tile's, and none outside the output is touched.
    rows, n = 7, row // width
    dtype = np.dtype(f"u{width}")
    x = np.random.default_rng(row * repeat).integers(1, 2**8, (rows, 1, n)).astype(dtype)
    raw = np.zeros(rows * repeat * row + offset + 64, np.uint8)
    dst = np.ndarray((rows, repeat, n), dtype, raw, offset)
    call = copy_kernel.KernelCall(dst.shape, dst.strides, (row, 0, width), width, stream)
    call(copy_kernel.address(raw) + offset, copy_kernel.address(x))
    assert np.array_equal(dst, np.tile(x, (1, repeat, 1)))
    assert not raw[:offset].any() and not raw[offset + dst.nbytes :].any()


@contextlib.contextmanager
def bytes_before_a_guard_page(size: int):
    """A writable uint8 array of ``size`` bytes that ends where an unreadable page begins: a read past
    its end faults (POSIX; elsewhere the array is ordinary memory and the test checks values only)."""
    page = mmap.PAGESIZE
    pages = -(-size // page) + 1
    block = mmap.mmap(-1, pages * page)  # unmapped when the last view of it is gone
    anchor = ctypes.c_char.from_buffer(block)
    start = ctypes.addressof(anchor)
    del anchor
    libc = ctypes.CDLL(None, use_errno=True) if os.name == "posix" else None
    guard = start + (pages - 1) * page
    if libc is not None:
        assert libc.mprotect(ctypes.c_void_p(guard), ctypes.c_size_t(page), 0) == 0  # PROT_NONE
    try:
        yield np.frombuffer(block, np.uint8, size, (pages - 1) * page - size)
    finally:
        if libc is not None:
            libc.mprotect(ctypes.c_void_p(guard), ctypes.c_size_t(page), 3)  # PROT_READ | PROT_WRITE


@st.composite
def joined_short_runs(draw):
    """count runs of 1-15 bytes written one after another, each a copy of the source bytes s_step apart
    (any step under 40, overlapping or broadcast included), or a fill of a 1-8 byte element repeated
    (each element of a row repeated, as nearest-neighbour upsampling does)."""
    count = draw(st.integers(1, 300))
    if draw(st.booleans()):
        width = draw(st.sampled_from([1, 2, 4, 8]))
        times = draw(st.integers(1, 15 // width)) if width < 8 else 1
        step = draw(st.integers(0, 40 // width)) * width
        return count, (count, times), (times * width, width), (step, 0), width
    run = draw(st.integers(1, 15))
    return count, (count, run), (run, 1), (draw(st.integers(0, 40)), 1), 1


@needs_kernel
@settings(max_examples=400, deadline=None)
@given(case=joined_short_runs(), offset=st.integers(0, 15))
def test_joined_short_runs_equal_numpy_and_read_only_their_source(case, offset):
    # Such runs are written 16 bytes at a time as shuffles of one or two 16-byte loads: every byte
    # equals NumPy's copy, none outside the output is written, and no load reaches past the last byte
    # the runs read (the source ends at an unreadable page).
    _, shape, dst_strides, src_strides, width = case
    assert_kernel_copy_reads_only_its_source(shape, dst_strides, src_strides, width, offset, stream=False)


def assert_kernel_copy_reads_only_its_source(shape, dst_strides, src_strides, width, offset, stream):
    """The kernel's copy of a source that ends at an unreadable page, into a zeroed buffer at ``offset``,
    equals NumPy's byte for byte, and nothing around the output is written."""
    read = sum((n - 1) * s for n, s in zip(shape, src_strides, strict=True)) + width
    raw = np.zeros(offset + shape[0] * dst_strides[0] + 32, np.uint8)
    with bytes_before_a_guard_page(read) as src:
        src[:] = np.random.default_rng(read).integers(1, 256, read, dtype=np.uint8)
        dtype, expect = np.dtype(f"u{width}"), raw.copy()
        np.copyto(
            np.ndarray(shape, dtype, expect, offset, dst_strides),
            np.ndarray(shape, dtype, src, 0, src_strides),
        )
        call = copy_kernel.KernelCall(shape, dst_strides, src_strides, width, stream=stream)
        call(copy_kernel.address(raw) + offset, copy_kernel.address(src))
    assert np.array_equal(raw, expect)


@st.composite
def rows_of_short_runs(draw):
    """rows of 2-8 joined short runs each (as joined_short_runs' runs: copies, or fills of an element),
    written one after another, each row's source s_row bytes on from the one before (mostly where the
    row before ends)."""
    rows, inner = draw(st.integers(1, 600)), draw(st.integers(2, 8))
    if draw(st.booleans()):
        width = draw(st.sampled_from([1, 2, 4, 8]))
        times = draw(st.integers(1, 15 // width)) if width < 8 else 1
        s_in = draw(st.integers(0, 40 // width)) * width
        s_row = draw(
            st.one_of(
                st.just((inner - 1) * s_in + width), st.integers(0, 80 // width).map(lambda n: n * width)
            )
        )
        run = times * width
        return (rows, inner, times), (inner * run, run, width), (s_row, s_in, 0), width
    run, s_in = draw(st.integers(1, 15)), draw(st.integers(0, 40))
    s_row = draw(st.one_of(st.just((inner - 1) * s_in + run), st.integers(0, 200)))
    return (rows, inner, run), (inner * run, run, 1), (s_row, s_in, 1), 1


@needs_kernel
@settings(max_examples=300, deadline=None)
@given(case=rows_of_short_runs(), offset=st.integers(0, 15), stream=st.booleans())
@example(case=((100, 4, 3), (12, 3, 1), (3, 0, 1), 1), offset=0, stream=False)  # shuffled as rows
@example(case=((200, 2, 3), (12, 6, 2), (4, 2, 0), 2), offset=3, stream=True)  # fills, as rows
def test_rows_of_short_runs_equal_numpy_and_read_only_their_source(case, offset, stream):
    # Rows of a few short runs back to back are shuffled as items of the loop outside them where the
    # loop is too short to shuffle on its own: every byte equals NumPy's copy, streamed or not, none
    # outside the output is written, and no load reaches past the last byte the rows read.
    assert_kernel_copy_reads_only_its_source(*case, offset, stream)


@st.composite
def steps_of_few_runs(draw):
    """Odometer steps of 1-4 runs of 8-64 bytes each, written one after another (a Tile's row of 56
    bytes written twice, half a million times, is one such step per input row): each run a copy of the
    step's source row (the same row repeated) or of the bytes after the run before, each step's source
    s_row bytes on from the one before."""
    steps, count, run = draw(st.integers(1, 200)), draw(st.integers(1, 4)), draw(st.integers(8, 64))
    s_run = draw(st.sampled_from([0, run]))
    s_row = draw(st.one_of(st.just(max(1, count * s_run)), st.integers(0, 3 * run)))
    return (steps, count, run), (count * run, run, 1), (s_row, s_run, 1), 1


@needs_kernel
@settings(max_examples=300, deadline=None)
@given(case=steps_of_few_runs(), offset=st.integers(0, 63))
def test_steps_of_a_few_short_runs_streamed_through_the_buffer_equal_numpy(case, offset):
    # Streamed, such runs go into the kernel's buffer as two overlapping moves each, not through its
    # loop over runs of any length: every byte equals NumPy's copy, none outside the output is
    # written, and no load reaches past the source. The loop swap is off so that the steps stay
    # steps (the swap would loop over them instead).
    with kernel_set(copy_kernel.swap_step, 0):
        assert_kernel_copy_reads_only_its_source(*case, offset, stream=True)


@st.composite
def runs_of(draw, shortest: int, longest: int, most: int):
    """Up to ``most`` runs of ``shortest``-``longest`` bytes, the destination's back to back or with a
    gap, the source's s_step apart (0: one run broadcast; less than the run: overlapping)."""
    count, run = draw(st.integers(1, most)), draw(st.integers(shortest, longest))
    d_step = run + draw(st.sampled_from([0, 0, 1, 31, 64]))
    s_step = draw(st.one_of(st.just(run), st.integers(0, 2 * run)))
    return (count, run), (d_step, 1), (s_step, 1), 1


@needs_kernel
@settings(max_examples=300, deadline=None)
@given(case=runs_of(65, 600, 40), offset=st.integers(0, 63))
@example(case=((3, 72), (72, 1), (80, 1), 1), offset=5)  # a tail that overlaps the move before it
@example(case=((2, 511), (511, 1), (511, 1), 1), offset=0)  # the longest run moved 32 bytes at a time
def test_medium_runs_equal_numpy_and_read_only_their_source(case, offset):
    # Runs longer than 64 bytes are moved 32 bytes at a time up to 511 where the CPU has AVX (memcpy
    # past it), the last move ending where the run ends: every byte equals NumPy's copy, none outside
    # the output is written, no load passes the source.
    assert_kernel_copy_reads_only_its_source(*case, offset, False)


@needs_kernel
@settings(max_examples=300, deadline=None)
@given(case=runs_of(512, 9000, 6), offset=st.integers(0, 63), own_moves=st.booleans())
@example(case=((3, 2880), (2880, 1), (0, 1), 1), offset=5, own_moves=True)  # as calibration times them
@example(case=((2, 8192), (8193, 1), (8192, 1), 1), offset=31, own_moves=True)  # the longest so moved
@example(case=((2, 544), (544, 1), (544, 1), 1), offset=1, own_moves=True)  # head and tail overlap the rest
def test_long_runs_equal_numpy_and_read_only_their_source(case, offset, own_moves):
    # Runs of 512 bytes to 8 KiB moved by the kernel itself (stores aligned, the first and last 32
    # bytes apart) or by memcpy, and longer ones by memcpy: every byte equals NumPy's copy, none
    # outside the output is written, no load passes the source.
    with kernel_set(copy_kernel.long_avx, own_moves):
        assert_kernel_copy_reads_only_its_source(*case, offset, False)


@st.composite
def short_run_copies(draw):
    """A streamed copy of short runs: up to four axes of 1-byte elements (a run of 1-1100 bytes innermost,
    or of up to 4200: the buffer holds 4 KiB, and runs past 2048 bytes go in by a loop of their own), the
    destination packed or with gaps after some axes, the source packed or broadcast per axis, the
    destination at any offset within a line, and a point that cuts the outer axis into two calls."""
    run = draw(st.one_of(st.integers(1, 1100), st.integers(1100, 4200)))
    outer = draw(st.lists(st.integers(1, 9), min_size=0, max_size=3))
    shape = (*outer, run)
    gaps = draw(st.lists(st.sampled_from([0, 0, 1, 64]), min_size=len(shape), max_size=len(shape)))
    dst, size = [0] * len(shape), 1
    for i in reversed(range(len(shape))):
        dst[i], size = size, size * shape[i] + gaps[i]
    src, size = [0] * len(shape), 1
    for i in reversed(range(len(shape))):
        if i == len(shape) - 1 or draw(st.booleans()):
            src[i], size = size, size * shape[i]
    cut = draw(st.integers(0, shape[0]))
    return shape, tuple(dst), tuple(src), draw(st.integers(0, 63)), cut


@needs_kernel
@settings(max_examples=300, deadline=None)
@given(short_run_copies())
def test_streamed_short_runs_write_exactly_their_bytes(case):
    # Streamed runs too short for whole lines of their own go through the kernel's buffer when they
    # follow one another: every byte equals NumPy's copy, across odometer steps, gaps and a second
    # call of the same copy, and no byte outside the copy is touched.
    shape, dst_strides, src_strides, offset, cut = case
    span = sum((n - 1) * d for n, d in zip(shape, dst_strides, strict=True)) + 1
    src_size = sum((n - 1) * s for n, s in zip(shape, src_strides, strict=True)) + 1
    src = np.random.default_rng(span).integers(1, 256, src_size, dtype=np.uint8)
    raw = np.zeros(offset + span + 64, np.uint8)
    expect = raw.copy()
    view = np.lib.stride_tricks.as_strided
    np.copyto(view(expect[offset:], shape, dst_strides), view(src, shape, src_strides))
    call = copy_kernel.KernelCall(shape, dst_strides, src_strides, 1, stream=True)
    for part in (call.piece(0, cut), call.piece(cut, shape[0])):
        part(copy_kernel.address(raw) + offset, copy_kernel.address(src))
    assert np.array_equal(raw, expect)


@needs_kernel
def test_pieces_split_the_outer_axis():
    call = copy_kernel.KernelCall((10, 300), (300, 1), (0, 1), 1)
    src = np.arange(300, dtype=np.uint8)
    dst = np.zeros((10, 300), np.uint8)
    call.piece(2, 5)(copy_kernel.address(dst), copy_kernel.address(src))
    assert np.array_equal(dst[2:5], np.broadcast_to(src, (3, 300)))
    assert not dst[:2].any() and not dst[5:].any()
    assert call.piece(2, 5).count == 3


LEAD_PIECE_MIN = 64 << 10  # the kernel's: the bytes of source every piece must get for a cut past repeats


@needs_kernel
@pytest.mark.parametrize("stream", [True, False])
def test_a_kernel_call_shared_through_a_python_thread_is_cut_where_the_worker_cuts_it(stream):
    """Where the kernel has no worker (Windows) a Python thread shares a step's calls: a streamed copy
    repeating its source on its outer axis is cut along the source, each piece written for every copy,
    as the kernel's worker cuts it; with ordinary stores, along the copies. The pieces, run in any
    order, write every byte once and nothing else."""
    n = 16 * LEAD_PIECE_MIN // 8 + 5
    src = np.random.default_rng(5).integers(1, 1 << 62, n, dtype=np.uint64)
    raw = np.zeros((6, n + 3), np.uint64)
    dst = raw[:, :n]
    call = copy_kernel.KernelCall(dst.shape, dst.strides, (0, 8), 8, stream)
    pieces = call.pieces(16)
    assert [p.count for p in pieces] == ([6] * 16 if stream else [1] * 6)
    for part in reversed(pieces):
        part(copy_kernel.address(dst), copy_kernel.address(src))
    assert np.array_equal(dst, np.broadcast_to(src, dst.shape))
    assert not raw[:, n:].any()


def inner_repeat_plan(threads: int, model: costs.CopyCosts) -> copy_steps.Plan:
    # The bench's "inner repeat": (4096, 1) float32 tiled (1, 16384) into 256 MiB, each row one value.
    return plan.make_plan([4096, 1], [1, 16384], [4, 4], [65536, 4], 4, threads=threads, costs=model)


@needs_kernel
def test_outputs_in_memory_stream_and_small_ones_do_not():
    model = replace_kernel(BENCH)
    big = inner_repeat_plan(2, model)
    assert all(step.stream for step in big.steps if step.dst == "out")
    small = plan.make_plan([64, 1], [1, 64], [4, 4], [256, 4], 4, threads=2, costs=model)
    assert not any(step.stream for step in small.steps)  # 16 KiB stays in L2: ordinary stores win
    # 16 MiB fits in the model's 32 MiB last level: streaming would send it to memory and its reader there.
    mid = plan.make_plan([1024, 1], [1, 4096], [4, 4], [16384, 4], 4, threads=2, costs=model)
    assert not any(step.stream for step in mid.steps)


def replace_kernel(model: costs.CopyCosts, **kw) -> costs.CopyCosts:
    return replace(model, kernel_calibrated=True, **kw)


def test_without_the_kernel_plans_are_numpy_only(monkeypatch):
    monkeypatch.setenv("DMLTILE_KERNEL", "0")
    copy_kernel._load.cache_clear()
    try:
        assert not copy_kernel.available() and "DMLTILE_KERNEL=0" in copy_kernel.status()
        assert BENCH.kernel_rate(1) == float("inf")
        big = inner_repeat_plan(2, BENCH)
        assert not any(step.stream for step in big.steps)
        forced = plan.make_plan([6, 5], [2, 3], [20, 4], [120, 4], 4, costs=BENCH, prefer="stream")
        assert not any(step.stream for step in forced.steps)
        op = numpy_backend.NumpyTile(dmltile.tile_desc([6, 5], [2, 3]), threads=2, costs=BENCH)
        x = np.arange(30, dtype=np.float32).reshape(6, 5)
        assert np.array_equal(op(x), np.tile(x, [2, 3]))
    finally:
        monkeypatch.delenv("DMLTILE_KERNEL")
        copy_kernel._load.cache_clear()


def test_a_cache_measured_without_the_kernel_is_measured_again_with_it(tmp_path, monkeypatch):
    if not copy_kernel.available():
        pytest.skip(f"the copy kernel is not loaded: {copy_kernel.status()}")
    monkeypatch.setenv("DMLTILE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("DMLTILE_CALIBRATE", raising=False)
    old = costs.CopyCosts(call_ns=123.0, calibrated=True, kernel_calibrated=False)
    costs.cache_file().write_text(json.dumps({"fingerprint": costs.fingerprint(), "costs": asdict(old)}))
    fresh = costs.CopyCosts(call_ns=456.0, calibrated=True, kernel_calibrated=True)
    monkeypatch.setattr(costs, "calibrate", lambda machine, **_: fresh)
    monkeypatch.setattr(costs, "_costs", None)
    assert costs.machine_costs().call_ns == 456.0


@needs_kernel
@pytest.mark.parametrize("shift", [0, 8, 40])
def test_a_program_runs_its_steps_in_order(shift):
    # Buffers: 0 input, 1 output, 2 a temporary. Step 1 fills the temporary from the input, step 2
    # gathers its rows into the output, step 3 copies the input after them, at any relative alignment.
    x = np.arange(16, dtype=np.uint32)
    temp = np.zeros(64, np.uint32)
    raw = np.zeros(4 * 80 + 128, np.uint8)
    start = (-raw.ctypes.data % 64 + shift) % 64
    out = raw[start : start + 4 * 80].view(np.uint32)
    program = copy_kernel.Program()
    program.copy(2, 0, 0, 0, (4, 4, 4), (64, 16, 4), (16, 0, 4), 4)  # temp row r = x[4r:4r+4] four times
    program.gather(1, 0, 2, 0, 64, 64, np.array([3, 0, 0, 2]))  # output rows: temp rows 3, 0, 0, 2
    program.copy(1, 256, 0, 0, (16,), (4,), (4,), 4)
    bases = (ctypes.c_void_p * 3)(copy_kernel.address(x), copy_kernel.address(out), copy_kernel.address(temp))
    program.compile(ctypes.addressof(bases))()
    expect_temp = np.repeat(x.reshape(4, 1, 4), 4, axis=1).reshape(4, 16)
    assert np.array_equal(temp.reshape(4, 16), expect_temp)
    assert np.array_equal(out[:64].reshape(4, 16), expect_temp[[3, 0, 0, 2]])
    assert np.array_equal(out[64:], x)


@needs_kernel
@pytest.mark.parametrize("run", range(1, 70))
def test_runs_of_every_short_length_copy_exactly_without_touching_the_gaps(run):
    # Runs of odd lengths are moved as two overlapping constant-size moves: every byte of each run,
    # none of the 3-byte gaps between them, whatever the run's length and address.
    src = (np.arange(7 * run + 5) * 37 % 251).astype(np.uint8)
    out = np.zeros(7 * (run + 3) + 8, np.uint8)
    program = copy_kernel.Program()
    program.copy(1, 1, 0, 1, (7,), (run + 3,), (run,), run)
    bases = (ctypes.c_void_p * 2)(copy_kernel.address(src), copy_kernel.address(out))
    program.compile(ctypes.addressof(bases))()
    expect = np.zeros_like(out)
    for j in range(7):
        expect[1 + j * (run + 3) : 1 + j * (run + 3) + run] = src[1 + j * run : 1 + (j + 1) * run]
    assert np.array_equal(out, expect)


@needs_kernel
def test_a_program_refuses_a_step_it_cannot_run():
    program = copy_kernel.Program()
    program.copy(1, 0, 0, 0, (2,), (4,), (4,), 4)
    program._values[5] = 99  # more axes than the kernel takes
    bases = (ctypes.c_void_p * 2)(0, 0)
    with pytest.raises(RuntimeError, match="refused step 1"):
        program.compile(ctypes.addressof(bases))()


def test_large_streaming_copies_share_two_threads_on_a_tie():
    # Measured equal on one and two threads (as the 64 MiB calibration finds on the project's VM, where
    # two threads still stream a 1 GiB output 1.9x faster): a 1 GiB copy is split, and so is one of
    # STREAM_SHARE_MIN; a smaller one (past the model's 8 MiB last level, so streamed at all) is not.
    if not copy_kernel.available():
        pytest.skip(f"the copy kernel is not loaded: {copy_kernel.status()}")
    tie = replace_kernel(
        BENCH, llc_bytes=8 << 20, kernel_byte_ns=0.047, kernel_byte2_ns=0.048, thread_ns=25000.0
    )
    big = plan.make_plan(
        [1, 4096, 1024], [64, 1, 1], [4 << 22, 4096, 4], [4 << 22, 4096, 4], 4, threads=2, costs=tie
    )
    streamed = [step for step in big.steps if step.stream]
    assert streamed and all(step.phase in big.split for step in streamed)
    gib = ((64, 1 << 24, 0), (1 << 22, 4, 4))  # the same copy as one step
    assert pricing.kernel_cost(gib, 4, tie, 1)[1] < pricing.kernel_cost(gib, 4, tie, 1)[0]
    for mib, split in ((pricing.STREAM_SHARE_MIN >> 20, True), (12, False)):
        one, two = pricing.kernel_cost(((mib, 1 << 20, 0), (1 << 18, 4, 4)), 4, tie, 1)
        assert (two < one) == split


@needs_kernel
def test_two_threads_stream_only_past_the_last_level_as_two_threads_meet_it():
    # 12 MiB of long runs: past one thread's 8 MiB last level, within two threads' 16 MiB.
    model = replace_kernel(BENCH, llc_bytes=8 << 20, llc2_bytes=16 << 20)
    rows = ((12, 1 << 20, 0), (1 << 20, 1, 1))
    one, two = pricing.kernel_cost(rows, 1, model, 1)
    assert one < math.inf and two == math.inf
    assert pricing.kernel_cost(((20, 1 << 20, 0), (1 << 20, 1, 1)), 1, model, 1)[1] < math.inf
    # Two threads' edge unmeasured: one thread's is theirs.
    assert pricing.kernel_cost(rows, 1, replace(model, llc2_bytes=0), 1)[1] < math.inf


@needs_kernel
def test_a_step_cut_for_two_threads_is_priced_with_each_pieces_own_loops(monkeypatch):
    # 720 runs of 72 bytes on (12, 6, 5, 2) axes: the whole step loops over the 12 (a short loop of 2
    # under 360 odometer steps swapped for 12 under 60), a half of it cut along that axis cannot.
    model = replace_kernel(BENCH)
    axes = ((12, 4320, 360), (6, 720, 0), (5, 144, 72), (2, 72, 0))
    half = ((6, 4320, 360),) + axes[1:]
    with swapping_up_to(1 << 20):
        assert pricing.kernel_loops(axes, 72)[:3] == (72, 720, 60)
        assert pricing.kernel_loops(half, 72)[:3] == (72, 360, 180)
        two = pricing.pieces_work_ns(axes, 72, model, 2)
        one = pricing.kernel_work_ns(axes, 72, model)[0]
        assert two == 2 * pricing.kernel_work_ns(half, 72, model)[0] > one
    # Long rows keep their loop in every piece, each piece a loop of its own: one odometer step more.
    rows = ((64, 4096, 0), (4096, 1, 1))
    whole = pricing.kernel_work_ns(rows, 1, model)[0]
    assert pricing.pieces_work_ns(rows, 1, model, 16) == pytest.approx(whole + 15 * model.kernel_step_ns)
    # The two-thread price of a step shared with the kernel's worker is built on it, each thread half.
    if copy_kernel.has_worker():
        shared = replace(model, kernel_shares=True)
        before = pricing.plain_kernel_cost(axes, 72, shared)[1]
        monkeypatch.setattr(pricing, "pieces_work_ns", lambda *args: two + 2000.0)
        assert pricing.plain_kernel_cost(axes, 72, shared)[1] == pytest.approx(before + 1000.0)


@needs_kernel
def test_short_runs_streamed_through_the_buffer_pay_their_measured_cost_per_byte():
    base = replace_kernel(BENCH, kernel_bounce_ns=0.0, kernel_bounce2_ns=0.0)
    dear = replace(base, kernel_bounce_ns=0.03, kernel_bounce2_ns=0.01)
    line = pricing.LINE_RUN_MIN
    for run in (100, line - 1):  # 2**20 runs, each where the last one ended
        joined = ((1 << 20, run, 0), (run, 1, 1))
        (one, two), (one_dear, two_dear) = (pricing.kernel_cost(joined, 1, m, 1) for m in (base, dear))
        assert one_dear - one == pytest.approx(0.03 * run * (1 << 20))
        assert two_dear - two == pytest.approx(0.01 * run * (1 << 20))  # two threads' own figure
    apart = ((1 << 20, 320, 0), (265, 1, 1))  # runs with gaps are streamed one by one, not through it
    assert pricing.kernel_cost(apart, 1, dear, 1) == pricing.kernel_cost(apart, 1, base, 1)
    # Copies from LINE_RUN_MIN bytes on stream their whole lines straight from the source, at a cost
    # per run of their own, and fills of any length short of BOUNCE_RUN still go through it.
    lined = ((1 << 20, line, 0), (line, 1, 1))
    assert pricing.kernel_cost(lined, 1, dear, 1) == pricing.kernel_cost(lined, 1, base, 1)
    apart_dear = replace(base, kernel_run_ns=base.kernel_run_ns + 2.0)
    assert pricing.kernel_cost(lined, 1, apart_dear, 1) == pricing.kernel_cost(lined, 1, base, 1)
    per_run = replace(base, kernel_line_ns=base.kernel_line_ns + 2.0)
    (one, two), (one_per_run, two_per_run) = (pricing.kernel_cost(lined, 1, m, 1) for m in (base, per_run))
    assert one_per_run - one == pytest.approx(2.0 * (1 << 20))
    assert two_per_run - two == pytest.approx(1.0 * (1 << 20))  # each thread half of them
    fills = ((1 << 20, 1200, 4), (300, 4, 0))  # each int32 written 300 times in a run
    assert pricing.kernel_loops(fills, 4)[3:5] == (True, True)
    one, one_dear = (pricing.kernel_cost(fills, 4, m, 1)[0] for m in (base, dear))
    assert one_dear - one == pytest.approx(0.03 * 1200 * (1 << 20))


@needs_kernel
@pytest.mark.parametrize("run", [7, 8, 12, 24, 56, 64, 65])
@pytest.mark.parametrize("count", [2, 4, 5])
def test_a_few_short_runs_per_step_are_copied_right(run, count):
    # Rows of ``run`` bytes each written ``count`` times over a step too large to swap its loops: up to
    # 4 runs of 8-64 bytes the kernel copies them in its odometer, else through its general loop.
    rows = (2 << 20) // (run * count) + 3
    src = np.random.default_rng(run * count).integers(0, 256, rows * run, dtype=np.uint8)
    dst = np.zeros(rows * run * count + 64, np.uint8)
    for stream in (False, True):
        dst[:] = 0
        call = copy_kernel.KernelCall((rows, count, run), (run * count, run, 1), (run, 0, 1), 1, stream)
        call(copy_kernel.address(dst), copy_kernel.address(src))
        expected = np.repeat(src.reshape(rows, 1, run), count, axis=1).reshape(-1)
        assert np.array_equal(dst[: expected.size], expected)
        assert not dst[expected.size :].any()  # nothing written past the copy


def test_a_step_over_a_few_short_runs_is_priced_as_one_short_run_more():
    # 2**16 rows of 56 bytes written twice: a step per row, priced at kernel_loop_ns where the kernel
    # copies the two runs in its odometer, at kernel_step_ns where they are too long (72 bytes) for that.
    model = replace_kernel(BENCH, kernel_step_ns=5.0, kernel_loop_ns=0.5, kernel_copy_ns=2.0)
    for run, few in ((56, True), (72, False)):
        axes = ((1 << 16, 2 * run, run), (2, run, 0), (run, 1, 1))
        _, runs, steps, fill, _, vectors = pricing.kernel_loops(axes, 1)
        per_run = 0.5 if run < 64 else 2.0
        assert (runs, steps) == (1 << 17, 1 << 16)
        assert pricing.few_runs(run, runs, steps, fill, vectors) == few
        assert pricing.kernel_work_ns(axes, 1, model)[0] == pytest.approx(
            steps * (0.5 if few else 5.0) + runs * per_run
        )


@needs_kernel
def test_streamed_steps_of_a_few_short_runs_pay_their_measured_cost_per_step():
    # 2**20 rows of 40 bytes each written twice, streamed through the buffer: on top of the streaming,
    # the calibrated cost per step (one thread; two threads' own figure per step of the whole copy), in
    # place of the buffer's cost per byte and of the moves priced in cache.
    rows = ((1 << 20, 80, 40), (2, 40, 0), (40, 1, 1))
    run, runs, steps, fill, joined, vectors = pricing.kernel_loops(rows, 1)
    assert pricing.streamed_route(run, fill, joined, vectors) == "buffer"
    assert pricing.few_runs(run, runs, steps, fill, vectors) and steps == 1 << 20
    model = replace_kernel(BENCH, kernel_few_ns=0.0, kernel_few2_ns=0.0)
    base = pricing.kernel_cost(rows, 1, model, 1)
    dear = replace(model, kernel_few_ns=4.0, kernel_few2_ns=1.5)
    one, two = pricing.kernel_cost(rows, 1, dear, 1)
    assert one - base[0] == pytest.approx(4.0 * steps)
    assert two - base[1] == pytest.approx(1.5 * steps)
    others = replace(
        model, kernel_bounce_ns=1.0, kernel_bounce2_ns=1.0, kernel_step_ns=100.0, kernel_loop_ns=9.0
    )
    assert pricing.kernel_cost(rows, 1, others, 1) == base
    # Banded, each band pays for its own steps.
    band = ((1 << 16, 80, 40), (2, 40, 0), (40, 1, 1))
    assert pricing.kernel_cost(band, 1, dear, 1, bands=16)[0] - pricing.kernel_cost(
        band, 1, model, 1, bands=16
    )[0] == pytest.approx(4.0 * steps)
    # Five runs a step, or runs of 72 bytes, are not a few short runs: the buffer's own figures price them.
    for axes in (((1 << 20, 200, 40), (5, 40, 0), (40, 1, 1)), ((1 << 20, 144, 72), (2, 72, 0), (72, 1, 1))):
        assert pricing.kernel_cost(axes, 1, dear, 1) == pricing.kernel_cost(axes, 1, model, 1)
        bounce = replace(model, kernel_bounce_ns=model.kernel_bounce_ns + 0.01)
        assert pricing.kernel_cost(axes, 1, bounce, 1)[0] > pricing.kernel_cost(axes, 1, model, 1)[0]


@needs_kernel
def test_the_calibration_times_a_few_short_runs_as_the_pricing_sees_them():
    # The pattern timed for kernel_few_ns, as the kernel's loops see it: a few short runs a step,
    # joined, streamed through the buffer; and it is the copy it claims to be.
    for run in costs.FEW_LENGTHS:
        dst = np.zeros(4 << 20, np.uint8)
        src = np.random.default_rng(run).integers(1, 256, 64 << 10, dtype=np.uint8)
        view, source = costs._few_runs(dst, src, run)
        axes = tuple(zip(view.shape, view.strides, source.strides, strict=True))
        merged, width = pricing.fill_element(pricing.simplify(axes), 1)
        loops = pricing.kernel_loops(merged, width)
        assert pricing.streamed_route(loops[0], loops[3], loops[4], loops[5]) == "buffer"
        assert pricing.few_runs(loops[0], loops[1], loops[2], loops[3], loops[5])
        costs._shared_copy(view, source, True, 0)()
        rows = np.repeat(src[: src.size // run * run].reshape(-1, 1, run), 2, axis=1).reshape(-1)
        written = view.size
        assert np.array_equal(dst[:written], np.tile(rows, written // rows.size))
        assert not dst[written:].any()


@needs_kernel
def test_work_on_runs_streamed_through_the_buffer_hides_behind_the_streaming_up_to_its_size():
    # 2**22 rows of 16 bytes each written twice (a fill of 32 bytes per row, 128 MiB, back to back):
    # the fills into the buffer are priced in cache, and only what they take beyond the streaming
    # itself adds to the price; the buffer's own cost per byte (bounce) always adds.
    fills = ((1 << 22, 32, 16), (2, 16, 0), (16, 1, 1))
    assert pricing.kernel_loops(fills, 1)[3:5] == (True, True)  # fills, joined: through the buffer
    model = replace_kernel(BENCH, kernel_bounce_ns=0.01, kernel_bounce2_ns=0.005)
    nbytes = (1 << 22) * 32
    streamed = [nbytes * (model.kernel_rate(t) + model.memory_src_ns(64 << 20, t)) for t in (1, 2)]
    cheap, dear = (replace(model, kernel_fill_ns=f) for f in (0.1, 4.0))
    works = [pricing.kernel_work_ns(fills, 1, m)[0] for m in (cheap, dear)]
    assert works[0] / 2 < works[0] < min(streamed) and works[1] / 2 > max(streamed)
    (one_c, two_c), (one_d, two_d) = (pricing.kernel_cost(fills, 1, m, 1) for m in (cheap, dear))
    base = pricing.kernel_cost(fills, 1, replace(model, kernel_fill_ns=0.0), 1)
    assert (one_c, two_c) == pytest.approx(base)  # hidden under the streaming
    assert one_d - base[0] == pytest.approx(works[1] - streamed[0])  # only the excess adds
    assert two_d - base[1] == pytest.approx(works[1] / 2 - streamed[1])
    assert one_c - base[0] == 0 and two_d > two_c


@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "numpy-only"])
@pytest.mark.parametrize(
    "sizes,repeats", [([4, 6], [3, 2]), ([2] * 6, [2] * 6), ([64, 1], [1, 512]), ([32, 64], [2, 8])]
)
def test_an_input_inside_the_output_is_read_first(monkeypatch, kernel, sizes, repeats):
    # x a view of the very bytes the op overwrites: the result is the tile of x as it was, whatever
    # plan (one step or many, NumPy or one kernel call) runs it; the same for raw buffers.
    if kernel and not copy_kernel.available():
        pytest.skip(f"the copy kernel is not loaded: {copy_kernel.status()}")
    if not kernel:
        monkeypatch.setattr(copy_kernel, "_load", lambda: (None, "switched off by the test"))
    op = numpy_backend.NumpyTile(dmltile.tile_desc(sizes, repeats, dtype="UINT16"), threads=1)
    out = np.arange(int(np.prod(op.out_shape)), dtype=np.uint16).reshape(op.out_shape)
    n = int(np.prod(sizes))
    x = out.reshape(-1)[n : 2 * n].reshape(sizes)  # inside the output, not at its start
    expect = np.tile(x.copy(), repeats)
    assert np.array_equal(op(x, out), expect)
    buf = bytearray(np.arange(op.out_bytes // 2, dtype=np.uint16).tobytes())
    before = np.frombuffer(bytes(buf), np.uint16)[:n].reshape(sizes)
    op.run_buffers(memoryview(buf)[: n * 2], buf)
    assert np.array_equal(
        np.frombuffer(bytes(buf), np.uint16).reshape(op.out_shape), np.tile(before, repeats)
    )


@needs_kernel
@pytest.mark.parametrize(
    "sizes,repeats,dtype,width",
    [([5, 2], [3, 7], np.float32, 8), ([3, 4], [2, 5], np.uint8, 4), ([4, 1, 2], [1, 9, 33], np.uint64, 16)],
)
def test_short_rows_repeated_stream_as_a_fill_of_the_whole_row(monkeypatch, sizes, repeats, dtype, width):
    # A row of up to 16 bytes repeated along the next axis is streamed as one fill element the row's size.
    monkeypatch.setattr(numpy_backend, "make_plan", functools.partial(plan.make_plan, prefer="stream"))
    op = numpy_backend.NumpyTile(dmltile.tile_desc(sizes, repeats, dtype=np.dtype(dtype).name), threads=1)
    assert any(step.stream and step.width == width for step in op.array_plan.steps)
    x = np.arange(np.prod(sizes)).astype(dtype).reshape(sizes) * 7 + 3
    assert np.array_equal(op(x).view(np.uint8), np.tile(x, repeats).view(np.uint8))


@pytest.fixture(params=[True, False], ids=["movsb-cliff", "no-cliff"])
def movsb_cliff(request):
    """The kernel told that this CPU's rep movsb has its slow misaligned case, or that it has not (as
    calibration tells it), and restored afterwards."""
    with kernel_set(copy_kernel.movsb_cliff, request.param):
        yield request.param


@pytest.fixture(params=[True, False], ids=["big-movsb", "big-memcpy"])
def big_movsb(request):
    """The kernel told to move runs past 8 KiB with rep movsb, or with memcpy (as calibration tells it),
    its own moves for shorter runs switched off (memcpy's, as on a CPU where they are not faster); both
    restored afterwards."""
    with kernel_set(copy_kernel.big_movsb, request.param), kernel_set(copy_kernel.long_avx, False):
        yield request.param


@needs_kernel
@pytest.mark.parametrize("shift", [0, 8, 16, 24, 40])
@pytest.mark.parametrize("run", [2056, 4104, 6000, 8193, 70001])
def test_long_runs_copy_exactly_at_every_misalignment(shift, run, movsb_cliff, big_movsb):
    # Runs past 2048 bytes whose destination sits ``shift`` bytes (mod 64) past the source take a
    # loop of their own in the kernel where memcpy's rep movsb is slow there, memcpy where it is not,
    # and past 8 KiB rep movsb itself where calibration found it faster: the bytes must not change.
    rows = 5
    src = np.random.default_rng(run).integers(0, 256, rows * run + 64, dtype=np.uint8)
    raw, expect = np.zeros(rows * run + 128, np.uint8), np.zeros(rows * run + 128, np.uint8)
    start = (copy_kernel.address(src) + shift - copy_kernel.address(raw)) % 64
    dst, want = (np.ndarray((rows, run), np.uint8, b, start) for b in (raw, expect))
    view = np.ndarray((rows, run), np.uint8, src, 0)
    np.copyto(want, view)
    program = copy_kernel.Program()
    program.copy(1, 0, 0, 0, dst.shape, dst.strides, view.strides, 1)
    bases = (ctypes.c_void_p * 2)(copy_kernel.address(view), copy_kernel.address(dst))
    program.compile(ctypes.addressof(bases))()
    assert np.array_equal(raw, expect)


@st.composite
def loop_axes(draw):
    """Axes as the planner hands them to the kernel: sizes, destination and source byte strides (the
    source's 0 where the copy repeats), with the short rows and short loops the kernel treats apart."""
    width = draw(st.sampled_from([1, 2, 4, 8, 12, 16, 24]))
    ndim = draw(st.integers(0, 5))
    axes = []
    for _ in range(ndim):
        n = draw(st.sampled_from([1, 2, 3, 4, 5, 8, 16, 100, 1000]))
        dst = draw(st.sampled_from([width, 2 * width, 16, 48, 1000, 70000, -width]))
        src = draw(st.sampled_from([0, width, 2 * width, 3 * width]))
        axes.append((n, dst, src))
    return tuple(axes), width


@needs_kernel
@pytest.mark.parametrize(
    ("axes", "width", "vectors"),
    [
        (((256, 12, 4), (3, 4, 0)), 4, 3),  # rows of one int32 three times, back to back: 48-byte periods
        (((300, 6, 2), (3, 2, 0)), 2, 3),  # one int16 three times
        (((1000, 8, 4), (2, 4, 0)), 4, 1),  # one int32 twice: a 16-byte vector per two rows
        (((100, 12, 40), (3, 4, 0)), 4, 0),  # rows 40 bytes apart in the source: more loads than two
        (((4, 12, 4), (3, 4, 0)), 4, 0),  # too few runs to pay
        (((2000, 7, 8), (7, 1, 1)), 1, 7),  # runs of 7 bytes from 8 apart: 7 vectors a period
        (((2000, 9, 10), (9, 1, 1)), 1, 0),  # of 9 bytes: 9 vectors, past the 8 that runs this long may take
        (((64, 24, 4), (3, 4, 0)), 4, 0),  # not back to back in the destination
    ],
)
def test_pricing_knows_which_short_runs_the_kernel_shuffles(axes, width, vectors):
    shape, dst, src = ([a[i] for a in axes] for i in range(3))
    expected = vectors if copy_kernel.shuffles() else 0
    assert copy_kernel.loops(shape, dst, src, width)[5] == expected
    assert pricing.kernel_loops(axes, width)[5] == vectors  # the mirror says what the kernel would plan
    model = replace_kernel(BENCH, kernel_shuffle_ns=0.4, kernel_fill_ns=1.0, kernel_step_ns=5.0)
    run, runs, steps, fill, _, _ = pricing.kernel_loops(axes, width)
    work = pricing.kernel_work_ns(axes, width, model)[0]
    if expected:  # 16 output bytes at a time instead of a fill or a move per run
        assert work == pytest.approx(steps * 5.0 + runs * run / 16 * 0.4)
    else:
        assert work > runs * run / 16 * 0.4


@needs_kernel
@pytest.mark.parametrize(
    ("axes", "width", "loops"),
    [
        # rows of 3 float32 written 4 times (a 12-byte element): 459 rows of 48 bytes, 3 vectors each
        (((459, 48, 12), (4, 12, 0)), 12, (12, 1836, 1, False, True, 3)),
        # 3 bytes 4 times: rows of 12 bytes, a period of 4 of them
        (((4000, 12, 3), (4, 3, 0), (3, 1, 1)), 1, (3, 16000, 1, False, True, 3)),
        # 5 bytes 3 times: rows of 15 bytes, a period of 16 of them in 15 vectors
        (((2000, 15, 5), (3, 5, 0), (5, 1, 1)), 1, (5, 6000, 1, False, True, 15)),
        # 3 bytes 7 times: rows of 21 bytes, 21 vectors a period
        (((3000, 21, 3), (7, 3, 0), (3, 1, 1)), 1, (3, 21000, 1, False, True, 21)),
        # the same in 100 rows: fewer than 16 periods, which would not pay for working out the masks
        (((100, 21, 3), (7, 3, 0), (3, 1, 1)), 1, (3, 700, 7, False, False, 0)),
        # two int16 each written 3 times (fills of 6 bytes), the pair twice: rows of 12 bytes
        (((200, 12, 4), (2, 6, 2), (3, 2, 0)), 2, (6, 400, 1, True, True, 3)),
        # two rows: too few to pay, the loop of 4 runs stays
        (((2, 12, 3), (4, 3, 0), (3, 1, 1)), 1, (3, 8, 2, False, True, 0)),
        # source rows 40 bytes apart: a vector across two rows would need more loads than two
        (((100, 15, 40), (5, 3, 0), (3, 1, 1)), 1, (3, 500, 5, False, False, 0)),
        # one float32 twice, 4 of them a row, the row broadcast 6 times: a period's loads would reach 8
        # bytes past the row's 16, so no period can be shuffled; the loop of 4 is swapped for the 226
        (((226, 192, 16), (6, 32, 0), (4, 8, 4), (2, 4, 0)), 4, (8, 5424, 24, True, False, 0)),
    ],
)
def test_rows_of_a_few_short_runs_are_shuffled_as_items_of_the_loop_outside_them(axes, width, loops):
    # A tight loop of a few short runs that make rows back to back: too few runs to shuffle per loop,
    # so each run cost a move or two (16000 runs of 3 bytes: 5.8-10.3 us a Tile) or an odometer step
    # per row; the rows are shuffled as items instead, 16 output bytes at a time (2.1-3.4 us).
    if not copy_kernel.shuffles():
        pytest.skip("the kernel was built without byte shuffles, or the CPU has no SSSE3")
    shape, dst, src = ([a[i] for a in axes] for i in range(3))
    assert pricing.kernel_loops(axes, width) == loops
    assert copy_kernel.loops(shape, dst, src, width) == loops
    for stream in (False, True):
        assert_kernel_copy_equals_numpy(axes, width, stream)


def assert_kernel_copy_equals_numpy(axes, width, stream):
    """The kernel's copy over ``axes`` (sizes, destination and source byte strides) of ``width``-byte
    elements writes what NumPy's copy of the same strided views writes, and nothing past it."""
    shape, dst, src = ([a[i] for a in axes] for i in range(3))
    rng = np.random.default_rng(len(shape) * width)
    source = rng.integers(0, 256, sum((n - 1) * s for n, _, s in axes) + width, dtype=np.uint8)
    expected = np.zeros(sum((n - 1) * d for n, d, _ in axes) + width + 64, np.uint8)
    view = np.lib.stride_tricks.as_strided
    np.copyto(view(expected, (*shape, width), (*dst, 1)), view(source, (*shape, width), (*src, 1)))
    out = np.zeros_like(expected)
    call = copy_kernel.KernelCall((*shape, width), (*dst, 1), (*src, 1), 1, stream)
    call(copy_kernel.address(out), copy_kernel.address(source))
    assert np.array_equal(out, expected)


@needs_kernel
@given(loop_axes(), st.sampled_from([0, 4096, 1 << 20, 1 << 40]))
def test_pricing_counts_the_loops_the_kernel_runs(case, swap_step):
    """pricing.kernel_loops mirrors the kernel's own choice of runs, fills and loops, so the planner
    prices what the kernel will do (a short loop swapped for a longer one, short rows made fills),
    whatever bound calibration set on the swap."""
    axes, width = case
    shape, dst, src = ([a[i] for a in axes] for i in range(3))
    with swapping_up_to(swap_step):
        assert pricing.kernel_loops(axes, width) == copy_kernel.loops(shape, dst, src, width)


@contextlib.contextmanager
def kernel_set(setting, value):
    """The kernel's ``setting`` (a copy_kernel switch or bound) set to ``value``, as calibration sets it
    from what it measured, and restored afterwards."""
    before = setting()
    try:
        assert setting(value) == value
        yield value
    finally:
        setting(before)


def swapping_up_to(nbytes: int):
    """The kernel told to swap short loops of long runs in steps of up to ``nbytes``."""
    return kernel_set(copy_kernel.swap_step, nbytes)


@needs_kernel
@pytest.mark.parametrize(
    ("axes", "width", "steps"),
    [
        (((226, 192, 32), (6, 32, 0)), 32, 6),  # rows of 32 bytes written 6 times: the 226 looped over
        (((100, 15, 40), (5, 3, 0)), 3, 5),  # 3 bytes 5 times, rows too far apart in the source to shuffle
        (((226, 288, 32), (9, 32, 0)), 32, 226),  # 9 times: a loop long enough as it is
        (((612, 350, 70), (5, 70, 0)), 70, 612),  # 70 bytes, each a call of memcpy
        (((223, 128, 576), (2, 64, 0), (8, 8, 72)), 8, 446),  # 8 int64 gathered 16 bytes at a time
        (((223, 64, 288), (2, 32, 0), (4, 8, 72)), 8, 8),  # 4 of them: swapped all the same
    ],
)
def test_a_tight_loop_of_up_to_eight_runs_moved_inline_is_swapped_for_a_longer_one(axes, width, steps):
    # A loop of 5-8 runs paid an odometer step per loop: 1356 runs of 32 bytes in 226 steps of 6 took
    # 2.0 us, as one loop of 226 0.8. Not where the runs are memcpy's calls, or int64 the kernel gathers
    # in pairs (1784 of them: 2.4 us in 223 steps of 8, 4.1 swapped).
    shape, dst, src = ([a[i] for a in axes] for i in range(3))
    with swapping_up_to(1 << 20):
        assert pricing.kernel_loops(axes, width)[2] == steps
        assert copy_kernel.loops(shape, dst, src, width) == pricing.kernel_loops(axes, width)
        assert_kernel_copy_equals_numpy(axes, width, False)  # the bytes land where the strides say


@needs_kernel
@pytest.mark.parametrize("bound", [1 << 20, 32 << 20])
@pytest.mark.parametrize("run", [10, 16, 24, 72, 300, 1274])
def test_a_short_tight_loop_is_swapped_for_a_longer_one_in_cache_or_under_short_runs(run, bound):
    # 23 rows of 8 runs, each row two runs of the source written 4 times: the tight loop of 2 runs is
    # looped over the 23 rows instead (23 x 4 odometer steps become 4 x 2) when the step is within the
    # bound calibration measured (its lines in cache) or its runs a vector at most. A piece of a large
    # step fetches its lines in strides when swapped: on a Zen 4 EPYC runs of 72 bytes into 64 MiB
    # took 2x as long, of 10 bytes 0.4x.
    axes = ((23, 8 * run, 0), (4, 2 * run, 0), (2, run, 2 * run))
    many = ((20, 184 * run, 0), *axes)  # the same rows 20 times over: a step of 3.7 KiB to 4.5 MiB
    with swapping_up_to(bound):
        assert pricing.kernel_loops(axes, run)[2] == 8
        assert pricing.kernel_loops(axes, run, 64 << 20)[2] == (8 if run <= 16 else 92)
        swapped = run <= 16 or 20 * 184 * run <= bound
        assert pricing.kernel_loops(many, run)[2] == (20 * 8 if swapped else 20 * 92)
        for case in (axes, many):
            shape, dst, src = ([a[i] for a in case] for i in range(3))
            assert copy_kernel.loops(shape, dst, src, run) == pricing.kernel_loops(case, run)


@needs_kernel
@pytest.mark.parametrize("blocks", [64, 128, 256])
def test_the_loop_swapped_in_is_the_longest_whose_lines_stay_in_cache(blocks):
    # A Tile of [blocks, 128, 128] int8 by [1, 2, 2]: runs of 128 bytes, two per odometer step. The 128
    # rows of a block span 32 KiB of the output and are looped over in their place, also where more
    # blocks than rows span far more (256 blocks: 16 MiB, never a pass that stays in cache).
    row = 128
    axes = ((blocks, 512 * row, 128 * row), (2, 256 * row, 0), (128, 2 * row, row), (2, row, 0))
    with swapping_up_to(1 << 40):
        assert pricing.kernel_loops(axes, row)[:3] == (row, blocks * 512, blocks * 4)
        shape, dst, src = ([a[i] for a in axes] for i in range(3))
        assert copy_kernel.loops(shape, dst, src, row) == pricing.kernel_loops(axes, row)
    with swapping_up_to(0):  # past the bound: the two runs stay the tight loop
        assert pricing.kernel_loops(axes, row)[:3] == (row, blocks * 512, blocks * 256)


@needs_kernel
def test_the_odometer_step_is_timed_on_loops_the_kernel_keeps():
    # Calibration times a step on rows STEP_ROWS to a step; were that loop swapped for the longer one
    # outside it, the steps would be gone from what it times (loops of 8 were, once the kernel swapped
    # those: 1.2 ns a step came out where steps took 5-6).
    n, width = 2048, 12
    with swapping_up_to(1 << 40):
        assert copy_kernel.loops(*costs.stepped_rows(n, width), width)[2] == n // costs.STEP_ROWS
