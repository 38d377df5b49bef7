"""Reading a document's bytes: text, bytes or a path into JSON data, with the kinds of document
dmltile recognises (its own descriptor, a DxDispatch model or dispatchable).

DxDispatch models may carry ``//`` comments and trailing commas (its parser, rapidjson, runs with
kParseCommentsFlag | kParseTrailingCommasFlag), so text that is not strict JSON is read again
without them, and kept only if it then is a DxDispatch model.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.operator import OperatorDesc
from ..errors import InputError


@dataclass(frozen=True)
class Loaded:
    """JSON data already read from a file: handed on as data, never read again as a path or text."""

    data: Any


Source = OperatorDesc | dict | str | bytes | os.PathLike | Loaded
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024

_JSONC_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.S)


def strip_jsonc(text: str) -> str:
    """Remove ``//`` and ``/* */`` comments and trailing commas outside strings (DxDispatch's
    parser accepts both: rapidjson kParseCommentsFlag | kParseTrailingCommasFlag)."""

    def keep(m: re.Match) -> str:
        token = m.group(0)
        return token if token.startswith('"') else ("\n" * token.count("\n") if token.startswith("/") else "")

    # Repeat the comma removal: a comment between a comma and the bracket hides it on the first pass.
    return _JSONC_TOKEN.sub(keep, _JSONC_TOKEN.sub(keep, text))


def is_model(data: Any) -> bool:
    """A DxDispatch model: an object with ``dispatchables`` (and usually resources and commands)."""
    return (
        isinstance(data, dict)
        and "dispatchables" in data
        and not ({"Type", "Desc", "InputTensor"} & data.keys())
    )


def is_dispatchable(data: Any) -> bool:
    """A DxDispatch-style dispatchable: lowercase ``type``/``desc`` keys, not our ``Type``/``Desc``."""
    return (
        isinstance(data, dict)
        and bool({"type", "desc"} & data.keys())
        and not ({"Type", "Desc"} & data.keys())
    )


DESCRIPTOR_KEYS = frozenset({"Type", "Desc", "InputTensor", "OutputTensor", "Repeats", "RepeatsCount"})


def looks_like_descriptor(data: Any) -> bool:
    """Whether ``data`` may be meant as a Tile descriptor or a DxDispatch model (any of the keys
    either has at its top), as opposed to other JSON such as a report or a JSON Schema."""
    if looks_like_dxdispatch(data):
        return True
    return isinstance(data, dict) and bool(DESCRIPTOR_KEYS & data.keys()) and "$schema" not in data


def looks_like_dxdispatch(data: Any) -> bool:
    """Whether ``data`` is a DxDispatch model or dispatchable rather than a canonical document."""
    return is_model(data) or is_dispatchable(data)


def parse_jsonc_model(text: str | bytes) -> Any:
    """JSON with comments/trailing commas, parsed only if it then is a DxDispatch model; else None."""
    try:
        data = json.loads(strip_jsonc(text.decode("utf-8") if isinstance(text, bytes) else text))
    except (ValueError, RecursionError):
        return None
    return data if looks_like_dxdispatch(data) else None


def read_source(source: Source) -> Any:
    """Turn text, bytes or a path into JSON data (dicts pass through).

    A string starting with ``{`` or ``[`` is JSON text; any other string names a file, unless no
    such file exists and the string parses as JSON. Raises InputError for unreadable files and
    returns a ``NotJson`` marker for text that is not JSON.
    """
    if isinstance(source, Loaded):
        return source.data
    if (
        isinstance(source, (OperatorDesc, dict, list, NotJson))
        or source is None
        or isinstance(source, (int, float))
    ):
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
            raise InputError(
                f"{path} is {path.stat().st_size} bytes; descriptor documents are at most {MAX_DOCUMENT_BYTES}"
            )
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
        model = parse_jsonc_model(data)
        return model if model is not None else NotJson(str(e))
