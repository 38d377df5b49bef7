"""A descriptor as the runner's C structs see it: integer enums, defaults filled in, every field
checked to fit its C type."""

from __future__ import annotations

from typing import Any

from ...core.layout import DATA_TYPE_VALUES, calc_buffer_tensor_size, wrap_operator, wrap_tensor

TENSOR_TYPES = {"INVALID": 0, "BUFFER": 1}
TENSOR_FLAGS = {"NONE": 0, "OWNED_BY_DML": 1}
OPERATOR_TYPES = {"TILE": 70}
UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
MAX_DIMENSIONS = 64  # MAX_DIMS of runner.c, whose arrays hold the values; DirectML itself allows 8


def _enum(value: Any, table: dict[str, int], prefix: str, what: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{what}: a boolean is not an enum value")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        name = value.strip().upper().removeprefix(prefix)
        if name in table:
            return table[name]
    raise ValueError(f"{what}: unknown value {value!r}")


def _flags(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, (list, tuple)):
        out = 0
        for v in value:
            out |= _flags(v)
        return out
    if isinstance(value, str) and "|" in value:
        return _flags([v.strip() for v in value.split("|")])
    return _enum(value, TENSOR_FLAGS, "DML_TENSOR_FLAG_", "Flags")


def _tensor(tensor: Any, where: str) -> dict[str, Any]:
    wrapped = wrap_tensor(tensor)
    if not isinstance(wrapped, dict) or not isinstance(wrapped["Desc"], dict):
        raise TypeError(f"{where} must be an object with its buffer fields or a Desc object")
    b = wrapped["Desc"]
    data_type = _enum(b.get("DataType", 0), DATA_TYPE_VALUES, "DML_TENSOR_DATA_TYPE_", f"{where}.DataType")
    sizes = [int(s) for s in b.get("Sizes") or []]
    strides = b.get("Strides")
    strides = None if strides is None else [int(s) for s in strides]
    dims = b.get("DimensionCount")
    total = b.get("TotalTensorSizeInBytes")
    if total is None:
        total = calc_buffer_tensor_size(data_type, sizes, strides)
    return {
        "Type": _enum(wrapped["Type"], TENSOR_TYPES, "DML_TENSOR_TYPE_", f"{where}.Type"),
        "DataType": data_type,
        "Flags": _flags(b.get("Flags")),
        "DimensionCount": len(sizes) if dims is None else int(dims),
        "Sizes": sizes,
        "Strides": strides,
        "TotalTensorSizeInBytes": int(total),
        "GuaranteedBaseOffsetAlignment": int(b.get("GuaranteedBaseOffsetAlignment") or 0),
    }


def to_c_view(desc: dict[str, Any]) -> dict[str, Any]:
    """The descriptor as the C structs see it: integer enums, defaults filled, wrapped or bare accepted.

    Raises ``ValueError`` or ``TypeError`` when the document cannot be written as C structs (an
    out-of-range UINT, an unknown enum name, a missing tensor).
    """
    doc = wrap_operator(desc)
    body = doc.get("Desc") if isinstance(doc, dict) else None
    if not isinstance(body, dict):
        raise TypeError("the descriptor must be a DML_TILE_OPERATOR_DESC or a Type/Desc object around one")
    if not isinstance(body.get("InputTensor"), dict) or not isinstance(body.get("OutputTensor"), dict):
        raise TypeError("InputTensor and OutputTensor must be objects")
    repeats = [int(r) for r in body.get("Repeats") or []]
    count = body.get("RepeatsCount")
    view = {
        "OperatorType": _enum(doc.get("Type", 70), OPERATOR_TYPES, "DML_OPERATOR_", "Type"),
        "InputTensor": _tensor(body["InputTensor"], "InputTensor"),
        "OutputTensor": _tensor(body["OutputTensor"], "OutputTensor"),
        "RepeatsCount": len(repeats) if count is None else int(count),
        "Repeats": repeats,
    }
    _check_ranges(view)
    return view


def _u32(v: int, what: str) -> None:
    if not 0 <= v <= UINT32_MAX:
        raise ValueError(f"{what} = {v} does not fit a UINT")


def _check_tensor_ranges(name: str, t: dict[str, Any]) -> None:
    for key in ("Type", "DataType", "Flags", "DimensionCount", "GuaranteedBaseOffsetAlignment"):
        _u32(t[key], f"{name}.{key}")
    for key in ("Sizes", "Strides"):
        for i, v in enumerate(t[key] or []):
            _u32(v, f"{name}.{key}[{i}]")
    if not 0 <= t["TotalTensorSizeInBytes"] <= UINT64_MAX:
        raise ValueError(f"{name}.TotalTensorSizeInBytes does not fit a UINT64")
    if max(t["DimensionCount"], len(t["Sizes"]), len(t["Strides"] or [])) > MAX_DIMENSIONS:
        raise ValueError(f"{name}: more than {MAX_DIMENSIONS} dimensions")


def _check_ranges(view: dict[str, Any]) -> None:
    _u32(view["RepeatsCount"], "RepeatsCount")
    for i, r in enumerate(view["Repeats"]):
        _u32(r, f"Repeats[{i}]")
    for name in ("InputTensor", "OutputTensor"):
        _check_tensor_ranges(name, view[name])
    if max(view["RepeatsCount"], len(view["Repeats"])) > MAX_DIMENSIONS:
        raise ValueError(f"more than {MAX_DIMENSIONS} repeats")
