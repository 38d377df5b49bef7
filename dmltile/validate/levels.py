"""The feature-level tables: which levels exist, what Tile supports at each, and the default level.

The tables are TOML files of ``feature_levels/`` (``core.tables`` reads them).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from ..core.enums import DataType, FeatureLevel
from ..core.tables import read_table
from ..errors import DmlTileError, EnumParseError, UnsupportedError

TENSORS = ("InputTensor", "OutputTensor")


@dataclass(frozen=True)
class TensorSupport:
    """What one tensor of the operator accepts at one feature level."""

    dimension_counts: frozenset[int]
    data_types: tuple[DataType, ...]

    def dims_text(self) -> str:
        """``4`` or ``1 to 8``."""
        lo, hi = min(self.dimension_counts), max(self.dimension_counts)
        return str(lo) if lo == hi else f"{lo} to {hi}"


@dataclass(frozen=True)
class SupportRow:
    """One row of the DirectML page's Tensor support section."""

    feature_level: FeatureLevel
    source: str
    tensors: dict[str, TensorSupport]


@functools.cache
def known_levels() -> tuple[FeatureLevel, ...]:
    """Every feature level in ``levels.toml`` (the FeatureLevel enum is built from it), lowest first."""
    return tuple(sorted(FeatureLevel))


@functools.cache
def tile_rows() -> tuple[SupportRow, ...]:
    """The Tile support rows, lowest level first."""
    rows = []
    for row in read_table("tile.toml")["row"]:
        tensors = {
            t: TensorSupport(
                frozenset(row[t]["dimension_counts"]), tuple(DataType.parse(d) for d in row[t]["data_types"])
            )
            for t in TENSORS
        }
        rows.append(SupportRow(FeatureLevel.parse(row["feature_level"]), row["source"], tensors))
    return tuple(sorted(rows, key=lambda r: r.feature_level))


def tile_support(level: FeatureLevel) -> SupportRow | None:
    """The row in force at ``level`` (the nearest row at or below it), or None before Tile existed."""
    in_force = [row for row in tile_rows() if row.feature_level <= level]
    return in_force[-1] if in_force else None


def tile_row(level: FeatureLevel) -> SupportRow:
    """The row in force at ``level``, for callers that know Tile exists there (it does at every
    known level); UnsupportedError before Tile existed."""
    row = tile_support(level)
    if row is None:
        raise UnsupportedError(f"{level.c_name} has no Tile operator")
    return row


def newest_level() -> FeatureLevel:
    """The newest known feature level: the default wherever a level is optional."""
    return known_levels()[-1]


def levels_text() -> str:
    """``1.0 to 6.4``: the range of known levels, for messages."""
    return f"{known_levels()[0].dotted} to {newest_level().dotted}"


def parse_feature_level(value: Any) -> FeatureLevel:
    """``"3.1"``, ``"3_1"``, ``"DML_FEATURE_LEVEL_3_1"``, ``0x3100`` or a FeatureLevel -> FeatureLevel.

    Raises DmlTileError (a ValueError) naming the known levels for anything else.
    """
    try:
        level = FeatureLevel.parse(value)
    except EnumParseError:
        level = None
    if level is None or level not in known_levels():
        shown = hex(value) if isinstance(value, int) and not isinstance(value, bool) else repr(value)
        raise DmlTileError(
            f"unknown feature level {shown}; known levels are "
            + ", ".join(lv.dotted for lv in known_levels())
        )
    return level


DEFAULT_FEATURE_LEVEL: str = newest_level().dotted  # the one default level, named once
