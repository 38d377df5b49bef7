"""Decode the compressed shader blobs inside an old DirectML.dll for the runner's stand-in Cabinet.dll.

DirectML 1.7 and older keep their compiled shaders in the DLL image as Windows Compression API
buffers and unpack one per operator compile through Cabinet.dll, which Wine 8 lacks. The set-up runs
this once per such DLL; ``cabinet_shim.c`` then serves ``<out>/<key>.bin`` for a compressed buffer
whose key (CRC-32 and Adler-32 of its bytes, and its length) matches.

A buffer, as these DLLs store it: a 24-byte header (magic ``0A 51 E5 C0``, u16 header size 24, a check
byte, u8 algorithm, u64 uncompressed size, u64 block size), then

* MSZIP (algorithm 2; DirectML 1.0 to 1.4): ``[u32 size]["CK" + a raw deflate block]`` until the
  uncompressed size is reached; each block may refer back into the previous block's 32 KB (Python's
  zlib decodes it);
* LZMS (algorithm 5; DirectML 1.5 to 1.7; the header's uncompressed size is all ones):
  ``[u32 compressed size][u32 size][LZMS data]`` ending with 8 zero bytes. LZMS is decoded by
  wimlib (Debian's ``libwim15``, LGPL-3+/GPL-3+), called through its public API as a system library:
  ``wimlib_create_decompressor`` / ``wimlib_decompress``; no wimlib code is part of dmltile.

Stdlib only: ``setup.sh`` runs it with the system Python.

    python shader_blobs.py OUT_DIR DirectML.dll ...
"""

from __future__ import annotations

import ctypes
import struct
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

MAGIC = bytes.fromhex("0A51E5C0")
HEADER = struct.Struct("<4sHBBQQ")
MSZIP, LZMS = 2, 5
WIMLIB_COMPRESSION_TYPE_LZMS = 3
MSZIP_WINDOW = 32768


def key(blob: bytes) -> str:
    """The file name stem the shim computes for a compressed buffer: CRC-32, Adler-32, length."""
    return f"{zlib.crc32(blob):08x}{zlib.adler32(blob):08x}-{len(blob)}"


def _mszip_end(image: bytes, at: int, size: int) -> tuple[int, bytes]:
    out = b""
    p = at + HEADER.size
    while len(out) < size:
        (n,) = struct.unpack_from("<I", image, p)
        block = image[p + 4 : p + 4 + n]
        if block[:2] != b"CK":
            raise ValueError(f"MSZIP block without 'CK' at {p + 4:#x}")
        window = out[-MSZIP_WINDOW:]
        z = zlib.decompressobj(-15, zdict=window) if window else zlib.decompressobj(-15)
        out += z.decompress(block[2:]) + z.flush()
        p += 4 + n
    if len(out) != size:
        raise ValueError(f"MSZIP buffer at {at:#x} unpacks to {len(out)} bytes, its header says {size}")
    return p, out


class _Lzms:
    """wimlib's LZMS decompressor, loaded from the system's libwim.so.15."""

    def __init__(self) -> None:
        self._lib: ctypes.CDLL | None = None
        self.handles: dict[int, ctypes.c_void_p] = {}

    @property
    def lib(self) -> ctypes.CDLL:
        """libwim.so.15, loaded at the first LZMS chunk (MSZIP-only DLLs do not need it)."""
        if self._lib is None:
            try:
                lib = ctypes.CDLL("libwim.so.15")
            except OSError as exc:
                raise SystemExit(f"libwim15 is not installed (apt-get install libwim15): {exc}") from exc
            lib.wimlib_create_decompressor.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p]
            size_t, void_p = ctypes.c_size_t, ctypes.c_void_p
            lib.wimlib_decompress.argtypes = [ctypes.c_char_p, size_t, void_p, size_t, void_p]
            lib.wimlib_free_decompressor.argtypes = [ctypes.c_void_p]
            self._lib = lib
        return self._lib

    def decode(self, data: bytes, size: int) -> bytes:
        """One LZMS chunk of ``size`` bytes (a decompressor per chunk size, kept for reuse)."""
        if size not in self.handles:
            handle = ctypes.c_void_p()
            if self.lib.wimlib_create_decompressor(WIMLIB_COMPRESSION_TYPE_LZMS, size, ctypes.byref(handle)):
                raise ValueError(f"wimlib cannot make an LZMS decompressor for {size} bytes")
            self.handles[size] = handle
        out = ctypes.create_string_buffer(size)
        if self.lib.wimlib_decompress(data, len(data), out, size, self.handles[size]):
            raise ValueError("wimlib: corrupt LZMS chunk")
        return out.raw

    def close(self) -> None:
        """Free the decompressors."""
        for handle in self.handles.values():
            self.lib.wimlib_free_decompressor(handle)
        self.handles.clear()


def _lzms_end(image: bytes, at: int, block: int, lzms: _Lzms) -> tuple[int, bytes]:
    parts: list[bytes] = []
    p = at + HEADER.size
    while True:
        packed, size = struct.unpack_from("<II", image, p)
        p += 8
        if packed == 0 and size == 0:
            return p, b"".join(parts)
        if size > block or p + packed > len(image):
            raise ValueError(
                f"LZMS chunk of {size} bytes at {p:#x} does not fit the buffer's block size {block}"
            )
        chunk = image[p : p + packed]
        parts.append(chunk if packed == size else lzms.decode(chunk, size))
        p += packed


def blobs(image: bytes, lzms: _Lzms) -> Iterator[tuple[bytes, bytes]]:
    """Every compressed buffer in a DLL image with its decoded bytes."""
    at = image.find(MAGIC)
    while at >= 0:
        end, out = -1, b""
        try:
            _, header_size, _, algorithm, size, block = HEADER.unpack_from(image, at)
            if header_size == HEADER.size and algorithm == MSZIP:
                end, out = _mszip_end(image, at, size)
            elif header_size == HEADER.size and algorithm == LZMS:
                end, out = _lzms_end(image, at, block, lzms)
        except (ValueError, struct.error, zlib.error):
            end = -1  # not a buffer after all (the shim then names the buffer it lacks, if one is asked for)
        if end < 0:  # the magic bytes by chance, not a buffer
            at = image.find(MAGIC, at + 1)
            continue
        yield image[at:end], out
        at = image.find(MAGIC, end)


def write_blobs(out_dir: Path, dll: Path) -> tuple[int, int, int]:
    """Decode every buffer of ``dll`` into ``out_dir`` (skipping keys already there): (buffers, new, bytes)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    image = dll.read_bytes()
    lzms = _Lzms()
    count = new = total = 0
    try:
        for blob, decoded in blobs(image, lzms):
            count += 1
            total += len(decoded)
            path = out_dir / f"{key(blob)}.bin"
            if not path.is_file() or path.stat().st_size != len(decoded):
                tmp = path.with_suffix(".tmp")
                tmp.write_bytes(decoded)
                tmp.replace(path)
                new += 1
    finally:
        lzms.close()
    return count, new, total


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: shader_blobs.py OUT_DIR DirectML.dll ...", file=sys.stderr)
        return 2
    out_dir = Path(argv[0])
    for dll in map(Path, argv[1:]):
        count, new, total = write_blobs(out_dir, dll)
        print(f"  {dll}: {count} shader buffers, {total / 1e6:.1f} MB decoded, {new} new")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
