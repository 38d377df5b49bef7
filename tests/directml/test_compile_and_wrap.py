"""dmltile against what the real DirectML.dll did when it compiled and ran Tiles (golden/executions.jsonl,
written by measure_compile.py on every installed version; no Wine needed here), and, live, against
the DLLs themselves: which data types a version creates but does not compile (DML306), and what an
output whose size wrapped at 2^32 holds (DML208)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dmltile
from dmltile.core.tables import read_table
from dmltile.errors import UnsupportedError

from .generate_cases import BITS, NAMES

RECORDED = Path(__file__).resolve().parent / "golden" / "executions.jsonl"
MARK = 0xCD


@cache
def recorded() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(line) for line in RECORDED.read_text().splitlines() if line.strip())


def table_refusals() -> dict[str, set[str]]:
    """The version table's compile_fails_here, by short version."""
    out = {}
    for row in read_table("directml_versions.toml")["version"]:
        version = row["directml"].removesuffix(".0") if row["directml"].count(".") == 3 else row["directml"]
        out[version] = set(row.get("compile_fails_here", []))
    return out


def test_every_version_of_the_table_was_measured():
    assert {r["directml"] for r in recorded()} == set(table_refusals())


def test_the_table_says_which_types_each_version_creates_but_does_not_compile():
    """Per version, the types whose Tile CreateOperator accepted and CompileOperator refused (E_INVALIDARG)
    are exactly the table's compile_fails_here: the 64-bit types on 1.7.0, 1.8.0 and 1.8.2, none elsewhere."""
    refused: dict[str, set[str]] = {v: set() for v in table_refusals()}
    for r in recorded():
        if r["accepted"] and not r["executed"]:
            assert r["exec_stage"] == "CompileOperator" and r["exec_hresult"] == "0x80070057", r["id"]
            refused[r["directml"]].add(NAMES[r["desc"]["InputTensor"]["DataType"]])
    assert refused == table_refusals()
    assert {v for v, types in refused.items() if types} == {"1.7.0", "1.8.0", "1.8.2"}


def test_dml306_warns_exactly_where_a_version_did_not_compile():
    """validate(desc, directml=version) is valid wherever CreateOperator accepted, with DML306 on the
    cases CompileOperator then refused and on no other."""
    for r in recorded():
        report = dmltile.validate(r["desc"], directml=r["directml"])
        assert report.valid == r["accepted"], (r["directml"], r["id"])
        if r["accepted"]:
            assert ("DML306" in report.codes) == (not r["executed"]), (r["directml"], r["id"])


def _wrapped() -> list[dict[str, Any]]:
    return [r for r in recorded() if r["id"].startswith("outwrap/")]


def test_a_wrapped_output_holds_element_j_mod_the_input_size_on_every_version():
    """Each wrapped case ran on every version: the output's elements are numpy.resize of the input
    along the wrapped axis (element j is input element j mod its size), the bytes after them untouched."""
    assert {r["directml"] for r in _wrapped()} == set(table_refusals())
    for r in _wrapped():
        assert r["accepted"] and r["executed"], (r["directml"], r["id"])
        t_in, t_out = r["desc"]["InputTensor"], r["desc"]["OutputTensor"]
        es = BITS[t_in["DataType"]] // 8
        n_in, n_out = int(np.prod(t_in["Sizes"])), int(np.prod(t_out["Sizes"]))
        x = np.frombuffer(bytes.fromhex(r["input"])[: n_in * es], f"V{es}").reshape(t_in["Sizes"])
        want = np.stack([np.resize(row, t_out["Sizes"][-1]) for row in x.reshape(-1, t_in["Sizes"][-1])])
        got = bytes.fromhex(r["output"])
        assert got[: n_out * es] == want.tobytes(), (r["directml"], r["id"])
        assert set(got[n_out * es :]) <= {MARK}, (r["directml"], r["id"])


def test_dmltile_runs_a_wrapped_output_as_directml_did():
    """dmltile accepts each wrapped case with DML208 and its NumPy backend gives DirectML's bytes."""
    for r in _wrapped():
        report = dmltile.validate(r["desc"], directml=r["directml"])
        assert report.valid and "DML208" in report.codes and "DML205" not in report.codes, r["id"]
        t_in, t_out = r["desc"]["InputTensor"], r["desc"]["OutputTensor"]
        es = BITS[t_in["DataType"]] // 8
        op = dmltile.compile(r["desc"])
        x = np.frombuffer(bytes.fromhex(r["input"])[: int(np.prod(t_in["Sizes"])) * es], op.dtype)
        out = op(x.reshape(t_in["Sizes"]))
        assert out.tobytes() == bytes.fromhex(r["output"])[: int(np.prod(t_out["Sizes"])) * es], r["id"]


# -- live: the real DLLs ---------------------------------------------------------------------------
def _installed() -> list[str]:
    from dmltile.execute.directml import oracle

    if oracle.setup_problem() is not None:
        return []
    return [v["directml_version"] for v in oracle.list_versions()]


INT64 = {
    "InputTensor": {"DataType": "INT64", "Sizes": [2, 3]},
    "OutputTensor": {"DataType": "INT64", "Sizes": [4, 9]},
    "Repeats": [2, 3],
}
WRAPPED = {
    "InputTensor": {"DataType": "UINT8", "Sizes": [1, 1, 2, 3]},
    "OutputTensor": {"DataType": "UINT8", "Sizes": [1, 1, 2, 5]},
    "Repeats": [1, 1, 1, 1431655767],
}


@pytest.mark.directml_live
@pytest.mark.parametrize("version", ["1.8.0", "1.9.1"])
def test_run_on_the_dll_names_the_compile_time_refusal(version):
    """On 1.8.0 the INT64 Tile fails at CompileOperator and the error says DML306 and its cause; on 1.9.1
    it runs and equals numpy.tile."""
    if version not in _installed():
        pytest.skip(f"DirectML {version} is not installed here (make directml)")
    x = np.arange(6, dtype=np.int64).reshape(2, 3) - 3
    op = dmltile.compile(INT64, backend="directml", directml=version)
    if version in {v for v, t in table_refusals().items() if "INT64" in t}:
        with pytest.raises(UnsupportedError, match="CompileOperator") as e:
            op(x)
        assert "DML306" in str(e.value) and "2 UINT32" in str(e.value)
    else:
        assert np.array_equal(op(x), np.tile(x, (2, 3)))


@pytest.mark.directml_live
def test_the_dlls_run_a_wrapped_output_as_dmltile_does():
    """The newest and the oldest installed DirectML run the wrapped descriptor to the NumPy backend's bytes."""
    versions = _installed()
    if not versions:
        pytest.skip("DirectML is not set up here (make directml)")
    x = np.arange(1, 7, dtype=np.uint8).reshape(1, 1, 2, 3)
    want = dmltile.compile(WRAPPED)(x)
    assert want.reshape(2, 5).tolist() == [[1, 2, 3, 1, 2], [4, 5, 6, 4, 5]]
    for version in dict.fromkeys([versions[0], versions[-1]]):
        got = dmltile.compile(WRAPPED, backend="directml", directml=version)(x)
        assert got.tobytes() == want.tobytes(), version
