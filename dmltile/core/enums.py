"""DirectML enums as data: data types, tensor types, flags, operator types and feature levels.

Numeric values are DirectML.h's (checked against the DirectX-Headers port in dotnet/Silk.NET,
tag v1.614.0, and the DML_BUFFER_TENSOR_DESC / DML_FEATURE_LEVEL reference pages). Every enum
parses from its full C name (``DML_TENSOR_DATA_TYPE_FLOAT32``), its short name (``FLOAT32``) or
its C integer, and serialises to the full C name.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import EnumParseError
from .layout import element_bits
from .tables import read_table, read_text

if TYPE_CHECKING:
    import numpy as np

_PREFIXES = {
    "DataType": "DML_TENSOR_DATA_TYPE_",
    "TensorType": "DML_TENSOR_TYPE_",
    "TensorFlags": "DML_TENSOR_FLAG_",
    "OperatorType": "DML_OPERATOR_",
    "FeatureLevel": "DML_FEATURE_LEVEL",
}


_C_ENUM_NAMES = {
    "DataType": "DML_TENSOR_DATA_TYPE",
    "TensorType": "DML_TENSOR_TYPE",
    "TensorFlags": "DML_TENSOR_FLAGS",
    "OperatorType": "DML_OPERATOR_TYPE",
    "FeatureLevel": "DML_FEATURE_LEVEL",
}


_E = TypeVar("_E", bound="CEnum")


class CEnum(enum.IntEnum):
    """An IntEnum whose members know their C spelling (``PREFIX + name``)."""

    @classmethod
    def c_enum_name(cls) -> str:
        """The C enum's name, e.g. ``DML_TENSOR_DATA_TYPE``."""
        return _C_ENUM_NAMES[cls.__name__]

    @classmethod
    def c_prefix(cls) -> str:
        """What DirectML.h puts before a member's short name."""
        return _PREFIXES[cls.__name__]

    @property
    def c_name(self) -> str:
        """The name as DirectML.h spells it."""
        return self.c_prefix() + self.name

    @classmethod
    def parse(cls: type[_E], value: Any) -> _E:
        """Accept the full C name, the short name or the C integer (never a bool)."""
        if isinstance(value, cls):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            try:
                return cls(value)
            except ValueError:
                pass
        elif isinstance(value, str):
            short = value.removeprefix(cls.c_prefix())
            if short in cls.__members__:
                return cls.__members__[short]
        raise EnumParseError(cls.c_enum_name(), value, [m.name for m in cls])


class DataType(CEnum):
    """DML_TENSOR_DATA_TYPE."""

    UNKNOWN = 0
    FLOAT32 = 1
    FLOAT16 = 2
    UINT32 = 3
    UINT16 = 4
    UINT8 = 5
    INT32 = 6
    INT16 = 7
    INT8 = 8
    FLOAT64 = 9
    UINT64 = 10
    INT64 = 11
    UINT4 = 12
    INT4 = 13

    @property
    def bits(self) -> int:
        """Bits per element (0 for UNKNOWN)."""
        return element_bits(self)

    @property
    def element_size(self) -> int:
        """Bytes per element, rounded up (1 for the 4-bit types, 0 for UNKNOWN)."""
        return (self.bits + 7) // 8

    @property
    def numpy_dtype(self) -> np.dtype | None:
        """The NumPy dtype with the same bit layout, or None (UNKNOWN, 4-bit types)."""
        import numpy as np  # here, not at the top: judging a descriptor needs no NumPy

        name = _NUMPY.get(self)
        return np.dtype(name) if name else None

    @classmethod
    def from_numpy(cls, dtype: Any) -> DataType:
        """The DataType whose bit layout is NumPy's ``dtype``; ValueError when there is none."""
        import numpy as np

        dt = np.dtype(dtype)
        for member, name in _NUMPY.items():
            if np.dtype(name) == dt:
                return member
        raise ValueError(f"NumPy dtype {dt} has no DML_TENSOR_DATA_TYPE")


_NUMPY = {
    DataType.FLOAT32: "float32",
    DataType.FLOAT16: "float16",
    DataType.UINT32: "uint32",
    DataType.UINT16: "uint16",
    DataType.UINT8: "uint8",
    DataType.INT32: "int32",
    DataType.INT16: "int16",
    DataType.INT8: "int8",
    DataType.FLOAT64: "float64",
    DataType.UINT64: "uint64",
    DataType.INT64: "int64",
}


class TensorType(CEnum):
    """DML_TENSOR_TYPE."""

    INVALID = 0
    BUFFER = 1


class TensorFlags(CEnum):
    """DML_TENSOR_FLAGS (one flag is defined, so the values are exactly NONE and OWNED_BY_DML).

    Also accepts a list of flag names, OR-ed together, as DxDispatch writes them.
    """

    NONE = 0
    OWNED_BY_DML = 1

    @classmethod
    def parse(cls, value: Any) -> TensorFlags:
        """Parse one flag, or a list of flags OR-ed together."""
        if isinstance(value, list) and value:
            bits = 0
            for item in value:
                bits |= super().parse(item).value
            return cls(bits)
        return super().parse(value)


def _load_operator_types() -> dict[str, int]:
    """DML_OPERATOR_TYPE from the shipped table: one C name per line, the line number is the value."""
    text = read_text("operator_types.txt")
    names = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    return {name.removeprefix("DML_OPERATOR_"): value for value, name in enumerate(names)}


# 160 members read from data, so the enum is built with the functional API; TILE is the one that
# the models name, typed here for the type checker. mypy understands the functional API only when
# called on Enum/IntEnum themselves: on a subclass it reads CEnum(...) as a member lookup by value.
_OPERATOR_TYPES = _load_operator_types()
OperatorType: type[CEnum] = CEnum("OperatorType", _OPERATOR_TYPES)  # type: ignore[call-arg, arg-type, assignment]
OperatorType.__doc__ = "DML_OPERATOR_TYPE (values in enum order from DirectML.h)."
TILE: CEnum = OperatorType["TILE"]


_F = TypeVar("_F", bound="_FeatureLevel")


class _FeatureLevel(CEnum):
    """DML_FEATURE_LEVEL. Also parses ``"3.1"``, ``"3_1"`` and ``0x3100``."""

    @property
    def dotted(self) -> str:
        """``3.1``."""
        return self.name[1:].replace("_", ".")

    def __str__(self) -> str:
        return self.dotted

    @classmethod
    def parse(cls: type[_F], value: Any) -> _F:
        """Accept ``"3.1"``, ``"3_1"``, ``"DML_FEATURE_LEVEL_3_1"``, ``0x3100`` or the member."""
        if isinstance(value, str):
            key = "_" + value.strip().removeprefix("DML_FEATURE_LEVEL_").replace(".", "_")
            if key in cls.__members__:
                return cls.__members__[key]
            raise EnumParseError(cls.c_enum_name(), value, [m.dotted for m in cls])
        return super().parse(value)


def _load_feature_levels() -> list[tuple[str, int]]:
    """The members, ``("_3_1", 0x3100)``, from ``levels.toml``: the one list of the levels."""
    return [("_" + row["name"].replace(".", "_"), row["value"]) for row in read_table("levels.toml")["level"]]


# The members come from the levels table, so the enum is built with the functional API. The type
# checker sees the class with its methods and no members (it cannot read the table); the program
# gets the members.
if TYPE_CHECKING:

    class FeatureLevel(_FeatureLevel):
        """DML_FEATURE_LEVEL. Also parses ``"3.1"``, ``"3_1"`` and ``0x3100``."""

else:
    FeatureLevel = _FeatureLevel("FeatureLevel", _load_feature_levels(), module=__name__)
    FeatureLevel.__doc__ = _FeatureLevel.__doc__
