"""Reference tables: ``dmltile levels`` (Tile support per feature level), ``rules`` (every code),
``doctor`` (this machine)."""

from __future__ import annotations

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from ..execute.doctor import doctor_report
from ..validate.levels import TENSORS, known_levels, tile_rows
from ..validate.rules import RULES
from ..validate.versions import known_versions
from .app import app, console, emit_json, print_table


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
        emit_json(levels_document())
        return
    table = Table(
        title="DML_OPERATOR_TILE tensor support "
        "(a level without a row has the support of the nearest row at or below it)",
        box=box.SIMPLE_HEAD,
    )
    for col in ("feature level", "tensors", "dimensions", "data types"):
        table.add_column(col, no_wrap=col != "data types")
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
            )
    print_table(table)
    console.print("Known levels: " + ", ".join(lv.dotted for lv in known_levels()), highlight=False)
    console.print(
        "DirectML versions measured (validate --directml; `dmltile directml versions`): "
        + ", ".join(f"{v.version} = {v.max_feature_level.dotted}" for v in known_versions()),
        highlight=False,
    )
    console.print(
        f"Source: {tile_rows()[0].source.split(',')[0]} (learn.microsoft.com), section Tensor support",
        highlight=False,
    )


@app.command("rules")
def rules_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document and nothing else."),
) -> None:
    """List every rule code with its one-line rule, severity and source.

    Example: dmltile rules
    """
    rules = sorted(RULES.values(), key=lambda r: r.code)
    if as_json:
        emit_json(
            [
                {"code": r.code, "rule": r.rule, "severity": r.severity, "phase": r.phase, "source": r.source}
                for r in rules
            ]
        )
        return
    table = Table(box=box.SIMPLE_HEAD, title="dmltile rules")
    table.add_column("code", no_wrap=True)
    table.add_column("rule")
    table.add_column("source")
    for r in rules:
        code = r.code + ("\n[yellow](warning)[/]" if r.severity == "warning" else "")
        table.add_row(code, r.rule, r.source)
    print_table(table)


@app.command("doctor")
def doctor_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document and nothing else."),
) -> None:
    """Report Python, NumPy, onnxruntime and its providers, whether DirectML is usable, and the OS.

    Example: dmltile doctor
    """
    report = doctor_report()
    if as_json:
        emit_json(report)
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
        (
            "GPU adapters",
            ", ".join(report["gpu_adapters"]["names"]) or f"none listed: {report['gpu_adapters']['reason']}",
        ),
        ("openvino", report["openvino"] or "not installed (pip install 'dmltile[openvino]')"),
    ]
    for name, value in rows:
        table.add_row(name, value if "[/]" in value else escape(value))
    print_table(table)
