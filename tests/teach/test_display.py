"""Notebook and REPL display of descriptors and reports."""

from __future__ import annotations

import io

from rich.console import Console

import dmltile
from dmltile.validate.report import Issue, ValidationReport
from tests.cli_support import EXAMPLES


def _rich_text(obj) -> str:
    console = Console(file=io.StringIO(), width=120, color_system=None)
    console.print(obj)
    return console.file.getvalue()


def test_descriptor_html_table_and_repr():
    desc = dmltile.tile_desc([1, 1, 2, 3], [1, 1, 3, 3], dtype="FLOAT16")
    page = desc._repr_html_()
    assert page.startswith("<table>") and page.count("<tr>") == 3  # header + two tensors
    assert "<td>[1, 1, 6, 9]</td>" in page and "<td>108</td>" in page and "FLOAT16" in page
    assert repr(desc) == "<OperatorDesc FLOAT16 [1, 1, 2, 3] x [1, 1, 3, 3] -> [1, 1, 6, 9]>"
    text = _rich_text(desc)
    assert "InputTensor" in text and "[1, 1, 6, 9]" in text and "Repeats [1, 1, 3, 3]" in text


def test_report_html_lists_every_issue_escaped():
    report = dmltile.validate(EXAMPLES / "invalid_fl3_1_int64.json", "1.0")
    page = report._repr_html_()
    assert page.count("<td>DML301</td>") == 2 and page.count("<td>DML302</td>") == 2
    assert "INVALID at DML_FEATURE_LEVEL_1_0" in page
    assert repr(report) == "<ValidationReport INVALID at 1.0: DML301, DML301, DML302, DML302>"
    made_up = ValidationReport(
        valid=False, feature_level=None, issues=[Issue(code="DML004", path="<x>", message="a < b & c")]
    )
    assert "a &lt; b &amp; c" in made_up._repr_html_() and "<x>" not in made_up._repr_html_()
    assert "DML302" in _rich_text(report)


def test_valid_report_repr_and_models_still_compare_and_hash():
    report = dmltile.validate(EXAMPLES / "doc_example.json")
    assert repr(report) == "<ValidationReport valid at 6.4>"
    a, b = dmltile.load(EXAMPLES / "doc_example.json"), dmltile.load(EXAMPLES / "valid_short_form.json")
    assert a == b and hash(a) == hash(b)
