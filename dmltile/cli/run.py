"""``dmltile run``: execute a descriptor on an input array (NumPy or onnxruntime), or compare backends."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import typer

from ..core.operator import OperatorDesc
from ..core.words import plural
from ..errors import DmlTileError, InputError, WriteError
from ..execute.buffers import CompiledTile, addressed_mask, output_aliases, pack_tensor, strided
from ..execute.compare import compare_backends, compared_with
from ..execute.compile import compile as compile_tile
from ..execute.npy import read_buffer_file, read_npy
from ..validate.api import parse_and_validate
from ..validate.levels import DEFAULT_FEATURE_LEVEL
from ..validate.report import ValidationReport
from ..validate.rules import unreadable_issues
from .app import EXIT_INVALID, EXIT_OK, app, console, emit_json, err_console, fail
from .files import check_targets, write_atomic
from .options import feature_level as parse_level
from .options import readable_file
from .validate import is_unreadable, print_reports

MAX_ARRAY_BYTES = 1 << 30  # the CLI refuses to allocate more than this for an input or an output


def seeded_input(desc: OperatorDesc, seed: int) -> np.ndarray:
    """A deterministic input of the descriptor's Sizes and DataType: normal floats, or integers
    in -100..100 (0..100 for unsigned types), small enough to read in the printed output.

    Values are drawn per element of the input buffer and read through the input's Strides, so a
    broadcast (stride-0) input repeats its values as a real buffer would; packed inputs get the
    values in order."""
    t = desc.input
    dtype = t.data_type.numpy_dtype
    if dtype is None:
        raise fail(f"InputTensor.DataType {t.data_type.name} has no NumPy type, so no input can be made")
    rng = np.random.default_rng(seed)
    count = max(t.total_tensor_size_in_bytes // dtype.itemsize, 1)
    if dtype.kind == "f":
        values = rng.standard_normal(count).astype(dtype)
    else:
        info = np.iinfo(dtype)
        values = rng.integers(max(int(info.min), -100), 100, size=count, dtype=dtype, endpoint=True)
    strides = tuple(s * dtype.itemsize for s in t.effective_strides)
    return np.ndarray(tuple(t.sizes), dtype, values, 0, strides).copy()


def load_input(path: Path) -> np.ndarray:
    """An array from a .npy file (no pickles); exit 2 with the reason when it cannot be read."""
    try:
        return read_npy(path)
    except InputError as e:
        raise fail(f"--input {e}") from None


def check_budget(desc: OperatorDesc) -> None:
    """Refuse tensors too large to hold in memory here, before anything is allocated."""
    for name, t in (("InputTensor", desc.input), ("OutputTensor", desc.output)):
        need = max(math.prod(t.sizes) * max(t.data_type.element_size, 1), t.total_tensor_size_in_bytes)
        if need > MAX_ARRAY_BYTES:
            raise fail(
                f"{name} holds {need} bytes; `dmltile run` works on at most {MAX_ARRAY_BYTES} bytes per tensor"
            )


@app.command("run")
def run_cmd(
    file: Path = typer.Argument(..., help="A descriptor JSON file, or - for stdin."),
    input_path: Path | None = typer.Option(
        None, "--input", help="Input array (.npy) with the input Sizes and DataType."
    ),
    seed: int | None = typer.Option(
        None, "--seed", min=0, help="Make a deterministic random input from this seed (default 0)."
    ),
    output: Path | None = typer.Option(
        None, "--output", help="Save the output array here (.npy) instead of printing it."
    ),
    backend: str = typer.Option(
        "numpy",
        "--backend",
        help="numpy (the bit-exact reference), onnxruntime, directml (the real DirectML.dll) or "
        "onnxruntime-directml (onnxruntime's real DirectML provider); `dmltile directml setup` installs the last two.",
    ),
    directml: str | None = typer.Option(
        None,
        "--directml",
        metavar="VERSION",
        help="Judge as this DirectML version does (e.g. 1.9.1; implies its max level); with --backend "
        "directml, run on that DLL (onnxruntime-directml: on the wheel that ships it).",
    ),
    feature_level: str = typer.Option(
        DEFAULT_FEATURE_LEVEL, "--feature-level", "-l", help="The level to compile at."
    ),
    compare: bool = typer.Option(
        False,
        "--compare",
        help="Run on NumPy and on the --backend named (default: DirectML where its runner is set up, "
        "else onnxruntime) and report identical or the first difference.",
    ),
    input_buffer: Path | None = typer.Option(
        None,
        "--input-buffer",
        help="Raw input buffer bytes (at least InputTensor.TotalTensorSizeInBytes), read through the input's Strides.",
    ),
    output_buffer: Path | None = typer.Option(
        None,
        "--output-buffer",
        help="Save the raw output buffer (OutputTensor.TotalTensorSizeInBytes bytes), padding included.",
    ),
    poison_padding: bool = typer.Option(
        False,
        "--poison-padding",
        help="Fill output bytes the output desc does not address with 0xCD, as DirectML may overwrite them.",
    ),
    force: bool = typer.Option(False, "--force", help="Replace --output / --output-buffer files that exist."),
    as_json: bool = typer.Option(
        False, "--json", help="Print one JSON document (backend, provider, output) and nothing else."
    ),
) -> None:
    """Execute a descriptor, like compiling it with IDMLDevice::CompileOperator and dispatching it.

    Exit status: 0 done (with --compare: identical), 1 the descriptor is invalid (or --compare found
    a difference), 2 unreadable input, a bad option, or a backend that is not available.

    With --input-buffer, --output-buffer or --poison-padding it works on raw byte buffers, as a GPU
    dispatch does: the input is read through its Strides and the output written through its own, and
    output bytes no element occupies stay 0 (or become 0xCD with --poison-padding).

    Example: dmltile run examples/doc_example.json --seed 1
    """
    level = parse_level(feature_level)
    _check_options(input_path, seed, input_buffer, output_buffer, poison_padding, compare)
    if output is not None:
        output = npy_name(output)
    try:
        check_targets(
            [(p, what) for p, what in ((output, "--output"), (output_buffer, "--output-buffer")) if p], force
        )
    except WriteError as e:
        raise fail(str(e)) from None
    desc, report = _valid_descriptor(file, feature_level if directml else level, directml, as_json)
    check_budget(desc)
    x = None if input_buffer is not None else _input_array(desc, input_path, seed)
    if compare:
        assert x is not None  # --compare refuses --input-buffer
        _compare(desc, x, report.feature_level, compared_with(backend), directml, as_json)
    try:
        op = compile_tile(desc, report.feature_level, backend=backend, directml=directml)
        if input_buffer is not None or output_buffer is not None or poison_padding:
            y = _run_buffers(op, desc, x, input_buffer, output_buffer, poison_padding, force, as_json)
        else:
            assert x is not None  # only --input-buffer leaves x out, and it runs on buffers
            y = op(x)
    except DmlTileError as e:  # WriteError included
        raise fail(str(e)) from None
    if as_json:
        emit_json(run_document(op, y, report, output), EXIT_OK)
        raise typer.Exit(EXIT_OK)
    _show_output(op, y, x, input_buffer, output, force)
    raise typer.Exit(EXIT_OK)


def _check_options(
    input_path: Path | None,
    seed: int | None,
    input_buffer: Path | None,
    output_buffer: Path | None,
    poison_padding: bool,
    compare: bool,
) -> None:
    """Exit 2 for options that exclude each other."""
    if sum(v is not None for v in (input_path, seed, input_buffer)) > 1:
        raise fail("give one of --input, --seed and --input-buffer")
    if compare and (output_buffer or poison_padding or input_buffer):
        raise fail(
            "--compare works on arrays; leave out --input-buffer, --output-buffer and --poison-padding"
        )


def _valid_descriptor(
    file: Path, feature_level: Any, directml: str | None, as_json: bool
) -> tuple[OperatorDesc, ValidationReport]:
    """The descriptor and its report when it is valid (its warnings on stderr); otherwise exit 2
    for unreadable input, or print the report and exit 1."""
    try:
        desc, report = parse_and_validate(readable_file(file), feature_level, directml)
    except InputError as e:
        raise fail(str(e)) from None
    if is_unreadable(report):
        raise fail(f"{file}: " + "; ".join(i.message for i in unreadable_issues(report.issues)))
    if not report.valid:
        if as_json:
            emit_json({"valid": False, "report": report.to_dict()}, EXIT_INVALID)
        else:
            print_reports({str(file): [report]})
        raise typer.Exit(EXIT_INVALID)
    for warning in report.warnings:
        err_console.print(
            f"warning {warning.code} {warning.path}: {warning.message}", highlight=False, markup=False
        )
    assert desc is not None  # a valid report has a parsed descriptor
    return desc, report


def _input_array(desc: OperatorDesc, input_path: Path | None, seed: int | None) -> np.ndarray:
    """The input: the --input file, or made from --seed (default 0)."""
    return load_input(input_path) if input_path is not None else seeded_input(desc, seed or 0)


def _show_output(
    op: CompiledTile,
    y: np.ndarray,
    x: np.ndarray | None,
    input_buffer: Path | None,
    output: Path | None,
    force: bool,
) -> None:
    """Save the output to --output, or print it; either way say where it ran."""
    provider = getattr(op, "provider", op.backend)
    where = f"{op.backend}" + (f" ({provider})" if provider and provider != op.backend else "")
    if output is not None:
        try:
            write_atomic(
                output, lambda f: np.lib.format.write_array(f, y, allow_pickle=False), "--output", force
            )
        except WriteError as e:
            raise fail(str(e)) from None
        console.print(
            f"ran on {where}: output {list(y.shape)} {y.dtype} saved to {output}",
            highlight=False,
            markup=False,
        )
        return
    source = f"input buffer {input_buffer}" if x is None else f"input {list(x.shape)} {x.dtype}"
    console.print(
        f"ran on {where}: {source} -> output {list(y.shape)} {y.dtype}", highlight=False, markup=False
    )
    console.print(
        np.array2string(y, threshold=200, edgeitems=3, max_line_width=console.width),
        highlight=False,
        markup=False,
    )


JSON_MAX_ELEMENTS = 1 << 16  # larger outputs are left out of --json (save them with --output)


def run_document(op: CompiledTile, y: np.ndarray, report: ValidationReport, output: Path | None) -> dict:
    """What ``run --json`` prints: where it ran (for DirectML, which version), and the output."""
    version = getattr(op, "version", None)
    doc: dict = {
        "valid": True,
        "backend": op.backend,
        "provider": op.provider,
        "directml_version": version["directml_version"] if version else None,
        "feature_level": report.feature_level.dotted if report.feature_level else None,
        "warnings": [i.code for i in report.warnings],
        "shape": list(y.shape),
        "dtype": str(y.dtype),
        "saved_to": str(output) if output is not None else None,
    }
    if y.size <= JSON_MAX_ELEMENTS and output is None:
        floats = y.dtype.kind == "f"
        doc["output"] = [v if not floats or np.isfinite(v) else str(v) for v in y.reshape(-1).tolist()]
    return doc


def npy_name(path: Path) -> Path:
    """The file ``--output`` writes: numpy.save's name for it (``.npy`` added when missing). A path
    that names something other than a regular file (/dev/null, a folder) stays as given, so that
    writing it is refused by name rather than a file made beside it."""
    if path.name.endswith(".npy") or (path.exists() and not path.is_file()):
        return path
    return path.with_name(path.name + ".npy")


def _addressed_bytes(t) -> int:
    """Bytes of the tensor's buffer that some element occupies. Without aliasing (which run_buffers
    refuses above a small size) every element has its own bytes, so no mask need be built."""
    if not output_aliases(t):
        return t.element_count * t.data_type.element_size
    return int(np.count_nonzero(addressed_mask(t)))


def _run_buffers(
    op: CompiledTile,
    desc: OperatorDesc,
    x: np.ndarray | None,
    input_buffer: Path | None,
    output_buffer: Path | None,
    poison_padding: bool,
    force: bool = False,
    as_json: bool = False,
) -> np.ndarray:
    """Run on byte buffers as a dispatch does; save the raw output buffer; return the output tensor
    (a view into the buffer: peak memory is the output buffer plus the input)."""
    if input_buffer is not None:
        try:
            in_bytes = read_buffer_file(input_buffer, int(desc.input.total_tensor_size_in_bytes or 0))
        except InputError as e:
            raise fail(f"--input-buffer {e}") from None
    else:
        assert x is not None  # without --input-buffer there is an input array
        in_bytes = pack_tensor(desc.input, x)
    out_bytes = np.zeros(desc.output.total_tensor_size_in_bytes, np.uint8)
    op.run_buffers(in_bytes, out_bytes, poison_padding=poison_padding)
    del in_bytes
    padding = desc.output.total_tensor_size_in_bytes - _addressed_bytes(desc.output)
    note = f", {plural(padding, 'padding byte')}" + (
        " poisoned with 0xCD" if poison_padding and padding else " left at 0" if padding else ""
    )
    say = err_console if as_json else console  # under --json, stdout holds the JSON document only
    if output_buffer is not None:
        write_atomic(output_buffer, lambda f: f.write(out_bytes.data), "--output-buffer", force)
        say.print(
            f"output buffer: {plural(out_bytes.size, 'byte')}{note}, saved to {output_buffer}",
            highlight=False,
            markup=False,
        )
    else:
        say.print(f"output buffer: {plural(out_bytes.size, 'byte')}{note}", highlight=False)
    return strided(out_bytes, desc.output).view(op.dtype)  # a valid desc: output dtype = input dtype


def _compare(
    desc: OperatorDesc, x: np.ndarray, level, second: str, directml: str | None, as_json: bool
) -> None:
    """Run NumPy and ``second`` through ``dmltile.compare_backends`` and exit with the verdict."""
    options = {"directml": directml} if second == "directml" and directml else {}
    try:
        result = compare_backends(desc, x, feature_level=level, backends=("numpy", second), **options)
    except DmlTileError as e:
        raise fail(str(e)) from None
    if as_json:
        status = EXIT_OK if result.identical else EXIT_INVALID
        emit_json({"compare": result.to_dict()}, status)
        raise typer.Exit(status)
    names = " and ".join(result.backends)
    if result.identical:
        console.print(f"identical: {names} produce the same bits for every output element", highlight=False)
        raise typer.Exit(EXIT_OK)
    console.print(f"[red]different[/] ({names}): ", end="", highlight=False)
    console.print(str(result.message), highlight=False, markup=False)
    raise typer.Exit(EXIT_INVALID)
