"""The NumPy backend: documented outputs, a naive byte-loop reference, bit-exactness, contracts, limits."""

from __future__ import annotations

import json
import math
import tracemalloc
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.execute import compile as compile_module
from dmltile.execute import limits, numpy_backend
from dmltile.execute.buffers import POISON_BYTE
from dmltile.execute.fast.recipe import this_machine
from dmltile.validate import api as validate_api
from tests.exec_reference import DTYPES, SENTINEL, descriptors, run_naive

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RUNNABLE = sorted(EXAMPLES.glob("valid_*.json")) + [EXAMPLES / "doc_example.json"]


def test_doc_example_gives_the_documented_output():
    # DML_TILE_OPERATOR_DESC page, "Examples" (seeds/004): a 2x3 input tiled {1, 1, 3, 3}.
    x = np.array([[[[1, 2, 3], [4, 5, 6]]]], dtype=np.float32)
    documented = np.array(
        [
            [
                [
                    [1, 2, 3, 1, 2, 3, 1, 2, 3],
                    [4, 5, 6, 4, 5, 6, 4, 5, 6],
                    [1, 2, 3, 1, 2, 3, 1, 2, 3],
                    [4, 5, 6, 4, 5, 6, 4, 5, 6],
                    [1, 2, 3, 1, 2, 3, 1, 2, 3],
                    [4, 5, 6, 4, 5, 6, 4, 5, 6],
                ]
            ]
        ],
        dtype=np.float32,
    )
    y = dmltile.execute(EXAMPLES / "doc_example.json", x, feature_level="1.0")
    assert y.dtype == np.float32 and np.array_equal(y, documented)
    out = bytearray(216)
    dmltile.compile(EXAMPLES / "doc_example.json", "1.0").run_buffers(x.tobytes(), out)
    assert bytes(out) == documented.tobytes()


@pytest.mark.parametrize("path", RUNNABLE, ids=lambda p: p.name)
def test_every_valid_example_runs_like_the_naive_loop(path):
    desc = dmltile.load(path)
    level = dmltile.min_feature_level(desc)
    op = dmltile.compile(path, level)
    doc = json.loads(path.read_text())
    plain = _plain(desc)
    rng = np.random.default_rng(1)
    in_buf = rng.integers(0, 256, plain["InputTensor"]["TotalTensorSizeInBytes"], dtype=np.uint8).tobytes()
    out = bytearray([SENTINEL]) * (plain["OutputTensor"]["TotalTensorSizeInBytes"] + 8)
    op.run_buffers(in_buf, out)
    assert out == run_naive(plain, in_buf, len(out)), doc
    x = rng.integers(0, 100, desc.input.sizes).astype(desc.input.data_type.numpy_dtype)
    assert np.array_equal(op(x), np.tile(x, desc.repeats))


def _plain(desc) -> dict:
    """The descriptor as the test reference reads it (short names, explicit strides)."""

    def tensor(t):
        return {
            "DataType": t.data_type.name,
            "Sizes": list(t.sizes),
            "Strides": list(t.effective_strides),
            "TotalTensorSizeInBytes": t.total_tensor_size_in_bytes,
        }

    return {
        "InputTensor": tensor(desc.input),
        "OutputTensor": tensor(desc.output),
        "Repeats": list(desc.repeats),
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(desc=descriptors(), seed=st.integers(0, 2**32 - 1), poison=st.booleans())
def test_random_descriptors_match_the_naive_loop(desc, seed, poison):
    assert_matches_naive(dmltile.compile(desc, "4.1"), desc, seed, poison)


def assert_matches_naive(op, desc: dict, seed: int, poison: bool = False) -> None:
    """run_buffers on random input bytes and a sentinel-filled output (4 bytes longer than its
    TotalTensorSizeInBytes) gives exactly the naive loop's buffer."""
    rng = np.random.default_rng(seed)
    in_buf = rng.integers(0, 256, desc["InputTensor"]["TotalTensorSizeInBytes"], dtype=np.uint8).tobytes()
    out = bytearray([SENTINEL]) * (desc["OutputTensor"]["TotalTensorSizeInBytes"] + 4)
    op.run_buffers(in_buf, out, poison_padding=poison)
    assert out == run_naive(desc, in_buf, len(out), poison=POISON_BYTE if poison else None)


@settings(max_examples=60, deadline=None)
@given(desc=descriptors(aliasing=True), seed=st.integers(0, 2**32 - 1))
def test_aliasing_output_strides_are_refused_and_distinct_ones_run(desc, seed):
    # DirectML rejects output strides with a zero or repeated stride on an axis of more than one
    # element, or with more elements than addresses in their span (DML109): compile() refuses them.
    # Other strides that alias (DML111, a warning) run like DirectML's accepted ones: row-major order,
    # last write wins, exactly as the naive loop writes.
    out = desc["OutputTensor"]
    axes = [(st, n) for n, st in zip(out["Sizes"], out["Strides"], strict=True) if n > 1]
    steps = [st for st, _ in axes]
    span = sum((n - 1) * st for st, n in axes) + 1
    rejected = 0 in steps or len(set(steps)) < len(steps) or math.prod(n for _, n in axes) > span
    if rejected:
        with pytest.raises(dmltile.DescriptorError, match="DML109"):
            dmltile.compile(desc, "4.1")
    else:
        assert_matches_naive(dmltile.compile(desc, "4.1"), desc, seed)


@settings(max_examples=60, deadline=None)
@given(desc=descriptors(max_out_elements=1 << 16), seed=st.integers(0, 2**32 - 1))
def test_arrays_match_numpy_tile_bit_for_bit(desc, seed):
    op = dmltile.compile(desc, "4.1")
    dtype = np.dtype(DTYPES[desc["InputTensor"]["DataType"]])
    bits = np.random.default_rng(seed).integers(
        0, 2 ** (8 * dtype.itemsize), desc["InputTensor"]["Sizes"], dtype=f"u{dtype.itemsize}", endpoint=False
    )
    x = bits.view(dtype)
    y = op(x)
    assert y.shape == tuple(desc["OutputTensor"]["Sizes"]) and y.dtype == dtype
    assert np.array_equal(y.view(bits.dtype), np.tile(bits, desc["Repeats"]))
    out = np.empty_like(y)
    assert op(x, out=out) is out and np.array_equal(out.view(bits.dtype), y.view(bits.dtype))


@pytest.mark.parametrize(
    "dtype,bits",
    [
        (
            "FLOAT16",
            [0x7C01, 0xFE12, 0x7D55, 0xFFFF, 0x8000, 0x0001],
        ),  # signalling/quiet NaNs with payloads, -0, subnormal
        ("FLOAT32", [0x7F800001, 0xFFC01234, 0x7FA00000, 0xFFFFFFFF, 0x80000000, 0x00000001]),
    ],
)
def test_nan_payloads_survive(dtype, bits):
    width = 2 if dtype == "FLOAT16" else 4
    raw = np.array(bits, dtype=f"u{width}").reshape(1, 2, 3)
    x = raw.view(DTYPES[dtype])
    y = dmltile.execute(dmltile.tile_desc([1, 2, 3], [2, 3, 2], dtype=dtype), x)
    assert np.array_equal(y.view(raw.dtype), np.tile(raw, (2, 3, 2)))


def test_broadcast_input_strides_read_one_element():
    desc = dmltile.tile_desc([3, 4], [2, 1], strides=[0, 1])  # every row reads the same 4 elements
    buf = np.arange(4, dtype=np.float32)
    out = np.full(24, -1, np.float32)
    dmltile.compile(desc).run_buffers(buf, out)
    assert np.array_equal(out.reshape(6, 4), np.tile(buf, (6, 1)))


def test_large_output_split_across_two_threads():
    # Planned for a machine that shares every copy from 1 KiB (where this one has the kernel's worker).
    traits = replace(this_machine(), cores=2, two_thread_min=1024)
    x = np.arange(3 * 700, dtype=np.int16).reshape(3, 700)
    op = numpy_backend.NumpyTile(dmltile.tile_desc([3, 700], [5, 3], dtype="INT16"), threads=2, traits=traits)
    if not traits.worker:
        pytest.skip("no kernel worker here: every recipe runs on one thread")
    assert op.plan_info()["threads"] == 2 and op.plan_info(buffers=True)["threads"] == 2
    assert np.array_equal(op(x), np.tile(x, (5, 3)))
    out = bytearray(op.desc.output.total_tensor_size_in_bytes)
    op.run_buffers(x.tobytes(), out)
    assert bytes(out) == np.tile(x, (5, 3)).tobytes()


def test_call_with_out_allocates_nothing():
    op = numpy_backend.NumpyTile(dmltile.tile_desc([1, 64, 64, 64], [1, 1, 2, 2]))
    x = np.ones((1, 64, 64, 64), np.float32)
    out = np.empty(op.out_shape, np.float32)
    op(x, out)  # warm up: per-thread temporaries, if the plan has any, are made once
    tracemalloc.start()
    try:
        op(x, out)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 < out.nbytes


def test_calls_do_not_validate(monkeypatch):
    op = dmltile.compile(EXAMPLES / "doc_example.json")

    def refuse(*args, **kwargs):
        raise AssertionError("validated during a call")

    monkeypatch.setattr(validate_api, "validate", refuse)
    monkeypatch.setattr(validate_api, "parse_and_validate", refuse)
    monkeypatch.setattr(compile_module, "check", refuse)
    x = np.ones((1, 1, 2, 3), np.float32)
    op(x)
    op.run_buffers(x, np.empty(54, np.float32))


@pytest.mark.parametrize(
    "bad,words",
    [
        (np.ones((1, 1, 3, 2), np.float32), ["shape (1, 1, 3, 2)", "Sizes"]),
        (np.ones((1, 1, 2, 3), np.float64), ["float64", "FLOAT32"]),
        ([[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]], ["numpy.ndarray", "list"]),
    ],
)
def test_input_mismatch_is_a_clear_error(bad, words):
    op = dmltile.compile(EXAMPLES / "doc_example.json")
    with pytest.raises(dmltile.DmlTileError) as err:
        op(bad)
    assert all(w in str(err.value) for w in words)


def test_out_mismatch_is_a_clear_error():
    op = dmltile.compile(EXAMPLES / "doc_example.json")
    x = np.ones((1, 1, 2, 3), np.float32)
    with pytest.raises(dmltile.DmlTileError, match="out must be"):
        op(x, out=np.empty((1, 1, 9, 6), np.float32))
    with pytest.raises(dmltile.DmlTileError, match="C-contiguous"):
        op(x, out=np.empty((1, 1, 9, 6), np.float32).transpose(0, 1, 3, 2))


def test_short_and_read_only_buffers_are_refused():
    op = dmltile.compile(EXAMPLES / "doc_example.json")
    with pytest.raises(dmltile.DmlTileError, match="input buffer has 20 bytes.*TotalTensorSizeInBytes is 24"):
        op.run_buffers(bytes(20), bytearray(216))
    with pytest.raises(dmltile.DmlTileError, match="output buffer has 212 bytes.*216"):
        op.run_buffers(bytes(24), bytearray(212))
    with pytest.raises(dmltile.DmlTileError, match="read-only"):
        op.run_buffers(bytes(24), bytes(216))


def test_oversize_output_refused_before_allocation(monkeypatch):
    desc = dmltile.tile_desc([1024, 1024], [64, 32], dtype="INT64")  # 16 GiB of output
    monkeypatch.setattr(limits, "available_memory", lambda: 8 << 30)
    tracemalloc.start()
    try:
        with pytest.raises(
            dmltile.OutputTooLargeError, match=r"16\.0 GiB.*memory cap of 4\.0 GiB.*max_output_bytes"
        ):
            dmltile.compile(desc)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20
    small = dmltile.tile_desc([4, 4], [4, 4])
    with pytest.raises(dmltile.OutputTooLargeError, match="1.0 KiB"):
        dmltile.compile(small, max_output_bytes=1000)
    monkeypatch.setattr(limits, "MAX_OUTPUT_BYTES", 512)
    with pytest.raises(dmltile.OutputTooLargeError, match="MAX_OUTPUT_BYTES"):
        dmltile.compile(small)
    assert dmltile.compile(small, max_output_bytes=1024).out_shape == (16, 16)


def test_compile_reports_invalid_descriptors_and_options():
    with pytest.raises(dmltile.DescriptorError) as err:
        dmltile.compile(EXAMPLES / "invalid_output_sizes.json")
    assert "DML205" in str(err.value)
    with pytest.raises(dmltile.DescriptorError, match="DML302"):
        dmltile.compile(dmltile.tile_desc([2], [2], dtype="INT64"), "3.1")
    with pytest.raises(dmltile.DmlTileError, match="unknown backend 'cuda'"):
        dmltile.compile(EXAMPLES / "doc_example.json", backend="cuda")
    with pytest.raises(dmltile.DmlTileError, match="unknown option threadz"):
        dmltile.compile(EXAMPLES / "doc_example.json", threadz=2)


@pytest.mark.parametrize(
    "sizes,repeats", [([1, 1, 2, 3], [1, 1, 3, 3]), ([2] * 8, [2] * 8)], ids=["tiny", "8-D"]
)
def test_non_contiguous_input_arrays(sizes, repeats):
    op = dmltile.compile(dmltile.tile_desc(sizes, repeats, dtype="INT16"), "4.1")
    x = np.arange(math.prod(sizes), dtype=np.int16).reshape(sizes[::-1]).T  # the right shape, Fortran order
    assert x.shape == tuple(sizes) and not x.flags.c_contiguous
    assert np.array_equal(op(x), np.tile(x, repeats))
