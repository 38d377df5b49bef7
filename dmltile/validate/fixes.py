"""Machine-applicable fixes: the machinery that asks each rule for its edits and checks them.

Every issue that can be fixed by editing the document carries ``fix``: a list of edits (set a
value at a path, rename a key, remove a key) into the canonical wrapped document. Each rule owns
its own edits (``Rule.fix``) and how they read in a hint (``Rule.fix_hint``); here they are
applied to the document, the result judged again, and any new error they cause settled by the
edits of its own rule (a larger output needing a larger ``TotalTensorSizeInBytes``, say), so that
applied in order (``apply_fix``) they make the issue's rule pass without breaking another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.enums import FeatureLevel
from ..errors import ArgumentError
from .levels import newest_level
from .pruning import prune_unknown_keys
from .report import Edit, Issue
from .rules import RULES, root_causes
from .rules.edits import TENSORS, apply_fix, describe, split_path, wrapped
from .rules.values import buffer, needed_bytes
from .suggest import BUFFER_KEYS, OPERATOR_KEYS, TENSOR_KEYS, TILE_KEYS

__all__ = [
    "apply_all",
    "apply_fix",
    "as_fixed",
    "attach_fixes",
    "compute_fix",
    "describe",
    "primary_edits",
    "split_path",
    "wrapped",
]

Judge = Callable[[dict, FeatureLevel], list[Issue]]
# What fixing can raise on a document too broken for a rule's edits: the issue then has no fix.
_BROKEN = (KeyError, IndexError, TypeError, ValueError, AttributeError)


def primary_edits(doc: Any, issue: Issue, level: FeatureLevel) -> list[Edit] | None:
    """The edits that make ``issue``'s rule pass at this path, before settling their effects."""
    rule = RULES.get(issue.code)
    if rule is None or rule.fix is None or not issue.loc:
        return None
    return rule.fix(doc, issue, level) or None


def _key(i: Issue) -> tuple[str, tuple]:
    return i.code, i.loc


def compute_fix(
    doc: Any,
    issue: Issue,
    level: FeatureLevel,
    before: list[Issue],
    judge: Judge,
    rounds: int = 3,
) -> tuple[list[Edit], int] | None:
    """The issue's edits plus those that settle any new error they cause, checked by re-validating
    with ``judge``; and how many of them are the issue's own (the rest settle their effects)."""
    edits = primary_edits(doc, issue, level)
    if not edits:
        return None
    own = len(edits)
    seen = {_key(i) for i in before if i.severity == "error"}
    for _ in range(rounds):
        try:
            fixed = apply_fix(doc, edits)
        except ArgumentError:  # an edit that does not fit the document: no fix
            return None
        # Judged without keys no struct has: each is an issue of its own that no edit here settles,
        # and judging them again for every fix would cost the listed issues squared.
        new = [
            i
            for i in judge(prune_unknown_keys(fixed, keep=0)[0], level)
            if i.severity == "error" and _key(i) not in seen
        ]
        if not new:
            break
        for i in new:
            more = primary_edits(fixed, i, level)
            if not more:
                return edits, own
            edits = edits + more
    return edits, own


def _with_fix(issue: Issue, edits: list[Edit], own: int, final: Any = None) -> Issue:
    """The issue carrying its fix, its hint derived from the fix's edits: the rule's ``fix_hint``
    renders them (with what only the rule knows, such as a later level that needs no edit), else
    they are said as they are, each field named with its tensor. Its byte sizes are those ``final``
    (the document as the whole report leaves it) needs, and the hint says so where that differs
    from what the issue's own edits alone would set."""
    rule = RULES[issue.code]
    alone, edits = edits, _sized_for(final, edits)
    hint = rule.fix_hint(issue, edits, own) if rule.fix_hint else describe(edits[:own])
    if edits[:own] != alone[:own]:
        hint += " (the size the document needs once every fix of this report is applied)"
    if len(edits) > own:  # what else the one fix changes, so the hint is the whole fix
        hint += f"; then {describe(edits[own:])}"
    return issue.model_copy(
        update={"fix": tuple(edits), "hint": hint, "fix_applicability": rule.fix_applicability}
    )


def _objects(doc: dict) -> list[tuple[tuple[str, ...], dict, tuple[str, ...]]]:
    """(keys, object, the keys it may hold) of each object of the canonical wrapped document."""
    found: list[tuple[tuple[str, ...], dict, tuple[str, ...]]] = [((), doc, OPERATOR_KEYS)]
    desc = doc.get("Desc")
    if isinstance(desc, dict):
        found.append((("Desc",), desc, TILE_KEYS))
        for name in TENSORS:
            tensor = desc.get(name)
            if isinstance(tensor, dict):
                found.append((("Desc", name), tensor, TENSOR_KEYS))
                if isinstance(tensor.get("Desc"), dict):
                    found.append((("Desc", name, "Desc"), tensor["Desc"], BUFFER_KEYS))
    return found


def without_unlisted_keys(doc: dict, issues: list[Issue]) -> dict:
    """``doc`` without the unknown keys no listed issue names. Each unknown key is its own issue, its
    fix touches nothing else, and re-judging a fix must not cost a pass over 200,000 keys nobody sees:
    fixing work follows the issues listed, not the document's size."""
    listed = {i.loc for i in issues}
    for where, obj, allowed in _objects(doc):
        for key in [k for k in obj if k not in allowed and (*where, k) not in listed]:
            del obj[key]
    return doc


def _is_byte_size(edit: Edit) -> bool:
    return edit.op == "set" and edit.path.endswith(".TotalTensorSizeInBytes")


def _all_but_byte_sizes(doc: dict, fixes: list[list[Edit]]) -> Any:
    """The document with every edit of the report applied in order (as ``apply_all`` applies them)
    but the byte sizes, which follow from the rest; None when they cannot all be applied."""
    edits: list[Edit] = []
    for fix in fixes:
        edits += [e for e in fix if e not in edits and not _is_byte_size(e)]
    try:
        return apply_fix(doc, edits)
    except (*_BROKEN, ArgumentError):
        return None


def _sized_for(final: Any, edits: list[Edit]) -> list[Edit]:
    """Each byte-size edit raised to what its tensor needs in ``final`` (the document as the whole
    report leaves it): measured on one fix's own document, a size misses the Sizes and types the
    other fixes change, and whichever byte-size edit is applied last would be too small."""
    if final is None:
        return edits
    out = []
    for e in edits:
        need = needed_bytes(final, str(split_path(e.path)[1])) if _is_byte_size(e) else None
        if need is not None and isinstance(e.value, int) and need > e.value:
            e = e.model_copy(update={"value": need})
        out.append(e)
    return out


def attach_fixes(
    data: Any, issues: list[Issue], level: FeatureLevel | None, judge: Judge, known: list[Issue] | None = None
) -> list[Issue]:
    """The issues that are no consequence of another (``root_causes``), each with its computed
    ``fix`` and a hint that says it. ``known``: issues reported beside these (found on the document
    as their fixes leave it), which a fix leaves to their own rules instead of settling them."""
    if not isinstance(data, dict) or not issues:
        return root_causes(issues)
    doc = without_unlisted_keys(wrapped(prune_unknown_keys(data)[0]), issues)
    level = level or newest_level()
    before = issues + (known or [])
    computed = []
    for i in issues:
        try:
            computed.append(compute_fix(doc, i, level, before, judge))
        except _BROKEN:
            computed.append(None)
    final = _all_but_byte_sizes(doc, [found[0] for found in computed if found])
    out = [_with_fix(i, *found, final) if found else i for i, found in zip(issues, computed, strict=True)]
    return _sized_together(doc, root_causes(out))


def _sized_together(doc: dict, issues: list[Issue]) -> list[Issue]:
    """The issues, the last fix that changes a tensor also giving it the byte size the whole report
    leaves it needing, where no fix sets one: two fixes can each fit the written size alone and
    not together (a type made wider by one, Sizes made larger by another)."""
    final = _all_but_byte_sizes(doc, [list(i.fix) for i in issues if i.fix])
    if final is None:
        return issues
    sized = {e.keys[1] for i in issues for e in i.fix if _is_byte_size(e)}
    for tensor in TENSORS:
        written = buffer(final, tensor).get("TotalTensorSizeInBytes")
        need, before = needed_bytes(final, tensor), needed_bytes(doc, tensor)
        if tensor in sized or not isinstance(written, int) or need is None or need <= written:
            continue
        if before is None or before > written:
            continue  # too small as written: DML105's issue, with its own fix
        last = max((n for n, i in enumerate(issues) if any(_touches(e, tensor) for e in i.fix)), default=None)
        if last is None:
            continue
        edit = Edit(op="set", path=f"Desc.{tensor}.Desc.TotalTensorSizeInBytes", value=need)
        issue = issues[last]
        issues[last] = issue.model_copy(
            update={"fix": (*issue.fix, edit), "hint": f"{issue.hint}; then {describe([edit])}"}
        )
    return issues


_SIZED_BY = ("Sizes", "Strides", "DataType")  # what a tensor's byte size follows from


def _touches(edit: Edit, tensor: str) -> bool:
    """Whether the edit changes what the tensor's byte size follows from, or the whole tensor."""
    keys = edit.keys
    return len(keys) > 1 and keys[1] == tensor and (len(keys) <= 3 or keys[3] in _SIZED_BY)


def as_fixed(data: Any, issues: list[Issue], level: FeatureLevel) -> dict | None:
    """``data`` (wrapped) as the fixes of ``issues`` would leave it, each fix the edits of the issue's
    own rule; None when one of them has no fix (what the document means there is unknown). A
    missing field that another issue's fix renames a key onto needs no edit of its own."""
    if not isinstance(data, dict):
        return None
    doc = without_unlisted_keys(wrapped(data), issues)
    try:
        with_edits = [i.model_copy(update={"fix": tuple(primary_edits(doc, i, level) or ())}) for i in issues]
        causes = root_causes(with_edits)
        return None if any(not i.fix for i in causes) else apply_all(doc, causes)
    except _BROKEN:
        return None


def apply_all(document: Any, issues: list[Issue]) -> dict:
    """A copy of ``document`` (wrapped) with the fixes of all ``issues`` applied together, in order;
    an edit that several fixes share (the output size two rules ask for) is applied once."""
    edits: list[Edit] = []
    for i in issues:
        edits += [e for e in i.fix if e not in edits]
    return apply_fix(document, edits)
