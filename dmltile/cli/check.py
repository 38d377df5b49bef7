"""``dmltile check MODEL``: what onnxruntime's DirectML EP does with every Tile node of a model."""

from __future__ import annotations

from pathlib import Path

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from ..errors import InputError
from ..execute.directml.oracle import OracleError
from ..lower.model_check import RUNS_ON_GPU, TileNodeReport, check_model_levels
from ..lower.observe import (
    Observation,
    comparable_verdict,
    generated_inputs,
    load_external_data,
    observe_model,
)
from ..lower.onnx_graph import read_model
from ..validate.levels import DEFAULT_FEATURE_LEVEL, known_levels, parse_feature_level
from .app import EXIT_INVALID, EXIT_OK, EXIT_USAGE, app, console, emit_json, fail

COLOURS = {
    "dispatch": "green",
    "dispatch-per-value": "yellow",
    "empty": "cyan",
    "cpu-fallback": "magenta",
    "invalid": "red",
}
SHORT = {
    "dispatch": "dispatch",
    "dispatch-per-value": "per-value",
    "empty": "empty",
    "cpu-fallback": "cpu",
    "invalid": "invalid",
}


def _show(value) -> str:
    return "?" if value is None else "[" + ",".join(str(v) for v in value) + "]"


def _ints(option: str, text: str) -> list[int]:
    """``1,2,3`` or ``1x2x3`` as ints; a part that is empty or no integer ("1,2,x") is an error."""
    try:
        return [int(v) for v in text.replace("x", ",").split(",")]
    except ValueError:
        raise fail(f"{option} {text}: the values are comma-separated integers, e.g. 1,2,3") from None


def _pairs(option: str, items: list[str], one: bool = False) -> dict:
    """``NAME=VALUE`` items as a dict (VALUE an int, or a list of ints)."""
    out: dict = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            example = "batch=8" if one else "x=2,3,4"
            raise fail(f"{option} {item!r}: write NAME=VALUE, e.g. {option} {example}")
        values = _ints(option, value)
        if one and len(values) != 1:
            raise fail(f"{option} {item}: one integer per dimension name, e.g. {option} {name}=8")
        if any(v < 0 for v in values) and option not in ("--repeats", "--value"):
            raise fail(f"{option} {item}: sizes are 0 or more")
        out[name.strip()] = values[0] if one else values
    return out


def _header(r: TileNodeReport) -> str:
    if r.repeats is not None:
        repeats = _show(r.repeats)
    elif "run time" in r.repeats_source or "graph input" in r.repeats_source:
        repeats = "runtime repeats"
    else:
        repeats = "?"
    # escaped: "[batch,3]" is text, not a rich style tag
    return escape(
        f"{r.name}: {r.input_type or '?'}{_show(r.input_shape)} x {repeats} -> {_show(r.output_shape)}"
    )


def _when(r: TileNodeReport) -> str:
    parts = []
    if r.compiled:
        parts.append(("fused, " if r.fused else "") + f"compiled {r.compiled}")
    if r.min_feature_level:
        parts.append(f"from {r.min_feature_level.dotted} (DirectML {r.min_directml}+)")
    return "  (" + "; ".join(parts) + ")" if parts else ""


def _print_node(r: TileNodeReport, steps: bool = False) -> None:
    lines = []
    if r.descriptor is not None:
        d = r.descriptor
        lines.append(
            f"DirectML: {d.input.data_type.name} Sizes {list(d.input.sizes)} Repeats {list(d.repeats)} "
            f"-> Sizes {list(d.output.sizes)}"
        )
    if r.reason:
        lines.append(f"why: {r.reason}")
    if r.level_reason:
        lines.append(f"at {r.feature_level.dotted if r.feature_level else '?'}: {r.level_reason}")
    lines += [f"given: {s}" for s in r.supplied]
    lines += [f"warning: {w}" for w in r.warnings]
    if steps:
        lines += [f"step: {s}" for s in r.steps]
    # One print per node (a model may have thousands): the detail lines escaped, not parsed as markup.
    head = f"  [{COLOURS[r.status]}]{r.status:<18}[/] {_header(r)}{_when(r)}"
    console.print(
        "\n".join([head] + [f"      {escape(line)}" for line in lines]), highlight=False, soft_wrap=True
    )


def _groups(levels, results: dict[str, list[TileNodeReport]]) -> list[tuple[str, int]]:
    """Neighbouring levels with the same status for every node share one column (``1.0-4.1``)."""
    column = [tuple(reports[j].status for reports in results.values()) for j in range(len(levels))]
    groups, start = [], 0
    for j in range(1, len(levels) + 1):
        if j == len(levels) or column[j] != column[start]:
            label = levels[start].dotted + (f"-{levels[j - 1].dotted}" if j - 1 > start else "")
            groups.append((label, start))
            start = j
    return groups


def _print_matrix(model: Path, levels, results: dict[str, list[TileNodeReport]]) -> None:
    groups = _groups(levels, results)
    table = Table(
        box=box.SIMPLE_HEAD, title=escape(f"{model}: onnxruntime's DirectML EP, Tile node x feature level")
    )
    table.add_column("Tile node")
    for label, _ in groups:
        table.add_column(label, justify="center")
    for name, reports in results.items():
        cells = [reports[j].status for _, j in groups]
        table.add_row(escape(name), *(f"[{COLOURS[s]}]{SHORT[s]}[/]" for s in cells))
    console.print(table)
    for reports in results.values():
        newest = reports[-1]
        console.print(f"  {_header(newest)}{_when(newest)}", highlight=False, soft_wrap=True)
        if newest.reason:
            console.print(f"      why: {newest.reason}", highlight=False, markup=False, soft_wrap=True)
        for label, j in groups:
            if reports[j].level_reason:
                console.print(
                    f"      at {label}: {reports[j].level_reason}",
                    highlight=False,
                    markup=False,
                    soft_wrap=True,
                )


def _observe(
    model: Path,
    reports: list[TileNodeReport],
    dims: dict,
    inputs: dict,
    reps: dict,
    wheel: str | None,
    values: dict | None = None,
) -> Observation:
    """Run the model on onnxruntime-directml's real provider with the values given (or generated)."""
    try:
        proto, base = read_model(model)
        if base is not None:
            load_external_data(proto, base)
        feeds, free = generated_inputs(proto, dims, inputs, reps, values=values)
        return observe_model(proto, feeds, free, wheel)
    except InputError as e:
        raise fail(f"--observe: {e}", EXIT_USAGE) from None
    except OracleError as e:
        raise fail(f"--observe needs onnxruntime-directml's provider: {e}", EXIT_USAGE) from None


def _agreement(reports: list[TileNodeReport], seen: Observation) -> list[dict]:
    rows = []
    for r in reports:
        node = seen.nodes.get(r.name)
        verdict = comparable_verdict(r.status, r.fused)
        observed = node.status if node else "unobserved"
        rows.append(
            {
                "name": r.name,
                "predicted": verdict,
                "observed": observed,
                "agrees": verdict == observed,
                "observation": node.to_dict() if node else None,
            }
        )
    return rows


def _print_agreement(model: Path, seen: Observation, rows: list[dict]) -> None:
    table = Table(
        box=box.SIMPLE_HEAD, title=escape(f"{model}: check's verdict vs onnxruntime-directml {seen.wheel}")
    )
    for col in ("Tile node", "predicted", "observed", ""):
        table.add_column(col)
    for row in rows:
        mark = "[green]agrees[/]" if row["agrees"] else "[red]DISAGREES[/]"
        table.add_row(escape(row["name"]), row["predicted"], row["observed"], mark)
    console.print(table)
    for row in rows:
        detail = (row["observation"] or {}).get("detail") or "not observed (a subgraph's node, or no session)"
        console.print(f"  {row['name']}: observed {detail}", highlight=False, markup=False, soft_wrap=True)
    if seen.session_error:
        console.print(f"  session: {seen.session_error}", highlight=False, markup=False, soft_wrap=True)


def _status(reports: list[TileNodeReport]) -> int:
    return EXIT_OK if all(r.status in RUNS_ON_GPU for r in reports) else EXIT_INVALID


@app.command("check")
def check_cmd(
    model: Path = typer.Argument(..., help="An ONNX model file, or an OpenVINO IR .xml (openvino extra)."),
    feature_level: str = typer.Option(
        DEFAULT_FEATURE_LEVEL,
        "--feature-level",
        "-l",
        help="The device's DirectML feature level, e.g. 5.0, 6.4.",
    ),
    all_levels: bool = typer.Option(
        False, "--all-levels", help="Every feature level: a node x level matrix."
    ),
    dim: list[str] = typer.Option([], "--dim", help="A symbolic dimension's size, NAME=VALUE (repeatable)."),
    input_shape: list[str] = typer.Option(
        [], "--input", help="A graph input's shape, NAME=2,3,4 (repeatable)."
    ),
    repeats: list[str] = typer.Option(
        [], "--repeats", help="A node's repeats, NODE=1,2,3; NODE may name the repeats input (repeatable)."
    ),
    steps: bool = typer.Option(False, "--steps", help="Print every lowering step of each node."),
    observe: bool = typer.Option(
        False,
        "--observe",
        help="Also run the model on onnxruntime-directml's real DirectML provider (values from --dim, --input, "
        "--repeats, or generated) and compare each node's observed placement with the verdict; exit 1 when "
        "they disagree.",
    ),
    value: list[str] = typer.Option(
        [],
        "--value",
        help="With --observe: an integer or bool graph input's values, NAME=1,2,3 (repeatable; e.g. the input "
        "a Tile's repeats are computed from).",
    ),
    wheel: str | None = typer.Option(
        None,
        "--wheel",
        metavar="VERSION",
        help="With --observe: the onnxruntime-directml wheel (default the newest).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document and nothing else."),
) -> None:
    """Say what onnxruntime's DirectML execution provider does with every Tile node of a model.

    Verdicts: dispatch (fused, compiled once), dispatch-per-value (compiled at run time, per value),
    empty, cpu-fallback (leaves the GPU), invalid (no onnxruntime EP runs it). Exit 0 when every Tile
    node runs on DirectML or is empty (with --all-levels: at the newest level), 1 otherwise, 2 for an
    unreadable model or a bad option.
    Example: dmltile check model.onnx --dim batch=8 --repeats tile0=1,2,3
    """
    _check_options(all_levels, feature_level, observe, wheel)
    if value and not observe:
        raise fail("--value gives a graph input's values to the run --observe makes; give --observe too")
    values = _pairs("--value", value)
    dims = _pairs("--dim", dim, one=True)
    inputs = _pairs("--input", input_shape)
    reps = _pairs("--repeats", repeats)
    try:
        levels = list(known_levels()) if all_levels else [parse_feature_level(feature_level)]
        results = check_model_levels(model, levels, dims or None, inputs or None, reps or None)
    except (InputError, ValueError) as e:
        raise fail(str(e), EXIT_USAGE) from None
    newest = [r[-1] for r in results.values()]
    status = _status(newest)
    if observe:
        _observe_cmd(model, newest, levels, (dims, inputs, reps, wheel, values), as_json)
    if as_json:
        emit_json(_check_document(model, levels, results, all_levels), status)
    elif not results:
        console.print(f"{model}: no Tile nodes", highlight=False, markup=False)
    elif all_levels:
        _print_matrix(model, levels, results)
    else:
        _print_verdicts(model, levels[0], newest, steps)
    raise typer.Exit(status)


def _check_options(all_levels: bool, feature_level: str, observe: bool, wheel: str | None) -> None:
    """The option combinations ``check`` refuses (exit 2)."""
    if all_levels and feature_level != DEFAULT_FEATURE_LEVEL:
        raise fail("give either --feature-level or --all-levels, not both")
    if observe and all_levels:
        raise fail("--observe compares at one feature level (the device's); leave out --all-levels")
    if wheel is not None and not observe:
        raise fail("--wheel picks the wheel --observe runs on; give --observe too")


def _check_document(model: Path, levels: list, results: dict, all_levels: bool) -> dict:
    """``check --json``: the nodes at the level, or with --all-levels each node's reports at every level."""
    doc: dict = {"model": str(model)}
    if all_levels:
        doc["feature_levels"] = [lv.dotted for lv in levels]
        doc["feature_levels_c_name"] = [lv.c_name for lv in levels]
        doc["nodes"] = [
            {**reports[-1].to_dict(), "levels": [r.to_dict() for r in reports]}
            for reports in results.values()
        ]
    else:
        doc["feature_level"] = levels[0].dotted
        doc["feature_level_c_name"] = levels[0].c_name
        doc["nodes"] = [r[-1].to_dict() for r in results.values()]
    return doc


def _print_verdicts(model: Path, level, newest: list[TileNodeReport], steps: bool) -> None:
    """The one-level summary line, then each node."""
    counts = {s: sum(r.status == s for r in newest) for s in COLOURS}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    target = (
        "DirectML (OpenVINO IR, dmltile's lowering)"
        if newest and newest[0].framework == "openvino"
        else "onnxruntime's DirectML EP"
    )
    console.print(
        escape(f"{model} on {target} at {level.c_name}: {summary} (of {len(newest)} Tile nodes)"),
        highlight=False,
        soft_wrap=True,
    )
    for r in newest:
        _print_node(r, steps)


def _observe_cmd(model: Path, reports: list[TileNodeReport], levels, given: tuple, as_json: bool) -> None:
    """``check --observe``: the verdicts next to what the real provider did; exit 1 on a disagreement."""
    dims, inputs, reps, wheel, values = given
    seen = _observe(model, reports, dims, inputs, reps, wheel, values)
    rows = _agreement(reports, seen)
    status = EXIT_OK if all(row["agrees"] for row in rows) else EXIT_INVALID
    if as_json:
        emit_json(
            {
                "model": str(model),
                "feature_level": levels[0].dotted,
                "wheel": seen.wheel,
                "session_error": seen.session_error,
                "nodes": [{**r.to_dict(), **row} for r, row in zip(reports, rows, strict=True)],
            },
            status,
        )
        raise typer.Exit(status)
    for r in reports:
        _print_node(r)
    _print_agreement(model, seen, rows)
    raise typer.Exit(status)
