"""A case (a descriptor and, when it is executed, its buffers) as one line of the runner's input."""

from __future__ import annotations

import json
from typing import Any

from ...core.layout import dword_aligned
from .c_view import to_c_view

# keys of a case that are not part of the descriptor
CASE_KEYS = frozenset(
    {
        "id",
        "desc",
        "execute",
        "input",
        "output_init",
        "input_offset",
        "output_offset",
        "input_size",
        "output_size",
        "input_buffer_size",
        "output_buffer_size",
        "input_fill",
        "output_fill",
    }
)
# (side, tensor, fill byte of the buffer around what the case gives)
SIDES = (("input", "InputTensor", 0x00), ("output", "OutputTensor", 0xCD))


def descriptor_of(case: dict[str, Any]) -> dict[str, Any]:
    """The descriptor part of a case: ``case["desc"]``, or the case without its non-descriptor keys."""
    if "desc" in case:
        return dict(case["desc"])
    return {k: v for k, v in case.items() if k not in CASE_KEYS}


def _as_bytes(value: Any) -> bytes:
    if value is None:
        return b""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if hasattr(value, "tobytes"):
        return bytes(value.tobytes())
    if isinstance(value, str):
        return bytes.fromhex(value)
    raise TypeError(f"expected bytes, got {type(value).__name__}")


def input_pattern(n: int) -> bytes:
    """The default input bytes: a deterministic non-repeating-ish pattern (byte i = (i * 37 + 11) mod 256)."""
    return bytes((i * 37 + 11) & 0xFF for i in range(n))


def _buffer(case: dict[str, Any], side: str, total: int, default_fill: int) -> tuple[bytearray, int, int]:
    """One side's whole buffer, binding offset and binding size, from the case's keys."""
    offset = int(case.get(f"{side}_offset", 0))
    size = int(case.get(f"{side}_size", dword_aligned(total)))
    key = "input" if side == "input" else "output_init"
    if case.get(key) is not None:
        data = _as_bytes(case.get(key))
    else:
        data = input_pattern(size) if side == "input" else b""
    buffer_size = int(case.get(f"{side}_buffer_size", max(offset + size, offset + len(data), 4)))
    buf = bytearray([int(case.get(f"{side}_fill", default_fill))]) * buffer_size
    buf[offset : offset + len(data)] = data[: max(0, buffer_size - offset)]
    return buf, offset, size


def runner_line(case: dict[str, Any], index: int) -> tuple[str, dict[str, Any]]:
    """The runner's JSON line for one case, and the buffer layout it used (to slice the answer)."""
    view = to_c_view(descriptor_of(case))
    line: dict[str, Any] = {"id": str(case.get("id", index)), **view, "execute": bool(case.get("execute"))}
    layout: dict[str, Any] = {}
    if line["execute"]:
        for side, tensor, default_fill in SIDES:
            buf, offset, size = _buffer(case, side, view[tensor]["TotalTensorSizeInBytes"], default_fill)
            line[f"{side}_buffer"] = buf.hex()
            line[f"{side}_offset"] = offset
            line[f"{side}_size"] = size
            layout[side] = (offset, size)
    return json.dumps(line, separators=(",", ":")), layout
