"""Edits into a document: the paths issues point at, applying a fix's edits, and saying them in words.

Every path points into the canonical wrapped document (``Type``/``Desc`` around the operator and
each tensor); ``wrapped`` gives a document that shape, so edits can be applied to any document.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from ...core.layout import wrap_document
from ..report import Edit, Issue

TENSORS = ("InputTensor", "OutputTensor")
_TOKEN = re.compile(r"([A-Za-z_$][\w$]*)|\[(\d+)\]")


def split_path(path: str) -> list[str | int]:
    """``Desc.InputTensor.Desc.Sizes[2]`` -> ``['Desc', 'InputTensor', 'Desc', 'Sizes', 2]``."""
    return [name if name else int(index) for name, index in _TOKEN.findall(path)]


def join_path(parts: list[str | int]) -> str:
    """``['Desc', 'Repeats', 2]`` -> ``Desc.Repeats[2]`` (the inverse of ``split_path``)."""
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def wrapped(document: Any) -> Any:
    """The document in the canonical wrapped shape (a copy): the shape that issue paths point into."""
    return wrap_document(document, TENSORS)


def _apply_one(doc: Any, e: Edit) -> None:
    parts = split_path(e.path)
    parent: Any = doc
    for p in parts[:-1]:
        parent = parent[p]
    last = parts[-1]
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
    """A copy of ``document`` (wrapped) with the issue's fix (or the edits) applied in order."""
    edits = fix.fix if isinstance(fix, Issue) else fix
    doc = wrapped(document)
    for e in edits:
        _apply_one(doc, e)
        if e.op == "rename":  # a key renamed to a tensor's name makes it a tensor, wrapped as one
            doc = wrapped(doc)
    return doc


def field_name(path: str) -> str:
    """A path as people name the field: the tensor it belongs to, without the ``Type``/``Desc``
    wrappers (``Desc.InputTensor.Desc.Sizes[2]`` -> ``InputTensor.Sizes[2]``). Every path a hint
    or a page shows is written by this one function."""
    return join_path([p for p in split_path(path) if p != "Desc"]) or path


def describe(edits: list[Edit] | tuple[Edit, ...]) -> str:
    """The edits as a sentence, for a hint: each field named with its tensor, so that edits of two
    tensors' same field read as two fields."""
    words = []
    for e in edits:
        name = field_name(e.path)
        if e.op == "set":
            words.append(f"set {name} to {json.dumps(e.value)}")
        elif e.op == "rename":
            words.append(f'rename "{name}" to "{e.to}"')
        else:
            words.append(f'remove "{name}"')
    return "; ".join(words)
