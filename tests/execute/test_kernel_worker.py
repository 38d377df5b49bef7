"""The copy kernel's worker thread: steps of a program marked with pieces are shared between the
calling thread and the kernel's own worker. Whoever takes which piece, the bytes must equal NumPy's
copy; a caller never waits for a worker that is asleep, busy or gone (a forked child has none)."""

from __future__ import annotations

import ctypes
import multiprocessing
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmltile.execute import copy_kernel
from tests.execute.test_copy_kernel import LEAD_PIECE_MIN

pytestmark = pytest.mark.skipif(
    not copy_kernel.has_worker(), reason=f"no copy kernel with a worker thread here: {copy_kernel.status()}"
)


def shared_copy(dst: np.ndarray, src: np.ndarray, pieces: int, stream: bool = False):
    """A one-step kernel program copying ``src`` into ``dst`` (byte views of one shape), shared; the
    caller keeps both arrays alive as long as it runs the program."""
    address = copy_kernel.address
    return copy_kernel.step_call(
        address(dst), address(src), dst.shape, dst.strides, src.strides, 1, stream, pieces
    )


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("rows", "row", "pieces"), [(64, 65536, 16), (3, 4096, 16), (1000, 12, 7), (16, 64, 16), (5, 200, 2)]
)
def test_a_shared_step_copies_every_byte_once(rows, row, pieces, stream):
    rng = np.random.default_rng(rows * row)
    src = rng.integers(0, 256, (rows, row), dtype=np.uint8)
    # the destination's rows padded, so a piece that spills past its range shows in the padding
    raw = np.zeros((rows, row + 8), np.uint8)
    dst = raw[:, :row]
    run = shared_copy(dst, src, pieces, stream)
    for value in range(20):  # the worker takes part in some calls and not in others
        src += np.uint8(value > 0)  # new bytes each call (wrapping)
        run()
        assert np.array_equal(dst, src)
        assert not raw[:, row:].any()


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=4).map(tuple),
    row=st.integers(1, 300),
    pieces=st.integers(2, 40),
    stream=st.booleans(),
)
def test_a_step_with_short_outer_axes_is_cut_across_them(shape, row, pieces, stream):
    """Pieces cut across several outer axes (3 x 2 x ... indices as one range) still copy every byte,
    and only those: the destination's padding stays zero and the bytes equal NumPy's."""
    full = (*shape, row)
    src = np.random.default_rng(sum(full)).integers(1, 256, full, dtype=np.uint8)
    raw = np.zeros((*shape, row + 5), np.uint8)
    dst = raw[..., :row]
    run = shared_copy(dst, src, pieces, stream)
    for _ in range(3):
        run()
        assert np.array_equal(dst, src)
        assert not raw[..., row:].any()


@pytest.mark.parametrize(
    ("shape", "src_strides", "stream", "pieces", "cut"),
    [
        ((6, 138105), (0, 8), True, 16, (1, 1)),  # six copies of a 1 MiB block: cut along the block
        ((2, 3, 40, 50000), (0, 0, 400000, 8), True, 16, (2, 1)),  # two repeats lead; 40 rows make 16
        ((6, 4, 500000), (0, 4000000, 8), True, 16, (1, 2)),  # 4 rows of data make too few: rows x bytes
        ((6, 138105), (0, 8), False, 16, (0, 2)),  # ordinary stores: along the copies, as before
        ((6, 16 * LEAD_PIECE_MIN // 8 - 1), (0, 8), True, 16, (0, 2)),  # a piece's data under the minimum
        ((6, 16 * LEAD_PIECE_MIN // 8), (0, 8), True, 16, (1, 1)),  # ...and at it
        ((6, 138105), (8, 8), True, 16, (0, 2)),  # the outer axis reads data: nothing leads
        ((6, 1 << 20), (0, 0), True, 16, (0, 2)),  # a fill: no data axis to cut along
    ],
)
def test_streamed_repeats_of_a_source_are_cut_along_the_source(shape, src_strides, stream, pieces, cut):
    """A streamed step whose outer axes repeat its source is shared past them, so that each thread
    reads its own part of the source instead of both reading all of it."""
    width = src_strides[-1] or 1
    dst_strides = tuple(int(np.prod(shape[i + 1 :])) * width for i in range(len(shape)))
    assert copy_kernel.shared_cut(shape, dst_strides, src_strides, width, stream, pieces) == cut


@settings(max_examples=25, deadline=None)
@given(
    repeats=st.lists(st.integers(2, 3), min_size=1, max_size=2).map(tuple),
    rows=st.integers(2, 40),  # planned steps have no axes of size 1
    pieces=st.integers(2, 16),
    extra=st.integers(0, 5000),
)
def test_a_step_cut_past_its_repeats_copies_every_byte_once(repeats, rows, pieces, extra):
    """Pieces cut along the source, each written once for every repeat, still write every byte of
    every copy and nothing else (the destination's padding stays zero), whoever takes which piece."""
    row = -(-pieces * LEAD_PIECE_MIN // rows) + extra  # enough data for the cut past the repeats
    src = np.random.default_rng(rows * row).integers(1, 256, (rows, row), dtype=np.uint8)
    raw = np.zeros((*repeats, rows, row + 3), np.uint8)
    dst = raw[..., :row]
    view = np.broadcast_to(src, dst.shape)
    assert copy_kernel.shared_cut(dst.shape, dst.strides, view.strides, 1, True, pieces)[0] == len(repeats)
    run = shared_copy(dst, view, pieces, stream=True)
    for _ in range(3):
        dst[...] = 0
        run()
        assert np.array_equal(dst, view)
        assert not raw[..., row:].any()


def test_the_worker_shares_a_step_whose_outermost_axis_is_short():
    """Three blocks of 1 MiB: cut along the outermost axis alone they make three pieces, of which the
    worker takes two at most (the calling thread starts on the first); cut across the outer axes, it
    takes about half of sixteen."""
    src = np.random.default_rng(3).integers(0, 256, (3, 16, 1 << 16), dtype=np.uint8)
    dst = np.zeros_like(src)
    run = shared_copy(dst, src, 16)
    most = 0
    for _ in range(500):
        before = copy_kernel.worker_pieces()
        run()
        most = max(most, copy_kernel.worker_pieces() - before)
        if most > 2:
            break
    assert most > 2
    assert np.array_equal(dst, src)


def test_a_shared_gather_copies_every_chunk():
    rows = np.random.default_rng(1).integers(0, 256, (50, 64), dtype=np.uint8)
    index = np.random.default_rng(2).integers(0, 50, 4096)
    out = np.zeros((4096, 64), np.uint8)
    program = copy_kernel.Program()
    program.gather(1, 0, 0, 0, 64, 64, index, copy_kernel.SHARE_PIECES)
    bases = (ctypes.c_void_p * 2)(copy_kernel.address(rows), copy_kernel.address(out))
    run = program.compile(ctypes.addressof(bases))
    for _ in range(10):
        out[...] = 0
        run()
        assert np.array_equal(out, rows[index])


def test_the_worker_takes_pieces_of_a_large_step():
    src = np.arange(1 << 16, dtype=np.uint8)
    dst = np.zeros((128, 1 << 16), np.uint8)
    run = shared_copy(dst, np.broadcast_to(src, dst.shape), 16)
    before = copy_kernel.worker_pieces()
    for _ in range(500):  # 8 MiB each: the worker wakes within the first few on any machine
        run()
        if copy_kernel.worker_pieces() > before:
            break
    assert copy_kernel.worker_pieces() > before
    assert np.array_equal(dst, np.broadcast_to(src, dst.shape))


def test_callers_on_many_threads_share_one_worker():
    """Only one step is offered to the worker at a time: the other callers copy theirs alone."""
    failures: list[str] = []

    def caller(seed: int) -> None:
        src = np.random.default_rng(seed).integers(0, 256, (32, 8192), dtype=np.uint8)
        dst = np.zeros_like(src)
        run = shared_copy(dst, src, 16)
        for k in range(30):
            src[k % 32] ^= 0xFF
            run()
            if not np.array_equal(dst, src):
                failures.append(f"caller {seed}, call {k}")

    threads = [threading.Thread(target=caller, args=(seed,)) for seed in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def _child(queue) -> None:
    src = np.random.default_rng(7).integers(0, 256, (128, 65536), dtype=np.uint8)
    dst = np.zeros_like(src)
    run = shared_copy(dst, src, 16)
    before = copy_kernel.worker_pieces()
    for _ in range(500):
        run()
        if copy_kernel.worker_pieces() > before:
            break
    queue.put((bool(np.array_equal(dst, src)), copy_kernel.worker_pieces() > before))


def test_a_forked_child_shares_with_a_worker_of_its_own():
    # The parent's worker is running (and may be asleep holding nothing): the child has only the
    # forking thread, so it must start its own worker or copy alone, and never wait for a thread it
    # does not have.
    warm = np.zeros((16, 4096), np.uint8)
    ones = np.ones_like(warm)
    shared_copy(warm, ones, 16)()
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child, args=(queue,))
    child.start()
    child.join(60)
    assert child.exitcode == 0, "the forked child hung or failed"
    assert queue.get(timeout=5) == (True, True)  # equal, and the child's own worker took pieces
