"""Document rules (DML0xx): what makes JSON a descriptor document at all. They are found while
reading the document (``validate/document.py``), before any other rule can run."""

from __future__ import annotations

import json
from typing import Any

from ...core.enums import FeatureLevel
from ...core.fields import FIELDS, c_type_range
from ..report import Edit, Issue
from ..suggest import accepted_values, closest_key, did_you_mean, enum_hint, keys_at
from .citations import DOCUMENT
from .edits import describe, join_path, split_path
from .levels import FLOAT64_FROM
from .registry import Example, Words, field_description, found, register
from .values import at, dtype_of, field_fix, fix_field_value, other, tensor_in

register(
    "DML001",
    "the document is JSON text holding one object",
    DOCUMENT,
    "parse",
    why="A descriptor is a C struct, written as one JSON object whose keys are the struct's members; "
    "text that is not JSON, or JSON that is not an object, holds no struct to check.",
    example=Example([1, 2]),
    words={
        "not json": Words("{what} is not JSON: {reason}", "{hint}"),
        "not an object": Words(
            "the document is a JSON {kind}, not an object",
            'write a JSON object such as {{"Type": "DML_OPERATOR_TILE", "Desc": {{...}}}}',
        ),
        "too deep": Words("the document is nested too deeply to read"),
        "not a model": Words(
            'not a DxDispatch model: expected an object with a "dispatchables" object',
            'write {{"resources": {{...}}, "dispatchables": {{"tile": {{"type": "DML_OPERATOR_TILE", '
            '"desc": {{...}}}}}}, "commands": [...]}}',
        ),
        "dispatchable": Words("dispatchable {name!r} is not a JSON object"),
    },
)


def _hint_add(found: Issue, edits: list[Edit], own: int) -> str:
    first = edits[0]
    return f'add "{first.path.rsplit(".", 1)[-1]}": {json.dumps(first.value)}'


register(
    "DML002",
    "every required field is present (DataType, Sizes, InputTensor, OutputTensor, Repeats)",
    DOCUMENT,
    "parse",
    why="These members have no default DirectML could assume: the element type, the shape of each "
    "tensor and the repeats define the operator. Fields with one correct value (DimensionCount, "
    "TotalTensorSizeInBytes, RepeatsCount, Flags, Strides) may be left out and are computed.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
            "OutputTensor": {"Sizes": [4, 9]},
            "Repeats": [2, 3],
        }
    ),
    fix=fix_field_value,
    fix_hint=_hint_add,
    words={
        case: Words("required field {field} is missing" + about, 'add "{field}"' + what)
        for case, about, what in (
            ("", "", ""),
            ("what", "", ": {what}"),
            ("described", " ({description})", ": {what}"),
        )
    },
)


# The members that hold a struct: an object under an unknown key beside one of them missing is that
# member misspelt ("Tensor" for "Desc"), whatever its spelling, since no other member is an object.
_STRUCT_MEMBERS = ("Desc", "InputTensor", "OutputTensor")


def _fix_unknown_key(doc: Any, found: Issue, level: FeatureLevel) -> list[Edit] | None:
    """Rename a near-miss of an allowed key that is not already there, or an object to the one
    struct member missing beside it; remove anything else. Unknown keys earlier in the same object
    are renamed first, so two near-misses of one key ("Size" and "Sizess") never both become it: the
    first is renamed, the second removed, instead of one value overwriting the other."""
    parts = split_path(found.path)
    parent = at(doc, *parts[:-1])
    siblings = list(parent) if isinstance(parent, dict) else []
    allowed = keys_at(tuple(parts))
    taken = {k for k in siblings if k in allowed}
    for key in siblings[: siblings.index(parts[-1])] if parts[-1] in siblings else []:
        if key not in allowed and (to := _rename_target(doc, [*parts[:-1], key], allowed, taken)):
            taken.add(to)
    close = _rename_target(doc, parts, allowed, taken)
    if close:
        return [Edit(op="rename", path=found.path, to=close)]
    return [Edit(op="remove", path=found.path)]


def _rename_target(doc: Any, parts: list, allowed: tuple[str, ...], taken: set[str]) -> str | None:
    """The allowed key an unknown one at ``parts`` is renamed to, none of ``taken``: the one it
    resembles, or, for an object, the one struct member missing beside it."""
    close = closest_key(str(parts[-1]), allowed, taken)
    missing = [k for k in allowed if k in _STRUCT_MEMBERS and k not in taken]
    if not close and isinstance(at(doc, *parts), dict) and len(missing) == 1:
        close = missing[0]
    return close


def _hint_unknown_key(found: Issue, edits: list[Edit], own: int) -> str:
    if edits[0].op == "rename":
        return f'did you mean "{edits[0].to}"? rename it'
    if "did you mean" in found.hint:
        return (
            "remove it (the field it resembles is already present, or another unknown field is renamed to it)"
        )
    return found.hint


register(
    "DML003",
    "no field other than the C struct's members",
    DOCUMENT,
    "parse",
    why="A key that is no member of the struct is most often a misspelt one (Stride for Strides), "
    "whose value would otherwise be silently ignored while the default is used.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3], "Stride": [3, 1]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
            "Repeats": [2, 3],
        }
    ),
    fix=_fix_unknown_key,
    fix_hint=_hint_unknown_key,
    fix_applicability="unsafe",  # which key a misspelt one meant, or that its value means nothing, is a guess
    words={
        "": Words('unknown field "{field}" (value {value})', "remove it"),
        "near": Words(
            'unknown field "{field}" (value {value})', 'did you mean "{close}"? Otherwise remove it'
        ),
        "twice": Words(
            "{reason}; JSON readers disagree on which value wins, so dmltile refuses it",
            'keep one "{key}" in that object',
        ),
    },
)


def _hint_example_value(found: Issue, edits: list[Edit], own: int) -> str:
    return f"{found.hint}; the fix: {describe(edits[:own])}" if found.hint else describe(edits[:own])


register(
    "DML004",
    "each value has its C type: UINT 0..2^32-1, UINT64 0..2^64-1, arrays of UINT, objects for structs; "
    "booleans are not integers",
    DOCUMENT,
    "parse",
    why="Each member is passed to DirectML as its C type: a negative number, a fraction, a boolean or "
    "a value past the type's range has no faithful UINT to become, and silently converting it would "
    "describe another tensor.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, -3]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
            "Repeats": [2, 3],
        }
    ),
    fix=fix_field_value,
    fix_hint=_hint_example_value,
    words={
        "struct": Words("{field} is {value}, but it must be a JSON object", "write {member} as {what}"),
        "array": Words("{field} is {value}, but it must be an array of UINT", "write {field} as {what}"),
        "uint": Words(
            "{element} is {value}, but it must be a {c_type} ({why})",
            "write a whole number from {lo} to {hi}",
        ),
        "too long": Words(
            "{key} has {length:value}; DirectML tensors have at most 8 dimensions, so dmltile reads arrays "
            "of at most {limit:value} and stops here",
            "write one value per dimension, at most 8 (DML_TENSOR_DIMENSION_COUNT_MAX1)",
        ),
    },
)

_ENUM_OF_FIELD = {"DataType": "DML_TENSOR_DATA_TYPE", "Flags": "DML_TENSOR_FLAGS"}


def _fix_enum(doc: Any, found: Issue, level: FeatureLevel) -> list[Edit] | None:
    """The member the value most likely meant; for a DataType, the other tensor's when that one is
    valid (Tile needs both the same); else any value that fits."""
    parts = split_path(found.path)
    field = [p for p in parts if isinstance(p, str)][-1]
    tensor = tensor_in(parts)
    enum_name = _ENUM_OF_FIELD.get(field, "DML_OPERATOR_TYPE" if len(parts) == 1 else "DML_TENSOR_TYPE")
    choices = accepted_values(enum_name, level, tensor)
    where = parts[: len(parts) - parts[::-1].index(field)]
    guess = did_you_mean(at(doc, *parts), enum_name, choices)
    same = dtype_of(doc, other(tensor)) if field == "DataType" else None
    if guess is not None and same is not None and same in choices and same != guess:
        guess = same
    if guess is not None:
        return [Edit(op="set", path=join_path(where), value=guess.c_name)]
    return field_fix(doc, where, level)


def _hint_enum(found: Issue, edits: list[Edit], own: int) -> str:
    if "did you mean" not in found.hint:
        return f"{found.hint}; e.g. {describe(edits[:own])}"
    if f'"{edits[0].value}"' not in found.hint:
        second = other(tensor_in(found.path))
        return (
            f"{found.hint}; but {second} is {edits[0].value} and Tile needs both the same: "
            f"{describe(edits[:own])} (or change both)"
        )
    return found.hint


register(
    "DML005",
    "enum values name a member of their DirectML enum (full name, short name or integer)",
    "DirectML.h enums",
    "parse",
    why="An enum member is a number DirectML switches on; a name that is no member (BOOL, HALF, a "
    "typo) has no number. Tile copies bits, so a type DirectML lacks is tiled as the type of the "
    "same width (bool as UINT8).",
    example=Example(
        {
            "InputTensor": {"DataType": "BOOL", "Sizes": [2, 3]},
            "OutputTensor": {"DataType": "UINT8", "Sizes": [4, 9]},
            "Repeats": [2, 3],
        }
    ),
    fix=_fix_enum,
    fix_hint=_hint_enum,
    fix_applicability="unsafe",  # the member a name that is none most resembles is a guess
    words=Words("{field} is {value}, which is not a {enum} value", "{note}{hint}"),
)


# -- the issues the reader reports, one function per message -------------------------------------
def show(value: Any, limit: int = 48) -> str:
    """A short JSON-like rendering of a value for messages."""
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def not_json(reason: str, what: str = "the document", hint: str = "") -> Issue:
    """DML001 for text that does not parse as JSON."""
    return found("DML001", "", "not json", what=what, reason=reason, hint=hint)


def duplicate_key(key: str, reason: str) -> Issue:
    """DML003 for an object that names one key twice."""
    return found("DML003", key, "twice", reason=reason, key=key)


def json_kind(value: Any) -> str:
    """The JSON name of a value's type."""
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def not_an_object(value: Any) -> Issue:
    """DML001 for JSON that is not an object."""
    return found("DML001", "", "not an object", kind=json_kind(value))


def nested_too_deeply() -> Issue:
    """DML001 for a document nested past what the reader follows."""
    return found("DML001", "", "too deep")


# What a required field holds, for the hint of a missing one: words, not example values, which would
# read as the user's own data when copied (a fix, where the document implies the values, shows them).
_WHAT_TO_WRITE = {
    "Desc": 'an object holding "InputTensor", "OutputTensor" (each with its "DataType" and "Sizes") and "Repeats"',
    "InputTensor": 'an object with the input\'s "DataType" and "Sizes"',
    "OutputTensor": 'an object with the output\'s "DataType" and "Sizes" (the input\'s Sizes times the Repeats)',
    "DataType": "the element type, a DML_TENSOR_DATA_TYPE name",
    "Sizes": "the size of each dimension, outermost first",
    "Repeats": "how many copies to make along each input dimension, none of them zero",
}


def _what_to_write(path: str, field: str) -> str | None:
    if field == "Desc" and path != "Desc":
        return 'an object with the tensor\'s "DataType" and "Sizes"'
    return _WHAT_TO_WRITE.get(field)


def missing_field(path: str, field: str) -> Issue:
    """DML002: a required field is missing; the message says what it is, the hint what to write."""
    info = FIELDS.get(field)
    what = _what_to_write(path, field) or (info.example if info else None)
    case = "described" if info else "what" if what else ""
    description = field_description(field) if info else ""
    return found("DML002", path, case, field=field, what=what, description=description)


def unknown_field(path: str, loc: tuple, field: str, value: Any) -> Issue:
    """DML003: a key that is no member of the struct at ``loc``."""
    close = closest_key(field, keys_at(loc))
    return found("DML003", path, "near" if close else "", field=field, value=show(value), close=close)


def not_a_struct(path: str, field: str, value: Any) -> Issue:
    """DML004: a struct written as something other than an object."""
    what = _what_to_write(path, field) or "an object"
    return found(
        "DML004", path, "struct", field=field or "the value", value=show(value), member=field, what=what
    )


def not_an_array(path: str, field: str, value: Any) -> Issue:
    """DML004: a UINT array written as something other than an array."""
    info = FIELDS.get(field)
    if info and info.example == "null":  # an optional array (Strides): null or left out means packed
        what = "a JSON array of whole numbers, or null (or leave it out) for packed"
    else:
        more = _what_to_write(path, field)
        what = "a JSON array of whole numbers" + (f": {more}" if more else "")
    return found("DML004", path, "array", field=field, value=show(value), what=what)


def not_a_uint(path: str, loc: tuple, field: str, value: Any) -> Issue:
    """DML004: a number (or array element) outside its C type, or not a whole number at all."""
    lo, hi = c_type_range(field)
    c_type = "UINT64" if hi > 2**32 else "UINT"
    element = "an element of " + field if loc and isinstance(loc[-1], int) else field
    if isinstance(value, bool):
        why = "a boolean is not an integer"
    elif isinstance(value, float) and value.is_integer():
        why = f"{show(value)} is a whole number written as a float; write {int(value)}"
    elif isinstance(value, float):
        why = "only whole numbers are UINTs"
    else:
        why = f"{c_type} holds {lo} to {hi}"
    return found(
        "DML004", path, "uint", element=element, value=show(value), c_type=c_type, why=why, lo=lo, hi=hi
    )


def array_too_long(path: str, key: str, length: int, limit: int) -> Issue:
    """DML004: an array far longer than any tensor has dimensions, not read past ``limit``."""
    return found("DML004", path, "too long", key=key, length=length, limit=limit)


# Framework type names people reach for, and what DirectML calls the type with the same bits.
_ENUM_HINTS = {
    "BOOL": "DirectML has no bool type; a bool is one byte, so tile it as UINT8. ",
    "BFLOAT16": "DirectML has no bfloat16 type; Tile copies bits, so tile it as UINT16. ",
    "DOUBLE": f"DOUBLE is spelled FLOAT64 (which Tile takes from level {FLOAT64_FROM}, though its page "
    "does not list it; below that, DML302 says how to tile its bytes). ",
}


def unknown_enum(
    path: str, loc: tuple, field: str, value: Any, enum: str, level: FeatureLevel | None
) -> Issue:
    """DML005: a value that names no member of the field's enum; the hint offers the closest member
    Tile accepts there."""
    enum_name = "DML_OPERATOR_TYPE" if loc == ("Type",) else enum
    hint, _ = enum_hint(value, enum_name, level, tensor_in(list(loc)))
    note = _ENUM_HINTS.get(str(value).upper(), "")
    return found(
        "DML005", path, field=field, value=show(value), enum=enum or "known enum", note=note, hint=hint
    )
