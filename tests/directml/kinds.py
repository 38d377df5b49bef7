"""Sorting golden cases into kinds by what the descriptor contains (never by who answered what).

Shared by test_golden.py and the agreement summary. Pure stdlib; no dmltile, no Wine.
"""

from __future__ import annotations

from itertools import product
from typing import Any

from .generate_cases import U32, calc

# priority order: a case belongs to the first kind whose predicate holds
KINDS = (
    "not-c",  # DimensionCount != len(Sizes), RepeatsCount != len(Repeats): C reads the count, not the list
    "output-size-wrap",  # OutputTensor.Sizes[i] == InputTensor.Sizes[i] * Repeats[i] mod 2^32 only
    "strided-size-wrap",  # the strided byte size passes 2^32 and TotalTensorSizeInBytes is below it
    "float64",  # a FLOAT64 tensor
    "alignment-below-16",  # GuaranteedBaseOffsetAlignment 1..15
    "aliasing-output-strides",  # two output elements share an address
    "size-not-multiple-of-4",  # TotalTensorSizeInBytes % 4 != 0
    "general",
)


def _tensor(t: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    if "Desc" in t:
        return int(t.get("Type", 1)), t["Desc"]
    return 1, t


def true_bytes(b: dict[str, Any]) -> int:
    """DMLCalcBufferTensorSize in unbounded integers (empty Strides count as packed)."""
    return calc(b.get("DataType", 1), b.get("Sizes") or [], b.get("Strides") or None)


def output_aliases(b: dict[str, Any]) -> bool:
    """True when two distinct indices of the tensor map to the same element offset."""
    sizes = b.get("Sizes") or []
    strides = b.get("Strides")
    if strides is None or len(strides) != len(sizes) or not sizes:
        return False
    if any(s > 1 and t == 0 for s, t in zip(sizes, strides, strict=False)):
        return True
    count = 1
    for s in sizes:
        count *= s
    if count > 200_000:
        return False  # the generator's big tensors are packed or have a zero stride
    seen: set[int] = set()
    for idx in product(*(range(s) for s in sizes)):
        off = sum(i * t for i, t in zip(idx, strides, strict=False))
        if off in seen:
            return True
        seen.add(off)
    return False


def kind_of(desc: dict[str, Any]) -> str:
    """The kind of a golden case's descriptor (the first of KINDS that applies)."""
    body = desc.get("Desc", desc) if "InputTensor" not in desc else desc
    _, inp = _tensor(body["InputTensor"])
    _, out = _tensor(body["OutputTensor"])
    repeats = body.get("Repeats") or []
    tensors = (inp, out)
    if body.get("RepeatsCount", len(repeats)) != len(repeats) or any(
        t.get("DimensionCount", len(t.get("Sizes") or [])) != len(t.get("Sizes") or []) for t in tensors
    ):
        return "not-c"
    isz, osz = inp.get("Sizes") or [], out.get("Sizes") or []
    if len(isz) == len(osz) == len(repeats) and any(
        o != i * r and o == (i * r) & U32 for i, r, o in zip(isz, repeats, osz, strict=False)
    ):
        return "output-size-wrap"
    if any(
        t.get("Strides") and true_bytes(t) > U32 and t.get("TotalTensorSizeInBytes", 0) < true_bytes(t)
        for t in tensors
    ):
        return "strided-size-wrap"
    if any(t.get("DataType") == 9 for t in tensors):
        return "float64"
    if any(0 < int(t.get("GuaranteedBaseOffsetAlignment", 0)) < 16 for t in tensors):
        return "alignment-below-16"
    if output_aliases(out):
        return "aliasing-output-strides"
    if any(int(t.get("TotalTensorSizeInBytes", 0)) % 4 for t in tensors):
        return "size-not-multiple-of-4"
    return "general"
