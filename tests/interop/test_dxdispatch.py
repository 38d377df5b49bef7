"""DxDispatch models: export, import, the load()/validate hooks.

Independent references: DxDispatch's own format (the model in its Guide / models/dml_reduce.json
layout, written here by hand), numpy.tile, a per-element loop over Strides, and DxDispatch's
number parsing re-stated in ``dxdispatch_reads`` (static_cast<float>(double); half(float)).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.errors import DmlTileError
from dmltile.interop import dxdispatch_export as dx

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
VALID = sorted(p for p in EXAMPLES.glob("*.json") if dmltile.validate(p).valid)
PARSEABLE = sorted(p for p in EXAMPLES.glob("*.json") if dmltile.parse(p)[0] is not None)


def test_examples_are_found():
    assert len(VALID) >= 5 and (EXAMPLES / "doc_example.json") in VALID


# -- round trip ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_round_trip_through_a_model_file_is_identity(path, tmp_path):
    desc = dmltile.load(path)
    model_file = tmp_path / "model.json"
    model_file.write_text(dx.dumps(dmltile.to_dxdispatch(desc)))
    back = dmltile.from_dxdispatch(model_file)
    assert list(back) == ["tile"] and not back.invalid and not back.not_covered
    assert back["tile"] == desc
    assert dmltile.load(model_file) == desc  # the load() hook


DTYPES = ["FLOAT32", "FLOAT16", "UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "UINT64", "INT64"]


@st.composite
def descriptors(draw):
    rank = draw(st.integers(1, 5))
    sizes = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    repeats = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    strides = draw(st.none() | st.lists(st.integers(0, 30), min_size=rank, max_size=rank))
    doc = dmltile.tile_desc(sizes, repeats, dtype=draw(st.sampled_from(DTYPES)), strides=strides).to_dict()
    tensor = doc["Desc"]["InputTensor"]["Desc"]
    tensor["TotalTensorSizeInBytes"] += 4 * draw(st.integers(0, 3))  # padding past the last element
    tensor["GuaranteedBaseOffsetAlignment"] = draw(st.sampled_from([0, 16, 256]))
    return dmltile.load(doc)


@settings(max_examples=100, deadline=None)
@given(descriptors(), st.integers(0, 2**32 - 1))
def test_round_trip_of_random_descriptors_through_model_text(desc, seed):
    text = dx.dumps(dmltile.to_dxdispatch(desc, seed=seed))
    assert dmltile.from_dxdispatch(text)["tile"] == desc
    model = json.loads(text)
    values = model["resources"]["input"]["initialValues"]
    assert len(values) == desc.input.total_tensor_size_in_bytes // desc.input.data_type.element_size
    x = np.empty(desc.input.sizes, desc.input.data_type.numpy_dtype)
    for index in np.ndindex(*x.shape):  # read the input through its Strides, element by element
        value = values[sum(i * s for i, s in zip(index, desc.input.effective_strides, strict=False))]
        x[index] = dxdispatch_reads(value, x.dtype) if x.dtype.kind == "f" else value
    shown = dx.expected_outputs(model)["output"]
    assert np.array_equal(
        shown.view(f"u{x.itemsize}"), np.tile(x, desc.repeats).ravel().view(f"u{x.itemsize}")
    )


@pytest.mark.parametrize("path", PARSEABLE, ids=lambda p: p.name)
def test_every_parseable_example_round_trips_as_a_dispatchable(path):
    desc = dmltile.load(path)
    dispatchable = {"type": "DML_OPERATOR_TILE", "desc": dx.dxdispatch_desc(desc)}
    assert dmltile.load(json.loads(json.dumps(dispatchable))) == desc


def test_export_matches_the_model_dxdispatch_documents():
    """The shape of DxDispatch's example models (Guide.md; models/dml_reduce.json), written by hand."""
    model = dmltile.to_dxdispatch(dmltile.load(EXAMPLES / "doc_example.json"))
    assert model["resources"]["input"] == {
        "initialValuesDataType": "FLOAT32",
        "initialValues": [1, 2, 3, 4, 5, 6],
        "sizeInBytes": 24,
    }
    assert model["resources"]["output"] == {
        "initialValuesDataType": "FLOAT32",
        "initialValues": {"valueCount": 54, "value": 0},
        "sizeInBytes": 216,
    }
    tile = model["dispatchables"]["tile"]
    assert tile["type"] == "DML_OPERATOR_TILE"
    assert set(tile["desc"]) == {
        "InputTensor",
        "OutputTensor",
        "RepeatsCount",
        "Repeats",
    }  # all required by DxDispatch
    assert tile["desc"]["RepeatsCount"] == 4 and tile["desc"]["Repeats"] == [1, 1, 3, 3]
    out = tile["desc"]["OutputTensor"]["Desc"]
    assert out["Sizes"] == [1, 1, 6, 9] and out["TotalTensorSizeInBytes"] == 216
    assert out["Strides"] == []  # DxDispatch's ParseUInt32Array rejects null ("Expected an array.")
    assert set(out) == {
        "DataType",
        "Flags",
        "DimensionCount",
        "Sizes",
        "Strides",
        "TotalTensorSizeInBytes",
        "GuaranteedBaseOffsetAlignment",
    }
    assert model["commands"] == [
        {
            "type": "dispatch",
            "dispatchable": "tile",
            "bindings": {"InputTensor": "input", "OutputTensor": "output"},
        },
        {"type": "print", "resource": "output"},
    ]


def test_write_file_command_uses_dxdispatch_spelling():
    model = dmltile.to_dxdispatch(dmltile.tile_desc([2], [3]), print_output=False, write_file="out.npy")
    assert model["commands"][1:] == [{"type": "writeFile", "resource": "output", "targetPath": "out.npy"}]


def test_verbose_print_option():
    model = dmltile.to_dxdispatch(dmltile.tile_desc([2], [3]), verbose_print=True)
    assert model["commands"][1] == {"type": "print", "resource": "output", "verbose": True}


def test_dumps_is_json_with_the_same_content():
    model = dmltile.to_dxdispatch(dmltile.tile_desc([1, 2, 3], [2, 1, 2], dtype="INT64"), seed=5)
    assert json.loads(dx.dumps(model)) == model


# -- input buffers, strides, seeds ----------------------------------------------------------


def test_strided_padded_input_fills_the_whole_buffer():
    desc = dmltile.load(
        EXAMPLES / "valid_strided_padded_input.json"
    )  # Sizes [1,2,2,3], Strides [0,0,4,1], 28 bytes
    x = np.broadcast_to(np.array([[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]], np.float32), (1, 2, 2, 3)).copy()
    model = dmltile.to_dxdispatch(desc, input=x)
    values = model["resources"]["input"]["initialValues"]
    assert len(values) == 28 // 4 and model["resources"]["input"]["sizeInBytes"] == 28
    for index in np.ndindex(*x.shape):  # a naive per-element read through Strides
        offset = sum(i * s for i, s in zip(index, desc.input.strides, strict=False))
        assert values[offset] == x[index]
    assert values[3] == 0  # the padding element (offset 3) no index reaches
    y = dx.expected_outputs(model)["output"]
    assert np.array_equal(y, np.tile(x, desc.repeats).ravel())


def test_inconsistent_broadcast_input_is_refused_naming_the_index():
    desc = dmltile.load(EXAMPLES / "valid_strided_padded_input.json")
    x = np.arange(12, dtype=np.float32).reshape(1, 2, 2, 3)  # differs along the stride-0 axis
    with pytest.raises(DmlTileError, match=r"input element \[0, 0, 0, 0\].*stride-0"):
        dmltile.to_dxdispatch(desc, input=x)


def test_input_of_the_wrong_dtype_or_shape_is_refused():
    desc = dmltile.tile_desc([2, 3], [1, 2])
    with pytest.raises(DmlTileError, match="dtype float64"):
        dmltile.to_dxdispatch(desc, input=np.zeros((2, 3)))
    with pytest.raises(DmlTileError, match=r"shape \(3, 2\)"):
        dmltile.to_dxdispatch(desc, input=np.zeros((3, 2), np.float32))


def test_seeded_input_is_deterministic_and_seed_dependent():
    desc = dmltile.tile_desc([4, 5], [2, 1], dtype="INT16")
    a, b, c = (dmltile.to_dxdispatch(desc, seed=s)["resources"]["input"]["initialValues"] for s in (7, 7, 8))
    assert a == b and a != c and len(a) == 20


def test_default_input_counts_from_one_over_the_whole_buffer():
    desc = dmltile.tile_desc([2, 3], [2, 2], dtype="UINT8")  # 6 bytes, TotalTensorSizeInBytes 8
    resource = dmltile.to_dxdispatch(desc)["resources"]["input"]
    assert resource["initialValues"] == [1, 2, 3, 4, 5, 6, 7, 8] and resource["sizeInBytes"] == 8


def test_odd_float16_output_prints_exactly_its_elements():
    desc = dmltile.tile_desc([5], [1], dtype="FLOAT16")  # 10 bytes, TotalTensorSizeInBytes 12
    out = dmltile.to_dxdispatch(desc)["resources"]["output"]
    assert out["initialValues"]["valueCount"] == 5 and out["sizeInBytes"] == 12


@pytest.mark.parametrize(
    "dtype", ["FLOAT32", "FLOAT16", "INT8", "UINT16", "INT32", "UINT32", "INT64", "UINT64"]
)
def test_expected_output_is_numpy_tile(dtype):
    desc = dmltile.tile_desc([2, 1, 3], [2, 3, 1], dtype=dtype)
    model = dmltile.to_dxdispatch(desc, seed=11)
    x = np.array(model["resources"]["input"]["initialValues"], dtype=desc.input.data_type.numpy_dtype)[:6]
    assert np.array_equal(
        dx.expected_outputs(model)["output"], np.tile(x.reshape(2, 1, 3), (2, 3, 1)).ravel()
    )


# -- numbers as DxDispatch reads them ---------------------------------------------------------


def dxdispatch_reads(value, dtype):
    """ParseFloatingPointNumber / ParseFloat16 (JsonParsers.cpp): a JSON number as a double, or the
    strings nan/inf/-inf; narrowed to float; FLOAT16 from the float."""
    if isinstance(value, str):
        d = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[value.lower()]
    else:
        assert isinstance(value, (int, float)) and not isinstance(value, bool)
        d = float(value)
    f = np.float32(d)
    return np.float16(f) if dtype == np.float16 else f


def assert_round_trip(bits, dtype):
    """Non-NaN values with these bit patterns come back from JSON text with the same bits."""
    uint = f"u{np.dtype(dtype).itemsize}"
    values = np.array(bits, uint).view(dtype)
    values = values[~np.isnan(values)]
    text = json.dumps(dx.json_values(values))
    back = np.array([dxdispatch_reads(v, dtype) for v in json.loads(text)], dtype=dtype)
    assert np.array_equal(back.view(uint), values.view(uint))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**16 - 1), min_size=1, max_size=50))
def test_float16_values_round_trip_exactly(bits):
    assert_round_trip(bits, np.float16)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=50))
def test_float32_values_round_trip_exactly(bits):
    assert_round_trip(bits, np.float32)


def test_special_floats_are_written_as_dxdispatch_strings():
    values = np.array([np.nan, np.inf, -np.inf, -0.0, 6.1e-5, 65504], np.float16)
    written = dx.json_values(values)
    assert written[:3] == ["nan", "inf", "-inf"]
    assert math.copysign(1, written[3]) == -1  # -0.0 keeps its sign
    assert json.dumps(written[5]) == "65504"


def test_64_bit_integers_are_exact_json_integers():
    values = np.array([np.iinfo(np.int64).min, -1, np.iinfo(np.int64).max], np.int64)
    assert json.loads(json.dumps(dx.json_values(values))) == [-(2**63), -1, 2**63 - 1]
    assert dx.json_values(np.array([2**64 - 1], np.uint64)) == [2**64 - 1]


# -- import of hand-written DxDispatch documents ---------------------------------------------

SHORT = {
    "type": "TILE",
    "desc": {
        "InputTensor": {"DataType": "FLOAT16", "Sizes": [2, 3]},
        "OutputTensor": {
            "DataType": "FLOAT16",
            "Sizes": [4, 3],
            "Flags": [],
            "Strides": [],
            "TotalTensorSizeInBytes": 0,
        },
        "RepeatsCount": 2,
        "Repeats": [2, 1],
    },
}


def test_short_names_and_dxdispatch_defaults():
    desc = dmltile.load(SHORT)
    assert desc.input.data_type == dmltile.DataType.FLOAT16
    assert desc.input.dimension_count == 2 and desc.input.strides is None
    assert desc.output.strides is None and desc.output.flags == dmltile.TensorFlags.NONE
    assert desc.input.total_tensor_size_in_bytes == 12  # 6 halves = 12 bytes
    assert desc.output.total_tensor_size_in_bytes == 24  # 0 means computed: 12 halves
    assert dmltile.validate(SHORT).valid


def test_a_zero_size_that_is_not_the_integer_zero_stays_an_error():
    bad = json.loads(json.dumps(SHORT))
    bad["desc"]["InputTensor"]["TotalTensorSizeInBytes"] = False
    desc, issues = dmltile.parse(bad)
    assert desc is None and issues[0].code == "DML004" and issues[0].path.endswith("TotalTensorSizeInBytes")


def test_fully_written_tensors_flag_lists_and_inline_fields():
    model = {
        "resources": {},
        "dispatchables": {
            "t": {
                "type": "DML_OPERATOR_TILE",
                "InputTensor": {
                    "Type": "DML_TENSOR_TYPE_BUFFER",
                    "Desc": {
                        "DataType": "DML_TENSOR_DATA_TYPE_INT32",
                        "Flags": ["NONE"],
                        "DimensionCount": 1,
                        "Sizes": [3],
                        "Strides": [1],
                        "TotalTensorSizeInBytes": 16,
                        "GuaranteedBaseOffsetAlignment": 16,
                    },
                },
                "OutputTensor": {"Type": "BUFFER", "DataType": "INT32", "Sizes": [6]},
                "RepeatsCount": 1,
                "Repeats": [2],
                "executionFlags": "DISABLE_META_COMMANDS",
                "dmlCompileType": "DmlCompileGraph",
            }
        },
        "commands": [],
    }
    desc = dmltile.from_dxdispatch(model)["t"]
    assert desc.input.strides == (1,) and desc.input.total_tensor_size_in_bytes == 16
    assert desc.input.guaranteed_base_offset_alignment == 16 and desc.output.sizes == (6,)
    assert dmltile.validate(desc).valid


JSONC = """
// DxDispatch accepts comments and trailing commas (rapidjson kParseCommentsFlag | kParseTrailingCommasFlag)
{
    "resources": {
        "in": { "initialValuesDataType": "INT32", "initialValues": [1, 2, 3], }, /* trailing comma above */
        "url": { "initialValuesDataType": "UINT8", "initialValues": [1], "note": "http://not/a/comment", },
    },
    "dispatchables": {
        "tile_it": {
            "type": "DML_OPERATOR_TILE",
            "desc": {
                "InputTensor": { "DataType": "INT32", "Sizes": [3], }, // inline comment
                "OutputTensor": { "DataType": "INT32", "Sizes": [9] },
                "RepeatsCount": 1,
                "Repeats": [3,  /* between */ ],
            },
        },
    },
    "commands": [ { "type": "print", "resource": "in" }, ],
}
"""


def test_comments_and_trailing_commas_are_accepted_for_dxdispatch_models(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(JSONC)
    desc = dmltile.load(path)
    assert desc.repeats == (3,) and desc.output.sizes == (9,)
    assert dmltile.load(JSONC) == desc
    assert json.loads(dx.strip_jsonc(JSONC))["resources"]["url"]["note"] == "http://not/a/comment"


def test_comments_and_trailing_commas_are_read_in_a_canonical_document_too():
    text = (
        '// a comment\n{"InputTensor": {"DataType": "FLOAT32", "Sizes": [1, /* one */ 2,]}, "OutputTensor": '
        '{"DataType": "FLOAT32", "Sizes": [1, 2]}, "Repeats": [1, 1],}'
    )
    desc, issues = dmltile.parse(text)
    assert issues == [] and desc is not None and list(desc.input.sizes) == [1, 2]
    unclosed = text.replace("*/", "")  # a comment never closed is no JSONC: the strict parser's reason
    assert [i.code for i in dmltile.parse(unclosed)[1]] == ["DML001"]


def test_several_tile_dispatchables_make_load_name_them():
    model = {"resources": {}, "dispatchables": {"first": SHORT, "second": SHORT}, "commands": []}
    with pytest.raises(
        dmltile.DescriptorError, match=r"2 Tile dispatchables \('first', 'second'\)"
    ) as raised:
        dmltile.load(model)
    assert [i.code for i in raised.value.issues] == ["DML401"]
    both = dmltile.from_dxdispatch(model)
    assert set(both) == {"first", "second"}


def test_a_model_without_tile_is_reported_not_skipped():
    model = {
        "resources": {},
        "dispatchables": {
            "sum": {"type": "DML_OPERATOR_REDUCE", "desc": {}},
            "shader": {"type": "hlsl", "sourcePath": "x.hlsl"},
        },
        "commands": [],
    }
    desc, issues = dmltile.parse(model)
    assert desc is None and issues[0].code == "DML207"
    assert "'sum' (DML_OPERATOR_REDUCE)" in issues[0].message and "'shader' (hlsl)" in issues[0].message
    result = dmltile.from_dxdispatch(model)
    assert dict(result) == {} and result.not_covered == {"sum": "DML_OPERATOR_REDUCE", "shader": "hlsl"}


def test_invalid_tile_dispatchables_are_kept_with_their_issues():
    broken = {
        "type": "TILE",
        "desc": {
            "InputTensor": {"DataType": "BOOL", "Sizes": [2]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2]},
            "RepeatsCount": 1,
            "Repeats": [1],
        },
    }
    wrong = json.loads(json.dumps(SHORT))
    wrong["desc"]["OutputTensor"]["Sizes"] = [4, 4]
    del wrong["desc"]["RepeatsCount"]
    model = {
        "resources": {},
        "dispatchables": {"broken": broken, "wrong": wrong, "ok": SHORT},
        "commands": [],
    }
    result = dmltile.from_dxdispatch(model)
    assert set(result) == {"wrong", "ok"} and [i.code for i in result.invalid["broken"]] == ["DML005"]
    reports = result.reports("4.1")
    assert list(reports) == ["broken", "wrong", "ok"]
    assert not reports["broken"].valid and reports["ok"].valid
    assert "DML205" in reports["wrong"].codes
    missing = [i for i in reports["wrong"].issues if i.path == "Desc.RepeatsCount"]
    assert missing and missing[0].severity == "warning" and "DxDispatch" in missing[0].message
    assert missing[0].code == "DML402" and dmltile.RULES["DML402"].severity == "warning"


def test_shipped_dxdispatch_example():
    path = EXAMPLES / "dxdispatch" / "tile_doc_example.json"
    assert dmltile.load(path) == dmltile.load(EXAMPLES / "doc_example.json")
    expected = (
        "1, 2, 3, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 4, 5, 6"  # the first 2 rows of DirectML's example
    )
    shown = dx.expected_outputs(path)["output"]
    assert ", ".join(f"{v:g}" for v in shown[:18]) == expected and shown.size == 54
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 2, 3)
    assert np.array_equal(shown, np.tile(x, (1, 1, 3, 3)).ravel())


@pytest.mark.parametrize("path", sorted((EXAMPLES / "dxdispatch").glob("*.json")), ids=lambda p: p.name)
def test_every_dxdispatch_example_runs(path):
    model = dmltile.from_dxdispatch(path)
    assert model and not model.invalid and not model.not_covered
    assert all(report.valid for report in model.reports().values())
    assert dx.expected_outputs(path)


def test_sequence_initializers_accumulate_in_the_element_type():
    res = {
        "initialValuesDataType": "UINT8",
        "initialValues": {"valueCount": 4, "valueStart": 254, "valueDelta": 1},
    }
    assert dx.resource_values(res).tolist() == [254, 255, 0, 1]  # uint8_t += wraps
    assert dx.resource_buffer(res).size == 4


def test_not_a_dxdispatch_model():
    with pytest.raises(dmltile.DescriptorError, match="dispatchables"):
        dmltile.from_dxdispatch({"resources": {}})
