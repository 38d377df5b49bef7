"""The one way in: a source is read and classified once, into the documents to judge.

A source (a path, text, bytes, a dict or an OperatorDesc) is read once (``source.read_source``)
and classified: a descriptor (or JSON that is not one, or text that is not JSON) is one document;
a DxDispatch model or dispatchable is one document per Tile dispatchable, labelled with its name,
in its canonical form. Parsing (``document.parse_data``) and judging then work on those documents
and never read the source again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .dxdispatch import model_of, split_model
from .report import Issue
from .source import Source, looks_like_dxdispatch, read_source


@dataclass(frozen=True)
class Document:
    """One document to judge. ``data`` is what the parser reads (the canonical dict of a
    dispatchable, or whatever the source held); when reading already failed, ``issues`` say why
    and ``data`` is None."""

    data: Any
    name: str | None = None  # the dispatchable's name in a DxDispatch model
    issues: list[Issue] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)  # added to every report of the document


@dataclass(frozen=True)
class Reading:
    """What a source holds: the documents to judge; the one document where a single descriptor is
    needed (for a model with several Tile dispatchables, or none, one holding the issue that says
    so); and, for a DxDispatch model, the dispatchables dmltile does not cover (name -> type)."""

    documents: list[Document]
    single: Document
    not_covered: dict[str, str] = field(default_factory=dict)
    is_dxdispatch: bool = False


def read_document(source: Source) -> Reading:
    """Read ``source`` once and classify it (raises InputError only when it cannot be read at all)."""
    data = read_source(source)
    if not looks_like_dxdispatch(data):
        document = Document(data)
        return Reading([document], document)
    model, issues = model_of(data)
    if model is None:
        failed = Document(None, issues=issues)
        return Reading([failed], failed, is_dxdispatch=True)
    parts = split_model(model)
    documents = [
        Document(parts.tiles.get(name), name, parts.broken.get(name, []), parts.warnings.get(name, []))
        for name in parts.order
        if name in parts.tiles or name in parts.broken
    ]
    name, issues = parts.single()
    failed = Document(None, issues=issues)
    single = next((d for d in documents if d.name == name), failed)
    return Reading(documents or [failed], single, parts.not_covered, True)
