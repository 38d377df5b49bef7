"""What a checker's command line offers beside the verdict: choosing the rules (``--select``,
``--ignore``, ``--warnings-as-errors``), where each issue is in its file (line and column), the
formats CI reads (SARIF 2.1.0, GitHub annotations), and ``--fix`` / ``--diff``."""

from __future__ import annotations

import difflib
import importlib.metadata
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..core.enums import FeatureLevel
from ..core.words import plural
from ..validate.api import judge
from ..validate.dxdispatch import DISPATCHABLE, model_of, split_model
from ..validate.fixes import apply_all, wrapped
from ..validate.reading import Document
from ..validate.report import Issue, ValidationReport
from ..validate.rules import RULES
from ..validate.rules.edits import describe
from ..validate.source import is_dispatchable, looks_like_dxdispatch, read_source
from .files import check_target, encode_text, read_text_form, write_atomic

if TYPE_CHECKING:
    from ..validate.locate import Position
    from ..validate.versions import DirectmlVersion

FORMATS = ("text", "json", "sarif", "github")
Results = dict[str, list[ValidationReport]]


class UnknownCodes(ValueError):
    """A ``--select``/``--ignore`` value naming no rule: a usage error, never an empty selection."""


def codes(option: str | None, where: str = "--select") -> set[str]:
    """``DML205,DML1`` -> the rule codes named, a prefix naming every code it starts. A name that
    is no code and starts none raises UnknownCodes naming the known codes: a typo must not select
    nothing and pass every file."""
    wanted = {c.strip().upper() for c in (option or "").split(",") if c.strip()}
    unknown = sorted(w for w in wanted if not any(code.startswith(w) for code in RULES))
    if unknown:
        raise UnknownCodes(
            f"{where}: unknown rule code{'s' * (len(unknown) != 1)} or prefix{'es' * (len(unknown) != 1)} "
            f"{', '.join(unknown)}; the codes are {', '.join(sorted(RULES))} (a prefix such as DML2 "
            "names every code it starts)"
        )
    return {code for code in RULES if any(code.startswith(w) for w in wanted)}


def kept_codes(select: str | None, ignore: str | None) -> frozenset[str]:
    """The rule codes ``--select`` names (every rule without it) less those ``--ignore`` names."""
    return frozenset((codes(select) if select else set(RULES)) - codes(ignore, "--ignore"))


def unfiltered(issue: Issue) -> bool:
    """An error that says the document cannot be read as a Tile descriptor at all (a document
    rule's): no selection hides it, as a linter reports a syntax error whatever rules it was asked
    for, so a filter never turns an unreadable document valid."""
    rule = RULES.get(issue.code)
    return rule is None or (rule.phase == "parse" and issue.severity == "error")


def chosen(results: Results, select: str | None, ignore: str | None, warnings_as_errors: bool) -> Results:
    """The reports keeping only the issues of the rules selected and not ignored (and every error
    that stops the document being read); with ``warnings_as_errors`` a warning makes its report
    invalid as an error does."""
    keep = kept_codes(select, ignore)
    out: Results = {}
    for f, reports in results.items():
        out[f] = []
        for r in reports:
            issues = [i for i in r.issues if i.code in keep or unfiltered(i)]
            bad = [i for i in issues if i.severity == "error" or warnings_as_errors]
            out[f].append(r.model_copy(update={"issues": issues, "valid": not bad}))
    return out


def positions(results: Results) -> dict[str, dict[str, Position]]:
    """For each file with issues, the line and column of each issue's path (read from the file's
    text; standard input and DxDispatch dispatchables, whose paths point into another shape, get none)."""
    from ..validate.locate import locate, places  # only a machine-read report gives lines and columns

    out: dict[str, dict[str, Position]] = {}
    for f, reports in results.items():
        path = Path(f)
        if f == "<stdin>" or not path.is_file() or not any(r.issues for r in reports):
            continue
        try:
            found = places(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        spots = {i.path: locate(found, i.path) for r in reports for i in r.issues}
        out[f] = {p: at for p, at in spots.items() if at is not None}
    return out


def with_positions(entry: dict, spots: dict[str, Position]) -> dict:
    """A file's ``--json`` entry with ``line`` and ``column`` beside each issue's path."""
    for report in entry["reports"]:
        for issue in report["issues"]:
            line, column = spots.get(issue["path"], (None, None))
            issue["line"], issue["column"] = line, column
    return entry


def github(results: Results, spots: dict[str, dict[str, Position]]) -> str:
    """GitHub Actions workflow commands: one ``::error`` or ``::warning`` annotation per issue."""
    lines = []
    for f, reports in results.items():
        for i in reports[0].issues:
            line, column = spots.get(f, {}).get(i.path, (1, 1))
            text = f"{i.path or '<document>'}: {i.message}" + (f" (fix: {i.hint})" if i.hint else "")
            text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
            lines.append(f"::{i.severity} file={f},line={line},col={column},title={i.code}::{text}")
    return "\n".join(lines)


def _sarif_result(f: str, i: Issue, at: Position | None) -> dict:
    region = {"startLine": at[0], "startColumn": at[1]} if at else {"startLine": 1}
    result: dict[str, Any] = {
        "ruleId": i.code,
        "level": i.severity,
        "message": {
            "text": f"{i.path or '<document>'}: {i.message}" + (f" (fix: {i.hint})" if i.hint else "")
        },
        "locations": [
            {"physicalLocation": {"artifactLocation": {"uri": Path(f).as_posix()}, "region": region}}
        ],
    }
    return result


def sarif(results: Results, spots: dict[str, dict[str, Position]]) -> dict:
    """A SARIF 2.1.0 log: one run of dmltile, its rules from the registry, one result per issue."""
    rules = [
        {
            "id": r.code,
            "shortDescription": {"text": r.rule},
            "fullDescription": {"text": r.why},
            "defaultConfiguration": {"level": r.severity},
            "properties": {"source": r.source},
        }
        for r in RULES.values()
    ]
    found = [
        _sarif_result(f, i, spots.get(f, {}).get(i.path))
        for f, reports in results.items()
        for i in reports[0].issues
    ]
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "dmltile",
                        "version": importlib.metadata.version("dmltile"),
                        "rules": rules,
                    }
                },
                "results": found,
            }
        ],
    }


def ci_report(output_format: str, results: Results) -> str:
    """The results as CI reads them: a SARIF 2.1.0 log, or GitHub Actions annotations."""
    spots = positions(results)
    return json.dumps(sarif(results, spots), indent=2) if output_format == "sarif" else github(results, spots)


@dataclass(frozen=True)
class FixScope:
    """The fixes ``--fix`` applies: those of the rules in ``codes`` (and of the errors that stop a
    document being read), the unsafe ones (a guess at what was meant) only with ``unsafe``, found as
    the report found its issues: as DirectML ``version`` judges (None: as the feature level does)."""

    codes: frozenset[str]
    unsafe: bool = False
    version: DirectmlVersion | None = None


def _fixed(
    document: Any, level: FeatureLevel, rounds: int, scope: FixScope, warnings: list[Issue] | None = None
) -> tuple[Any, list[str], list[str]]:
    """The descriptor with every fix of its report applied together (warnings' too), judged again
    and fixed again at most ``rounds`` times; what changed, one line per issue fixed; and the fixes
    left because they are unsafe. Only the rules in ``scope`` are fixed, as a linter fixes only the
    rules it was asked to check, and the errors that stop the document being read, since the other
    fixes are made on the document as those leave it."""
    changes: list[str] = []
    hidden: list[str] = []
    for _ in range(rounds):
        # a DxDispatch dispatchable's reading warnings (DML402) hold for its first form only
        report = judge(Document(document, warnings=warnings or []), [level], scope.version)[1][0]
        warnings = None
        fixable = [i for i in report.issues if i.fix and (i.code in scope.codes or unfiltered(i))]
        fixable, left = _applicable(fixable, scope.unsafe)
        hidden = [f"{i.code} {i.path}: {describe(list(i.fix))}" for i in left]
        fixed = apply_all(document, fixable) if fixable else None
        if fixed is None or fixed == wrapped(document):
            break
        changes += [f"{i.code} {i.path}: {describe(list(i.fix))}" for i in fixable]
        document = fixed
    return document, changes, hidden


def _applicable(fixable: list[Issue], unsafe: bool) -> tuple[list[Issue], list[Issue]]:
    """The fixes to apply and those left as unsafe. When a guess that makes the document readable
    is left, every fix is: the others were found on the document as that guess leaves it."""
    if unsafe:
        return fixable, []
    left = [i for i in fixable if i.fix_applicability == "unsafe"]
    if any(unfiltered(i) for i in left):
        return [], fixable
    return [i for i in fixable if i not in left], left


def _fixed_model(
    data: dict, level: FeatureLevel, rounds: int, scope: FixScope
) -> tuple[Any, list[str], list[str]]:
    """A DxDispatch model (or lone dispatchable) with each Tile dispatchable fixed as a descriptor
    and written back as the model wrote it; what changed, each line naming its dispatchable."""
    from ..validate.splice import dispatchable_with  # writing fixes back is --fix's and --diff's alone

    model, _ = model_of(data)
    if model is None:
        return data, [], []
    dispatchables = dict(model["dispatchables"])
    changes: list[str] = []
    hidden: list[str] = []
    parts = split_model(model)
    for name, canonical in parts.tiles.items():
        fixed, made, left = _fixed(canonical, level, rounds, scope, parts.warnings.get(name))
        hidden += [f"{name}: {line}" for line in left]
        try:
            dispatchables[name] = (
                dispatchable_with(dispatchables[name], fixed) if made else dispatchables[name]
            )
        except ValueError:
            continue  # left as it is: the fix cannot be written as DxDispatch reads it
        changes += [f"{name}: {line}" for line in made]
    if is_dispatchable(data):
        return dispatchables[DISPATCHABLE], changes, hidden
    return {**model, "dispatchables": dispatchables}, changes, hidden


def fixed_document(
    path: Path, level: FeatureLevel, rounds: int = 3, scope: FixScope | None = None
) -> tuple[Any, list[str], list[str]]:
    """The file's descriptor (or DxDispatch model) with every fix of its report (of the rules in
    ``scope``, the unsafe ones only if it says so) applied together, judged again and fixed again at
    most ``rounds`` times; what changed, one line per issue; and the unsafe fixes left."""
    scope = scope or FixScope(frozenset(RULES))
    document = read_source(path)
    if not isinstance(document, dict):
        return document, [], []
    if looks_like_dxdispatch(document):
        return _fixed_model(document, level, rounds, scope)
    return _fixed(document, level, rounds, scope)


def _writer(data: bytes) -> Callable[[IO[bytes]], object]:
    return lambda out: out.write(data)


def _fixed_text(old: str, document: Any, say: Callable[[str], None], f: str) -> str:
    """The file's text with the fixes made in place (its layout, key order and comments kept); in
    the canonical layout only when the fixed values cannot be placed in it, and then saying so."""
    from ..validate.splice import keep_layout

    try:
        return keep_layout(old, document)
    except ValueError:
        say(f"{f}: its layout could not be kept; written in the canonical layout")
        return json.dumps(document, indent=2) + "\n"


def fix_files(
    files: list[str],
    level: FeatureLevel,
    write: bool,
    say: Callable[[str], None],
    scope: FixScope | None = None,
    force: bool = False,
) -> None:
    """``--fix`` (write each file, atomically, in its own encoding and line endings; a read-only
    one only with ``force``) or ``--diff`` (print what ``--fix`` would change); then the fixes left
    as unsafe, and the option that applies them, as ruff says it."""
    named = [(f, Path(f)) for f in files if f not in ("-", "<stdin>") and Path(f).is_file()]
    for _, path in named if write else []:  # every file writable before any is written
        check_target(path, "--fix", force, replace=True)
    hidden = 0
    for f, path in named:
        document, changes, left = fixed_document(path, level, scope=scope)
        hidden += len(left)
        for line in left:
            say(f"{f}: unsafe fix left: {line}")
        if not changes:
            continue
        old, form = read_text_form(path)
        new = _fixed_text(old, document, say, f)
        if write:
            write_atomic(path, _writer(encode_text(new, form)), "--fix", force=force, replace=True)
            say(f"{f}: fixed ({plural(len(changes), 'issue')})")
            for line in changes:
                say(f"  {line}")
        else:
            diff = difflib.unified_diff(old.splitlines(True), new.splitlines(True), f, f"{f} (fixed)")
            say("".join(diff).rstrip("\n"))
    if hidden:
        say(f"{plural(hidden, 'hidden fix', 'hidden fixes')} can be enabled with the --unsafe-fixes option")
