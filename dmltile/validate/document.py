"""Parsing a descriptor document (JSON data already read) into an OperatorDesc.

Parsing reports structural problems (DML001-DML005, DML207) as issues with paths into the
canonical wrapped document; cross-field and feature-level rules run afterwards (``api``).
``parse`` and ``load`` take any source and read it through ``reading``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ..core.enums import FeatureLevel
from ..core.fields import FIELDS, c_type_range
from ..core.operator import OperatorDesc
from ..errors import DescriptorError
from .reading import Document, read_document
from .report import Issue
from .rules import issue
from .source import NotJson, Source, not_json_message
from .suggest import closest_key, enum_hint, keys_at


def format_path(loc: Sequence[str | int]) -> str:
    """``('Desc', 'InputTensor', 'Desc', 'Sizes', 2)`` -> ``Desc.InputTensor.Desc.Sizes[2]``: the
    path of an issue (names joined by dots, list indices in brackets)."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def show(value: Any, limit: int = 48) -> str:
    """A short JSON-like rendering of a value for messages."""
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
        return Unparsed([not_an_object_issue(data)])
    too_long = long_arrays(data)
    if too_long:
        return Unparsed(too_long)
    try:
        return OperatorDesc.model_validate(data)
    except ValidationError as e:
        return Unparsed(errors=e.errors(include_url=False)[: MAX_ISSUES * 4], error_count=e.error_count())
    except RecursionError:
        return Unparsed([issue("DML001", "", "the document is nested too deeply to read")])


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
    hint = (
        f'keep one "{data.key}" in that object'
        if data.code == "DML003"
        else "write one JSON object, as `dmltile new` prints"
    )
    return issue(data.code, data.key, not_json_message(data), hint)


def not_an_object_issue(data: Any) -> Issue:
    """DML001 for JSON that is not an object."""
    return issue(
        "DML001",
        "",
        f"the document is a JSON {_json_kind(data)}, not an object",
        'write a JSON object such as {"Type": "DML_OPERATOR_TILE", "Desc": {...}}',
    )


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
                found.append(
                    issue(
                        "DML004",
                        here,
                        f"{key} has {len(child)} values; DirectML tensors have at most 8 dimensions, so "
                        f"dmltile reads arrays of at most {MAX_ARRAY_VALUES} values and stops here",
                        "write one value per dimension, at most 8 (DML_TENSOR_DIMENSION_COUNT_MAX1)",
                    )
                )
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


def _json_kind(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def issues_from_pydantic(errors: list[ErrorDetails], level: FeatureLevel | None = None) -> list[Issue]:
    """Turn pydantic's errors into issues with DML0xx codes, in document order."""
    issues = [_issue(err, level) for err in errors]
    not_tile = [i for i in issues if i.code == "DML207"]
    if not_tile:  # the Desc of another operator is not a Tile desc; its field errors are noise
        return not_tile + [i for i in issues if i.code != "DML207" and not i.path.startswith("Desc")]
    return issues


# Framework type names people reach for, and the DirectML type with the same bits.
_ENUM_HINTS = {
    "BOOL": "DirectML has no bool type; a bool is one byte, so tile it as UINT8. ",
    "BFLOAT16": "DirectML has no bfloat16 type; Tile copies bits, so tile it as UINT16. ",
    "FLOAT": "FLOAT is spelled FLOAT32. ",
    "HALF": "HALF is spelled FLOAT16. ",
    "DOUBLE": "DOUBLE is spelled FLOAT64 (which Tile does not support; tile it as UINT32 pairs). ",
}


def _field_of(loc: tuple) -> str:
    names = [p for p in loc if isinstance(p, str)]
    return names[-1] if names else ""


def _tensor_of(loc: tuple) -> str:
    return "OutputTensor" if "OutputTensor" in loc else "InputTensor"


def _issue(err: ErrorDetails, level: FeatureLevel | None = None) -> Issue:
    loc, kind, value = tuple(err["loc"]), err["type"], err.get("input")
    path, field = format_path(loc), _field_of(loc)
    info = FIELDS.get(field)
    if kind == "missing":
        example = f": {info.example}" if info else ""
        return issue(
            "DML002",
            path,
            f"required field {field} is missing" + (f" ({info.meaning})" if info else ""),
            f'add "{field}"{example}',
        )
    if kind == "extra_forbidden":
        close = closest_key(field, keys_at(loc))
        hint = f'did you mean "{close}"? Otherwise remove it' if close else "remove it"
        return issue("DML003", path, f'unknown field "{field}" (value {show(value)})', hint)
    if kind == "dml_enum":
        ctx = err.get("ctx", {})
        enum_name = "DML_OPERATOR_TYPE" if loc == ("Type",) else ctx.get("enum", "")
        hint, _ = enum_hint(value, enum_name, level, _tensor_of(loc))
        return issue(
            "DML005",
            path,
            f"{field} is {show(value)}, which is not a {ctx.get('enum', 'known enum')} value",
            _ENUM_HINTS.get(str(value).upper(), "") + hint,
        )
    if kind == "dml_not_tile":
        return issue(
            "DML207",
            path,
            err["msg"],
            'use "Type": "DML_OPERATOR_TILE" with a DML_TILE_OPERATOR_DESC in "Desc"',
        )
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return issue(
            "DML004",
            path,
            f"{field or 'the value'} is {show(value)}, but it must be a JSON object",
            f"write {field} as an object" + (f", e.g. {info.example}" if info else ""),
        )
    if kind in ("tuple_type", "list_type", "iterable_type"):
        return issue(
            "DML004",
            path,
            f"{field} is {show(value)}, but it must be an array of UINT",
            f"write {field} as a JSON array of whole numbers" + (f", e.g. {info.example}" if info else ""),
        )
    lo, hi = c_type_range(field)
    c_type = "UINT64" if hi > 2**32 else "UINT"
    element = "an element of " + field if loc and isinstance(loc[-1], int) else field
    why = (
        "a boolean is not an integer"
        if isinstance(value, bool)
        else ("only whole numbers are UINTs" if isinstance(value, float) else f"{c_type} holds {lo} to {hi}")
    )
    return issue(
        "DML004",
        path,
        f"{element} is {show(value)}, but it must be a {c_type} ({why})",
        f"write a whole number from {lo} to {hi}",
    )
