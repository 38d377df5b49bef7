"""Counted nouns in the messages: "1 byte", "2 bytes", written once for every layer."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` and ``noun``, the noun in the plural (``many``, else ``noun`` + "s") unless the
    count is exactly one."""
    return f"{count} {noun if count == 1 else (many or noun + 's')}"


__all__ = ["plural"]
