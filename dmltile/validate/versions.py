"""DirectML versions as validation targets: ``validate(desc, directml="1.9.1")`` answers as that
DLL's CreateOperator does.

The table is ``feature_levels/directml_versions.toml``, measured with the real DLLs (see
docs/directml-conformance.md). A version implies its max feature level. Most rules hold for every
version; the ones that differ are listed per version and applied here, after the rules have run.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from ..core.enums import FeatureLevel
from ..core.layout import UINT32_WRAP, last_element_index, strides_or_packed, wrapped_buffer_tensor_size
from ..core.operator import OperatorDesc
from ..core.tables import read_table
from ..core.tensor import BufferTensorDesc
from ..errors import DmlTileError
from .levels import SupportRow, parse_feature_level, tile_support
from .report import Issue
from .rules import tensors
from .rules.compile_time import compile_refusal_issues
from .rules.levels import wrapped_size


@dataclass(frozen=True)
class DirectmlVersion:
    """One measured DirectML.dll: its version, max feature level, and how its CreateOperator differs."""

    version: str
    wheel: str
    max_feature_level: FeatureLevel
    executes_here: bool
    wraps_strided_index_32bit: bool
    wraps_strided_bytes_32bit: bool

    @property
    def label(self) -> str:
        """``DirectML 1.9.1 (max level 5.0)``."""
        return f"DirectML {self.version} (max level {self.max_feature_level.dotted})"


def _short(version: str) -> str:
    parts = version.strip().split(".")
    return ".".join(parts[:3]) if len(parts) == 4 and parts[3] == "0" else version.strip()


@functools.cache
def known_versions() -> tuple[DirectmlVersion, ...]:
    """Every measured DirectML version, newest first."""
    rows = [
        DirectmlVersion(
            version=_short(row["directml"]),
            wheel=row["wheel"],
            max_feature_level=parse_feature_level(row["max_feature_level"]),
            executes_here=bool(row.get("executes_here")),
            wraps_strided_index_32bit=bool(row.get("wraps_strided_index_32bit")),
            wraps_strided_bytes_32bit=bool(row.get("wraps_strided_bytes_32bit")),
        )
        for row in read_table("directml_versions.toml")["version"]
    ]
    return tuple(sorted(rows, key=lambda v: tuple(int(p) for p in v.version.split(".")), reverse=True))


def measured_by(row: SupportRow) -> list[str]:
    """The measured DirectML versions whose max level has ``row`` in force: the DLLs whose
    CreateOperator answers stand behind the row. Empty: the row comes from the documentation alone."""
    return [v.version for v in known_versions() if tile_support(v.max_feature_level) == row]


def parse_directml_version(value: Any) -> DirectmlVersion:
    """``"1.9.1"`` (or ``"1.9.1.0"``) -> its measured row; DmlTileError naming the known versions otherwise."""
    wanted = _short(str(value))
    for v in known_versions():
        if v.version == wanted:
            return v
    raise DmlTileError(
        f"unknown DirectML version {value!r}; measured versions are "
        + ", ".join(v.version for v in known_versions())
    )


def _last_index(t: BufferTensorDesc) -> int:
    """The last element's index through the tensor's Strides (packed when absent or of the wrong length)."""
    return last_element_index(t.sizes, strides_or_packed(t.sizes, t.strides))


def wrapped_minimum(t: BufferTensorDesc, version: DirectmlVersion) -> int:
    """DMLCalcBufferTensorSize as ``version`` computes it: the last element's index (and, for some
    versions, the byte count) in 32-bit arithmetic, rounded up to 4."""
    return wrapped_buffer_tensor_size(
        t.data_type, t.sizes, t.strides, wrap_bytes=version.wraps_strided_bytes_32bit
    )


def version_issues(desc: OperatorDesc, issues: list[Issue], version: DirectmlVersion) -> list[Issue]:
    """The issues as ``version`` judges them: where it computes a size in 32 bits and so accepts a
    buffer below the real extent (the input's index or bytes; the output's bytes only), its DML105
    error becomes DML112's warning; a data type it creates but does not compile gets DML306."""
    typed = {i.path for i in issues if i.code == "DML302"}
    refusals = [
        i for i in compile_refusal_issues(desc, version.version, version.label) if i.path not in typed
    ]
    return _wrapped_sizes(desc, issues, version) + refusals


def _wrapped_sizes(desc: OperatorDesc, issues: list[Issue], version: DirectmlVersion) -> list[Issue]:
    if not version.wraps_strided_index_32bit:
        return issues
    out = list(issues)
    for name, path, t in tensors(desc):
        if name == "OutputTensor" and not (
            version.wraps_strided_bytes_32bit and _last_index(t) < UINT32_WRAP
        ):
            continue  # measured: an output whose last index passes 2^32 is rejected by every version
        size_path = f"{path}.TotalTensorSizeInBytes"
        errors = [i for i in out if i.code == "DML105" and i.path == size_path]
        wrapped = wrapped_minimum(t, version) if errors else None
        if wrapped is not None and t.total_tensor_size_in_bytes >= wrapped:
            out = [i for i in out if i not in errors]
            out.append(
                wrapped_size(
                    name, size_path, t.total_tensor_size_in_bytes, version.label, wrapped, errors[0].hint
                )
            )
    return out
