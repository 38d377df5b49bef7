"""Tensor descriptors: DML_BUFFER_TENSOR_DESC and DML_TENSOR_DESC, plus where their elements lie.

The models hold what was written, as written: a wrong ``DimensionCount`` stays wrong so that
validation can report it. Fields with exactly one correct default are filled in when
left out. JSON keys are the C names; Python attributes are snake_case.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    WithJsonSchema,
    model_validator,
)
from pydantic.alias_generators import to_pascal
from pydantic_core import PydanticCustomError

from ..errors import EnumParseError
from . import layout
from .enums import CEnum, DataType, TensorFlags, TensorType
from .layout import last_element_index as last_element_index  # re-exported
from .layout import packed_strides as packed_strides  # re-exported

if TYPE_CHECKING:
    import numpy as np

UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1

UInt32 = Annotated[int, Field(strict=True, ge=0, le=UINT32_MAX)]
UInt64 = Annotated[int, Field(strict=True, ge=0, le=UINT64_MAX)]


def enum_parser(enum_cls: type[CEnum]) -> Callable[[Any], CEnum]:
    """A validator that parses a DirectML enum from any spelling, reporting a ``dml_enum`` error."""

    def parse(value: Any) -> CEnum:
        try:
            return enum_cls.parse(value)
        except EnumParseError as e:
            raise PydanticCustomError(
                "dml_enum",
                "{value} is not a {enum} value",
                {"value": repr(value)[:60], "enum": e.enum_name, "choices": ", ".join(e.choices[:24])},
            ) from None

    return parse


def enum_json_schema(enum_cls: type[CEnum]) -> dict[str, Any]:
    """The JSON Schema of an enum field: any C name, short name or C integer."""
    names = [m.c_name for m in enum_cls] + [m.name for m in enum_cls]
    return {"anyOf": [{"enum": names}, {"type": "integer", "enum": [m.value for m in enum_cls]}]}


def c_name(member: CEnum) -> str:
    """How an enum field serialises: the member's full C name."""
    return member.c_name


# Enum fields: parse from any spelling, dump the C name.
DataTypeField = Annotated[
    DataType,
    PlainValidator(enum_parser(DataType)),
    PlainSerializer(c_name, return_type=str),
    WithJsonSchema(enum_json_schema(DataType)),
]
TensorFlagsField = Annotated[
    TensorFlags,
    PlainValidator(enum_parser(TensorFlags)),
    PlainSerializer(c_name, return_type=str),
    WithJsonSchema(enum_json_schema(TensorFlags)),
]
TensorTypeField = Annotated[
    TensorType,
    PlainValidator(enum_parser(TensorType)),
    PlainSerializer(c_name, return_type=str),
    WithJsonSchema(enum_json_schema(TensorType)),
]


class CModel(BaseModel):
    """Base of the descriptor models: frozen, hashable, strict about keys, C names in JSON."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_pascal,
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
    )


def _not_null(value: Any) -> Any:
    """Optional counts may be left out, but an explicit null is a type error (C has no null UINT)."""
    if value is None:
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


# A count or size that may be left out, but not written as null: C has no null UINT. A field declares
# it as ``Annotated[DefaultedUInt32, Field(default=None, validate_default=False)]``: None is only a
# placeholder that the model's wrap validator replaces with the computed value, so after validation
# the field is always an int. (The default sits inside Annotated because ``x: int = Field(None)``
# would tell type checkers the field may be None.)
DefaultedUInt32 = Annotated[
    UInt32, BeforeValidator(_not_null), WithJsonSchema({"type": "integer", "minimum": 0})
]
DefaultedUInt64 = Annotated[
    UInt64, BeforeValidator(_not_null), WithJsonSchema({"type": "integer", "minimum": 0})
]


class BufferTensorDesc(CModel):
    """DML_BUFFER_TENSOR_DESC."""

    data_type: DataTypeField
    flags: TensorFlagsField = TensorFlags.NONE
    dimension_count: Annotated[
        DefaultedUInt32, Field(default=None, validate_default=False, description="defaults to len(Sizes)")
    ]
    sizes: tuple[UInt32, ...]
    strides: tuple[UInt32, ...] | None = Field(default=None, description="null means packed")
    total_tensor_size_in_bytes: Annotated[
        DefaultedUInt64,
        Field(
            default=None,
            validate_default=False,
            description="defaults to DMLCalcBufferTensorSize(DataType, Sizes, Strides)",
        ),
    ]
    guaranteed_base_offset_alignment: UInt32 = 0

    @model_validator(mode="wrap")
    @classmethod
    def _fill_defaults(cls, data: Any, handler):
        desc = handler(data)
        updates = {}
        if desc.dimension_count is None:
            updates["dimension_count"] = len(desc.sizes)
        if desc.total_tensor_size_in_bytes is None:
            updates["total_tensor_size_in_bytes"] = layout.calc_buffer_tensor_size(
                desc.data_type, desc.sizes, layout.strides_or_packed(desc.sizes, desc.strides)
            )
        return desc.model_copy(update=updates) if updates else desc

    @property
    def element_count(self) -> int:
        """Number of logical elements (product of Sizes)."""
        return math.prod(self.sizes)

    @property
    def effective_strides(self) -> tuple[int, ...]:
        """The strides in elements: as written, or packed when Strides is null."""
        return tuple(self.strides) if self.strides is not None else packed_strides(self.sizes)

    @classmethod
    def packed(
        cls, data_type: Any, sizes: Sequence[int], strides: Sequence[int] | None = None
    ) -> BufferTensorDesc:
        """A desc with every optional field at its default: the common case, built from Python."""
        return cls.model_validate(
            {
                "DataType": data_type,
                "Sizes": list(sizes),
                "Strides": None if strides is None else list(strides),
            }
        )


class TensorDesc(CModel):
    """DML_TENSOR_DESC: a Type and a Desc. A bare buffer desc is wrapped as a BUFFER tensor."""

    type: TensorTypeField = TensorType.BUFFER
    desc: BufferTensorDesc

    @model_validator(mode="before")
    @classmethod
    def _wrap_bare(cls, data: Any) -> Any:
        return layout.wrap_tensor(data)


def calc_buffer_tensor_size(
    data_type: Any, sizes: Sequence[int], strides: Sequence[int] | None = None
) -> int:
    """DMLCalcBufferTensorSize for a data type given by any spelling (``"FLOAT32"``, a DataType, 1):
    the minimum ``TotalTensorSizeInBytes`` for a buffer tensor (the formula is ``layout``'s)."""
    return layout.calc_buffer_tensor_size(DataType.parse(data_type), sizes, strides)


def element_offsets(sizes: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """The element offset of every index, in row-major index order (int64; multiply by the
    element size for bytes). Allocates one int64 per element: callers bound the size first."""
    import numpy as np  # here, not at the top: only strided tensors need it, and judging starts sooner

    offsets = np.zeros(1, dtype=np.int64)
    for size, stride in zip(sizes, strides, strict=False):
        offsets = (offsets[:, None] + np.arange(int(size), dtype=np.int64) * int(stride)).ravel()
    return offsets


def overlapping_strides(
    sizes: Sequence[int], strides: Sequence[int], exact_limit: int = 1 << 22
) -> bool | None:
    """Whether two distinct indices of a strided tensor reach the same element.

    True: they do. False: they cannot. None: too large to decide exactly (over ``exact_limit``
    elements) and the quick sufficient test did not settle it.
    """
    dims = sorted((int(st), int(s)) for s, st in zip(sizes, strides, strict=False) if int(s) > 1)
    if any(st == 0 for st, _ in dims):
        return True
    reach = 0  # the largest offset the smaller-stride axes reach together
    for st, s in dims:
        if st <= reach:
            break
        reach += (s - 1) * st
    else:
        return False
    if math.prod(s for _, s in dims) > exact_limit:
        return None
    import numpy as np

    offsets = element_offsets([s for _, s in dims], [st for st, _ in dims])
    return bool(np.unique(offsets).size != offsets.size)
