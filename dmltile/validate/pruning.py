"""Unknown keys past the first few hundred of an object, dropped before judging and fixing.

Each unknown key is an issue of its own, and only the first MAX_ISSUES issues of a document are
listed (the rest counted). Judging 200,000 unknown keys one by one would cost memory and time for
issues nobody sees, so each object keeps its first KEEP_UNKNOWN unknown keys and the rest are only
counted: the listed issues, their fixes and the count of the rest are what they were.
"""

from __future__ import annotations

from typing import Any

from .suggest import BUFFER_KEYS, OPERATOR_KEYS, TENSOR_KEYS, TILE_KEYS

KNOWN_KEYS = frozenset(OPERATOR_KEYS + TILE_KEYS + TENSOR_KEYS + BUFFER_KEYS)
KEEP_UNKNOWN = 400  # per object: more than the issues listed per document, so every listed one is kept
_DEEPEST = 8  # objects below this depth are kept whole: a descriptor nests 4 deep


def prune_unknown_keys(data: Any, keep: int = KEEP_UNKNOWN, depth: int = 0) -> tuple[Any, int]:
    """``data`` with at most ``keep`` keys of each object that no descriptor struct has (the first,
    in document order), and how many were dropped. Objects that lose nothing are ``data``'s own; the
    others are new, so ``data`` is never changed."""
    if not isinstance(data, dict) or depth > _DEEPEST:
        return data, 0
    out: dict = {}
    unknown = dropped = 0
    changed = False
    for key, value in data.items():
        if key in KNOWN_KEYS:
            out[key], lost = prune_unknown_keys(value, keep, depth + 1)
            dropped += lost
            changed = changed or out[key] is not value
        elif unknown < keep:
            out[key] = value
            unknown += 1
        else:
            dropped += 1
    return (out if changed or dropped else data), dropped
