"""``--fix`` applies only safe fixes, as ruff does: the fixes that guess what a document meant (a
misspelt key renamed to the one it resembles, an unknown enum name taken for the member it resembles)
are the rule's unsafe ones, left and named unless ``--unsafe-fixes`` is given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import dmltile
from dmltile.validate.rules import RULES

from ..cli_support import DOC_EXAMPLE, invoke


def _misspelt(tmp_path: Path, where: str) -> Path:
    document = json.loads(DOC_EXAMPLE.read_text())
    desc = document["Desc"]
    if where == "key":  # DML003: a misspelt key renamed to the one it resembles
        desc["Repeat"] = desc.pop("Repeats")
    else:  # DML005: an enum name that is no member, taken for the member it resembles
        desc["InputTensor"]["Desc"]["DataType"] = "FLOAT23"
    path = tmp_path / "x.json"
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path


def test_the_rules_whose_fixes_guess_say_so_and_their_issues_carry_it(tmp_path):
    assert {c for c, r in RULES.items() if r.fix_applicability == "unsafe"} == {"DML003", "DML005"}
    for where, code in (("key", "DML003"), ("enum", "DML005")):
        issue = dmltile.validate(_misspelt(tmp_path, where)).issues[0]
        assert (issue.code, issue.fix_applicability) == (code, "unsafe") and issue.fix
    result = invoke("validate", _misspelt(tmp_path, "key"), "--json")
    assert json.loads(result.stdout)["files"][0]["reports"][0]["issues"][0]["fix_applicability"] == "unsafe"


@pytest.mark.parametrize("where, code", [("key", "DML003"), ("enum", "DML005")])
def test_fix_leaves_a_guess_and_names_it(tmp_path, where, code):
    path = _misspelt(tmp_path, where)
    old = path.read_bytes()
    result = invoke("validate", path, "--fix")
    assert result.exit_code == 1 and path.read_bytes() == old
    assert f"unsafe fix left: {code}" in result.stdout
    assert "1 hidden fix can be enabled with the --unsafe-fixes option" in result.stdout


@pytest.mark.parametrize("where", ["key", "enum"])
def test_unsafe_fixes_applies_the_guess(tmp_path, where):
    path = _misspelt(tmp_path, where)
    result = invoke("validate", path, "--fix", "--unsafe-fixes")
    assert result.exit_code == 0, result.stdout
    assert json.loads(path.read_text()) == json.loads(DOC_EXAMPLE.read_text())
    assert "hidden fix" not in result.stdout


def test_the_fixes_found_on_the_guessed_document_wait_for_the_guess(tmp_path):
    # the output size's fix is worked out on the document as the rename leaves it: applied alone it
    # would rest on the guess, so it is left too
    path = _misspelt(tmp_path, "key")
    document = json.loads(path.read_text())
    document["Desc"]["OutputTensor"]["Desc"]["Sizes"][2] = 5
    path.write_text(json.dumps(document))
    result = invoke("validate", path, "--fix")
    assert json.loads(path.read_text()) == document
    assert "2 hidden fixes can be enabled" in result.stdout


def test_a_safe_fix_is_applied_beside_another_files_guess(tmp_path):
    guess = _misspelt(tmp_path, "key")
    sized = tmp_path / "y.json"
    document = json.loads(DOC_EXAMPLE.read_text())
    document["Desc"]["OutputTensor"]["Desc"]["Sizes"][2] = 5
    sized.write_text(json.dumps(document))
    old = guess.read_bytes()
    result = invoke("validate", guess, sized, "--fix")
    assert "unsafe fix left: DML003" in result.stdout and "1 hidden fix can" in result.stdout
    assert guess.read_bytes() == old
    assert json.loads(sized.read_text()) == json.loads(DOC_EXAMPLE.read_text())


def test_the_api_applies_what_it_is_asked(tmp_path):
    issue = dmltile.validate(_misspelt(tmp_path, "key")).issues[0]
    fixed = dmltile.apply_fix(json.loads(_misspelt(tmp_path, "key").read_text()), issue.fix)
    assert fixed == json.loads(DOC_EXAMPLE.read_text())


def _project(tmp_path: Path, monkeypatch, body: str) -> Path:
    """A project whose pyproject.toml holds ``[tool.dmltile]`` with ``body``, run from a subfolder."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.dmltile]\n' + body)
    (tmp_path / "descriptors").mkdir()
    monkeypatch.chdir(tmp_path / "descriptors")
    return tmp_path / "pyproject.toml"


def test_the_settings_unsafe_fixes_applies_the_guess_and_the_command_line_wins(tmp_path, monkeypatch):
    settings = _project(tmp_path, monkeypatch, "unsafe-fixes = true\n")
    path = _misspelt(tmp_path / "descriptors", "key")
    guessed = path.read_bytes()
    refused = invoke("validate", path, "--fix", "--no-unsafe-fixes")  # the command line wins over the file
    assert refused.exit_code == 1 and path.read_bytes() == guessed
    assert "unsafe fix left: DML003" in refused.stdout
    applied = invoke("validate", path, "--fix")  # the file's setting, with nothing on the command line
    assert applied.exit_code == 0, applied.stdout
    assert json.loads(path.read_text()) == json.loads(DOC_EXAMPLE.read_text())
    settings.write_text('[project]\nname = "x"\n\n[tool.dmltile]\nunsafe-fixes = false\n')
    path = _misspelt(tmp_path / "descriptors", "enum")
    left = invoke("validate", path, "--fix")
    assert left.exit_code == 1 and "unsafe fix left: DML005" in left.stdout
    assert invoke("validate", path, "--fix", "--unsafe-fixes").exit_code == 0  # the command line wins again
    assert json.loads(path.read_text()) == json.loads(DOC_EXAMPLE.read_text())


def test_show_settings_says_where_unsafe_fixes_comes_from(tmp_path, monkeypatch):
    settings = _project(tmp_path, monkeypatch, "unsafe-fixes = true\n")
    lines = invoke("validate", "--show-settings").stdout.splitlines()
    assert f"  unsafe-fixes = true  ({settings})" in lines
    lines = invoke("validate", "--show-settings", "--no-unsafe-fixes").stdout.splitlines()
    assert "  unsafe-fixes = false  (command line)" in lines
    settings.write_text('[project]\nname = "x"\n\n[tool.dmltile]\nfeature-level = "3.1"\n')
    assert "  unsafe-fixes = false  (default)" in invoke("validate", "--show-settings").stdout.splitlines()


def test_an_unsafe_fixes_setting_that_is_no_boolean_is_a_usage_error(tmp_path, monkeypatch):
    settings = _project(tmp_path, monkeypatch, 'unsafe-fixes = "yes"\n')
    result = invoke("validate", DOC_EXAMPLE)
    assert result.exit_code == 2 and "unsafe-fixes" in result.stderr and str(settings) in result.stderr
    assert "true or false" in result.stderr


def _example_file(tmp_path: Path, rule) -> tuple[Path, list[str]]:
    """The rule's own example in a file, and the options that judge it as the example says."""
    path = tmp_path / f"{rule.code}.json"
    path.write_text(json.dumps(rule.example.document, indent=2) + "\n")
    options = [*(["-l", rule.example.feature_level] if rule.example.feature_level else [])]
    options += ["--directml", rule.example.directml] if rule.example.directml else []
    return path, options


def _codes(path: Path, options: list[str]) -> set[str]:
    document = json.loads(invoke("validate", path, "--json", *options).stdout)
    return {i["code"] for f in document.get("files", []) for r in f["reports"] for i in r["issues"]}


@pytest.mark.parametrize(
    "rule",
    [r for r in RULES.values() if r.example.node is None and r.example.command == "validate"],
    ids=lambda r: r.code,
)
def test_rules_json_says_what_fix_does_with_the_rules_own_example(tmp_path, rule):
    """``rules --json`` gives each rule's fix applicability from the registry; ``--fix`` on the rule's
    own example does what it says: a safe fix is applied, an unsafe one only with --unsafe-fixes, and
    where there is none, the file and the verdict stay as they were."""
    (given,) = [r for r in json.loads(invoke("rules", "--json").stdout)["rules"] if r["code"] == rule.code]
    path, options = _example_file(tmp_path, rule)
    old, before = path.read_bytes(), invoke("validate", path, "--json", *options).stdout
    fixed = invoke("validate", path, "--fix", *options)
    if given["fix_applicability"] == "safe":
        assert path.read_bytes() != old and rule.code not in _codes(path, options), fixed.stdout
    elif given["fix_applicability"] == "unsafe":
        assert path.read_bytes() == old and f"unsafe fix left: {rule.code}" in fixed.stdout
        invoke("validate", path, "--fix", "--unsafe-fixes", *options)
        assert path.read_bytes() != old and rule.code not in _codes(path, options)
    else:
        assert given["fix_applicability"] == "none"
        invoke("validate", path, "--fix", "--unsafe-fixes", *options)
        assert path.read_bytes() == old
        assert invoke("validate", path, "--json", *options).stdout == before


def test_only_the_provider_rules_have_no_example_to_fix_and_no_fix():
    # the rules the test above cannot run on a file: facts of an ONNX node, or a model explain reads
    others = [r for r in RULES.values() if r.example.node is not None or r.example.command != "validate"]
    assert {r.phase for r in others if r.code != "DML401"} == {"provider"}
    assert {r.applicability for r in others} == {"none"}


def test_each_rules_page_says_what_fix_does_with_it_as_its_json_does():
    listed = {
        r["code"]: r["fix_applicability"] for r in json.loads(invoke("rules", "--json").stdout)["rules"]
    }
    assert set(listed.values()) == {"safe", "unsafe", "none"}
    for code, applicability in listed.items():
        page = " ".join(invoke("rules", code).stdout.split())
        assert f"Fix {applicability}: " in page, code
        assert ("--unsafe-fixes" in page) == (applicability == "unsafe"), code
