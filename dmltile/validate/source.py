"""Reading a document's bytes: text, bytes or a path into JSON data, with the kinds of document
dmltile recognises (its own descriptor, a DxDispatch model or dispatchable).

Every document may carry ``//`` and ``/* */`` comments and trailing commas, as DxDispatch models do
(its parser, rapidjson, runs with kParseCommentsFlag | kParseTrailingCommasFlag): text that is not
strict JSON is read again without them (JSONC), and ``--fix`` writes back into the text as it was,
comments and all.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from typing import IO, Any

from ..core.operator import OperatorDesc
from ..errors import InputError


@dataclass(frozen=True)
class Loaded:
    """JSON data already read from a file: handed on as data, never read again as a path or text."""

    data: Any


Source = OperatorDesc | dict | str | bytes | os.PathLike | Loaded
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 64  # the deepest DxDispatch model nests about 8 levels; a descriptor 4

# The size limit of each kind of file dmltile reads (bytes). Every read goes through ``open_regular``.
READ_LIMITS = {
    "descriptor": MAX_DOCUMENT_BYTES,
    "ONNX model": 2 << 30,  # protobuf's own limit for one message
    ".npy": 4 << 30,
    "input buffer": 4 << 30,
    "DxDispatch output": 512 << 20,
    "external data": 1 << 20,
}


def open_regular(path: Any, kind: str) -> IO[bytes]:
    """Open ``path`` for reading as a ``kind`` file, refusing anything that is not a regular file.

    The path is checked with ``os.stat`` before it is opened (opening a FIFO for reading blocks until
    a writer comes), then opened non-blocking and checked again on the open descriptor, so a file
    swapped for a pipe or device in between is refused too. InputError names the path and why.
    """
    try:
        name = os.fspath(path)
    except TypeError:
        raise InputError(f"expected a path to a {kind} file, got {type(path).__name__}") from None
    shown = os.fsdecode(name)
    try:
        problem = _not_regular(os.stat(name).st_mode, shown, kind)
    except FileNotFoundError:
        raise InputError(f"{shown}: no such file") from None
    except (OSError, ValueError) as e:  # ValueError: an embedded NUL byte
        raise InputError(f"{shown}: cannot read ({getattr(e, 'strerror', None) or e})") from None
    if problem:
        raise InputError(problem)
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise InputError(f"{shown}: no such file") from None
    except OSError as e:
        raise InputError(f"{shown}: cannot read ({e.strerror or e})") from None
    try:
        problem = _not_regular(os.fstat(fd).st_mode, shown, kind)
    except OSError as e:
        problem = f"{shown}: cannot read ({e.strerror or e})"
    if problem:
        os.close(fd)
        raise InputError(problem)
    return os.fdopen(fd, "rb")


def _not_regular(mode: int, shown: str, kind: str) -> str | None:
    if stat.S_ISREG(mode):
        return None
    article = "an" if kind[:1].lower() in "aeio" or kind.startswith(("ONNX", "-")) else "a"
    if stat.S_ISDIR(mode):
        return f"{shown} is a directory, not {article} {kind} file"
    return f"{shown} is not a regular file (a pipe, socket or device); give {article} {kind} file"


def file_size(f: IO[bytes]) -> int:
    """The size of an open regular file."""
    return os.fstat(f.fileno()).st_size


def too_large(shown: Any, size: int, kind: str, limit: int | None = None) -> InputError:
    limit = READ_LIMITS[kind] if limit is None else limit
    return InputError(f"{shown} is {size} bytes; dmltile reads {kind} files of at most {limit} bytes")


def read_at_most(f: IO[bytes], most: int, first: int) -> bytes:
    """The bytes of ``f`` to its end, or its first ``most`` bytes. A read allocates the whole count it
    asks for before any byte arrives, so the first asks for ``first`` (what the file is expected to
    hold) and each further one for as much as has come: memory follows the data, not the limit."""
    parts: list[bytes] = []
    total, ask = 0, max(first, 1)
    while total < most:
        part = f.read(min(ask, most - total))
        if not part:
            break
        parts.append(part)
        total += len(part)
        ask = max(ask, total)
    return b"".join(parts)


def read_regular(path: Any, kind: str, limit: int | None = None) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (default: READ_LIMITS[kind]).

    FIFOs, devices and directories are refused before reading (``open_regular``), and never more
    than ``limit + 1`` bytes are read, so a file that grows while being read is refused too."""
    limit = READ_LIMITS[kind] if limit is None else limit
    with open_regular(path, kind) as f:
        shown = os.fsdecode(os.fspath(path))
        size = file_size(f)
        if size > limit:
            raise too_large(shown, size, kind, limit)
        try:
            data = read_at_most(f, limit + 1, size + 1)
        except OSError as e:
            raise InputError(f"{shown}: cannot read ({e.strerror or e})") from None
    if len(data) > limit:
        raise too_large(shown, len(data), kind, limit)
    return data


# One token of JSONC text outside strings, matched where it starts and never retried: a comment (to
# its end, or to the end of the text), a comma, a closing bracket, a quote (a string starts), or a run
# of anything else. Each alternative is a single repeat, so the engine keeps no state per character.
_JSONC_TOKEN = re.compile(r'//[^\n]*|/\*(?:.*?\*/|.*)|[,\]}"]|[^",/\]}]+|/', re.S)


_TRAILING_COMMA = re.compile(r",\s*[}\]]")


def _string_end(text: str, start: int) -> int:
    """Where the string whose opening quote is at ``start`` ends (after its closing quote; the end of
    the text when it has none): the first quote after an even run of backslashes. Each character is
    looked at once at most, so unclosed strings and runs of escaped quotes cost their length."""
    at = start + 1
    while True:
        quote = text.find('"', at)
        if quote < 0:
            return len(text)
        slashes = quote
        while slashes > at and text[slashes - 1] == "\\":
            slashes -= 1
        if (quote - slashes) % 2 == 0:
            return quote + 1
        at = quote + 1


def strip_jsonc(text: str) -> str:
    """Remove ``//`` and ``/* */`` comments and trailing commas outside strings (DxDispatch's
    parser accepts both: rapidjson kParseCommentsFlag | kParseTrailingCommasFlag). A comment leaves
    its line breaks, so lines keep their numbers; the text is read once, left to right."""
    if "/" not in text and not _TRAILING_COMMA.search(text):  # strict JSON already: nothing to strip
        return text
    out: list[str] = []
    comma: int | None = None  # where in ``out`` a comma stands that only space and comments follow yet
    at = 0
    while at < len(text):
        m = _JSONC_TOKEN.match(text, at)
        assert m is not None  # every character starts some token
        token, at = m.group(), m.end()
        if token == '"':
            at = _string_end(text, m.start())
            token = text[m.start() : at]
        elif token[:2] in ("//", "/*"):
            out.append("\n" * token.count("\n"))
            continue
        if token in ("]", "}") and comma is not None:
            out[comma] = ""
        if token == ",":
            comma = len(out)
        elif not token.isspace():
            comma = None
        out.append(token)
    return "".join(out)


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
    """Whether ``data`` is a DxDispatch model or dispatchable rather than a canonical document. A
    JSON Schema (a ``$schema`` key) is neither, whatever its properties look like."""
    if isinstance(data, dict) and "$schema" in data:
        return False
    return is_model(data) or is_dispatchable(data)


def parse_jsonc(text: str | bytes) -> Any:
    """JSON with comments and trailing commas (JSONC), as DxDispatch reads its models and dmltile
    reads every descriptor; ValueError (DuplicateKey for a repeated key) when it is not JSONC either."""
    if isinstance(text, bytes):  # as json.loads reads bytes: UTF-8, -16 or -32, with or without a BOM
        text = text.decode(json.detect_encoding(text))
    return loads(strip_jsonc(text))


def parse_jsonc_model(text: str | bytes) -> Any:
    """JSONC text parsed only if it then is a DxDispatch model; else None."""
    try:
        data = parse_jsonc(text)
    except DuplicateKey:
        raise
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
    if isinstance(source, (OperatorDesc, NotJson)):
        return source
    if isinstance(source, (dict, list)):
        return source if not _too_deep(source) else NotJson(f"nested more than {MAX_DEPTH} levels deep")
    if source is None or isinstance(source, (int, float)):
        return source
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        if len(data) > MAX_DOCUMENT_BYTES:
            return NotJson(f"the text is {len(data)} bytes; documents are at most {MAX_DOCUMENT_BYTES}")
        return _parse_json(data)
    if isinstance(source, str):
        if len(source) > MAX_DOCUMENT_BYTES:
            return NotJson(
                f"the text is {len(source)} characters; documents are at most {MAX_DOCUMENT_BYTES}"
            )
        if source.lstrip()[:1] in ("{", "[") or _commented_text(source) or not _could_be_path(source):
            return _parse_json(source)
        if not os.path.lexists(source):
            parsed = _parse_json(source)
            if not isinstance(parsed, NotJson):
                return parsed  # JSON text such as `null` or `42`: content, reported as DML001
    elif not isinstance(source, os.PathLike):
        raise InputError(
            f"a document is a path, JSON text, bytes, a dict or an OperatorDesc; got {type(source).__name__}"
        )
    return _parse_json(read_regular(source, "descriptor"))


def _could_be_path(text: str) -> bool:
    """Whether the string can name a file at all (no NUL byte, encodable in the file system's encoding)."""
    if not text or "\x00" in text:
        return False
    try:
        os.fsencode(text)
    except UnicodeError:
        return False
    return True


def _too_deep(data: Any) -> bool:
    """Whether dicts and lists nest deeper than MAX_DEPTH (walked without recursion)."""
    if not isinstance(data, (dict, list)):
        return False
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        children = value.values() if isinstance(value, dict) else value
        stack.extend((v, depth + 1) for v in children if isinstance(v, (dict, list)))
    return False


def _commented_text(source: str) -> bool:
    """JSON text that opens with a comment (as DxDispatch models may), not a path."""
    return source.lstrip()[:2] in ("//", "/*") and "{" in source


class NotJson:
    """Text that did not parse as JSON, with the parser's reason (``code`` DML003 for a repeated key)."""

    def __init__(self, reason: str, code: str = "DML001", key: str = ""):
        self.reason, self.code, self.key = reason, code, key


class DuplicateKey(ValueError):
    """A JSON object that names one key twice (json keeps the last silently; dmltile refuses)."""

    def __init__(self, key: str):
        self.key = key
        super().__init__(f'the key "{key}" appears twice in one object')


def unique_object(pairs: list[tuple[str, Any]]) -> dict:
    """``object_pairs_hook`` for json: a dict, or DuplicateKey for a key given twice."""
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return data


def loads(data: str | bytes) -> Any:
    """json.loads refusing repeated keys (DuplicateKey)."""
    return json.loads(data, object_pairs_hook=unique_object)


def _parse_json(data: str | bytes) -> Any:
    try:
        parsed = loads(data)
    except RecursionError:
        return NotJson("nested too deeply")
    except DuplicateKey as e:
        return NotJson(str(e), "DML003", e.key)
    except UnicodeError as e:
        where = f" at byte {e.start}" if isinstance(e, UnicodeDecodeError) else ""
        return NotJson(f"not UTF-8 text ({getattr(e, 'reason', e)}{where})")
    except ValueError as e:  # not strict JSON: read again as JSONC, else the strict parser's reason
        try:
            parsed = parse_jsonc(data)
        except DuplicateKey as dup:
            return NotJson(str(dup), "DML003", dup.key)
        except (ValueError, RecursionError):
            return NotJson(str(e))
    return parsed if not _too_deep(parsed) else NotJson(f"nested more than {MAX_DEPTH} levels deep")
