"""dmltile's verdicts against DirectML's own CreateOperator answers, recorded in golden/*.jsonl.

No Wine needed: the golden files hold DirectML's HRESULT for every case (generate_cases.py wrote
them). Each (DirectML version, kind of case) is one test; a kind that dmltile gets wrong today is an
expected failure with the reason, strict, so the test turns red (XPASS) the moment the rule is fixed
and the mark must go.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import dmltile
from tests.conftest import AGREEMENT

from .kinds import KINDS, kind_of

GOLDEN = Path(__file__).resolve().parent / "golden"
FILES = sorted(
    GOLDEN.glob("directml-*.jsonl"), key=lambda p: tuple(int(x) for x in p.stem.split("-")[1].split("."))
)

Version = tuple[int, ...]


def ALL(v: Version) -> bool:
    return True


# Deliberate, named exceptions: kind -> (what dmltile does instead of DirectML, and why). Each has its
# own test below that pins the exact disagreement, so a change on either side shows.
EXCEPTIONS: dict[str, str] = {}


def _version(path: Path) -> Version:
    return tuple(int(x) for x in path.stem.split("-")[1].split("."))


@cache
def _golden(path: Path) -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(line) for line in path.read_text().splitlines() if line.strip())


@cache
def _kind(case_id: str, desc_json: str) -> str:
    return kind_of(json.loads(desc_json))


@cache
def _by_kind(path: Path) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {k: [] for k in KINDS}
    for g in _golden(path):
        out[_kind(g["id"], json.dumps(g["desc"], sort_keys=True))].append(g)
    return out


@cache
def _dmltile_report(case_id: str, version: str, desc_json: str) -> dmltile.ValidationReport:
    return dmltile.validate(json.loads(desc_json), directml=version)


def _verdicts(path: Path, kind: str) -> tuple[list[str], int]:
    """Ids of the cases of this kind where dmltile and DirectML differ, and how many cases there are."""
    differ, total = [], 0
    version = path.stem.split("-")[1]
    for g in _by_kind(path)[kind]:
        if "accepted" not in g:
            continue
        total += 1
        ok = _dmltile_report(g["id"], version, json.dumps(g["desc"], sort_keys=True)).valid
        if ok != g["accepted"]:
            differ.append(f"{g['id']} (DirectML {'accepts' if g['accepted'] else 'rejects'})")
    return differ, total


def _params() -> list[Any]:
    out = []
    for path in FILES:
        v = _version(path)
        for kind in KINDS:
            if kind == "not-c" or kind in EXCEPTIONS:
                continue
            out.append(pytest.param(path, kind, id=f"{'.'.join(map(str, v))}-{kind}"))
    return out


def test_golden_files_present() -> None:
    """The golden data exists, for several DirectML versions, each with thousands of cases."""
    assert len(FILES) >= 5
    for path in FILES:
        rows = _golden(path)
        assert len(rows) > 2000
        assert all("accepted" in r for r in rows), f"{path.name}: cases without a DirectML verdict"
        assert len({r["id"] for r in rows}) == len(rows)


@pytest.mark.parametrize(("path", "kind"), _params())
def test_agrees_with_directml(path: Path, kind: str, record_property: Any) -> None:
    """dmltile.validate(desc, directml=version) gives DirectML's verdict on every case of this kind."""
    differ, total = _verdicts(path, kind)
    version = path.stem.split("-")[1]
    # carried on the test's report, so the summary is printed whichever process ran the test
    record_property(AGREEMENT, [version, kind, total - len(differ), total])
    assert not differ, f"{len(differ)}/{total} differ, e.g. {differ[:5]}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem.split("-")[1])
def test_not_c_expressible_cases_are_rejected(path: Path) -> None:
    """A count that differs from its list's length cannot be written as C structs: dmltile must reject it.

    (DirectML reads RepeatsCount/DimensionCount values, so what it answered is about another descriptor.)
    """
    rows = _by_kind(path)["not-c"]
    assert rows
    for g in rows:
        assert not dmltile.validate(g["desc"], feature_level=g["max_feature_level"]).valid, g["id"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem.split("-")[1])
def test_wrapped_output_sizes_are_accepted_with_the_wrap_named(path: Path) -> None:
    """Every DirectML accepts OutputTensor.Sizes[i] = InputTensor.Sizes[i] * Repeats[i] mod 2^32: dmltile
    gives the same verdict, with DML208 on each wrapped axis (and no DML205). Where a version refuses
    such a case for another reason (a wrap to 0, a rank or type its level lacks), dmltile refuses it
    too, and not for the wrap."""
    rows = [g for g in _by_kind(path)["output-size-wrap"] if "accepted" in g]
    version = path.stem.split("-")[1]
    for g in [g for g in rows if not g["accepted"]]:
        report = _dmltile_report(g["id"], version, json.dumps(g["desc"], sort_keys=True))
        others = [i for i in report.issues if i.severity == "error" and i.code not in ("DML205", "DML208")]
        assert not report.valid and others, g["id"]
    rows = [g for g in rows if g["accepted"]]
    assert len(rows) >= 20
    for g in rows:
        report = _dmltile_report(g["id"], version, json.dumps(g["desc"], sort_keys=True))
        desc = g["desc"]
        ins, reps, outs = desc["InputTensor"]["Sizes"], desc["Repeats"], desc["OutputTensor"]["Sizes"]
        wrapped = [i for i in range(len(ins)) if ins[i] * reps[i] != outs[i]]
        assert wrapped and all(ins[i] * reps[i] % 2**32 == outs[i] for i in wrapped), g["id"]
        assert report.valid and "DML205" not in report.codes, g["id"]
        paths = {i.path for i in report.issues if i.code == "DML208"}
        assert paths == {f"Desc.OutputTensor.Desc.Sizes[{i}]" for i in wrapped}, g["id"]
