"""``dmltile directml setup|versions``: the real DirectML.dll as oracle and backend."""

from __future__ import annotations

import json
import subprocess
import sys

import typer
from rich import box
from rich.table import Table

from ..execute.directml import oracle, ort_provider
from ..validate.versions import known_versions
from .app import EXIT_OK, EXIT_USAGE, DmlTileGroup, app, console, fail

directml_app = typer.Typer(
    cls=DmlTileGroup,
    help="Run descriptors on the real DirectML.dll (Wine over Mesa lavapipe on Linux, native on Windows).",
    no_args_is_help=True,
)
app.add_typer(directml_app, name="directml")


@directml_app.command("setup")
def setup_cmd(
    versions: list[str] = typer.Argument(
        None,
        help="DirectML versions (1.7.0), wheels (tensorflow-directml==1.15.5), `all` or `default` (the default).",
    ),
) -> None:
    """Install what the DirectML runner needs: Wine, Xvfb and a mingw compiler (apt, only when
    missing), DirectML.dll from the Windows wheels pinned in the version table, Mesa's lavapipe, the
    runner and its Cabinet.dll stand-in, a Wine prefix.

    Everything but the system packages goes under one cache folder ($DMLTILE_DIRECTML_HOME).
    Cold: about 2.5 minutes plus apt; warm: about a second.
    """
    if sys.platform == "win32":
        raise fail("on Windows the runner runs natively: build runner.c with MSVC or mingw (see its header)")
    run = subprocess.run(["bash", str(oracle.SETUP_SCRIPT), *(versions or [])], check=False)
    if run.returncode:
        raise fail(f"the DirectML set-up failed (exit {run.returncode}); its output is above", EXIT_USAGE)
    raise typer.Exit(EXIT_OK)


@directml_app.command("versions")
def versions_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document and nothing else."),
) -> None:
    """The DirectML versions dmltile has measured (validate --directml answers as each does) and
    which of them are installed here to run on."""
    installed = {v["directml_version"] for v in oracle.list_versions()}
    rows = [
        {
            "directml": v.version,
            "wheel": v.wheel,
            "max_feature_level": v.max_feature_level.dotted,
            "max_feature_level_c_name": v.max_feature_level.c_name,
            "executes_here": v.executes_here,
            "installed": v.version in installed,
        }
        for v in known_versions()
    ]
    problem = oracle.setup_problem()
    wheels = ort_provider.ort_wheels()
    if as_json:
        print(
            json.dumps({"versions": rows, "setup_problem": problem, "onnxruntime_directml": wheels}, indent=2)
        )
        raise typer.Exit(EXIT_OK)
    table = Table(title="DirectML versions measured by dmltile", box=box.SIMPLE_HEAD)
    for col in ("DirectML", "wheel", "max level", "executes here", "installed"):
        table.add_column(col)
    for v in known_versions():
        table.add_row(
            v.version,
            v.wheel,
            v.max_feature_level.dotted,
            "yes" if v.executes_here else "no",
            "yes" if v.version in installed else "-",
        )
    console.print(table)
    if not all(w["has_dll"] for w in wheels):
        console.print(
            "Wheels without onnxruntime.dll ship only the Python extension (onnxruntime_pybind11_state.pyd): "
            "the backend onnxruntime-directml cannot drive their C API.",
            highlight=False,
            markup=False,
        )
    console.print(problem or "The DirectML runner is set up here.", highlight=False, markup=False)
    _print_wheels(wheels)


def _print_wheels(wheels: list[dict]) -> None:
    """The onnxruntime-directml wheels fetched for their own provider (backend onnxruntime-directml)."""
    if not wheels:
        return
    table = Table(title="onnxruntime-directml wheels (the real DirectML provider)", box=box.SIMPLE_HEAD)
    for col in ("wheel", "onnxruntime.dll", "DirectML", "provider starts here"):
        table.add_column(col)
    for w in wheels:
        starts = (
            "-" if not w["has_dll"] else ("yes" if w.get("dml_ok") else w.get("error") or "not asked yet")
        )
        table.add_row(
            w["wheel_version"],
            "yes" if w["has_dll"] else "no",
            str(w.get("directml") or "-"),
            starts,
        )
    console.print(table)
    if not all(w["has_dll"] for w in wheels):
        console.print(
            "Wheels without onnxruntime.dll ship only the Python extension (onnxruntime_pybind11_state.pyd): "
            "the backend onnxruntime-directml cannot drive their C API.",
            highlight=False,
            markup=False,
        )
