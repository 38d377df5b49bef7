"""The optional compiled kernel (``c/kernel.c``), loaded with ctypes.

The build hook (``hatch_build.py``) compiles it into this folder when a C compiler is present.
Without it (no compiler, ``DMLTILE_KERNEL=0``, or a build older than ``kernel.c``) ``loaded()`` is
None and every recipe runs on NumPy: the same bytes, only slower.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import sys
from functools import lru_cache
from pathlib import Path

LIBRARY = "_kernel" + (".dll" if sys.platform == "win32" else ".so")
SOURCE = Path(__file__).with_name("c") / "kernel.c"


def library_path() -> Path:
    """Where the build hook puts the compiled kernel: beside its source, inside the package."""
    return SOURCE.with_name(LIBRARY)


def source_digest(source: bytes) -> str:
    """The digest the build hook compiles into the kernel and this module checks it against."""
    return hashlib.sha256(source).hexdigest()


@lru_cache(maxsize=1)
def _load() -> tuple[ctypes.CDLL | None, dict[str, str], str]:
    """(library, its table of figures, why not loaded), once per process."""
    if os.environ.get("DMLTILE_KERNEL", "1") == "0":
        return None, {}, "disabled by DMLTILE_KERNEL=0"
    path = library_path()
    if not path.is_file():
        return None, {}, f"not built ({path.name} is missing: no C compiler when dmltile was installed?)"
    try:
        lib = ctypes.CDLL(str(path))
        lib.dmltile_fast_table.restype = ctypes.c_char_p
        table = dict(pair.split("=", 1) for pair in lib.dmltile_fast_table().decode().split())
    except (OSError, AttributeError, ValueError) as e:
        return None, {}, f"cannot load {path.name}: {e}"
    if SOURCE.is_file() and table.get("digest") != source_digest(SOURCE.read_bytes()):
        return None, {}, f"{path.name} was built from another kernel.c: reinstall dmltile to rebuild it"
    lib.dmltile_fast_run.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    lib.dmltile_fast_run.restype = ctypes.c_int
    lib.dmltile_fast_worker_chunks.restype = ctypes.c_int64
    return lib, table, ""


def loaded() -> ctypes.CDLL | None:
    """The kernel library, or None when it is not available."""
    return _load()[0]


def table() -> dict[str, int]:
    """The kernel's figures by name (max_dims, two_thread_min, worker); empty without the kernel."""
    return {k: int(v) for k, v in _load()[1].items() if k != "digest"}


def worker_chunks() -> int:
    """How many chunks of two-thread recipes the kernel's worker has copied in this process."""
    lib = loaded()
    return int(lib.dmltile_fast_worker_chunks()) if lib is not None else 0


def status() -> str:
    """One line for ``dmltile doctor`` and the bench: what the kernel does here, or why it is off."""
    lib, figures, why = _load()
    if lib is None:
        return f"off: {why}; recipes run on NumPy alone"
    threads = "two threads through its own worker" if figures.get("worker") == "1" else "one thread"
    return f"loaded: a gather plus doubling copies in one call, {threads}"
