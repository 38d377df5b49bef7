"""The output-size cap: refuse, before allocating anything, an output the machine cannot hold."""

from __future__ import annotations

import os
import sys

from ..core.operator import OperatorDesc
from ..errors import DmlTileError, OutputTooLargeError

MAX_OUTPUT_BYTES: int | None = None  # module setting; None: MEMORY_FRACTION of the available memory
MEMORY_FRACTION = 0.5


def available_memory() -> int | None:
    """Bytes of memory available to new allocations, or None when the platform does not say."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    if sys.platform == "win32":
        return _windows_available()
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _windows_available() -> int | None:
    if sys.platform != "win32":  # ctypes.windll exists on Windows only
        return None
    import ctypes

    class MemoryStatusEx(ctypes.Structure):
        _fields_ = [
            ("dwLength", ctypes.c_ulong),
            ("dwMemoryLoad", ctypes.c_ulong),
            ("ullTotalPhys", ctypes.c_ulonglong),
            ("ullAvailPhys", ctypes.c_ulonglong),
            ("ullTotalPageFile", ctypes.c_ulonglong),
            ("ullAvailPageFile", ctypes.c_ulonglong),
            ("ullTotalVirtual", ctypes.c_ulonglong),
            ("ullAvailVirtual", ctypes.c_ulonglong),
            ("ullAvailExtendedVirtual", ctypes.c_ulonglong),
        ]

    status = MemoryStatusEx()
    status.dwLength = ctypes.sizeof(MemoryStatusEx)
    if not ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):
        return None
    return int(status.ullAvailPhys)


def output_cap(max_output_bytes: int | None = None) -> tuple[int, str]:
    """The cap in bytes and where it comes from (for the error message)."""
    if max_output_bytes is not None:
        return int(max_output_bytes), "max_output_bytes"
    if MAX_OUTPUT_BYTES is not None:
        return int(MAX_OUTPUT_BYTES), "dmltile.execute.limits.MAX_OUTPUT_BYTES"
    avail = available_memory()
    if avail is None:
        return 4 << 30, "the 4 GiB default (available memory unknown)"
    return int(avail * MEMORY_FRACTION), f"{MEMORY_FRACTION:.0%} of the {human(avail)} available"


def output_bytes(desc: OperatorDesc) -> int:
    """What running ``desc`` may allocate for its output: the larger of its buffer and a packed array."""
    out = desc.output
    return max(out.total_tensor_size_in_bytes, out.element_count * out.data_type.element_size)


def check_output_size(desc: OperatorDesc, max_output_bytes: int | None = None) -> None:
    """Raise OutputTooLargeError when the output exceeds the cap."""
    if max_output_bytes is not None and (
        isinstance(max_output_bytes, bool) or not isinstance(max_output_bytes, int) or max_output_bytes < 0
    ):
        raise DmlTileError(f"max_output_bytes must be a non-negative int, got {max_output_bytes!r}")
    need = output_bytes(desc)
    cap, source = output_cap(max_output_bytes)
    if need > cap:
        raise OutputTooLargeError(
            f"OutputTensor (Sizes {list(desc.output.sizes)}, {desc.output.data_type.name}) needs {human(need)} "
            f"({need} bytes), above the memory cap of {human(cap)} ({source}); refused before allocating. "
            "Raise it with compile(..., max_output_bytes=N) or MAX_OUTPUT_BYTES in dmltile.execute.limits "
            "(from dmltile.execute import limits)"
        )


def human(n: int) -> str:
    """1536 -> '1.5 KiB'."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"
