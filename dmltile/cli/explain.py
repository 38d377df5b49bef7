"""``dmltile explain``: teach one descriptor (fields, sizes, bytes, levels, index mapping, picture)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import InputError, WriteError
from ..teach.explain import explain, map_index
from ..teach.html import explanation_page
from ..teach.picture import build_picture
from ..teach.render import render
from ..teach.svg import to_svg
from ..validate.levels import DEFAULT_FEATURE_LEVEL, levels_text
from ..validate.rules import unreadable_issues
from .app import EXIT_INVALID, EXIT_OK, app, console, fail, print_whole_lines
from .files import check_target, write_text
from .options import feature_level as parse_level
from .options import int_list, readable_file


def _write(path: Path, text: str, option: str, force: bool) -> None:
    """Write atomically; an existing file only with --force; a failure is exit 2 with the reason."""
    try:
        write_text(path, text, option, force)
    except WriteError as e:
        raise fail(str(e)) from None
    console.print(f"{option.lstrip('-')} saved to {path}", highlight=False, markup=False)


@app.command("explain")
def explain_cmd(
    file: Path = typer.Argument(..., help="A descriptor JSON file, or - for stdin."),
    feature_level: str = typer.Option(
        DEFAULT_FEATURE_LEVEL, "--feature-level", "-l", help=f"The level to judge it at ({levels_text()})."
    ),
    index: str | None = typer.Option(
        None,
        "--index",
        "-i",
        help="An output index, e.g. 0,0,4,7: which input element it copies, and the byte offsets.",
    ),
    svg: Path | None = typer.Option(
        None, "--svg", help="Also draw the picture (grids and buffers) as an SVG file."
    ),
    html: Path | None = typer.Option(
        None,
        "--html",
        help="Also write one self-contained HTML page: hover an output element to see its source and bytes.",
    ),
    force: bool = typer.Option(False, "--force", help="Replace an existing --svg or --html file."),
) -> None:
    """Explain a Tile descriptor: every field, the output sizes, the byte sizes step by step, the
    feature levels that accept it, and a picture of which input element each output element copies,
    with both buffers byte by byte.

    Exit status: 0 valid at the level, 1 invalid (still explained), 2 unreadable input or bad options.

    Example: dmltile explain examples/doc_example.json --index 0,0,4,7 --html tile.html
    """
    level = parse_level(feature_level)
    for target, option in ((svg, "--svg"), (html, "--html")):
        if target is not None:
            try:
                check_target(target, option, force)
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
    # The picture model is built once; the terminal, the SVG and the HTML page all draw it.
    model = None
    if ex.desc is not None:
        model = build_picture(ex.desc, out_index, max_width=max(60, min(console.width, 140)))
    print_whole_lines(render(ex, model))
    if svg is not None and model is not None:
        _write(svg, to_svg(model, title=f"dmltile explain {file.name}"), "--svg", force)
    if html is not None:
        _write(html, explanation_page(ex, model, title=f"dmltile explain {file.name}"), "--html", force)
    raise typer.Exit(EXIT_OK if ex.report.valid else EXIT_INVALID)
