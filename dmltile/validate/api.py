"""validate(), check() and min_feature_level(): every rule, every issue, never a raise for bad content."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ..core.enums import FeatureLevel
from ..core.operator import OperatorDesc
from ..core.shape import tile_output_sizes
from ..errors import DescriptorError, DmlTileError
from .document import MAX_ISSUES, Unparsed, cap_issues, parse_data, parse_descriptor, parse_document
from .fixes import as_fixed, attach_fixes
from .levels import DEFAULT_FEATURE_LEVEL, known_levels, levels_text, newest_level, parse_feature_level
from .reading import Document, read_document
from .report import Issue, ValidationReport
from .rules import descriptor_checks, issue, level_checks
from .source import Source
from .versions import DirectmlVersion, parse_directml_version, version_issues


def descriptor_issues(desc: OperatorDesc) -> list[Issue]:
    """Issues from the rules that do not depend on the feature level."""
    return [i for check in descriptor_checks() for i in check(desc)]


def level_issues(desc: OperatorDesc, level: FeatureLevel) -> list[Issue]:
    """Issues from the feature-level rules at ``level``."""
    return [i for check in level_checks() for i in check(desc, level)]


def _output_sizes(desc: OperatorDesc) -> list[int] | None:
    if len(desc.input.sizes) != len(desc.repeats):
        return None
    return list(tile_output_sizes(desc.input.sizes, desc.repeats))


def _has_errors(issues: list[Issue]) -> bool:
    return any(i.severity == "error" for i in issues)


def _target(
    feature_level: Any, directml: Any
) -> tuple[FeatureLevel | None, DirectmlVersion | None, list[Issue]]:
    """The level (and DirectML version) to judge at; a version implies its max level, and a level
    above a version's max is refused."""
    version = None
    if directml is not None:
        try:
            version = parse_directml_version(directml)
        except DmlTileError as e:
            return (
                None,
                None,
                [issue("DML305", "directml", str(e), "use one of the versions `dmltile levels` lists")],
            )
        if feature_level is None or feature_level == DEFAULT_FEATURE_LEVEL:
            return version.max_feature_level, version, []
    try:
        level = parse_feature_level(feature_level)
    except DmlTileError as e:
        return (
            None,
            version,
            [issue("DML303", "feature_level", str(e), f"use a level from {levels_text()}, e.g. 4.1")],
        )
    if version is not None and level > version.max_feature_level:
        return (
            None,
            version,
            [
                issue(
                    "DML305",
                    "feature_level",
                    f"feature level {level.dotted} is above what {version.label} supports",
                    f"use {version.max_feature_level.dotted} or lower, or a newer DirectML",
                )
            ],
        )
    return level, version, []


def _judge(document: dict, level: FeatureLevel) -> list[Issue]:
    """Every issue of a document at a level, without fixes (what a fix is checked against)."""
    desc, issues = parse_descriptor(document, level)
    if desc is not None:
        issues = issues + descriptor_issues(desc) + level_issues(desc, level)
    return issues


def _fixed(
    document: Document, issues: list[Issue], level: FeatureLevel | None, known: list[Issue] | None = None
) -> list[Issue]:
    """The issues with the fix each has in the document (for a DxDispatch dispatchable: in its
    canonical form, which the issues' paths point into); ``known``: the issues found beyond them."""
    raw = document.data.to_dict() if isinstance(document.data, OperatorDesc) else document.data
    if not isinstance(raw, dict):
        return issues
    return attach_fixes(raw, issues, level, _judge, known)


def _beyond(
    document: Document,
    parsed: Unparsed,
    found: list[Issue],
    level: FeatureLevel | None,
    version: DirectmlVersion | None,
) -> list[Issue]:
    """The issues of a document that does not parse, found on the document as the fixes of its
    reading errors (an unknown key, an unknown enum name, a misspelt wrapper) would leave it: the
    reading errors that only show there (an unknown name inside a misspelt wrapper), then every rule
    that can still be judged, each issue with its own fix, its paths into the document as the fixes
    before it leave it. None when a reading error has no fix, the document is no Tile descriptor at
    all, or its reading errors already fill the report."""
    if not parsed.errors or len(found) >= MAX_ISSUES or any(i.code == "DML207" for i in found):
        return []
    stages: list[tuple[dict, list[Issue]]] = []  # each later round of reading errors, on its document
    data: Any = document.data
    for _ in range(_READING_ROUNDS):
        fixed = as_fixed(data, found, level or newest_level())
        desc = parse_data(fixed) if fixed is not None else None
        if fixed is None or isinstance(desc, OperatorDesc) or desc is None or not desc.errors:
            break
        found = desc.issues(level)
        if any(i.code == "DML207" for i in found):
            break
        stages.append((fixed, found))
        data = fixed
    later: list[Issue] = []
    if isinstance(desc, OperatorDesc) and fixed is not None:
        later = [*descriptor_issues(desc), *(level_issues(desc, level) if level is not None else [])]
        if version is not None:
            later = version_issues(desc, later, version)
        later = attach_fixes(fixed, later, level, _judge)
    return [i for doc, issues in stages for i in attach_fixes(doc, issues, level, _judge, later)] + later


_READING_ROUNDS = 3  # a misspelt wrapper can hide reading errors inside it, found once it is renamed


def judge(
    document: Document,
    levels: Sequence[FeatureLevel | None],
    version: DirectmlVersion | None = None,
    target_issues: Sequence[Issue] = (),
) -> tuple[OperatorDesc | None, list[ValidationReport]]:
    """One report per level for one document, from one parse: the model (None when it cannot be
    parsed) and the reports. A level of None (a target that could not be resolved, reported in
    ``target_issues``) runs only the rules that do not depend on the level."""
    parsed = parse_document(document)
    if not isinstance(parsed, OperatorDesc):  # the issues are parse's, already capped
        reports = []
        for level in levels:
            found = parsed.issues(level)
            later = _beyond(document, parsed, found, level, version)
            first = _fixed(document, [*target_issues, *found], level, later)
            reports.append(_report(cap_issues(first + later) if later else first, level, None, document))
        return None, reports
    base = descriptor_issues(parsed)
    reports = []
    for level in levels:
        issues = [*target_issues, *base, *(level_issues(parsed, level) if level is not None else [])]
        if version is not None:
            issues = version_issues(parsed, issues, version)
        issues = cap_issues(_fixed(document, issues, level))
        reports.append(_report(issues, level, _output_sizes(parsed), document))
    return parsed, reports


def _report(
    issues: list[Issue], level: FeatureLevel | None, sizes: list[int] | None, document: Document
) -> ValidationReport:
    """The report: valid unless an issue is an error; the reading's warnings come last, with the
    fixes their rules have."""
    issues = issues + (_fixed(document, document.warnings, level) if document.warnings else [])
    return ValidationReport(
        valid=not _has_errors(issues), feature_level=level, output_sizes=sizes, issues=issues
    )


def parse_and_validate(
    source: Source, feature_level: Any = DEFAULT_FEATURE_LEVEL, directml: Any = None
) -> tuple[OperatorDesc | None, ValidationReport]:
    """Read and parse once, run every rule: the model (None when it cannot be parsed) and the report.

    ``directml="1.9.1"`` answers as that DirectML version's CreateOperator does (measured); the
    version implies its max feature level unless a lower ``feature_level`` is given. Each issue
    carries the fix computed from this document (``Issue.fix``).
    """
    level, version, issues = _target(feature_level, directml)
    desc, [report] = judge(read_document(source).single, [level], version, issues)
    return desc, report


def validate(
    source: Source, feature_level: Any = DEFAULT_FEATURE_LEVEL, directml: Any = None
) -> ValidationReport:
    """Check a descriptor against every rule at ``feature_level`` (default: the newest level), or as
    DirectML version ``directml`` answers (``"1.9.1"``; implies its max level).

    Accepts a path, JSON text, a dict or an OperatorDesc. Bad content never raises: it becomes
    issues in the report. Only input that cannot be read at all (a missing file) raises InputError.
    """
    return parse_and_validate(source, feature_level, directml)[1]


def check(source: Source, feature_level: Any = DEFAULT_FEATURE_LEVEL, directml: Any = None) -> OperatorDesc:
    """The parsed descriptor when it is valid at ``feature_level`` (and for ``directml``, a DirectML
    version); DescriptorError with every issue otherwise."""
    desc, report = parse_and_validate(source, feature_level, directml)
    if not report.valid:
        raise DescriptorError(
            report.errors,
            context=f"descriptor is invalid at {feature_level}: "
            f"{len(report.errors)} error{'s' * (len(report.errors) != 1)}",
        )
    assert desc is not None  # a document that does not parse has errors, so the report is not valid
    return desc


def _accepting_levels(source: Source, directml: Any = None) -> Iterator[FeatureLevel]:
    """The known levels at which the descriptor is valid, lowest first (none when it is broken);
    with ``directml``, only the levels that version has, judged as it judges."""
    desc = parse_document(read_document(source).single)
    if not isinstance(desc, OperatorDesc):
        return
    version = parse_directml_version(directml) if directml is not None else None
    base = descriptor_issues(desc)
    for level in known_levels():
        if version is not None and level > version.max_feature_level:
            return
        issues = base + level_issues(desc, level)
        if not _has_errors(version_issues(desc, issues, version) if version is not None else issues):
            yield level


def min_feature_level(source: Source, directml: Any = None) -> FeatureLevel | None:
    """The lowest feature level at which the descriptor is valid (for ``directml``, among that
    version's levels), or None when none accepts it."""
    return next(_accepting_levels(source, directml), None)


def accepted_levels(source: Source) -> list[FeatureLevel]:
    """Every known feature level at which the descriptor is valid."""
    return list(_accepting_levels(source))
