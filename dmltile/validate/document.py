"""Parsing a descriptor document (JSON data already read) into an OperatorDesc.

Parsing reports structural problems (DML001-DML005, DML207) as issues with paths into the
canonical wrapped document; cross-field and feature-level rules run afterwards (``api``).
``parse`` and ``load`` take any source and read it through ``reading``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ..core.enums import FeatureLevel
from ..core.operator import OperatorDesc
from ..errors import DescriptorError
from .pruning import prune_unknown_keys
from .reading import Document, read_document
from .report import Issue
from .rules import issue
from .rules.document import (
    array_too_long,
    duplicate_key,
    missing_field,
    nested_too_deeply,
    not_a_struct,
    not_a_uint,
    not_an_array,
    not_an_object,
    not_json,
    unknown_enum,
    unknown_field,
)
from .rules.edits import join_path
from .rules.operator import not_tile
from .source import NotJson, Source


@dataclass(frozen=True)
class Unparsed:
    """A document that did not become a model: the issues that stop it. Pydantic's errors are kept
    as they came, because the hints they turn into depend on the level judged at."""

    stopped: list[Issue] = field(default_factory=list)
    errors: list[ErrorDetails] = field(default_factory=list)
    error_count: int = 0

    def issues(self, level: FeatureLevel | None = None) -> list[Issue]:
        """The issues, with hints for ``level`` (default: the newest level)."""
        if not self.errors:
            return self.stopped
        return cap_issues(issues_from_pydantic(self.errors[: MAX_ISSUES * 4], level), self.error_count)


def parse_data(data: Any) -> OperatorDesc | Unparsed:
    """JSON data already read (or a model, or text that was not JSON) as a model, or the structural
    issues that stop it. Knows nothing of files or DxDispatch: ``reading`` has dealt with both."""
    if isinstance(data, (OperatorDesc, Unparsed)):
        return data
    if isinstance(data, NotJson):
        return Unparsed([not_json_issue(data)])
    if not isinstance(data, dict):
        return Unparsed([not_an_object(data)])
    too_long = long_arrays(data)
    if too_long:
        return Unparsed(too_long)
    data, dropped = prune_unknown_keys(data)
    try:
        return OperatorDesc.model_validate(data)
    except ValidationError as e:
        errors = e.errors(include_url=False)[: MAX_ISSUES * 4]
        return Unparsed(errors=errors, error_count=e.error_count() + dropped)
    except RecursionError:
        return Unparsed([nested_too_deeply()])


def parse_document(document: Document) -> OperatorDesc | Unparsed:
    """One document of a reading as a model, or what stops it (including what reading found)."""
    return Unparsed(document.issues) if document.issues else parse_data(document.data)


def parse_descriptor(data: Any, level: FeatureLevel | None = None) -> tuple[OperatorDesc | None, list[Issue]]:
    """``parse_data`` as (model, []) or (None, the issues with hints for ``level``)."""
    parsed = parse_data(data)
    return (parsed, []) if isinstance(parsed, OperatorDesc) else (None, parsed.issues(level))


def parse(source: Source, level: FeatureLevel | None = None) -> tuple[OperatorDesc | None, list[Issue]]:
    """Read a document (path, text, dict or model; the one Tile dispatchable of a DxDispatch model)
    into a model, or into the structural issues that stop it. ``level`` only narrows the data types
    that hints offer to those Tile takes there (default: the newest level)."""
    return parse_descriptor(parse_document(read_document(source).single), level)


def not_json_issue(data: NotJson) -> Issue:
    """DML001 for text that is not JSON (DML003 for a repeated key)."""
    if data.code == "DML003":
        return duplicate_key(data.key, data.reason)
    return not_json(data.reason, hint="write one JSON object, as `dmltile new` prints")


MAX_ISSUES = 100  # issues listed per document; the rest are counted in one last issue
MAX_ARRAY_VALUES = 64  # DirectML tensors have at most 8 dimensions; longer arrays are not read
ARRAY_FIELDS = ("Sizes", "Strides", "Repeats")


def long_arrays(data: Any) -> list[Issue]:
    """One DML004 issue per Sizes/Strides/Repeats array longer than MAX_ARRAY_VALUES, found before
    anything else reads the document (so 100,000 dimensions cost one issue, not 100,000)."""
    found: list[Issue] = []
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, path = stack.pop()
        if not isinstance(value, dict):
            continue
        for key, child in value.items():
            here = f"{path}.{key}" if path else str(key)
            if key in ARRAY_FIELDS and isinstance(child, list) and len(child) > MAX_ARRAY_VALUES:
                found.append(array_too_long(here, key, len(child), MAX_ARRAY_VALUES))
            elif isinstance(child, dict):
                stack.append((child, here))
    return sorted(found, key=lambda i: i.path)


def cap_issues(issues: list[Issue], total: int | None = None) -> list[Issue]:
    """At most MAX_ISSUES issues, then one more that says how many were left out (``total``: how
    many there were, when more were found than ``issues`` holds)."""
    total = max(len(issues), total or 0)
    if total <= MAX_ISSUES:
        return issues
    kept = issues[:MAX_ISSUES]
    rest = issues[MAX_ISSUES] if len(issues) > MAX_ISSUES else issues[-1]
    more = issue(
        rest.code,
        "",
        f"... and {total - MAX_ISSUES} more issues not listed (dmltile lists at most {MAX_ISSUES} per document)",
        "fix the issues listed and validate again",
    )
    return [*kept, more]


def load(source: Source) -> OperatorDesc:
    """Read a descriptor (path, JSON text, dict or model); raise DescriptorError on bad structure."""
    desc, issues = parse(source)
    if desc is None:
        raise DescriptorError(
            issues, context=f"cannot read the descriptor ({len(issues)} issue{'s' * (len(issues) != 1)})"
        )
    return desc


def issues_from_pydantic(errors: list[ErrorDetails], level: FeatureLevel | None = None) -> list[Issue]:
    """Turn pydantic's errors into issues with DML0xx codes, in document order."""
    issues = [_issue(err, level) for err in errors]
    not_tile = [i for i in issues if i.code == "DML207"]
    if not_tile:  # the Desc of another operator is not a Tile desc; its field errors are noise
        return not_tile + [i for i in issues if i.code != "DML207" and not i.path.startswith("Desc")]
    return issues


def _field_of(loc: tuple) -> str:
    names = [p for p in loc if isinstance(p, str)]
    return names[-1] if names else ""


def _issue(err: ErrorDetails, level: FeatureLevel | None = None) -> Issue:
    """The issue of one of pydantic's errors: the rule it breaks, by the error's type."""
    loc, kind, value = tuple(err["loc"]), err["type"], err.get("input")
    path, field = join_path(list(loc)), _field_of(loc)
    if kind == "missing":
        return missing_field(path, field)
    if kind == "extra_forbidden":
        return unknown_field(path, loc, field, value)
    if kind == "dml_enum":
        return unknown_enum(path, loc, field, value, err.get("ctx", {}).get("enum", ""), level)
    if kind == "dml_not_tile":
        return not_tile(path, err["msg"])
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return not_a_struct(path, field, value)
    if kind in ("tuple_type", "list_type", "iterable_type"):
        return not_an_array(path, field, value)
    return not_a_uint(path, loc, field, value)
