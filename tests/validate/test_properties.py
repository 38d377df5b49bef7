"""Properties: validate never raises on arbitrary content; valid documents round-trip unchanged."""

import copy
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dmltile
from tests.conftest import DOC_EXAMPLE

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["FLOAT32", "DML_TENSOR_DATA_TYPE_INT64", "BUFFER", "TILE", "NONE"]),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(
            st.sampled_from(
                [
                    "Type",
                    "Desc",
                    "InputTensor",
                    "OutputTensor",
                    "Repeats",
                    "RepeatsCount",
                    "DataType",
                    "Sizes",
                    "Strides",
                    "Flags",
                    "DimensionCount",
                    "x",
                ]
            ),
            inner,
            max_size=6,
        ),
    ),
    max_leaves=25,
)


@SETTINGS
@given(json_values, st.sampled_from(["1.0", "3.1", "4.1", "9.9", 0x3100, None]))
def test_validate_never_raises_on_arbitrary_json(value, level):
    report = dmltile.validate(
        json.dumps(value) if not isinstance(value, dict) else value, feature_level=level
    )
    if not isinstance(value, dict):
        assert report.valid is False  # JSON text that is not an object is never a descriptor
    elif report.valid:  # a random object that passes must really be a Tile descriptor
        desc = dmltile.check(value, feature_level=level)
        assert report.output_sizes == list(dmltile.tile_output_sizes(desc.input.sizes, desc.repeats))
    else:  # and one that fails names at least one error, and check() refuses it
        assert report.errors
        with pytest.raises(dmltile.DmlTileError):
            dmltile.check(value, feature_level=level)
    assert all(i.code.startswith("DML") and i.message for i in report.issues)


PATHS = [
    ("Desc",),
    ("Desc", "InputTensor"),
    ("Desc", "InputTensor", "Desc"),
    ("Desc", "OutputTensor", "Desc"),
]


@SETTINGS
@given(
    st.sampled_from(PATHS),
    st.sampled_from(
        [
            "Sizes",
            "Strides",
            "DataType",
            "Repeats",
            "RepeatsCount",
            "Flags",
            "DimensionCount",
            "TotalTensorSizeInBytes",
            "Type",
            "Desc",
            "Bogus",
            "GuaranteedBaseOffsetAlignment",
        ]
    ),
    json_values,
    st.booleans(),
)
def test_validate_never_raises_on_mutated_documents(path, key, value, delete):
    doc = copy.deepcopy(DOC_EXAMPLE)
    node = doc
    for part in path:
        node = node[part]
    if delete:
        node.pop(key, None)
    else:
        node[key] = value
    report = dmltile.validate(doc, feature_level="4.1")
    for issue in report.issues:
        assert issue.path == "" or issue.path.startswith(("Desc", "Type", "feature_level"))


def test_deep_nesting_and_huge_numbers_are_issues_not_crashes():
    deep = "[" * 200_000 + "]" * 200_000
    assert dmltile.validate(deep).codes == ["DML001"]
    doc = copy.deepcopy(DOC_EXAMPLE)
    doc["Desc"]["Repeats"] = [10**400, 1, 1, 1]
    assert "DML004" in dmltile.validate(doc).codes
    assert dmltile.validate('{"Type": NaN}').valid is False


dtypes = st.sampled_from(
    ["FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8", "INT64", "UINT64"]
)


@st.composite
def tile_cases(draw):
    rank = draw(st.integers(1, 8))
    sizes = draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))
    repeats = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    return sizes, repeats, draw(dtypes)


@SETTINGS
@given(tile_cases())
def test_built_descriptors_are_valid_round_trip_and_match_numpy_tile_shape(case):
    sizes, repeats, dtype = case
    desc = dmltile.tile_desc(sizes, repeats, dtype)
    report = dmltile.validate(desc, feature_level="4.1")
    assert report.valid, report.issues
    assert (
        tuple(report.output_sizes) == np.tile(np.zeros(sizes, np.uint8), repeats).shape == desc.output.sizes
    )
    assert dmltile.load(desc.to_json()) == desc
    assert json.loads(dmltile.load(desc.to_json()).to_json()) == desc.to_dict()
