"""Marker registration for the DirectML tests (the golden tests' agreement summary is printed by
tests/conftest.py: a worker's reports reach the main process, this folder's conftest may not)."""

from __future__ import annotations

import os
from typing import Any

import pytest


def pytest_configure(config: Any) -> None:
    """Register the ``directml_live`` marker (runs the real DirectML.dll: Wine here, natively on Windows)."""
    config.addinivalue_line(
        "markers",
        "directml_live: runs the real DirectML.dll through dmltile/execute/directml (make directml)",
    )


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
