"""`make bench-sweep` (``bench/run.py --sweep N --seed S``): dmltile against onnxruntime and the floor
on N random shapes drawn like real models' Tile nodes, all in one run.

Shapes: rank 1-8, every Tile data type NumPy can hold, innermost input rows of 1 byte to 64 KiB,
repeats on inner and outer axes, outputs of 64 bytes to 256 MiB (log-uniform), one shape in six with
a padded (strided) input run through ``op.run_buffers``. Per shape, interleaved round by round (best
batch kept): dmltile's default op with ``out=`` given, onnxruntime CPU with IO binding, numpy.tile,
the simplest recipe (one strided copy of every run, one thread), a memcpy of the output, and the
Tile floor (a two-thread fill of the output plus a two-thread read of the input). A shape that loses
to onnxruntime is timed again three times (dmltile and onnxruntime interleaved) and judged by the
median of those ratios. Every result is checked bit for bit against numpy.tile. Writes bench/sweep.json.
"""

from __future__ import annotations

import gc
import json
import math
import statistics
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table
from timing import fill_read_two, fmt_time, human, interleaved_best, machine, ort_runner

import dmltile
from dmltile.execute.fast.emit import Runner
from dmltile.execute.fast.recipe import simplest, this_machine, tile_axes

HERE = Path(__file__).parent
DTYPES = (
    "FLOAT32",
    "FLOAT16",
    "FLOAT64",
    "INT8",
    "UINT8",
    "INT16",
    "UINT16",
    "INT32",
    "UINT32",
    "INT64",
    "UINT64",
)
MIN_OUT, MAX_OUT = 64, 256 << 20
BANDS = ((0, 64 << 10, "<= 64 KiB"), (64 << 10, 4 << 20, "64 KiB-4 MiB"), (4 << 20, 64 << 20, "4-64 MiB"))
BANDS += ((64 << 20, MAX_OUT + 1, ">= 64 MiB"),)
SIMPLE_LOSS = 1.10  # a chosen plan "lost" to the simplest one when it took this much longer


def draw_shape(rng: np.random.Generator) -> tuple[list[int], list[int], str, int]:
    """(input sizes, repeats, data type, padding in elements of the input's second-innermost stride)."""
    while True:
        rank = int(rng.integers(1, 9))
        dtype = str(rng.choice(DTYPES))
        elem = np.dtype(dtype.lower()).itemsize
        target = math.exp(rng.uniform(math.log(MIN_OUT), math.log(MAX_OUT)))
        row = math.exp(rng.uniform(0, math.log(min(64 << 10, target))))
        sizes = [1] * rank
        repeats = [1] * rank
        sizes[-1] = max(1, round(row / elem))
        # The rest of the output's bytes are shared out (on log scale) among the other axes' sizes and
        # the repeats of axes chosen to repeat (the innermost one in three shapes); some sizes stay 1.
        slots = [("size", k) for k in range(rank - 1) if rng.random() < 0.75]
        slots += [("rep", k) for k in range(rank - 1) if rng.random() < 0.5]
        if rng.random() < 0.35:
            slots.append(("rep", rank - 1))
        if not any(kind == "rep" for kind, _ in slots):
            slots.append(("rep", int(rng.integers(0, rank))))
        budget = math.log(max(1.0, target / (sizes[-1] * elem)))
        shares = rng.dirichlet(np.ones(len(slots))) * budget
        for (kind, k), share in zip(slots, shares, strict=True):
            (sizes if kind == "size" else repeats)[k] = max(1, round(math.exp(share)))
        if all(r == 1 for r in repeats):
            repeats[int(rng.integers(0, rank))] = 2
        out = elem * math.prod(sizes) * math.prod(repeats)
        pad = int(rng.integers(1, 9)) if rank > 1 and rng.random() < 1 / 6 else 0
        if MIN_OUT <= out <= MAX_OUT:
            return sizes, repeats, dtype, pad


def padded_strides(sizes: list[int], pad: int) -> list[int]:
    """Row-major strides (elements) of ``sizes`` whose innermost rows are ``pad`` elements apart more."""
    strides, step = [], 1
    for k, n in enumerate(reversed(sizes)):
        strides.append(step)
        step *= n + (pad if k == 0 else 0)
    return list(reversed(strides))


def simplest_runner(desc, buffers: bool) -> Runner:
    """The simplest recipe for the descriptor (its buffers' strides, or packed arrays'), handed to
    the emitter directly: what the chosen recipe's doubling and threads are measured against."""
    elem = desc.input.data_type.element_size
    t_in, t_out = desc.input, desc.output
    if buffers:
        in_strides, out_strides = t_in.effective_strides, t_out.effective_strides
    else:
        in_strides, out_strides = padded_strides(t_in.sizes, 0), padded_strides(t_out.sizes, 0)
    axes, run = tile_axes(
        t_in.sizes, desc.repeats, [s * elem for s in in_strides], [s * elem for s in out_strides], elem
    )
    return Runner(simplest(axes, run, this_machine()))


def budget_for(out_bytes: int) -> float:
    """Seconds of interleaved rounds per shape: enough rounds for a stable best, the total kept in
    check (large outputs get more, as each round holds fewer calls)."""
    if out_bytes >= 64 << 20:
        return min(8.0, 0.5 + out_bytes / (16 << 20))
    return min(1.5, 0.4 + out_bytes / (16 << 20))


RETIMES = 3  # a losing shape is timed again this many times, interleaved, and judged by the median


def measure_shape(sizes, repeats, dtype: str, pad: int) -> dict:
    npt = np.dtype(dtype.lower())
    # Small integers: every type holds them exactly, and a float's NaN payload (which onnxruntime's
    # float16 Tile does not keep) never arises; dmltile's NaN payloads are the tests' to check.
    x = np.random.default_rng(1).integers(0, 100, size=sizes).astype(npt)
    expect = np.tile(x, repeats)
    strides = padded_strides(sizes, pad) if pad else None
    desc = dmltile.tile_desc(sizes, repeats, dtype=dtype, strides=strides)
    out_buf = np.empty(desc.output.total_tensor_size_in_bytes, np.uint8)  # rounded up to 4 bytes
    out = out_buf[: expect.nbytes].view(npt).reshape(expect.shape)
    out.fill(1)
    src = np.ones_like(out)
    op, simple = dmltile.compile(desc), simplest_runner(desc, bool(pad))
    if pad:
        in_buf = np.zeros(desc.input.total_tensor_size_in_bytes, np.uint8)
        view = np.ndarray(sizes, npt, in_buf, 0, tuple(s * npt.itemsize for s in strides))
        view[...] = x

        def ours() -> None:
            op.run_buffers(in_buf, out_buf)

        def simplest() -> None:
            simple(in_buf, out_buf)
    else:

        def ours() -> None:
            op(x, out)

        def simplest() -> None:
            simple(x, out)  # x is C-contiguous, its bytes in packed order

    run, why = ort_runner(x, repeats, out)
    columns = {
        "dmltile": ours,
        "simple": simplest,
        "np_tile": lambda: np.tile(x, repeats),
        "memcpy": lambda: np.copyto(out, src),
        "fill_read_2t": lambda: fill_read_two(out, x),
    }
    if run:
        columns["ort"] = run
    rounds: dict[str, list[float]] = {}
    best = interleaved_best(columns, budget_for(out.nbytes), rounds)
    exact = {}
    for name in ("dmltile", "simple", "ort"):
        if name in columns:
            out.fill(1)
            columns[name]()
            exact[name] = bool(np.array_equal(out.view(np.uint8), expect.view(np.uint8)))
    floor = min(best["memcpy"], best["fill_read_2t"])
    # The same ratio round by round (each round's dmltile against that round's floor), its median: the
    # best times of two columns can come from different moments of the machine; a round's columns share one.
    floors = np.minimum.reduce([np.array(rounds[k]) for k in ("memcpy", "fill_read_2t")])
    same_round = float(np.median(np.array(rounds["dmltile"]) / floors))
    vs_ort = best["dmltile"] / best["ort"] if run else None
    retimed = []
    if vs_ort is not None and vs_ort > 1.0:
        for _ in range(RETIMES):
            again = interleaved_best({"dmltile": ours, "ort": run}, budget_for(out.nbytes))
            retimed.append(again["dmltile"] / again["ort"])
    return {
        "input": sizes,
        "repeats": repeats,
        "dtype": dtype,
        "pad": pad,
        "row_bytes": sizes[-1] * npt.itemsize,
        "out_bytes": out.nbytes,
        **best,
        "ort": best.get("ort"),
        "ort_note": why,
        "vs_ort_first": vs_ort,
        "vs_ort_retimed": retimed,
        "vs_ort": statistics.median(retimed) if retimed else vs_ort,
        "floor": floor,
        "floor_same_round": same_round,
        "exact": exact,
        "plan": op.plan_info(buffers=bool(pad)),
    }


def band_of(nbytes: int) -> str:
    return next(name for lo, hi, name in BANDS if lo <= nbytes < hi)


def quantiles(values: list[float]) -> tuple[float, float, float]:
    """(median, 90th percentile, worst)."""
    a = np.asarray(values)
    return float(np.median(a)), float(np.percentile(a, 90)), float(a.max())


def label(r: dict) -> str:
    pad = f" pad {r['pad']}" if r["pad"] else ""
    return f"{r['input']} x {r['repeats']} {r['dtype']}{pad}"


def summary(rows: list[dict]) -> dict:
    """Per size band and overall: distributions, targets and the simplest-plan losses."""
    groups = {name: [r for r in rows if band_of(r["out_bytes"]) == name] for _, _, name in BANDS}
    groups["all"] = rows
    bands = {}
    for name, group in groups.items():
        if not group:
            continue
        with_ort = [r["vs_ort"] for r in group if r["ort"]]
        bands[name] = {
            "shapes": len(group),
            "vs_ort": quantiles(with_ort) if with_ort else None,
            "vs_floor": quantiles([r["dmltile"] / r["floor"] for r in group]),
            "vs_simple": quantiles([r["dmltile"] / r["simple"] for r in group]),
        }
    lost = [r for r in rows if r["dmltile"] > SIMPLE_LOSS * r["simple"]]
    return {
        "bands": bands,
        "targets": targets(rows, bands["all"]["vs_ort"]),
        "lost_to_simple": len(lost),
        "lost_to_simple_shapes": [label(r) for r in lost],
    }


def targets(rows: list[dict], vs_ort) -> list[tuple[str, str, bool]]:
    """The targets on the whole sweep, each as (target, measured, met)."""
    small = [r for r in rows if r["out_bytes"] <= 64 << 10]
    large = [r for r in rows if r["out_bytes"] >= 64 << 20]
    small_miss = [r for r in small if r["dmltile"] > 1.5e-6 + 1.2 * r["memcpy"]]
    large_miss = [r for r in large if r["dmltile"] > 1.3 * r["floor"]]
    round_miss = [r for r in large if r.get("floor_same_round", math.inf) > 1.3]
    wrong = sum(not all(r["exact"].values()) for r in rows)
    median, p90, worst = vs_ort if vs_ort else (math.inf, math.inf, math.inf)
    return [
        ("dmltile/onnxruntime median <= 0.5", f"{median:.2f}", median <= 0.5),
        ("dmltile/onnxruntime 90th percentile <= 0.8", f"{p90:.2f}", p90 <= 0.8),
        ("dmltile/onnxruntime worst <= 1.1 (losers re-timed)", f"{worst:.2f}", worst <= 1.1),
        (
            ">= 64 MiB: <= 1.3x the floor",
            f"{len(large_miss)} of {len(large)} over ({len(round_miss)} against each round's own floor)",
            not large_miss,
        ),
        ("<= 64 KiB: <= 1.5 us + 1.2x memcpy", f"{len(small_miss)} of {len(small)} over", not small_miss),
        ("bit-exact (dmltile, simplest plan, onnxruntime)", f"{wrong} wrong", not wrong),
    ]


def report(console: Console, rows: list[dict], info: dict, seed: int, seconds: float) -> dict:
    s = summary(rows)
    t = Table(
        title=f"sweep of {len(rows)} shapes, seed {seed}: dmltile's time as a ratio (median / p90 / worst)"
    )
    for col in ("outputs", "shapes", "dmltile/ort", "dmltile/floor", "dmltile/simplest plan"):
        t.add_column(col, justify="right")
    for name, b in s["bands"].items():
        fmt = lambda q: "-" if q is None else f"{q[0]:.2f} / {q[1]:.2f} / {q[2]:.2f}"  # noqa: E731
        t.add_row(name, str(b["shapes"]), fmt(b["vs_ort"]), fmt(b["vs_floor"]), fmt(b["vs_simple"]))
    console.print(t)
    for key, title in (("ort", "onnxruntime"), ("floor", "the floor")):
        worst = sorted((r for r in rows if r[key]), key=lambda r: -ratio_to(r, key))[:10]
        w = Table(title=f"worst 10 against {title}")
        for col in ("shape", "out", "dmltile", "ort", "floor", "simplest", "ratio", "plan"):
            w.add_column(col, justify="left" if col == "shape" else "right")
        for r in worst:
            w.add_row(*worst_cells(r, key))
        console.print(w)
    console.print(
        f"chosen plan > {SIMPLE_LOSS:.1f}x the simplest plan (one broadcasting copy): "
        f"{s['lost_to_simple']} of {len(rows)}"
        + (f": {', '.join(s['lost_to_simple_shapes'][:10])}" if s["lost_to_simple"] else "")
    )
    for name, measured, ok in s["targets"]:
        console.print(f"{'[green]met   [/]' if ok else '[red]missed[/]'} {name}: {measured}")
    return s


def ratio_to(r: dict, key: str) -> float:
    """dmltile's ratio to a column; against onnxruntime, the re-timed median where there is one."""
    return r["vs_ort"] if key == "ort" else r["dmltile"] / r[key]


def worst_cells(r: dict, key: str) -> list[str]:
    plan = r["plan"]["kind"] + (" stream" if r["plan"].get("stream") else "")
    plan += " 2t" if r["plan"].get("threads") == 2 else ""
    return [
        label(r),
        human(r["out_bytes"]),
        fmt_time(r["dmltile"]),
        fmt_time(r["ort"]),
        fmt_time(r["floor"]),
        fmt_time(r["simple"]),
        f"{ratio_to(r, key):.2f}x",
        plan,
    ]


def markdown(s: dict, rows: list[dict]) -> str:
    """The band table, the targets and the worst 10 shapes against onnxruntime, as Markdown."""
    fmt = lambda q: "-" if q is None else f"{q[0]:.2f} / {q[1]:.2f} / {q[2]:.2f}"  # noqa: E731
    lines = ["| outputs | shapes | dmltile/ort | dmltile/floor | dmltile/simplest |", "|---|---|---|---|---|"]
    lines += [
        f"| {n} | {b['shapes']} | {fmt(b['vs_ort'])} | {fmt(b['vs_floor'])} | {fmt(b['vs_simple'])} |"
        for n, b in s["bands"].items()
    ]
    lines += ["", "| target | measured | verdict |", "|---|---|---|"]
    lines += [f"| {name} | {measured} | {'met' if ok else 'missed'} |" for name, measured, ok in s["targets"]]
    lines += ["", "| worst against onnxruntime | out | dmltile | ort | floor | simplest | ratio | plan |"]
    lines += ["|---|---|---|---|---|---|---|---|"]
    worst = sorted((r for r in rows if r["ort"]), key=lambda r: -r["vs_ort"])[:10]
    lines += ["| " + " | ".join(worst_cells(r, "ort")) + " |" for r in worst]
    return "\n".join(lines)


def main(count: int, seed: int, as_markdown: bool = False) -> None:
    console = Console(width=200)
    info = machine()
    rng = np.random.default_rng(seed)
    shapes = [draw_shape(rng) for _ in range(count)]
    rows = []
    start = time.perf_counter()
    for i, shape in enumerate(shapes):
        rows.append(measure_shape(*shape))
        gc.collect()
        if (i + 1) % 25 == 0:
            console.print(f"measured {i + 1} of {count} ({time.perf_counter() - start:.0f} s)", style="dim")
    seconds = time.perf_counter() - start
    s = report(console, rows, info, seed, seconds)
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    (HERE / "sweep.json").write_text(
        json.dumps(
            {
                "seed": seed,
                "count": count,
                "seconds": seconds,
                "load": load,
                "machine": info,
                "summary": s,
                "rows": rows,
            },
            indent=1,
        )
    )
    if as_markdown:
        print(markdown(s, rows))
    console.print(f"done in {seconds:.0f} s, load average {' '.join(load)}, wrote {HERE / 'sweep.json'}")
