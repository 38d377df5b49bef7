"""Reading what DxDispatch printed (or wrote) for a resource, and comparing it with dmltile's result.

The format, from microsoft/DirectML DxDispatch/src/dxdispatch/Executor.cpp (a9614e82;
``BufferDataView``, ``Executor::operator()(PrintCommand)``) and Logging.cpp (``LogInfo``):

* ``{"type": "print", "resource": "output"}`` prints one line ``Resource 'output': v0, v1, ...``:
  as many elements as the resource's initial values, in its initial-value data type, each written
  by ``std::ostream << value`` with the stream's default format (``%g``-like, 6 significant digits;
  FLOAT16 through ``float``; NaN/inf as the C++ runtime spells them, e.g. ``nan``, ``-nan(ind)``,
  ``inf``). INT8/UINT8 are ``char`` types, so they are written as raw characters, and ``LogInfo``
  streams the line as a C string, so a zero byte ends the line early.
* ``"verbose": true`` prints ``Resource 'output':`` and then one line per element,
  ``[index] value (0xBITS)``: the bits make that comparison exact.
* ``{"type": "writeFile", "targetPath": "out.npy"}`` writes the whole buffer (``sizeInBytes`` /
  element size elements, 1-D unless ``dimensions`` is given): exact too.

Precision: a printed float carries 6 significant digits, so dmltile rounds its own value the same
way (``format(v, ".6g")``) before comparing, and compares zeros' signs. Every FLOAT16 value stays
distinct at 6 digits (neighbours differ by at least 2**-11 relatively), so FLOAT16 comparisons are
exact up to NaN payloads; FLOAT32 ones are not. Integers print exactly.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..core.enums import DataType
from ..errors import InputError, UnreadableOutput
from ..execute.npy import read_npy
from ..validate.source import read_regular

MAX_OUTPUT_BYTES = 512 * 1024 * 1024
_HEADER = re.compile(r"^Resource '(?P<name>[^'\n]*)':(?P<sep> ?)", re.M)
_VERBOSE_ROW = re.compile(r"\[ *(?P<index>\d+)\] (?P<value>[^\n]*?|\n) \(0x *(?P<bits>[0-9A-Fa-f]+)\)\n")
_NAN = re.compile(r"^[-+]?(nan(\(\w*\))?|1\.#(qnan|snan|ind))$", re.I)
_INF = re.compile(r"^(?P<sign>[-+]?)(inf(inity)?|1\.#inf)$", re.I)


@dataclass(frozen=True)
class Printed:
    """One resource as DxDispatch showed it: the value texts, and their bits when known."""

    name: str
    values: list[str]
    bits: list[int] | None = None
    truncated_at: int | None = None  # 8-bit print cut short by a zero byte at this index


@dataclass(frozen=True)
class Comparison:
    """The verdict: identical, or the first difference (index into the flat output)."""

    identical: bool
    message: str
    index: int | None = None
    ours: Any = None
    theirs: Any = None


def parse_float(text: str) -> float:
    """A float as the C++ runtime prints it (``1.5``, ``1e+06``, ``-nan(ind)``, ``inf``, ``1.#INF``)."""
    t = text.strip()
    if _NAN.match(t):
        return math.nan
    m = _INF.match(t)
    if m:
        return -math.inf if m.group("sign") == "-" else math.inf
    try:
        return float(t)
    except ValueError:
        raise UnreadableOutput(f"{text!r} is not a number") from None


def _resource_header(text: str, resource: str | None) -> re.Match:
    headers = list(_HEADER.finditer(text))
    names = [h.group("name") for h in headers]
    if not headers:
        raise UnreadableOutput(
            "no \"Resource '<name>': ...\" line found; is this the output of a DxDispatch print command?"
        )
    if resource is None:
        resource = "output" if "output" in names else (names[0] if len(set(names)) == 1 else None)
        if resource is None:
            raise UnreadableOutput(
                f"several resources were printed ({', '.join(map(repr, names))}); choose one with --resource"
            )
    matches = [h for h in headers if h.group("name") == resource]
    if not matches:
        raise UnreadableOutput(
            f"resource {resource!r} was not printed; printed: {', '.join(map(repr, names))}"
        )
    return matches[-1]  # the last print shows the final state


def _chars(body: str, count: int, signed: bool) -> tuple[list[str], int | None]:
    """8-bit values printed as characters at fixed positions: value, ", ", value, ..., newline.

    Returns the values read and, when a zero byte ended the line early, the index where it did.
    """
    values: list[str] = []
    i = 0
    for k in range(count):
        last = k == count - 1
        ch = body[i : i + 1]
        followed = body[i + 1 : i + 2] in ("\n", "") if last else body[i + 1 : i + 3] == ", "
        if ch == "" or (ch == "\n" and not followed):
            return values, k
        if not followed:
            raise UnreadableOutput(f"value {k} of the 8-bit print is not followed by ', '")
        byte = ord(ch)
        values.append(str(byte - 256 if signed and byte >= 128 else byte))
        i += 3
    return values, None


def parse_printed(text: str | bytes, count: int, dtype: Any, resource: str | None = None) -> Printed:
    """The values DxDispatch printed for ``resource`` (default: ``output``, or the only one printed).

    ``count`` and ``dtype`` are what dmltile expects: they settle the positions of 8-bit values,
    which DxDispatch prints as characters.
    """
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    header = _resource_header(text, resource)
    name, body, before = header.group("name"), text[header.end() :], text[: header.start()]
    if ("\r\n" in before) if "\n" in before else body.endswith("\r\n"):  # Windows text-mode stdout
        body = body.replace("\r\n", "\n")
    small = np.dtype(dtype).itemsize == 1
    if header.group("sep") == "" and body.startswith("\n"):  # verbose: one row per element
        rows: list[re.Match[str]] = []
        at = 1
        while (row := _VERBOSE_ROW.match(body, at)) and int(row.group("index")) == len(rows):
            rows.append(row)
            at = row.end()
        if not rows:
            raise UnreadableOutput(
                f"resource {name!r}: no '[index] value (0xBITS)' rows after the verbose header"
            )
        truncated = len(rows) if len(rows) < count and small else None
        return Printed(
            name, [r.group("value") for r in rows], [int(r.group("bits"), 16) for r in rows], truncated
        )
    if small:
        values, truncated = _chars(body, count, np.dtype(dtype).kind == "i")
        return Printed(name, values, None, truncated)
    line = body.split("\n", 1)[0].strip()
    return Printed(name, line.split(", ") if line else [])


def _float_equal(ours: float, theirs: float) -> bool:
    if math.isnan(ours) or math.isnan(theirs):
        return math.isnan(ours) and math.isnan(theirs)
    shown = float(format(ours, ".6g"))
    return shown == theirs and math.copysign(1, shown) == math.copysign(1, theirs)


def compare_printed(printed: Printed, expected: np.ndarray) -> Comparison:
    """Compare a parsed print with the expected flat elements (see the module docstring for precision)."""
    flat = np.asarray(expected).reshape(-1)
    is_float = flat.dtype.kind == "f"
    n = min(len(printed.values), flat.size)
    if printed.bits is not None:
        ours_bits = flat.view(f"u{flat.dtype.itemsize}")
        how = "bit-exact (the verbose print carries each element's bits)"
        for i in range(n):
            if int(ours_bits[i]) != printed.bits[i]:
                return Comparison(
                    False,
                    f"first difference at index {i}: expected bits 0x{int(ours_bits[i]):X} "
                    f"({flat[i]!r}), DxDispatch printed 0x{printed.bits[i]:X} ({printed.values[i]}); "
                    f"compared {how}",
                    i,
                    flat[i].item(),
                    printed.values[i],
                )
    else:
        how = (
            "at the 6 significant digits DxDispatch prints (dmltile's values rounded the same way, "
            "signs of zeros compared)"
            if is_float
            else "exactly (integers print exactly)"
        )
        for i in range(n):
            try:
                theirs = parse_float(printed.values[i]) if is_float else int(printed.values[i])
            except ValueError:
                raise UnreadableOutput(
                    f"value {i} of resource {printed.name!r} is {printed.values[i]!r}, not an integer"
                ) from None
            ours = flat[i].item()
            same = _float_equal(float(ours), theirs) if is_float else ours == theirs
            if not same:
                shown = format(float(ours), ".6g") if is_float else str(ours)
                return Comparison(
                    False,
                    f"first difference at index {i}: expected {shown}, DxDispatch printed "
                    f"{printed.values[i]}; compared {how}",
                    i,
                    ours,
                    printed.values[i],
                )
    if printed.truncated_at is not None:
        raise UnreadableOutput(
            f"the first {printed.truncated_at} values match, but DxDispatch's print of 8-bit values stops at "
            "the first zero byte (it streams the values as characters of a C string), so values from index "
            f"{printed.truncated_at} on cannot be read; compare the .npy that the model's writeFile command "
            "wrote instead"
        )
    if len(printed.values) != flat.size:
        return Comparison(
            False,
            f"DxDispatch printed {len(printed.values)} values of resource {printed.name!r}, "
            f"but {flat.size} are expected; the first {n} match",
            n,
        )
    return Comparison(
        True, f"identical: all {flat.size} values of resource {printed.name!r} match, compared {how}"
    )


def compare_npy(written: np.ndarray, expected: np.ndarray) -> Comparison:
    """Compare the .npy DxDispatch's writeFile wrote (the whole buffer) with the expected elements, bit for bit.

    The file may be longer (its trailing elements are buffer padding past the printed elements).
    """
    got, flat = np.asarray(written).reshape(-1), np.asarray(expected).reshape(-1)
    if got.dtype != flat.dtype:
        return Comparison(False, f"DxDispatch wrote {got.dtype} values, but {flat.dtype} are expected")
    if got.size < flat.size:
        return Comparison(
            False, f"DxDispatch wrote {got.size} values, but {flat.size} are expected", got.size
        )
    bits = f"u{flat.dtype.itemsize}"
    differs = np.flatnonzero(got[: flat.size].view(bits) != flat.view(bits))
    if differs.size:
        i = int(differs[0])
        return Comparison(
            False,
            f"first difference at index {i}: expected {flat[i]!r}, DxDispatch wrote {got[i]!r} "
            f"({differs.size} elements differ; compared bit-exactly)",
            i,
            flat[i].item(),
            got[i].item(),
        )
    extra = (
        f" (its {got.size - flat.size} further elements are buffer padding, not compared)"
        if got.size > flat.size
        else ""
    )
    return Comparison(True, f"identical: all {flat.size} values match bit-exactly{extra}")


def load_expected(path: str | Path) -> np.ndarray:
    """An expected.npy (any shape; compared flat). Raises UnreadableOutput when it cannot be used."""
    try:
        array = read_npy(path)
    except InputError as e:
        raise UnreadableOutput(str(e)) from None
    try:
        DataType.from_numpy(array.dtype)
    except ValueError:
        raise UnreadableOutput(f"{path}: dtype {array.dtype} is not a DirectML data type") from None
    return array


def compare_dxdispatch(output: str | Path, expected: Any, resource: str | None = None) -> Comparison:
    """Compare DxDispatch's captured stdout (or the .npy its writeFile wrote) with the expected values.

    ``expected`` is an array or a path to a .npy. Raises UnreadableOutput when either cannot be read.
    """
    flat = load_expected(expected) if isinstance(expected, (str, Path)) else np.asarray(expected)
    path = Path(output)
    if path.suffix.lower() == ".npy":
        return compare_npy(load_expected(path), flat)
    try:
        data = read_regular(path, "DxDispatch output", MAX_OUTPUT_BYTES)
    except InputError as e:
        raise UnreadableOutput(str(e)) from None
    return compare_printed(parse_printed(data, flat.size, flat.dtype, resource), flat)
