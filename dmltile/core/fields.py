"""What each descriptor field is: its C type, what it means, an example value.

The meanings say what a field is, never what values it may take: those limits belong to the rules
that check them, and ``validate.rules.field_description`` joins the two for messages and ``explain``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FieldInfo:
    """One field of a DirectML struct."""

    c_type: str
    meaning: str
    example: str


FIELDS: dict[str, FieldInfo] = {
    "Type": FieldInfo(
        "enum", "which union member Desc holds (DML_OPERATOR_TYPE or DML_TENSOR_TYPE)", '"DML_OPERATOR_TILE"'
    ),
    "Desc": FieldInfo("struct", "the operator's or tensor's own description", "{...}"),
    "InputTensor": FieldInfo(
        "DML_TENSOR_DESC",
        "the tensor to read: the elements to be tiled",
        '{"DataType": "FLOAT32", "Sizes": [1, 1, 2, 3]}',
    ),
    "OutputTensor": FieldInfo(
        "DML_TENSOR_DESC",
        "the tensor to write",
        '{"DataType": "FLOAT32", "Sizes": [1, 1, 6, 9]}',
    ),
    "RepeatsCount": FieldInfo("UINT", "the length of Repeats", "4"),
    "Repeats": FieldInfo(
        "UINT array", "how many tiled copies to make along each input dimension", "[1, 1, 3, 3]"
    ),
    "DataType": FieldInfo("DML_TENSOR_DATA_TYPE", "the element type", '"DML_TENSOR_DATA_TYPE_FLOAT32"'),
    "Flags": FieldInfo(
        "DML_TENSOR_FLAGS",
        "NONE, or OWNED_BY_DML for a tensor bound once at initialization",
        '"DML_TENSOR_FLAG_NONE"',
    ),
    "DimensionCount": FieldInfo("UINT", "the number of dimensions", "4"),
    "Sizes": FieldInfo("UINT array", "the size of each dimension, outermost first", "[1, 1, 2, 3]"),
    "Strides": FieldInfo(
        "UINT array or null",
        "elements to step per index of each dimension; null means packed, 0 broadcasts",
        "null",
    ),
    "TotalTensorSizeInBytes": FieldInfo("UINT64", "the bytes the buffer holds for the tensor", "24"),
    "GuaranteedBaseOffsetAlignment": FieldInfo(
        "UINT",
        "the alignment (in bytes) that the tensor's offset in its bound buffer is known to have",
        "0",
    ),
}

UINT_RANGE = {"UINT": (0, 2**32 - 1), "UINT64": (0, 2**64 - 1), "UINT array": (0, 2**32 - 1)}


def c_type_range(field: str) -> tuple[int, int]:
    """The value range of an integer field or of an integer array's elements."""
    info = FIELDS.get(field)
    c_type = info.c_type.replace(" or null", "") if info else "UINT"
    return UINT_RANGE.get(c_type, UINT_RANGE["UINT"])
