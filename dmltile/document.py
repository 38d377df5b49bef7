"""Reading a descriptor document: JSON text, a file, a dict or a model, into an OperatorDesc.

Parsing reports structural problems (DML001-DML005, DML207) as issues with paths into the
canonical wrapped document; cross-field and feature-level rules live in ``validation``.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any, Union

from pydantic import ValidationError

from .errors import DescriptorError, DmlTileError
from .fields import FIELDS, c_type_range
from .operator import OperatorDesc
from .report import Issue

Source = Union[OperatorDesc, dict, str, bytes, os.PathLike]
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024


class InputError(DmlTileError):
    """The input could not be read at all (missing file, a directory, unreadable bytes)."""


def format_path(loc: tuple) -> str:
    """``('Desc', 'InputTensor', 'Desc', 'Sizes', 2)`` -> ``Desc.InputTensor.Desc.Sizes[2]``."""
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


def read_source(source: Source) -> Any:
    """Turn text, bytes or a path into JSON data (dicts pass through).

    A string starting with ``{`` or ``[`` is JSON text; any other string names a file, unless no
    such file exists and the string parses as JSON. Raises InputError for unreadable files and
    returns a ``NotJson`` marker for text that is not JSON.
    """
    if isinstance(source, (OperatorDesc, dict, list)) or source is None or isinstance(source, (int, float)):
        return source
    if isinstance(source, bytes):
        return _parse_json(source)
    if isinstance(source, str) and (source.lstrip()[:1] in ("{", "[") or _commented_text(source)):
        return _parse_json(source)
    path = Path(source)
    if isinstance(source, str) and not path.exists():
        parsed = _parse_json(source)
        if not isinstance(parsed, NotJson):
            return parsed  # JSON text such as `null` or `42`: content, reported as DML001
    try:
        if path.is_dir():
            raise InputError(f"{path} is a directory, not a descriptor file")
        if path.stat().st_size > MAX_DOCUMENT_BYTES:
            raise InputError(f"{path} is {path.stat().st_size} bytes; descriptor documents are at most {MAX_DOCUMENT_BYTES}")
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from None
    return _parse_json(data)


def _commented_text(source: str) -> bool:
    """JSON text that opens with a comment (as DxDispatch models may), not a path."""
    return source.lstrip()[:2] in ("//", "/*") and "{" in source


class NotJson:
    """Text that did not parse as JSON, with the parser's reason."""

    def __init__(self, reason: str):
        self.reason = reason


def _parse_json(data: str | bytes) -> Any:
    try:
        return json.loads(data)
    except RecursionError:
        return NotJson("nested too deeply")
    except UnicodeDecodeError as e:
        return NotJson(f"not UTF-8 text ({e.reason} at byte {e.start})")
    except ValueError as e:
        from .dxdispatch_import import parse_jsonc_model  # DxDispatch models may carry comments

        model = parse_jsonc_model(data)
        return model if model is not None else NotJson(str(e))


def parse(source: Source) -> tuple[OperatorDesc | None, list[Issue]]:
    """Parse a document into a model, or into the structural issues that stop it."""
    data = read_source(source)
    if isinstance(data, OperatorDesc):
        return data, []
    data, dx_issues = _from_dxdispatch(data)
    if dx_issues:
        return None, dx_issues
    if isinstance(data, NotJson):
        return None, [Issue(code="DML001", path="", message=f"the document is not JSON: {data.reason}",
                            hint="write one JSON object, as `dmltile new` prints")]
    if not isinstance(data, dict):
        return None, [Issue(code="DML001", path="", message=f"the document is a JSON {_json_kind(data)}, not an object",
                            hint='write a JSON object such as {"Type": "DML_OPERATOR_TILE", "Desc": {...}}')]
    try:
        return OperatorDesc.model_validate(data), []
    except ValidationError as e:
        return None, issues_from_pydantic(e.errors())
    except RecursionError:
        return None, [Issue(code="DML001", path="", message="the document is nested too deeply to read")]


def _from_dxdispatch(data: Any) -> tuple[Any, list[Issue]]:
    """A DxDispatch model or dispatchable becomes the canonical document of its one Tile dispatchable."""
    from . import dxdispatch_import as dxdispatch

    return dxdispatch.single_tile_document(data) if dxdispatch.looks_like_dxdispatch(data) else (data, [])


def load(source: Source) -> OperatorDesc:
    """Read a descriptor (path, JSON text, dict or model); raise DescriptorError on bad structure."""
    desc, issues = parse(source)
    if desc is None:
        raise DescriptorError(issues, context=f"cannot read the descriptor ({len(issues)} issue{'s' * (len(issues) != 1)})")
    return desc


def _json_kind(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def issues_from_pydantic(errors: list[dict]) -> list[Issue]:
    """Turn pydantic's errors into issues with DML0xx codes, in document order."""
    issues = [_issue(err) for err in errors]
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


def _issue(err: dict) -> Issue:
    loc, kind, value = tuple(err["loc"]), err["type"], err.get("input")
    path, field = format_path(loc), _field_of(loc)
    info = FIELDS.get(field)
    if kind == "missing":
        example = f': {info.example}' if info else ""
        return Issue(code="DML002", path=path, message=f"required field {field} is missing"
                     + (f" ({info.meaning})" if info else ""), hint=f'add "{field}"{example}')
    if kind == "extra_forbidden":
        close = difflib.get_close_matches(field, FIELDS, n=1)
        hint = f'did you mean "{close[0]}"? Otherwise remove it' if close else "remove it"
        return Issue(code="DML003", path=path, message=f'unknown field "{field}" (value {show(value)})', hint=hint)
    if kind == "dml_enum":
        ctx = err.get("ctx", {})
        return Issue(code="DML005", path=path,
                     message=f"{field} is {show(value)}, which is not a {ctx.get('enum', 'known enum')} value",
                     hint=_ENUM_HINTS.get(str(value).upper(), "") + f"use one of {ctx.get('choices', '')}"
                     f" (short names, full C names or the C integers)")
    if kind == "dml_not_tile":
        return Issue(code="DML207", path=path, message=err["msg"],
                     hint='use "Type": "DML_OPERATOR_TILE" with a DML_TILE_OPERATOR_DESC in "Desc"')
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return Issue(code="DML004", path=path, message=f"{field or 'the value'} is {show(value)}, but it must be a JSON object",
                     hint=f"write {field} as an object" + (f", e.g. {info.example}" if info else ""))
    if kind in ("tuple_type", "list_type", "iterable_type"):
        return Issue(code="DML004", path=path, message=f"{field} is {show(value)}, but it must be an array of UINT",
                     hint=f"write {field} as a JSON array of whole numbers" + (f", e.g. {info.example}" if info else ""))
    lo, hi = c_type_range(field)
    c_type = "UINT64" if hi > 2**32 else "UINT"
    element = "an element of " + field if loc and isinstance(loc[-1], int) else field
    why = "a boolean is not an integer" if isinstance(value, bool) else (
        "only whole numbers are UINTs" if isinstance(value, float) else f"{c_type} holds {lo} to {hi}")
    return Issue(code="DML004", path=path, message=f"{element} is {show(value)}, but it must be a {c_type} ({why})",
                 hint=f"write a whole number from {lo} to {hi}")
