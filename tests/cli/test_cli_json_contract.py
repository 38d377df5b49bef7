"""One JSON contract: with --json every command prints exactly one JSON document
on stdout, also for usage errors and unreadable input, and it validates against the schema the
package ships (``dmltile schema --report COMMAND``)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from dmltile.cli.report_schemas import REPORTS, report_schema

from ..cli_support import EXAMPLES, invoke, script, tile_model_file


def one_document(text: str):
    return json.loads(text)  # raises on anything but exactly one JSON document


def conforms(document, name: str) -> None:
    jsonschema.Draft202012Validator.check_schema(report_schema(name))
    jsonschema.validate(document, report_schema(name), cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize("name", REPORTS)
def test_every_shipped_schema_is_a_valid_schema_and_printed_by_the_cli(name):
    result = invoke("schema", "--report", name)
    assert result.exit_code == 0
    assert one_document(result.stdout) == report_schema(name)


@pytest.mark.parametrize(
    ("args", "schema", "status"),
    [
        (["validate", EXAMPLES / "doc_example.json", "--json"], "validate", 0),
        (["validate", EXAMPLES / "invalid_output_sizes.json", "--json"], "validate", 1),
        (["validate", EXAMPLES, "--all-levels", "--json"], "validate", 1),
        (["levels", "--json"], "levels", 0),
        (["rules", "--json"], "rules", 0),
        (["doctor", "--json"], "doctor", 0),
        (["run", EXAMPLES / "doc_example.json", "--json", "--seed", "1"], "run", 0),
        (["run", EXAMPLES / "invalid_output_sizes.json", "--json"], "run", 1),
    ],
)
def test_real_output_validates_against_its_schema(args, schema, status):
    result = invoke(*args)
    assert result.exit_code == status, result.stderr
    conforms(one_document(result.stdout), schema)


def test_check_output_validates_against_its_schema(tmp_path):
    path = tile_model_file(tmp_path)
    result = invoke("check", path, "--json", "-l", "5.0")
    assert result.exit_code == 0, result.stderr
    doc = one_document(result.stdout)
    conforms(doc, "check")
    assert doc["feature_level"] == "5.0" and doc["feature_level_c_name"] == "DML_FEATURE_LEVEL_5_0"
    assert doc["nodes"][0]["status"] == "dispatch"


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--json", "missing.onnx"],
        ["validate", "--json", "--no-such-option", "x.json"],
        ["validate", "--json", "-l", "9.9", str(EXAMPLES / "doc_example.json")],
        ["validate", "--json"],
        ["check", "--json", str(EXAMPLES / "doc_example.json")],
        ["compare-dxdispatch", "--json", "missing.txt", "missing.npy"],
    ],
)
def test_usage_errors_and_unreadable_input_still_print_one_json_document(args):
    result = script(*args)
    assert result.returncode == 2, result.stderr
    doc = one_document(result.stdout)
    assert doc["exit_status"] == 2 and doc.get("error")
    if args[0] != "compare-dxdispatch":
        conforms(doc, "error")


def test_levels_are_spelt_one_way_with_the_c_name_beside():
    doc = one_document(invoke("validate", EXAMPLES / "doc_example.json", "--json", "-l", "3_1").stdout)
    report = doc["files"][0]["reports"][0]
    assert doc["feature_levels"] == ["3.1"]
    assert report["feature_level"] == "3.1" and report["feature_level_c_name"] == "DML_FEATURE_LEVEL_3_1"
    rows = one_document(invoke("levels", "--json").stdout)["rows"]
    assert all(
        r["feature_level_c_name"] == "DML_FEATURE_LEVEL_" + r["feature_level"].replace(".", "_") for r in rows
    )


def test_all_levels_json_has_the_lowest_accepting_level_per_file():
    doc = one_document(invoke("validate", EXAMPLES, "--all-levels", "--json").stdout)
    by_name = {Path(f["file"]).name: f for f in doc["files"]}
    assert by_name["valid_fl4_1_int64_2d.json"]["min_feature_level"] == "4.1"
    assert by_name["valid_fl3_1_float32_6d.json"]["min_feature_level_c_name"] == "DML_FEATURE_LEVEL_3_1"
    assert by_name["invalid_output_sizes.json"]["min_feature_level"] is None
    for f in doc["files"]:  # the same answer as the reports themselves
        valid = [r["feature_level"] for r in f["reports"] if r["valid"]]
        assert f["min_feature_level"] == (valid[0] if valid else None)
