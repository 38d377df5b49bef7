"""``dmltile validate``: every rule, for one level or all of them, for many files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from ..document import InputError
from ..feature_levels import known_levels
from ..validation import DEFAULT_FEATURE_LEVEL, parse_feature_level, validate as validate_descriptor
from .app import EXIT_INVALID, EXIT_OK, EXIT_USAGE, app, console, fail
from .dxdispatch import dxdispatch_results  # DxDispatch models: one report per Tile dispatchable


def expand(paths: List[Path]) -> List[Path]:
    """Files as given; directories become their *.json files, sorted."""
    out: List[Path] = []
    for p in paths:
        out.extend(sorted(p.glob("*.json")) if p.is_dir() else [p])
    return out


@app.command("validate")
def validate_cmd(
    files: List[Path] = typer.Argument(..., help="Descriptor JSON files or directories of them."),
    feature_level: str = typer.Option(DEFAULT_FEATURE_LEVEL, "--feature-level", "-l", help="e.g. 1.0, 3.1, 4.1."),
    all_levels: bool = typer.Option(False, "--all-levels", help="Check every feature level; print a matrix."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document and nothing else."),
) -> None:
    """Check descriptors against every DirectML rule.

    Example: dmltile validate examples/doc_example.json --feature-level 1.0
    """
    try:
        levels = list(known_levels()) if all_levels else [parse_feature_level(feature_level)]
    except ValueError as e:
        raise fail(str(e))
    results, unreadable, not_covered = {}, {}, {}
    for path in expand(files):
        try:
            dx_results = dxdispatch_results(path, levels)
            if dx_results is not None:
                results.update(dx_results[0])
                not_covered.update(dx_results[1])
                continue
            results[str(path)] = [validate_descriptor(path, lv) for lv in levels]
        except InputError as e:
            unreadable[str(path)] = str(e)
    status = EXIT_USAGE if unreadable else (
        EXIT_OK if all(r.valid for reports in results.values() for r in reports) else EXIT_INVALID)
    if not all_levels and any(any(i.code == "DML001" for i in reports[0].issues) for reports in results.values()):
        status = EXIT_USAGE
    if as_json:
        doc = {"files": [{"file": f, "reports": [r.to_dict() for r in reports]} for f, reports in results.items()],
               "unreadable": [{"file": f, "error": e} for f, e in unreadable.items()],
               "not_covered": [{"file": f, "operator": op} for f, op in not_covered.items()]}
        print(json.dumps(doc, indent=2))
        raise typer.Exit(status)
    for f, e in unreadable.items():
        console.print(f"[red]unreadable[/] {e}", highlight=False)
    for f, op in not_covered.items():
        console.print(f"{f}: [yellow]not covered[/] ({op}; dmltile checks DML_OPERATOR_TILE only)", highlight=False)
    if all_levels:
        table = Table(title="Tile descriptors by feature level")
        table.add_column("file")
        for lv in levels:
            table.add_column(lv.dotted, justify="center")
        for f, reports in results.items():
            table.add_row(Path(f).name, *(("[green]ok[/]" if r.valid else "[red]" + " ".join(sorted(set(i.code for i in r.errors))) + "[/]") for r in reports))
        console.print(table)
    else:
        for f, reports in results.items():
            r = reports[0]
            verdict = "[green]valid[/]" if r.valid else "[red]INVALID[/]"
            console.print(f"{f}: {verdict} at {r.feature_level.c_name}", highlight=False)
            for i in r.issues:
                colour = "red" if i.severity == "error" else "yellow"
                console.print(f"  [{colour}]{i.code}[/] {i.path or '<document>'}: {i.message}", highlight=False, markup=True)
                if i.hint:
                    console.print(f"      fix: {i.hint}", highlight=False, markup=False)
    raise typer.Exit(status)
