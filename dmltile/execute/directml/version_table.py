"""The installed DirectML versions: each DLL's FileVersion and max feature level, asked once and
kept in ``versions.json``, and the lookup of a version by DirectML or wheel version."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .installation import SETUP_SCRIPT, OracleError, Setup, find_setup, require_setup
from .pe_version import pe_file_version
from .process import runner_info


def version_key(v: str) -> tuple[int, ...]:
    """A version string as numbers, for sorting (``1.15.4`` > ``1.9.1``)."""
    return tuple(int(x) if x.isdigit() else 0 for x in v.replace("-", ".").split("."))


def directml_version(file_version: str) -> str:
    """1.15.4.0 -> 1.15.4; the 1.0.2006.1020 prerelease keeps its four parts (its build is its name)."""
    parts = str(file_version).split(".")
    return ".".join(parts[:3] if parts[3:] in ([], ["0"]) else parts)


def _version_row(setup: Setup, wheel_version: str, dll: Path) -> dict[str, Any]:
    info = runner_info(setup, dll)
    wheel_file = dll.parent / "wheel.txt"
    source = dll.parent / "source.txt"  # package==version, written by fetch_dlls.py
    wheel = source.read_text().strip() if source.is_file() else f"onnxruntime-directml=={wheel_version}"
    file_version = info.get("file_version") or pe_file_version(dll)
    return {
        "wheel": wheel,
        "wheel_version": wheel_version,
        "wheel_file": wheel_file.read_text().strip() if wheel_file.is_file() else None,
        "file_version": file_version,
        "pe_file_version": pe_file_version(dll),
        "max_feature_level": info.get("max_feature_level"),
        "data_type_support": info.get("data_type_support"),
        "options1_patched": info.get("options1_patched"),
        "adapter": info.get("adapter"),
        "error": None if info.get("kind") == "info" else info,
        "dll_mtime": dll.stat().st_mtime,
        "directml_version": directml_version(file_version) if file_version else None,
    }


def record_versions(home: Path | None = None, *, force: bool = False) -> list[dict[str, Any]]:
    """Ask each installed DLL its version and max level; write ``versions.json`` (only new DLLs are asked)."""
    setup = require_setup(home)
    old = {row["wheel_version"]: row for row in setup.versions()} if not force else {}
    rows = []
    for wheel_version, dll in setup.dlls.items():
        row = old.get(wheel_version)
        if row is None or row.get("dll_mtime") != dll.stat().st_mtime:
            row = _version_row(setup, wheel_version, dll)
        rows.append(row)
    rows.sort(key=lambda r: version_key(r["file_version"] or "0"), reverse=True)
    (setup.home / "versions.json").write_text(json.dumps(rows, indent=1) + "\n")
    return rows


def list_versions(home: Path | None = None) -> list[dict[str, Any]]:
    """Installed DirectML versions, newest first: wheel, DirectML FileVersion, max feature level, data types."""
    setup = find_setup(home)
    if setup is None:
        return []
    rows = setup.versions()
    if {r["wheel_version"] for r in rows} != set(setup.dlls):
        rows = record_versions(home)
    return rows


def resolve_version(version: str, home: Path | None = None) -> dict[str, Any]:
    """The version-table row for a DirectML version ("1.15.4", "1.15.4.0") or a wheel ("ort-1.24.4")."""
    rows = list_versions(home)
    v = str(version).strip()
    for prefix in ("onnxruntime-directml==", "ort-", "ort:"):
        if v.startswith(prefix):
            wheel = v[len(prefix) :]
            for row in rows:
                if row["wheel_version"] == wheel:
                    return row
            raise OracleError(
                f"onnxruntime-directml {wheel} is not installed; installed: "
                f"{', '.join(r['wheel_version'] for r in rows) or 'none'}"
            )
    for row in rows:  # newest wheel first
        if v in (row["directml_version"], row["file_version"]):
            return row
    raise OracleError(
        f"DirectML {v} is not installed; installed: "
        f"{', '.join(str(r['directml_version']) for r in rows) or 'none'} "
        f"(add a wheel: bash {SETUP_SCRIPT} <onnxruntime-directml version>)"
    )
