"""check_model's verdicts against what onnxruntime's real DirectML provider did (golden_placement/).

The golden files were recorded on onnxruntime-directml's own provider (tests/lower/record_placement.py,
Wine + lavapipe); this test needs no Wine: it rebuilds each model, asks check_model, and compares
the verdict per Tile node with the observed one. Every case must agree, for every recorded wheel:
where the observation contradicted a DML50x rule, the rule was changed to follow it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("onnx")
import dmltile  # noqa: E402
from dmltile.lower.observe import comparable_verdict  # noqa: E402
from dmltile.validate.rules.model_ir import max_ir_versions  # noqa: E402
from tests.lower.placement_cases import GOLDEN, all_cases  # noqa: E402

FOLDER = Path(__file__).with_name(GOLDEN)
GOLDEN_FILES = sorted(FOLDER.glob("*.json"))
CASES = {c.id: c for c in all_cases()}


def verdicts(case, wheel: str) -> dict[str, str]:
    """check_model's verdict per node, in the observation's terms, given the values the run used; on a
    wheel whose onnxruntime refuses the model's IR version (DML508 names it), invalid."""
    reports = dmltile.check_model(case.model, **{k: v for k, v in case.check.items() if v})
    refused = case.model.ir_version > max_ir_versions()[wheel]
    return {r.name: "invalid" if refused else comparable_verdict(r.status, r.fused) for r in reports}


def _entries():
    for path in GOLDEN_FILES:
        doc = json.loads(path.read_text())
        for entry in doc["cases"]:
            yield pytest.param(doc, entry, id=f"{path.stem}:{entry['id']}")


def test_golden_files_cover_two_wheels_and_every_case():
    wheels = {p.stem for p in GOLDEN_FILES}
    assert {"1.20.1", "1.24.4"} <= wheels
    for path in GOLDEN_FILES:
        recorded = {e["id"] for e in json.loads(path.read_text())["cases"]}
        assert recorded == set(CASES), f"{path.name}: re-record with python -m tests.lower.record_placement"


@pytest.mark.parametrize("doc, entry", list(_entries()))
def test_check_agrees_with_the_observed_placement(doc, entry):
    case = CASES[entry["id"]]
    observed = {n["name"]: n["status"] for n in entry["nodes"]}
    predicted = verdicts(case, doc["wheel"].split("==")[1])
    assert predicted == observed, f"{doc['wheel']}: predicted {predicted}, observed {entry['nodes']}"


@pytest.mark.parametrize("doc, entry", list(_entries()))
def test_the_provider_computed_what_the_cpu_provider_computes(doc, entry):
    """Wherever the model ran, its outputs equal onnxruntime's CPU provider bit for bit."""
    for name, out in entry["outputs"].items():
        assert out.get("equals_cpu", True), f"{doc['wheel']} {entry['id']} output {name}: {out}"
