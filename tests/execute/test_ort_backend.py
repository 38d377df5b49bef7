"""The onnxruntime backend on the CPU: same results as NumPy on every type, same buffer contract, loud errors."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.execute.ort_backend import PROVIDER_ORDER, available_providers
from tests.exec_reference import DTYPES, SENTINEL, descriptors

pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")


def finite_bits(dtype: np.dtype, shape, seed: int) -> np.ndarray:
    """Random bit patterns; float16 NaNs are replaced, because onnxruntime's CPU float16 Tile quiets them."""
    width = dtype.itemsize
    bits = np.random.default_rng(seed).integers(0, 2 ** (8 * width), shape, dtype=f"u{width}", endpoint=False)
    x = bits.view(dtype)
    if dtype == np.float16:
        x[np.isnan(x)] = 0
    return x


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_cpu_equals_numpy_on_every_type(dtype):
    desc = dmltile.tile_desc([2, 1, 3, 5], [2, 4, 1, 3], dtype=dtype)
    op = dmltile.compile(desc, "4.1", backend="onnxruntime")
    assert op.provider in available_providers()
    x = finite_bits(np.dtype(DTYPES[dtype]), [2, 1, 3, 5], seed=3)
    width = f"u{x.dtype.itemsize}"
    assert np.array_equal(op(x).view(width), dmltile.execute(desc, x, "4.1").view(width))
    assert dmltile.compare_backends(desc, x, "4.1").identical


@settings(max_examples=40, deadline=None)
@given(
    desc=descriptors(),
    seed=st.integers(0, 2**32 - 1),
    poison=st.booleans(),
)
def test_buffer_contract_matches_numpy(desc, seed, poison):
    ort_op = dmltile.compile(desc, "4.1", backend="onnxruntime")
    np_op = dmltile.compile(desc, "4.1")
    dtype = np.dtype(DTYPES[desc["InputTensor"]["DataType"]])
    n_in = desc["InputTensor"]["TotalTensorSizeInBytes"]
    in_buf = finite_bits(dtype, n_in // dtype.itemsize, seed).tobytes().ljust(n_in, b"\0")
    outs = []
    for op in (np_op, ort_op):
        out = bytearray([SENTINEL]) * (desc["OutputTensor"]["TotalTensorSizeInBytes"] + 4)
        op.run_buffers(in_buf, out, poison_padding=poison)
        outs.append(out)
    assert outs[0] == outs[1]


def test_provider_is_what_the_session_uses():
    op = dmltile.compile(dmltile.tile_desc([2, 3], [2, 2]), backend="onnxruntime")
    assert op.provider == op.session.get_providers()[0]
    assert op.provider == next(p for p in PROVIDER_ORDER if p in available_providers())
    cpu = dmltile.compile(
        dmltile.tile_desc([2, 3], [2, 2]), backend="onnxruntime", require_provider="CPUExecutionProvider"
    )
    assert cpu.provider == "CPUExecutionProvider"


@pytest.mark.skipif("DmlExecutionProvider" in available_providers(), reason="DirectML is present here")
def test_require_missing_provider_fails_loudly():
    with pytest.raises(dmltile.DmlTileError) as err:
        dmltile.compile(
            dmltile.tile_desc([2, 3], [2, 2]), backend="onnxruntime", require_provider="DmlExecutionProvider"
        )
    message = str(err.value)
    assert "DmlExecutionProvider" in message and "CPUExecutionProvider" in message and "directml" in message


@pytest.mark.skipif(
    "AzureExecutionProvider" not in available_providers(), reason="needs a provider without Tile"
)
def test_provider_that_cannot_run_tile_is_unsupported_not_a_fallback():
    # The Azure EP runs no Tile kernel; with CPU fallback disabled the session must refuse, not fall back.
    with pytest.raises(dmltile.UnsupportedError, match="cannot run Tile on FLOAT32 .*AzureExecutionProvider"):
        dmltile.compile(
            dmltile.tile_desc([2, 3], [2, 2]),
            backend="onnxruntime",
            require_provider="AzureExecutionProvider",
        )


def test_missing_onnxruntime_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(dmltile.DmlTileError, match=r"dmltile\[onnx\]"):
        dmltile.compile(dmltile.tile_desc([2, 3], [2, 2]), backend="onnxruntime")


def test_input_errors_match_the_numpy_backend():
    op = dmltile.compile(dmltile.tile_desc([2, 3], [2, 2]), backend="onnxruntime")
    with pytest.raises(dmltile.DmlTileError, match="dtype int32.*FLOAT32"):
        op(np.ones((2, 3), np.int32))


def test_compare_backends_reports_the_first_differing_element():
    # float16 NaN payloads: a pure copy keeps them; onnxruntime's CPU float16 kernel may not.
    raw = np.array([[0x3C00, 0x7D55, 0x7C01], [0x0001, 0x8000, 0xFE12]], dtype=np.uint16)
    desc = dmltile.tile_desc([2, 3], [2, 2], dtype="FLOAT16")
    result = dmltile.compare_backends(desc, raw.view(np.float16))
    y_np = np.tile(raw, (2, 2))
    y_ort = dmltile.execute(desc, raw.view(np.float16), backend="onnxruntime").view(np.uint16)
    differ = np.argwhere(y_np != y_ort)
    if len(differ) == 0:
        assert result.identical and result.index is None and result.message == "identical"
    else:
        index = tuple(int(i) for i in differ[0])
        assert not result.identical and result.index == index
        assert result.message.startswith(f"first difference at [{','.join(map(str, index))}]: numpy=")
        assert (
            f"0x{y_np[index]:04x}" in result.message
            and f"onnxruntime=nan(0x{y_ort[index]:04x})" in result.message
        )


def test_backend_info_lists_the_real_providers():
    import onnxruntime

    info = dmltile.backend_info()
    assert info["onnxruntime"] == onnxruntime.__version__
    assert info["providers"] == onnxruntime.get_available_providers()
    assert info["default_provider"] in info["providers"]
