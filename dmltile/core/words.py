"""Counted nouns in the messages: "1 byte", "2 bytes", written once for every layer."""

from __future__ import annotations

import itertools
from collections.abc import Iterable


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` and ``noun``, the noun in the plural (``many``, else ``noun`` + "s") unless the
    count is exactly one."""
    return f"{count} {noun if count == 1 else (many or noun + 's')}"


__all__ = ["plural"]


LISTED = 8  # items a message names before it counts the rest


def listing(items: Iterable[str], total: int, limit: int = LISTED) -> str:
    """The first ``limit`` of ``items`` (``total`` in all) joined with commas, then "and N more" for
    the rest, so that a message stays short however many there are."""
    shown = ", ".join(itertools.islice(items, limit))
    return shown + (f" and {total - limit} more" if total > limit else "")
