"""`make bench`: dmltile's compiled NumPy op beside the floors and its peers, in one run.

Columns, each a time per call divided by the floor: a memcpy of an output-sized array, the Tile
floor (a two-thread non-zero fill of the output plus a two-thread read of the input, same round),
numpy.tile, onnxruntime CPU (run_with_iobinding, buffers bound once), dmltile's op on one thread and
the default op (two threads allowed). Then the contention cases: the op and onnxruntime timed alone,
beside a process busy on one core, and right after the other library's run in the same process.
Writes bench/results.json. ``--only TEXT`` runs the cases whose name contains TEXT, ``--markdown``
also prints Markdown tables. ``--sweep N --seed S`` runs the seeded sweep instead (bench/sweep.py).
"""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table
from timing import fill_read_two, fmt_time, human, interleaved_best, machine, ort_runner

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
        "fill_read_2t": lambda: fill_read_two(out, x),
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
    row["floor"] = min(row["memcpy"], row["fill_read_2t"])
    row["floor_of"] = min(("memcpy", "fill_read_2t"), key=row.get)
    row["dmltile"] = row["dmltile_2t"]  # compile()'s default op: two threads allowed
    row["plan"] = op.plan_info()
    return row


def ratio(t: float | None, base: float | None) -> str:
    return "-" if t is None or not base else f"{t / base:.2f}×"


HEADERS = (
    "case",
    "out",
    "floor",
    "memcpy",
    "fill+read 2t",
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
FLOOR_NAMES = {"memcpy": "memcpy", "fill_read_2t": "fill+read 2t"}


def cells(r: dict) -> list[str]:
    """One row: the floor's time, every column as a ratio of it, then dmltile against its peers."""
    f = r["floor"]
    floors = [
        ratio(r[k], f) for k in ("memcpy", "fill_read_2t", "np_tile", "ort", "dmltile_1t", "dmltile_2t")
    ]
    plan = plan_label(r["plan"])
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


def plan_label(info: dict) -> str:
    """A recipe in a few words: its kind, then "stream" and "2t" where they apply."""
    return (
        info["kind"] + (" stream" if info.get("stream") else "") + (" 2t" if info.get("threads") == 2 else "")
    )


def table(rows: list[dict], info: dict) -> Table:
    """The rich table of every case."""
    t = Table(
        title=f"Tile, time per call as a ratio of the floor — {info['cpu']}, {info['traits']['cores']} cores, "
        f"numpy {info['numpy']}, onnxruntime {info['onnxruntime']}"
    )
    for col in HEADERS:
        t.add_column(col, justify="left" if col == "case" else "right")
    for r in rows:
        t.add_row(*cells(r))
    return t


def targets(rows: list[dict]) -> list[tuple[str, str, bool]]:
    """The targets, each as (target, measured, met); "dmltile" is compile()'s default op."""
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
                    f"{r['case']}: <= 1.3x the floor (fill + read, two threads)",
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


# ---- contention: a busy second core ---------------------------------------------------------
# The op and onnxruntime timed alone, beside another process busy on one core, and right after the
# other library's run in the same process (whose threads may still hold the second core). Medians
# of single calls, not bests: a cliff shows in the typical call. Target: the op degrades no more
# than onnxruntime does.
CONTENTION_CASES = [
    ("int32 7-D", (1, 35, 1, 32, 1, 40, 12), (1, 2, 1, 2, 1, 1, 1), "int32"),
    ("medium f32", (1, 64, 128, 128), (1, 1, 2, 2), "float32"),
]
CONTENTION_CALLS = 200


def median_call(fn, before=None) -> float:
    """Median seconds of one call of ``fn`` (each right after ``before`` when given)."""
    times = []
    for _ in range(CONTENTION_CALLS):
        if before is not None:
            before()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def contention(name, in_shape, repeats, dtype) -> dict | None:
    """Medians alone, beside a busy process and after the other library, for the op and onnxruntime."""
    x = np.random.default_rng(0).integers(0, 100, size=in_shape).astype(dtype)
    desc = dmltile.tile_desc(in_shape, repeats, dtype=dtype.upper())
    out = np.empty(desc.output.sizes, dtype)
    ort, _ = ort_runner(x, repeats, out)
    if ort is None:
        return None
    op = dmltile.compile(desc)

    def ours() -> None:
        op(x, out)

    row = {"case": name, "out_bytes": out.nbytes}
    for who, fn, other in (("dmltile", ours, ort), ("ort", ort, ours)):
        fn()
        row[f"{who}_alone"] = median_call(fn)
        row[f"{who}_after_other"] = median_call(fn, other)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        for who, fn in (("dmltile", ours), ("ort", ort)):
            row[f"{who}_busy"] = median_call(fn)
    finally:
        spinner.kill()
        spinner.wait()
    return row


def contention_targets(rows: list[dict]) -> list[tuple[str, str, bool]]:
    out = []
    for r in rows:
        for state, what in (
            ("busy", "beside a busy process"),
            ("after_other", "right after the other library"),
        ):
            ours = r[f"dmltile_{state}"] / r["dmltile_alone"]
            theirs = r[f"ort_{state}"] / r["ort_alone"]
            out.append(
                (
                    f"{r['case']}: {what}, dmltile slows no more than onnxruntime",
                    f"dmltile {ours:.2f}x ({fmt_time(r[f'dmltile_{state}'])}), onnxruntime {theirs:.2f}x "
                    f"({fmt_time(r[f'ort_{state}'])})",
                    ours <= max(theirs, 1.0) * 1.1,
                )
            )
    return out


# ---- end of contention ---------------------------------------------------------------------------


def main() -> None:
    if "--sweep" in sys.argv:
        from sweep import main as sweep  # the sweep imports timing, never this module

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
    mem = memory_rows() if not only else []
    if mem:
        console.print(memory_table(mem))
    busy = [r for case in CONTENTION_CASES if only in case[0] and (r := contention(*case))]
    verdicts = targets(rows) + memory_targets(mem) + contention_targets(busy)
    for name, measured, ok in verdicts:
        console.print(f"{'[green]met   [/]' if ok else '[red]missed[/]'} {name}: {measured}")
    notes = {r["ort_note"] for r in rows if r["ort_note"]}
    for note in notes:
        console.print(f"onnxruntime column skipped: {note}")
    if not only:
        (HERE / "results.json").write_text(
            json.dumps(
                {
                    "machine": info,
                    "rows": rows,
                    "contention": busy,
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
    console.print(
        f"done in {time.perf_counter() - start:.0f} s" + ("" if only else f", wrote {HERE / 'results.json'}")
    )


if __name__ == "__main__":
    sys.exit(main())
