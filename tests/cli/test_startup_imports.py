"""What a command imports decides how long it takes to start: ``dmltile --version`` and ``dmltile
validate FILE`` (what editors and pre-commit hooks run on every file) import no NumPy, no onnx or
onnxruntime, nothing of the execution, lowering, interop or teaching layers (the copy planner, the
playground), nor rich when the report goes to a pipe, and ``--version`` not even typer or pydantic.
A run also leaves what it built frozen, so that the interpreter's exit does not walk it again. The
tests read the modules a real run leaves loaded and the objects it froze; they measure no time."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ..cli_support import DOC_EXAMPLE, ROOT

_RUN = """
import json, sys
from dmltile.cli import main
sys.argv = ["dmltile", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
import gc
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
sys.stderr.write("\\nFROZEN " + str(gc.get_freeze_count()) + "\\n")
"""

NEVER = ("numpy", "onnx", "onnxruntime", "openvino")
# The layers above validation: only their (empty) package files may load, which dmltile/__init__.py
# loads so that the API's functions of the same names stay where they belong.
ABOVE = ("dmltile.execute.", "dmltile.lower.", "dmltile.interop", "dmltile.teach")


def _after(*args: str) -> dict[str, str]:
    """What a real run of ``dmltile ARGS`` leaves: its loaded modules (MODULES), its frozen objects
    (FROZEN)."""
    run = subprocess.run(
        [sys.executable, "-c", _RUN, *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    return dict(x.split(" ", 1) for x in run.stderr.splitlines() if x.startswith(("MODULES ", "FROZEN ")))


def loaded(*args: str) -> set[str]:
    return set(json.loads(_after(*args)["MODULES"]))


def tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_version_imports_no_framework_model_or_layer():
    modules = loaded("--version")
    assert not tops(modules) & {*NEVER, "pydantic", "rich", "typer"}, sorted(modules)
    assert not [m for m in modules if m.startswith(("dmltile.validate.", "dmltile.core", *ABOVE))]


@pytest.mark.parametrize("extra", [[], ["--json"], ["--all-levels"], ["--format", "sarif"]])
def test_validate_imports_neither_numpy_onnx_nor_the_layers_above_validation(extra):
    modules = loaded("validate", str(DOC_EXAMPLE), *extra)
    assert "dmltile.validate.api" in modules  # the run did judge the file
    assert not tops(modules) & set(NEVER), sorted(tops(modules) & set(NEVER))
    assert not [m for m in modules if m.startswith(ABOVE)], sorted(m for m in modules if m.startswith(ABOVE))
    if extra != ["--all-levels"]:  # lines for a pipe, a hook or CI need no rich; the matrix is a rich table
        assert "rich" not in tops(modules)


# What only other paths of validate need: writing fixes back into the text (--fix, --diff), lines
# and columns (--json, SARIF), the models' JSON Schema, DxDispatch's pydantic models, building a
# descriptor from sizes; and the modules of the other commands.
NOT_FOR_A_REPORT = (
    "dmltile.validate.splice",
    "dmltile.validate.locate",
    "dmltile.validate.schema",
    "dmltile.validate.dxdispatch_models",
    "dmltile.validate.build",
    "dmltile.cli.report_schemas",
    *(
        f"dmltile.cli.{m}"
        for m in ("authoring", "check", "explain", "info", "run", "serve", "directml", "dxdispatch")
    ),
)


@pytest.mark.parametrize("target", [DOC_EXAMPLE, DOC_EXAMPLE.parent])
def test_validate_text_report_imports_only_what_judging_and_printing_need(target):
    modules = loaded("validate", str(target))
    assert "dmltile.cli.validate" in modules and "dmltile.validate.api" in modules
    assert not modules & set(NOT_FOR_A_REPORT), sorted(modules & set(NOT_FOR_A_REPORT))


def test_the_paths_that_need_those_modules_load_them(tmp_path):
    # the guard above would pass for a name no run ever loads: each is loaded where it is needed
    assert "dmltile.validate.locate" in loaded("validate", str(DOC_EXAMPLE), "--json")
    broken = tmp_path / "x.json"
    broken.write_text(DOC_EXAMPLE.read_text().replace('"Repeats"', '"Repeat"'))
    assert "dmltile.validate.splice" in loaded("validate", str(broken), "--diff", "--unsafe-fixes")
    assert "dmltile.cli.info" in loaded("rules", "--json")


def test_a_run_leaves_what_it_built_frozen_for_the_exit():
    """The console script freezes the objects of a run once it is over, so the interpreter's final
    garbage collections skip them (the run's modules, models and rules live until the exit anyway)."""
    assert int(_after("validate", str(DOC_EXAMPLE))["FROZEN"]) > 10_000  # typer's, pydantic's, the rules'
    assert int(_after("--version")["FROZEN"]) == 0  # answered before anything worth freezing is loaded


def test_other_commands_still_load_what_they_need():
    modules = loaded("run", str(DOC_EXAMPLE), "--seed", "0")
    assert "numpy" in modules and "dmltile.execute.compile" in modules
