"""The optional compiled kernel: strided copies written with non-temporal (streaming) stores.

``kernel/stream_copy.c`` is compiled by the build hook (``hatch_build.py``) when the package is
installed and a C compiler is present; this module loads it with ctypes. Without it (no compiler,
another platform, ``DMLTILE_KERNEL=0``) ``available()`` is False, the cost model prices the kernel
out, and every plan runs on NumPy alone: same bytes, only slower on outputs that live in memory.
"""

from __future__ import annotations

import ctypes
import os
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np

ABI = 2  # must match ABI in kernel/stream_copy.c
MAX_DIMS = 32
LIBRARY = "_stream_copy" + (".dll" if sys.platform == "win32" else ".so")


def library_path() -> Path:
    """Where the build hook puts the compiled kernel: beside its source, inside the package."""
    return Path(__file__).with_name("kernel") / LIBRARY


@lru_cache(maxsize=1)
def _load() -> tuple[ctypes.CDLL | None, str]:
    """(library, why not) once per process."""
    if os.environ.get("DMLTILE_KERNEL", "1") == "0":
        return None, "disabled by DMLTILE_KERNEL=0"
    path = library_path()
    if not path.is_file():
        return None, f"not built ({path.name} is missing: no C compiler when dmltile was installed?)"
    try:
        lib = ctypes.CDLL(str(path))
        abi = lib.dmltile_stream_abi()
    except (OSError, AttributeError) as e:
        return None, f"cannot load {path.name}: {e}"
    if abi != ABI:
        return None, f"{path.name} is ABI {abi}, this dmltile needs {ABI}: reinstall dmltile to rebuild it"
    fn = lib.dmltile_stream_copy
    fn.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p) + (ctypes.c_int64,) * 3
    fn.restype = ctypes.c_int
    return lib, ""


def available() -> bool:
    """Whether the compiled kernel is loaded (and so whether the planner may choose it)."""
    return _load()[0] is not None


def status() -> str:
    """One line for ``dmltile doctor`` and the bench: what the kernel does here, or why it is off."""
    lib, why = _load()
    if lib is None:
        return f"off: {why}; plans use NumPy only"
    if not lib.dmltile_stream_enabled():
        return "loaded, without streaming stores on this CPU (plain memcpy)"
    return "loaded: streaming stores for outputs in memory"


class StreamCall:
    """One planned copy run by the kernel: the views' shape and byte strides, fixed at plan time, and
    the range of the outermost axis to copy; a call passes the two start addresses."""

    __slots__ = ("_fn", "_dims", "_address", "ndim", "width", "begin", "end")

    def __init__(self, shape, dst_strides, src_strides, width: int, begin: int = 0, end: int | None = None):
        lib = _load()[0]
        if lib is None:
            raise RuntimeError("the stream kernel is not available")
        if len(shape) > MAX_DIMS or not len(shape) == len(dst_strides) == len(src_strides):
            raise ValueError(f"the stream kernel takes up to {MAX_DIMS} axes with a stride each")
        self._fn = lib.dmltile_stream_copy
        self._dims = (ctypes.c_int64 * max(1, 3 * len(shape)))(*shape, *dst_strides, *src_strides)
        self._address = ctypes.addressof(self._dims)
        self.ndim, self.width = len(shape), int(width)
        self.begin, self.end = begin, (shape[0] if shape else 1) if end is None else end  # 0-d: one element

    @property
    def count(self) -> int:
        """How many outer indices this call copies (what two threads share)."""
        return self.end - self.begin

    def piece(self, begin: int, end: int) -> StreamCall:
        """The same copy limited to outer indices [begin, end) of this call's range."""
        part = object.__new__(StreamCall)
        part._fn, part._dims, part._address = self._fn, self._dims, self._address
        part.ndim, part.width = self.ndim, self.width
        part.begin, part.end = self.begin + begin, self.begin + end
        return part

    def __call__(self, dst_address: int, src_address: int) -> None:
        if self._fn(dst_address, src_address, self.ndim, self._address, self.width, self.begin, self.end):
            raise RuntimeError("the stream kernel refused its arguments")


def address(array: np.ndarray) -> int:
    """The address of an array's first byte (through the buffer protocol when the array is writable
    and contiguous: about 3x quicker than ``__array_interface__``)."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))  # type: ignore[arg-type]
    except (TypeError, ValueError, BufferError):
        return int(array.__array_interface__["data"][0])


def stream_copy(dst: np.ndarray, src: np.ndarray) -> None:
    """``np.copyto(dst, src)`` for views of one dtype and shape, written with streaming stores.

    The caller guarantees the writes to ``dst`` never overlap the bytes read from ``src``.
    """
    if dst.dtype != src.dtype or dst.shape != src.shape:
        raise ValueError(
            f"stream_copy needs views of one dtype and shape, got {dst.dtype}{dst.shape} and {src.dtype}{src.shape}"
        )
    StreamCall(dst.shape, dst.strides, src.strides, dst.itemsize)(address(dst), address(src))
