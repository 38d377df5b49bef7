"""Marker registration and the agreement summary for the DirectML golden tests."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest


def pytest_configure(config: Any) -> None:
    """Register the ``directml_live`` marker (runs the real DirectML.dll: Wine here, natively on Windows)."""
    config.addinivalue_line(
        "markers",
        "directml_live: runs the real DirectML.dll through dmltile/execute/directml (make directml)",
    )


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print dmltile's agreement with each DirectML version, by kind of case."""
    module = sys.modules.get("tests.directml.test_golden")
    table = getattr(module, "SUMMARY", None) if module else None
    if not table:
        return
    write = terminalreporter.write_line
    terminalreporter.section("dmltile vs DirectML CreateOperator (golden data)")
    for version, kinds in sorted(table.items(), key=lambda kv: tuple(int(x) for x in kv[0].split("."))):
        agree = sum(a for a, _ in kinds.values())
        total = sum(n for _, n in kinds.values())
        detail = ", ".join(f"{k} {a}/{n}" for k, (a, n) in kinds.items() if a != n)
        write(f"DirectML {version:8} {agree}/{total} agree" + (f"  (differ: {detail})" if detail else ""))


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """Live DirectML tests run only when asked: ``-m directml_live`` or ``DMLTILE_DIRECTML_LIVE=1``."""
    if (
        "directml_live" in (config.getoption("markexpr") or "")
        or os.environ.get("DMLTILE_DIRECTML_LIVE") == "1"
    ):
        return
    skip = pytest.mark.skip(
        reason="live DirectML comparison: run `make directml-live` (or pytest -m directml_live)"
    )
    for item in items:
        if "directml_live" in item.keywords:
            item.add_marker(skip)
