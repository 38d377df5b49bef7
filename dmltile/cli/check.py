"""``dmltile check MODEL.onnx``: which Tile nodes of an ONNX model run on DirectML at a level, and why not."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import InputError
from ..lower.model_check import check_model
from ..validate.levels import parse_feature_level
from .app import EXIT_INVALID, EXIT_OK, EXIT_USAGE, app, console, emit_json, fail
from .options import feature_level as parse_level

COLOURS = {"dispatch": "green", "empty": "cyan", "unsupported": "yellow", "invalid": "red"}


def _show(value) -> str:
    return "?" if value is None else "[" + ",".join(str(v) for v in value) + "]"


@app.command("check")
def check_cmd(
    model: Path = typer.Argument(..., help="An ONNX model file."),
    feature_level: str = typer.Option("4.1", "--feature-level", "-l", help="e.g. 1.0, 3.1, 4.1."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document and nothing else."),
) -> None:
    """Report every Tile node of an ONNX model: does it dispatch on DirectML at this level, from which level, why not.

    Exit 0 when every Tile node dispatches or is empty, 1 otherwise, 2 for an unreadable model.
    Example: dmltile check model.onnx --feature-level 3.1
    """
    parse_level(feature_level)  # a bad level is a usage error before the model is read
    try:
        reports = check_model(model, feature_level)
    except InputError as e:
        raise fail(str(e), EXIT_USAGE) from None
    except ValueError as e:
        raise fail(str(e), EXIT_USAGE) from None
    status = EXIT_OK if all(r.status in ("dispatch", "empty") for r in reports) else EXIT_INVALID
    level = parse_feature_level(feature_level).dotted
    if as_json:
        emit_json(
            {
                "model": str(model),
                "feature_level": level,
                "feature_level_c_name": parse_feature_level(feature_level).c_name,
                "nodes": [r.to_dict() for r in reports],
            }
        )
        raise typer.Exit(status)
    if not reports:
        console.print(f"{model}: no Tile nodes", highlight=False)
        raise typer.Exit(status)
    counts = {s: sum(r.status == s for r in reports) for s in COLOURS}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    console.print(
        f"{model} at DML_FEATURE_LEVEL_{level.replace('.', '_')}: {summary} (of {len(reports)} Tile nodes)",
        highlight=False,
    )
    for r in reports:
        repeats = (
            _show(r.repeats)
            if r.repeats is not None
            else (
                "runtime repeats"
                if "run time" in r.repeats_source or "graph input" in r.repeats_source
                else "?"
            )
        )
        since = f"  (dispatches from {r.min_feature_level.dotted})" if r.min_feature_level else ""
        console.print(
            f"  [{COLOURS[r.status]}]{r.status:<11}[/] {r.name}: {r.input_type or '?'}{_show(r.input_shape)} "
            f"x {repeats} -> {_show(r.output_shape)}{since}",
            highlight=False,
            soft_wrap=True,
        )
        if r.reason:
            console.print(f"      why: {r.reason}", highlight=False, markup=False, soft_wrap=True)
    raise typer.Exit(status)
