"""`make bench`: dmltile's compiled NumPy op beside the honest write floor and its peers, in one run.

The floor of a case is the fastest of three ways to write its output: a memcpy of an output-sized
array (np.copyto), and out.fill with a NON-ZERO byte on one thread and split across two. fill(0) is
left out on purpose: it takes a zeroing fast path that no copy of real data can match (see
bench/README.md). Every other column is a time per call divided by the floor: numpy.tile,
onnxruntime CPU (run_with_iobinding, buffers bound once), dmltile's op with one thread and the
default op (two threads allowed, used where the calibrated cost model says they help).
Writes bench/results.json next to this file. ``--only TEXT`` runs the cases whose name contains
TEXT (to rerun the worst one), ``--markdown`` also prints Markdown tables. ``--sweep N --seed S``
runs the seeded sweep of N random shapes instead (``bench/sweep.py``, ``make bench-sweep``).
"""

from __future__ import annotations

import gc
import json
import platform
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

import dmltile
from dmltile.execute.numpy_backend import NumpyTile

HERE = Path(__file__).parent
CASES = [
    ("tiny 3-D", (2, 3, 4), (1, 2, 3), "float32"),
    ("doc example", (1, 1, 2, 3), (1, 1, 3, 3), "float32"),
    ("8-D tiny chunks", (2,) * 8, (2,) * 8, "float32"),
    ("medium f32", (1, 64, 128, 128), (1, 1, 2, 2), "float32"),
    ("medium f16", (1, 64, 128, 128), (1, 1, 2, 2), "float16"),
    ("medium int8", (1, 64, 128, 128), (1, 1, 2, 2), "int8"),
    ("large 8x8", (1, 1, 1024, 1024), (1, 1, 8, 8), "float32"),
    ("inner repeat", (4096, 1), (1, 16384), "float32"),
    ("outer repeat", (1, 4096, 1024), (64, 1, 1), "float32"),
]
DTYPE_NAMES = {"float32": "FLOAT32", "float16": "FLOAT16", "int8": "INT8"}
BUDGET_S = 2.0
POOL = ThreadPoolExecutor(max_workers=1)  # time spent per measurement (at least 3 runs)


def batch_size(fn) -> int:
    """Calls per timed batch so that a batch takes about a millisecond."""
    fn()
    start = time.perf_counter()
    fn()
    return max(1, int(1e-3 / max(time.perf_counter() - start, 1e-7)))


def interleaved_best(columns: dict, budget: float, rounds_log: dict | None = None) -> dict:
    """Best seconds per call of every column, timed in rounds (one batch of each column per round),
    so that a change in the machine's load hits all columns alike and the ratios stay fair; with
    ``rounds_log``, each round's time of every column is appended there too.

    Every other round runs the columns in reverse order, so no column always follows the same one: a
    column that allocates and frees a large array (np.tile, onnxruntime's run) slows whatever runs
    next for a while here (a 40 MiB Tile took 3.1 ms right after onnxruntime, 2.0 after a fill, 1.4
    after itself; on one thread 6.2, 3.2 and 3.4), longer than the settling call below covers."""
    sizes = {name: batch_size(fn) for name, fn in columns.items()}
    best = dict.fromkeys(columns, float("inf"))
    deadline = time.perf_counter() + budget
    rounds = 0
    while rounds < 3 or (time.perf_counter() < deadline and rounds < 200):
        order = list(columns.items())
        for name, fn in order if rounds % 2 == 0 else reversed(order):
            fn()  # settle after the previous column (np.tile frees big arrays, which unmaps pages)
            t0 = time.perf_counter()
            for _ in range(sizes[name]):
                fn()
            seconds = (time.perf_counter() - t0) / sizes[name]
            best[name] = min(best[name], seconds)
            if rounds_log is not None:
                rounds_log.setdefault(name, []).append(seconds)
        rounds += 1
    return best


FILL_BYTE = 7  # any non-zero byte: fill(0) has a zeroing fast path (bench/README.md)


def fill_one(out: np.ndarray) -> None:
    """The write-only floor on one thread: fill every byte with a non-zero value."""
    out.reshape(-1).view(np.uint8).fill(FILL_BYTE)


def fill_two(out: np.ndarray) -> None:
    """The write-only floor with two threads: each fills half of the output with a non-zero byte."""
    flat = out.reshape(-1).view(np.uint8)
    half = flat.size // 2
    future = POOL.submit(flat[half:].fill, FILL_BYTE)
    flat[:half].fill(FILL_BYTE)
    future.result()


def ort_runner(x: np.ndarray, repeats, out: np.ndarray):
    """onnxruntime CPU's run_with_iobinding on pre-bound buffers, or None when not installed."""
    try:
        from dmltile.execute.ort_backend import make_session, tile_model

        session = make_session(tile_model(x.shape, repeats, x.dtype), providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - not installed or unusable: the column says so
        return None, str(e).splitlines()[0]
    binding = session.io_binding()
    binding.bind_input("input", "cpu", 0, x.dtype, x.shape, x.ctypes.data)
    binding.bind_output("output", "cpu", 0, out.dtype, out.shape, out.ctypes.data)
    return (lambda: session.run_with_iobinding(binding)), None


def measure(name, in_shape, repeats, dtype) -> dict:
    """Times of every column for one case, in seconds, and a correctness check of dmltile's result."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, 100, size=in_shape).astype(dtype)
    desc = dmltile.tile_desc(in_shape, repeats, dtype=DTYPE_NAMES[dtype])
    out = np.empty(desc.output.sizes, dtype)
    out.fill(1)
    src = np.ones_like(out)
    out_bytes = out.nbytes
    large = out_bytes >= 64 << 20
    budget = 4.0 if large else BUDGET_S
    row = {
        "case": name,
        "input": list(in_shape),
        "repeats": list(repeats),
        "dtype": dtype,
        "out_bytes": out_bytes,
    }
    run, why = ort_runner(x, repeats, out)
    ops = {threads: NumpyTile(desc, threads=threads) for threads in (1, 2)}
    columns = {
        "memcpy": lambda: np.copyto(out, src),
        "fill": lambda: fill_one(out),
        "fill_2t": lambda: fill_two(out),
        "np_tile": lambda: np.tile(x, repeats),
        "dmltile_1t": lambda: ops[1](x, out),
        "dmltile_2t": lambda: ops[2](x, out),
    }
    if run:
        columns["ort"] = run
    row.update(interleaved_best(columns, budget))
    row.setdefault("ort", None)
    row["ort_note"] = why
    src = None  # free the memcpy source before the allocating measurement below
    gc.collect()
    op = dmltile.compile(desc)
    row["dmltile_new_out"] = interleaved_best({"op": lambda: op(x)}, budget)["op"] if not large else None
    expect = np.tile(x, repeats)
    row["exact"] = all(
        bool(np.array_equal(o(x, out).view(np.uint8), expect.view(np.uint8))) for o in (op, ops[1], ops[2])
    )
    row["floor"] = min(row["memcpy"], row["fill"], row["fill_2t"])
    row["floor_of"] = min(("memcpy", "fill", "fill_2t"), key=row.get)
    row["dmltile"] = row["dmltile_2t"]  # compile()'s default op: two threads allowed
    row["plan"] = op.plan_info()
    return row


def machine() -> dict:
    """The figures the cost model read (cache sizes, cores; faked ones say so), the CPU model, Python,
    NumPy and onnxruntime versions, and the cost model the planner used."""
    try:
        import onnxruntime

        ort_version = onnxruntime.__version__
    except ImportError:
        ort_version = None
    from dataclasses import asdict

    from dmltile.execute.copy_kernel import status
    from dmltile.execute.costs import cache_file, machine_costs
    from dmltile.execute.machine import cpu_model, this_machine

    figures = this_machine()
    return {
        "copy_kernel": status(),
        "nproc": figures.cpus,
        "cpu": cpu_model(),
        "figures": asdict(figures),
        "copy_costs": {"file": str(cache_file()), **asdict(machine_costs())},
        "python": platform.python_version(),
        "numpy": np.__version__,
        "onnxruntime": ort_version,
        "platform": platform.platform(),
    }


def fmt_time(t: float | None) -> str:
    if t is None:
        return "-"
    return f"{t * 1e6:.2f} µs" if t < 1e-3 else f"{t * 1e3:.2f} ms"


def ratio(t: float | None, base: float | None) -> str:
    return "-" if t is None or not base else f"{t / base:.2f}×"


HEADERS = (
    "case",
    "out",
    "floor",
    "memcpy",
    "fill 1t",
    "fill 2t",
    "np.tile",
    "ort CPU",
    "dmltile 1t",
    "dmltile",
    "plan",
    "dmltile/np.tile",
    "dmltile/ort",
    "dmltile/memcpy",
    "exact",
)
FLOOR_NAMES = {"memcpy": "memcpy", "fill": "fill 1t", "fill_2t": "fill 2t"}


def cells(r: dict) -> list[str]:
    """One row: the floor's time, every column as a ratio of it, then dmltile against its peers."""
    f = r["floor"]
    floors = [
        ratio(r[k], f) for k in ("memcpy", "fill", "fill_2t", "np_tile", "ort", "dmltile_1t", "dmltile_2t")
    ]
    plan = (
        r["plan"]["kind"]
        + (" stream" if r["plan"].get("stream") else "")
        + (" 2t" if r["plan"]["threads"] else "")
    )
    return [
        f"{r['case']} {r['dtype']}",
        human(r["out_bytes"]),
        f"{fmt_time(f)} ({FLOOR_NAMES[r['floor_of']]})",
        *floors,
        plan,
        ratio(r["dmltile"], r["np_tile"]),
        ratio(r["dmltile"], r["ort"]),
        ratio(r["dmltile"], r["memcpy"]),
        "yes" if r["exact"] else "NO",
    ]


def table(rows: list[dict], info: dict) -> Table:
    """The rich table of every case."""
    t = Table(
        title=f"Tile, time per call as a ratio of the floor — {info['cpu']}, {info['nproc']} cores, "
        f"numpy {info['numpy']}, onnxruntime {info['onnxruntime']}"
    )
    for col in HEADERS:
        t.add_column(col, justify="left" if col == "case" else "right")
    for r in rows:
        t.add_row(*cells(r))
    return t


def targets(rows: list[dict]) -> list[tuple[str, str, bool]]:
    """Issue 15's targets, each as (target, measured, met); "dmltile" is compile()'s default op."""
    out = []
    with_ort = [r for r in rows if r["ort"]]
    if with_ort:
        vs = {f"{r['case']} {r['dtype']}": r["dmltile"] / r["ort"] for r in with_ort}
        worst = max(vs, key=vs.get)
        out.append(
            (
                "dmltile <= 1.0x onnxruntime CPU on every case",
                f"worst {vs[worst]:.2f}x ({worst})",
                all(v <= 1.0 for v in vs.values()),
            )
        )
    for r in rows:
        if r["out_bytes"] >= 256 << 20:
            out.append(
                (
                    f"{r['case']}: <= 1.3x the floor",
                    f"{r['dmltile'] / r['floor']:.2f}x",
                    r["dmltile"] <= 1.3 * r["floor"],
                )
            )
    for r in rows:
        if r["case"] == "medium int8":
            out.append(
                (
                    "medium int8: <= 1.2x memcpy",
                    f"{r['dmltile'] / r['memcpy']:.2f}x",
                    r["dmltile"] <= 1.2 * r["memcpy"],
                )
            )
    out.append(
        (
            "bit-exact on every case (1t, 2t and default op)",
            "all" if all(r["exact"] for r in rows) else ", ".join(r["case"] for r in rows if not r["exact"]),
            all(r["exact"] for r in rows),
        )
    )
    return out


def markdown(rows: list[dict]) -> str:
    """The same table as Markdown (for bench/README.md)."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(cells(r)) + " |" for r in rows]
    return "\n".join(lines)


def human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:g} {unit}"
        n /= 1024
    return f"{n:g} TiB"


# ---- buffer-mode peak memory ----------------------------------------------------------------
# Separate from the timing columns above: each case runs in a fresh child process, which reports
# its peak resident memory (VmHWM; ru_maxrss survives execve, so it could be this parent's) above
# what it held after its imports: what the run itself allocated at its worst. Target: <= 2x the buffer.
MEMORY_CASES = [  # (name, input sizes, repeats): FLOAT32, packed, output buffer 64 MiB and 1 GiB
    ("64 MiB output buffer", (1, 1, 64, 1024), (1, 1, 64, 4)),
    ("1 GiB output buffer", (1, 1, 64, 1024), (1, 1, 256, 16)),
]
MEMORY_CHILD = r"""
import json, resource, sys, tempfile, os
import numpy as np
import dmltile
from dmltile.cli import main
mode, doc, result = sys.argv[1], sys.argv[2], sys.argv[3]


def peak():
    # VmHWM: this process's own peak (ru_maxrss is kept across execve, so it may be the parent's)
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
desc = dmltile.load(doc)
if mode == "api":
    op = dmltile.compile(desc)
    src = np.ones(desc.input.total_tensor_size_in_bytes, np.uint8)
    base = peak()
    dst = np.zeros(desc.output.total_tensor_size_in_bytes, np.uint8)
    op.run_buffers(src, dst)
else:
    folder = tempfile.mkdtemp()
    sys.argv = ["dmltile", "run", doc, "--output-buffer", os.path.join(folder, "out.bin")]
    base = peak()
    try:
        main()
    except SystemExit as e:
        assert not e.code, e.code
    os.remove(os.path.join(folder, "out.bin"))
    os.rmdir(folder)
with open(result, "w") as f:
    json.dump({"extra_bytes": max(peak() - base, 0) * 1024}, f)
"""


def peak_memory(in_sizes, repeats, mode: str) -> int | None:
    """Peak extra resident bytes of one buffer-mode run in a child process: ``mode`` "api"
    (op.run_buffers on a new output buffer) or "cli" (dmltile run --output-buffer)."""
    import subprocess
    import tempfile

    desc = dmltile.tile_desc(list(in_sizes), list(repeats), dtype="FLOAT32")
    with tempfile.TemporaryDirectory() as folder:
        doc, result = Path(folder) / "desc.json", Path(folder) / "result.json"
        doc.write_text(desc.to_json())
        done = subprocess.run(
            [sys.executable, "-c", MEMORY_CHILD, mode, str(doc), str(result)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if done.returncode or not result.exists():
            print(f"memory case failed ({mode}): {done.stderr.strip()[-300:]}", file=sys.stderr)
            return None
        return json.loads(result.read_text())["extra_bytes"]


def memory_rows() -> list[dict]:
    """One row per MEMORY_CASES entry: output buffer size and peak memory of the API and the CLI."""
    rows = []
    for name, in_sizes, repeats in MEMORY_CASES:
        out_bytes = 4 * int(np.prod(in_sizes)) * int(np.prod(repeats))
        api, cli = peak_memory(in_sizes, repeats, "api"), peak_memory(in_sizes, repeats, "cli")
        rows.append({"case": name, "out_bytes": out_bytes, "api_peak": api, "cli_peak": cli})
    return rows


def memory_table(rows: list[dict]) -> Table:
    t = Table(title="buffer-mode peak memory (above the process's memory after imports; target <= 2x)")
    for col in ("case", "output buffer", "op.run_buffers", "x buffer", "run --output-buffer", "x buffer"):
        t.add_column(col, justify="left" if col == "case" else "right")
    for r in rows:
        cells = [r["case"], human(r["out_bytes"])]
        for key in ("api_peak", "cli_peak"):
            v = r[key]
            cells += ["failed", "-"] if v is None else [human(v), f"{v / r['out_bytes']:.2f}x"]
        t.add_row(*cells)
    return t


def memory_targets(rows: list[dict]) -> list[tuple[str, str, bool]]:
    out = []
    for r in rows:
        for key, what in (("api_peak", "op.run_buffers"), ("cli_peak", "run --output-buffer")):
            v = r[key]
            ratio = None if v is None else v / r["out_bytes"]
            out.append(
                (
                    f"{what} peak memory <= 2x the {r['case']}",
                    "failed" if ratio is None else f"{ratio:.2f}x",
                    ratio is not None and ratio <= 2.0,
                )
            )
    return out


# ---- end of buffer-mode peak memory ------------------------------------------------------------


def main() -> None:
    if "--sweep" in sys.argv:
        from sweep import main as sweep

        seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 0
        sweep(int(sys.argv[sys.argv.index("--sweep") + 1]), seed, "--markdown" in sys.argv)
        return
    console = Console(width=200)
    info = machine()
    rows = []
    start = time.perf_counter()
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    for case in CASES:
        if only not in case[0]:
            continue
        rows.append(measure(*case))
        console.print(f"measured {case[0]} {case[3]} ({time.perf_counter() - start:.0f} s)", style="dim")
    console.print(table(rows, info))
    console.print(f"copy kernel: {info['copy_kernel']}", style="dim")
    tiny = [r for r in rows if r["out_bytes"] < 4096]
    for r in tiny:
        console.print(
            f"fixed cost {r['case']}: dmltile op(x, out) {fmt_time(r['dmltile_1t'])}, op(x) "
            f"{fmt_time(r['dmltile_new_out'])}, np.tile {fmt_time(r['np_tile'])}, "
            f"ort iobinding {fmt_time(r['ort'])}"
        )
    mem = memory_rows()
    console.print(memory_table(mem))
    verdicts = targets(rows) + memory_targets(mem)
    for name, measured, ok in verdicts:
        console.print(f"{'[green]met   [/]' if ok else '[red]missed[/]'} {name}: {measured}")
    notes = {r["ort_note"] for r in rows if r["ort_note"]}
    for note in notes:
        console.print(f"onnxruntime column skipped: {note}")
    if not only:
        (HERE / "results.json").write_text(
            json.dumps(
                {"machine": info, "rows": rows, "targets": verdicts, "seconds": time.perf_counter() - start},
                indent=2,
            )
        )
    if "--markdown" in sys.argv:
        print(markdown(rows))
        print(
            "\n".join(
                f"| {name} | {measured} | {'met' if ok else 'missed'} |" for name, measured, ok in verdicts
            )
        )
    console.print(
        f"done in {time.perf_counter() - start:.0f} s" + ("" if only else f", wrote {HERE / 'results.json'}")
    )


if __name__ == "__main__":
    sys.exit(main())
