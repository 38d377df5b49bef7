"""Every file in examples/ is exercised: valid ones at their promised level, invalid ones with their code."""

import runpy
from pathlib import Path

import pytest

import dmltile

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# The code each invalid example is named for (and the level it is checked at).
INVALID = {
    "invalid_alignment.json": ("DML107", "6.4"),
    "invalid_bool_data_type.json": ("DML005", "6.4"),
    "invalid_data_type_mismatch.json": ("DML206", "6.4"),
    "invalid_dimension_count.json": ("DML102", "6.4"),
    "invalid_missing_sizes.json": ("DML002", "6.4"),
    "invalid_negative_size.json": ("DML004", "6.4"),
    "invalid_not_tile.json": ("DML207", "6.4"),
    "invalid_output_owned_by_dml.json": ("DML110", "6.4"),
    "invalid_output_sizes.json": ("DML205", "6.4"),
    "invalid_repeats_count.json": ("DML201", "6.4"),
    "invalid_strides_length.json": ("DML103", "6.4"),
    "invalid_total_size_too_small.json": ("DML105", "6.4"),
    "invalid_unknown_field.json": ("DML003", "6.4"),
    "invalid_zero_repeat.json": ("DML203", "6.4"),
    "invalid_fl1_0_int32.json": ("DML302", "1.0"),
    "invalid_fl2_1_six_dims.json": ("DML301", "2.1"),
    "invalid_fl3_1_int64.json": ("DML302", "3.1"),
}
VALID = {
    "doc_example.json": "1.0",
    "valid_fl1_0_float16_4d.json": "1.0",
    "valid_fl2_1_int8_4d.json": "2.1",
    "valid_fl3_1_float32_6d.json": "3.1",
    "valid_fl4_1_int64_2d.json": "4.1",
    "valid_short_form.json": "1.0",
    "valid_strided_padded_input.json": "1.0",
    "valid_padded_output.json": "1.0",
    "valid_warning_total_size_not_dword.json": "1.0",
}


def test_every_example_file_is_listed_here():
    assert {p.name for p in EXAMPLES.glob("*.json")} == set(INVALID) | set(VALID)


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_example_reports_exactly_its_code(name):
    code, level = INVALID[name]
    report = dmltile.validate(EXAMPLES / name, feature_level=level)
    assert not report.valid
    assert {i.code for i in report.errors} == {code}


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_example_is_valid_from_its_level(name):
    assert dmltile.min_feature_level(EXAMPLES / name).dotted == VALID[name]


def test_a_valid_example_named_for_a_warning_carries_it():
    report = dmltile.validate(EXAMPLES / "valid_warning_total_size_not_dword.json", feature_level="1.0")
    assert report.valid and report.codes == ["DML106"] and report.warnings


def test_the_per_level_examples_cover_every_tile_row():
    assert {v for k, v in VALID.items() if k.startswith("valid_fl")} == {"1.0", "2.1", "3.1", "4.1"}


def test_demo_script_runs(capsys):
    runpy.run_path(str(EXAMPLES / "demo.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "doc_example.json" in out and "DML205" in out
