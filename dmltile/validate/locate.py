"""Where an issue is in the file: the line and column of the member its path names.

Issue paths point into the canonical wrapped document; a file may be written bare (no ``Type``/
``Desc`` around the operator or a tensor), so the ``Desc`` steps the file leaves out are skipped.
A path that names a member the file does not have (a missing field) is placed at the object that
should hold it. JSON with comments and trailing commas (JSONC, as DxDispatch reads it) is read too.
The same reading (``spans``: where each value, key and member is in the text) lets ``--fix``
change only the values it fixes and keep the rest of the file as it was written.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from typing import Any

from .rules.edits import split_path

Position = tuple[int, int]  # line and column, both from 1
_SKIP = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SCALAR = re.compile(r"[^\s,\]\}/]+")
_MAX_DEPTH = 64


@dataclass(slots=True)
class Span:
    """Where one JSON value is in the text (``start``..``end``, ``size`` characters); an object's
    members or an array's elements in the order written (both None for a scalar)."""

    start: int
    size: int = 0  # not the end: a small size is a shared int, an end one object per value
    members: list[Member] | None = None
    elements: list[Span] | None = field(default=None)

    @property
    def end(self) -> int:
        return self.start + self.size


@dataclass(slots=True)
class Member(Span):
    """One ``"key": value`` of an object: its key, and where its value is (the member is its value's
    span too: one object per member, as an object may hold hundreds of thousands). ``key_gap``: how
    far before the value the key starts."""

    key: str = ""
    key_gap: int = 0

    @property
    def value(self) -> Span:
        return self

    @property
    def key_start(self) -> int:
        return self.start - self.key_gap

    def key_end(self, text: str) -> int:
        """Where the key's text ends (found again when needed, not kept for every member)."""
        return _STRING.match(text, self.key_start).end()  # type: ignore[union-attr]


class _Reader:
    """Reads a JSON(C) text into the spans of its values."""

    def __init__(self, text: str) -> None:
        self.text, self.i = text, 0

    def skip(self) -> None:
        self.i = _SKIP.match(self.text, self.i).end()  # type: ignore[union-attr]

    def value(self, depth: int = 0) -> Span:
        self.skip()
        if depth > _MAX_DEPTH or self.i >= len(self.text):
            raise ValueError("too deep or cut short")
        span = Span(self.i)
        c = self.text[self.i]
        if c == "{":
            span.members = self._members(depth)
        elif c == "[":
            span.elements = self._elements(depth)
        else:
            m = (_STRING if c == '"' else _SCALAR).match(self.text, self.i)
            if m is None:
                raise ValueError("not JSON")
            self.i = m.end()
        span.size = self.i - span.start
        return span

    def _members(self, depth: int) -> list[Member]:
        self.i += 1
        members: list[Member] = []
        while True:
            self.skip()
            if self.text[self.i] == "}":
                self.i += 1
                return members
            m = _STRING.match(self.text, self.i)
            if m is None:
                raise ValueError("a key is not a string")
            self.i = m.end()
            self.skip()
            self.i += 1  # the colon
            key = m.group()
            # a key without escapes is its own text between the quotes: no JSON decoder per key
            name = key[1:-1] if "\\" not in key else json.loads(key)
            v = self.value(depth + 1)
            members.append(Member(v.start, v.size, v.members, v.elements, name, v.start - m.start()))
            self._comma()

    def _elements(self, depth: int) -> list[Span]:
        self.i += 1
        elements: list[Span] = []
        while True:
            self.skip()
            if self.text[self.i] == "]":
                self.i += 1
                return elements
            elements.append(self.value(depth + 1))
            self._comma()

    def _comma(self) -> None:
        self.skip()
        if self.i < len(self.text) and self.text[self.i] == ",":
            self.i += 1


def spans(text: str) -> Span:
    """Where each value of a JSON(C) text is; ValueError for text that cannot be read."""
    try:
        return _Reader(text).value()
    except IndexError as e:
        raise ValueError("cut short") from e


def _walk(span: Span, path: tuple, out: dict[tuple, int]) -> None:
    for m in span.members or []:
        out.setdefault((*path, m.key), m.key_start)
        _walk(m.value, (*path, m.key), out)
    for n, e in enumerate(span.elements or []):
        out.setdefault((*path, n), e.start)
        _walk(e, (*path, n), out)


def places(text: str) -> dict[tuple, Position]:
    """The position of every member (its key) and array element (its value) by path; {} for text
    that cannot be read."""
    try:
        root = spans(text)
    except ValueError:
        return {}
    offsets: dict[tuple, int] = {(): 0}
    _walk(root, (), offsets)
    starts = [m.end() for m in re.finditer("\n", text)]
    return {path: _position(starts, at) for path, at in offsets.items()}


def _position(line_starts: list[int], offset: int) -> Position:
    line = bisect.bisect_right(line_starts, offset)
    column = offset - (line_starts[line - 1] if line else 0)
    return line + 1, column + 1


def _as_written(parts: list[Any]) -> list[tuple]:
    """The path as the file may spell it: canonical, without the operator's ``Desc``, without the
    tensor's, or without both."""
    keep_op = [True, False] if parts[:1] == ["Desc"] else [True]
    out = []
    for op in keep_op:
        p = parts if op else parts[1:]
        out.append(tuple(p))
        if len(p) >= 2 and p[1] == "Desc" and p[0] in ("InputTensor", "OutputTensor"):
            out.append(tuple(p[:1] + p[2:]))
        if len(p) >= 3 and p[0] == "Desc" and p[2] == "Desc":
            out.append(tuple(p[:2] + p[3:]))
    return out


def locate(found: dict[tuple, Position], path: str) -> Position | None:
    """The line and column of the member an issue's ``path`` names (of the nearest object that
    holds it, when the file lacks it); None when the text could not be read."""
    if not found:
        return None
    parts: list[Any] = split_path(path)
    while True:
        for candidate in _as_written(parts):
            if candidate in found:
                return found[candidate]
        if not parts:
            return found.get(())
        parts = parts[:-1]
