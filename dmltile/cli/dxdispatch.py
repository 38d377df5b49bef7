"""``dmltile export --dxdispatch`` and ``dmltile compare-dxdispatch``: run the exact descriptor on
real DirectML with DxDispatch, and check what it printed against dmltile's NumPy result."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import typer
from rich.markup import escape

from ..core.operator import OperatorDesc
from ..core.words import plural
from ..errors import DmlTileError, InputError, UnreadableOutput, WriteError
from ..execute.npy import read_npy
from ..interop import dxdispatch_export as dx
from ..interop.dxdispatch_print import compare_dxdispatch
from ..validate.api import validate
from ..validate.document import load
from ..validate.levels import DEFAULT_FEATURE_LEVEL
from .app import EXIT_INVALID, EXIT_OK, EXIT_USAGE, app, console, emit_json, err_console, fail
from .files import check_targets, write_atomic, write_text
from .options import readable_file


def _read_input(path: Path) -> np.ndarray:
    try:
        return read_npy(path)
    except InputError as e:
        raise fail(f"--input {e}") from None


def expected_path(model_file: Path) -> Path:
    """Where ``export --expect`` saves the expected values: ``<model stem>.expected.npy`` beside it."""
    return model_file.with_name(model_file.stem + ".expected.npy")


def _expected(model: dict) -> np.ndarray:
    """Run the model's dispatch on NumPy: what DxDispatch's print should show."""
    try:
        return dx.expected_outputs(model)[dx.OUTPUT_RESOURCE]
    except DmlTileError as e:
        raise fail(f"cannot compute the expected output: {e}", EXIT_INVALID) from None


@app.command("export")
def export_cmd(
    file: Path = typer.Argument(..., help="A descriptor JSON file (any form dmltile reads), or - for stdin."),
    to_dxdispatch: bool = typer.Option(
        False, "--dxdispatch", help="Write a DxDispatch model (the only format so far)."
    ),
    output: Path | None = typer.Option(None, "--output", "-o", help="Model file to write (default: stdout)."),
    input: Path | None = typer.Option(
        None, "--input", help="Input values: a .npy of the input Sizes, or of the whole buffer."
    ),
    seed: int | None = typer.Option(
        None, "--seed", help="Deterministic random input (default: 1, 2, 3, ...)."
    ),
    expect: bool = typer.Option(
        False, "--expect", help="Also write <model>.expected.npy: the NumPy backend's result."
    ),
    write_file: str | None = typer.Option(
        None, "--write-file", help="Add a writeFile command for the output (.npy/.dat/.bin)."
    ),
    print_output: bool = typer.Option(True, "--print/--no-print", help="Add a print command for the output."),
    verbose_print: bool = typer.Option(
        False, "--verbose-print", help="Print each element's bits too (exact comparison)."
    ),
    force: bool = typer.Option(
        False, "--force", help="Replace the -o file (and .expected.npy) if they exist."
    ),
) -> None:
    """Write a DxDispatch model that runs the descriptor exactly as written on DirectML.

    Example: dmltile export examples/doc_example.json --dxdispatch -o tile.json --expect
    then on Windows: dxdispatch.exe tile.json > out.txt && dmltile compare-dxdispatch out.txt tile.expected.npy
    """
    _check_export_options(to_dxdispatch, input, seed, expect, output)
    targets = [(output, "-o")] if output is not None else []
    if expect and output is not None:
        targets.append((expected_path(output), "--expect"))
    try:
        check_targets(targets, force)  # every file checked before any is written
    except WriteError as e:
        raise fail(str(e)) from None
    desc, valid = _exported_descriptor(file)
    small = desc.output.data_type.element_size == 1
    if write_file is None and small and output is not None:
        write_file = output.stem + ".output.npy"  # 8-bit values print as characters; see dxdispatch_print
    try:
        model = dx.to_dxdispatch(
            desc,
            input=_read_input(input) if input else None,
            seed=seed,
            print_output=print_output,
            write_file=write_file,
            verbose_print=verbose_print,
        )
    except DmlTileError as e:
        raise fail(str(e)) from None
    text = dx.dumps(model)
    if output is None:
        print(text, end="")
        raise typer.Exit(EXIT_OK)
    if expect and not valid:
        raise fail("no expected output for an invalid descriptor (see `dmltile validate`)", EXIT_INVALID)
    shown = _expected(model) if expect else None  # computed before anything is written
    _write_model(output, text, shown, force)
    _print_next_steps(desc, output, shown, write_file if small else None)
    raise typer.Exit(EXIT_OK)


def _check_export_options(
    to_dxdispatch: bool, input: Path | None, seed: int | None, expect: bool, output: Path | None
) -> None:
    """Exit 2 for options that are missing or exclude each other."""
    if not to_dxdispatch:
        raise fail("choose the format to export: --dxdispatch")
    if input is not None and seed is not None:
        raise fail("give --input or --seed, not both")
    if expect and output is None:
        raise fail("--expect writes <model>.expected.npy next to the model: give the model file with -o")


def _exported_descriptor(file: Path) -> tuple[OperatorDesc, bool]:
    """The descriptor to export and whether it is valid at the default level (an invalid one is
    still exported, with a warning: DirectML's debug layer then says why it rejects it)."""
    try:
        desc = load(readable_file(file))
    except InputError as e:
        raise fail(str(e)) from None
    except DmlTileError as e:
        raise fail(str(e), EXIT_INVALID) from None
    report = validate(desc, DEFAULT_FEATURE_LEVEL)
    if not report.valid:
        codes = " ".join(sorted({i.code for i in report.errors}))
        err_console.print(
            f"warning: the descriptor is invalid at {DEFAULT_FEATURE_LEVEL} ({codes}); DirectML will "
            "reject it: run dxdispatch with -d to see the debug layer's message",
            highlight=False,
            markup=False,
        )
    return desc, report.valid


def _write_model(output: Path, text: str, shown: np.ndarray | None, force: bool) -> None:
    """Write the model and, when computed, the expected values beside it."""
    try:
        write_text(output, text, "-o", force)
        if shown is not None:
            write_atomic(
                expected_path(output),
                lambda f: np.lib.format.write_array(f, shown, allow_pickle=False),
                "--expect",
                force,
            )
    except WriteError as e:
        raise fail(str(e)) from None


def _print_next_steps(
    desc: OperatorDesc, output: Path, shown: np.ndarray | None, write_file: str | None
) -> None:
    """What was written and how to run and compare it on Windows (``write_file``: where an 8-bit
    output is saved, since DxDispatch prints such values as characters)."""
    console.print(f"wrote {output}", highlight=False, markup=False)
    if write_file:
        console.print(
            f"note: DxDispatch prints {desc.output.data_type.name} values as characters and stops at a zero byte; "
            f"compare the file its writeFile command writes ({write_file}) instead",
            highlight=False,
        )
    if shown is not None:
        path, count = expected_path(output), shown.size
        compare_with = write_file or "out.txt"
        console.print(
            f"wrote {path} ({plural(count, 'value')})\non Windows: dxdispatch.exe {output.name}"
            + (" > out.txt" if compare_with == "out.txt" else "")
            + f"\nthen:       dmltile compare-dxdispatch {compare_with} {path.name}",
            highlight=False,
        )


@app.command("compare-dxdispatch")
def compare_cmd(
    output: Path = typer.Argument(
        ..., help="DxDispatch's captured output (text), or the .npy its writeFile wrote."
    ),
    expected: Path = typer.Argument(
        ..., help="The expected values (.npy), e.g. from `dmltile export --expect`."
    ),
    resource: str | None = typer.Option(None, "--resource", help="The printed resource (default: 'output')."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document and nothing else."),
) -> None:
    """Compare what DxDispatch printed with the expected values: identical, or the first difference.

    Exit status: 0 identical, 1 different, 2 unreadable.
    """
    try:
        result = compare_dxdispatch(output, expected, resource)
    except UnreadableOutput as e:
        if as_json:
            emit_json({"identical": None, "error": str(e)}, EXIT_USAGE)
            raise typer.Exit(EXIT_USAGE) from None
        raise fail(str(e)) from None
    status = EXIT_OK if result.identical else EXIT_INVALID
    if as_json:
        emit_json({"identical": result.identical, "message": result.message, "index": result.index}, status)
    else:
        colour = "green" if result.identical else "red"
        verdict = result.message if result.identical else "DIFFERENT: " + result.message
        console.print(f"[{colour}]{escape(verdict)}[/]", highlight=False)
    raise typer.Exit(status)
