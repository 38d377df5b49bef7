"""`make bench`: dmltile's compiled NumPy op beside the floors and its peers, as ratios, in one run.

Columns (time of one call; ratios against the memcpy floor unless noted):
memcpy floor (np.copyto of an output-sized array), fill floor (out.fill(0), on one thread and split
across two), numpy.tile,
onnxruntime CPU (run_with_iobinding, buffers bound once), dmltile with one thread and with two.
Writes bench/results.json next to this file. Cases are DESIGN §7's.
"""

from __future__ import annotations

import gc
import json
import os
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
BUDGET_S = 1.0
POOL = ThreadPoolExecutor(max_workers=1)  # time spent per measurement (at least 3 runs)


def batch_size(fn) -> int:
    """Calls per timed batch so that a batch takes about a millisecond."""
    fn()
    start = time.perf_counter()
    fn()
    return max(1, int(1e-3 / max(time.perf_counter() - start, 1e-7)))


def interleaved_best(columns: dict, budget: float) -> dict:
    """Best seconds per call of every column, timed in rounds (one batch of each column per round),
    so that a change in the machine's load hits all columns alike and the ratios stay fair."""
    sizes = {name: batch_size(fn) for name, fn in columns.items()}
    best = dict.fromkeys(columns, float("inf"))
    deadline = time.perf_counter() + budget
    rounds = 0
    while rounds < 3 or (time.perf_counter() < deadline and rounds < 200):
        for name, fn in columns.items():
            fn()  # settle after the previous column (np.tile frees big arrays, which unmaps pages)
            t0 = time.perf_counter()
            for _ in range(sizes[name]):
                fn()
            best[name] = min(best[name], (time.perf_counter() - t0) / sizes[name])
        rounds += 1
    return best


def fill_two(out: np.ndarray) -> None:
    """The write-only floor with two threads: each fills half of the output."""
    flat = out.reshape(-1)
    half = flat.size // 2
    future = POOL.submit(flat[half:].fill, 0)
    flat[:half].fill(0)
    future.result()


def ort_runner(x: np.ndarray, repeats, out: np.ndarray):
    """onnxruntime CPU's run_with_iobinding on pre-bound buffers, or None when not installed."""
    try:
        from dmltile.execute.ort_backend import make_session, tile_model

        session = make_session(tile_model(x.shape, repeats, x.dtype), providers=["CPUExecutionProvider"])
    except Exception as e:  # not installed: the column says so
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
        "fill": lambda: out.fill(0),
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
    columns.clear()  # the memcpy column holds the last reference to src
    src = None
    gc.collect()
    op = dmltile.compile(desc)
    row["dmltile_new_out"] = interleaved_best({"op": lambda: op(x)}, budget)["op"] if not large else None
    row["exact"] = bool(np.array_equal(op(x, out), np.tile(x, repeats)))
    row["plan_steps"] = len(op.array_plan.steps)
    return row


def machine() -> dict:
    """nproc, CPU model, Python and NumPy versions, onnxruntime version if present."""
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        model = platform.processor() or "unknown"
    try:
        import onnxruntime

        ort_version = onnxruntime.__version__
    except ImportError:
        ort_version = None
    return {
        "nproc": os.cpu_count(),
        "cpu": model,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "onnxruntime": ort_version,
        "platform": platform.platform(),
    }


def fmt_time(t: float | None) -> str:
    if t is None:
        return "-"
    return f"{t * 1e6:.2f} µs" if t < 1e-3 else f"{t * 1e3:.2f} ms"


def ratio(t: float | None, base: float) -> str:
    return "-" if t is None else f"{t / base:.2f}×"


HEADERS = (
    "case",
    "out",
    "memcpy",
    "fill",
    "fill 2t",
    "np.tile",
    "ort CPU",
    "dmltile 1t",
    "dmltile 2t",
    "dmltile/np.tile",
    "dmltile/ort",
    "exact",
)


def cells(r: dict) -> list[str]:
    """One row: the memcpy time, every column as a ratio of it, then dmltile's best against its peers."""
    best = min(r["dmltile_1t"], r["dmltile_2t"])
    floors = [
        ratio(r[k], r["memcpy"]) for k in ("fill", "fill_2t", "np_tile", "ort", "dmltile_1t", "dmltile_2t")
    ]
    return [
        f"{r['case']} {r['dtype']}",
        human(r["out_bytes"]),
        fmt_time(r["memcpy"]),
        *floors,
        ratio(best, r["np_tile"]),
        ratio(best, r["ort"]) if r["ort"] else "-",
        "yes" if r["exact"] else "NO",
    ]


def table(rows: list[dict], info: dict) -> Table:
    """The rich table of every case."""
    t = Table(
        title=f"Tile, time per call as a ratio of the memcpy floor — {info['cpu']}, {info['nproc']} cores, "
        f"numpy {info['numpy']}, onnxruntime {info['onnxruntime']}"
    )
    for col in HEADERS:
        t.add_column(col, justify="left" if col == "case" else "right")
    for r in rows:
        t.add_row(*cells(r))
    return t


def targets(rows: list[dict]) -> list[tuple[str, str, bool]]:
    """Issue 4's targets, each as (target, measured, met)."""
    by = {(r["case"], r["dtype"]): r for r in rows}
    out = []
    for r in rows:
        if r["out_bytes"] < 4096:
            ok = r["dmltile_1t"] <= 0.5 * r["np_tile"] and (r["ort"] is None or r["dmltile_1t"] <= r["ort"])
            out.append(
                (
                    f"{r['case']}: fixed cost <= 0.5x np.tile and <= ort",
                    f"{r['dmltile_1t'] / r['np_tile']:.2f}x np.tile, "
                    + (f"{r['dmltile_1t'] / r['ort']:.2f}x ort" if r["ort"] else "ort absent"),
                    ok,
                )
            )
    medium = [
        (("medium f32", "float32"), 0.9),
        (("medium f16", "float16"), 1.6),
        (("medium int8", "int8"), 1.6),
    ]
    for key, limit in medium:
        r = by[key]
        out.append(
            (
                f"{key[0]}: <= {limit}x memcpy",
                f"{r['dmltile_1t'] / r['memcpy']:.2f}x",
                r["dmltile_1t"] <= limit * r["memcpy"],
            )
        )
    for r in rows:
        if r["out_bytes"] >= 256 << 20:
            out.append(
                (
                    f"{r['case']}: one thread <= 0.8x memcpy",
                    f"{r['dmltile_1t'] / r['memcpy']:.2f}x",
                    r["dmltile_1t"] <= 0.8 * r["memcpy"],
                )
            )
            floor = min(r["fill"], r["fill_2t"])
            out.append(
                (
                    f"{r['case']}: two threads near the fill floor (<= 1.1x the faster of fill 1t/2t)",
                    f"{r['dmltile_2t'] / floor:.2f}x",
                    r["dmltile_2t"] <= 1.1 * floor,
                )
            )
    r = by[("8-D tiny chunks", "float32")]
    if r["ort"]:
        out.append(
            (
                "8-D tiny chunks: within 3x of ort",
                f"{r['dmltile_1t'] / r['ort']:.2f}x",
                r["dmltile_1t"] <= 3 * r["ort"],
            )
        )
    vs_tile = {
        r["case"] + " " + r["dtype"]: min(r["dmltile_1t"], r["dmltile_2t"]) / r["np_tile"] for r in rows
    }
    worst = max(vs_tile, key=vs_tile.get)
    out.append(
        (
            "faster than np.tile everywhere",
            f"worst {vs_tile[worst]:.2f}x ({worst})",
            all(v < 1 for v in vs_tile.values()),
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


# ---- buffer-mode peak memory (issue 14) ------------------------------------------------------
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
    console = Console(width=200)
    info = machine()
    rows = []
    start = time.perf_counter()
    for case in CASES:
        rows.append(measure(*case))
        console.print(f"measured {case[0]} {case[3]} ({time.perf_counter() - start:.0f} s)", style="dim")
    console.print(table(rows, info))
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
    (HERE / "results.json").write_text(
        json.dumps(
            {
                "machine": info,
                "rows": rows,
                "memory": mem,
                "targets": verdicts,
                "seconds": time.perf_counter() - start,
            },
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
    console.print(f"wrote {HERE / 'results.json'} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
