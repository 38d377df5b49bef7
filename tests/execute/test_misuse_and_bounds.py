"""API misuse gets the library's own errors, .npy and buffer reads are bounded by the file's real
size, and buffer-mode runs take memory in proportion to the output buffer."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import dmltile
from dmltile.errors import DmlTileError, InputError, UnsupportedError
from dmltile.execute import buffers
from dmltile.execute.npy import read_buffer_file, read_npy

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix, on purpose


@pytest.fixture
def op():
    return dmltile.compile(dmltile.tile_desc([2, 3], [2, 2]))


X = np.arange(6, dtype=np.float32).reshape(2, 3)


def test_an_ndarray_subclass_is_read_as_its_plain_data(op):
    y = op(np.matrix(X))
    assert type(y) is np.ndarray and np.array_equal(y, np.tile(X, (2, 2)))
    masked = np.ma.masked_array(X, mask=np.zeros_like(X, bool))
    assert np.array_equal(op(masked), np.tile(X, (2, 2)))


@pytest.mark.parametrize(
    "out, text",
    [
        (np.empty((5, 6), np.float32), "shape (5, 6)"),  # more rows: same strides, wrong shape
        (np.empty((4, 6), np.float64), "dtype float64"),
        (np.empty((4, 7), np.float32), "shape (4, 7)"),
        (np.empty((6, 4), np.float32).T, "C-contiguous"),
        (np.matrix(np.empty((4, 6), np.float32)), "subclass matrix"),
        ([0.0] * 24, "got list"),
    ],
    ids=["more rows", "dtype", "columns", "transposed", "matrix", "list"],
)
def test_out_must_be_exactly_the_output(op, out, text):
    with pytest.raises(DmlTileError, match=re.escape(text)):
        op(X, out=out)


def test_a_read_only_out_is_refused_by_name(op):
    out = np.empty((4, 6), np.float32)
    out.flags.writeable = False
    with pytest.raises(DmlTileError, match="read-only"):
        op(X, out=out)


def test_a_correct_out_is_filled_and_returned(op):
    out = np.empty((4, 6), np.float32)
    assert op(X, out=out) is out and np.array_equal(out, np.tile(X, (2, 2)))


# Interleaved output strides (2 and 3001) over 9 million elements: DirectML-valid with the DML111
# warning (zero or equal strides, or more elements than the span holds, are DML109 errors instead),
# and too many elements to write one by one in row-major order.
ALIASING = {
    "InputTensor": {"DataType": "UINT8", "Sizes": [1, 1]},
    "OutputTensor": {
        "DataType": "UINT8",
        "Sizes": [3000, 3000],
        "Strides": [2, 3001],
        "TotalTensorSizeInBytes": 9006000,  # (2999 * 2 + 2999 * 3001 + 1) rounded up to 4
    },
    "Repeats": [3000, 3000],
}


def test_an_aliasing_output_with_millions_of_elements_is_refused_before_any_work():
    op = dmltile.compile(ALIASING)
    size = ALIASING["OutputTensor"]["TotalTensorSizeInBytes"]
    out = bytearray(size)
    with pytest.raises(UnsupportedError, match="refused before any work"):
        op.run_buffers(bytearray(4), out)
    assert out == bytearray(size)  # untouched


def test_small_aliasing_outputs_still_run_in_row_major_order():
    # Strides 2 and 6 over [5, 6]: element (3, 0) and (0, 1) share byte 6 (a DML111 warning).
    out_desc = {"DataType": "UINT8", "Sizes": [5, 6], "Strides": [2, 6], "TotalTensorSizeInBytes": 40}
    desc = dict(ALIASING, OutputTensor=out_desc, Repeats=[5, 6])
    assert dmltile.validate(desc).codes == ["DML111"]
    out = bytearray(40)
    dmltile.compile(desc).run_buffers(bytes([7, 0, 0, 0]), out)
    assert out[0] == 7 and out[6] == 7
    assert buffers.MAX_ALIASED_ELEMENTS >= 30


def test_a_npy_header_declaring_3_tib_is_refused_before_allocating(tmp_path):
    path = tmp_path / "huge.npy"
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": "<f4", "fortran_order": False, "shape": (1 << 20, 1 << 20, 3)}
        )
        f.write(b"\0" * 16)
    assert path.stat().st_size < 200
    with pytest.raises(InputError, match="holds only 16 bytes"):
        read_npy(path)


def test_a_npy_is_read_exactly(tmp_path):
    a = np.arange(12, dtype=np.int16).reshape(3, 4)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "f.npy", np.asfortranarray(a))
    assert np.array_equal(read_npy(tmp_path / "a.npy"), a)
    assert np.array_equal(read_npy(tmp_path / "f.npy"), a)


def test_a_npy_above_its_limit_is_refused_by_name(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros(100, np.uint8))
    with pytest.raises(InputError, match="at most 64 bytes"):
        read_npy(tmp_path / "a.npy", limit=64)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_npy_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "p.npy")
    with pytest.raises(InputError, match="not a regular file"):
        read_npy(tmp_path / "p.npy")


def test_an_input_buffer_is_read_only_as_far_as_needed(tmp_path):
    path = tmp_path / "in.bin"
    with open(path, "wb") as f:  # sparse: 8 GiB on paper, nothing on disk
        f.write(bytes(range(16)))
        f.truncate(8 << 30)
    data = read_buffer_file(path, 12)
    assert data.tolist() == list(range(12))
    (tmp_path / "short.bin").write_bytes(b"x")
    with pytest.raises(InputError, match="needs 100"):
        read_buffer_file(tmp_path / "short.bin", 100)


def _peak_extra(code: str) -> int:
    """Peak resident bytes a child process adds above its state after the imports in ``code``'s head."""
    script = (
        "import numpy as np, dmltile\n"
        "def peak():  # VmHWM resets at execve; ru_maxrss would carry the parent's (pytest's) peak\n"
        "    with open('/proc/self/status') as f:\n"
        "        return next(int(line.split()[1]) for line in f if line.startswith('VmHWM:'))\n"
        "base = peak()\n" + code + "\nprint((peak() - base) * 1024)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmHWM from /proc")
def test_run_buffers_peak_memory_is_at_most_twice_the_output_buffer():
    out_bytes = 64 << 20
    extra = _peak_extra(
        "op = dmltile.compile(dmltile.tile_desc([1, 1, 64, 1024], [1, 1, 64, 4]))\n"
        "src = np.ones(op.desc.input.total_tensor_size_in_bytes, np.uint8)\n"
        "dst = np.zeros(op.desc.output.total_tensor_size_in_bytes, np.uint8)\n"
        "op.run_buffers(src, dst, poison_padding=True)\n"
    )
    assert out_bytes // 2 < extra <= 2 * out_bytes, extra  # the output buffer itself is counted


def test_run_buffers_reads_ndarray_subclasses_as_plain_bytes(op):
    src = np.matrix(X).view(np.uint8)
    dst = np.matrix(np.zeros((1, 96), np.uint8))
    op.run_buffers(src, dst)
    assert np.array_equal(np.asarray(dst).view(np.float32).reshape(4, 6), np.tile(X, (2, 2)))
