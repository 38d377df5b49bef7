"""DirectML through onnxruntime-directml: the same cases as the CPU, bit-exact against the NumPy backend.

Runs with `pytest -m directml` on Windows with a DirectX 12 adapter (WARP counts); skips elsewhere.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dmltile
from dmltile.execute.ort_backend import available_providers
from tests.exec_reference import DTYPES, SENTINEL

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DML = "DmlExecutionProvider"
pytestmark = [
    pytest.mark.directml,
    pytest.mark.skipif(
        DML not in available_providers(),
        reason="DmlExecutionProvider not available: needs Windows + onnxruntime-directml "
        "(pip install dmltile[directml])",
    ),
]
CASES = [
    ([1, 1, 2, 3], [1, 1, 3, 3]),
    ([2, 3, 4], [1, 2, 3]),
    ([2] * 8, [2] * 8),
    ([5], [7]),
    ([1, 64, 32, 32], [1, 1, 2, 2]),
    ([4096, 1], [1, 64]),
]


def random_bits(dtype: np.dtype, shape, seed: int = 0) -> np.ndarray:
    """Random bit patterns without NaNs (NaN payloads have their own test below)."""
    width = dtype.itemsize
    bits = np.random.default_rng(seed).integers(0, 2 ** (8 * width), shape, dtype=f"u{width}", endpoint=False)
    x = bits.view(dtype)
    if dtype.kind == "f":
        x[np.isnan(x)] = 0
    return x


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("sizes,repeats", CASES, ids=str)
def test_directml_equals_numpy(sizes, repeats, dtype):
    desc = dmltile.tile_desc(sizes, repeats, dtype=dtype)
    op = dmltile.compile(desc, "4.1", backend="onnxruntime", require_provider=DML)
    assert op.provider == DML
    x = random_bits(np.dtype(DTYPES[dtype]), sizes)
    result = dmltile.compare_backends(desc, x, "4.1", require_provider=DML)
    assert result.identical, result.message


def test_doc_example_on_directml():
    x = np.array([[[[1, 2, 3], [4, 5, 6]]]], dtype=np.float32)
    y = dmltile.execute(EXAMPLES / "doc_example.json", x, "1.0", backend="onnxruntime", require_provider=DML)
    assert np.array_equal(y, np.tile(x, (1, 1, 3, 3)))


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("valid_*.json")), ids=lambda p: p.name)
def test_examples_buffers_on_directml(path):
    desc = dmltile.load(path)
    level = dmltile.min_feature_level(desc)
    ops = [
        dmltile.compile(desc, level),
        dmltile.compile(desc, level, backend="onnxruntime", require_provider=DML),
    ]
    in_buf = (
        np.random.default_rng(2)
        .integers(0, 256, desc.input.total_tensor_size_in_bytes, dtype=np.uint8)
        .tobytes()
    )
    outs = []
    for op in ops:
        out = bytearray([SENTINEL]) * desc.output.total_tensor_size_in_bytes
        op.run_buffers(in_buf, out)
        outs.append(out)
    assert outs[0] == outs[1]


@pytest.mark.parametrize(
    "dtype,bits",
    [
        ("FLOAT16", [0x7C01, 0xFE12, 0x7D55, 0xFFFF, 0x8000, 0x0001]),
        ("FLOAT32", [0x7F800001, 0xFFC01234, 0x7FA00000, 0xFFFFFFFF, 0x80000000, 0x00000001]),
    ],
)
def test_directml_keeps_nan_payloads(dtype, bits):
    # Tile is a copy ("never converts"); a failure here means the GPU path changes NaN bits.
    width = 2 if dtype == "FLOAT16" else 4
    x = np.array(bits, dtype=f"u{width}").reshape(2, 3).view(DTYPES[dtype])
    result = dmltile.compare_backends(
        dmltile.tile_desc([2, 3], [3, 2], dtype=dtype), x, "4.1", require_provider=DML
    )
    assert result.identical, result.message
