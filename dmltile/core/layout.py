"""Byte layout of a DirectML buffer tensor: element bits, strides, DMLCalcBufferTensorSize, and the
canonical ``{"Type", "Desc"}`` shape of a descriptor.

Standard library only and nothing else from dmltile: the DirectML runner's driver loads this
module without importing the package (so that it runs under any Python 3), and the validator,
the fixes and the executors compute with the same formulas.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

UINT32_WRAP = 1 << 32

# DML_TENSOR_DATA_TYPE's C values by short name (DirectML.h).
DATA_TYPE_VALUES = {
    "UNKNOWN": 0,
    "FLOAT32": 1,
    "FLOAT16": 2,
    "UINT32": 3,
    "UINT16": 4,
    "UINT8": 5,
    "INT32": 6,
    "INT16": 7,
    "INT8": 8,
    "FLOAT64": 9,
    "UINT64": 10,
    "INT64": 11,
    "UINT4": 12,
    "INT4": 13,
}

# Bits per element by DML_TENSOR_DATA_TYPE value; UNKNOWN (0) and values DirectML.h does not define
# have none.
ELEMENT_BITS = {1: 32, 2: 16, 3: 32, 4: 16, 5: 8, 6: 32, 7: 16, 8: 8, 9: 64, 10: 64, 11: 64, 12: 4, 13: 4}

TENSOR_TYPE_BUFFER = "DML_TENSOR_TYPE_BUFFER"
OPERATOR_TYPE_TILE = "DML_OPERATOR_TILE"


def element_bits(data_type: int) -> int:
    """Bits per element of a DML_TENSOR_DATA_TYPE value (0 for UNKNOWN or an undefined value)."""
    return ELEMENT_BITS.get(int(data_type), 0)


def packed_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides in elements for ``sizes`` (the last axis has stride 1)."""
    strides, step = [], 1
    for size in reversed(sizes):
        strides.append(step)
        step *= int(size)
    return tuple(reversed(strides))


def strides_or_packed(sizes: Sequence[int], strides: Sequence[int] | None) -> tuple[int, ...]:
    """The Strides when there is one per size, else the packed strides: how the size formula
    reads a tensor whose Strides are missing or of the wrong length (the latter is reported
    separately, and the size is still worth computing)."""
    if strides is not None and len(strides) == len(sizes):
        return tuple(int(s) for s in strides)
    return packed_strides(sizes)


def last_element_index(sizes: Sequence[int], strides: Sequence[int]) -> int:
    """``sum((Sizes[i]-1) * Strides[i])``: the element index of a strided tensor's last element."""
    return sum((int(s) - 1) * int(st) for s, st in zip(sizes, strides, strict=False))


def _bytes_of(index: int, data_type: int) -> int:
    """(index + 1) elements in bytes, computed in bits so that the 4-bit types round up correctly."""
    return ((index + 1) * element_bits(data_type) + 7) // 8


def dword_aligned(size: int) -> int:
    """Up to a multiple of 4: "all bound buffers must have a total size that is DWORD-aligned"."""
    return (size + 3) & ~3


def calc_buffer_tensor_size(
    data_type: int, sizes: Sequence[int], strides: Sequence[int] | None = None
) -> int:
    """DMLCalcBufferTensorSize: the minimum ``TotalTensorSizeInBytes`` for a buffer tensor.

    Index of the last element = sum((Sizes[i]-1) * Strides[i]) (packed when Strides is None);
    bytes = (index + 1) * element size, computed in bits so 4-bit types round correctly, then
    rounded up to a multiple of 4. A tensor with a zero size has no elements and needs 0 bytes, and
    so does an unknown data type (the helper's "invalid data type").
    Source: learn.microsoft.com "DirectML helper functions", DMLCalcBufferTensorSize.
    """
    if any(int(s) == 0 for s in sizes):
        return 0
    if strides is not None and len(strides) != len(sizes):
        raise ValueError(f"{len(strides)} strides for {len(sizes)} sizes")
    last = last_element_index(sizes, packed_strides(sizes) if strides is None else strides)
    return dword_aligned(_bytes_of(last, data_type))


def wrapped_buffer_tensor_size(
    data_type: int, sizes: Sequence[int], strides: Sequence[int] | None, *, wrap_bytes: bool
) -> int:
    """DMLCalcBufferTensorSize as DirectML 1.12 and older compute it: the last element's index in
    32-bit arithmetic (as the helper's ``UINT indexOfLastElement`` does) and, with ``wrap_bytes``,
    the byte count too; otherwise the same formula, in bits, as ``calc_buffer_tensor_size``.
    Strides of the wrong length count as packed."""
    if any(int(s) == 0 for s in sizes):
        return 0
    index = last_element_index(sizes, strides_or_packed(sizes, strides)) % UINT32_WRAP
    size = _bytes_of(index, data_type)
    if wrap_bytes:
        size %= UINT32_WRAP
    return dword_aligned(size)


# A bare DML_TILE_OPERATOR_DESC is known by its members; a misspelt one ("Input", "repeats") still
# starts like one, so that the reader can say which member it meant instead of asking for a Desc.
_TILE_MEMBER_STARTS = ("input", "output", "repeat")


def _names_tile_member(key: Any) -> bool:
    return isinstance(key, str) and key.lower().startswith(_TILE_MEMBER_STARTS)


def _misspelt_desc(tensor: dict) -> bool:
    """A tensor written wrapped whose ``Desc`` is misspelt: an object beside ``Type`` (no buffer
    member is an object), so its members are not buffer fields to be wrapped."""
    return any(isinstance(v, dict) for k, v in tensor.items() if k != "Type")


def wrap_tensor(tensor: Any) -> Any:
    """A tensor desc in the canonical ``{"Type", "Desc"}`` shape. With no ``Desc`` member the buffer
    fields sit beside ``Type`` (DxDispatch's rule), which defaults to BUFFER; anything else is
    returned as it is. The input is not modified."""
    if isinstance(tensor, dict) and "Desc" not in tensor and not _misspelt_desc(tensor):
        rest = {k: v for k, v in tensor.items() if k != "Type"}
        return {"Type": tensor.get("Type", TENSOR_TYPE_BUFFER), "Desc": rest}
    return tensor


def wrap_operator(document: Any) -> Any:
    """An operator desc in the canonical ``{"Type", "Desc"}`` shape: a bare DML_TILE_OPERATOR_DESC
    (``InputTensor`` at the top, no ``Desc``) is wrapped as a Tile operator; anything else is
    returned as it is. Only the operator level; the input is not modified."""
    if isinstance(document, dict) and "Desc" not in document and any(map(_names_tile_member, document)):
        rest = {k: v for k, v in document.items() if k != "Type"}
        return {"Type": document.get("Type", OPERATOR_TYPE_TILE), "Desc": rest}
    return document


def wrap_document(
    document: Any, tensors: Sequence[str] = ("InputTensor", "OutputTensor"), deep_copy: bool = True
) -> Any:
    """The whole document in the canonical shape: the operator and each named tensor wrapped,
    nothing else changed (a deep copy, unless ``deep_copy`` is False for a document nothing else
    holds: the objects wrapped are new either way, so the input is not modified)."""
    doc = wrap_operator(copy.deepcopy(document) if deep_copy else document)
    if not isinstance(doc, dict) or not isinstance(doc.get("Desc"), dict):
        return doc
    desc = dict(doc["Desc"])
    for name in tensors:
        if name in desc:
            desc[name] = wrap_tensor(desc[name])
    return {**doc, "Desc": desc}
