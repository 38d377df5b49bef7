"""Reading .npy arrays and raw buffers given by users: plain arrays only, bounded by the file's real
size, with errors that say what the file is. Every read goes through ``validate.source.open_regular``
(regular files only: FIFOs, devices and directories are refused before reading)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..validate.source import READ_LIMITS, file_size, open_regular, too_large

NPY_MAGIC = b"\x93NUMPY"


def read_npy(path: str | Path, limit: int | None = None) -> np.ndarray:
    """The array in a .npy file. InputError (naming the file) for a missing or special file, a file
    that is not .npy, an object (pickled) array, a header that declares more data than the file
    holds (checked before allocating), or a file above ``limit`` bytes (READ_LIMITS[".npy"]);
    pickles are never loaded."""
    limit = READ_LIMITS[".npy"] if limit is None else limit
    with open_regular(path, ".npy") as f:
        size = file_size(f)
        if size > limit:
            raise too_large(path, size, ".npy", limit)
        try:
            return _read_open_npy(f, path, size)
        except InputError:
            raise
        except (ValueError, OSError, EOFError, SyntaxError, TypeError) as e:
            raise InputError(
                f"{path}: not a readable .npy array ({getattr(e, 'strerror', None) or e})"
            ) from None


def _read_open_npy(f: Any, path: Any, size: int) -> np.ndarray:
    if f.read(len(NPY_MAGIC)) != NPY_MAGIC:
        raise InputError(
            f"{path}: not a .npy file (it does not start with NumPy's magic bytes); save arrays with numpy.save"
        )
    f.seek(0)
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
    elif version in ((2, 0), (3, 0)):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
    else:
        raise InputError(f"{path}: .npy format version {version} is not one dmltile reads")
    if dtype.hasobject:
        raise InputError(
            f"{path}: holds Python objects, not numbers; dmltile reads plain numeric arrays only"
        )
    count = math.prod(shape)
    need = count * dtype.itemsize
    have = size - f.tell()
    if need > have:
        raise InputError(
            f"{path}: not a readable .npy array: its header declares shape {shape} of {dtype} ({need} bytes), "
            f"but the file holds only {have} bytes of data (truncated, or not written by numpy.save)"
        )
    data = np.fromfile(f, dtype=dtype, count=count) if count else np.empty(0, dtype)
    if data.size != count:
        raise InputError(f"{path}: truncated ({data.size} of {count} values)")
    return data.reshape(shape, order="F" if fortran else "C")


def read_buffer_file(path: str | Path, need: int, what: str = "input buffer") -> np.ndarray:
    """The first ``need`` bytes of a raw buffer file, as uint8: only those bytes are read, however
    large the file. InputError for a special file or a file shorter than ``need``."""
    with open_regular(path, what) as f:
        size = file_size(f)
        if size < need:
            raise InputError(
                f"{path} has {size} bytes, but the buffer needs {need} (TotalTensorSizeInBytes); "
                f"give a file of at least {need} bytes"
            )
        if need > READ_LIMITS["input buffer"]:
            raise too_large(path, need, "input buffer")
        data = np.fromfile(f, dtype=np.uint8, count=need)
    if data.size != need:
        raise InputError(f"{path}: could read only {data.size} of {need} bytes")
    return data
