"""A fixed document written back into the user's text: only the values that changed are rewritten.

``validate --fix`` must not reformat the user's file. The fixed document is put back in the shape
the file was written in (a bare operator or tensor stays bare), compared with what the file holds,
and each difference is spliced into the text at the place the value was read from: a changed value
replaces its own characters, a renamed key only its name, a removed member goes with its comma, an
added member is placed beside the members that come before it in DirectML's field order, written
in the style of its neighbours. Key order, comments, spacing and everything unchanged stay as they
were; the result is read back and must be the fixed document, or ``ValueError`` says it is not.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..core.layout import OPERATOR_TYPE_TILE, TENSOR_TYPE_BUFFER, wrap_document, wrap_operator, wrap_tensor
from .dxdispatch import DXDISPATCH_KEYS, canonical_document
from .locate import Member, Span, spans
from .rules.edits import TENSORS
from .source import loads, strip_jsonc
from .suggest import BUFFER_KEYS, OPERATOR_KEYS, TILE_KEYS

__all__ = ["dispatchable_with", "keep_layout", "splice"]

# Where an added member goes: after the members that come before it in this order.
_FIELD_ORDER = {key: n for n, key in enumerate(dict.fromkeys(OPERATOR_KEYS + TILE_KEYS + BUFFER_KEYS))}
Change = tuple[int, int, str]  # replace text[start:end] with this


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values (``1``, ``1.0`` and ``true`` are three different texts), compared in
    place: no text of a whole document is made to compare it."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return repr(a) == repr(b) if isinstance(a, float) else bool(a == b)  # -0.0 is not 0.0


def _unwrapped_tensor(tensor: Any, written: Any) -> Any:
    """A canonical ``{"Type", "Desc"}`` tensor as a bare one, keeping ``Type`` where the file wrote it
    or it is not the default."""
    if not (
        isinstance(tensor, dict) and set(tensor) == {"Type", "Desc"} and isinstance(tensor["Desc"], dict)
    ):
        return tensor
    keep_type = (isinstance(written, dict) and "Type" in written) or tensor["Type"] != TENSOR_TYPE_BUFFER
    return {**({"Type": tensor["Type"]} if keep_type else {}), **tensor["Desc"]}


def _bare(value: Any, wrap: Any) -> bool:
    return isinstance(value, dict) and wrap(value) is not value


def in_file_shape(original: Any, fixed: Any) -> Any:
    """``fixed`` (canonical, wrapped) in the shape ``original`` was written in: the operator bare
    if it was, each tensor bare if it was (a tensor the file lacked, bare if any was)."""
    if (
        not isinstance(original, dict)
        or not isinstance(fixed, dict)
        or not isinstance(fixed.get("Desc"), dict)
    ):
        return fixed
    bare_operator = _bare(original, wrap_operator)
    written = original if bare_operator else original.get("Desc")
    written = written if isinstance(written, dict) else {}
    any_bare = bare_operator or any(_bare(v, wrap_tensor) for v in written.values())
    desc = fixed["Desc"]
    bare = {  # a tensor still missing after the fix (no value to derive it from) stays out
        name: _unwrapped_tensor(desc[name], written.get(name))
        for name in TENSORS
        if name in desc
        and (name in written and _bare(written[name], wrap_tensor) or (name not in written and any_bare))
    }
    if bare:  # copied only when a tensor changes: the desc may hold a great many unknown keys
        desc = {**desc, **bare}
    if not bare_operator:
        return {**fixed, "Desc": desc}
    keep_type = "Type" in original or fixed.get("Type") != OPERATOR_TYPE_TILE
    return {**({"Type": fixed.get("Type")} if keep_type else {}), **desc}


def _dxdispatch_defaults(written: Any, buffer: Any) -> Any:
    """A buffer desc with DxDispatch's spellings of a default where the file used them: ``[]`` for
    packed Strides, 0 for a computed size, ``[]`` for no flags (the canonical form reads them as
    null, absent and NONE)."""
    if not isinstance(written, dict) or not isinstance(buffer, dict):
        return buffer
    out = dict(buffer)
    if written.get("Strides") == [] and "Strides" in out and out["Strides"] is None:
        out["Strides"] = []
    if written.get("TotalTensorSizeInBytes") == 0 and "TotalTensorSizeInBytes" not in out:
        out["TotalTensorSizeInBytes"] = 0
    if written.get("Flags") == [] and out.get("Flags") == "DML_TENSOR_FLAG_NONE":
        out["Flags"] = []
    return out


def dispatchable_with(raw: dict, fixed: dict) -> dict:
    """A DxDispatch Tile dispatchable holding ``fixed`` (its canonical document, fixed), written as
    ``raw`` was: its ``desc`` key (or the fields inline), bare tensors, DxDispatch's defaults.
    ValueError when DxDispatch's reading of the result would not be ``fixed``."""
    key = next((k for k in ("desc", "Desc") if k in raw), None)
    beside = {k: v for k, v in raw.items() if k in ("type", "Type", *DXDISPATCH_KEYS)}
    written = raw[key] if key else {k: v for k, v in raw.items() if k not in beside}
    desc = in_file_shape(written, {"Type": OPERATOR_TYPE_TILE, "Desc": fixed.get("Desc")})
    if not isinstance(desc, dict) or not isinstance(written, dict):
        raise ValueError("the dispatchable's desc is not an object")
    for name in TENSORS:
        tensor, was = desc.get(name), written.get(name)
        if isinstance(tensor, dict) and isinstance(was, dict):
            wrapped_tensor = "Desc" in tensor and isinstance(tensor["Desc"], dict)
            inner = _dxdispatch_defaults(was.get("Desc", was), tensor["Desc"] if wrapped_tensor else tensor)
            desc[name] = {**tensor, "Desc": inner} if wrapped_tensor else inner
    out = {**raw, key: desc} if key else {**beside, **desc}
    if not _same(canonical_document(out), fixed):
        raise ValueError("the fixed dispatchable does not read back as the fixed document")
    return out


class _Splicer:
    """The changes that turn the text of one JSON value into another value's text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.changes: list[Change] = []
        indents = [len(m.group(1)) for m in re.finditer(r"\n([ \t]+)\S", text)]
        self.unit = min(indents, default=2) or 2

    def line_indent(self, at: int) -> str:
        start = self.text.rfind("\n", 0, at) + 1
        return re.match(r"[ \t]*", self.text[start:at]).group()  # type: ignore[union-attr]

    def render(self, value: Any, at: int, multiline: bool) -> str:
        """``value`` as JSON text placed at offset ``at``: indented as the line it is on, or on one line."""
        if not multiline or not isinstance(value, (dict, list)) or not value:
            return json.dumps(value, separators=(", ", ": "))
        return json.dumps(value, indent=self.unit).replace("\n", "\n" + self.line_indent(at))

    def value(self, span: Span, old: Any, new: Any) -> None:
        if _same(old, new):
            return
        if isinstance(old, dict) and isinstance(new, dict) and span.members is not None:
            self.members(span, old, new)
        elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new) and span.elements:
            for element, a, b in zip(span.elements, old, new, strict=True):
                self.value(element, a, b)
        else:
            self.changes.append((span.start, span.end, self.render(new, span.start, self.multiline(span))))

    def multiline(self, span: Span) -> bool:
        return self.text.find("\n", span.start, span.end) != -1

    def separator(self, member: Member) -> str:
        """What stands between two members where ``member`` is: a new line and its indent, or a space."""
        start = self.text.rfind("\n", 0, member.key_start) + 1
        own_line = not self.text[start : member.key_start].strip(" \t")
        return "\n" + self.line_indent(member.key_start) if own_line and start else " "

    def members(self, span: Span, old: dict, new: dict) -> None:
        members = span.members or []
        names = _renames([m for m in members if m.key not in new], [k for k in new if k not in old], old, new)
        is_kept = [m.key in new or m.key in names for m in members]
        kept = [m for m, k in zip(members, is_kept, strict=True) if k]
        if not kept:
            self.changes.append((span.start, span.end, self.render(new, span.start, self.multiline(span))))
            return
        for m in kept:
            key = names.get(m.key, m.key)
            if key != m.key:
                self.changes.append((m.key_start, m.key_end(self.text), json.dumps(key)))
            self.value(m.value, old[m.key], new[key])
        self.removals(members, is_kept)
        added = [k for k in new if k not in old and k not in names.values()]
        if added:
            self.insertions(kept, {names.get(m.key, m.key): m for m in kept}, added, new)

    def removals(self, members: list[Member], is_kept: list[bool]) -> None:
        """Each member not kept goes from its key to the next member's; a run at the end goes from the
        last kept value's end, taking the comma before it."""
        last_kept = len(is_kept) - 1 - is_kept[::-1].index(True)
        for n in range(last_kept):
            if not is_kept[n]:
                self.changes.append((members[n].key_start, members[n + 1].key_start, ""))
        if last_kept < len(members) - 1:
            self.changes.append((members[last_kept].value.end, members[-1].value.end, ""))

    def insertions(self, kept: list[Member], by_key: dict[str, Member], added: list[str], new: dict) -> None:
        """Each added member after the last one written that comes before it in DirectML's field
        order (before the first member when none does), on its own line if its neighbours are."""
        multiline = any(self.multiline(m.value) for m in kept)
        for key in sorted(added, key=lambda k: _FIELD_ORDER.get(k, len(_FIELD_ORDER))):
            rank = _FIELD_ORDER.get(key, len(_FIELD_ORDER))
            before = [m for k, m in by_key.items() if _FIELD_ORDER.get(k, len(_FIELD_ORDER)) <= rank]
            if before:
                anchor = max(before, key=lambda m: m.key_start)
                at, sep = anchor.value.end, self.separator(anchor)
                text = f",{sep}{json.dumps(key)}: {self.render(new[key], anchor.key_start, multiline)}"
            else:
                first = kept[0]
                at, sep = first.key_start, self.separator(first)
                text = f"{json.dumps(key)}: {self.render(new[key], first.key_start, multiline)},{sep}"
            self.changes.append((at, at, text))

    def result(self) -> str:
        """The text with every change made, in one pass from the start (an insertion before a
        removal that starts where it is, insertions at one place in the order made): the text
        between changes is copied once, however many changes there are."""
        pieces, at = [], 0
        for start, end, new in sorted(self.changes, key=lambda c: (c[0], c[1])):
            pieces += [self.text[at:start], new]
            at = max(at, end)
        return "".join(pieces) + self.text[at:]


def _renames(gone: list[Member], added: list[str], old: dict, new: dict) -> dict[str, str]:
    """Old key -> new key for members that were renamed: the same value under a new key, else (a
    value also changed inside) an object or array under a new key."""
    names: dict[str, str] = {}
    for same_value in (True, False):
        for m in gone:
            if m.key in names:
                continue
            for k in added:
                taken = k in names.values()
                alike = _same(old[m.key], new[k]) if same_value else _containers(old[m.key], new[k])
                if not taken and alike:
                    names[m.key] = k
                    break
    return names


def _containers(a: Any, b: Any) -> bool:
    return isinstance(a, (dict, list)) and type(a) is type(b)


def splice(text: str, new: Any, old: Any = None) -> str:
    """``text`` (JSON or JSONC) holding ``new`` instead, changed only where the values differ;
    ``old``: what ``text`` reads as, when the caller has read it already."""
    old = loads(strip_jsonc(text)) if old is None else old
    splicer = _Splicer(text)
    splicer.value(spans(text), old, new)
    return splicer.result()


def keep_layout(text: str, fixed: Any) -> str:
    """The file's ``text`` holding the ``fixed`` document (canonical, wrapped), in the file's shape
    and layout; ValueError when the text cannot be read or the result would not be ``fixed``."""
    original = loads(strip_jsonc(text))
    out = splice(text, in_file_shape(original, fixed), original)
    del original  # the text read back below is the only document beside ``fixed`` from here
    if not _same(wrap_document(loads(strip_jsonc(out)), TENSORS, deep_copy=False), fixed):
        raise ValueError("the fixed text does not read back as the fixed document")
    return out
