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
    """Run the app in-process; returns typer's Result (exit_code, stdout, stderr). An exception
    other than the exit itself is re-raised, so a crash never passes for exit status 1."""
    result = CliRunner().invoke(app, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def script(
    *args: str, cwd: Path | None = None, timeout: float = 60, columns: int = 100
) -> subprocess.CompletedProcess:
    """Run the installed console script as a real subprocess, its piped text ``columns`` wide."""
    if not SCRIPT.exists():
        pytest.skip(f"the dmltile script is not installed next to {sys.executable} (pip install -e .)")
    return subprocess.run(
        [str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=timeout,
        env={**os.environ, "COLUMNS": str(columns)},
    )


def json_out(text: str):
    """Parse stdout that must be exactly one JSON document."""
    return json.loads(text)


def no_traceback(*texts: str) -> None:
    """Fail when any output shows a Python traceback."""
    for text in texts:
        assert "Traceback" not in text, text


# Tile's support by level, written out from the DML_TILE_OPERATOR_DESC page ("Tensor support"),
# independently of feature_levels/tile.toml: (first level, dimension counts, data types).
PAGE_ROWS = [
    ("1.0", {4}, {"FLOAT32", "FLOAT16"}),
    ("2.1", {4}, {"FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"}),
    ("3.1", set(range(1, 9)), {"FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"}),
    # The page's 4.1 row plus FLOAT64, which the page lists nowhere: DirectML 1.7.0 (max level 4.1) and
    # every later one accept FLOAT64 Tile (measured).
    (
        "4.1",
        set(range(1, 9)),
        {
            "FLOAT32",
            "FLOAT16",
            "INT32",
            "INT16",
            "INT8",
            "UINT32",
            "UINT16",
            "UINT8",
            "INT64",
            "UINT64",
            "FLOAT64",
        },
    ),
]
LEVELS = [
    "1.0",
    "2.0",
    "2.1",
    "3.0",
    "3.1",
    "4.0",
    "4.1",
    "5.0",
    "5.1",
    "5.2",
    "6.0",
    "6.1",
    "6.2",
    "6.3",
    "6.4",
]


def page_accepts(level: str, dims: int, dtype: str) -> bool:
    row = [r for r in PAGE_ROWS if tuple(map(int, r[0].split("."))) <= tuple(map(int, level.split(".")))][-1]
    return dims in row[1] and dtype in row[2]


def without_positions(reports: list[dict]) -> list[dict]:
    """``validate --json``'s reports without the line and column the CLI adds to each issue (the
    API's reports know no file); each issue must have had both."""
    for report in reports:
        for issue in report["issues"]:
            assert issue.pop("line") >= 1 and issue.pop("column") >= 1, issue
    return reports


def tile_model_file(folder: Path) -> Path:
    """A one-node ONNX Tile model (float32 [2, 3], repeats [2, 2] as an initializer) saved in
    ``folder``; skips the test without onnx."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    repeats = helper.make_tensor("r", TensorProto.INT64, [2], [2, 2])
    graph = helper.make_graph(
        [helper.make_node("Tile", ["x", "r"], ["y"], name="t")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [repeats],
    )
    path = folder / "m.onnx"
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 10  # one every measured onnxruntime loads (DML508)
    onnx.save(model, path)
    return path
