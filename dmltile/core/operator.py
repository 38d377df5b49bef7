"""The operator descriptors: DML_TILE_OPERATOR_DESC and the DML_OPERATOR_DESC that wraps it."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import Field, PlainSerializer, PlainValidator, WithJsonSchema, model_validator
from pydantic_core import PydanticCustomError

from . import layout
from .enums import TILE, CEnum, OperatorType
from .tensor import BufferTensorDesc, CModel, DefaultedUInt32, TensorDesc, UInt32, c_name, enum_parser


class TileOperatorDesc(CModel):
    """DML_TILE_OPERATOR_DESC."""

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    repeats_count: Annotated[
        DefaultedUInt32, Field(default=None, validate_default=False, description="defaults to len(Repeats)")
    ]
    repeats: tuple[UInt32, ...]

    @model_validator(mode="wrap")
    @classmethod
    def _fill_defaults(cls, data: Any, handler):
        desc = handler(data)
        if desc.repeats_count is None:
            filled = desc.model_copy(update={"repeats_count": len(desc.repeats)})
            filled.__pydantic_fields_set__.discard("repeats_count")  # still left out, as written
            return filled
        return desc


def _tile_only(value: Any) -> CEnum:
    op = _parse_operator_type(value)
    if op != TILE:
        raise PydanticCustomError(
            "dml_not_tile",
            "operator Type is {op}; dmltile describes DML_OPERATOR_TILE only",
            {"op": op.c_name},
        )
    return op


_parse_operator_type = enum_parser(OperatorType)
# OperatorType is built from data at import, so annotations name its base class CEnum.
TileType = Annotated[
    CEnum,
    PlainValidator(_tile_only),
    PlainSerializer(c_name, return_type=str),
    WithJsonSchema({"enum": ["DML_OPERATOR_TILE", "TILE", 70]}),
]


class OperatorDesc(CModel):
    """DML_OPERATOR_DESC for Tile: ``{"Type": "DML_OPERATOR_TILE", "Desc": {...}}``.

    A bare DML_TILE_OPERATOR_DESC object (no Type/Desc wrapper) is accepted and wrapped.
    """

    type: TileType = TILE
    desc: TileOperatorDesc

    @model_validator(mode="before")
    @classmethod
    def _wrap_bare(cls, data: Any) -> Any:
        return layout.wrap_operator(data)

    # -- convenience views -------------------------------------------------------------------
    @property
    def input(self) -> BufferTensorDesc:
        """The input's DML_BUFFER_TENSOR_DESC."""
        return self.desc.input_tensor.desc

    @property
    def output(self) -> BufferTensorDesc:
        """The output's DML_BUFFER_TENSOR_DESC."""
        return self.desc.output_tensor.desc

    @property
    def repeats(self) -> tuple[int, ...]:
        """The Repeats array."""
        return self.desc.repeats

    def to_dict(self) -> dict:
        """The canonical wrapped document as a dict (every field written, C names)."""
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self, indent: int | None = 2) -> str:
        """The canonical wrapped document as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)
