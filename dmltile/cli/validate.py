"""``dmltile validate``: every rule, at one feature level or all of them, for many files."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import typer

from ..core.enums import FeatureLevel
from ..core.words import listing
from ..errors import DmlTileError, InputError
from ..validate.api import judge
from ..validate.levels import DEFAULT_FEATURE_LEVEL, known_levels, levels_text
from ..validate.reading import Reading, read_document
from ..validate.report import ValidationReport
from ..validate.rules import unreadable_issues
from ..validate.source import NotJson, looks_like_descriptor
from ..validate.versions import DirectmlVersion, parse_directml_version
from .app import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    app,
    console,
    emit_json,
    err_console,
    fail,
    print_table,
    say,
)
from .checker import (
    FORMATS,
    FixScope,
    UnknownCodes,
    chosen,
    ci_report,
    codes,
    fix_files,
    kept_codes,
    positions,
    with_positions,
)
from .options import feature_level as parse_level
from .options import special_file_problem, stdin_or
from .settings import Settings, SettingsError, describe_settings, load_settings

# A file to judge, and what was read from it while looking through a directory (read once: judged
# from that), or the error reading it gave.
Entry = tuple[Path, Reading | InputError | None]


def expand(
    paths: list[Path], settings: Settings | None = None, force_exclude: bool = False, skip_other: bool = False
) -> tuple[list[Entry], dict[str, str], dict[str, str]]:
    """Files as given; a directory becomes its ``*.json`` files, sorted, leaving out JSON files that
    are neither descriptors nor DxDispatch models (reports, JSON Schemas) and those the settings'
    ``exclude`` names. Files given by name are left out so too with ``force_exclude`` (excluded)
    and ``skip_other`` (other JSON). Also returns the paths that name nothing usable (an empty
    directory) and the files skipped, each with the reason."""
    settings = settings or Settings()
    files: list[Entry] = []
    problems: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for p in paths:
        if str(p) == "-" or not p.is_dir():
            given = _excluded_or_other(p, settings, force_exclude, skip_other) if str(p) != "-" else None
            if isinstance(given, str):
                skipped[str(p)] = given
            else:
                files.append((p, given))
            continue
        found = sorted(q for q in p.glob("*.json"))
        kept = 0
        for q in found:
            why = _excluded_or_other(q, settings)
            if isinstance(why, str):
                skipped[str(q)] = why
            else:
                files.append((q, why))
                kept += 1
        if not kept:
            problems[str(p)] = f"{p}: the directory holds no *.json descriptor files" + (
                f" ({len(found)} other JSON file{'s' * (len(found) != 1)} skipped)" if found else ""
            )
    return files, problems, skipped


def _excluded_or_other(
    path: Path, settings: Settings, exclude: bool = True, other: bool = True
) -> str | Reading | InputError | None:
    """Why a file is skipped (``exclude``: the settings exclude it; ``other``: it is JSON but not a
    descriptor), else what was read from it (None when not read here: a pipe or device, or a file
    that neither question needs read)."""
    pattern = settings.excluded(path) if exclude else None
    if pattern:
        return f"excluded by {pattern!r} in {settings.file}"
    if not other:
        return None
    read = None if special_file_problem(path) else _read(path)
    why = not_a_descriptor(read) if isinstance(read, Reading) else None
    return why or read


def _read(path: Path) -> Reading | InputError:
    try:
        return read_document(path)
    except InputError as e:
        return e


def not_a_descriptor(reading: Reading) -> str | None:
    """Why a JSON file found in a directory is not a document to validate, or None when it may be
    one (broken JSON is still reported, as it may be a descriptor with a typo)."""
    data = reading.single.data
    if isinstance(data, dict) and "$schema" in data:  # whatever else its keys look like
        return "a JSON Schema"
    if reading.is_dxdispatch or isinstance(data, NotJson) or looks_like_descriptor(data):
        return None
    if isinstance(data, dict) and {"files", "feature_levels"} <= data.keys():
        return "a dmltile validate report"
    return "JSON that is neither a descriptor nor a DxDispatch model"


def is_unreadable(report: ValidationReport) -> bool:
    """A document that is not a JSON object (DML001) is unreadable input, exit status 2."""
    return bool(unreadable_issues(report.issues))


def cell(report: ValidationReport) -> str:
    """One matrix cell: ok, or the codes of the errors (warnings in yellow)."""
    if report.valid:
        warn = sorted({i.code for i in report.warnings})
        return "[green]ok[/]" + (f" [yellow]{' '.join(warn)}[/]" if warn else "")
    return "[red]" + " ".join(sorted({i.code for i in report.errors})) + "[/]"


def level_groups(levels: list[FeatureLevel], rows: list[list[str]]) -> list[tuple[str, int]]:
    """Neighbouring levels whose column is identical for every file are one column
    (``2.1-3.0``): the matrix stays narrow and shows where support changes."""
    groups: list[tuple[str, int]] = []
    start = 0
    for j in range(1, len(levels) + 1):
        if j == len(levels) or any(row[j] != row[start] for row in rows):
            label = (
                levels[start].dotted
                if j - 1 == start
                else f"{levels[start].dotted}\nto {levels[j - 1].dotted}"
            )
            groups.append((label, start))
            start = j
    return groups


def print_matrix(levels: list[FeatureLevel], results: dict[str, list[ValidationReport]]) -> None:
    """Rows = files, columns = feature levels (identical neighbours merged), cells = ok or codes."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    rows = [[cell(r) for r in reports] for reports in results.values()]
    groups = level_groups(levels, rows) if rows else [(lv.dotted, j) for j, lv in enumerate(levels)]
    table = Table(
        title="Tile descriptors by feature level (ok, or the codes of the rules broken)", box=box.SIMPLE_HEAD
    )
    table.add_column("file", no_wrap=True)
    for label, _ in groups:
        table.add_column(label, justify="center", min_width=6)
    table.add_column("lowest", min_width=6)
    for (f, reports), row in zip(results.items(), rows, strict=False):
        lowest = next(
            (r.feature_level.dotted for r in reports if r.valid and r.feature_level), "[red]none[/]"
        )
        table.add_row(escape(Path(f).name), *(row[j] for _, j in groups), lowest)
    print_table(table)


def print_reports(results: dict[str, list[ValidationReport]]) -> None:
    """One verdict line per file, then each issue with its code, path, message and fix."""
    for f, reports in results.items():
        r = reports[0]
        verdict = ("valid", "green") if r.valid else ("INVALID", "red")
        level = r.feature_level.c_name if r.feature_level else "?"
        say(f"{f}: ", verdict, f" at {level}")
        for i in r.issues:
            colour = "red" if i.severity == "error" else "yellow"
            say("  ", (i.code, colour), f" {i.path or '<document>'}: {i.message}")
            if i.hint:
                say(f"      fix: {i.hint}")


def _file_entry(f: str, reports: list[ValidationReport], all_levels: bool) -> dict:
    entry: dict = {
        "file": f,
        "valid": all(r.valid for r in reports),
        "reports": [r.to_dict() for r in reports],
    }
    if all_levels:  # the lowest level that accepts it, as the matrix's last column shows
        lowest = next((r.feature_level for r in reports if r.valid and r.feature_level), None)
        entry["min_feature_level"] = lowest.dotted if lowest else None
        entry["min_feature_level_c_name"] = lowest.c_name if lowest else None
    return entry


def _prints_json(as_json: bool, output_format: str) -> bool:
    """Whether stdout is dmltile's JSON report (``--json`` or ``--format json``); a usage error for
    an unknown format or two formats asked for at once."""
    if output_format not in FORMATS:
        raise fail(f"--format {output_format!r}: use one of {', '.join(FORMATS)}")
    if as_json and output_format in ("sarif", "github"):
        raise fail(f"--json prints dmltile's report and --format {output_format} another: choose one")
    return as_json or output_format == "json"


@app.command("validate")
def validate_cmd(
    files: list[Path] = typer.Argument(
        None, help="Descriptor JSON files, directories of them (their *.json files), or - for stdin."
    ),
    feature_level: str | None = typer.Option(
        None,
        "--feature-level",
        "-l",
        help=f"{levels_text()} (also 3_1, DML_FEATURE_LEVEL_3_1, 0x3100); default {DEFAULT_FEATURE_LEVEL}.",
    ),
    all_levels: bool = typer.Option(
        False, "--all-levels", help="Check every feature level; print a files x levels matrix."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document on stdout and nothing else."),
    directml: str | None = typer.Option(
        None,
        "--directml",
        metavar="VERSION",
        help="Answer as this DirectML version's CreateOperator does (e.g. 1.9.1; implies its max level).",
    ),
    select: str | None = typer.Option(
        None,
        "--select",
        help="Only these rules (DML205,DML1: codes or prefixes; an unknown one is a usage error). "
        "Errors that stop a document being read as a Tile descriptor are reported whatever the selection.",
    ),
    ignore: str | None = typer.Option(None, "--ignore", help="Leave out these rules (codes or prefixes)."),
    warnings_as_errors: bool | None = typer.Option(
        None,
        "--warnings-as-errors/--no-warnings-as-errors",
        help="A warning makes the descriptor invalid (exit 1).",
    ),
    output_format: str = typer.Option(
        "text",
        "--format",
        help="text, json (as --json), sarif (SARIF 2.1.0) or github (Actions annotations).",
    ),
    fix: bool = typer.Option(
        False,
        "--fix",
        help="Apply every safe fix of the rules chosen, warnings' included, and write each file (atomically); "
        "say what changed.",
    ),
    unsafe_fixes: bool | None = typer.Option(
        None,
        "--unsafe-fixes/--no-unsafe-fixes",
        help="With --fix or --diff, also apply the fixes that guess what was meant (a misspelt key or enum "
        "value taken for the one it resembles); each left unapplied is named.",
    ),
    diff: bool = typer.Option(
        False,
        "--diff",
        help="Print what --fix would change, as a unified diff; write nothing (also beside --fix).",
    ),
    force_exclude: bool = typer.Option(
        False,
        "--force-exclude",
        help="Leave out the files the settings' exclude names even when given by name.",
    ),
    skip_other_json: bool = typer.Option(
        False,
        "--skip-other-json",
        help="Skip files given by name that are JSON but neither a descriptor nor a DxDispatch model "
        "(no descriptor key at their top, or a JSON Schema), as a folder check does.",
    ),
    show_settings: bool = typer.Option(
        False,
        "--show-settings",
        help="Print the settings in force (from [tool.dmltile] in pyproject.toml, found from here upward, "
        "and the command line) and where each comes from; check nothing.",
    ),
    force: bool = typer.Option(False, "--force", help="With --fix: write read-only files too."),
) -> None:
    """Check descriptors against every DirectML rule.

    Every issue comes in one pass: after an unknown key, enum value or misspelt wrapper, the rest is
    judged on the document as the fix would leave it. Settings come from [tool.dmltile] in
    pyproject.toml (found from the working directory upward); the command line wins.

    Exit status: 0 every check passed, 1 a descriptor is invalid (with --all-levels: at some
    level), 2 a usage error or unreadable input (missing file, not JSON, unknown level or rule code).

    Example: dmltile validate examples/doc_example.json --feature-level 1.0
    """
    settings = _settings(feature_level, directml, select, ignore, warnings_as_errors, unsafe_fixes)
    if show_settings:
        _show_settings(settings, as_json or output_format != "text")
    if not files:
        raise fail("give the descriptor files or directories to check (or - for standard input)")
    as_json = _prints_json(as_json, output_format)
    machine = as_json or output_format != "text"  # stdout carries one format; human lines go to stderr
    levels, version = _levels(settings.get("feature-level"), all_levels, settings.get("directml"))
    select, ignore = settings.get("select"), settings.get("ignore")
    warnings_as_errors = bool(settings.get("warnings-as-errors"))
    paths, unreadable, skipped = expand(files, settings, force_exclude, skip_other_json)
    results, not_covered = _judge_all(paths, levels, version, unreadable)
    results = chosen(results, select, ignore, warnings_as_errors)
    if fix or diff:
        say = (err_console if machine else console).out
        scope = FixScope(kept_codes(select, ignore), bool(settings.get("unsafe-fixes")), version)
        write = fix and not diff  # --diff shows the change and writes nothing, even beside --fix
        fixed = _fix_or_diff(results, [path for path, _ in paths], levels, version, write, say, scope, force)
        results = chosen(fixed, select, ignore, warnings_as_errors)
    invalid = any(not r.valid for reports in results.values() for r in reports)
    status = EXIT_USAGE if unreadable else (EXIT_INVALID if invalid else EXIT_OK)
    if output_format in ("sarif", "github"):
        print(ci_report(output_format, results))  # one document as it is, no rich needed
        raise typer.Exit(status)
    if as_json and unreadable and all(f in unreadable for f in results):
        raise fail("; ".join(unreadable.values()))  # nothing judged: the document every command gives
    if as_json:
        _emit_report(status, levels, results, all_levels, unreadable, not_covered, skipped)
    else:
        print_text(levels, results, all_levels, unreadable, not_covered, skipped)
    raise typer.Exit(status)


def _show_settings(settings: Settings, machine: bool) -> None:
    """``--show-settings``: each setting in force and where it comes from, then exit 0."""
    if machine:
        raise fail("--show-settings prints text lines; leave out --json and --format")
    for line in describe_settings(settings):
        print(line)
    raise typer.Exit(EXIT_OK)


def _emit_report(
    status: int,
    levels: list[FeatureLevel],
    results: dict[str, list[ValidationReport]],
    all_levels: bool,
    unreadable: dict[str, str],
    not_covered: dict[str, str],
    skipped: dict[str, str],
) -> None:
    """The ``--json`` report: every file's reports, what was unreadable, not covered or skipped."""
    spots = positions(results)
    emit_json(
        {
            "valid": status == EXIT_OK,
            "exit_status": status,
            "feature_levels": [lv.dotted for lv in levels],
            "files": [
                with_positions(_file_entry(f, reports, all_levels), spots.get(f, {}))
                for f, reports in results.items()
            ],
            "unreadable": [{"file": f, "error": e} for f, e in unreadable.items()],
            "not_covered": [{"file": f, "operator": op} for f, op in not_covered.items()],
            "skipped": [{"file": f, "reason": why} for f, why in skipped.items()],
        },
        status,
    )


def _settings(
    feature_level: str | None,
    directml: str | None,
    select: str | None,
    ignore: str | None,
    warnings_as_errors: bool | None,
    unsafe_fixes: bool | None,
) -> Settings:
    """The settings in force: the command line's options over ``[tool.dmltile]`` over the defaults;
    exit 2 for a settings file or a rule code that cannot be used."""
    try:
        settings = load_settings()
    except SettingsError as e:
        raise fail(str(e)) from None
    settings.given("feature-level", feature_level, None)
    settings.given("directml", directml, None)
    settings.given("select", select, None)
    settings.given("ignore", ignore, None)
    settings.given("warnings-as-errors", warnings_as_errors, False)
    settings.given("unsafe-fixes", unsafe_fixes, False)
    settings.given("exclude", None, [])
    for key in ("select", "ignore"):
        try:
            codes(
                settings.get(key),
                f"--{key}" if settings.sources[key] == "command line" else f"{settings.file}: {key}",
            )
        except UnknownCodes as e:
            raise fail(str(e)) from None
    return settings


def _judge_all(
    paths: list[Entry],
    levels: list[FeatureLevel],
    version: DirectmlVersion | None,
    unreadable: dict[str, str],
) -> tuple[dict[str, list[ValidationReport]], dict[str, str]]:
    """Every file judged at every level: the reports by label and the dispatchables not covered;
    a file that cannot be read goes into ``unreadable`` with the reason."""
    results: dict[str, list[ValidationReport]] = {}
    not_covered: dict[str, str] = {}
    for path, read in paths:
        problem = special_file_problem(path)
        if problem:
            unreadable[str(path)] = problem
            continue
        try:
            rows, others = judge_file(path, levels, version, read)
        except InputError as e:
            unreadable[str(path)] = str(e)
            continue
        results.update(rows)
        not_covered.update(others)
    for f, reports in list(results.items()):
        if is_unreadable(reports[0]):
            unreadable[f] = f"{f}: " + "; ".join(
                f"{i.code} {i.message}" for i in unreadable_issues(reports[0].issues)
            )
    return results, not_covered


def _fix_or_diff(
    results: dict[str, list[ValidationReport]],
    files: list[Path],
    levels: list[FeatureLevel],
    version: DirectmlVersion | None,
    write: bool,
    say: Callable[[str], None],
    scope: FixScope,
    force: bool = False,
) -> dict[str, list[ValidationReport]]:
    """``--fix`` (write the files; the verdict is then the fixed files'; read-only ones only with
    ``force``) or ``--diff``: the fixes in ``scope`` only."""
    fix_files([str(p) for p in files], levels[-1], write=write, say=say, scope=scope, force=force)
    return _judged_again(results, files, levels, version) if write else results


def _judged_again(
    results: dict[str, list[ValidationReport]],
    files: list[Path],
    levels: list[FeatureLevel],
    version: DirectmlVersion | None,
) -> dict[str, list[ValidationReport]]:
    """The reports again after ``--fix`` wrote the files (standard input keeps its reports)."""
    out = dict(results)
    for path in files:
        if str(path) != "-" and path.is_file():
            rows = judge_file(path, levels, version)[0]
            out.update({label: reports for label, reports in rows.items() if label in out})
    return out


def _levels(
    feature_level: str | None, all_levels: bool, directml: str | None
) -> tuple[list[FeatureLevel], DirectmlVersion | None]:
    """The levels to judge at and the DirectML version to judge as, from the options (None: not
    given; exit 2 when they are unknown or contradict each other)."""
    if all_levels and feature_level is not None:
        raise fail("give either --feature-level or --all-levels, not both")
    version = None
    if directml is not None:
        try:
            version = parse_directml_version(directml)
        except DmlTileError as e:
            raise fail(f"--directml: {e}") from None
    if all_levels:
        return [lv for lv in known_levels() if version is None or lv <= version.max_feature_level], version
    if version is not None and feature_level is None:
        return [version.max_feature_level], version
    return [parse_level(DEFAULT_FEATURE_LEVEL if feature_level is None else feature_level)], version


def judge_file(
    path: Path,
    levels: list[FeatureLevel],
    version: DirectmlVersion | None,
    read: Reading | InputError | None = None,
) -> tuple[dict[str, list[ValidationReport]], dict[str, str]]:
    """Read one file (or - for stdin) once, unless ``read`` holds it already, and judge each
    document in it at every level: the reports by label (the file, or ``<file> dispatchable
    '<name>'`` for each Tile dispatchable of a DxDispatch model), and the dispatchables not
    covered (label -> type)."""
    if isinstance(read, InputError):
        raise read
    reading = read if read is not None else read_document(stdin_or(path))
    shown = "<stdin>" if str(path) == "-" else str(path)

    def label(name: str | None) -> str:
        return shown if name is None else f"{shown} dispatchable '{name}'"

    rows = {label(d.name): judge(d, levels, version)[1] for d in reading.documents}
    return rows, {label(name): op for name, op in reading.not_covered.items()}


NOT_COVERED_LINES = 20  # dispatchables named as not covered; the rest are counted


def print_text(
    levels: list[FeatureLevel],
    results: dict[str, list[ValidationReport]],
    all_levels: bool,
    unreadable: dict[str, str],
    not_covered: dict[str, str],
    skipped: dict[str, str],
) -> None:
    """The human output: the matrix or the reports, then what was not covered, skipped or unreadable."""
    readable = {f: reports for f, reports in results.items() if f not in unreadable}
    if all_levels:
        print_matrix(levels, readable)
    else:
        print_reports(readable)
    for f, op in itertools.islice(not_covered.items(), NOT_COVERED_LINES):
        console.print(
            f"{f}: [yellow]not covered[/] ({op}; dmltile checks DML_OPERATOR_TILE only)", highlight=False
        )
    if len(not_covered) > NOT_COVERED_LINES:
        more = len(not_covered) - NOT_COVERED_LINES
        console.print(f"... and {more} more not covered (--json lists them all)", highlight=False)
    if skipped:
        err_console.print(
            f"skipped {len(skipped)} JSON file{'s' * (len(skipped) != 1)}: "
            + listing((f"{Path(f).name} ({why})" for f, why in skipped.items()), len(skipped)),
            highlight=False,
            markup=False,
        )
    for message in unreadable.values():
        err_console.print("[bold red]unreadable:[/] ", end="")
        err_console.print(message, highlight=False, markup=False)
