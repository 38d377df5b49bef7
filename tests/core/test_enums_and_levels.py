"""Enum values against DirectML.h, and the feature-level tables against the DirectML Tile page."""

from pathlib import Path

import pytest
import tomllib

import dmltile
from dmltile.core.enums import DataType, FeatureLevel, OperatorType, TensorFlags
from dmltile.errors import EnumParseError
from dmltile.validate.levels import tile_support

ROOT = Path(__file__).resolve().parents[2]

# Values copied by hand from DirectML.h (DML_BUFFER_TENSOR_DESC / DML_FEATURE_LEVEL pages, shared/reference).
DATA_TYPES = {
    "UNKNOWN": 0,
    "FLOAT32": 1,
    "FLOAT16": 2,
    "UINT32": 3,
    "UINT16": 4,
    "UINT8": 5,
    "INT32": 6,
    "INT16": 7,
    "INT8": 8,
    "FLOAT64": 9,
    "UINT64": 10,
    "INT64": 11,
    "UINT4": 12,
    "INT4": 13,
}
LEVELS = {
    "1.0": 0x1000,
    "2.0": 0x2000,
    "2.1": 0x2100,
    "3.0": 0x3000,
    "3.1": 0x3100,
    "4.0": 0x4000,
    "4.1": 0x4100,
    "5.0": 0x5000,
    "5.1": 0x5100,
    "5.2": 0x5200,
    "6.0": 0x6000,
    "6.1": 0x6100,
    "6.2": 0x6200,
    "6.3": 0x6300,
    "6.4": 0x6400,
}


def test_data_type_values_match_directml_h():
    assert {m.name: m.value for m in DataType} == DATA_TYPES


def test_operator_tile_is_70_and_neighbours_are_right():
    assert OperatorType["TILE"] == 70 == dmltile.core.enums.TILE
    assert OperatorType.parse(69).name == "DEPTH_TO_SPACE" and OperatorType.parse(71).name == "TOP_K"


def test_feature_levels_match_directml_h_and_the_toml_table():
    # the enum is built from levels.toml: both must equal the values copied from DirectML.h
    assert {lv.dotted: lv.value for lv in FeatureLevel} == LEVELS
    with open(ROOT / "feature_levels" / "levels.toml", "rb") as f:
        table = {row["name"]: row["value"] for row in tomllib.load(f)["level"]}
    assert table == LEVELS
    assert [lv.dotted for lv in dmltile.known_levels()] == list(LEVELS)


@pytest.mark.parametrize("spelling", ["3.1", "3_1", "DML_FEATURE_LEVEL_3_1", 0x3100, FeatureLevel._3_1])
def test_feature_level_spellings(spelling):
    assert dmltile.parse_feature_level(spelling) == FeatureLevel._3_1


@pytest.mark.parametrize("bad", ["3.2", "7.0", "", 0x3200, True, None, 3.1])
def test_unknown_feature_levels_are_refused_with_the_list(bad):
    with pytest.raises(ValueError, match="known levels are 1.0"):
        dmltile.parse_feature_level(bad)


@pytest.mark.parametrize("spelling", ["FLOAT16", "DML_TENSOR_DATA_TYPE_FLOAT16", 2])
def test_data_type_spellings(spelling):
    assert DataType.parse(spelling) is DataType.FLOAT16


@pytest.mark.parametrize("bad", [True, "float16", "BOOL", 14, -1, 2.0, None])
def test_data_type_rejects(bad):
    with pytest.raises(EnumParseError):
        DataType.parse(bad)


def test_element_sizes_and_numpy_types():
    assert [DataType[n].element_size for n in ("FLOAT32", "FLOAT16", "UINT8", "INT64", "FLOAT64")] == [
        4,
        2,
        1,
        8,
        8,
    ]
    assert DataType.UINT4.bits == 4 and DataType.UINT4.numpy_dtype is None
    for member in DataType:
        if member.numpy_dtype is not None:
            assert member.numpy_dtype.itemsize * 8 == member.bits
            assert DataType.from_numpy(member.numpy_dtype) is member


def test_flags_accept_a_list_like_dxdispatch():
    assert TensorFlags.parse(["OWNED_BY_DML"]) is TensorFlags.OWNED_BY_DML
    assert TensorFlags.parse("DML_TENSOR_FLAG_NONE") is TensorFlags.NONE


# The DirectML Tile page's Tensor support section, transcribed by hand (seeds/004).
PAGE = {
    "1.0": ({4}, {"FLOAT32", "FLOAT16"}),
    "2.1": ({4}, {"FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"}),
    "3.1": (set(range(1, 9)), {"FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"}),
    # The page's 4.1 row, plus FLOAT64, which the page lists nowhere: DirectML 1.7.0 (max level 4.1) and
    # every later one accept FLOAT64 Tile (measured).
    "4.1": (
        set(range(1, 9)),
        {
            "FLOAT32",
            "FLOAT16",
            "INT64",
            "INT32",
            "INT16",
            "INT8",
            "UINT64",
            "UINT32",
            "UINT16",
            "UINT8",
            "FLOAT64",
        },
    ),
}
ROW_IN_FORCE = {
    "1.0": "1.0",
    "2.0": "1.0",
    "2.1": "2.1",
    "3.0": "2.1",
    "3.1": "3.1",
    "4.0": "3.1",
    "4.1": "4.1",
    "5.0": "4.1",
    "5.1": "4.1",
    "5.2": "4.1",
    "6.0": "4.1",
    "6.1": "4.1",
    "6.2": "4.1",
    "6.3": "4.1",
    "6.4": "4.1",
}


@pytest.mark.parametrize("level", list(LEVELS))
def test_every_level_inherits_the_row_below(level):
    dims, types = PAGE[ROW_IN_FORCE[level]]
    row = tile_support(FeatureLevel.parse(level))
    for tensor in ("InputTensor", "OutputTensor"):
        assert set(row.tensors[tensor].dimension_counts) == dims
        assert {t.name for t in row.tensors[tensor].data_types} == types
    assert "DML_TILE_OPERATOR_DESC" in row.source
    assert ("measured" in row.source) == (ROW_IN_FORCE[level] == "4.1")  # where FLOAT64 enters


@pytest.mark.parametrize("level", list(LEVELS))
@pytest.mark.parametrize("dtype", ["FLOAT32", "FLOAT16", "INT32", "UINT8", "INT64", "UINT64", "FLOAT64"])
@pytest.mark.parametrize("rank", [1, 4, 6, 8, 9])
def test_validate_agrees_with_the_page_at_every_level(level, dtype, rank):
    dims, types = PAGE[ROW_IN_FORCE[level]]
    desc = dmltile.tile_desc([2] * rank, [1] * (rank - 1) + [3], dtype)
    report = dmltile.validate(desc, feature_level=level)
    assert report.valid == (rank in dims and dtype in types)
    expected = ({"DML301"} if rank not in dims else set()) | ({"DML302"} if dtype not in types else set())
    if dtype == "FLOAT64" and dtype in types:
        expected.add("DML304")  # accepted, but the page does not list FLOAT64: a warning
    assert set(report.codes) == expected
