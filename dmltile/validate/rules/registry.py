"""The rule registry: one ``Rule`` per code, each registered by the module of its family.

A rule owns everything about itself: what it requires (``rule``), where that comes from
(``source``), why DirectML holds to it (``why``), a document that breaks it and nothing else
(``example``), its words (``words``: the message and hint, templates its check fills with the
values it found, through ``found``), its check, and its fix (the edits that make it pass, and how
they read in a hint). Adding a rule is one entry in its family's module (and one row in the tests).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from string import Formatter
from typing import Any, Literal

from ...core.fields import FIELDS
from ...core.words import plural
from ..report import Applicability, Edit, Issue, Severity

Phase = Literal["parse", "descriptor", "feature_level", "provider"]
# (document in the canonical wrapped shape, the issue, the level) -> edits, or None when none can fix it
FixEdits = Callable[[Any, Issue, Any], "list[Edit] | None"]
# (the issue, its edits, how many of them are its own) -> the hint that spells the fix out
FixHint = Callable[[Issue, "list[Edit]", int], str]
# (desc) or (desc, level) -> Issues; for the provider's rules (node facts) -> findings
Check = Callable[..., Iterator[Any]]


@dataclass(frozen=True)
class Example:
    """What breaks a rule, and how to judge it: ``document`` (a JSON value, as ``dmltile validate``
    reads it from a file) at ``feature_level`` or as DirectML ``directml`` judges it; for the
    onnxruntime provider's rules, ``node``: the facts of an ONNX Tile node (``provider.NodeFacts``
    fields), which ``dmltile check`` reads from a model."""

    document: Any = None
    feature_level: str | None = None
    directml: str | None = None
    node: dict | None = None
    command: str = "validate"  # the dmltile command that reports it for the document in a file
    note: str = ""  # what that command shows otherwise, or why the example yields other codes too

    def to_dict(self) -> dict:
        """The example as ``dmltile rules --json`` gives it."""
        out: dict[str, Any] = {"node": self.node} if self.node is not None else {"document": self.document}
        if self.feature_level is not None:
            out["feature_level"] = self.feature_level
        if self.directml is not None:
            out["directml"] = self.directml
        if self.command != "validate":
            out["command"] = self.command
        if self.note:
            out["note"] = self.note
        return out


class _Counted(Formatter):
    """``str.format`` with counted nouns: ``{n:dimension}`` reads "1 dimension", "2 dimensions";
    ``{n:whole copy|whole copies}`` names the plural where adding an s would not make it. (A
    standard format spec is never a word: "x", ">3", ",d".)"""

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, int) and len(format_spec) > 1 and format_spec[0].isalpha():
            one, _, many = format_spec.partition("|")
            return plural(value, one, many or None)
        return super().format_field(value, format_spec)


_COUNTED = _Counted()


@dataclass(frozen=True)
class Words:
    """What a broken rule says, as ruff's Violation does: its message and its hint are templates
    (``str.format`` fields) the check fills with the values it found, so the words are written once,
    with the rule, and the check only measures. A count names its noun in the field
    (``{rank:dimension}``), so that the noun agrees with it."""

    message: str
    hint: str = ""

    def fields(self) -> set[str]:
        """The names of the values the templates need."""
        return {f for text in (self.message, self.hint) for _, f, _, _ in Formatter().parse(text) if f}

    @functools.cached_property
    def counts(self) -> bool:
        """Whether a field names a counted noun (rendered by the slower ``_Counted``)."""
        specs = [spec for text in (self.message, self.hint) for _, _, spec, _ in Formatter().parse(text)]
        return any(spec and len(spec) > 1 and spec[0].isalpha() for spec in specs)

    def render(self, **values: Any) -> tuple[str, str]:
        """(message, hint) with the values filled in."""
        fill = _COUNTED.format if self.counts else str.format
        return fill(self.message, **values), fill(self.hint, **values)


@dataclass(frozen=True)
class Rule:
    """One rule: its stable code, what it requires, where that comes from, why, an example, and
    the functions that check it and fix it."""

    code: str
    rule: str
    source: str
    phase: Phase
    why: str
    example: Example
    severity: Severity = "error"
    check: Check | None = None  # None: enforced while reading the document (or by the API)
    fix: FixEdits | None = None
    fix_hint: FixHint | None = None  # None: the rule's own hint already says the whole fix
    fix_applicability: Applicability = "safe"  # unsafe: the fix guesses what was meant
    field: str = ""  # the one field whose limit the rule states, for the field descriptions
    limit: str = ""  # that limit as a phrase ("every size is at least 1")
    # that limit as JSON Schema keywords on the field's integers (its elements, for an array)
    bounds: dict[str, int] = dataclasses.field(default_factory=dict)
    # what it says when broken: one Words per case the check tells apart ("" for a rule with one)
    words: dict[str, Words] = dataclasses.field(default_factory=dict)

    @property
    def applicability(self) -> Literal["safe", "unsafe", "none"]:
        """What ``--fix`` does with this rule's issues, as ruff says it: ``safe`` (applies the fix),
        ``unsafe`` (applies it only with ``--unsafe-fixes``: it guesses) or ``none`` (no edit fixes
        them)."""
        return self.fix_applicability if self.fix is not None else "none"


# What --fix does with a rule's issues, per applicability: said by `dmltile rules CODE`.
FIX_APPLICABILITY = {
    "safe": "`dmltile validate --fix` applies it: it keeps what the document means",
    "unsafe": "it guesses what was meant, so `--fix` applies it only with `--unsafe-fixes`",
    "none": "no edit of the document fixes it; `--fix` leaves it to you",
}

RULES: dict[str, Rule] = {}


def register(
    code: str,
    rule: str,
    source: str,
    phase: Phase,
    *,
    why: str,
    example: Example,
    severity: Severity = "error",
    check: Check | None = None,
    fix: FixEdits | None = None,
    fix_hint: FixHint | None = None,
    fix_applicability: Applicability = "safe",
    field: str = "",
    limit: str = "",
    bounds: dict[str, int] | None = None,
    words: Words | dict[str, Words] | None = None,
) -> Rule:
    """Add a rule to the registry (each code once)."""
    if code in RULES:
        raise ValueError(f"rule {code} is registered twice")
    cases = {"": words} if isinstance(words, Words) else words or {}
    RULES[code] = Rule(
        code,
        rule,
        source,
        phase,
        why,
        example,
        severity,
        check,
        fix,
        fix_hint,
        fix_applicability,
        field,
        limit,
        bounds or {},
        cases,
    )
    return RULES[code]


def rule(
    code: str,
    text: str,
    source: str,
    phase: Phase = "descriptor",
    **details: Any,
) -> Callable[[Check], Check]:
    """Register the decorated function as the check of rule ``code`` (``details``: why, example, ...)."""

    def decorate(fn: Check) -> Check:
        register(code, text, source, phase, check=fn, **details)
        return fn

    return decorate


def issue(code: str, path: str, message: str, hint: str = "") -> Issue:
    """An Issue with the severity its rule carries."""
    return Issue(code=code, path=path, message=message, hint=hint, severity=RULES[code].severity)


def found(code: str, path: str, case: str = "", **values: Any) -> Issue:
    """The Issue of rule ``code`` at ``path``: the rule's words for ``case`` rendered with the values
    its check found (a list reads as Python writes it, ``[2, 3]``)."""
    return issue(code, path, *RULES[code].words[case].render(**values))


def all_rules() -> list[Rule]:
    """Every rule, in code order."""
    return [RULES[c] for c in sorted(RULES)]


def rules_of(phase: Phase) -> list[Rule]:
    """The rules of one phase, in code order."""
    return [r for r in all_rules() if r.phase == phase]


def root_causes(issues: list[Issue]) -> list[Issue]:
    """The issues without those that are consequences of another in the list: a field missing that
    another issue's fix renames a key onto (a misspelt key is one fault, not a missing field and an
    unknown one)."""
    renamed = {_renamed_path(e.path, e.to) for i in issues for e in i.fix if e.op == "rename"}
    return [i for i in issues if not (i.code == "DML002" and i.path in renamed)]


def _renamed_path(path: str, to: str | None) -> str:
    head = path.rsplit(".", 1)[0] if "." in path else ""
    return f"{head}.{to}" if head else str(to)


def unreadable_issues(issues: list[Issue]) -> list[Issue]:
    """The issues that say the input is not a document at all (DML001): unreadable input, exit 2."""
    return [i for i in issues if i.code == "DML001"]


def field_description(name: str) -> str:
    """What a field is (``core.fields``), then the limits the rules put on it, each written once in
    its rule (a warning's limit says so itself)."""
    info = FIELDS.get(name)
    limits = [r.limit for r in all_rules() if r.field == name and r.limit]
    return "; ".join(([info.meaning] if info else []) + limits)
