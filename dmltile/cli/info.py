"""Reference tables: ``dmltile levels`` (Tile support per feature level), ``rules`` (every code, or
one rule with why and an example), ``doctor`` (this machine)."""

from __future__ import annotations

import difflib
import json
import textwrap
from typing import Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from ..execute.doctor import doctor_report
from ..validate.levels import TENSORS, known_levels, tile_rows
from ..validate.rules import FIX_APPLICABILITY, RULES, Example, Rule, all_rules
from ..validate.versions import known_versions, measured_by
from .app import EXIT_OK, app, console, emit_json, fail, print_table


def levels_document() -> dict:
    """The feature-level table as data: every known level, and Tile's support rows."""
    return {
        "operator": "DML_OPERATOR_TILE",
        "known_levels": [lv.dotted for lv in known_levels()],
        "rows": [
            {
                "feature_level": row.feature_level.dotted,
                "feature_level_c_name": row.feature_level.c_name,
                **{
                    t: {
                        "dimension_counts": sorted(row.tensors[t].dimension_counts),
                        "data_types": [d.name for d in row.tensors[t].data_types],
                    }
                    for t in TENSORS
                },
                "source": row.source,
                "measured_by": measured_by(row),
            }
            for row in tile_rows()
        ],
        "directml_versions": [
            {"directml": v.version, "max_feature_level": v.max_feature_level.dotted, "wheel": v.wheel}
            for v in known_versions()
        ],
    }


@app.command("levels")
def levels_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document and nothing else."),
) -> None:
    """Print Tile's tensor support per feature level, as the DirectML page lists it.

    Example: dmltile levels --json
    """
    if as_json:
        emit_json(levels_document(), EXIT_OK)
        return
    table = Table(
        title="DML_OPERATOR_TILE tensor support "
        "(a level without a row has the support of the nearest row at or below it)",
        box=box.SIMPLE_HEAD,
    )
    for col in ("feature level", "tensors", "dimensions", "data types", "measured by (DirectML)"):
        table.add_column(col, no_wrap=col not in ("data types", "measured by (DirectML)"))
    for row in tile_rows():
        sup = row.tensors["InputTensor"]
        same = all(row.tensors[t] == sup for t in TENSORS)
        for t in ("InputTensor\nOutputTensor",) if same else TENSORS:
            s = sup if same else row.tensors[t]
            table.add_row(
                f"{row.feature_level.c_name}\nand above",
                t,
                s.dims_text(),
                ", ".join(d.name for d in s.data_types),
                ", ".join(measured_by(row)) or "no DLL: the documentation only",
            )
    print_table(table)
    console.print(
        "Known levels: " + ", ".join(lv.dotted for lv in known_levels()), highlight=False, soft_wrap=False
    )
    console.print(
        "DirectML versions measured (validate --directml; `dmltile directml versions`): "
        + ", ".join(f"{v.version} = {v.max_feature_level.dotted}" for v in known_versions()),
        highlight=False,
        soft_wrap=False,
    )
    console.print(
        f"Source: {tile_rows()[0].source.split(',')[0]} (learn.microsoft.com), section Tensor support",
        highlight=False,
        soft_wrap=False,
    )


def rule_document(r: Rule) -> dict:
    """One rule as ``dmltile rules --json`` gives it."""
    return {
        "code": r.code,
        "rule": r.rule,
        "severity": r.severity,
        "phase": r.phase,
        "source": r.source,
        "why": r.why,
        "example": r.example.to_dict(),
        "fix_applicability": r.applicability,
    }


def _known_rule(code: str) -> Rule:
    """The rule of ``code`` (any case), or a usage error naming the closest codes."""
    wanted = code.strip().upper()
    if wanted in RULES:
        return RULES[wanted]
    close = difflib.get_close_matches(wanted, list(RULES), n=3, cutoff=0.6)
    guess = f"; did you mean {' or '.join(close)}?" if close else ""
    raise fail(f"unknown rule code {code!r}{guess} (`dmltile rules` lists every code)")


def reproduce_command(example: Example) -> str:
    """The command that reports the example saved as ``example.json``."""
    options = "".join(
        f" --{name} {value}"
        for name, value in (("feature-level", example.feature_level), ("directml", example.directml))
        if value is not None
    )
    return f"dmltile {example.command} example.json{options}"


def compact_json(value: Any, indent: str = "") -> str:
    """JSON with one key per line and arrays of plain values on one line, as a person writes it."""
    inner = indent + "  "
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(k)}: {compact_json(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        return "[\n" + ",\n".join(inner + compact_json(v, inner) for v in value) + f"\n{indent}]"
    return json.dumps(value)


def _print_rule(r: Rule) -> None:
    severity = " [yellow](warning)[/]" if r.severity == "warning" else ""
    console.print(f"[bold]{r.code}[/]{severity}: {escape(r.rule)}", soft_wrap=False)
    console.print(f"\n[bold]Why[/]\n{escape(r.why)}", highlight=False, soft_wrap=False)
    # wrapped between words only: an address cut in two cannot be copied
    source = textwrap.fill(r.source, console.width, break_long_words=False, break_on_hyphens=False)
    console.print(f"\n[bold]Source[/]\n{escape(source)}", highlight=False, soft_wrap=True)
    meaning = FIX_APPLICABILITY[r.applicability]
    console.print(f"\n[bold]Fix[/]\n{r.applicability}: {escape(meaning)}", highlight=False, soft_wrap=False)
    ex = r.example
    if ex.node is not None:
        level = f" at feature level {ex.feature_level}" if ex.feature_level else ""
        console.print(
            f"\n[bold]Example[/]: an ONNX model whose Tile node has these facts{level}; "
            "`dmltile check model.onnx` reports the code for it",
            highlight=False,
            soft_wrap=False,
        )
        console.print(escape(compact_json(ex.node)), highlight=False, soft_wrap=True)
        return
    console.print(
        f"\n[bold]Example[/]: save this as example.json, then run `{reproduce_command(ex)}`", highlight=False
    )
    console.print(escape(compact_json(ex.document)), highlight=False, soft_wrap=True)
    if ex.note:
        console.print(f"({escape(ex.note)})", highlight=False, soft_wrap=False)


@app.command("rules")
def rules_cmd(
    code: str | None = typer.Argument(None, help="One rule code (e.g. DML205): what, why and an example."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document and nothing else."),
) -> None:
    """List every rule code with its one-line rule, severity and source; or one rule in full.

    Example: dmltile rules DML205
    """
    rules = [_known_rule(code)] if code is not None else all_rules()
    if as_json:
        emit_json({"rules": [rule_document(r) for r in rules]}, EXIT_OK)
        return
    if code is not None:
        _print_rule(rules[0])
        return
    table = Table(
        box=box.SIMPLE_HEAD,
        title="dmltile rules (`dmltile rules CODE` for the whole source, why, and an example)",
    )
    table.add_column("code", no_wrap=True)
    table.add_column("rule")
    table.add_column("source")
    for r in rules:
        shown = r.code + ("\n[yellow](warning)[/]" if r.severity == "warning" else "")
        table.add_row(shown, escape(r.rule), escape(source_head(r.source)))
    print_table(table)


def source_head(source: str) -> str:
    """What a source is, without its details (the page's address, the quote, the commit): the
    list stays short, and ``dmltile rules CODE`` gives the whole source."""
    cut = min((i for i in (source.find(" ("), source.find(";")) if i > 0), default=len(source))
    return source[:cut] + (" ..." if cut < len(source) else "")


def hosted_provider_text(hosted: dict) -> str:
    """Per wheel set up by ``make directml``: does its DirectML provider run a Tile here."""
    if hosted["problem"]:
        return f"not set up: {hosted['problem']}"
    return "; ".join(
        f"{w['wheel']} {'runs a Tile' if w['runs_tile'] else 'does NOT run a Tile'} ({w['reason']})"
        for w in hosted["wheels"]
    )


@app.command("doctor")
def doctor_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document and nothing else."),
) -> None:
    """Report Python, NumPy, onnxruntime and its providers, whether DirectML is usable, and the OS.

    Example: dmltile doctor
    """
    report = doctor_report()
    if as_json:
        emit_json(report, EXIT_OK)
        return
    ort_info, dml = report["onnxruntime"], report["directml"]
    table = Table(box=box.SIMPLE_HEAD, show_header=False, title="dmltile doctor")
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    rows = [
        ("dmltile", report["dmltile"]),
        (
            "Python",
            f"{report['python']['version']} ({report['python']['implementation']}) {report['python']['executable']}",
        ),
        ("OS", report["os"]["platform"]),
        ("numpy", report["numpy"] or "[red]not installed[/]"),
        ("copy kernel", report["copy_kernel"]["status"]),
        ("onnx", report["onnx"] or "not installed (pip install 'dmltile[onnx]')"),
        (
            "onnxruntime",
            (
                ort_info["version"]
                + (f" ({', '.join(ort_info['distributions'])})" if ort_info["distributions"] else "")
            )
            if ort_info["version"]
            else "not installed (pip install 'dmltile[onnx]')",
        ),
        ("providers", ", ".join(ort_info["providers"]) or "-"),
        ("DirectML", ("[green]usable[/]: " if dml["usable"] else "[yellow]not usable[/]: ") + dml["reason"]),
        ("onnxruntime-directml", hosted_provider_text(dml["hosted_provider"])),
        (
            "GPU adapters",
            ", ".join(report["gpu_adapters"]["names"]) or f"none listed: {report['gpu_adapters']['reason']}",
        ),
        ("openvino", report["openvino"] or "not installed (pip install 'dmltile[openvino]')"),
    ]
    for name, value in rows:
        table.add_row(name, value if "[/]" in value else escape(value))
    print_table(table)
