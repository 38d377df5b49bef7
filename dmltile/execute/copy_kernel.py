"""The optional compiled copy kernel: a plan's strided copies in C, with streaming stores where asked.

``kernel/copy_kernel.c`` is compiled by the build hook (``hatch_build.py``) when the package is
installed and a C compiler is present; this module loads it with ctypes. It offers two calls:
``KernelCall``, one copy (with streaming stores or ordinary ones) that two threads can share, and
``Program``, every step of a plan in one call, the steps marked with pieces shared with a worker
thread of the kernel's own where the build has one (``has_worker``: POSIX). Without the library (no
compiler, another platform, ``DMLTILE_KERNEL=0``) ``available()`` is False, the cost model prices
the kernel out, and every plan runs on NumPy alone: the same bytes, only slower.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import sys
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

ABI = 13  # must match ABI in kernel/copy_kernel.c
MAX_DIMS = 32
STEP_HEADER = 10  # must match STEP_HEADER in kernel/copy_kernel.c
SHARE_PIECES = 16  # a step run on two threads is cut into up to this many pieces, taken in turn
# and into a piece per PIECE_BYTES below that: each piece the two threads take costs its own setup
# and a turn of the counter they share between the cores. On an EPYC VM 50 KiB of 72-byte rows took
# 4.8 us on two threads in 16 pieces, 3.5-4.0 in 2, and 3.4 on one; 256 KiB of 1 KiB rows 5.1 us in
# 16 pieces and 4.6 in 8 (7.9 on one).
PIECE_BYTES = 32 << 10
LIBRARY = "_copy_kernel" + (".dll" if sys.platform == "win32" else ".so")


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
        abi = lib.dmltile_kernel_abi()
    except (OSError, AttributeError) as e:
        return None, f"cannot load {path.name}: {e}"
    if abi != ABI:
        return None, f"{path.name} is ABI {abi}, this dmltile needs {ABI}: reinstall dmltile to rebuild it"
    lib.dmltile_copy.argtypes = (
        (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)
        + (ctypes.c_int64,) * 3
        + (ctypes.c_int,)
    )
    lib.dmltile_copy.restype = ctypes.c_int
    # No argtypes: a compiled program passes its one ctypes array as is, the cheapest call ctypes has.
    lib.dmltile_run.restype = ctypes.c_int
    lib.dmltile_worker_pieces.restype = ctypes.c_int64
    lib.dmltile_swap_step.restype = ctypes.c_int64
    lib.dmltile_swap_step.argtypes = (ctypes.c_int64,)
    return lib, ""


def worker_pieces() -> int:
    """How many pieces of shared steps the kernel's worker has copied in this process."""
    return int(_library().dmltile_worker_pieces())


def loops(shape: Sequence[int], dst_strides: Sequence[int], src_strides: Sequence[int], width: int) -> tuple:
    """How the kernel loops over a copy: (bytes per run, runs, odometer steps, whether runs are fills,
    whether each run of a tight loop starts where the one before it ends, the output vectors of a
    period of byte shuffles when its short runs are shuffled, else 0)."""
    dims = (ctypes.c_int64 * max(1, 3 * len(shape)))(*shape, *dst_strides, *src_strides)
    out = (ctypes.c_int64 * 6)()
    if _library().dmltile_loops(len(shape), dims, width, out):
        raise ValueError(f"the copy kernel refused {len(shape)} axes of {width}-byte elements")
    return out[0], out[1], out[2], bool(out[3]), bool(out[4]), out[5]


def shared_cut(shape, dst_strides, src_strides, width: int, stream: bool, pieces: int) -> tuple[int, int]:
    """Where the kernel's two threads cut a copy shared in ``pieces``: (lead, m), its pieces taken along
    the m axes after its first ``lead`` ones, each piece written for every index of those."""
    dims = (ctypes.c_int64 * max(1, 3 * len(shape)))(*shape, *dst_strides, *src_strides)
    out = (ctypes.c_int64 * 2)()
    wide = ctypes.c_int64
    if _library().dmltile_cut(len(shape), dims, wide(width), int(stream), wide(pieces), out):
        raise ValueError(f"the copy kernel refused a cut of {len(shape)} axes into {pieces} pieces")
    return out[0], out[1]


def piece_bounds(size: int, count: int) -> list[int]:
    """The bounds of up to ``count`` near-equal pieces of ``size`` indices (none empty)."""
    return sorted({size * k // count for k in range(count + 1)})


def shuffles() -> bool:
    """Whether the loaded kernel writes short runs as byte shuffles (built with them, on a CPU that has
    SSSE3): asked of its loop plan for rows of one int32 repeated 3 times, which it shuffles when it can."""
    lib = _load()[0]
    return lib is not None and _shuffles(lib)


@lru_cache(maxsize=2)
def _shuffles(lib) -> bool:
    dims = (ctypes.c_int64 * 6)(256, 3, 12, 4, 4, 0)
    out = (ctypes.c_int64 * 6)()
    return lib.dmltile_loops(2, dims, 4, out) == 0 and out[5] > 0


def has_worker() -> bool:
    """Whether the loaded kernel shares a program's marked steps with a thread of its own (POSIX
    builds); without it, plans that use two threads share their copies through a Python thread."""
    lib = _load()[0]
    return lib is not None and bool(lib.dmltile_kernel_workers())


def _library() -> ctypes.CDLL:
    lib = _load()[0]
    if lib is None:
        raise RuntimeError(f"the copy kernel is not available: {_load()[1]}")
    return lib


def movsb_cliff(on: bool | None = None) -> bool:
    """Whether the loaded kernel moves long runs that meet rep movsb's slow misalignment with a store
    loop of its own (it does until told otherwise: calibration tells it whether this CPU has that
    slow case); with ``on``, sets it first. False without the kernel."""
    return _switch("dmltile_movsb_cliff", on)


def long_avx(on: bool | None = None) -> bool:
    """Whether the loaded kernel moves runs of 512 bytes to 8 KiB with aligned 32-byte moves of its own
    rather than a call of memcpy each (not until told: calibration measures which is faster on this
    CPU); with ``on``, sets it first. False without the kernel."""
    return _switch("dmltile_long_avx", on)


def big_movsb(on: bool | None = None) -> bool:
    """Whether the loaded kernel moves runs past 8 KiB with rep movsb itself rather than a call of
    memcpy (not until told: calibration measures which is faster on this CPU); with ``on``, sets it
    first. False without the kernel."""
    return _switch("dmltile_big_movsb", on)


def swap_step(nbytes: int | None = None) -> int:
    """The largest step (bytes written) in which the loaded kernel loops over a larger outer axis in
    place of a short tight loop of runs longer than 16 bytes (1 MiB until told: calibration measures
    where that stops paying on this machine); with ``nbytes``, sets it first. 0 without the kernel."""
    lib = _load()[0]
    if lib is None:
        return 0
    return int(lib.dmltile_swap_step(-1 if nbytes is None else nbytes))


def _switch(name: str, on: bool | None) -> bool:
    """A switch of the loaded kernel's: set when ``on`` is given, then read."""
    lib = _load()[0]
    if lib is None:
        return False
    return bool(getattr(lib, name)(-1 if on is None else int(on)))


def available() -> bool:
    """Whether the compiled kernel is loaded (and so whether the planner may choose it)."""
    return _load()[0] is not None


def status() -> str:
    """One line for ``dmltile doctor`` and the bench: what the kernel does here, or why it is off."""
    lib, why = _load()
    if lib is None:
        return f"off: {why}; plans run on NumPy alone"
    threads = ", two threads through its own worker" if lib.dmltile_kernel_workers() else ""
    if not lib.dmltile_kernel_streams():
        return f"loaded: one call per plan{threads}; no streaming stores on this CPU"
    return f"loaded: one call per plan{threads}, streaming stores for outputs in memory"


def share_pieces(nbytes: int) -> int:
    """How many pieces a step writing ``nbytes`` is cut into for two threads (see PIECE_BYTES)."""
    return min(SHARE_PIECES, max(2, nbytes // PIECE_BYTES))


def address(array: np.ndarray) -> int:
    """The address of an array's first byte (through the buffer protocol when the array is writable
    and contiguous: about 3x quicker than ``__array_interface__``)."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))  # type: ignore[arg-type]
    except (TypeError, ValueError, BufferError):
        return int(array.__array_interface__["data"][0])


class KernelCall:
    """One copy by the kernel: the views' shape and byte strides, fixed at plan time, whether whole
    lines are written with streaming stores, and the range of the outermost axis to copy; a call passes
    the two start addresses. Python's lock is released for the call, so two threads sharing a copy in
    pieces run at once (np.copyto keeps the lock for copies of up to 500 elements, such as a piece of
    a few wide rows)."""

    __slots__ = (
        "_fn",
        "_dims",
        "_address",
        "ndim",
        "width",
        "stream",
        "begin",
        "end",
        "dst_offset",
        "src_offset",
        "_parts",
    )

    def __init__(self, shape, dst_strides, src_strides, width: int, stream: bool = True):
        if len(shape) > MAX_DIMS or not len(shape) == len(dst_strides) == len(src_strides):
            raise ValueError(f"the copy kernel takes up to {MAX_DIMS} axes with a stride each")
        self._fn = _library().dmltile_copy
        self._dims = (ctypes.c_int64 * max(1, 3 * len(shape)))(*shape, *dst_strides, *src_strides)
        self._address = ctypes.addressof(self._dims)
        self.ndim, self.width, self.stream = len(shape), int(width), int(bool(stream))
        self.begin, self.end = 0, shape[0] if shape else 1  # a 0-d copy is one element
        self.dst_offset = self.src_offset = 0  # bytes past the addresses a call passes
        self._parts: tuple[int, list[KernelCall]] | None = None  # pieces() of the last count asked

    @property
    def count(self) -> int:
        """How many outer indices this call copies (what two threads share)."""
        return self.end - self.begin

    def piece(self, begin: int, end: int) -> KernelCall:
        """The same copy limited to outer indices [begin, end) of this call's range."""
        part = object.__new__(KernelCall)
        part._fn, part._dims, part._address = self._fn, self._dims, self._address
        part.ndim, part.width, part.stream = self.ndim, self.width, self.stream
        part.begin, part.end = self.begin + begin, self.begin + end
        part.dst_offset, part.src_offset = self.dst_offset, self.src_offset
        part._parts = None
        return part

    def pieces(self, count: int) -> list[KernelCall]:
        """This call cut into up to ``count`` pieces for two threads along one axis, the one the kernel's
        own worker would start its cut at (shared_cut): the outermost, or, for a streamed copy whose
        outer axes repeat its source, the first after them, each piece then written for every repeat.
        Worked out once per count: a plan asks on every call."""
        if self._parts is not None and self._parts[0] == count:
            return self._parts[1]
        self._parts = (count, self._cut(count))
        return self._parts[1]

    def _cut(self, count: int) -> list[KernelCall]:
        n = self.ndim
        shape, d_str, s_str = (list(self._dims[k * n : (k + 1) * n]) for k in range(3))
        whole = n > 0 and count > 1 and self.count == shape[0]
        lead = shared_cut(shape, d_str, s_str, self.width, bool(self.stream), count)[0] if whole else 0
        size = shape[lead] if lead else self.count
        bounds = piece_bounds(size, count)
        if not lead:
            return [self.piece(a, b) for a, b in itertools.pairwise(bounds)]
        parts = []
        for a, b in itertools.pairwise(bounds):
            part = KernelCall(
                [*shape[:lead], b - a, *shape[lead + 1 :]], d_str, s_str, self.width, bool(self.stream)
            )
            part.dst_offset, part.src_offset = (
                self.dst_offset + a * d_str[lead],
                self.src_offset + a * s_str[lead],
            )
            parts.append(part)
        return parts

    def __call__(self, dst_address: int, src_address: int) -> None:
        args = (self.ndim, self._address, self.width, self.begin, self.end, self.stream)
        if self._fn(dst_address + self.dst_offset, src_address + self.src_offset, *args):
            raise RuntimeError("the copy kernel refused its arguments")


def stream_copy(dst: np.ndarray, src: np.ndarray) -> None:
    """``np.copyto(dst, src)`` for views of one dtype and shape, written with streaming stores.

    The caller guarantees the writes to ``dst`` never overlap the bytes read from ``src``.
    """
    if dst.dtype != src.dtype or dst.shape != src.shape:
        raise ValueError(
            f"stream_copy needs views of one dtype and shape, got {dst.dtype}{dst.shape} and {src.dtype}{src.shape}"
        )
    KernelCall(dst.shape, dst.strides, src.strides, dst.itemsize)(address(dst), address(src))


def step_call(
    dst_address: int,
    src_address: int,
    shape: Sequence[int],
    dst_strides: Sequence[int],
    src_strides: Sequence[int],
    width: int,
    stream: bool = False,
    pieces: int = 0,
    count: int = 1,
) -> Callable[[], None]:
    """A function running, in one call of the kernel, a program of ``count`` times the same copy
    from ``src_address`` to ``dst_address`` (views as for ``Program.copy``, ``pieces`` likewise): what
    calibration times and the tests of the kernel's worker run. The caller keeps both buffers alive."""
    program = Program()
    for _ in range(count):
        program.copy(1, 0, 0, 0, shape, dst_strides, src_strides, width, stream, pieces)
    bases = (ctypes.c_void_p * 2)(src_address, dst_address)
    run = program.compile(ctypes.addressof(bases))
    run.keep = bases  # type: ignore[attr-defined]  # the addresses live as long as the function
    return run


class Program:
    """Copy steps encoded for the kernel's ``dmltile_run``, which runs them all in one call, in order.

    Buffers are numbered: a call passes a ctypes array holding each buffer's address.
    """

    def __init__(self) -> None:
        self._values: list[int] = []
        self._indexes: list[np.ndarray] = []
        self.steps = 0

    def copy(
        self,
        dst: int,
        dst_offset: int,
        src: int,
        src_offset: int,
        shape: Sequence[int],
        dst_strides: Sequence[int],
        src_strides: Sequence[int],
        width: int,
        stream: bool = False,
        pieces: int = 0,
    ) -> None:
        """np.copyto of two strided views of ``width``-byte elements (strides in bytes); with
        ``pieces``, cut along the outer axis and shared with the kernel's worker (see has_worker)."""
        self._step(0, dst, dst_offset, src, src_offset, len(shape), width, stream, 0, pieces)
        self._values += [*shape, *dst_strides, *src_strides]

    def gather(
        self,
        dst: int,
        dst_offset: int,
        src: int,
        src_offset: int,
        chunk: int,
        dst_stride: int,
        index: np.ndarray,
        pieces: int = 0,
    ) -> None:
        """``index.size`` chunks of ``chunk`` bytes, ``dst_stride`` apart: chunk ``i`` is source chunk
        ``index[i]``; ``pieces`` as for copy."""
        index = np.ascontiguousarray(index, np.int64)
        self._indexes.append(index)  # the program holds its address
        self._step(1, dst, dst_offset, src, src_offset, 1, chunk, False, address(index), pieces)
        self._values += [index.size, dst_stride, chunk]

    def _step(self, kind, dst, dst_offset, src, src_offset, ndim, width, stream, index, pieces) -> None:
        if ndim > MAX_DIMS:
            raise ValueError(f"the copy kernel takes at most {MAX_DIMS} axes, got {ndim}")
        self._values += [kind, dst, dst_offset, src, src_offset, ndim, width, int(stream), index, pieces]
        self.steps += 1

    def compile(self, bases_address: int) -> Callable[[], None]:
        """A function that runs every step on the buffers whose addresses are in the array at
        ``bases_address`` (the caller keeps it alive, and may change the addresses between calls)."""
        fn = _library().dmltile_run
        encoded = (ctypes.c_int64 * max(1, len(self._values)))(*self._values)
        steps, keep = self.steps, (encoded, self._indexes)
        call = (ctypes.c_int64 * 3)(bases_address, ctypes.addressof(encoded), steps)

        def run() -> None:
            failed = fn(call)
            if failed:
                raise RuntimeError(
                    f"the copy kernel refused step {failed} of {steps} ({len(keep[0])} values)"
                )

        return run
