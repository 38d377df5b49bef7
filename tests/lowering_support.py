"""Shared by the lowering tests: random data per dtype, bit-exact comparison, onnxruntime Tile runs."""

from __future__ import annotations

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")  # installed with onnx

FIXED_TYPES = (
    "float32",
    "float16",
    "bfloat16",
    "float64",
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "complex64",
    "complex128",
)


def np_dtype(name: str) -> np.dtype:
    """The NumPy dtype for a NumPy-terms type name (bfloat16 from ml_dtypes)."""
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def random_array(shape, name: str, rng: np.random.Generator, finite: bool = False) -> np.ndarray:
    """Random data: every bit pattern (NaNs included) unless ``finite``; strings for ``string``."""
    if name == "string":
        return np.asarray(rng.integers(0, 1000, size=shape).astype(str), dtype=object)
    if name == "bool":
        return np.asarray(rng.integers(0, 2, size=shape), dtype=bool)
    dt = np_dtype(name)
    if finite and (dt.kind in "fc" or name == "bfloat16"):
        return np.asarray(rng.standard_normal(size=shape) * 100, dtype=dt)
    raw = rng.integers(0, 256, size=tuple(shape) + (dt.itemsize,), dtype=np.uint8)
    return raw.reshape(-1).view(dt).reshape(shape) if raw.size else np.empty(shape, dt)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Same shape, dtype and bytes (NaN payloads included); strings by value."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "OUS":
        return bool(np.array_equal(a, b))
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def ort_tile(x: np.ndarray, repeats, opset: int = 13) -> np.ndarray:
    """Run one real ONNX Tile node on onnxruntime's CPU provider."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    et = TensorProto.STRING if x.dtype.kind in "OU" else helper.np_dtype_to_tensor_dtype(x.dtype)
    graph = helper.make_graph(
        [helper.make_node("Tile", ["x", "repeats"], ["y"])],
        "tile",
        [
            helper.make_tensor_value_info("x", et, list(x.shape)),
            helper.make_tensor_value_info("repeats", TensorProto.INT64, [len(repeats)]),
        ],
        [helper.make_tensor_value_info("y", et, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x, "repeats": np.asarray(repeats, dtype=np.int64)})[0]
