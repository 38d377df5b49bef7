"""The NumPy backend: a bit-exact byte-buffer simulator of DML_OPERATOR_TILE.

A tensor is a byte buffer; element ``(i0..in)`` lives at byte ``sum(i_k * Strides[k]) * elem_size``
(DML_BUFFER_TENSOR_DESC). Tile copies bytes, so every DataType is moved as unsigned integers:
bit-exact, NaN payloads included. The copy is planned once per compiled op (``copy_plan``).
"""

from __future__ import annotations

import ctypes
import itertools
import math
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import numpy as np

from ..core.operator import OperatorDesc
from ..core.tensor import packed_strides
from ..errors import DmlTileError
from . import copy_kernel
from .buffers import (
    POISON_BYTE,
    CompiledTile,
    addressed_mask,
    buffer_views,
    byte_view,
    output_aliases,
    scatter_row_major,
    strided,
)
from .copy_kernel import SHARE_PIECES, KernelCall, address, piece_bounds, share_pieces
from .copy_plan import FAST_MAX_BYTES, make_plan
from .copy_steps import REP_MOVSB_MIN, Plan, Step, element_type, memmove_chunks, misaligned, view
from .costs import CopyCosts, machine_costs

__all__ = ["POISON_BYTE", "NumpyTile", "addressed_mask", "byte_view", "run_tile_buffers", "strided"]

VIEW_CACHE_MAX_BYTES = 1 << 20  # views of the caller's arrays are reused across calls up to this size
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _second_thread() -> ThreadPoolExecutor:
    """The one worker thread that runs the second half of split phases (made on first use)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dmltile-copy")
        return _pool


class PlanRunner:
    """Runs a Plan on given input/output byte buffers; temporaries are kept per calling thread."""

    def __init__(self, plan: Plan, threads: int):
        self.plan = plan
        self.threads = threads
        phases: dict[int, list[int]] = {}
        for i, step in enumerate(plan.steps):
            phases.setdefault(step.phase, []).append(i)
        # (step indices, split over two threads) per phase, in execution order
        self.phases = [(tuple(ix), threads > 1 and p in plan.split) for p, ix in phases.items()]
        self.serial = not any(split for _, split in self.phases)
        self._local = threading.local()
        # A plan runs in one call of the copy kernel when it is loaded: the same copies in the same
        # order, without NumPy's cost per call (about a microsecond per step). Phases on two threads
        # are shared with the kernel's own worker where it has one, else with a Python thread.
        shared = frozenset() if self.serial else plan.split
        whole = copy_kernel.available() and (self.serial or copy_kernel.has_worker())
        self._program = _program(plan, shared) if whole else None

    @property
    def one_kernel_call(self) -> bool:
        """Whether the whole plan runs as one call of the copy kernel."""
        return self._program is not None

    def _cached(self) -> list[tuple]:
        """Per thread and step: (dst view, src view, gather index, fresh, guard). Views into temporaries
        are built once; ``fresh`` says how to build views of the caller's buffers: (dst shape, src shape,
        dtype, dst is "out", dst offset, dst strides, src is "in", src offset, src strides); ``guard`` is
        None, or for steps that run only on (mis)aligned buffers: (wanted misalignment, dst temp
        address or None, src temp address or None)."""
        cached: list[tuple] | None = getattr(self._local, "views", None)
        if cached is None:
            temps = [_aligned_empty(n) for n in self.plan.temps]
            cached = []
            # With the kernel loaded, a plan that shares phases between two threads runs its copies as
            # kernel calls: np.copyto keeps Python's lock for copies of up to 500 elements (a piece of
            # a few wide rows), so the threads would take turns.
            kernel_copies = not self.serial and copy_kernel.available()
            for step in self.plan.steps:
                if step.stream or (kernel_copies and step.index is None):
                    cached.append(_kernel_entry(step, temps))
                    continue
                d = _view(temps, step.dst, step.dst_offset, step.shape, step.dst_strides, step.width)
                s = _view(temps, step.src, step.src_offset, step.src_shape, step.src_strides, step.width)
                fresh = (
                    None
                    if d is not None and s is not None
                    else (
                        step.shape,
                        step.src_shape,
                        element_type(step.width),
                        step.dst == "out",
                        step.dst_offset,
                        step.dst_strides,
                        step.src == "in",
                        step.src_offset,
                        step.src_strides,
                    )
                )
                guard = (
                    None
                    if step.when == "always"
                    else (
                        step.when == "misaligned",
                        _address(temps, step.dst, step.dst_offset),
                        _address(temps, step.src, step.src_offset),
                    )
                )
                cached.append((d, s, step.index, fresh, guard))
            self._local.views = cached
            self._local.temps = temps  # kernel entries hold only the temporaries' addresses
        return cached

    def _views(self, src: np.ndarray, dst: np.ndarray) -> list[tuple | None]:
        """(dst view, src view, gather index or None) of every step for these buffers; None for the
        steps of a misaligned-copy alternative that these buffers do not need."""
        ndarray = np.ndarray
        views: list[tuple | None] = []
        bases: tuple[int, int] | None = None
        for d, s, index, fresh, guard in self._cached():
            if type(index) is KernelCall:  # the kernel takes addresses: (dst, src) are None or temps'
                if bases is None:
                    bases = (address(src), address(dst))
                d_addr = d if d is not None else bases[1 if fresh[0] else 0] + fresh[1]
                s_addr = s if s is not None else bases[0 if fresh[2] else 1] + fresh[3]
                views.append((d_addr, s_addr, index))
                continue
            if guard is not None:
                if bases is None:
                    bases = (address(src), address(dst))
                d_out, d_off, s_in, s_off = fresh[3], fresh[4], fresh[6], fresh[7]
                d_addr = guard[1] if guard[1] is not None else bases[1 if d_out else 0] + d_off
                s_addr = guard[2] if guard[2] is not None else bases[0 if s_in else 1] + s_off
                if misaligned(d_addr, s_addr) != guard[0]:
                    views.append(None)
                    continue
            if fresh is not None:
                d_shape, s_shape, dtype, d_out, d_off, d_str, s_in, s_off, s_str = fresh
                if d is None:
                    d = ndarray(d_shape, dtype, dst if d_out else src, d_off, d_str)
                if s is None:
                    s = ndarray(s_shape, dtype, src if s_in else dst, s_off, s_str)
            views.append((d, s, index))
        return views

    def _run_compiled(self, src: np.ndarray, dst: np.ndarray) -> None:
        """The whole plan in one kernel call; the addresses of the arrays passed last are reused."""
        local = self._local
        state = getattr(local, "compiled", None)
        if state is None:
            assert self._program is not None
            temps = [_aligned_empty(n) for n in self.plan.temps]
            bases = (ctypes.c_void_p * (2 + len(temps)))(0, 0, *(address(t) for t in temps))
            state = local.compiled = [self._program.compile(ctypes.addressof(bases)), bases, temps, None]
        last = state[3]
        if last is None or last[0] is not src or last[1] is not dst:
            bases = state[1]
            bases[0], bases[1] = address(src), address(dst)
            if bases[0] < bases[1] + dst.nbytes and bases[1] < bases[0] + src.nbytes:
                src = src.copy()  # the output overlaps the input: read the input first, as a value
                bases[0] = address(src)
                state[3] = None
            else:
                # Kept (so alive, so "is" cannot match a new array at a recycled address) only for
                # small arrays, as the views below are.
                small = src.nbytes <= VIEW_CACHE_MAX_BYTES and dst.nbytes <= VIEW_CACHE_MAX_BYTES
                state[3] = (src, dst) if small else None
        state[0]()

    def run(self, src: np.ndarray, dst: np.ndarray) -> None:
        """Execute every step; ``src``/``dst`` are C-contiguous arrays whose bytes hold the tensors."""
        if self._program is not None:
            self._run_compiled(src, dst)
            return
        local = self._local
        last = getattr(local, "last", None)
        if last is not None and last[0] is src and last[1] is dst:
            views = last[2]
        else:
            if np.may_share_memory(src, dst):
                src = src.copy()  # the output overlaps the input: read the input first, as a value
            views = self._views(src, dst)
            # Calls that pass the same small arrays again (like pre-bound buffers) reuse these views.
            # The views keep both arrays alive, so "is" cannot match a new array at a recycled address;
            # only small ones are kept, so holding on to them costs little.
            small = src.nbytes <= VIEW_CACHE_MAX_BYTES and dst.nbytes <= VIEW_CACHE_MAX_BYTES
            local.last = (src, dst, views) if small else None
        if self.serial:  # the common case without the kernel (with it, a serial plan runs as a program)
            for v in views:
                if v is not None:
                    if v[2] is None:
                        np.copyto(v[0], v[1])
                    else:
                        v[1].take(v[2], None, v[0], "clip")
            return
        for indices, split in self.phases:
            active = [views[i] for i in indices if views[i] is not None]
            if not split:
                _copy_all(active)
                continue
            if len(active) < SHARE_PIECES:  # cut each copy along its outer axis
                per = -(-SHARE_PIECES // max(1, len(active)))
                active = [piece for v in active for piece in _pieces(v, per)]
            # The calling thread takes pieces from the front, the worker from the back, until they
            # meet: a second core that is busy with other work (a shared machine) delays the copy by
            # one piece at most, and each core tends to write the same half on every call, which its
            # cache may still hold from the last one.
            ends = _Ends(len(active))
            future = _second_thread().submit(_drain, active, ends, False)
            _drain(active, ends, True)
            if not future.cancel():  # a worker that never started has nothing left to do
                future.result()


def _pieces(views: tuple, count: int) -> list[tuple]:
    """A step's views cut into up to ``count`` pieces along their outer axis (a kernel call: where the
    kernel cuts it, KernelCall.pieces)."""
    d, s, index = views
    if type(index) is KernelCall:
        return [(d, s, piece) for piece in index.pieces(count)]
    n = index.size if index is not None else d.shape[0]
    bounds = piece_bounds(n, count)
    if index is not None:
        return [(d[a:b], s, index[a:b]) for a, b in itertools.pairwise(bounds)]
    return [(*_unlocking(d[a:b], s[a:b]), None) for a, b in itertools.pairwise(bounds)]


def _unlocking(d: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Views of a piece whose np.copyto lets go of Python's lock, so that the other thread copies at
    the same time: NumPy keeps it for copies of up to 500 elements (a piece of a few wide rows), so
    opaque elements are seen as the unsigned integers they hold, along a new innermost axis."""
    if d.dtype.kind != "V" or d.size > 500:
        return d, s
    unit = next(u for u in (8, 4, 2, 1) if d.itemsize % u == 0)
    return d[..., None].view(f"u{unit}"), s[..., None].view(f"u{unit}")


class _Ends:
    """The pieces of a split phase not yet taken: [front, back), shared by the two threads."""

    __slots__ = ("front", "back", "lock")

    def __init__(self, count: int):
        self.front, self.back, self.lock = 0, count, threading.Lock()

    def take(self, from_front: bool) -> int:
        """The number of the next piece from one end, or -1 when none is left."""
        with self.lock:
            if self.front >= self.back:
                return -1
            if from_front:
                self.front += 1
                return self.front - 1
            self.back -= 1
            return self.back


def _drain(views: list, ends: _Ends, from_front: bool) -> None:
    """Copy the views that ``ends`` hands out from one end until none is left."""
    while (i := ends.take(from_front)) >= 0:
        _copy_all((views[i],))


def _copy_all(views) -> None:
    for v in views:
        if v is not None:
            d, s, index = v
            if index is None:
                np.copyto(d, s)
            elif type(index) is KernelCall:
                index(d, s)
            else:
                s.take(index, None, d, "clip")


def _program(plan: Plan, shared: frozenset[int]) -> copy_kernel.Program:
    """The plan's steps for the kernel: buffer 0 is the input, 1 the output, 2 + k temporary k; steps
    of the ``shared`` phases are cut into pieces for two threads (share_pieces)."""
    program = copy_kernel.Program()

    def number(ref: str | int) -> int:
        return {"in": 0, "out": 1}[ref] if isinstance(ref, str) else 2 + ref

    for step in plan.steps:
        dst, src = number(step.dst), number(step.src)
        pieces = share_pieces(math.prod(step.shape) * step.width) if step.phase in shared else 0
        if step.index is not None:
            program.gather(
                dst,
                step.dst_offset,
                src,
                step.src_offset,
                step.width,
                step.dst_strides[0],
                step.index,
                pieces,
            )
            continue
        program.copy(
            dst,
            step.dst_offset,
            src,
            step.src_offset,
            step.shape,
            step.dst_strides,
            step.src_strides,
            step.width,
            step.stream,
            pieces,
        )
    return program


def _kernel_entry(step: Step, temps) -> tuple:
    """The cached entry of a kernel step: (dst address, src address, call, fresh, None), where an address
    is None for the caller's buffers and ``fresh`` = (dst is "out", dst offset, src is "in", src offset)."""
    call = KernelCall(step.shape, step.dst_strides, step.src_strides, step.width, step.stream)
    fresh = (step.dst == "out", step.dst_offset, step.src == "in", step.src_offset)
    return (
        _address(temps, step.dst, step.dst_offset),
        _address(temps, step.src, step.src_offset),
        call,
        fresh,
        None,
    )


def _address(temps, ref, offset: int) -> int | None:
    """The address a step's view of a temporary starts at; None for the caller's buffers."""
    return None if isinstance(ref, str) else address(temps[ref]) + offset


def _aligned_empty(nbytes: int, align: int = 64) -> np.ndarray:
    """A byte buffer starting on an ``align``-byte boundary. Copies between temporaries then never
    hit memmove's misalignment cliff (rep movsb ~10x slower when the destination sits 8-24 bytes past
    the source modulo 64; bench/README.md)."""
    raw = np.empty(nbytes + align, np.uint8)
    start = -raw.ctypes.data % align
    return raw[start : start + nbytes]


def _view(temps, ref, offset, shape, strides, width) -> np.ndarray | None:
    """A view into a temporary, or None for the input and output (their buffers change per call)."""
    return None if isinstance(ref, str) else view(temps[ref], offset, shape, strides, width)


class NumpyTile(CompiledTile):
    """The NumPy backend's compiled op: two cached plans, one for raw buffers, one for packed arrays."""

    backend = "numpy"
    provider = "numpy"

    def __init__(self, desc: OperatorDesc, threads: int = 2, costs: CopyCosts | None = None):
        """``costs``: the cost model to plan with (default: this machine's, calibrated at first use)."""
        if isinstance(threads, bool) or not isinstance(threads, int) or threads not in (1, 2):
            raise DmlTileError(f"threads must be 1 or 2, got {threads!r}")
        super().__init__(desc)
        t_in, t_out = desc.input, desc.output
        elem = t_in.data_type.element_size
        self.out_bytes = t_out.total_tensor_size_in_bytes
        self.aliasing_output = output_aliases(t_out)
        in_strides = [s * elem for s in t_in.effective_strides]
        out_strides = [s * elem for s in t_out.effective_strides]
        self.threads = threads
        self.buffer_plan = (
            None
            if self.aliasing_output
            else make_plan(
                t_in.sizes, desc.repeats, in_strides, out_strides, elem, threads=threads, costs=costs
            )
        )
        packed_in = [s * elem for s in packed_strides(t_in.sizes)]
        packed_out = [s * elem for s in packed_strides(t_out.sizes)]
        self.array_plan = make_plan(
            t_in.sizes, desc.repeats, packed_in, packed_out, elem, threads=threads, costs=costs
        )
        self._buffers = PlanRunner(self.buffer_plan, threads) if self.buffer_plan else None
        self._arrays = PlanRunner(self.array_plan, threads)
        self._fast = _reshape_recipe(self.array_plan, elem)
        # Where the reshapes' np.copyto would meet rep movsb's slow case, the same step runs in the
        # copy kernel instead: (differences of out's and x's addresses, modulo 64, that do, the runner).
        self._cliff = _slow_differences(self.array_plan, self._fast, costs or machine_costs())
        self._cliff_runner = (
            PlanRunner(replace(self.array_plan, program=True), threads) if self._cliff else None
        )
        self._last_fast: tuple | None = None
        self._last_buffers: tuple | None = None

    def plan_info(self, buffers: bool = False) -> dict[str, Any]:
        """How a call on arrays runs (on raw buffers with ``buffers``, through the descriptor's
        Strides), as plain data: the outermost recipe (``kind``), the number of steps, the phases split
        over two threads, whether the copy kernel streams any step, whether the whole plan runs as
        one call of the copy kernel, and whether a call is just two reshapes and one copy (small
        one-copy plans on arrays). An output whose strides alias has no buffer plan: its buffers run
        through the arrays' plan, then a scatter."""
        if buffers and self._buffers is not None:
            plan, one_call, reshape = self._buffers.plan, self._buffers.one_kernel_call, False
        else:
            plan, reshape = self.array_plan, self._fast is not None
            one_call = not reshape and self._arrays.one_kernel_call
        return {
            "kind": plan.kind,
            "steps": len(plan.steps),
            "threads": sorted(plan.split),
            "stream": any(step.stream for step in plan.steps),
            "one_kernel_call": one_call,
            "reshape": reshape,
        }

    def __call__(self, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Tile ``x`` into ``out`` or a new array (CompiledTile's contract); the common call, matching
        arrays passed again, is checked with a few identity tests before running the cached plan."""
        if (
            type(x) is np.ndarray
            and type(out) is np.ndarray
            and x.dtype is self.dtype
            and out.dtype is self.dtype
            and x.shape == self.in_shape
            and out.shape == self.out_shape
            and out.strides == self.out_strides
            and out.flags.writeable
        ):
            self.tile_array(x, out)
            return out
        return super().__call__(x, out)

    def tile_array(self, x: np.ndarray, out: np.ndarray) -> None:
        """Two reshapes and one broadcasting copy when the plan allows, else the planned steps."""
        fast = self._fast
        if fast is not None:  # reshaping a non-contiguous x copies it, which is still right: x is only read
            # A same-dtype np.copyto moves elements by their size (integer loads and stores, never
            # float arithmetic), so this path is bit-exact too; test_nan_payloads_survive checks it.
            last = self._last_fast
            if last is not None and last[0] is x and last[1] is out:
                if last[2] is None:
                    self._cliff_runner.run(x, out)  # type: ignore[union-attr]
                else:
                    np.copyto(last[2], last[3])
                return
            if self._cliff and x.flags.c_contiguous and (address(out) - address(x)) % 64 in self._cliff:
                self._cliff_runner.run(x, out)  # type: ignore[union-attr]
                self._last_fast = (x, out, None, None)
                return
            out_shape, x_shape, wide = fast
            if wide is None:
                d, s = out.reshape(out_shape), x.reshape(x_shape)
            else:  # the plan's wider element: rows as one integer or opaque chunk each, not per element
                d = out.reshape(out_shape).view(wide)
                s = np.ascontiguousarray(x).reshape(x_shape).view(wide)
            np.copyto(d, s)
            # The same arrays passed again reuse these reshapes; only views (a contiguous x) are kept,
            # and they keep x and out alive, so "is" cannot match a new array at a recycled address.
            self._last_fast = (x, out, d, s) if x.flags.c_contiguous else None
        else:
            self._arrays.run(np.ascontiguousarray(x), out)

    def run_buffers(self, in_buf: Any, out_buf: Any, poison_padding: bool = False) -> None:
        """Run on raw byte buffers honouring Strides and TotalTensorSizeInBytes.

        Output bytes the output desc does not address stay untouched, unless ``poison_padding``
        fills them with POISON_BYTE (DirectML may overwrite any byte of an output's
        TotalTensorSizeInBytes, so programs must not rely on padding surviving). Output strides that
        alias (DML109, a race on a GPU) are written in row-major order, the last write winning.
        """
        last = self._last_buffers
        if last is not None and last[0] is in_buf and last[1] is out_buf and not poison_padding:
            src, dst = last[2], last[3]  # the same arrays again (pre-bound buffers): checked already
        else:
            src, dst = buffer_views(self.desc, in_buf, out_buf, poison_padding)
            # Kept (alive, so "is" cannot match a new array at a recycled address) for small arrays only.
            small = src.nbytes <= VIEW_CACHE_MAX_BYTES and dst.nbytes <= VIEW_CACHE_MAX_BYTES
            arrays = type(in_buf) is np.ndarray and type(out_buf) is np.ndarray
            self._last_buffers = (in_buf, out_buf, src, dst) if small and arrays else None
        if self.aliasing_output:
            x = np.ascontiguousarray(strided(src, self.desc.input)).view(self.dtype)
            scatter_row_major(dst, self.desc.output, self(x))
        else:
            assert self._buffers is not None  # a descriptor has a buffer plan unless its output aliases
            self._buffers.run(src, dst)


def _reshape_recipe(plan: Plan, elem: int) -> tuple[tuple[int, ...], tuple[int, ...], np.dtype | None] | None:
    """For a one-step plan on packed arrays: the shapes (in elements) to reshape ``out`` and ``x`` to, and
    the step's wider element type to view both as (None when it is the element itself), so a call is two
    reshapes and one broadcasting np.copyto (the cheapest path on tiny tensors). Viewing as the wider
    element keeps what the planner priced: a row of 2 int64 repeated 4000 times is 4000 16-byte
    moves, not 4000 inner loops of NumPy's (measured 1.3 us against 15 us)."""
    if (
        len(plan.steps) != 1
        or plan.program
        or plan.split  # priced on two threads: run that way
        or plan.temps
        or plan.steps[0].index is not None
        or plan.steps[0].stream
        or math.prod(plan.steps[0].shape) * plan.steps[0].width > FAST_MAX_BYTES
    ):
        return None
    step = plan.steps[0]
    shape, dst_strides, src_strides = step.shape, step.dst_strides, step.src_strides
    if step.width not in (1, 2, 4, 8):  # an opaque chunk: its elements become the innermost axis again
        shape = shape + (step.width // elem,)
        dst_strides, src_strides = dst_strides + (elem,), src_strides + (elem,)
    elif step.width != elem:  # re-express the widened innermost axis in elements
        shape = shape[:-1] + (shape[-1] * step.width // elem,)
        dst_strides, src_strides = dst_strides[:-1] + (elem,), src_strides[:-1] + (elem,)
    if dst_strides != tuple(s * elem for s in packed_strides(shape)):
        return None
    if not _packed_in_order(shape, src_strides, elem):
        return None
    wide = None if step.width == elem else element_type(step.width)
    return shape, tuple(n if s else 1 for n, s in zip(shape, src_strides, strict=False)), wide


def _slow_differences(plan: Plan, fast: tuple | None, costs: CopyCosts) -> frozenset[int]:
    """For a plan run as reshapes whose chunks np.copyto hands to memmove's rep movsb (REP_MOVSB_MIN
    up to L2's size): the differences between the output's and the input's addresses, modulo 64, for
    which one of its chunk copies meets rep movsb's slow case (copy_steps.misaligned); empty when there
    are none, the CPU has no such slow case, or no copy kernel runs the step instead. Rows of 7621
    float16 repeated twice (60 KiB) took 10.8 us as reshapes with the output 8 bytes past the input
    (modulo 64), where a memcpy of the output took 1.7 and the kernel, which steers clear of that case,
    3.6."""
    if fast is None or not copy_kernel.available() or not costs.movsb_cliff:
        return frozenset()
    step = plan.steps[0]
    chunk, outer = memmove_chunks(step)
    if not REP_MOVSB_MIN <= chunk < costs.l2_bytes:
        return frozenset()
    offsets = {(step.dst_offset - step.src_offset) % 64}
    for size, dst_stride, src_stride in zip(
        step.shape[:outer], step.dst_strides[:outer], step.src_strides[:outer], strict=True
    ):
        offsets = {(r + i * (dst_stride - src_stride)) % 64 for r in offsets for i in range(min(size, 64))}
    return frozenset(d for d in range(64) if any(misaligned(d + r, 0) for r in offsets))


def _packed_in_order(shape, src_strides, elem: int) -> bool:
    """Whether the non-broadcast source axes, in order, are exactly a packed row-major array."""
    expect = elem
    for n, s in reversed(list(zip(shape, src_strides, strict=False))):
        if s == 0:
            continue
        if s != expect:
            return False
        expect *= n
    return True


def run_tile_buffers(desc: OperatorDesc, in_buf: Any, out_buf: Any, poison_padding: bool = False) -> None:
    """Execute ``desc`` from ``in_buf`` into ``out_buf`` once (plans on every call; prefer compile())."""
    NumpyTile(desc).run_buffers(in_buf, out_buf, poison_padding)
