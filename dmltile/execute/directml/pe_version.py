"""A DLL's FileVersion read from its PE version resource, without Windows."""

from __future__ import annotations

import struct
from pathlib import Path


def pe_file_version(path: str | Path) -> str | None:
    """FileVersion ``a.b.c.d`` from a PE file's VS_FIXEDFILEINFO, found by its signature 0xFEEF04BD."""
    data = Path(path).read_bytes()
    signature = struct.pack("<I", 0xFEEF04BD)
    at = data.find(b"V\x00S\x00_\x00V\x00E\x00R\x00S\x00I\x00O\x00N\x00_\x00I\x00N\x00F\x00O\x00")
    at = data.find(signature, max(at, 0))
    if at < 0:
        return None
    ms, ls = struct.unpack_from("<II", data, at + 8)
    return f"{ms >> 16}.{ms & 0xFFFF}.{ls >> 16}.{ls & 0xFFFF}"
