"""Where an issue is in the file: the line and column of the member its path names.

Issue paths point into the canonical wrapped document; a file may be written bare (no ``Type``/
``Desc`` around the operator or a tensor), so the ``Desc`` steps the file leaves out are skipped.
A path that names a member the file does not have (a missing field) is placed at the object that
should hold it. JSON with comments and trailing commas (JSONC, as DxDispatch reads it) is read too.
"""

from __future__ import annotations

import re
from typing import Any

from .rules.edits import split_path

Position = tuple[int, int]  # line and column, both from 1
_SKIP = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SCALAR = re.compile(r"[^\s,\]\}/]+")


class _Scanner:
    """Records the position of every member and element of a JSON(C) text, by its path."""

    def __init__(self, text: str) -> None:
        self.text, self.i = text, 0
        self.places: dict[tuple, Position] = {}
        self.starts = [m.end() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> Position:
        line = sum(1 for s in self.starts if s <= offset)
        column = offset - (self.starts[line - 1] if line else 0)
        return line + 1, column + 1

    def skip(self) -> None:
        self.i = _SKIP.match(self.text, self.i).end()  # type: ignore[union-attr]

    def value(self, path: tuple, depth: int = 0) -> None:
        self.skip()
        if depth > 64 or self.i >= len(self.text):
            raise ValueError("too deep or cut short")
        c = self.text[self.i]
        if c == "{":
            self._members(path, depth)
        elif c == "[":
            self._elements(path, depth)
        else:
            m = (_STRING if c == '"' else _SCALAR).match(self.text, self.i)
            if m is None:
                raise ValueError("not JSON")
            self.i = m.end()

    def _members(self, path: tuple, depth: int) -> None:
        self.i += 1
        while True:
            self.skip()
            if self.text[self.i] == "}":
                self.i += 1
                return
            m = _STRING.match(self.text, self.i)
            if m is None:
                raise ValueError("a key is not a string")
            key = m.group()[1:-1]
            self.places.setdefault((*path, key), self.position(self.i))
            self.i = m.end()
            self.skip()
            self.i += 1  # the colon
            self.value((*path, key), depth + 1)
            self._comma()

    def _elements(self, path: tuple, depth: int) -> None:
        self.i += 1
        n = 0
        while True:
            self.skip()
            if self.text[self.i] == "]":
                self.i += 1
                return
            self.places.setdefault((*path, n), self.position(self.i))
            self.value((*path, n), depth + 1)
            n += 1
            self._comma()

    def _comma(self) -> None:
        self.skip()
        if self.i < len(self.text) and self.text[self.i] == ",":
            self.i += 1


def places(text: str) -> dict[tuple, Position]:
    """The position of every member (its key) and array element (its value) by path; {} for text
    that cannot be read."""
    scanner = _Scanner(text)
    try:
        scanner.value(())
    except (ValueError, IndexError):
        return {}
    scanner.places.setdefault((), (1, 1))
    return scanner.places


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
