"""The descriptor document: accepted forms, defaults, canonical output, and size arithmetic."""

import json
import math

import pydantic
import pytest

import dmltile
from dmltile.core.tensor import calc_buffer_tensor_size, overlapping_strides, packed_strides
from tests.conftest import DOC_EXAMPLE


def test_tile_desc_builds_the_doc_example_exactly():
    assert dmltile.tile_desc([1, 1, 2, 3], [1, 1, 3, 3]).to_dict() == DOC_EXAMPLE


def test_bare_short_form_with_defaults_equals_the_canonical_form():
    bare = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 3]},
        "OutputTensor": {"DataType": 1, "Sizes": [1, 1, 6, 9]},
        "Repeats": [1, 1, 3, 3],
    }
    assert dmltile.load(bare).to_dict() == DOC_EXAMPLE


def test_inline_tensor_type_and_bare_operator_with_type():
    doc = {
        "Type": "TILE",
        "InputTensor": {"Type": "BUFFER", "DataType": "FLOAT32", "Sizes": [1, 1, 2, 3]},
        "OutputTensor": {
            "Type": 1,
            "Desc": {"DataType": "DML_TENSOR_DATA_TYPE_FLOAT32", "Sizes": [1, 1, 6, 9]},
        },
        "Repeats": [1, 1, 3, 3],
    }
    assert dmltile.load(doc).to_dict() == DOC_EXAMPLE


def test_load_accepts_text_path_and_model(tmp_path):
    text = json.dumps(DOC_EXAMPLE)
    path = tmp_path / "d.json"
    path.write_text(text)
    model = dmltile.load(text)
    assert (
        dmltile.load(path)
        == model
        == dmltile.load(str(path))
        == dmltile.load(model)
        == dmltile.load(text.encode())
    )


def test_load_raises_descriptor_error_naming_fields():
    with pytest.raises(dmltile.DescriptorError) as e:
        dmltile.load({"InputTensor": {"DataType": "FLOAT32"}, "OutputTensor": {}, "Repeats": [1]})
    assert "Desc.InputTensor.Desc.Sizes" in str(e.value) and e.value.issues[0].code == "DML002"


def test_unreadable_files_raise_input_error(tmp_path):
    with pytest.raises(dmltile.InputError, match="no such file"):
        dmltile.validate(tmp_path / "missing.json")
    with pytest.raises(dmltile.InputError, match="directory"):
        dmltile.validate(tmp_path)


def test_given_fields_are_kept_as_given_not_defaulted(doc):
    doc["Desc"]["InputTensor"]["Desc"]["DimensionCount"] = 7
    doc["Desc"]["InputTensor"]["Desc"]["TotalTensorSizeInBytes"] = 4096
    desc = dmltile.load(doc)
    assert desc.input.dimension_count == 7 and desc.input.total_tensor_size_in_bytes == 4096
    assert desc.to_dict()["Desc"]["InputTensor"]["Desc"]["DimensionCount"] == 7


def test_models_are_frozen_and_hashable():
    a, b = dmltile.tile_desc([2, 3], [2, 2]), dmltile.tile_desc([2, 3], [2, 2])
    assert a == b and hash(a) == hash(b) and len({a, b, dmltile.tile_desc([2, 3], [2, 1])}) == 2
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        a.input.sizes = (1,)


def test_snake_case_keys_are_unknown_fields_in_json():
    codes = dmltile.validate(
        {
            "InputTensor": {"data_type": "FLOAT32", "Sizes": [1]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1]},
            "Repeats": [1],
        }
    ).codes
    assert "DML003" in codes


def test_json_schema_is_generated_with_c_names():
    schema = dmltile.OperatorDesc.model_json_schema(by_alias=True)
    text = json.dumps(schema)
    assert "TotalTensorSizeInBytes" in text and "DML_TENSOR_DATA_TYPE_FLOAT32" in text


# DMLCalcBufferTensorSize, hand-computed: (index of last element + 1) * element size, up to a multiple of 4.
@pytest.mark.parametrize(
    "dtype,sizes,strides,expected",
    [
        ("FLOAT32", [1, 1, 2, 3], None, 24),
        ("FLOAT16", [1, 1, 2, 3], None, 12),
        ("FLOAT16", [1, 1, 1, 3], None, 8),  # 6 bytes -> 8
        ("UINT8", [5], None, 8),  # 5 -> 8
        ("FLOAT32", [2, 3], [4, 1], 28),  # last index 1*4 + 2*1 = 6 -> 7 elements * 4
        ("FLOAT32", [2, 3], [0, 1], 12),  # broadcast rows: last index 2
        ("INT64", [3, 4], None, 96),
        ("UINT4", [3], None, 4),  # 12 bits -> 2 bytes -> 4
        ("FLOAT32", [2, 0], None, 0),
    ],
)
def test_calc_buffer_tensor_size(dtype, sizes, strides, expected):
    assert calc_buffer_tensor_size(dtype, sizes, strides) == expected


def test_packed_strides():
    assert packed_strides([1, 1, 2, 3]) == (6, 6, 3, 1)
    assert packed_strides([5]) == (1,)


@pytest.mark.parametrize(
    "sizes,strides,expected",
    [
        ([2, 3], [3, 1], False),
        ([2, 3], [0, 1], True),
        ([3, 2], [2, 3], False),
        ([2, 2], [1, 1], True),
        ([1, 5], [0, 1], False),
        ([4, 4], [4, 1], False),
        ([4, 4], [3, 1], True),
    ],
)
def test_overlapping_strides_against_enumeration(sizes, strides, expected):
    offsets = [i * strides[0] + j * strides[1] for i in range(sizes[0]) for j in range(sizes[1])]
    assert (len(set(offsets)) != len(offsets)) == expected
    assert overlapping_strides(sizes, strides) == expected


def test_element_count():
    assert dmltile.tile_desc([2, 3, 4], [1, 2, 3]).output.element_count == math.prod([2, 6, 12])


@pytest.mark.parametrize(
    "args,code,path",
    [
        (([2**31], [4]), "DML004", "Desc.OutputTensor.Desc.Sizes[0]"),
        (([2, -1], [1, 1]), "DML004", "Desc.InputTensor.Desc.Sizes[1]"),
        (([2, 3], [2, 2], "BOOL"), "DML005", "Desc.InputTensor.Desc.DataType"),
    ],
)
def test_tile_desc_refuses_impossible_values_with_canonical_paths(args, code, path):
    with pytest.raises(dmltile.DescriptorError) as e:
        dmltile.tile_desc(*args)
    assert (e.value.issues[0].code, e.value.issues[0].path) == (code, path)


def test_tile_desc_needs_one_repeat_per_dimension():
    with pytest.raises(dmltile.DmlTileError, match="2 repeats for 3 input sizes"):
        dmltile.tile_desc([1, 2, 3], [2, 2])
