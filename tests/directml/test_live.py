"""The live comparison: the real DirectML.dll (Wine + lavapipe here, natively on Windows).

Marked ``directml_live``; skipped unless asked for (``make directml-live``, ``pytest -m directml_live``
or ``DMLTILE_DIRECTML_LIVE=1``) and skipped with the reason when the set-up is absent.

* CreateOperator verdicts of a sample of golden cases, per installed version, equal the golden file
  (the runner and the recorded data still agree).
* Execution of random strided, padded and broadcast cases of every data type equals a naive
  per-element loop written here, bit for bit, and ``dmltile.execute`` where dmltile accepts the case.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dmltile
from dmltile.core.layout import DATA_TYPE_VALUES
from dmltile.validate.levels import read_table

from .generate_cases import calc, load_oracle, naive_tile, packed

pytestmark = pytest.mark.directml_live

ORACLE = load_oracle()
SETUP = ORACLE.find_setup()
if SETUP is None:
    pytest.skip(f"DirectML set-up absent: {ORACLE.setup_problem()}", allow_module_level=True)

GOLDEN = Path(__file__).resolve().parent / "golden"
ES = {1: 4, 2: 2, 3: 4, 4: 2, 5: 1, 6: 4, 7: 2, 8: 1, 9: 8, 10: 8, 11: 8}
NP = {
    1: np.float32,
    2: np.float16,
    3: np.uint32,
    4: np.uint16,
    5: np.uint8,
    6: np.int32,
    7: np.int16,
    8: np.int8,
    9: np.float64,
    10: np.uint64,
    11: np.int64,
}
MARK = 0xCD


def _compile_fails() -> dict[str, set[int]]:
    """Per DirectML version, the data types whose Tile CreateOperator accepts and CompileOperator rejects
    on this stack (the version table's compile_fails_here: the 64-bit types on 1.7.0 to 1.8.2)."""
    out = {}
    for row in read_table("directml_versions.toml")["version"]:
        version = row["directml"].removesuffix(".0") if row["directml"].count(".") == 3 else row["directml"]
        out[version] = {DATA_TYPE_VALUES[name] for name in row.get("compile_fails_here", [])}
    return out


COMPILE_FAILS = _compile_fails()


def _versions() -> list[dict[str, Any]]:
    """The recorded version table (read only: collecting these tests never starts Wine)."""
    assert SETUP is not None
    return SETUP.versions()


def _executing_versions() -> list[str]:
    """The newest and the oldest installed version, and the newest at each max level below 5.0 (the DLLs
    that compile through the runner's cabinet.dll): one Wine run each, so not every version."""
    rows = _versions()  # newest first
    if not rows:
        return []
    names = [rows[0]["directml_version"], rows[-1]["directml_version"]]
    by_level: dict[str, str] = {}
    for r in rows:
        if tuple(int(x) for x in r["max_feature_level"].split(".")) < (5, 0):
            by_level.setdefault(r["max_feature_level"], r["directml_version"])
    return list(dict.fromkeys([*names, *by_level.values()]))


def test_version_table() -> None:
    """Every installed DLL reports a FileVersion and a max feature level."""
    rows = _versions()
    assert rows
    for r in rows:
        assert r["file_version"] and r["file_version"] != "unknown", r
        assert r["max_feature_level"] and r["max_feature_level"] != "0.0", r


@pytest.mark.parametrize("version", [r["directml_version"] for r in _versions()])
def test_create_operator_matches_golden(version: str) -> None:
    """A sample (every 10th case) of the golden file, run again, gives the recorded HRESULTs."""
    path = GOLDEN / f"directml-{version}.jsonl"
    if not path.is_file():
        pytest.skip(f"no golden file for DirectML {version}")
    rows = [json.loads(line) for line in path.read_text().splitlines()][::10]
    answers = ORACLE.run_cases([{"id": g["id"], "desc": g["desc"]} for g in rows], version)
    differ = [
        g["id"] for g, a in zip(rows, answers, strict=False) if a.get("hresult_hex") != g.get("hresult")
    ]
    assert not differ, f"{len(differ)}/{len(rows)} differ from the golden file, e.g. {differ[:5]}"


# ------------------------------------------------------------------------------------------------
# execution


def gather(dt: int, sizes: list[int], strides: list[int], buf: bytes) -> np.ndarray:
    """The logical tensor (an ndarray of Sizes) stored in a strided byte buffer."""
    es = ES[dt]
    flat = bytearray()
    for idx in itertools.product(*(range(s) for s in sizes)):
        o = sum(i * t for i, t in zip(idx, strides, strict=False)) * es
        flat += buf[o : o + es]
    return np.frombuffer(bytes(flat), dtype=NP[dt]).reshape(sizes)


def permuted(sizes: list[int], rng: np.random.Generator) -> list[int]:
    """Packed strides (in elements) with the axes laid out in a random order."""
    strides, acc = [0] * len(sizes), 1
    for axis in rng.permutation(len(sizes)):
        strides[axis] = acc
        acc *= sizes[axis]
    return strides


def random_case(rng: np.random.Generator, dt: int, k: int, rank: int = 0) -> dict[str, Any]:
    """A random executable Tile: packed, padded, broadcast or permuted input; packed, padded or permuted output
    (rank 1 to 5 at random unless given)."""
    rank = rank or int(rng.integers(1, 6))
    in_sizes = [int(rng.integers(1, 4)) for _ in range(rank)]
    reps = [int(rng.integers(1, 4)) for _ in range(rank)]
    out_sizes = [s * r for s, r in zip(in_sizes, reps, strict=False)]
    style = k % 4
    if style == 0:
        in_strides = packed(in_sizes)
    elif style == 1:  # padded rows
        in_strides = packed([*in_sizes[:-1], in_sizes[-1] + int(rng.integers(1, 4))])
    elif style == 2:  # broadcast: zero strides on some axes
        in_strides = [0 if rng.random() < 0.4 else t for t in packed(in_sizes)]
    else:  # permuted
        in_strides = permuted(in_sizes, rng)
    ostyle = (k // 4) % 3
    if ostyle == 0:
        out_strides = packed(out_sizes)
    elif ostyle == 1:
        out_strides = packed([*out_sizes[:-1], out_sizes[-1] + int(rng.integers(1, 3))])
    else:
        out_strides = permuted(out_sizes, rng)
    in_tts = calc(dt, in_sizes, in_strides) + 4 * int(rng.integers(0, 3))
    out_tts = calc(dt, out_sizes, out_strides) + 4 * int(rng.integers(0, 3))
    in_bytes = rng.integers(0, 256, size=in_tts, dtype=np.uint8).tobytes()
    offset = 16 * int(rng.integers(0, 3))
    desc = {
        "InputTensor": {
            "DataType": dt,
            "Sizes": in_sizes,
            "Strides": in_strides,
            "TotalTensorSizeInBytes": in_tts,
        },
        "OutputTensor": {
            "DataType": dt,
            "Sizes": out_sizes,
            "Strides": out_strides,
            "TotalTensorSizeInBytes": out_tts,
        },
        "Repeats": reps,
    }
    return {
        "id": f"exec/{dt}/{k}/rank{rank}",
        "desc": desc,
        "execute": True,
        "input": in_bytes,
        "input_offset": offset,
        "output_offset": offset,
        "output_init": bytes([MARK]) * ((out_tts + 3) & ~3),
    }


def _cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(2024)
    cases = [random_case(rng, dt, k) for dt in ES for k in range(4)]
    # rank 4 for every type: the only rank that DirectML at levels 2.1 and 3.0 tiles
    rng4 = np.random.default_rng(4)
    cases += [random_case(rng4, dt, k, rank=4) for dt in ES for k in (1, 6)]
    # float16 NaN payloads, signed zeros, subnormals through a broadcast
    f16 = np.array(
        [0x7C01, 0x7D55, 0x7E00, 0x7FFF, 0xFC01, 0xFE00, 0x8000, 0x0001, 0x03FF, 0x7C00], np.uint16
    )
    cases.append(
        {
            "id": "exec/f16-special",
            "execute": True,
            "input": f16.tobytes(),
            "desc": {
                "InputTensor": {"DataType": 2, "Sizes": [1, 10]},
                "OutputTensor": {"DataType": 2, "Sizes": [2, 10]},
                "Repeats": [2, 1],
            },
        }
    )
    return cases


@pytest.fixture(scope="module", params=_executing_versions() or ["none"])
def executed(request: pytest.FixtureRequest) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The execution cases and DirectML's answers, one Wine run per version. Left out, each asserted: known
    compile failures, and cases that the version's CreateOperator rejects (a rank or type its level
    lacks), which dmltile must reject for that version too."""
    if request.param == "none":
        pytest.skip("no installed DirectML version executes here")
    cases = _cases()
    answers = ORACLE.run_cases(cases, request.param)
    fails = COMPILE_FAILS.get(request.param, set())
    kept: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
    for case, a in zip(cases, answers, strict=False):
        if not a.get("accepted"):
            assert not dmltile.validate(case["desc"], directml=request.param).valid, (case["id"], a)
            continue
        if ORACLE.to_c_view(case["desc"])["InputTensor"]["DataType"] in fails:
            assert (a.get("exec_stage"), a.get("exec_hresult_hex")) == ("CompileOperator", "0x80070057"), a
            continue
        kept[0].append(case)
        kept[1].append(a)
    assert len(kept[0]) >= 12, f"DirectML {request.param} executed only {len(kept[0])} cases"
    return kept


def test_execution_bit_exact(executed: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    """Every addressed output byte equals the naive loop's; nothing outside the binding changes."""
    cases, answers = executed
    bad = []
    for case, a in zip(cases, answers, strict=False):
        assert a.get("executed"), (case["id"], a)
        c = ORACLE.to_c_view(case["desc"])
        i, o = c["InputTensor"], c["OutputTensor"]
        in_strides = i["Strides"] or packed(i["Sizes"])
        out_strides = o["Strides"] or packed(o["Sizes"])
        init = case.get("output_init") or bytes([MARK]) * len(a["output"])
        want = naive_tile(
            i["DataType"], i["Sizes"], in_strides, c["Repeats"], out_strides, case["input"], init
        )
        got = a["output"]
        es = ES[i["DataType"]]
        for idx in itertools.product(*(range(s) for s in o["Sizes"])):
            off = sum(x * t for x, t in zip(idx, out_strides, strict=False)) * es
            if got[off : off + es] != want[off : off + es]:
                bad.append(f"{case['id']} at {idx}")
                break
        whole = a["output_buffer"]
        start = case.get("output_offset", 0)
        outside = whole[:start] + whole[start + len(got) :]
        assert set(outside) <= {MARK}, f"{case['id']}: bytes outside the output binding changed"
    assert not bad, bad[:5]


def test_padding_bytes_untouched(executed: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    """Measured: DirectML (on this stack) writes only the addressed output bytes; padding keeps the marker."""
    cases, answers = executed
    for case, a in zip(cases, answers, strict=False):
        c = ORACLE.to_c_view(case["desc"])
        o = c["OutputTensor"]
        out_strides = o["Strides"] or packed(o["Sizes"])
        es = ES[o["DataType"]]
        addressed: set[int] = set()
        for idx in itertools.product(*(range(s) for s in o["Sizes"])):
            off = sum(x * t for x, t in zip(idx, out_strides, strict=False)) * es
            addressed.update(range(off, off + es))
        init = case.get("output_init") or bytes([MARK]) * len(a["output"])
        changed = [k for k in range(len(a["output"])) if k not in addressed and a["output"][k] != init[k]]
        assert not changed, f"{case['id']}: padding bytes {changed[:8]} changed"


def test_dmltile_execute_agrees(executed: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    """dmltile.execute (public API) gives DirectML's output wherever dmltile accepts the descriptor."""
    cases, answers = executed
    compared = 0
    for case, a in zip(cases, answers, strict=False):
        c = ORACLE.to_c_view(case["desc"])
        i, o = c["InputTensor"], c["OutputTensor"]
        dt = i["DataType"]
        report = dmltile.validate(case["desc"])
        if not report.valid:
            continue
        x = gather(dt, i["Sizes"], i["Strides"] or packed(i["Sizes"]), case["input"])
        y = np.asarray(dmltile.execute(case["desc"], x))
        want = gather(dt, o["Sizes"], o["Strides"] or packed(o["Sizes"]), a["output"])
        assert y.tobytes() == want.tobytes(), case["id"]
        compared += 1
    assert compared > len(cases) // 2


@pytest.mark.parametrize("version", [r["directml_version"] for r in _versions()])
def test_every_version_executes(version: str) -> None:
    """The documentation's example (FLOAT32 [1,1,2,3] x [1,1,3,3]) executes bit-exactly on each installed
    version (DirectML 1.7.0 and older through the runner's cabinet.dll)."""
    x = np.arange(6, dtype=np.float32)
    desc = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 3]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 6, 9]},
        "Repeats": [1, 1, 3, 3],
    }
    (a,) = ORACLE.run_cases([{"id": "doc", "desc": desc, "execute": True, "input": x.tobytes()}], version)
    assert a.get("executed"), a
    got = np.frombuffer(a["output"], np.float32).reshape(6, 9)
    assert np.array_equal(got, np.tile(x.reshape(2, 3), (3, 3)))
