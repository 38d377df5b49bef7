"""validate(), check() and min_feature_level(): every rule, every issue, never a raise for bad content."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..core.enums import FeatureLevel
from ..core.operator import OperatorDesc
from ..core.shape import tile_output_sizes
from ..errors import DescriptorError, DmlTileError
from .document import cap_issues, parse
from .levels import DEFAULT_FEATURE_LEVEL, known_levels, levels_text, parse_feature_level
from .report import Issue, ValidationReport
from .rules import descriptor_rules, issue, level_rules
from .source import Source


def descriptor_issues(desc: OperatorDesc) -> list[Issue]:
    """Issues from the rules that do not depend on the feature level."""
    return [i for r in descriptor_rules() for i in r.check(desc)]


def level_issues(desc: OperatorDesc, level: FeatureLevel) -> list[Issue]:
    """Issues from the feature-level rules at ``level``."""
    return [i for r in level_rules() for i in r.check(desc, level)]


def _output_sizes(desc: OperatorDesc) -> list[int] | None:
    if len(desc.input.sizes) != len(desc.repeats):
        return None
    return list(tile_output_sizes(desc.input.sizes, desc.repeats))


def _has_errors(issues: list[Issue]) -> bool:
    return any(i.severity == "error" for i in issues)


def parse_and_validate(
    source: Source, feature_level: Any = DEFAULT_FEATURE_LEVEL
) -> tuple[OperatorDesc | None, ValidationReport]:
    """Read and parse once, run every rule: the model (None when it cannot be parsed) and the report."""
    issues: list[Issue] = []
    try:
        level = parse_feature_level(feature_level)
    except DmlTileError as e:
        level = None
        issues.append(issue("DML303", "feature_level", str(e), f"use a level from {levels_text()}, e.g. 4.1"))
    desc, parse_issues = parse(source)
    issues.extend(parse_issues)
    sizes = None
    if desc is not None:
        issues.extend(descriptor_issues(desc))
        if level is not None:
            issues.extend(level_issues(desc, level))
        sizes = _output_sizes(desc)
    return desc, ValidationReport(
        valid=not _has_errors(issues),
        feature_level=level,
        output_sizes=sizes,
        issues=issues if desc is None else cap_issues(issues),
    )  # without a desc, the issues are parse's, already capped


def validate(source: Source, feature_level: Any = DEFAULT_FEATURE_LEVEL) -> ValidationReport:
    """Check a descriptor against every rule at ``feature_level`` (default: the newest level).

    Accepts a path, JSON text, a dict or an OperatorDesc. Bad content never raises: it becomes
    issues in the report. Only input that cannot be read at all (a missing file) raises InputError.
    """
    return parse_and_validate(source, feature_level)[1]


def check(source: Source, feature_level: Any = DEFAULT_FEATURE_LEVEL) -> OperatorDesc:
    """The parsed descriptor when it is valid at ``feature_level``; DescriptorError with every issue otherwise."""
    desc, report = parse_and_validate(source, feature_level)
    if not report.valid:
        raise DescriptorError(
            report.errors,
            context=f"descriptor is invalid at {feature_level}: "
            f"{len(report.errors)} error{'s' * (len(report.errors) != 1)}",
        )
    return desc


def _accepting_levels(source: Source) -> Iterator[FeatureLevel]:
    """The known levels at which the descriptor is valid, lowest first (none when it is broken)."""
    desc, _ = parse(source)
    if desc is None or _has_errors(descriptor_issues(desc)):
        return
    for level in known_levels():
        if not _has_errors(level_issues(desc, level)):
            yield level


def min_feature_level(source: Source) -> FeatureLevel | None:
    """The lowest feature level at which the descriptor is valid, or None when none accepts it."""
    return next(_accepting_levels(source), None)


def accepted_levels(source: Source) -> list[FeatureLevel]:
    """Every known feature level at which the descriptor is valid."""
    return list(_accepting_levels(source))
