"""Helpers for the CLI tests: typer's in-process runner and the installed ``dmltile`` script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dmltile.cli import app

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
DOC_EXAMPLE = EXAMPLES / "doc_example.json"
SCRIPT = Path(sys.executable).parent / ("dmltile.exe" if os.name == "nt" else "dmltile")


def invoke(*args: str):
    """Run the app in-process; returns typer's Result (exit_code, stdout, stderr)."""
    return CliRunner().invoke(app, [str(a) for a in args])


def script(*args: str, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run the installed console script as a real subprocess."""
    if not SCRIPT.exists():
        pytest.skip(f"the dmltile script is not installed next to {sys.executable} (pip install -e .)")
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, cwd=cwd or ROOT,
                          timeout=timeout, env={**os.environ, "COLUMNS": "100"})


def json_out(text: str):
    """Parse stdout that must be exactly one JSON document."""
    return json.loads(text)


def no_traceback(*texts: str) -> None:
    """Fail when any output shows a Python traceback."""
    for text in texts:
        assert "Traceback" not in text, text
