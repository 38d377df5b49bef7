""" "Did you mean": the closest value Tile accepts for an enum field, and the closest field name.

Only values Tile can take at the feature level are offered: no UNKNOWN, UINT4 or INT4 data type,
no operator other than DML_OPERATOR_TILE, and no data type the level's Tile row lacks.
"""

from __future__ import annotations

import difflib
from typing import Any

from ..core.enums import TILE, DataType, FeatureLevel, TensorFlags, TensorType
from .levels import newest_level, tile_support

# The keys each object of the canonical wrapped document may hold, by its place in the document.
OPERATOR_KEYS = ("Type", "Desc")
TILE_KEYS = ("InputTensor", "OutputTensor", "RepeatsCount", "Repeats")
TENSOR_KEYS = ("Type", "Desc")
BUFFER_KEYS = (
    "DataType",
    "Flags",
    "DimensionCount",
    "Sizes",
    "Strides",
    "TotalTensorSizeInBytes",
    "GuaranteedBaseOffsetAlignment",
)

# Names people reach for (other APIs' spellings) and the DirectML type with the same bits.
DATA_TYPE_ALIASES = {
    "FP32": "FLOAT32",
    "FLOAT": "FLOAT32",
    "SINGLE": "FLOAT32",
    "FP16": "FLOAT16",
    "HALF": "FLOAT16",
    "DOUBLE": "FLOAT64",
    "FP64": "FLOAT64",
    "INT": "INT32",
    "UINT": "UINT32",
    "LONG": "INT64",
    "BOOL": "UINT8",
    "BOOLEAN": "UINT8",
    "BFLOAT16": "UINT16",
    "BF16": "UINT16",
}

_ENUMS = {
    "DML_TENSOR_DATA_TYPE": DataType,
    "DML_TENSOR_TYPE": TensorType,
    "DML_TENSOR_FLAGS": TensorFlags,
}


def keys_at(loc: tuple) -> tuple[str, ...]:
    """The keys allowed in the object that holds the field at ``loc`` (a path of keys and indices)."""
    parent = [p for p in loc[:-1]]
    if not parent:
        return OPERATOR_KEYS
    if parent == ["Desc"]:
        return TILE_KEYS
    if len(parent) == 2 and parent[0] == "Desc":
        return TENSOR_KEYS
    return BUFFER_KEYS


def _comparable(text: str, names: list[str]) -> bool:
    """Whether ``text`` is short enough to be close to one of ``names`` at all. Closeness is
    difflib's ratio 2M/(a+b) >= 0.6 with M <= b, so a text longer than 7/3 of the longest name is
    close to none: comparing only texts within that bound keeps suggesting linear in the input."""
    return len(text) * 3 <= 7 * max(map(len, names), default=0)


def closest_key(key: str, allowed: tuple[str, ...], present: set[str] | None = None) -> str | None:
    """The allowed key ``key`` most likely meant (case or a few letters off), not one already present."""
    pool = [k for k in allowed if k not in (present or set())]
    if not _comparable(str(key), pool):
        return None
    for k in pool:
        if k.lower() == str(key).lower():
            return k
    close = difflib.get_close_matches(str(key), pool, n=1, cutoff=0.6)
    return close[0] if close else None


def accepted_values(
    enum_name: str, level: FeatureLevel | None = None, tensor: str = "InputTensor"
) -> list[Any]:
    """The members of a DirectML enum that Tile accepts in this place at ``level`` (default: newest)."""
    level = level or newest_level()
    if enum_name == "DML_TENSOR_DATA_TYPE":
        row = tile_support(level)
        return list(row.tensors[tensor].data_types) if row else []
    if enum_name == "DML_TENSOR_TYPE":
        return [TensorType.BUFFER]
    if enum_name == "DML_TENSOR_FLAGS":
        return (
            [TensorFlags.NONE] if tensor == "OutputTensor" else [TensorFlags.NONE, TensorFlags.OWNED_BY_DML]
        )
    if enum_name == "DML_OPERATOR_TYPE":
        return [TILE]
    return []


def _score(text: str, member: Any) -> float:
    up = text.upper()
    short = up.removeprefix(member.c_prefix())
    return max(
        difflib.SequenceMatcher(None, up, member.c_name).ratio(),
        difflib.SequenceMatcher(None, short, member.name).ratio(),
    )


def did_you_mean(value: Any, enum_name: str, choices: list[Any]) -> Any | None:
    """The member of ``choices`` that ``value`` most likely meant, or None when nothing is close.

    Case-insensitive names, NumPy dtype names (``float16``), other APIs' names (``FP16``, ``HALF``)
    and names a few letters off (``DML_TENSOR_FLAGS_NONE``, ``DML_OPERATOR_TILES``) all count.
    """
    if not isinstance(value, str) or not choices:
        return None
    text = value.strip()
    if not _comparable(text, [m.c_name for m in choices]):
        return None
    up = text.upper()
    for m in choices:
        if up in (m.name, m.c_name):
            return m
    if enum_name == "DML_TENSOR_DATA_TYPE":
        # C's names first: NumPy reads the bare "float" and "int" as its 64-bit defaults, but a
        # descriptor author writing them means C's float and int (32 bits), as HLSL and DirectML do.
        tail = up.removeprefix(DataType.c_prefix()).rsplit("_", 1)[-1]
        alias = DATA_TYPE_ALIASES.get(up) or DATA_TYPE_ALIASES.get(tail)
        if alias:  # a known name of another width is no near miss of a type offered here
            return DataType[alias] if DataType[alias] in choices else None
        try:
            from_numpy = DataType.from_numpy(text.lower())
        except (TypeError, ValueError):
            from_numpy = None
        if from_numpy in choices:
            return from_numpy
    best = max(choices, key=lambda m: _score(text, m))
    return best if _score(text, best) >= 0.6 else None


def enum_hint(value: Any, enum_name: str, level: FeatureLevel | None, tensor: str) -> tuple[str, Any | None]:
    """(hint text, the suggested member or None) for a value that is not a member of ``enum_name``."""
    choices = accepted_values(enum_name, level, tensor)
    guess = did_you_mean(value, enum_name, choices)
    names = ", ".join(m.name if enum_name == "DML_TENSOR_DATA_TYPE" else m.c_name for m in choices)
    where = f" at {level.c_name}" if level is not None and enum_name == "DML_TENSOR_DATA_TYPE" else ""
    listing = f"Tile accepts {names}{where}" if choices else "no value is accepted here"
    if guess is not None:
        return f'did you mean "{guess.c_name}"? ({listing})', guess
    return f"use one of {names}" + (f" (Tile accepts no other{where})" if choices else ""), None


def enum_class(enum_name: str) -> Any:
    """The enum class for a C enum name (data type, tensor type, flags), or None."""
    return _ENUMS.get(enum_name)
