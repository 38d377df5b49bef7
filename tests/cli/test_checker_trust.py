"""``dmltile validate`` as CI and editors use it: filters that never hide an error, every issue in
one pass, ``--diff`` that never writes, ``--fix`` with warnings' fixes, folders that skip JSON
Schemas, ``[tool.dmltile]`` settings, the pre-commit hook, and one JSON contract for the status."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import dmltile
from dmltile.cli.report_schemas import REPORTS
from dmltile.validate.fixes import apply_all
from dmltile.validate.rules import RULES

from ..cli_support import DOC_EXAMPLE, EXAMPLES, ROOT, SCRIPT, invoke, script, tile_model_file


def _doc_example() -> dict:
    return json.loads(DOC_EXAMPLE.read_text())


def _write(path: Path, document) -> Path:
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path


def _codes(result) -> list[str]:
    doc = json.loads(result.stdout)
    return [i["code"] for f in doc["files"] for i in f["reports"][0]["issues"]]


# -- 1. filters that never hide an error ----------------------------------------------------------
@pytest.mark.parametrize(
    "option, value",
    [("--select", "DML999"), ("--select", "foo"), ("--ignore", "DML9"), ("--select", "DML205,DML6")],
)
def test_an_unknown_code_or_prefix_is_a_usage_error_naming_the_known_codes(option, value):
    bad = EXAMPLES / "invalid_total_size_too_small.json"
    result = invoke("validate", bad, option, value)
    assert result.exit_code == 2
    assert option in result.stderr and "DML205" in result.stderr and "DML105" in result.stderr
    unknown = [v.upper() for v in value.split(",") if not any(c.startswith(v.upper()) for c in RULES)]
    assert all(u in result.stderr for u in unknown)


def test_a_known_prefix_still_selects_every_code_it_starts():
    assert invoke("validate", EXAMPLES / "invalid_output_sizes.json", "--select", "DML2").exit_code == 1
    assert invoke("validate", EXAMPLES / "invalid_output_sizes.json", "--select", "dml1").exit_code == 0


def test_a_misspelt_key_is_invalid_whatever_the_filter(tmp_path):
    document = _doc_example()
    document["Desc"]["Repeat"] = document["Desc"].pop("Repeats")
    path = _write(tmp_path / "x.json", document)
    for options in (["--ignore", "DML003"], ["--select", "DML2"], ["--ignore", "DML0"]):
        result = invoke("validate", path, "--json", *options)
        assert result.exit_code == 1, options
        assert "DML003" in _codes(result)


def test_a_selected_rule_is_judged_beside_an_unknown_enum_name(tmp_path):
    document = _doc_example()
    document["Desc"]["InputTensor"]["Desc"]["DataType"] = "float"
    document["Desc"]["OutputTensor"]["Desc"]["Sizes"][2] = 5
    path = _write(tmp_path / "x.json", document)
    result = invoke("validate", path, "--select", "DML205", "--json")
    assert result.exit_code == 1
    assert _codes(result) == ["DML005", "DML205"]


# -- 2. one pass ----------------------------------------------------------------------------------
def test_every_issue_in_one_pass_after_an_unknown_key(tmp_path):
    document = _doc_example()
    tensor = document["Desc"]["InputTensor"]["Desc"]
    tensor["Colour"] = "red"  # an unknown key
    tensor["TotalTensorSizeInBytes"] = 20  # below the 24 bytes of 2x3 FLOAT32
    document["Desc"]["OutputTensor"]["Desc"]["Sizes"][2] = 5  # 2 * 3 = 6
    report = dmltile.validate(document)
    by_code = {i.code: i for i in report.issues}
    assert list(by_code) == ["DML003", "DML105", "DML205"]
    assert by_code["DML105"].path == "Desc.InputTensor.Desc.TotalTensorSizeInBytes"
    assert by_code["DML205"].path == "Desc.OutputTensor.Desc.Sizes[2]"
    # each issue's hint and fix are its own rule's: the unknown key's fix removes it and nothing else
    assert [(e.op, e.path) for e in by_code["DML003"].fix] == [("remove", "Desc.InputTensor.Desc.Colour")]
    assert "Sizes" not in by_code["DML003"].hint and "24" not in by_code["DML003"].hint
    assert [e.value for e in by_code["DML105"].fix] == [24] and [e.value for e in by_code["DML205"].fix] == [
        6
    ]
    assert dmltile.validate(apply_all(document, report.issues)).valid


def test_one_pass_through_a_misspelt_wrapper_and_an_unknown_enum_name():
    document = {
        "Repeats": [2, 3],
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3], "TotalTensorSizeInBytes": 8},
        "outputtensor": {"DataType": "float", "Sizes": [4, 8]},  # misspelt wrapper, unknown name
    }
    report = dmltile.validate(document)
    assert [i.code for i in report.issues] == ["DML003", "DML005", "DML105", "DML205"]
    (wrapper,) = [i for i in report.issues if i.code == "DML003"]
    assert [(e.op, e.to) for e in wrapper.fix] == [("rename", "OutputTensor")]
    fixed = apply_all(document, report.issues)
    assert dmltile.validate(fixed).valid
    assert fixed["Desc"]["OutputTensor"]["Desc"]["Sizes"] == [4, 9]


def test_a_document_that_is_no_tile_is_not_judged_as_one():
    document = _doc_example()
    document["Type"] = "DML_OPERATOR_ELEMENT_WISE_IDENTITY"
    document["Desc"]["OutputTensor"]["Desc"]["Sizes"][2] = 5
    assert [i.code for i in dmltile.validate(document).issues] == ["DML207"]


# -- 3. --diff never writes; --fix applies warnings' fixes ----------------------------------------
def test_diff_beside_fix_prints_the_diff_and_writes_nothing(tmp_path):
    target = tmp_path / "x.json"
    shutil.copy(EXAMPLES / "invalid_output_sizes.json", target)
    old = target.read_bytes()
    result = invoke("validate", target, "--fix", "--diff")
    assert result.exit_code == 1 and target.read_bytes() == old
    assert "-          8\n" in result.stdout and "+          9\n" in result.stdout


def test_fix_applies_a_warnings_fix(tmp_path):
    target = tmp_path / "x.json"
    shutil.copy(EXAMPLES / "valid_warning_total_size_not_dword.json", target)
    assert [i.code for i in dmltile.validate(target).issues] == ["DML106"]
    result = invoke("validate", target, "--fix")
    assert result.exit_code == 0 and "DML106" in result.stdout
    assert json.loads(target.read_text())["Desc"]["InputTensor"]["Desc"]["TotalTensorSizeInBytes"] == 28
    assert not dmltile.validate(target).issues


def test_fix_gives_a_dxdispatch_model_the_repeats_count_its_parser_requires(tmp_path):
    model = json.loads((EXAMPLES / "dxdispatch" / "tile_doc_example.json").read_text())
    desc = model["dispatchables"]["tile"]["desc"]
    repeats = len(desc.pop("RepeatsCount") and desc["Repeats"])
    target = _write(tmp_path / "model.json", model)
    assert [i.code for i in dmltile.validate(target).issues] == ["DML402"]
    assert invoke("validate", target, "--fix").exit_code == 0
    assert json.loads(target.read_text())["dispatchables"]["tile"]["desc"]["RepeatsCount"] == repeats
    assert not dmltile.validate(target).issues


# -- 5. a folder check skips JSON Schemas ---------------------------------------------------------
def test_a_folder_check_skips_every_report_schema_and_says_so(tmp_path):
    for name in REPORTS:
        (tmp_path / f"{name}.schema.json").write_text(invoke("schema", "--report", name).stdout)
    (tmp_path / "tile.schema.json").write_text(invoke("schema").stdout)
    shutil.copy(DOC_EXAMPLE, tmp_path / "doc.json")
    result = invoke("validate", tmp_path, "--json")
    assert result.exit_code == 0, result.stdout
    doc = json.loads(result.stdout)
    assert [Path(f["file"]).name for f in doc["files"]] == ["doc.json"]
    skipped = {Path(s["file"]).name: s["reason"] for s in doc["skipped"]}
    assert skipped == {f"{n}.schema.json": "a JSON Schema" for n in [*REPORTS, "tile"]}
    text = invoke("validate", tmp_path)
    assert text.exit_code == 0 and "validate.schema.json (a JSON Schema)" in text.stderr


# -- 6. settings in pyproject.toml ----------------------------------------------------------------
INT32 = dmltile.tile_desc([2, 3], [2, 2], dtype="INT32").to_dict()  # Tile takes INT32 from 2.1, 2-D from 3.1


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder with a descriptor in ``descriptors/``, run from that subfolder."""
    (tmp_path / "descriptors").mkdir()
    _write(tmp_path / "descriptors" / "int32.json", INT32)
    monkeypatch.chdir(tmp_path / "descriptors")
    return tmp_path


def _settings(project: Path, body: str) -> Path:
    path = project / "pyproject.toml"
    path.write_text('[project]\nname = "x"\n\n[tool.dmltile]\n' + body)
    return path


def test_settings_are_found_upward_and_the_command_line_wins(project):
    assert invoke("validate", "int32.json").exit_code == 0
    _settings(project, 'feature-level = "1.0"\n')
    result = invoke("validate", "int32.json")
    assert result.exit_code == 1 and "DML302" in result.stdout and "DML_FEATURE_LEVEL_1_0" in result.stdout
    assert invoke("validate", "int32.json", "-l", "3.1").exit_code == 0  # 2-D needs 3.1


def test_settings_select_ignore_warnings_as_errors_and_exclude(project):
    warned = json.loads((EXAMPLES / "valid_warning_total_size_not_dword.json").read_text())
    _write(project / "descriptors" / "warned.json", warned)
    _settings(project, "warnings-as-errors = true\n")
    assert invoke("validate", "warned.json").exit_code == 1
    assert invoke("validate", "warned.json", "--no-warnings-as-errors").exit_code == 0
    _settings(project, 'warnings-as-errors = true\nignore = ["DML106"]\n')
    assert invoke("validate", "warned.json").exit_code == 0
    _settings(project, 'feature-level = "1.0"\nexclude = ["descriptors/int32.json"]\n')
    result = invoke("validate", ".", "--json")
    doc = json.loads(result.stdout)
    assert [Path(f["file"]).name for f in doc["files"]] == ["warned.json"] and result.exit_code == 0
    assert "excluded" in doc["skipped"][0]["reason"]
    assert invoke("validate", "int32.json").exit_code == 1  # a file given by name is checked
    assert invoke("validate", "int32.json", "--force-exclude").exit_code == 0


@pytest.mark.parametrize(
    "body, named",
    [
        ('select = ["DML99"]\n', "DML99"),
        ('feature_level = "1.0"\n', "feature_level"),
        ("warnings-as-errors = 1\n", "warnings-as-errors"),
        ("select = [\n", "TOML"),
    ],
)
def test_a_setting_dmltile_cannot_use_is_a_usage_error_naming_it(project, body, named):
    path = _settings(project, body)
    result = invoke("validate", "int32.json")
    assert result.exit_code == 2 and named in result.stderr and str(path) in result.stderr


def test_show_settings_prints_each_value_and_where_it_comes_from(project):
    path = _settings(project, 'feature-level = "3.1"\nselect = ["DML1", "DML2"]\n')
    result = invoke("validate", "--show-settings", "--ignore", "DML106")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == f"settings file: {path}"
    assert f"  feature-level = 3.1  ({path})" in lines
    assert f"  select = DML1,DML2  ({path})" in lines
    assert "  ignore = DML106  (command line)" in lines
    assert "  warnings-as-errors = false  (default)" in lines
    refused = invoke("validate", "--show-settings", "--json")  # --json keeps its one-document promise
    assert refused.exit_code == 2 and json.loads(refused.stdout)["exit_status"] == 2


# -- 7. the pre-commit hook -----------------------------------------------------------------------
def _hooks() -> list[dict]:
    """The hooks of .pre-commit-hooks.yaml, read as the flat YAML it is written in (a list of
    mappings of scalars and [flow, lists])."""
    hooks: list[dict] = []
    for line in (ROOT / ".pre-commit-hooks.yaml").read_text().splitlines():
        found = re.match(r"^(- |  )(\w+): (.*)$", line)
        if not found:
            continue
        if found[1] == "- ":
            hooks.append({})
        value = found[3]
        hooks[-1][found[2]] = [v.strip() for v in value[1:-1].split(",")] if value.startswith("[") else value
    return hooks


def test_the_pre_commit_hook_runs_validate_on_a_file_list(tmp_path):
    (hook,) = _hooks()
    assert hook["id"] == "dmltile-validate" and hook["language"] == "python" and hook["types"] == ["json"]
    entry = hook["entry"].split()
    assert entry[:2] == ["dmltile", "validate"]
    if not SCRIPT.exists():
        pytest.skip("the dmltile script is not installed")
    for name in ("doc_example.json", "invalid_output_sizes.json"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    shutil.copy(EXAMPLES / "dxdispatch" / "tile_doc_example.json", tmp_path / "model.json")
    (tmp_path / "package.json").write_text('{"name": "web", "version": "1.0.0"}')  # other JSON in a repo
    files = ["doc_example.json", "model.json", "package.json"]
    run = subprocess.run([str(SCRIPT), *entry[1:], *files], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "package.json" in run.stderr  # skipped, and said so
    run = subprocess.run(
        [str(SCRIPT), *entry[1:], *files, "invalid_output_sizes.json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 1 and "invalid_output_sizes.json: INVALID" in run.stdout


def test_the_readme_documents_the_hook_and_the_settings():
    readme = (ROOT / "README.md").read_text()
    assert "id: dmltile-validate" in readme and "[tool.dmltile]" in readme and "--show-settings" in readme


# -- 8. one JSON contract for the status ----------------------------------------------------------
def test_every_json_document_carries_the_exit_status(tmp_path):
    model = tile_model_file(tmp_path)
    runs = [
        ["validate", DOC_EXAMPLE, "--json"],
        ["validate", EXAMPLES / "invalid_output_sizes.json", "--json"],
        ["levels", "--json"],
        ["rules", "--json"],
        ["rules", "DML205", "--json"],
        ["doctor", "--json"],
        ["run", DOC_EXAMPLE, "--json", "--seed", "1"],
        ["run", EXAMPLES / "invalid_output_sizes.json", "--json"],
        ["check", model, "--json"],
        ["validate", "--json", "--select", "DML999", DOC_EXAMPLE],
    ]
    for args in runs:
        result = invoke(*args)
        assert json.loads(result.stdout)["exit_status"] == result.exit_code, args


@pytest.mark.parametrize("command", ["validate", "run", "check"])
def test_an_unreadable_input_gives_the_same_error_document_from_every_command(tmp_path, command):
    broken = tmp_path / "broken.json"
    broken.write_text('{"Type": ')
    missing = tmp_path / "missing.json"
    for path in (broken, missing):
        result = script(command, path, "--json")
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        doc = json.loads(result.stdout)
        assert set(doc) == {"error", "exit_status"} and doc["exit_status"] == 2 and path.name in doc["error"]
