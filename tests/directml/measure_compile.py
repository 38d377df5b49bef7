"""Measure which data types each DirectML version compiles and runs, and what a wrapped output holds.

    python tests/directml/measure_compile.py [VERSION ...]     (default: every installed version)

Writes tests/directml/golden/executions.jsonl, one line per (version, case): CreateOperator's verdict,
whether CompileOperator + dispatch + read-back worked (``exec_stage`` and its HRESULT otherwise) and
the output bytes. The cases: every Tile data type at rank 4 (and the 64-bit ones at the lowest and
highest rank the version's level takes), and Tiles whose output size is the product wrapped at 2^32 (small, so they
run: 3 x 1431655767 = 2^32 + 5 wraps to 5). The output buffer starts as 0xCD, so bytes DirectML
leaves alone show. test_compile_and_wrap.py holds dmltile to these answers.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate_cases import BITS, NAMES, TILE_TYPES, U32, load_oracle, simple

OUT = Path(__file__).resolve().parent / "golden" / "executions.jsonl"
MARK = 0xCD
WIDE = (9, 10, 11)


def _input(dt: int, count: int) -> bytes:
    """Distinct bytes per element (so a misplaced element shows), rounded up to 4 bytes."""
    data = bytes((i * 7 + 1) & 0xFF for i in range(count * BITS[dt] // 8))
    return data + bytes(-len(data) % 4)


def _case(case_id: str, desc: dict[str, Any]) -> dict[str, Any]:
    dt = desc["InputTensor"]["DataType"]
    count = int(np.prod(desc["InputTensor"]["Sizes"]))
    out_bytes = desc["OutputTensor"]["TotalTensorSizeInBytes"]
    return {
        "id": case_id,
        "desc": desc,
        "execute": True,
        "input": _input(dt, count),
        "output_init": bytes([MARK]) * out_bytes,
    }


def cases(max_rank: int) -> list[dict[str, Any]]:
    """Every Tile type at rank 4; the 64-bit types at ranks 1 and max_rank; small wrapped outputs."""
    out = []
    for dt in TILE_TYPES:
        out.append(_case(f"type/{NAMES[dt]}/rank4", simple(dt, [1, 2, 1, 3], [2, 1, 3, 2])))
    for dt in WIDE:
        for rank in sorted({1, max_rank} - {4}):
            sizes = [2 if i % 2 == 0 else 3 for i in range(rank)]
            reps = [1 + (i % 3 == 0) for i in range(rank)]
            out.append(_case(f"type/{NAMES[dt]}/rank{rank}", simple(dt, sizes, reps)))
    for dt in (5, 2, 1):
        for ins, reps in (
            ([1, 1, 1, 3], [1, 1, 1, 1431655767]),
            ([1, 1, 2, 3], [1, 1, 1, 1431655767]),
            ([1, 1, 1, 2], [1, 1, 1, 2147483651]),
            ([1, 1, 1, 3], [1, 1, 1, 2863311532]),
        ):
            sizes = [(s * r) & U32 for s, r in zip(ins, reps, strict=True)]
            label = "x".join(map(str, ins)) + "->" + "x".join(map(str, sizes))
            out.append(_case(f"outwrap/{NAMES[dt]}/{label}", simple(dt, ins, reps, out_sizes=sizes)))
    return out


def measure(versions: list[str] | None) -> None:
    oracle = load_oracle()
    rows = oracle.list_versions()
    wanted = versions or [r["directml_version"] for r in rows]
    kept = [json.loads(line) for line in OUT.read_text().splitlines()] if OUT.is_file() else []
    lines = [
        k
        for k in kept
        if k["directml"] not in {oracle.resolve_version(v)["directml_version"] for v in wanted}
    ]
    for v in wanted:
        row = oracle.resolve_version(v)
        level = tuple(int(p) for p in row["max_feature_level"].split("."))
        batch = cases(8 if level >= (3, 1) else 4)
        t0 = time.monotonic()
        for case, a in zip(batch, oracle.run_cases(batch, v), strict=True):
            line: dict[str, Any] = {
                "directml": row["directml_version"],
                "id": case["id"],
                "desc": case["desc"],
            }
            line["accepted"] = bool(a.get("accepted"))
            line["executed"] = bool(a.get("executed"))
            if a.get("accepted") and not a.get("executed"):
                line["exec_stage"] = a.get("exec_stage")
                line["exec_hresult"] = a.get("exec_hresult_hex")
            if a.get("executed"):
                line["input"] = case["input"].hex()
                line["output"] = bytes(a["output"]).hex()
            lines.append(line)
        failed = [x["id"] for x in lines[-len(batch) :] if x["accepted"] and not x["executed"]]
        print(
            f"DirectML {row['directml_version']}: {len(batch)} cases in {time.monotonic() - t0:.1f} s; "
            f"compile/run refused: {len(failed)} {sorted({f.split('/')[1] for f in failed})}"
        )
    key = {r["directml_version"]: i for i, r in enumerate(rows)}
    lines.sort(key=lambda x: key.get(x["directml"], len(key)))
    OUT.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))


if __name__ == "__main__":
    measure(sys.argv[1:] or None)
