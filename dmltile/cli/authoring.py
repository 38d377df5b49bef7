"""Writing descriptors: ``dmltile new`` (build one), ``fmt`` (canonical form), ``schema`` (JSON Schema)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape

from ..core.enums import DataType
from ..core.tensor import UINT32_MAX
from ..core.words import plural
from ..errors import DescriptorError, EnumParseError, InputError, WriteError
from ..validate.api import validate
from ..validate.build import data_type_of, tile_desc
from ..validate.document import parse_descriptor, parse_document
from ..validate.levels import DEFAULT_FEATURE_LEVEL
from ..validate.reading import read_document
from ..validate.rules import unreadable_issues
from ..validate.schema import document_schema
from ..validate.suggest import enum_hint
from .app import EXIT_INVALID, EXIT_OK, EXIT_USAGE, app, err_console, fail
from .files import read_text_form, write_text
from .options import feature_level as parse_level
from .options import int_list, readable_file
from .report_schemas import REPORTS, report_schema


def _print_issues(issues) -> None:
    for i in issues:
        err_console.print(f"[red]{i.code}[/] {escape(i.path or '<document>')}: ", end="", highlight=False)
        err_console.print(i.message + (f" (fix: {i.hint})" if i.hint else ""), highlight=False, markup=False)


@app.command("new")
def new_cmd(
    sizes: str = typer.Option(..., "--sizes", help="Input sizes, outermost first, e.g. 1,1,2,3."),
    repeats: str = typer.Option(..., "--repeats", help="Repeats per dimension, e.g. 1,1,3,3."),
    dtype: str = typer.Option(
        "FLOAT32",
        "--dtype",
        help="FLOAT32, FLOAT16, INT8, ... (or the full C name, or a NumPy name: float32).",
    ),
    strides: str | None = typer.Option(
        None, "--strides", help="Input strides in elements (default: packed)."
    ),
    feature_level: str = typer.Option(
        DEFAULT_FEATURE_LEVEL, "--feature-level", "-l", help="Check the result at this level."
    ),
) -> None:
    """Print a canonical Tile descriptor: the output desc, counts and byte sizes are computed.

    Exit status: 0 the descriptor is valid at the level, 1 it is printed but invalid there (the
    issues go to stderr), 2 a bad option.

    Example: dmltile new --sizes 1,1,2,3 --repeats 1,1,3,3 --dtype FLOAT16
    """
    level = parse_level(feature_level)
    in_sizes, reps = int_list(sizes, "--sizes"), int_list(repeats, "--repeats")
    in_strides = int_list(strides, "--strides") if strides is not None else None
    if len(reps) != len(in_sizes):
        raise fail(
            f"--repeats has {plural(len(reps), 'value')} but --sizes has {len(in_sizes)}; "
            "give one repeat per dimension"
        )
    if in_strides is not None and len(in_strides) != len(in_sizes):
        raise fail(
            f"--strides has {plural(len(in_strides), 'value')} but --sizes has {len(in_sizes)}; "
            "give one stride per dimension"
        )
    for k, (size, rep) in enumerate(zip(in_sizes, reps, strict=False)):
        if size * rep > UINT32_MAX:
            raise fail(
                f"output size {k} would be --sizes {size} * --repeats {rep} = {size * rep}, "
                f"past the UINT limit {UINT32_MAX}"
            )
    try:
        data_type = DataType.parse(data_type_of(dtype))
    except EnumParseError:
        hint, _ = enum_hint(dtype, "DML_TENSOR_DATA_TYPE", level, "InputTensor")
        raise fail(f"--dtype {dtype!r} is not a DML_TENSOR_DATA_TYPE; {hint}") from None
    try:
        desc = tile_desc(in_sizes, reps, dtype=data_type, strides=in_strides)
    except DescriptorError as e:  # e.g. an output size past UINT: the options cannot make a descriptor
        _print_issues(e.issues)
        raise typer.Exit(EXIT_USAGE) from None
    print(desc.to_json())
    report = validate(desc, level)
    _print_issues(report.issues)
    raise typer.Exit(EXIT_OK if report.valid else EXIT_INVALID)


@app.command("fmt")
def fmt_cmd(
    file: Path = typer.Argument(..., help="A descriptor JSON file, or - for stdin."),
    in_place: bool = typer.Option(False, "--in-place", "-w", help="Rewrite the file instead of printing."),
    force: bool = typer.Option(False, "--force", help="With -w: rewrite a read-only file too."),
) -> None:
    """Print a descriptor in canonical form: the wrapped document with every field written, C names.

    Formatting does not judge the content (use `dmltile validate`); a document that cannot be read
    as a descriptor at all exits 1 with its issues, unreadable input exits 2.

    Example: dmltile fmt examples/valid_short_form.json
    """
    if in_place and str(file) == "-":
        raise fail("--in-place needs a file, not - (stdin)")
    try:
        reading = read_document(readable_file(file))
    except InputError as e:
        raise fail(str(e)) from None
    if in_place and reading.is_dxdispatch:
        raise fail(
            f"{file} is a DxDispatch model (or dispatchable), and fmt writes dmltile's descriptor form: "
            "rewriting it would drop its resources, commands and other dispatchables, so it is left "
            f"unchanged. Print the Tile descriptor with `dmltile fmt {file}` and save it elsewhere"
        )
    desc, issues = parse_descriptor(parse_document(reading.single))
    if desc is None:
        if unreadable_issues(issues):
            raise fail(f"{file}: " + "; ".join(i.message for i in unreadable_issues(issues)))
        _print_issues(issues)
        raise typer.Exit(EXIT_INVALID)
    text = desc.to_json() + "\n"
    if in_place:
        try:
            # -w says: replace the file that was read, in its encoding and line endings
            write_text(file, text, "fmt -w", force, read_text_form(file)[1], replace=True)
        except WriteError as e:
            raise fail(str(e)) from None
    else:
        print(text, end="")
    raise typer.Exit(EXIT_OK)


@app.command("schema")
def schema_cmd(
    report: str | None = typer.Option(
        None,
        "--report",
        metavar="COMMAND",
        help=f"Print instead the JSON Schema of a command's --json output: {', '.join(REPORTS)}.",
    ),
) -> None:
    """Print the JSON Schema of the descriptor document (generated from the models), or of a
    command's --json report.

    Example: dmltile schema > tile.schema.json
    """
    if report is not None:
        try:
            print(json.dumps(report_schema(report), indent=2))
        except ValueError as e:
            raise fail(str(e)) from None
        return
    print(json.dumps(document_schema(), indent=2))
