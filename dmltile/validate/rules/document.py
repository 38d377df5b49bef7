"""Document rules (DML0xx): what makes JSON a descriptor document at all. They are found while
reading the document (``validate/document.py``), before any other rule can run."""

from __future__ import annotations

import json
from typing import Any

from ...core.enums import FeatureLevel
from ..report import Edit, Issue
from ..suggest import accepted_values, closest_key, did_you_mean, keys_at
from .citations import DOCUMENT
from .edits import describe, join_path, split_path
from .registry import Example, register
from .values import at, dtype_of, field_fix, fix_field_value, other, tensor_in

register(
    "DML001",
    "the document is JSON text holding one object",
    DOCUMENT,
    "parse",
    why="A descriptor is a C struct, written as one JSON object whose keys are the struct's members; "
    "text that is not JSON, or JSON that is not an object, holds no struct to check.",
    example=Example([1, 2]),
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
)


def _fix_unknown_key(doc: Any, found: Issue, level: FeatureLevel) -> list[Edit] | None:
    """Rename a near-miss of an allowed key that is not already there; remove anything else."""
    parts = split_path(found.path)
    parent = at(doc, *parts[:-1])
    present = set(parent) if isinstance(parent, dict) else set()
    close = closest_key(str(parts[-1]), keys_at(tuple(parts)), present)
    if close:
        return [Edit(op="rename", path=found.path, to=close)]
    return [Edit(op="remove", path=found.path)]


def _hint_unknown_key(found: Issue, edits: list[Edit], own: int) -> str:
    if edits[0].op == "rename":
        return f'did you mean "{edits[0].to}"? rename it'
    if "did you mean" in found.hint:
        return "remove it (the field it resembles is already present)"
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
)


def _hint_example_value(found: Issue, edits: list[Edit], own: int) -> str:
    return f"{found.hint}, e.g. {describe(edits[:own])}" if found.hint else describe(edits[:own])


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
)
