"""The exceptions dmltile raises. All derive from DmlTileError, a ValueError."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from .validation import Issue


class DmlTileError(ValueError):
    """Base of every dmltile error."""


class DescriptorError(DmlTileError):
    """A descriptor that cannot be parsed, or that DirectML would reject. ``.issues`` lists why."""

    def __init__(self, issues: Sequence["Issue"], context: str = ""):
        self.issues = list(issues)
        lines = [f"{i.code} {i.path}: {i.message}" + (f" (fix: {i.hint})" if i.hint else "") for i in self.issues]
        head = context or f"descriptor is invalid ({len(self.issues)} issue{'s' if len(self.issues) != 1 else ''})"
        super().__init__(head + ("\n  " + "\n  ".join(lines) if lines else ""))


class LoweringError(DmlTileError):
    """A framework node that cannot be lowered onto DirectML."""


class FrameworkError(LoweringError):
    """The framework itself rejects the node (its own rule is in the message)."""


class UnsupportedError(DmlTileError):
    """A well-formed request that DirectML cannot express (strings, sizes past its limits, ...)."""
