"""Addresses of fields in a document: a sequence of keys and indices, and its text form for people.

A key is any string a JSON object can hold, so a key may itself contain dots and brackets
(``"Repeats[0]"``, ``"Desc.InputTensor"``). Fixes address fields by the sequence, never by the text;
the text writes every key that is not a plain name as a quoted JSON string (``Desc["Repeats[0]"]``),
so that even read back it names that key and no other field.
"""

from __future__ import annotations

import json
import re

Key = str | int
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_DECODER = json.JSONDecoder()
_PLAIN = re.compile(r"[A-Za-z_$][\w$]*")


def join_path(keys: tuple[Key, ...] | list[Key]) -> str:
    """``('Desc', 'Repeats', 2)`` -> ``Desc.Repeats[2]``; a key that is no plain name is quoted:
    ``('Desc', 'Repeats[0]')`` -> ``Desc["Repeats[0]"]``."""
    out = ""
    for k in keys:
        if isinstance(k, int) and not isinstance(k, bool):
            out += f"[{k}]"
        elif _NAME.match(str(k)):
            out += f".{k}" if out else str(k)
        else:
            out += f"[{json.dumps(str(k))}]"
    return out


def split_path(path: str) -> list[Key]:
    """The keys a path's text names (the inverse of ``join_path``); ValueError for text that is not
    a path. Linear in the text: each character is looked at once."""
    keys: list[Key] = []
    at, end = 0, len(path)
    while at < end:
        if path[at] == "." and keys:
            at += 1
        if path.startswith('["', at):
            try:
                key, stop = _DECODER.raw_decode(path, at + 1)
            except ValueError:
                raise ValueError(f"a quoted key in the path {path[:80]!r} is not closed") from None
            if not path.startswith("]", stop):
                raise ValueError(f"the path {path[:80]!r} has no ] after a quoted key")
            keys.append(key)
            at = stop + 1
        elif path.startswith("[", at):
            stop = path.find("]", at)
            digits = path[at + 1 : stop] if stop > 0 else ""
            if not digits.isdigit() or not digits.isascii():
                raise ValueError(f"the path {path[:80]!r} has an index that is not a whole number")
            keys.append(int(digits))
            at = stop + 1
        else:
            m = _PLAIN.match(path, at)
            if m is None:
                raise ValueError(f"the path {path[:80]!r} is not a field's path at character {at}")
            keys.append(m.group())
            at = m.end()
    return keys


__all__ = ["Key", "join_path", "split_path"]
