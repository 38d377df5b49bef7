"""Timing helpers shared by `make bench` (run.py) and `make bench-sweep` (sweep.py).

Columns are timed interleaved, round by round, so a change in the machine's load hits all of them
alike; the floors are the plain ways to write an output (a memcpy, a non-zero fill) and, for a Tile,
to read its input too.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

POOL = ThreadPoolExecutor(max_workers=1)  # the second thread of the two-thread floors
FILL_BYTE = 7  # any non-zero byte: fill(0) may take a zeroing path no copy of real data has


def batch_size(fn: Callable[[], object]) -> int:
    """Calls per timed batch so that a batch takes about a millisecond."""
    fn()
    start = time.perf_counter()
    fn()
    return max(1, int(1e-3 / max(time.perf_counter() - start, 1e-7)))


def interleaved_best(columns: dict, budget: float, rounds_log: dict | None = None) -> dict:
    """Best seconds per call of every column, timed in rounds (one batch of each column per round);
    every other round runs the columns in reverse order, so no column always follows the same one.
    With ``rounds_log``, each round's time of every column is appended there too."""
    sizes = {name: batch_size(fn) for name, fn in columns.items()}
    best = dict.fromkeys(columns, float("inf"))
    deadline = time.perf_counter() + budget
    rounds = 0
    while rounds < 3 or (time.perf_counter() < deadline and rounds < 200):
        order = list(columns.items())
        for name, fn in order if rounds % 2 == 0 else reversed(order):
            fn()  # settle after the previous column (which may have freed a large array)
            t0 = time.perf_counter()
            for _ in range(sizes[name]):
                fn()
            seconds = (time.perf_counter() - t0) / sizes[name]
            best[name] = min(best[name], seconds)
            if rounds_log is not None:
                rounds_log.setdefault(name, []).append(seconds)
        rounds += 1
    return best


def _halves(array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    flat = array.reshape(-1).view(np.uint8)
    return flat[: flat.size // 2], flat[flat.size // 2 :]


def fill_read_two(out: np.ndarray, x: np.ndarray) -> None:
    """The floor of a Tile on two threads: each fills half of the output with a non-zero byte, then
    reads half of the input (a max over its bytes, which NumPy runs without Python's lock)."""
    (out_a, out_b), (in_a, in_b) = _halves(out), _halves(x)

    def half(o: np.ndarray, i: np.ndarray) -> None:
        o.fill(FILL_BYTE)
        if i.size:
            i.max()

    future = POOL.submit(half, out_b, in_b)
    half(out_a, in_a)
    future.result()


def ort_runner(x: np.ndarray, repeats, out: np.ndarray) -> tuple[Callable[[], object] | None, str | None]:
    """onnxruntime CPU's run_with_iobinding on pre-bound buffers, or (None, why) when unusable."""
    try:
        from dmltile.execute.ort_backend import make_session, tile_model

        session = make_session(tile_model(x.shape, repeats, x.dtype), providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - not installed or unusable: the column says so
        return None, str(e).splitlines()[0]
    binding = session.io_binding()
    binding.bind_input("input", "cpu", 0, x.dtype, x.shape, x.ctypes.data)
    binding.bind_output("output", "cpu", 0, out.dtype, out.shape, out.ctypes.data)
    return (lambda: session.run_with_iobinding(binding)), None


def machine() -> dict:
    """The machine and versions a run measured on, and what the planner knew of it."""
    from dataclasses import asdict

    from dmltile.execute.fast.kernel import status
    from dmltile.execute.fast.recipe import this_machine

    try:
        import onnxruntime

        ort_version = onnxruntime.__version__
    except ImportError:
        ort_version = None
    cpu = next(
        (line.split(":", 1)[1].strip() for line in _cpuinfo() if line.startswith("model name")),
        platform.processor(),
    )
    return {
        "copy_kernel": status(),
        "traits": asdict(this_machine()),
        "cpu": cpu,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "onnxruntime": ort_version,
        "platform": platform.platform(),
    }


def _cpuinfo() -> list[str]:
    try:
        with open("/proc/cpuinfo") as f:
            return f.readlines()
    except OSError:
        return []


def fmt_time(t: float | None) -> str:
    if t is None:
        return "-"
    return f"{t * 1e6:.2f} µs" if t < 1e-3 else f"{t * 1e3:.2f} ms"


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:g} {unit}"
        n /= 1024
    return f"{n:g} TiB"
