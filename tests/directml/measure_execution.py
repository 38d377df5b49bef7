"""Measure what the real DirectML does when it executes Tile (docs/directml-conformance.md quotes the output).

    python tests/directml/measure_execution.py [VERSION ...]     (default 1.15.4)

For each version: output padding bytes (inside TotalTensorSizeInBytes but not addressed by the
output strides; past the last element; past the binding), float16/float32/float64 NaN payloads,
signed zeros and subnormals, and non-zero binding offsets. The output buffer is filled with the
marker 0xCD first and read back whole.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate_cases import BITS, NAMES, calc, load_oracle, packed
from generate_cases import naive_tile as reference

MARK = 0xCD
ES = {dt: bits // 8 for dt, bits in BITS.items() if bits >= 8}


def addressed(dt: int, sizes: list[int], strides: list[int]) -> set[int]:
    """Byte offsets addressed by a tensor."""
    es = ES[dt]
    out: set[int] = set()
    for idx in itertools.product(*(range(s) for s in sizes)):
        o = sum(i * t for i, t in zip(idx, strides, strict=False)) * es
        out.update(range(o, o + es))
    return out


def padding_cases() -> list[dict[str, Any]]:
    """Padded output rows, extra TotalTensorSizeInBytes, bytes after the binding, for every type."""
    cases = []
    for dt in ES:
        in_sizes, reps = [1, 2, 3], [1, 2, 2]
        out_sizes = [1, 4, 6]
        ostr = [8 * 4, 8, 1]  # two padding elements per row
        tts = calc(dt, out_sizes, ostr) + 16
        cases.append(
            {
                "id": f"pad/{NAMES[dt]}/rows+2/tts+16",
                "dt": dt,
                "in_sizes": in_sizes,
                "in_strides": packed(in_sizes),
                "reps": reps,
                "out_strides": ostr,
                "out_tts": tts,
                "output_offset": 0,
                "after": 32,
            }
        )
        # odd element counts for narrow types: the rounding-to-4 tail of the last dword
        in_sizes2, reps2 = [1, 1, 3], [1, 1, 1]
        cases.append(
            {
                "id": f"pad/{NAMES[dt]}/3-elements-tail",
                "dt": dt,
                "in_sizes": in_sizes2,
                "in_strides": packed(in_sizes2),
                "reps": reps2,
                "out_strides": packed([1, 1, 3]),
                "out_tts": calc(dt, [1, 1, 3], None),
                "output_offset": 0,
                "after": 16,
            }
        )
        # column-major output with holes: strides [., 1, 8] for 4x6 leaves gaps between columns
        cases.append(
            {
                "id": f"pad/{NAMES[dt]}/col-major-holes",
                "dt": dt,
                "in_sizes": in_sizes,
                "in_strides": [6, 1, 2],
                "reps": reps,
                "out_strides": [64, 1, 8],
                "out_tts": calc(dt, out_sizes, [64, 1, 8]),
                "output_offset": 0,
                "after": 16,
            }
        )
    # bigger tensors (other shader paths): odd row lengths, 6+ bytes of row padding, a binding larger
    # than TotalTensorSizeInBytes
    for dt in (5, 2, 1, 9):
        in_sizes, reps = [1, 37, 61], [1, 3, 2]
        out_sizes = [1, 111, 122]
        ostr = [111 * 128, 128, 1]
        cases.append(
            {
                "id": f"pad/{NAMES[dt]}/big-rows128/binding+32",
                "dt": dt,
                "in_sizes": in_sizes,
                "in_strides": packed(in_sizes),
                "reps": reps,
                "out_strides": ostr,
                "out_tts": calc(dt, out_sizes, ostr) + 16,
                "output_offset": 0,
                "after": 32,
                "binding_extra": 32,
            }
        )
    return cases


def offset_cases() -> list[dict[str, Any]]:
    """Binding offsets: multiples of 16 in bigger buffers, and offsets that break the 16-byte rule."""
    cases = []
    for dt in (1, 2, 5, 9):
        pairs = [(16, 0), (0, 16), (32, 48), (256, 512)]
        if (
            dt == 1
        ):  # offsets that are not multiples of 16: each one removes the device (a fresh process each)
            pairs += [(4, 0), (0, 4), (8, 8), (2, 0), (0, 2)]
        for in_off, out_off in pairs:
            cases.append(
                {
                    "id": f"offset/{NAMES[dt]}/in={in_off}/out={out_off}",
                    "dt": dt,
                    "in_sizes": [1, 2, 3],
                    "in_strides": [6, 3, 1],
                    "reps": [1, 2, 2],
                    "out_strides": packed([1, 4, 6]),
                    "out_tts": calc(dt, [1, 4, 6], None),
                    "input_offset": in_off,
                    "output_offset": out_off,
                    "before": 16,
                    "after": 16,
                }
            )
    return cases


def special_values() -> dict[int, np.ndarray]:
    """Bit patterns: NaN payloads (signalling and quiet), signed zeros, subnormals, infinities."""
    f16 = np.array(
        [
            0x7C01,
            0x7D55,
            0x7DFF,
            0x7E00,
            0x7E01,
            0x7FFF,
            0xFC01,
            0xFD55,
            0xFE00,
            0xFFFF,
            0x8000,
            0x0000,
            0x0001,
            0x03FF,
            0x8001,
            0x7C00,
            0xFC00,
            0x3C00,
        ],
        dtype=np.uint16,
    )
    f32 = np.array(
        [
            0x7F800001,
            0x7FA00000,
            0x7FBFFFFF,
            0x7FC00000,
            0x7FC00001,
            0x7FFFFFFF,
            0xFF800001,
            0xFFC00000,
            0xFFFFFFFF,
            0x80000000,
            0x00000001,
            0x007FFFFF,
            0x80000001,
            0x7F800000,
            0xFF800000,
            0x3F800000,
            0x00800000,
            0x12345678,
        ],
        dtype=np.uint32,
    )
    f64 = np.array(
        [
            0x7FF0000000000001,
            0x7FF4000000000000,
            0x7FF8000000000000,
            0x7FF8000000000001,
            0xFFFFFFFFFFFFFFFF,
            0x8000000000000000,
            0x0000000000000001,
            0x000FFFFFFFFFFFFF,
            0x7FF0000000000000,
            0x3FF0000000000000,
            0x8000000000000001,
            0x0123456789ABCDEF,
        ],
        dtype=np.uint64,
    )
    return {2: f16, 1: f32, 9: f64}


def _layout_case(s: dict[str, Any], rng: np.random.Generator) -> tuple[dict[str, Any], bytearray]:
    """One padding or offset measurement as a runner case, and the bytes the reference expects."""
    dt = s["dt"]
    in_tts = calc(dt, s["in_sizes"], s["in_strides"])
    in_bytes = rng.integers(1, 255, size=in_tts, dtype=np.uint8).tobytes()
    out_off, after = s.get("output_offset", 0), s.get("after", 0)
    region = ((s["out_tts"] + 3) & ~3) + s.get("binding_extra", 0)
    buffer_size = out_off + region + after
    init = bytes([MARK]) * buffer_size
    out_sizes = [a * r for a, r in zip(s["in_sizes"], s["reps"], strict=False)]
    desc = {
        "InputTensor": {
            "DataType": dt,
            "Sizes": s["in_sizes"],
            "Strides": s["in_strides"],
            "TotalTensorSizeInBytes": in_tts,
        },
        "OutputTensor": {
            "DataType": dt,
            "Sizes": out_sizes,
            "Strides": s["out_strides"],
            "TotalTensorSizeInBytes": s["out_tts"],
        },
        "Repeats": s["reps"],
    }
    case = {
        "id": s["id"],
        "desc": desc,
        "execute": True,
        "input": in_bytes,
        "input_offset": s.get("input_offset", 0),
        "output_offset": out_off,
        "output_init": init[out_off : out_off + region],
        "output_buffer_size": buffer_size,
        "output_size": region,
        "output_fill": MARK,
    }
    ref = reference(
        dt,
        s["in_sizes"],
        s["in_strides"],
        s["reps"],
        s["out_strides"],
        in_bytes,
        init[out_off : out_off + region],
    )
    return case, ref


def _special_cases() -> list[dict[str, Any]]:
    """The special float values, tiled contiguously and through a strided (non-contiguous) path."""
    cases = []
    for dt, vals in special_values().items():
        n = len(vals)
        desc = {
            "InputTensor": {"DataType": dt, "Sizes": [1, n]},
            "OutputTensor": {"DataType": dt, "Sizes": [3, n]},
            "Repeats": [3, 1],
        }
        cases.append({"id": f"special/{NAMES[dt]}", "desc": desc, "execute": True, "input": vals.tobytes()})
        desc2 = {
            "InputTensor": {"DataType": dt, "Sizes": [n, 1], "Strides": [1, 0]},
            "OutputTensor": {"DataType": dt, "Sizes": [n, 2], "Strides": [1, n]},
            "Repeats": [1, 2],
        }
        cases.append(
            {"id": f"special/{NAMES[dt]}/transposed", "desc": desc2, "execute": True, "input": vals.tobytes()}
        )
    return cases


def _layout_result(s: dict[str, Any], ref: bytearray, a: dict[str, Any]) -> dict[str, Any]:
    """What one padding or offset run did: its elements, the padding inside the tensor, the bytes past it."""
    if not a.get("executed"):
        return {
            "create": a.get("hresult_hex"),
            "exec": a.get("exec_stage"),
            "exec_hr": a.get("exec_hresult_hex"),
            "device_removed": a.get("device_removed"),
            "error": a.get("error") or a.get("crash"),
        }
    whole = a["output_buffer"]
    off = s.get("output_offset", 0)
    got = whole[off : off + len(ref)]
    dt = s["dt"]
    out_sizes = [x * r for x, r in zip(s["in_sizes"], s["reps"], strict=False)]
    addr = addressed(dt, out_sizes, s["out_strides"])
    tts = s["out_tts"]
    inside = [i for i in range(tts) if i not in addr]
    tail = list(range(tts, len(ref)))
    changed_inside = [i for i in inside if got[i] != MARK]
    changed_tail = [i for i in tail if got[i] != MARK]
    outside = [i for i in range(len(whole)) if not off <= i < off + len(ref) and whole[i] != MARK]
    return {
        "elements_bit_exact": all(got[i] == ref[i] for i in addr),
        "padding_bytes_inside_total_size": len(inside),
        "padding_changed": len(changed_inside),
        "padding_new_values": sorted({got[i] for i in changed_inside})[:8],
        "bytes_past_total_size_changed": f"{len(changed_tail)}/{len(tail)}",
        "bytes_outside_binding_changed": len(outside),
    }


def _special_result(vals: np.ndarray, suffix: str, a: dict[str, Any]) -> dict[str, Any]:
    """Whether the special values came back bit for bit, and which changed."""
    if not a.get("executed"):
        return {"exec": a.get("exec_stage"), "error": a.get("error")}
    got = np.frombuffer(a["output"][: 3 * vals.nbytes if not suffix else 2 * vals.nbytes], vals.dtype)
    want = np.tile(vals, 3) if not suffix else np.concatenate([vals, vals])
    diffs = [f"{w:#x}->{g:#x}" for w, g in zip(want, got, strict=False) if w != g]
    return {"bit_exact": not diffs, "changed": sorted(set(diffs))}


def run(version: str) -> dict[str, Any]:
    """All measurements on one DirectML version."""
    oracle = load_oracle()
    rng = np.random.default_rng(5)
    cases: list[dict[str, Any]] = []
    expected: list[tuple[dict[str, Any], bytearray, int]] = []
    for s in padding_cases() + offset_cases():
        case, ref = _layout_case(s, rng)
        cases.append(case)
        expected.append((s, ref, ES[s["dt"]]))
    cases += _special_cases()
    answers = {a["id"]: a for a in oracle.run_cases(cases, version)}
    report: dict[str, Any] = {"version": version, "padding": {}, "offsets": {}, "special": {}}
    for s, ref, _es in expected:
        kind = "offsets" if s["id"].startswith("offset/") else "padding"
        report[kind][s["id"]] = _layout_result(s, ref, answers[s["id"]])
    for dt, vals in special_values().items():
        for suffix in ("", "/transposed"):
            a = answers[f"special/{NAMES[dt]}{suffix}"]
            report["special"][f"{NAMES[dt]}{suffix}"] = _special_result(vals, suffix, a)
    return report


def main() -> int:
    """Run the measurements on the versions named (default 1.15.4) and print JSON."""
    versions = sys.argv[1:] or ["1.15.4"]
    for v in versions:
        print(json.dumps(run(v), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
