"""Marker registration and the agreement summary for the DirectML golden tests."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.directml.test_golden import AGREEMENT

# Per DirectML version, per kind of case: (cases agreeing, cases), from the tests' reports.
SUMMARY: dict[str, dict[str, tuple[int, int]]] = {}


def pytest_configure(config: Any) -> None:
    """Register the ``directml_live`` marker (runs the real DirectML.dll: Wine here, natively on Windows)."""
    config.addinivalue_line(
        "markers",
        "directml_live: runs the real DirectML.dll through dmltile/execute/directml (make directml)",
    )


def pytest_runtest_logreport(report: Any) -> None:
    """Gather the agreement each golden test reports (here or in a worker process)."""
    for name, value in report.user_properties if report.when == "call" else ():
        if name == AGREEMENT:
            version, kind, agree, total = value
            SUMMARY.setdefault(version, {})[kind] = (agree, total)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print dmltile's agreement with each DirectML version, by kind of case."""
    table = SUMMARY
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
