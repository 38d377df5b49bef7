"""A rule owns its words, as ruff's Violation does: the check finds values, the rule's message and
hint (``Rule.words``) render them. Each rule with words is run on its own example, through the path
that reports it (``validate`` for a document, the provider's checks for an ONNX node, as ``dmltile
check`` applies them), and its message must be one of its templates filled in; the rules whose checks
still write their words are listed here by name, so the list can only shrink."""

from __future__ import annotations

import ast
import inspect
import re

import pytest

import dmltile
from dmltile.validate.rules import (
    all_rules,
    compile_time,
    document,
    dxdispatch,
    levels,
    model_ir,
    operator,
    provider,
    tensor,
    wrap,
)
from dmltile.validate.rules.provider import NodeFacts, provider_findings
from dmltile.validate.rules.registry import Rule, Words

STILL_WRITE_THEIR_WORDS: set[str] = set()


def _pattern(template: str) -> re.Pattern:
    """The template as a regular expression: its own words literally, each value as any text."""
    parts = re.split(r"\{[^{}]*\}", template.replace("{{", "\0").replace("}}", "\1"))
    literal = [re.escape(p.replace("\0", "{").replace("\1", "}")) for p in parts]
    return re.compile("(.+?)".join(literal), re.DOTALL)


def _messages(rule: Rule) -> list[str]:
    ex = rule.example
    if ex.node is not None:  # a provider rule: the findings of the node's facts
        return [f.message for f in provider_findings(NodeFacts.from_dict(ex.node)) if f.code == rule.code]
    if ex.directml is not None:
        report = dmltile.validate(ex.document, ex.feature_level or "6.4", directml=ex.directml)
    else:
        report = dmltile.validate(ex.document, ex.feature_level or "6.4")
    return [i.message for i in report.issues if i.code == rule.code]


WITH_WORDS = [r for r in all_rules() if r.words]


def test_the_rules_without_words_are_exactly_the_listed_ones():
    present = {r.code for r in all_rules()}
    assert {r.code for r in all_rules() if not r.words} == STILL_WRITE_THEIR_WORDS & present
    assert STILL_WRITE_THEIR_WORDS <= present  # a code renamed away is taken off the list


@pytest.mark.parametrize("rule", WITH_WORDS, ids=lambda r: r.code)
def test_each_rules_example_message_is_its_template_filled_with_found_values(rule):
    messages = _messages(rule)
    assert messages, f"{rule.code}'s example does not break it"
    for message in messages:
        assert any(_pattern(w.message).fullmatch(message) for w in rule.words.values()), message
        assert not re.search(r"\{[a-z_]+\}", message), message  # every value filled in


def test_a_template_fills_from_values_and_reads_literally():
    words = Words("{tensor}.Sizes[{axis}] is 0", 'set "Type" {{x}}')
    assert words.fields() == {"tensor", "axis"}
    assert _pattern(words.message).fullmatch("InputTensor.Sizes[1] is 0")
    assert not _pattern(words.message).fullmatch("InputTensor.Sizes[1] is 7")


@pytest.mark.parametrize(
    "module",
    [document, dxdispatch, tensor, operator, wrap, levels, compile_time],
    ids=lambda m: m.__name__.rsplit(".", 1)[-1],
)
def test_checks_of_converted_families_never_write_a_message(module):
    # Their issues come from found(code, path, case, **values): no issue(...) call builds words.
    calls = [
        node.func.id
        for node in ast.walk(ast.parse(inspect.getsource(module)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    ]
    assert "issue" not in calls and "found" in calls


def test_every_words_case_is_reachable_only_through_found_with_its_values():
    # A case's template names values; rendering it without them fails loudly, never half-filled.
    from dmltile.validate.rules.registry import found

    with pytest.raises(KeyError):
        found("DML104", "Desc.InputTensor.Desc.Sizes[0]", tensor="InputTensor")
    rendered = found("DML104", "Desc.InputTensor.Desc.Sizes[0]", tensor="InputTensor", axis=0)
    assert rendered.message == "InputTensor.Sizes[0] is 0; DirectML has no empty tensors"


@pytest.mark.parametrize("module", [provider, model_ir], ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_provider_checks_never_write_a_finding(module):
    # Their findings come from finding(code, status, case, **values), the one place a Finding is made.
    tree = ast.parse(inspect.getsource(module))
    for fn in [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "finding"]:
        tree.body.remove(fn)
    calls = [
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    ]
    assert "Finding" not in calls and "finding" in calls
