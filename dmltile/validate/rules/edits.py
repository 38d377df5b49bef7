"""Edits into a document: the paths issues point at, applying a fix's edits, and saying them in words.

Every path points into the canonical wrapped document (``Type``/``Desc`` around the operator and
each tensor); ``wrapped`` gives a document that shape, so edits can be applied to any document.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ...core.layout import wrap_document
from ...errors import ArgumentError
from ..paths import join_path, split_path
from ..report import Edit, Issue

__all__ = ["TENSORS", "apply_fix", "describe", "join_path", "split_path", "wrapped"]

TENSORS = ("InputTensor", "OutputTensor")


def wrapped(document: Any) -> Any:
    """The document in the canonical wrapped shape (a copy): the shape that issue paths point into."""
    return wrap_document(document, TENSORS)


def _apply_one(doc: Any, e: Edit) -> None:
    """Follow the edit's keys (never its text) to the field, and change that field alone."""
    if not e.keys:
        raise KeyError("an edit must name a field; the document itself cannot be set")
    parent: Any = doc
    for p in e.keys[:-1]:
        parent = parent[p]
    last = e.keys[-1]
    if e.op == "set":
        if isinstance(parent, list) and isinstance(last, int) and last == len(parent):
            parent.append(copy.deepcopy(e.value))
        else:
            parent[last] = copy.deepcopy(e.value)
    elif e.op == "remove":
        del parent[last]
    elif e.op == "rename":
        parent[e.to] = parent.pop(last)


def apply_fix(document: Any, fix: Issue | list[Edit] | tuple[Edit, ...]) -> dict:
    """A copy of ``document`` (wrapped) with the issue's fix (or the edits) applied in order.
    ArgumentError when ``document`` is no JSON object, ``fix`` no Issue or sequence of Edits, or an
    edit names a field the document does not have the parents of."""
    if not isinstance(document, dict):
        raise ArgumentError(f"document must be a descriptor as a dict, not {type(document).__name__}")
    edits = fix.fix if isinstance(fix, Issue) else fix
    if not isinstance(edits, (list, tuple)) or not all(isinstance(e, Edit) for e in edits):
        raise ArgumentError(f"fix must be an Issue or a list of Edits, not {type(fix).__name__}")
    doc = wrapped(document)
    for e in edits:
        try:
            _apply_one(doc, e)
        except (KeyError, IndexError, TypeError, AttributeError):
            raise ArgumentError(
                f"the edit {e.op} {e.path or '<document>'} does not fit the document"
            ) from None
        if e.op == "rename":  # a key renamed to a tensor's name makes it a tensor, wrapped as one
            doc = wrapped(doc)
    return doc


def describe(edits: list[Edit]) -> str:
    """The edits as a sentence, for a hint."""
    words = []
    for e in edits:
        name = e.keys[-1] if e.keys else e.path
        if e.op == "set":
            words.append(f"set {name} to {json.dumps(e.value)}")
        elif e.op == "rename":
            words.append(f'rename "{name}" to "{e.to}"')
        else:
            words.append(f'remove "{name}"')
    return "; ".join(words)
