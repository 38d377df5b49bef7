"""Deterministic generator of Tile descriptors around every rule boundary, and of the golden files.

    python tests/directml/generate_cases.py --count            # how many cases, per group
    python tests/directml/generate_cases.py --golden [VERSION ...]
        runs every case through each installed DirectML version (the driver in
        dmltile/execute/directml, under Wine here) and writes
        tests/directml/golden/directml-<DirectML version>.jsonl

Every case has a stable ``id`` (``group/detail``) and the same ids come out on every run: the golden
files are keyed by it. The descriptor is the bare DML_TILE_OPERATOR_DESC with integer enums; fields
equal to their one correct default (Flags 0, Strides null, alignment 0, DimensionCount = len(Sizes),
RepeatsCount = len(Repeats)) are left out, ``TotalTensorSizeInBytes`` is always written.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
STANDALONE_PATH = ROOT / "dmltile" / "execute" / "directml" / "standalone.py"

U32 = 2**32 - 1
BITS = {1: 32, 2: 16, 3: 32, 4: 16, 5: 8, 6: 32, 7: 16, 8: 8, 9: 64, 10: 64, 11: 64, 12: 4, 13: 4}
NAMES = {
    1: "FLOAT32",
    2: "FLOAT16",
    3: "UINT32",
    4: "UINT16",
    5: "UINT8",
    6: "INT32",
    7: "INT16",
    8: "INT8",
    9: "FLOAT64",
    10: "UINT64",
    11: "INT64",
    12: "UINT4",
    13: "INT4",
}
TILE_TYPES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]


def load_oracle() -> ModuleType:
    """The DirectML driver's ``oracle`` module, loaded by path through ``standalone.py`` (it needs
    nothing of dmltile, so the generator stays independent of the package it checks)."""
    spec = importlib.util.spec_from_file_location("dmltile_directml_standalone", STANDALONE_PATH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load()


def packed(sizes: list[int]) -> list[int]:
    """Row-major strides in elements."""
    out, acc = [0] * len(sizes), 1
    for i in range(len(sizes) - 1, -1, -1):
        out[i] = acc
        acc *= sizes[i]
    return out


def unrounded_bytes(dt: int, sizes: list[int], strides: list[int] | None) -> int:
    """(index of the last element + 1) * element size, before DMLCalcBufferTensorSize rounds it up to 4."""
    if not sizes or 0 in sizes:
        return 0
    st = strides if strides is not None else packed(sizes)
    last = sum((s - 1) * t for s, t in zip(sizes, st, strict=False))
    return ((last + 1) * BITS.get(dt, 32) + 7) // 8


def calc(dt: int, sizes: list[int], strides: list[int] | None) -> int:
    """DMLCalcBufferTensorSize."""
    return (unrounded_bytes(dt, sizes, strides) + 3) & ~3


def tensor(
    dt: int,
    sizes: list[int],
    strides: list[int] | None = None,
    tts: int | None = None,
    align: int = 0,
    flags: int = 0,
    dims: int | None = None,
    ttype: int = 1,
) -> dict[str, Any]:
    """A buffer tensor desc, compact (defaults left out), wrapped only when Type is not BUFFER."""
    t: dict[str, Any] = {"DataType": dt, "Sizes": list(sizes)}
    if flags:
        t["Flags"] = flags
    if dims is not None and dims != len(sizes):
        t["DimensionCount"] = dims
    if strides is not None:
        t["Strides"] = list(strides)
    t["TotalTensorSizeInBytes"] = calc(dt, sizes, strides) if tts is None else tts
    if align:
        t["GuaranteedBaseOffsetAlignment"] = align
    return t if ttype == 1 else {"Type": ttype, "Desc": t}


def tile(
    inp: dict[str, Any], out: dict[str, Any], repeats: list[int], count: int | None = None
) -> dict[str, Any]:
    """A bare DML_TILE_OPERATOR_DESC."""
    d: dict[str, Any] = {"InputTensor": inp, "OutputTensor": out}
    if count is not None and count != len(repeats):
        d["RepeatsCount"] = count
    d["Repeats"] = list(repeats)
    return d


def simple(dt: int, in_sizes: list[int], repeats: list[int], **kw: Any) -> dict[str, Any]:
    """Tile of a tensor with given input strides/size etc. and a correct packed output unless overridden."""
    out_sizes = kw.pop("out_sizes", None) or [s * r for s, r in zip(in_sizes, repeats, strict=False)]
    inp = tensor(
        dt,
        in_sizes,
        kw.pop("in_strides", None),
        kw.pop("in_tts", None),
        kw.pop("in_align", 0),
        kw.pop("in_flags", 0),
        kw.pop("in_dims", None),
        kw.pop("in_type", 1),
    )
    out_dt = kw.pop("out_dt", dt)
    out = tensor(
        out_dt,
        out_sizes,
        kw.pop("out_strides", None),
        kw.pop("out_tts", None),
        kw.pop("out_align", 0),
        kw.pop("out_flags", 0),
        kw.pop("out_dims", None),
        kw.pop("out_type", 1),
    )
    count = kw.pop("count", None)
    assert not kw, kw
    return tile(inp, out, repeats, count)


# ------------------------------------------------------------------------------------------------


def g_total_size() -> Iterator[tuple[str, dict[str, Any]]]:
    """TotalTensorSizeInBytes around each threshold: unrounded minimum, rounded minimum, +-1..4, 0, big."""
    shapes: list[tuple[str, list[int], list[int], list[int] | None]] = [
        ("p1x1x2x3", [1, 1, 2, 3], [1, 1, 3, 3], None),
        ("p1x1x1x3", [1, 1, 1, 3], [1, 1, 2, 1], None),
        ("p1x1x1x1", [1, 1, 1, 1], [1, 1, 1, 5], None),
        ("p1x1x3x7", [1, 1, 3, 7], [1, 2, 1, 1], None),
        ("s1x1x2x3pad", [1, 1, 2, 3], [1, 1, 2, 2], [6, 6, 5, 1]),
        ("s1x1x2x3bcast", [1, 1, 2, 3], [1, 2, 1, 1], [0, 0, 0, 1]),
    ]
    for dt in [*TILE_TYPES, 12, 13]:
        for name, sizes, reps, strides in shapes:
            out_sizes = [s * r for s, r in zip(sizes, reps, strict=False)]
            out_strides = None if strides is None else _pad_like(out_sizes)
            for side, t_sizes, t_strides in (("in", sizes, strides), ("out", out_sizes, out_strides)):
                need = unrounded_bytes(dt, t_sizes, t_strides)
                rounded = calc(dt, t_sizes, t_strides)
                values = {
                    0,
                    1,
                    need - 1,
                    need,
                    need + 1,
                    rounded - 1,
                    rounded,
                    rounded + 1,
                    rounded + 2,
                    rounded + 3,
                    rounded + 4,
                    2 * rounded + 1,
                    rounded + 4096,
                    2**32 - 1,
                    2**32,
                    2**40 + 3,
                }
                for v in sorted(x for x in values if x >= 0):
                    if side == "in":
                        d = simple(dt, sizes, reps, in_strides=strides, in_tts=v)
                    else:
                        d = simple(dt, sizes, reps, out_strides=out_strides, out_tts=v)
                    yield f"tts/{NAMES[dt]}/{name}/{side}={v}", d


def _pad_like(sizes: list[int]) -> list[int]:
    """Output strides of the same kind as an input's: padded rows (innermost stride 1, row pitch + 2)."""
    out, acc = [0] * len(sizes), 1
    for i in range(len(sizes) - 1, -1, -1):
        out[i] = acc
        acc *= sizes[i] + (2 if i == len(sizes) - 1 else 0)
    return out


def g_alignment() -> Iterator[tuple[str, dict[str, Any]]]:
    """GuaranteedBaseOffsetAlignment 0..64, big powers of two and neighbours, on input and output."""
    values = list(range(65)) + [
        96,
        100,
        127,
        128,
        129,
        192,
        255,
        256,
        512,
        1024,
        4096,
        65536,
        2**20,
        2**24,
        2**30,
        2**31 - 1,
        2**31,
        2**31 + 1,
        3 * 2**30,
        2**32 - 1,
    ]
    for dt in (1, 2, 5, 9, 11):
        for v in values:
            yield f"align/{NAMES[dt]}/in={v}", simple(dt, [1, 1, 2, 3], [1, 1, 2, 2], in_align=v)
            yield f"align/{NAMES[dt]}/out={v}", simple(dt, [1, 1, 2, 3], [1, 1, 2, 2], out_align=v)
    for v in (1, 2, 4, 8, 16, 32):
        yield f"align/both/FLOAT32/{v}", simple(1, [2, 3], [2, 1], in_align=v, out_align=v)


def g_rank_type() -> Iterator[tuple[str, dict[str, Any]]]:
    """Every rank 0..9 x every data type 0..13 (and an unknown 14), with a small tile; type mismatches."""
    for rank in range(10):
        sizes = [2 if i % 3 == 0 else 1 + (i % 2) for i in range(rank)]
        reps = [1 + (i % 2) for i in range(rank)]
        for dt in range(15):
            yield f"rank/{rank}/dt={dt}", simple(dt, sizes, reps)
            if rank in (1, 4, 8):
                yield (
                    f"rank/{rank}/dt={dt}/strided",
                    simple(dt, sizes, reps, in_strides=[2 * s for s in packed(sizes)]),
                )
        if rank in (1, 4, 5, 8):
            for dt, odt in ((1, 2), (2, 1), (3, 6), (5, 8), (10, 11), (1, 9), (9, 10)):
                yield f"rank/{rank}/mismatch/{dt}->{odt}", simple(dt, sizes, reps, out_dt=odt)
    for rank in (1, 4, 8):
        sizes, reps = [3] * rank, [2] + [1] * (rank - 1)
        out = [*[s * r for s, r in zip(sizes, reps, strict=False)], 1]
        yield f"rank/{rank}/out-rank+1", simple(1, sizes, reps, out_sizes=out)
    for rank in (2, 4, 8):
        sizes = [3] * rank
        reps = [1] * rank
        d = simple(1, sizes, reps)
        d["OutputTensor"] = tensor(1, sizes[:-1])
        yield f"rank/{rank}/out-rank-1", d


def g_output_strides() -> Iterator[tuple[str, dict[str, Any]]]:
    """Output strides: zero, overlapping rows, broadcast rows, padded, permuted, reversed-order, huge."""
    cases: list[tuple[str, list[int], list[int], list[int]]] = [
        ("zero-inner", [1, 1, 2, 3], [1, 1, 3, 3], [54, 54, 9, 0]),
        ("zero-row", [1, 1, 2, 3], [1, 1, 3, 3], [54, 54, 0, 1]),
        ("zero-all", [1, 1, 2, 3], [1, 1, 3, 3], [0, 0, 0, 0]),
        ("overlap-rows-1", [1, 1, 2, 3], [1, 1, 3, 3], [54, 54, 1, 1]),
        ("overlap-rows-8", [1, 1, 2, 3], [1, 1, 3, 3], [54, 54, 8, 1]),
        ("exact", [1, 1, 2, 3], [1, 1, 3, 3], [54, 54, 9, 1]),
        ("pad-rows-10", [1, 1, 2, 3], [1, 1, 3, 3], [60, 60, 10, 1]),
        ("pad-rows-16", [1, 1, 2, 3], [1, 1, 3, 3], [96, 96, 16, 1]),
        ("col-major", [1, 1, 2, 3], [1, 1, 3, 3], [54, 54, 1, 6]),
        ("interleave-2", [1, 1, 2, 3], [1, 1, 3, 3], [108, 108, 18, 2]),
        ("overlap-stride-1-both", [1, 1, 2, 2], [1, 1, 1, 1], [4, 4, 1, 1]),
        ("size1-axis-zero-stride", [1, 1, 2, 3], [1, 1, 3, 3], [0, 0, 9, 1]),
        ("size1-axis-odd-stride", [1, 1, 2, 3], [1, 1, 3, 3], [7, 1000, 9, 1]),
        ("dup-lastelem", [1, 1, 2, 2], [1, 1, 1, 1], [4, 4, 2, 2]),
        ("perm-3d", [2, 3, 4], [1, 1, 1], [1, 2, 6]),
        ("overlap-3d", [2, 3, 4], [1, 1, 1], [1, 2, 5]),
        ("rank1-stride2", [5], [2], [2]),
        ("rank1-stride0", [5], [1], [0]),
        ("rank8-packed", [1] * 6 + [2, 3], [1] * 6 + [2, 1], packed([1] * 6 + [4, 3])),
        ("rank8-zero", [1] * 6 + [2, 3], [1] * 6 + [2, 1], [0] * 6 + [0, 1]),
        ("huge-stride", [1, 1, 2, 3], [1, 1, 1, 1], [0, 0, 2**20, 1]),
    ]
    for dt in (1, 2, 5, 9, 11):
        for name, sizes, reps, ostr in cases:
            yield f"ostrides/{NAMES[dt]}/{name}", simple(dt, sizes, reps, out_strides=ostr)


def g_input_strides() -> Iterator[tuple[str, dict[str, Any]]]:
    """Input strides: zero (broadcast), overlapping, padded, permuted, with exact and short byte sizes."""
    cases: list[tuple[str, list[int], list[int], list[int]]] = [
        ("zero-inner", [1, 1, 2, 3], [1, 1, 3, 3], [6, 6, 3, 0]),
        ("zero-all", [1, 1, 2, 3], [1, 1, 3, 3], [0, 0, 0, 0]),
        ("overlap-rows", [1, 1, 2, 3], [1, 1, 3, 3], [6, 6, 1, 1]),
        ("pad-rows", [1, 1, 2, 3], [1, 1, 3, 3], [10, 10, 5, 1]),
        ("col-major", [1, 1, 2, 3], [1, 1, 3, 3], [6, 6, 1, 2]),
        ("perm-3d", [2, 3, 4], [2, 1, 1], [1, 2, 6]),
        ("rank8", [1] * 6 + [2, 3], [2] * 8, [0] * 6 + [1, 2]),
    ]
    for dt in (1, 2, 5, 9, 11):
        for name, sizes, reps, istr in cases:
            yield f"istrides/{NAMES[dt]}/{name}", simple(dt, sizes, reps, in_strides=istr)
            need = calc(dt, sizes, istr)
            yield (
                f"istrides/{NAMES[dt]}/{name}/short",
                simple(dt, sizes, reps, in_strides=istr, in_tts=max(need - 4, 0)),
            )
            yield (
                f"istrides/{NAMES[dt]}/{name}/packedsize",
                simple(dt, sizes, reps, in_strides=istr, in_tts=calc(dt, sizes, None)),
            )


def g_elements() -> Iterator[tuple[str, dict[str, Any]]]:
    """Element counts near 2^32 (on the input and on the output), for every element size."""
    for dt in (1, 2, 5, 9, 11, 12):
        for name, n in (
            ("2^32-5", 2**32 - 5),
            ("2^32-4", 2**32 - 4),
            ("2^32-3", 2**32 - 3),
            ("2^32-2", 2**32 - 2),
            ("2^32-1", 2**32 - 1),
            ("2^31", 2**31),
            ("2^30", 2**30),
        ):
            yield f"elements/{NAMES[dt]}/out-flat={name}", simple(dt, [1], [n])
            # 2^32 and above cannot be one dimension: two dimensions multiply
        for name, sizes in (
            ("65536x65536", [65536, 65536]),
            ("65535x65537", [65535, 65537]),
            ("65537x65537", [65537, 65537]),
            ("2x2^31", [2, 2**31]),
            ("4x2^30", [4, 2**30]),
            ("3x1431655765", [3, 1431655765]),
        ):
            reps = [1, 1]
            yield f"elements/{NAMES[dt]}/both={name}", simple(dt, sizes, reps)
            yield f"elements/{NAMES[dt]}/out={name}", simple(dt, [sizes[0], 1], [1, sizes[1]])
        # padded strides push the addressed size past 2^32 elements with few elements
        yield (
            f"elements/{NAMES[dt]}/strided-past-2^32",
            simple(dt, [1, 2, 3], [1, 1, 1], in_strides=[0, 2**31, 1]),
        )
        # byte size bigger than needed, past the element limit
        yield (
            f"elements/{NAMES[dt]}/tts-past-limit",
            simple(dt, [1, 2, 3], [1, 1, 1], in_tts=(2**32) * BITS[dt] // 8 + 4),
        )
        yield (
            f"elements/{NAMES[dt]}/tts-at-limit",
            simple(dt, [1, 2, 3], [1, 1, 1], in_tts=((2**32 - 1) * BITS[dt] // 8) & ~3),
        )


def g_repeats() -> Iterator[tuple[str, dict[str, Any]]]:
    """Repeats near 2^32, zero repeats, RepeatsCount / length mismatches, output-size mismatches."""
    for r in (2**32 - 1, 2**32 - 2, 2**31, 2**31 - 1, 2**16, 2**16 + 1):
        yield f"repeats/FLOAT32/in1/r={r}", simple(1, [1, 1, 1, 1], [1, 1, 1, r])
        yield f"repeats/UINT8/in1/r={r}", simple(5, [1, 1, 1, 1], [1, 1, r, 1])
        yield f"repeats/FLOAT64/in1/r={r}", simple(9, [1, 1, 1, 1], [r, 1, 1, 1])
        # the product does not fit a UINT: the output size written as the 32-bit wrapped value
        for n in (2, 3):
            wrapped = (n * r) & U32
            if n * r > U32 and wrapped:
                yield (
                    f"repeats/FLOAT32/in{n}/r={r}/out-wrapped",
                    simple(1, [1, 1, 1, n], [1, 1, 1, r], out_sizes=[1, 1, 1, wrapped]),
                )
    for rank in (1, 2, 4, 8):
        sizes, reps = [2] * rank, [3] * rank
        for i in range(rank):
            z = list(reps)
            z[i] = 0
            yield (
                f"repeats/zero/rank{rank}/axis{i}",
                simple(1, sizes, z, out_sizes=[2 * x if x else 2 for x in z]),
            )
        for count in (rank - 1, rank + 1):
            if count < 0:
                continue
            d = simple(1, sizes, reps)
            d["Repeats"] = reps[:count] + [1] * max(0, count - rank)
            yield f"repeats/count/rank{rank}/count={count}", d
        # RepeatsCount different from the length of Repeats (C reads RepeatsCount values)
        d = simple(1, sizes, reps, count=rank + 1)
        yield f"repeats/len/rank{rank}/count>len", d
        d = simple(1, sizes, reps + [1], count=rank)
        yield f"repeats/len/rank{rank}/count<len", d
        for i in range(rank):
            for delta in (-1, 1):
                out = [s * r for s, r in zip(sizes, reps, strict=False)]
                out[i] += delta
                yield f"repeats/outsize/rank{rank}/axis{i}/{delta:+d}", simple(1, sizes, reps, out_sizes=out)


def g_flags() -> Iterator[tuple[str, dict[str, Any]]]:
    """Flags: OWNED_BY_DML on input and output, unknown bits; tensor Type other than BUFFER."""
    for dt in (1, 2, 5, 9, 11):
        for fi, fo in ((1, 0), (0, 1), (1, 1), (2, 0), (0, 2), (3, 0), (0, 3), (0x80000000, 0)):
            yield (
                f"flags/{NAMES[dt]}/in={fi}/out={fo}",
                simple(dt, [1, 1, 2, 3], [1, 1, 2, 2], in_flags=fi, out_flags=fo),
            )
    for ti, to in ((0, 1), (1, 0), (2, 1), (1, 2)):
        yield f"flags/tensor-type/in={ti}/out={to}", simple(1, [2, 3], [2, 1], in_type=ti, out_type=to)
    for dims in (3, 5):
        yield f"flags/dimcount/in={dims}", simple(1, [1, 1, 2, 3], [1, 1, 2, 2], in_dims=dims)
        yield f"flags/dimcount/out={dims}", simple(1, [1, 1, 2, 3], [1, 1, 2, 2], out_dims=dims)


def g_wrap() -> Iterator[tuple[str, dict[str, Any]]]:
    """Strided sizes that wrap in 32-bit arithmetic, with the wrapped and the true byte size."""
    for dt in (1, 2, 5, 9):
        es = BITS[dt] // 8
        for name, sizes, strides in (
            ("3x3/2^31", [1, 1, 3, 3], [0, 0, 2**31, 1]),
            ("2x3/2^31", [1, 1, 2, 3], [0, 0, 2**31, 1]),
            ("3x3/2^32-1", [1, 1, 3, 3], [0, 0, 2**32 - 1, 1]),
            ("2x2/2^31+1", [1, 1, 2, 2], [0, 0, 2**31 + 1, 1]),
            ("5x1/2^30", [1, 1, 5, 1], [0, 0, 2**30, 1]),
            ("3x1/2^31", [1, 1, 3, 1], [0, 0, 2**31, 1]),
            ("17x1/2^28", [1, 1, 17, 1], [0, 0, 2**28, 1]),
        ):
            true_bytes = calc(dt, sizes, strides)
            last = sum((s - 1) * t for s, t in zip(sizes, strides, strict=False))
            for label, tts in (
                ("wrapped32", (((last & U32) + 1) * es + 3) & ~3 & U32),
                ("wrapped-bytes32", true_bytes & U32),
                ("true", true_bytes),
            ):
                if tts == 0:
                    continue
                yield (
                    f"wrap/{NAMES[dt]}/{name}/in/{label}",
                    simple(dt, sizes, [1, 1, 1, 1], in_strides=strides, in_tts=tts),
                )
                out_reps = [1, 1, 1, 1]
                yield (
                    f"wrap/{NAMES[dt]}/{name}/out/{label}",
                    simple(dt, sizes, out_reps, out_strides=strides, out_tts=tts),
                )


def g_random(n: int = 1000, seed: int = 11) -> Iterator[tuple[str, dict[str, Any]]]:
    """Random descriptors, mostly near-valid: random ranks, types, strides, byte sizes and perturbations."""
    rng = random.Random(seed)
    for k in range(n):
        rank = rng.choice([1, 2, 3, 4, 4, 4, 5, 6, 8])
        dt = rng.choice(TILE_TYPES)
        sizes = [rng.choice([1, 1, 2, 3, 4, 5]) for _ in range(rank)]
        reps = [rng.choice([1, 1, 2, 3]) for _ in range(rank)]
        kw: dict[str, Any] = {}
        style = rng.random()
        if style < 0.3:
            base = packed(sizes)
            kw["in_strides"] = [s * rng.choice([1, 1, 2]) + rng.choice([0, 0, 1]) for s in base]
        elif style < 0.4:
            kw["in_strides"] = [rng.choice([0, 1, 2, 3, 7]) for _ in sizes]
        out_sizes = [s * r for s, r in zip(sizes, reps, strict=False)]
        ostyle = rng.random()
        if ostyle < 0.25:
            kw["out_strides"] = [s * rng.choice([1, 2]) for s in packed([*out_sizes[:-1], out_sizes[-1] + 1])]
        elif ostyle < 0.35:
            kw["out_strides"] = [rng.choice([0, 1, 2, 3, 9]) for _ in sizes]
        perturb = rng.random()
        if perturb < 0.15:
            need = calc(dt, sizes, kw.get("in_strides"))
            kw["in_tts"] = max(0, need + rng.choice([-4, -3, -1, 1, 2, 3, 4, 64]))
        elif perturb < 0.3:
            need = calc(dt, out_sizes, kw.get("out_strides"))
            kw["out_tts"] = max(0, need + rng.choice([-4, -3, -1, 1, 2, 3, 4, 64]))
        elif perturb < 0.4:
            kw[rng.choice(["in_align", "out_align"])] = rng.choice([0, 1, 2, 4, 8, 16, 32, 64, 256, 3, 48])
        yield f"random/{k:04d}", simple(dt, sizes, reps, **kw)


def g_output_wrap() -> Iterator[tuple[str, dict[str, Any]]]:
    """Output sizes across 2^32 in every width: the product wrapped (accepted by DirectML's 32-bit
    check), the wrapped value off by one, a product of exactly 2^32 (wraps to 0), and the same at
    other ranks and axes."""
    for dt in (5, 2, 1, 11):
        for n, r in ((3, 2**31 + 1), (3, 1431655767), (2, 2**31 + 3), (5, 2**30 + 7), (7, 613566757)):
            wrapped = (n * r) & U32
            for label, out in (("wrapped", wrapped), ("wrapped+1", wrapped + 1), ("wrapped-1", wrapped - 1)):
                if 0 < out <= U32:
                    yield (
                        f"outwrap/{NAMES[dt]}/{n}x{r}/{label}",
                        simple(dt, [1, 1, 1, n], [1, 1, 1, r], out_sizes=[1, 1, 1, out]),
                    )
        yield (
            f"outwrap/{NAMES[dt]}/4x2^30/zero",
            simple(dt, [1, 1, 1, 4], [1, 1, 1, 2**30], out_sizes=[1, 1, 1, 0]),
        )
        for rank, axis in ((1, 0), (2, 0), (5, 2), (8, 7)):
            sizes, reps = [1] * rank, [1] * rank
            sizes[axis], reps[axis] = 3, 2**31 + 1
            out = [s * q for s, q in zip(sizes, reps, strict=True)]
            out[axis] = out[axis] & U32
            yield f"outwrap/{NAMES[dt]}/rank{rank}/axis{axis}", simple(dt, sizes, reps, out_sizes=out)
    # two wrapped axes at once
    yield (
        "outwrap/FLOAT32/two-axes",
        simple(1, [1, 1, 3, 3], [1, 1, 1431655767, 1431655767], out_sizes=[1, 1, 5, 5]),
    )


def g_wide_types() -> Iterator[tuple[str, dict[str, Any]]]:
    """64-bit types at every rank 0..9: packed, broadcast (zero strides), padded rows."""
    for dt in (9, 10, 11):
        for rank in range(10):
            sizes = [2 if i % 2 == 0 else 3 for i in range(rank)]
            reps = [1 + (i % 3 == 0) for i in range(rank)]
            yield f"wide/{NAMES[dt]}/rank{rank}/packed", simple(dt, sizes, reps)
            if rank:
                zero = packed(sizes)
                zero[0] = 0
                yield f"wide/{NAMES[dt]}/rank{rank}/broadcast", simple(dt, sizes, reps, in_strides=zero)
                yield (
                    f"wide/{NAMES[dt]}/rank{rank}/padded",
                    simple(dt, sizes, reps, in_strides=[2 * s for s in packed(sizes)]),
                )


def g_flag_bits() -> Iterator[tuple[str, dict[str, Any]]]:
    """Every single unknown flag bit (and all of them) on the input and on the output."""
    bits = [1 << b for b in range(1, 32)] + [0xFFFFFFFF, 0xFFFFFFFE]
    for dt in (1, 5, 11):
        for bit in bits:
            yield f"flagbits/{NAMES[dt]}/in={bit:#x}", simple(dt, [1, 2, 3], [2, 1, 2], in_flags=bit)
            yield f"flagbits/{NAMES[dt]}/out={bit:#x}", simple(dt, [1, 2, 3], [2, 1, 2], out_flags=bit)


GROUPS = [
    g_total_size,
    g_alignment,
    g_rank_type,
    g_output_strides,
    g_input_strides,
    g_elements,
    g_repeats,
    g_flags,
    g_wrap,
    g_random,
    g_output_wrap,
    g_wide_types,
    g_flag_bits,
]


def generate() -> list[dict[str, Any]]:
    """All cases, in a fixed order: [{"id": ..., "desc": {...}}, ...] (ids unique)."""
    seen: set[str] = set()
    out = []
    for group in GROUPS:
        for case_id, desc in group():
            if case_id in seen:
                continue
            seen.add(case_id)
            out.append({"id": case_id, "desc": desc})
    return out


def write_golden(versions: list[str] | None) -> None:
    """Run every case through each DirectML version and write its golden file."""
    oracle = load_oracle()
    cases = generate()
    rows = oracle.list_versions()
    if not rows:
        raise SystemExit(oracle.setup_problem() or "no DirectML versions installed")
    wanted = versions or sorted({r["directml_version"] for r in rows}, key=oracle.version_key)
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for v in wanted:
        row = oracle.resolve_version(v)
        t0 = time.monotonic()
        answers = oracle.run_cases(cases, v)
        path = GOLDEN / f"directml-{row['directml_version']}.jsonl"
        counts: Counter[str] = Counter()
        with path.open("w") as f:
            for case, a in zip(cases, answers, strict=False):
                line: dict[str, Any] = {"id": case["id"], "desc": case["desc"]}
                if "hresult_hex" in a:
                    line["hresult"] = a["hresult_hex"]
                    line["accepted"] = a["accepted"]
                    counts["accepted" if a["accepted"] else "rejected"] += 1
                else:
                    line["error"] = a.get("error") or a.get("crash")
                    counts["error"] += 1
                line["directml"] = row["file_version"]
                line["max_feature_level"] = row["max_feature_level"]
                line["wheel"] = row["wheel"]
                f.write(json.dumps(line, separators=(",", ":")) + "\n")
        print(
            f"DirectML {row['file_version']} ({row['wheel']}, level {row['max_feature_level']}): "
            f"{len(cases)} cases {dict(counts)} in {time.monotonic() - t0:.1f} s -> {path.name}"
        )


def main() -> int:
    """Command line: --count, --golden [VERSION ...], --list."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", action="store_true", help="print how many cases each group has")
    ap.add_argument("--list", action="store_true", help="print the cases as JSON lines")
    ap.add_argument(
        "--golden", nargs="*", metavar="VERSION", help="write golden files (default: every version)"
    )
    args = ap.parse_args()
    if args.count:
        cases = generate()
        for group, n in Counter(c["id"].split("/")[0] for c in cases).items():
            print(f"{group:10} {n}")
        print(f"{'total':10} {len(cases)}")
    if args.list:
        for c in generate():
            print(json.dumps(c, separators=(",", ":")))
    if args.golden is not None:
        write_golden(args.golden or None)
    return 0


def naive_tile(
    dt: int,
    in_sizes: list[int],
    in_strides: list[int],
    reps: list[int],
    out_strides: list[int],
    in_bytes: bytes,
    out_init: bytes,
) -> bytearray:
    """Tile on byte buffers by the package's per-element definition (``dmltile.execute.reference``):
    ``out_init`` with every output element of the strided output written."""
    from dmltile.execute.reference import tile_bytes  # the golden files need no dmltile otherwise

    out = bytearray(out_init)
    out_sizes = [s * r for s, r in zip(in_sizes, reps, strict=True)]
    tile_bytes(in_bytes, out, BITS[dt] // 8, in_sizes, in_strides, out_sizes, out_strides)
    return out


if __name__ == "__main__":
    sys.exit(main())
