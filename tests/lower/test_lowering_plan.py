"""The DirectML side of lowering: dimension fitting, bit-exact type views, limits, levels, steps."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmltile
from dmltile import DataType, FeatureLevel, LoweringError, UnsupportedError
from tests.lowering_support import FIXED_TYPES, random_array, same_bits

ALL_LEVELS = [lv.dotted for lv in FeatureLevel]


# Hand-written from the DML_TILE_OPERATOR_DESC "Tensor support" table (seeds/004):
# 1.0 FLOAT32 FLOAT16 · 2.1 + 8/16/32-bit integers · 4.1 + INT64 UINT64; never FLOAT64, bool, bfloat16.
@pytest.mark.parametrize(
    "dtype, level, data_type, group",
    [
        ("float32", "1.0", DataType.FLOAT32, 1),
        ("float16", "1.0", DataType.FLOAT16, 1),
        ("int8", "2.1", DataType.INT8, 1),
        ("uint16", "2.1", DataType.UINT16, 1),
        ("int32", "3.0", DataType.INT32, 1),
        ("bool", "2.1", DataType.UINT8, 1),
        ("bfloat16", "2.1", DataType.UINT16, 1),
        ("int64", "2.1", DataType.UINT32, 2),
        ("uint64", "3.1", DataType.UINT32, 2),
        ("int64", "4.1", DataType.INT64, 1),
        ("uint64", "6.4", DataType.UINT64, 1),
        ("float64", "2.1", DataType.UINT32, 2),
        ("float64", "4.1", DataType.UINT32, 2),
        ("complex64", "4.1", DataType.UINT32, 2),
        ("complex128", "3.1", DataType.UINT32, 4),
    ],
)
def test_element_types(dtype, level, data_type, group):
    plan = dmltile.lower("numpy", [3, 5], [2, 1], dtype, feature_level=level)
    assert plan.status == "dispatch"
    d = plan.descriptor
    assert d.input.data_type == d.output.data_type == data_type
    assert (d.input.sizes[-1] == group and d.repeats[-1] == 1) if group > 1 else d.input.sizes[-1] == 5
    if group > 1 or data_type.name.lower() != dtype:
        assert any("Reinterpreted" in s and dtype in s for s in plan.steps)
    x = random_array([3, 5], dtype, np.random.default_rng(0))
    assert same_bits(plan.run(x), np.tile(x, [2, 1]))


@pytest.mark.parametrize(
    "dtype, min_level",
    [
        ("float32", "1.0"),
        ("float16", "1.0"),
        ("int8", "2.1"),
        ("bool", "2.1"),
        ("bfloat16", "2.1"),
        ("int64", "2.1"),
        ("float64", "2.1"),
        ("complex128", "2.1"),
        ("string", None),
    ],
)
def test_min_feature_level_by_type(dtype, min_level):
    plan = dmltile.lower("onnx", [2, 3], [2, 2], dtype, feature_level="1.0")
    assert (plan.min_feature_level.dotted if plan.min_feature_level else None) == min_level
    assert plan.status == ("dispatch" if min_level == "1.0" else "unsupported")
    if plan.status == "unsupported":
        assert plan.descriptor is None and plan.unsupported_reason
        with pytest.raises(UnsupportedError, match="DML_FEATURE_LEVEL_1_0"):
            plan.run(random_array([2, 3], dtype, np.random.default_rng(0)))


def test_padding_to_four_dims_below_3_1_and_one_dim_above():
    plan = dmltile.lower("onnx", [2, 3], [2, 2], feature_level="2.1")
    assert plan.descriptor.input.sizes == (1, 1, 2, 3) and plan.descriptor.repeats == (1, 1, 2, 2)
    assert any(s.startswith("Padded to 4 dimensions") for s in plan.steps)
    assert dmltile.lower("onnx", [2, 3], [2, 2], feature_level="3.1").descriptor.input.sizes == (2, 3)
    scalar = dmltile.lower("onnx", [], [], feature_level="3.1")
    assert scalar.descriptor.input.sizes == (1,) and scalar.output_shape == ()
    assert same_bits(scalar.run(np.float32(7.5)), np.tile(np.float32(7.5), []))


def test_rank_reduced_by_merging_axes_that_tile_alike():
    shape, reps = [2, 3, 1, 4, 5, 1, 2, 3, 2], [1, 1, 3, 2, 1, 1, 1, 2, 1]
    for level, most in (("2.1", 4), ("3.1", 8)):
        plan = dmltile.lower("numpy", shape, reps, "float32", feature_level=level)
        assert plan.status == "dispatch" and len(plan.descriptor.input.sizes) <= most
        assert any(s.startswith(("Merged", "Dropped")) for s in plan.steps)
        x = random_array(shape, "float32", np.random.default_rng(0))
        assert same_bits(plan.run(x), np.tile(x, reps))


def test_rank_that_no_merge_can_fit_is_unsupported():
    plan = dmltile.lower("numpy", [2] * 9, [2] * 9, "float32", feature_level="6.4")
    assert plan.status == "unsupported" and plan.min_feature_level is None
    assert "DML301" in plan.unsupported_reason
    five = dmltile.lower("numpy", [2] * 5, [2] * 5, "float32", feature_level="2.1")
    assert five.status == "unsupported" and five.min_feature_level == FeatureLevel._3_1


def test_outputs_past_directml_limits_are_unsupported_without_allocating():
    plan = dmltile.lower("onnx", [2**8, 2**8], [2**8, 2**8], "float32", feature_level="4.1")
    assert plan.status == "unsupported" and "DML108 Desc.OutputTensor" in plan.unsupported_reason
    assert plan.min_feature_level is None
    with pytest.raises(UnsupportedError, match="4294967295"):
        plan.run(np.zeros((2**8, 2**8), np.float32))
    one_axis = dmltile.lower("onnx", [2**16], [2**16], "float32", feature_level="4.1")
    assert "DML004 Desc.OutputTensor.Desc.Sizes[0]" in one_axis.unsupported_reason  # a size past UINT
    # int64 as UINT32 pairs doubles the element count below 4.1; native INT64 at 4.1 fits.
    wide = dmltile.lower("onnx", [2**31], [1], "int64", feature_level="3.1")
    assert wide.status == "unsupported" and wide.min_feature_level == FeatureLevel._4_1
    assert wide.at_level("4.1").status == "dispatch"


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 3), min_size=0, max_size=9),
    data=st.data(),
    dtype=st.sampled_from(FIXED_TYPES + ("string",)),
)
def test_min_feature_level_is_the_lowest_dispatching_level(shape, data, dtype):
    reps = data.draw(st.lists(st.integers(1, 3), min_size=len(shape), max_size=len(shape)))
    plan = dmltile.lower("onnx", shape, reps, dtype)
    for name in ALL_LEVELS:
        at = plan.at_level(name)
        assert at.min_feature_level == plan.min_feature_level
        dispatches = plan.min_feature_level is not None and at.feature_level >= plan.min_feature_level
        assert (at.status == "dispatch") == dispatches, (name, at.unsupported_reason)
        if dispatches:  # checked again by the validator, independently of the plan
            assert dmltile.validate(at.descriptor, name).valid


def test_steps_are_one_sentence_each_and_the_plan_serialises():
    plan = dmltile.lower(
        "openvino", [2, 3], np.array([-1, 2, 2], dtype=np.int16), "int64", feature_level="2.1"
    )
    assert plan.status == "empty"  # the clamped -1 empties the output
    plan = dmltile.lower(
        "openvino", [2, 3], np.array([3, 2, 2], dtype=np.int16), "int64", feature_level="2.1"
    )
    for s in plan.steps:
        assert s.endswith(".") and "\n" not in s
    doc = json.loads(json.dumps(plan.to_dict()))
    assert doc["status"] == "dispatch" and doc["descriptor"]["Desc"]["Repeats"] == [3, 2, 2, 1]
    assert doc["descriptor"]["Desc"]["InputTensor"]["Desc"]["DataType"] == "DML_TENSOR_DATA_TYPE_UINT32"


def test_run_checks_its_input():
    plan = dmltile.lower("onnx", [2, 3], [2, 2])
    with pytest.raises(LoweringError, match=r"shape \[3, 2\]"):
        plan.run(np.zeros((3, 2), np.float32))
    with pytest.raises(LoweringError, match="float64"):
        plan.run(np.zeros((2, 3), np.float64))


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(framework="tensorflow"), ["tensorflow", "onnx, openvino, numpy"]),
        (dict(feature_level="9.9"), ["9.9", "known levels"]),
        (dict(framework="numpy", tiles=2, axis=0), ["tiles and axis"]),
        (dict(dtype="no-such-type"), ["no-such-type"]),
    ],
)
def test_bad_requests_are_lowering_errors(kwargs, words):
    args = dict(framework="onnx", input_shape=[2, 3], repeats=[2, 2]) | kwargs
    with pytest.raises(LoweringError) as e:
        dmltile.lower(**args)
    assert all(w in str(e.value) for w in words), str(e.value)


@settings(max_examples=100, deadline=None)
@given(
    axes=st.lists(
        st.tuples(st.sampled_from([1, 1, 2, 3]), st.sampled_from([1, 1, 1, 2])), min_size=5, max_size=10
    ),
    level=st.sampled_from(["1.0", "2.1", "3.1"]),
)
def test_merged_and_dropped_axes_copy_the_same_bytes(axes, level):
    """High ranks at 4-D and 8-D levels: whenever the plan fits them by merging, the copy is numpy.tile's."""
    shape, reps = [s for s, _ in axes], [r for _, r in axes]
    plan = dmltile.lower("numpy", shape, reps, "float16", feature_level=level)
    most = 4 if level != "3.1" else 8
    if plan.status == "unsupported":
        assert "DML301" in plan.unsupported_reason
        return
    assert len(plan.descriptor.input.sizes) <= most
    x = random_array(shape, "float16", np.random.default_rng(len(shape)))
    assert same_bits(plan.run(x), np.tile(x, reps))


def test_fitting_by_merges_happens_often_enough_to_matter():
    """The property above is not vacuous: typical 6-D shapes with repeat-1 neighbours fit 4 dims."""
    plan = dmltile.lower("numpy", [1, 2, 3, 1, 4, 5], [3, 1, 1, 2, 1, 1], feature_level="1.0")
    # (1,2,3) by (3,1,1) is the 6-element block copied 3 times; merges stop once 4 dims remain.
    assert plan.status == "dispatch" and plan.descriptor.input.sizes == (6, 1, 4, 5)
    assert plan.descriptor.repeats == (3, 2, 1, 1)
    x = random_array([1, 2, 3, 1, 4, 5], "float32", np.random.default_rng(0))
    assert same_bits(plan.run(x), np.tile(x, [3, 1, 1, 2, 1, 1]))


@pytest.mark.parametrize("dtype", ["float32", "bool", "int64", "complex128", "bfloat16"])
def test_plans_run_on_the_onnxruntime_backend_too(dtype):
    pytest.importorskip("onnxruntime")
    plan = dmltile.lower("onnx", [2, 3], [2, 2], dtype, feature_level="2.1")
    x = random_array([2, 3], dtype, np.random.default_rng(5))
    assert same_bits(plan.run(x, backend="onnxruntime"), np.tile(x, [2, 2]))
