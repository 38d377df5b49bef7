"""Parsing of command-line values shared by several commands (lists of integers, feature levels).

Every parser raises ``typer.Exit(2)`` through ``fail`` with one line naming the option and the value.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path
from typing import Any

from ..core.enums import FeatureLevel
from ..core.tensor import UINT32_MAX
from ..validate.levels import parse_feature_level
from ..validate.source import READ_LIMITS, read_at_most
from .app import fail


def int_list(text: str, option: str, low: int = 0, high: int = UINT32_MAX) -> list[int]:
    """``"1,1,2,3"`` -> ``[1, 1, 2, 3]``; spaces are allowed, each value must be in ``low..high``."""
    parts = [p.strip() for p in text.replace(" ", ",").split(",") if p.strip()] if text else []
    if not parts:
        raise fail(f"{option} is empty; write comma-separated whole numbers, e.g. {option} 1,1,2,3")
    values = []
    for i, part in enumerate(parts):
        try:
            value = int(part, 10)
        except ValueError:
            raise fail(
                f"{option} value {part!r} (item {i}) is not a whole number; write e.g. {option} 1,1,2,3"
            ) from None
        if not low <= value <= high:
            raise fail(f"{option} value {value} (item {i}) is out of range: it must be from {low} to {high}")
        values.append(value)
    return values


def feature_level(value: Any, option: str = "--feature-level") -> FeatureLevel:
    """A feature level from its spelling, or exit 2 naming the known levels."""
    if isinstance(value, str) and value.strip().lower().startswith("0x"):
        try:  # the C value as typed on a command line, e.g. 0x3100
            value = int(value.strip(), 16)
        except ValueError:
            pass
    try:
        return parse_feature_level(value)
    except ValueError as e:
        raise fail(f"{option}: {e}") from None


def special_file_problem(path: Path) -> str | None:
    """Why ``path`` must not be read as a document (a FIFO or device would block or never end),
    or None for a regular file or a path that does not exist (reading it reports that)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
        return None
    return f"{path} is not a regular file (a pipe, socket or device); give a descriptor file"


def stdin_or(path: Path) -> Path | bytes:
    """The bytes of standard input for ``-`` (at most the size a descriptor file may have: a stream
    such as /dev/zero is refused once it passes that, exit 2), else the path."""
    if str(path) == "-":
        limit = READ_LIMITS["descriptor"]
        data = read_at_most(sys.stdin.buffer, limit + 1, 1 << 16)
        if len(data) > limit:
            raise fail(
                f"standard input is over {limit} bytes; dmltile reads descriptor files of at most {limit} bytes"
            )
        return data
    return path


def readable_file(path: Path) -> Path | bytes:
    """``path`` when it may be read as a document (``-``: standard input's bytes); exit 2 for a
    pipe, socket or device."""
    if str(path) == "-":
        return stdin_or(path)
    problem = special_file_problem(path)
    if problem:
        raise fail(problem)
    return path
