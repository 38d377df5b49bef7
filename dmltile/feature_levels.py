"""The feature-level tables: which levels exist and what Tile supports at each.

The tables are TOML files in ``feature_levels/`` (shipped inside the wheel as
``dmltile/feature_levels``); this module only reads them.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from pathlib import Path

from .enums import DataType, FeatureLevel

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TENSORS = ("InputTensor", "OutputTensor")


def tables_dir() -> Path:
    """Where the TOML tables are: inside the installed package, or at the source tree's top."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "feature_levels", here.parent / "feature_levels"):
        if (candidate / "tile.toml").is_file():
            return candidate
    raise FileNotFoundError(f"feature-level tables not found next to {here}")


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


def _read(name: str) -> dict:
    with open(tables_dir() / name, "rb") as f:
        return tomllib.load(f)


@functools.cache
def known_levels() -> tuple[FeatureLevel, ...]:
    """Every feature level in ``levels.toml``, lowest first."""
    levels = [FeatureLevel.parse(row["name"]) for row in _read("levels.toml")["level"]]
    for level, row in zip(levels, _read("levels.toml")["level"]):
        if level.value != row["value"]:
            raise ValueError(f"levels.toml: {row['name']} has value {row['value']:#x}, enum says {level.value:#x}")
    return tuple(sorted(levels))


@functools.cache
def tile_rows() -> tuple[SupportRow, ...]:
    """The Tile support rows, lowest level first."""
    rows = []
    for row in _read("tile.toml")["row"]:
        tensors = {
            t: TensorSupport(frozenset(row[t]["dimension_counts"]), tuple(DataType.parse(d) for d in row[t]["data_types"]))
            for t in TENSORS
        }
        rows.append(SupportRow(FeatureLevel.parse(row["feature_level"]), row["source"], tensors))
    return tuple(sorted(rows, key=lambda r: r.feature_level))


def tile_support(level: FeatureLevel) -> SupportRow | None:
    """The row in force at ``level`` (the nearest row at or below it), or None before Tile existed."""
    in_force = [row for row in tile_rows() if row.feature_level <= level]
    return in_force[-1] if in_force else None
