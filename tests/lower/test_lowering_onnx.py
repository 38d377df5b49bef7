"""ONNX Tile-13, -6 and -1 lowered onto DirectML, against onnxruntime CPU and numpy.tile."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmltile
from dmltile import FrameworkError
from tests.lowering_support import FIXED_TYPES, np_dtype, ort_tile, random_array, same_bits

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
LEVELS = ["1.0", "2.1", "3.1", "4.1", "6.4"]
# onnxruntime's CPU Tile has no bfloat16 or complex kernels; those are checked against numpy.tile.
ORT_TYPES = [t for t in FIXED_TYPES if t not in ("bfloat16", "complex64", "complex128")] + ["string"]


def _run_everywhere(plan):
    """Run the plan at its level, or at its lowest dispatching level when it does not dispatch there."""
    if plan.status == "unsupported" and plan.min_feature_level is not None:
        plan = plan.at_level(plan.min_feature_level)
    return plan


# -- the ONNX backend test cases for Tile, regenerated -----------------------------------------
def test_backend_test_tile():
    """onnx backend test `test_tile`: random 2x3x4x5 float32, repeats random ints in [1, 10)."""
    rng = np.random.default_rng(0)
    x = rng.random((2, 3, 4, 5)).astype(np.float32)
    repeats = rng.integers(low=1, high=10, size=(x.ndim,)).astype(np.int64)
    for level in LEVELS:
        plan = dmltile.lower("onnx", x.shape, repeats, "float32", feature_level=level)
        assert plan.status == "dispatch"
        y = plan.run(x)
        assert same_bits(y, ort_tile(x, repeats)) and same_bits(y, np.tile(x, repeats))


def test_backend_test_tile_precomputed():
    """onnx backend test `test_tile_precomputed`, with the expected output written in the ONNX docs."""
    x = np.array([[0, 1], [2, 3]], dtype=np.float32)
    expected = np.array([[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]], dtype=np.float32)
    plan = dmltile.lower("onnx", [2, 2], np.array([2, 2], dtype=np.int64), "float32", feature_level="1.0")
    assert same_bits(plan.run(x), expected)
    assert same_bits(ort_tile(x, [2, 2]), expected)
    assert plan.descriptor.input.sizes == (1, 1, 2, 2) and plan.descriptor.repeats == (1, 1, 2, 2)


def _pytorch_operator_cases():
    base = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "pytorch-operator")
    return sorted(glob.glob(os.path.join(base, "test_operator_repeat*")))


@pytest.mark.parametrize("case", _pytorch_operator_cases(), ids=os.path.basename)
def test_pytorch_operator_repeat_models(case):
    """The onnx package's published pytorch-operator repeat models and their recorded outputs."""
    from onnx import numpy_helper

    def tensor(path):
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        return numpy_helper.to_array(t)

    x = tensor(os.path.join(case, "test_data_set_0", "input_0.pb"))
    expected = tensor(os.path.join(case, "test_data_set_0", "output_0.pb"))
    [report] = dmltile.check_model(os.path.join(case, "model.onnx"))
    assert report.status == "dispatch" and report.output_shape == list(expected.shape)
    d = report.descriptor  # what onnxruntime's DirectML EP compiles: size-1 output axes dropped
    assert 1 not in d.output.sizes
    got = dmltile.compile(d)(x.reshape(d.input.sizes))
    assert same_bits(np.asarray(got).reshape(expected.shape), expected)
    plan = dmltile.lower(
        "onnx", report.input_shape, report.repeats, report.input_type, opset=report.opset, feature_level="1.0"
    )
    assert same_bits(plan.run(x.reshape(report.input_shape)), expected)


def test_case_list_is_not_empty():
    assert len(_pytorch_operator_cases()) == 2


# -- differential: random shapes, repeats, types and levels ------------------------------------
@settings(max_examples=120, deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), min_size=0, max_size=6),
    data=st.data(),
    dtype=st.sampled_from(ORT_TYPES),
    opset=st.sampled_from([7, 12, 13, 21]),
    level=st.sampled_from(LEVELS),
)
def test_tile_6_and_13_match_onnxruntime_and_numpy(shape, data, dtype, opset, level):
    repeats = data.draw(st.lists(st.integers(0, 3), min_size=len(shape), max_size=len(shape)))
    rng = np.random.default_rng(len(shape) * 31 + sum(repeats))
    x = random_array(shape, dtype, rng, finite=True)
    plan = _run_everywhere(dmltile.lower("onnx", shape, repeats, dtype, opset=opset, feature_level=level))
    expected = ort_tile(x, repeats, opset)
    assert plan.output_shape == expected.shape == np.tile(x, repeats).shape
    if plan.status == "unsupported":
        assert dtype == "string" and plan.min_feature_level is None
        with pytest.raises(dmltile.UnsupportedError):
            plan.run(x)
        return
    y = plan.run(x)
    assert same_bits(y, expected) and same_bits(y, np.tile(x, repeats))


@settings(max_examples=80, deadline=None)
@given(
    shape=st.lists(st.integers(1, 3), min_size=0, max_size=9),
    data=st.data(),
    dtype=st.sampled_from(FIXED_TYPES),
    level=st.sampled_from(LEVELS),
)
def test_every_bit_pattern_survives_the_lowering(shape, data, dtype, level):
    """All types, NaN payloads included, ranks 0 to 9: bit-identical to numpy.tile (bfloat16 and
    complex, which onnxruntime's CPU Tile lacks, included)."""
    repeats = data.draw(st.lists(st.integers(1, 3), min_size=len(shape), max_size=len(shape)))
    x = random_array(shape, dtype, np.random.default_rng(len(shape)))
    plan = _run_everywhere(dmltile.lower("onnx", shape, repeats, dtype, feature_level=level))
    if plan.status == "unsupported" and len(shape) == 9:
        # Nine dimensions that no merge can reduce (e.g. [1,2,...,2,1] x [1,2,...,2]): past the 8
        # every DirectML level allows, so no level dispatches it, and it runs on NumPy only.
        assert plan.min_feature_level is None and "DML301" in plan.unsupported_reason
        return
    assert plan.status == "dispatch"
    assert dmltile.validate(plan.descriptor, plan.feature_level).valid
    assert same_bits(plan.run(x), np.tile(x, repeats))


def test_bfloat16_as_uint16_view():
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 2**16, size=(3, 2), dtype=np.uint16)
    plan = dmltile.lower("onnx", [3, 2], [2, 3], "bfloat16", feature_level="2.1")
    assert plan.descriptor.input.data_type == dmltile.DataType.UINT16
    assert same_bits(plan.run(bits), np.tile(bits, [2, 3]))
    assert same_bits(
        plan.run(bits.view(np_dtype("bfloat16"))), np.tile(bits.view(np_dtype("bfloat16")), [2, 3])
    )


# -- Tile-1 ------------------------------------------------------------------------------------
def _tile_1_reference(x, tiles, axis):
    """Tile-1 by its page: the whole tensor repeated `tiles` times along `axis`."""
    return np.concatenate([x] * tiles, axis=axis) if tiles else np.take(x, [], axis=axis)


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=5),
    data=st.data(),
    dtype=st.sampled_from(["float16", "float32", "float64"]),
    level=st.sampled_from(LEVELS),
)
def test_tile_1_tiles_along_one_axis(shape, data, dtype, level):
    axis = data.draw(st.integers(0, len(shape) - 1))
    tiles = data.draw(st.integers(0, 4))
    x = random_array(shape, dtype, np.random.default_rng(axis))
    plan = _run_everywhere(
        dmltile.lower("onnx", shape, None, dtype, opset=5, feature_level=level, tiles=tiles, axis=axis)
    )
    assert plan.operator == "ONNX Tile-1"
    assert same_bits(plan.run(x), _tile_1_reference(x, tiles, axis))


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(repeats=None, dtype="int32", tiles=2, axis=0), ["Tile-1", "int32", "tensor(float16)"]),
        (dict(repeats=None, dtype="float32", tiles=2, axis=2), ["axis is 2", "0..1"]),
        (dict(repeats=None, dtype="float32", tiles=2, axis=-1), ["axis is -1"]),
        (dict(repeats=None, dtype="float32", tiles=-1, axis=0), ["tiles is -1"]),
        (dict(repeats=None, dtype="float32", tiles=2, axis=None), ["axis"]),
        (dict(repeats=[2, 2], dtype="float32", tiles=None, axis=None), ["tiles and axis", "not repeats"]),
    ],
)
def test_tile_1_rejections(kwargs, words):
    with pytest.raises(FrameworkError) as e:
        dmltile.lower("onnx", [2, 3], kwargs.pop("repeats"), opset=1, **kwargs)
    assert all(w in str(e.value) for w in words), str(e.value)


# -- Tile-6/-13 rejections: the framework's rule and the offending value ------------------------
@pytest.mark.parametrize(
    "shape, repeats, dtype, opset, words",
    [
        ([2, 3], [2, -1], "float32", 13, ["repeats[1] is -1"]),
        ([2, 3], [2], "float32", 13, ["1 values", "rank 2"]),
        ([2, 3], [2, 2, 2], "float32", 13, ["3 values", "rank 2"]),
        ([2, 3], np.array([2, 2], dtype=np.int32), "float32", 13, ["tensor(int32)", "tensor(int64)"]),
        ([2, 3], np.array([[2, 2]], dtype=np.int64), "float32", 13, ["shape [1, 2]", "1-D"]),
        ([2, 3], [2.0, 2], "float32", 13, ["repeats[0] is 2.0"]),
        ([2, 3], [True, 2], "float32", 13, ["repeats[0] is True"]),
        ([2, 3], [2, 2], "bfloat16", 12, ["Tile-6", "bfloat16", "opset 13"]),
        ([2, 3], [2, 2], "float8_e4m3fn", 13, ["Tile-13", "float8_e4m3fn"]),
        ([2**40, 3], [2**30, 1], "float32", 13, ["overflows int64", str(2**70)]),
        ([2, -3], [1, 1], "float32", 13, ["input_shape[1] is -3"]),
        ([2, 3], None, "float32", 13, ["repeats input is required"]),
        ([2, 3], [2, 2], "float32", 0, ["opset is 0"]),
    ],
)
def test_tile_6_and_13_rejections(shape, repeats, dtype, opset, words):
    with pytest.raises(FrameworkError) as e:
        dmltile.lower("onnx", shape, repeats, dtype, opset=opset)
    assert all(w in str(e.value) for w in words), str(e.value)


def test_negative_repeats_are_rejected_by_onnxruntime_too():
    with pytest.raises(Exception, match="non-negative"):
        ort_tile(np.zeros((2, 3), np.float32), [2, -1])


def test_type_tables_match_the_onnx_schemas():
    """Our per-version type constraints against onnx.defs (an independent copy of the spec)."""
    from dmltile.lower.from_onnx import TILE_TYPES
    from dmltile.lower.model_check import ONNX_TYPES

    for version in (1, 6, 13):
        schema = onnx.defs.get_schema("Tile", version)
        [t] = [c for c in schema.type_constraints if c.type_param_str == "T"]
        onnx_names = {s[len("tensor(") : -1].upper() for s in t.allowed_type_strs}
        assert {ONNX_TYPES[n] for n in onnx_names} == set(TILE_TYPES[version]), version


def test_zero_repeat_is_an_empty_output_without_dispatch():
    plan = dmltile.lower("onnx", [2, 3], [0, 2], "float32", feature_level="1.0")
    assert plan.status == "empty" and plan.descriptor is None and plan.output_shape == (0, 6)
    x = np.ones((2, 3), np.float32)
    assert same_bits(plan.run(x), ort_tile(x, [0, 2]))
