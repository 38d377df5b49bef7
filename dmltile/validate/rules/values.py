"""The value a field of a (possibly broken) document should have, read leniently from the rest of it.

The fixes of many rules come down to "give this field the value the other fields imply": the
output's Sizes from the input's and the Repeats, a DimensionCount from the Sizes, the size from
DMLCalcBufferTensorSize. ``field_value`` answers that for any field; the helpers read values from
a raw document without trusting its types.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...core.enums import DataType, FeatureLevel, TensorFlags, TensorType
from ...core.layout import strides_or_packed
from ...core.tensor import UINT32_MAX, calc_buffer_tensor_size
from ..report import Edit, Issue
from ..suggest import accepted_values
from .edits import TENSORS, describe, join_path, split_path


def at(doc: Any, *keys: Any) -> Any:
    """The value at ``keys`` in nested dicts and lists, or None where the path does not exist."""
    for k in keys:
        if isinstance(doc, dict) and isinstance(k, str):
            doc = doc.get(k)
        elif isinstance(doc, list) and isinstance(k, int) and 0 <= k < len(doc):
            doc = doc[k]
        else:
            return None
    return doc


# DML_TENSOR_DIMENSION_COUNT_MAX1: no tensor has more dimensions, so a longer array is no shape a fix
# could copy (and copying a 100,000-value array into a hint is output nobody can use).
MAX_DIMENSIONS = 8


def uints(value: Any) -> list[int] | None:
    """``value`` when it is a list of at most MAX_DIMENSIONS UINTs, else None."""
    if (
        isinstance(value, list)
        and len(value) <= MAX_DIMENSIONS
        and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= UINT32_MAX for v in value)
    ):
        return list(value)
    return None


def small_count(value: Any) -> int | None:
    """A count of dimensions (1 to 8) when ``value`` is one."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 8 else None


def buffer(doc: Any, tensor: str) -> dict:
    """The buffer desc of ``tensor`` in a wrapped document ({} when absent)."""
    t = at(doc, "Desc", tensor, "Desc")
    return t if isinstance(t, dict) else {}


def sizes_of(doc: Any, tensor: str) -> list[int] | None:
    return uints(buffer(doc, tensor).get("Sizes"))


def repeats_of(doc: Any) -> list[int] | None:
    return uints(at(doc, "Desc", "Repeats"))


def dtype_of(doc: Any, tensor: str) -> DataType | None:
    """The tensor's DataType when it names one."""
    try:
        return DataType.parse(buffer(doc, tensor).get("DataType"))
    except ValueError:
        return None


def other(tensor: str) -> str:
    """The other tensor of the two."""
    return "OutputTensor" if tensor == "InputTensor" else "InputTensor"


def tensor_in(parts: list[str | int] | str) -> str:
    """The tensor a path points into (InputTensor when it names neither)."""
    return next((t for t in TENSORS if t in parts), "InputTensor")


# A fix gives a field only a value the rest of the document implies: where nothing implies it (no
# tensor, no Sizes, no Repeats to start from) these return None, and the issue gets no fix and a hint
# saying what to write, never example values that would stand in for the user's own. A size or
# repeat of 1 along an axis the document has is implied: it keeps the shape the user wrote.
def _output_sizes(doc: Any) -> list[int] | None:
    ins, reps = sizes_of(doc, "InputTensor"), repeats_of(doc)
    if ins and reps and len(ins) == len(reps):
        return [max(i, 1) * max(r, 1) for i, r in zip(ins, reps, strict=True)]
    if ins:
        return [max(i, 1) for i in ins]
    return [1] * len(reps) if reps else None


def _input_sizes(doc: Any) -> list[int] | None:
    outs, reps = sizes_of(doc, "OutputTensor"), repeats_of(doc)
    if outs and reps and len(outs) == len(reps):
        return [o // r if r and o % r == 0 and o // r > 0 else 1 for o, r in zip(outs, reps, strict=True)]
    if reps:
        return [1] * len(reps)
    count = small_count(buffer(doc, "InputTensor").get("DimensionCount"))
    if count:
        return [1] * count
    return [max(o, 1) for o in outs] if outs else None


def derived_sizes(doc: Any, tensor: str) -> list[int] | None:
    """The Sizes a tensor should have, from the other tensor's Sizes and the Repeats."""
    return _output_sizes(doc) if tensor == "OutputTensor" else _input_sizes(doc)


def derived_repeats(doc: Any) -> list[int] | None:
    """The Repeats that map the input's Sizes onto the output's (1 where they do not divide)."""
    ins, outs = sizes_of(doc, "InputTensor"), sizes_of(doc, "OutputTensor")
    if ins and outs and len(outs) > len(ins) and all(o == 1 for o in outs[: len(outs) - len(ins)]):
        outs = outs[len(outs) - len(ins) :]  # leading 1s hold no copies: the sizes line up from the right
    if ins and outs and len(ins) == len(outs):
        return [o // i if i and o % i == 0 and o // i > 0 else 1 for i, o in zip(ins, outs, strict=True)]
    shape = ins or outs
    if shape:
        return [1] * len(shape)
    count = small_count(at(doc, "Desc", "RepeatsCount"))
    return [1] * count if count else None


def needed_bytes(doc: Any, tensor: str) -> int | None:
    """DMLCalcBufferTensorSize for the tensor as written, or None when it cannot be computed."""
    t = buffer(doc, tensor)
    sizes, dtype = uints(t.get("Sizes")), dtype_of(doc, tensor)
    if sizes is None or dtype is None or dtype.bits == 0:
        return None
    return calc_buffer_tensor_size(dtype, sizes, strides_or_packed(sizes, uints(t.get("Strides"))))


def tensor_value(doc: Any, tensor: str) -> dict | None:
    """A whole tensor desc for ``tensor``: the other tensor's type, the Sizes the document implies;
    None when the document implies neither."""
    dtype, sizes = dtype_of(doc, other(tensor)), derived_sizes(doc, tensor)
    if dtype is None or sizes is None:
        return None
    return {"Type": TensorType.BUFFER.c_name, "Desc": {"DataType": dtype.c_name, "Sizes": sizes}}


@dataclass(frozen=True)
class Place:
    """A field's place in the document, as ``field_value`` needs it."""

    doc: Any
    parts: list[str | int]
    level: FeatureLevel

    @property
    def field(self) -> str:
        return [p for p in self.parts if isinstance(p, str)][-1]

    @property
    def tensor(self) -> str:
        return tensor_in(self.parts)

    @property
    def index(self) -> int | None:
        last = self.parts[-1]
        return last if isinstance(last, int) else None

    @property
    def path(self) -> str:
        return join_path(self.parts)

    @property
    def field_path(self) -> str:
        """The path of the whole field (the array, for an element of one)."""
        return join_path(self.parts[:-1]) if self.index is not None else self.path

    def set(self, value: Any) -> Edit:
        return Edit(op="set", path=self.path, value=value)

    def element(self, values: list[int] | None) -> Edit | None:
        """Set the element at the index from ``values``, or the whole array when there is none."""
        if values is None:
            return None
        if self.index is not None and self.index < len(values):
            return self.set(values[self.index])
        return Edit(op="set", path=self.field_path, value=values)


def _sizes(p: Place) -> Edit | None:
    in_buffer = len(p.parts) >= 4 and p.parts[2] == "Desc"
    return p.element(derived_sizes(p.doc, p.tensor)) if in_buffer else None


def _repeats_count(p: Place) -> Edit | None:
    shape = sizes_of(p.doc, "InputTensor") or repeats_of(p.doc)
    return p.set(len(shape)) if shape else None


def _dimension_count(p: Place) -> Edit | None:
    sizes = sizes_of(p.doc, p.tensor) or derived_sizes(p.doc, p.tensor)
    return p.set(len(sizes)) if sizes else None


def _total_size(p: Place) -> Edit:
    need = needed_bytes(p.doc, p.tensor)
    return p.set(need) if need is not None else Edit(op="remove", path=p.path)


def _data_type(p: Place) -> Edit:
    """The other tensor's type when Tile takes it here (both must match), else the first it takes."""
    same = dtype_of(p.doc, other(p.tensor))
    ok = accepted_values("DML_TENSOR_DATA_TYPE", p.level, p.tensor)
    choice = same if same is not None and same in ok else (ok[0] if ok else DataType.FLOAT32)
    return p.set(choice.c_name)


def _type(p: Place) -> Edit:
    return p.set("DML_OPERATOR_TILE" if len(p.parts) == 1 else TensorType.BUFFER.c_name)


def _tensor(p: Place) -> Edit | None:
    value = tensor_value(p.doc, p.field) if len(p.parts) == 2 else None
    return p.set(value) if value else None


def _desc(p: Place) -> Edit | None:
    """A tensor's missing Desc from the other tensor; the operator's has nothing to come from."""
    value = tensor_value(p.doc, str(p.parts[1])) if len(p.parts) == 3 else None
    return p.set(value["Desc"]) if value else None


_VALUES: dict[str, Callable[[Place], Edit | None]] = {
    "Sizes": _sizes,
    "Repeats": lambda p: p.element(derived_repeats(p.doc)),
    "RepeatsCount": _repeats_count,
    "DimensionCount": _dimension_count,
    "Strides": lambda p: Edit(op="set", path=p.field_path, value=None),
    "TotalTensorSizeInBytes": _total_size,
    "GuaranteedBaseOffsetAlignment": lambda p: p.set(0),
    "DataType": _data_type,
    "Flags": lambda p: p.set(TensorFlags.NONE.c_name),
    "Type": _type,
    "InputTensor": _tensor,
    "OutputTensor": _tensor,
    "Desc": _desc,
}


def field_value(doc: Any, parts: list[str | int], level: FeatureLevel) -> Edit | None:
    """An edit giving the field at ``parts`` a value consistent with the rest of the document."""
    if not any(isinstance(p, str) for p in parts):
        return None
    place = Place(doc, parts, level)
    value = _VALUES.get(place.field)
    return value(place) if value else None


def field_fix(doc: Any, parts: list[str | int], level: FeatureLevel) -> list[Edit] | None:
    """``field_value`` as a fix: one edit, or None."""
    edit = field_value(doc, parts, level)
    return [edit] if edit else None


def fix_field_value(doc: Any, issue: Issue, level: FeatureLevel) -> list[Edit] | None:
    """The fix of a rule broken by one field's value: the value the rest of the document implies."""
    return field_fix(doc, split_path(issue.path), level)


def fix_to_null(doc: Any, issue: Issue, level: FeatureLevel) -> list[Edit] | None:
    """The fix of a rule broken by an optional field (Strides): null, its default."""
    return [Edit(op="set", path=issue.path, value=None)]


def hint_value_then_rule(issue: Issue, edits: list[Edit], own: int) -> str:
    """The value the fix sets, then the rule's own hint (which knows the rule but not the value)."""
    return f"{describe(edits[:1])} ({issue.hint})"
