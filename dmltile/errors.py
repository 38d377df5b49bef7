"""Every exception dmltile raises. All derive from DmlTileError, a ValueError.

This module imports nothing from the rest of dmltile, so every layer may raise these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class IssueLike(Protocol):
    """What an error needs of a validation issue (``dmltile.Issue`` has these fields).

    Read-only properties, so that a frozen model such as ``Issue`` matches.
    """

    @property
    def code(self) -> str: ...

    @property
    def path(self) -> str: ...

    @property
    def message(self) -> str: ...

    @property
    def hint(self) -> str: ...


class DmlTileError(ValueError):
    """Base of every dmltile error."""


class InputError(DmlTileError):
    """The input could not be read at all (missing file, a directory, unreadable bytes)."""


class ArgumentError(DmlTileError):
    """An argument a dmltile function cannot take (the wrong type, or a value it cannot mean); the
    message names the argument and the value."""


class EnumParseError(DmlTileError):
    """A value that names no member of a DirectML enum."""

    def __init__(self, enum_name: str, value: Any, choices: list[str]):
        self.enum_name, self.value, self.choices = enum_name, value, choices
        super().__init__(f"{value!r} is not a {enum_name}; use one of {', '.join(choices)}")


class DescriptorError(DmlTileError):
    """A descriptor that cannot be parsed, or that DirectML would reject. ``.issues`` lists why."""

    def __init__(self, issues: Sequence[IssueLike], context: str = ""):
        self.issues = list(issues)
        lines = [
            f"{i.code} {i.path}: {i.message}" + (f" (fix: {i.hint})" if i.hint else "") for i in self.issues
        ]
        plural = "s" if len(self.issues) != 1 else ""
        head = context or f"descriptor is invalid ({len(self.issues)} issue{plural})"
        super().__init__(head + ("\n  " + "\n  ".join(lines) if lines else ""))


class OutputTooLargeError(DmlTileError):
    """An output larger than the memory cap (raised by compile(), before any allocation)."""


class LoweringError(DmlTileError):
    """A framework node that cannot be lowered onto DirectML."""


class FrameworkError(LoweringError):
    """The framework itself rejects the node (its own rule is in the message)."""


class UnsupportedError(DmlTileError):
    """A well-formed request that DirectML cannot express (strings, sizes past its limits, ...)."""


class UnreadableOutput(DmlTileError):
    """DxDispatch's printed output could not be read (no such resource, garbled values, truncated)."""


class WriteError(DmlTileError):
    """A file could not be written (full disk, no permission, a directory in the way), or writing it
    would replace a file the command did not create without being told to (``--force``). The file
    that was there before is left as it was."""
