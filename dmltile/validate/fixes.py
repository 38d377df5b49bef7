"""Machine-applicable fixes, computed from the document at hand.

Every issue that can be fixed by editing the document carries ``fix``: a list of edits (set a
value at a path, rename a key, remove a key) into the canonical wrapped document. Applied in
order (``apply_fix``), they make the issue's rule pass without breaking another: a fix that
would make a new error (a larger output needing a larger ``TotalTensorSizeInBytes``, say)
carries the edits that settle it too.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

from ..core.enums import DataType, FeatureLevel, TensorFlags, TensorType
from ..core.tensor import UINT32_MAX, calc_buffer_tensor_size
from .levels import newest_level, tile_support
from .report import Edit, Issue
from .suggest import accepted_values, closest_key, did_you_mean, keys_at

TENSORS = ("InputTensor", "OutputTensor")
_TOKEN = re.compile(r"([A-Za-z_$][\w$]*)|\[(\d+)\]")
NO_FIX = ("DML001", "DML303", "DML401", "DML402")


# -- paths and documents -------------------------------------------------------------------
def split_path(path: str) -> list[str | int]:
    """``Desc.InputTensor.Desc.Sizes[2]`` -> ``['Desc', 'InputTensor', 'Desc', 'Sizes', 2]``."""
    return [name if name else int(index) for name, index in _TOKEN.findall(path)]


def join_path(parts: list[str | int]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def wrapped(document: Any) -> Any:
    """The document in the canonical wrapped shape (``Type``/``Desc`` around the operator and each
    tensor), nothing else changed: the shape that issue paths point into."""
    if not isinstance(document, dict):
        return document
    doc = copy.deepcopy(document)
    if "Desc" not in doc and "InputTensor" in doc:
        doc = {
            "Type": doc.get("Type", "DML_OPERATOR_TILE"),
            "Desc": {k: v for k, v in doc.items() if k != "Type"},
        }
    desc = doc.get("Desc")
    if isinstance(desc, dict):
        for name in TENSORS:
            t = desc.get(name)
            if isinstance(t, dict) and "Desc" not in t:
                desc[name] = {
                    "Type": t.get("Type", "DML_TENSOR_TYPE_BUFFER"),
                    "Desc": {k: v for k, v in t.items() if k != "Type"},
                }
    return doc


def apply_fix(document: Any, fix: Issue | list[Edit] | tuple[Edit, ...]) -> dict:
    """A copy of ``document`` (wrapped) with the issue's fix (or the edits) applied in order."""
    edits = fix.fix if isinstance(fix, Issue) else fix
    doc = wrapped(document)
    for e in edits:
        parts = split_path(e.path)
        parent: Any = doc
        for p in parts[:-1]:
            parent = parent[p]
        last = parts[-1]
        if e.op == "set":
            if isinstance(parent, list) and isinstance(last, int) and last == len(parent):
                parent.append(copy.deepcopy(e.value))
            else:
                parent[last] = copy.deepcopy(e.value)
        elif e.op == "remove":
            del parent[last]
        elif e.op == "rename":
            value = parent.pop(last)
            parent[e.to] = value
    return doc


def describe(edits: list[Edit]) -> str:
    """The edits as a sentence, for a hint."""
    words = []
    for e in edits:
        name = e.path.rsplit(".", 1)[-1]
        if e.op == "set":
            words.append(f"set {name} to {json.dumps(e.value)}")
        elif e.op == "rename":
            words.append(f'rename "{name}" to "{e.to}"')
        else:
            words.append(f'remove "{name}"')
    return "; ".join(words)


# -- reading values from a raw document, leniently ---------------------------------------------
def _at(doc: Any, *keys: Any) -> Any:
    for k in keys:
        if isinstance(doc, dict) and isinstance(k, str):
            doc = doc.get(k)
        elif isinstance(doc, list) and isinstance(k, int) and 0 <= k < len(doc):
            doc = doc[k]
        else:
            return None
    return doc


def _uints(value: Any) -> list[int] | None:
    if isinstance(value, list) and all(
        isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= UINT32_MAX for v in value
    ):
        return list(value)
    return None


def _buffer(doc: Any, tensor: str) -> dict:
    t = _at(doc, "Desc", tensor, "Desc")
    return t if isinstance(t, dict) else {}


def _dtype(doc: Any, tensor: str) -> DataType | None:
    value = _buffer(doc, tensor).get("DataType")
    try:
        return DataType.parse(value)
    except ValueError:
        return None


def _other(tensor: str) -> str:
    return "OutputTensor" if tensor == "InputTensor" else "InputTensor"


def derived_sizes(doc: Any, tensor: str) -> list[int]:
    """The Sizes a tensor should have, from the other tensor's Sizes and the Repeats."""
    ins = _uints(_buffer(doc, "InputTensor").get("Sizes"))
    outs = _uints(_buffer(doc, "OutputTensor").get("Sizes"))
    reps = _uints(_at(doc, "Desc", "Repeats"))
    if tensor == "OutputTensor":
        if ins and reps and len(ins) == len(reps):
            return [max(i, 1) * max(r, 1) for i, r in zip(ins, reps, strict=True)]
        if ins:
            return [max(i, 1) for i in ins]
        return [1] * len(reps) if reps else [1, 1, 6, 9]
    if outs and reps and len(outs) == len(reps):
        return [o // r if r and o % r == 0 and o // r > 0 else 1 for o, r in zip(outs, reps, strict=True)]
    if reps:
        return [1] * len(reps)
    count = _buffer(doc, tensor).get("DimensionCount")
    if isinstance(count, int) and not isinstance(count, bool) and 1 <= count <= 8:
        return [1] * count
    return [max(o, 1) for o in outs] if outs else [1, 1, 2, 3]


def derived_repeats(doc: Any) -> list[int]:
    """The Repeats that map the input's Sizes onto the output's (1 where they do not divide)."""
    ins = _uints(_buffer(doc, "InputTensor").get("Sizes"))
    outs = _uints(_buffer(doc, "OutputTensor").get("Sizes"))
    if ins and outs and len(ins) == len(outs):
        return [o // i if i and o % i == 0 and o // i > 0 else 1 for i, o in zip(ins, outs, strict=True)]
    if ins:
        return [1] * len(ins)
    count = _at(doc, "Desc", "RepeatsCount")
    if isinstance(count, int) and not isinstance(count, bool) and 1 <= count <= 8:
        return [1] * count
    return [1, 1, 3, 3]


def needed_bytes(doc: Any, tensor: str) -> int | None:
    """DMLCalcBufferTensorSize for the tensor as written, or None when it cannot be computed."""
    t = _buffer(doc, tensor)
    sizes, strides, dtype = _uints(t.get("Sizes")), t.get("Strides"), _dtype(doc, tensor)
    if sizes is None or dtype is None or dtype.bits == 0:
        return None
    strides = _uints(strides) if strides is not None else None
    if strides is not None and len(strides) != len(sizes):
        strides = None
    return calc_buffer_tensor_size(dtype, sizes, strides)


def _tensor_value(doc: Any, tensor: str) -> dict:
    dtype = _dtype(doc, _other(tensor)) or DataType.FLOAT32
    return {
        "Type": "DML_TENSOR_TYPE_BUFFER",
        "Desc": {"DataType": dtype.c_name, "Sizes": derived_sizes(doc, tensor)},
    }


# -- the value a field should have -------------------------------------------------------------
def field_value(doc: Any, parts: list[str | int], level: FeatureLevel) -> Edit | None:
    """An edit giving the field at ``parts`` a value consistent with the rest of the document."""
    names = [p for p in parts if isinstance(p, str)]
    if not names:
        return None
    field = names[-1]
    tensor = next((t for t in TENSORS if t in parts), "InputTensor")
    index = parts[-1] if isinstance(parts[-1], int) else None
    path = join_path(parts)
    field_path = join_path(parts[:-1]) if index is not None else path
    in_buffer = len(parts) >= 4 and parts[2] == "Desc"

    def element(values: list[int]) -> Edit:
        if index is not None and index < len(values):
            return Edit(op="set", path=path, value=values[index])
        return Edit(op="set", path=field_path, value=values)

    if field == "Sizes" and in_buffer:
        return element(derived_sizes(doc, tensor))
    if field == "Repeats":
        return element(derived_repeats(doc))
    if field == "RepeatsCount":
        ins = _uints(_buffer(doc, "InputTensor").get("Sizes"))
        reps = _uints(_at(doc, "Desc", "Repeats"))
        return Edit(op="set", path=path, value=len(ins) if ins else len(reps) if reps else 4)
    if field == "DimensionCount":
        sizes = _uints(_buffer(doc, tensor).get("Sizes"))
        return Edit(op="set", path=path, value=len(sizes) if sizes else len(derived_sizes(doc, tensor)))
    if field == "Strides":
        return Edit(op="set", path=field_path, value=None)
    if field == "TotalTensorSizeInBytes":
        need = needed_bytes(doc, tensor)
        return Edit(op="set", path=path, value=need) if need is not None else Edit(op="remove", path=path)
    if field == "GuaranteedBaseOffsetAlignment":
        return Edit(op="set", path=path, value=0)
    if field == "DataType":
        other = _dtype(doc, _other(tensor))
        ok = accepted_values("DML_TENSOR_DATA_TYPE", level, tensor)
        choice = other if other is not None and other in ok else (ok[0] if ok else DataType.FLOAT32)
        return Edit(op="set", path=path, value=choice.c_name)
    if field == "Flags":
        return Edit(op="set", path=path, value=TensorFlags.NONE.c_name)
    if field == "Type":
        type_name = "DML_OPERATOR_TILE" if len(parts) == 1 else TensorType.BUFFER.c_name
        return Edit(op="set", path=path, value=type_name)
    if field in TENSORS and len(parts) == 2:
        return Edit(op="set", path=path, value=_tensor_value(doc, field))
    if field == "Desc" and len(parts) == 1:
        value = {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 3]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 6, 9]},
            "Repeats": [1, 1, 3, 3],
        }
        return Edit(op="set", path=path, value=value)
    if field == "Desc" and len(parts) == 3:
        return Edit(op="set", path=path, value=_tensor_value(doc, str(parts[1]))["Desc"])
    return None


# -- rank and type rewrites for the feature-level rules ------------------------------------------
def _rank_edits(
    doc: Any,
    sizes_fn: Callable[[list], list],
    repeats_fn: Callable[[list], list],
    strides_fn: Callable[[list], list],
) -> list[Edit]:
    """Edits applying one axis rewrite to both tensors and the Repeats (and their counts)."""
    edits = []
    for tensor in TENSORS:
        t = _buffer(doc, tensor)
        base = f"Desc.{tensor}.Desc"
        sizes = sizes_fn(list(t.get("Sizes", [])))
        edits.append(Edit(op="set", path=f"{base}.Sizes", value=sizes))
        if isinstance(t.get("Strides"), list):
            edits.append(Edit(op="set", path=f"{base}.Strides", value=strides_fn(list(t["Strides"]))))
        if "DimensionCount" in t:
            edits.append(Edit(op="set", path=f"{base}.DimensionCount", value=len(sizes)))
    reps = repeats_fn(list(_at(doc, "Desc", "Repeats") or []))
    edits.append(Edit(op="set", path="Desc.Repeats", value=reps))
    if "RepeatsCount" in (_at(doc, "Desc") or {}):
        edits.append(Edit(op="set", path="Desc.RepeatsCount", value=len(reps)))
    return edits


def _fit_rank(doc: Any, level: FeatureLevel) -> list[Edit] | None:
    """Pad with leading 1s, or drop axes of size 1 that are not repeated, to a rank the level takes."""
    row = tile_support(level)
    ins = _uints(_buffer(doc, "InputTensor").get("Sizes"))
    outs = _uints(_buffer(doc, "OutputTensor").get("Sizes"))
    reps = _uints(_at(doc, "Desc", "Repeats"))
    if row is None or not ins or not outs or not reps or not len(ins) == len(outs) == len(reps):
        return None
    dims = row.tensors["InputTensor"].dimension_counts
    n = len(ins)
    if n in dims:
        return []
    if n < min(dims):
        k = min(dims) - n

        def lead(strides: list) -> list:
            span = strides[0] * ins[0] if strides else 1
            return [span] * k + strides

        return _rank_edits(doc, lambda v: [1] * k + v, lambda v: [1] * k + v, lead)
    drop = [i for i in range(n) if ins[i] == 1 and reps[i] == 1 and outs[i] == 1]
    target = max(d for d in dims if d <= n) if any(d <= n for d in dims) else None
    if target is None or n - len(drop) > target:
        return None
    drop = drop[: n - target]
    keep = [i for i in range(n) if i not in drop]

    def pick(v: list) -> list:
        return [v[i] for i in keep]

    return _rank_edits(doc, pick, pick, pick)


def _retype(doc: Any, level: FeatureLevel, dtype: DataType) -> list[Edit] | None:
    """Tile copies bits: the same bytes as an accepted type of the same width, or 64-bit elements
    as two UINT32 each (one more innermost axis of 2, repeat 1)."""
    ok = accepted_values("DML_TENSOR_DATA_TYPE", level)
    same = sorted((d for d in ok if d.bits == dtype.bits), key=lambda d: not d.name.startswith("UINT"))
    if same:
        return [Edit(op="set", path=f"Desc.{t}.Desc.DataType", value=same[0].c_name) for t in TENSORS]
    if dtype.bits != 64 or DataType.UINT32 not in ok:
        return None
    edits = [Edit(op="set", path=f"Desc.{t}.Desc.DataType", value=DataType.UINT32.c_name) for t in TENSORS]
    edits += _rank_edits(doc, lambda v: v + [2], lambda v: v + [1], lambda st: [s * 2 for s in st] + [1])
    fitted = _fit_rank(apply_fix(doc, edits), level)
    if fitted is None:
        return None
    return edits + fitted


# -- the fix of one issue -----------------------------------------------------------------------
def primary_edits(doc: Any, issue: Issue, level: FeatureLevel) -> list[Edit] | None:
    """The edits that make ``issue``'s rule pass at this path, before settling their effects."""
    code, parts = issue.code, split_path(issue.path)
    if code in NO_FIX or not parts:
        return None
    if code in ("DML002", "DML004"):
        edit = field_value(doc, parts, level)
        return [edit] if edit else None
    if code == "DML003":
        parent = _at(doc, *parts[:-1])
        present = set(parent) if isinstance(parent, dict) else set()
        close = closest_key(str(parts[-1]), keys_at(tuple(parts)), present)
        if close:
            return [Edit(op="rename", path=issue.path, to=close)]
        return [Edit(op="remove", path=issue.path)]
    if code == "DML005":
        field = [p for p in parts if isinstance(p, str)][-1]
        tensor = next((t for t in TENSORS if t in parts), "InputTensor")
        enum_name = {"DataType": "DML_TENSOR_DATA_TYPE", "Flags": "DML_TENSOR_FLAGS"}.get(
            field, "DML_OPERATOR_TYPE" if len(parts) == 1 else "DML_TENSOR_TYPE"
        )
        choices = accepted_values(enum_name, level, tensor)
        at = len(parts) - 1 - parts[::-1].index(field)
        guess = did_you_mean(_at(doc, *parts), enum_name, choices)
        other = _dtype(doc, _other(tensor)) if field == "DataType" else None
        if guess is not None and other is not None and other in choices and other != guess:
            guess = other  # Tile needs both tensors' types the same: the other one is already valid
        if guess is not None:
            return [Edit(op="set", path=join_path(parts[: at + 1]), value=guess.c_name)]
        edit = field_value(doc, parts[: at + 1], level)
        return [edit] if edit else None
    if code in ("DML101", "DML102", "DML105", "DML107", "DML110", "DML206", "DML207"):
        if code == "DML206":
            dtype = _dtype(doc, "InputTensor")
            return [Edit(op="set", path=issue.path, value=dtype.c_name)] if dtype else None
        edit = field_value(doc, parts, level)
        return [edit] if edit else None
    if code in ("DML103", "DML109"):
        return [Edit(op="set", path=issue.path, value=None)]
    if code == "DML104":
        edit = field_value(doc, parts, level)
        return [edit] if edit else None
    if code == "DML106":
        tensor_name = str(parts[1])
        total = _buffer(doc, tensor_name).get("TotalTensorSizeInBytes")
        if not isinstance(total, int):
            return None
        need = needed_bytes(doc, tensor_name) or 0
        return [Edit(op="set", path=issue.path, value=max(need, total + (-total) % 4))]
    if code == "DML108":
        if parts[-1] == "TotalTensorSizeInBytes":
            edit = field_value(doc, parts, level)
            return [edit] if edit else None
        return None
    if code in ("DML201", "DML202"):
        ins = _uints(_buffer(doc, "InputTensor").get("Sizes"))
        reps = _uints(_at(doc, "Desc", "Repeats"))
        if ins is None:
            return None
        n = len(ins)
        edits = []
        if reps is None or len(reps) != n:
            edits.append(Edit(op="set", path="Desc.Repeats", value=derived_repeats(doc)))
        if "RepeatsCount" in (_at(doc, "Desc") or {}):
            edits.append(Edit(op="set", path="Desc.RepeatsCount", value=n))
        return edits or None
    if code == "DML203":
        return [field_value(doc, parts, level)]  # type: ignore[list-item]
    if code == "DML204":
        ins = _uints(_buffer(doc, "InputTensor").get("Sizes"))
        reps = _uints(_at(doc, "Desc", "Repeats"))
        if not ins or not reps or len(ins) != len(reps):
            return None
        return [Edit(op="set", path=issue.path, value=derived_sizes(doc, "OutputTensor"))]
    if code == "DML205":
        i = parts[-1]
        ins = _uints(_buffer(doc, "InputTensor").get("Sizes"))
        reps = _uints(_at(doc, "Desc", "Repeats"))
        if not isinstance(i, int) or not ins or not reps:
            return None
        want = ins[i] * reps[i]
        if want <= UINT32_MAX:
            return [Edit(op="set", path=issue.path, value=want)]
        rep = max(1, UINT32_MAX // ins[i])
        return [
            Edit(op="set", path=f"Desc.Repeats[{i}]", value=rep),
            Edit(op="set", path=issue.path, value=ins[i] * rep),
        ]
    if code == "DML301":
        return _fit_rank(doc, level) or None
    if code == "DML302":
        dtype = _dtype(doc, str(parts[1]))
        return _retype(doc, level, dtype) if dtype else None
    return None


def _key(i: Issue) -> tuple[str, str]:
    return i.code, i.path


def compute_fix(
    doc: Any,
    issue: Issue,
    level: FeatureLevel,
    before: list[Issue],
    judge: Callable[[dict, FeatureLevel], list[Issue]],
    rounds: int = 3,
) -> tuple[list[Edit], int] | None:
    """The issue's edits plus those that settle any new error they cause (a larger output needing a
    larger TotalTensorSizeInBytes, say), checked by re-validating with ``judge``; and how many of
    them are the issue's own (the rest settle their effects)."""
    edits = primary_edits(doc, issue, level)
    if not edits:
        return None
    own = len(edits)
    seen = {_key(i) for i in before if i.severity == "error"}
    for _ in range(rounds):
        try:
            fixed = apply_fix(doc, edits)
        except (KeyError, IndexError, TypeError):
            return None
        new = [i for i in judge(fixed, level) if i.severity == "error" and _key(i) not in seen]
        if not new:
            break
        for i in new:
            more = primary_edits(fixed, i, level)
            if not more:
                return edits, own
            edits = edits + more
    return edits, own


def attach_fixes(
    data: Any,
    issues: list[Issue],
    level: FeatureLevel | None,
    judge: Callable[[dict, FeatureLevel], list[Issue]],
) -> list[Issue]:
    """The issues, each with its computed ``fix`` (and a hint spelling it out where the rule's own
    hint could not know the values: missing fields, unknown keys, wrong types, unknown enum names)."""
    if not isinstance(data, dict) or not issues:
        return issues
    doc = wrapped(data)
    level = level or newest_level()
    out = []
    for i in issues:
        try:
            found = compute_fix(doc, i, level, issues, judge)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            found = None
        if not found:
            out.append(i)
            continue
        edits, own = found
        hint = i.hint
        if i.code == "DML002":
            first = edits[0]
            hint = f'add "{first.path.rsplit(".", 1)[-1]}": {json.dumps(first.value)}'
        elif i.code == "DML003":
            if edits[0].op == "rename":
                hint = f'did you mean "{edits[0].to}"? rename it'
            elif "did you mean" in i.hint:
                hint = "remove it (the field it resembles is already present)"
        elif i.code in ("DML104", "DML203"):  # the rule knows the rule; the fix knows the value
            hint = f"{describe(edits[:1])} ({i.hint})"
        elif i.code == "DML004":
            hint = f"{i.hint}, e.g. {describe(edits[:own])}" if i.hint else describe(edits[:own])
        elif i.code == "DML005" and "did you mean" not in i.hint:
            hint = f"{i.hint}; e.g. {describe(edits[:own])}"
        elif i.code == "DML005" and f'"{edits[0].value}"' not in i.hint:
            other = _other(next((t for t in TENSORS if t in i.path), "InputTensor"))
            hint = (
                f"{i.hint}; but {other} is {edits[0].value} and Tile needs both the same: "
                f"{describe(edits[:own])} (or change both)"
            )
        if len(edits) > own:  # what else the one fix changes, so the hint is the whole fix
            hint += f"; then {describe(edits[own:])}"
        out.append(i.model_copy(update={"fix": tuple(edits), "hint": hint}))
    return out
