"""``dmltile explain``: teach one descriptor (fields, sizes, bytes, levels, index mapping, picture)."""

from __future__ import annotations

import io
from pathlib import Path

import typer
from rich.console import Console

from ..errors import InputError, WriteError
from ..teach.explain import explain, map_index
from ..teach.render import picture, render
from ..validate.levels import DEFAULT_FEATURE_LEVEL
from ..validate.rules import unreadable_issues
from .app import EXIT_INVALID, EXIT_OK, app, console, fail
from .files import check_target, write_text
from .options import feature_level as parse_level
from .options import int_list, readable_file


@app.command("explain")
def explain_cmd(
    file: Path = typer.Argument(..., help="A descriptor JSON file."),
    feature_level: str = typer.Option(
        DEFAULT_FEATURE_LEVEL, "--feature-level", "-l", help="The level to judge it at (1.0 ... 6.4)."
    ),
    index: str | None = typer.Option(
        None,
        "--index",
        "-i",
        help="An output index, e.g. 0,0,4,7: which input element it copies, and the byte offsets.",
    ),
    svg: Path | None = typer.Option(None, "--svg", help="Also save the picture as an SVG file."),
    force: bool = typer.Option(False, "--force", help="Replace the --svg file if it exists."),
) -> None:
    """Explain a Tile descriptor: every field, the output sizes, the byte sizes step by step, the
    feature levels that accept it, and a picture of which input element each output element copies.

    Exit status: 0 valid at the level, 1 invalid (still explained), 2 unreadable input or bad options.

    Example: dmltile explain examples/doc_example.json --index 0,0,4,7
    """
    level = parse_level(feature_level)
    if svg is not None:
        try:
            check_target(svg, "--svg", force)
        except WriteError as e:
            raise fail(str(e)) from None
    out_index = int_list(index, "--index") if index is not None else None
    try:
        ex = explain(readable_file(file), level)
    except InputError as e:
        raise fail(str(e)) from None
    if unreadable_issues(ex.report.issues):
        raise fail(f"{file}: " + "; ".join(i.message for i in unreadable_issues(ex.report.issues)))
    if out_index is not None:
        if ex.desc is None:
            raise fail("--index needs a readable descriptor; fix the issues `dmltile validate` lists first")
        try:
            ex.mapping = map_index(ex.desc, out_index)
        except ValueError as e:
            raise fail(str(e)) from None
    console.print(render(ex))
    if svg is not None and ex.desc is not None:
        recorder = Console(record=True, file=io.StringIO(), width=100)
        recorder.print(picture(ex.desc))
        try:
            write_text(svg, recorder.export_svg(title=f"dmltile explain {file.name}"), "--svg", force)
        except WriteError as e:
            raise fail(str(e)) from None
        console.print(f"picture saved to {svg}", highlight=False)
    raise typer.Exit(EXIT_OK if ex.report.valid else EXIT_INVALID)
