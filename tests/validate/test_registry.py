"""The rule registry, rule by rule: every rule says why and shows an example; each example, judged
as its rule says, reports its code and no other; each fix, applied to its example, removes the issue;
``dmltile rules CODE`` prints an example that the printed command reproduces.

A new rule needs no new test here: it is one entry in its family's module, and these iterate them all.
"""

from __future__ import annotations

import json
import re
import shlex

import pytest

import dmltile
from dmltile.core.fields import FIELDS
from dmltile.validate.fixes import apply_fix
from dmltile.validate.rules import RULES, all_rules, field_description
from dmltile.validate.rules.provider import NodeFacts, provider_findings
from dmltile.validate.source import looks_like_dxdispatch
from tests.cli_support import invoke, json_out

DOCUMENT_RULES = [r.code for r in all_rules() if r.example.node is None]
PROVIDER_RULES = [r.code for r in all_rules() if r.example.node is not None]
# Rules whose option `dmltile validate` refuses before judging any document (exit status 2).
REFUSED_OPTIONS = {"DML303", "DML305"}
# DML402 is a warning DxDispatch's own parser would make an error; it is reported where a model file
# is validated dispatchable by dispatchable, not by dmltile.validate on one descriptor.
CLI_ONLY = {"DML402"}


def judge(code: str) -> dmltile.ValidationReport:
    ex = RULES[code].example
    return dmltile.validate(ex.document, ex.feature_level or "6.4", directml=ex.directml)


def test_every_rule_says_why_and_shows_an_example():
    for r in all_rules():
        assert len(r.why) > 60 and r.why.endswith("."), r.code
        assert (r.example.document is None) != (r.example.node is None), r.code
    assert set(PROVIDER_RULES) == {r.code for r in all_rules() if r.phase == "provider"}


@pytest.mark.parametrize("code", sorted(set(DOCUMENT_RULES) - CLI_ONLY))
def test_each_example_reports_its_code_and_no_other(code):
    report = judge(code)
    assert set(report.codes) == {code}, report
    assert report.valid == (RULES[code].severity == "warning")


@pytest.mark.parametrize("code", [c for c in DOCUMENT_RULES if RULES[c].fix is not None])
def test_each_fix_applied_to_its_example_removes_the_issue(code, tmp_path):
    ex = RULES[code].example
    report = judge(code)
    found = [i for i in report.issues if i.code == code]
    assert found and all(i.fix for i in found), found
    if looks_like_dxdispatch(ex.document):  # the fix is made in the dispatchable, as --fix writes it
        path = tmp_path / "model.json"
        path.write_text(json.dumps(ex.document))
        assert invoke("validate", path, "--fix").exit_code == 0
        assert code not in dmltile.validate(path).codes
        return
    for issue in found:
        after = dmltile.validate(
            apply_fix(ex.document, issue), ex.feature_level or "6.4", directml=ex.directml
        )
        assert (code, issue.path) not in {(i.code, i.path) for i in after.issues}, after


def test_the_rules_without_a_fix_are_those_no_edit_of_the_document_makes_pass():
    unfixable = {r.code for r in all_rules() if r.fix is None and r.phase != "provider"}
    # not a document; an unknown level or DirectML version; a model that is not one Tile; interleaved
    # output strides (a warning whose cause no rule has identified); warnings only DirectML's version decides
    assert unfixable == {"DML001", "DML111", "DML112", "DML303", "DML304", "DML305", "DML306", "DML401"}


@pytest.mark.parametrize("code", PROVIDER_RULES)
def test_each_provider_example_reports_its_code_and_no_other(code):
    facts = NodeFacts.from_dict(RULES[code].example.node)
    assert {f.code for f in provider_findings(facts)} == {code}


# -- the examples as `dmltile rules CODE` prints them ------------------------------------------------
def printed_example(code: str) -> tuple[str, object]:
    """The command and the document ``dmltile rules CODE`` prints."""
    out = invoke("rules", code).stdout
    head, _, rest = out.partition("\nExample")
    command = re.search(r"`(dmltile [^`]+)`", rest)
    assert command, out
    body = rest.split("\n", 1)[1]
    text = body.split("\n(", 1)[0]
    return command.group(1), json.loads(text)


@pytest.mark.parametrize("code", DOCUMENT_RULES)
def test_the_printed_example_reproduces_its_code(code, tmp_path):
    command, document = printed_example(code)
    assert document == RULES[code].example.document
    path = tmp_path / "example.json"
    path.write_text(json.dumps(document))
    args = [str(path) if a == "example.json" else a for a in shlex.split(command)[1:]]
    result = invoke(*args)
    if code in REFUSED_OPTIONS:
        assert result.exit_code == 2 and judge(code).issues[0].message in result.stderr
    else:
        assert code in result.stdout + result.stderr, result.stdout + result.stderr


def test_one_rule_prints_what_why_and_where_from():
    out = invoke("rules", "DML107").stdout
    rule = RULES["DML107"]
    flat = " ".join(out.split())
    for text in (rule.rule, rule.why, rule.source):
        assert " ".join(text.split()) in flat


def test_rules_json_gives_every_rule_its_why_and_example():
    doc = json_out(invoke("rules", "--json").stdout)["rules"]
    assert [r["code"] for r in doc] == sorted(RULES)
    by_code = {r["code"]: r for r in doc}
    assert by_code["DML302"]["example"]["feature_level"] == "1.0"
    assert by_code["DML112"]["example"]["directml"] == "1.9.1"
    assert "feature_level" not in by_code["DML205"]["example"]
    assert by_code["DML205"]["example"]["document"] == RULES["DML205"].example.document
    assert by_code["DML501"]["example"]["node"]["opset"] == 5
    assert all(r["why"] == RULES[r["code"]].why for r in doc)
    one = json_out(invoke("rules", "dml205", "--json").stdout)
    assert one == {"rules": [by_code["DML205"]], "exit_status": 0}


@pytest.mark.parametrize("typo, meant", [("DML2O5", "DML205"), ("DML1O7", "DML107"), ("205", "DML205")])
def test_an_unknown_code_is_a_usage_error_with_a_did_you_mean(typo, meant):
    result = invoke("rules", typo)
    assert result.exit_code == 2 and f"did you mean {meant}" in result.stderr
    assert invoke("rules", "NOPE").exit_code == 2


# -- field descriptions say the limits of the rules, and only theirs ---------------------------------
LIMIT_WORDS = ("must", "at least", "at most", "multiple of", "power of two", "> 0", "larger than", "equal")


def test_field_meanings_leave_every_limit_to_a_rule():
    for name, info in FIELDS.items():
        assert not any(w in info.meaning for w in LIMIT_WORDS), (name, info.meaning)
    for r in all_rules():
        if r.limit:
            assert r.field in FIELDS and r.limit in field_description(r.field), r.code


def test_the_size_and_alignment_descriptions_agree_with_their_rules():
    total = field_description("TotalTensorSizeInBytes")
    assert RULES["DML106"].severity == "warning" and "warns" in total  # not a requirement
    align = field_description("GuaranteedBaseOffsetAlignment")
    assert "at least 16" in align and "element size" not in align
    # what the description says, the rule decides: 16 is accepted, 8 (FLOAT64's element size) is not
    doc = dmltile.tile_desc([2, 3], [2, 2], "FLOAT64").to_dict()
    for alignment, accepted in ((16, True), (8, False)):
        doc["Desc"]["InputTensor"]["Desc"]["GuaranteedBaseOffsetAlignment"] = alignment
        assert ("DML107" not in dmltile.validate(doc).codes) == accepted
    doc = dmltile.tile_desc([2, 3], [2, 2]).to_dict()
    doc["Desc"]["InputTensor"]["Desc"]["TotalTensorSizeInBytes"] = 26
    assert dmltile.validate(doc).valid  # a size that is no multiple of 4 is valid, with DML106's warning
