"""onnxruntime-directml's own DirectML provider, asked live (make directml-live): the backend runs
the README's example bit for bit, the golden placements are observed again, and `check --observe`
compares verdicts with what the provider does."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import dmltile
from dmltile.cli import app
from dmltile.execute.directml import fetch_dlls, oracle, ort_provider

pytestmark = pytest.mark.directml_live
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _set_up_by_make_directml() -> bool:
    """`make directml` ran here: the DirectML runner is in place (its onnxruntime step then must be too)."""
    return oracle.setup_problem() is None


@pytest.fixture(scope="module", autouse=True)
def provider_here():
    problem = ort_provider.ort_setup_problem()
    if problem and _set_up_by_make_directml():
        pytest.fail(f"`make directml` set up DirectML but not onnxruntime-directml's provider: {problem}")
    if problem:
        pytest.skip(f"onnxruntime-directml's provider is not set up here: {problem}")


SHIPPING = [r["wheel"].split("==")[1] for r in fetch_dlls.rows() if r.get("ships_onnxruntime_dll")]


@pytest.mark.parametrize("wheel", SHIPPING)
def test_every_wheel_that_ships_the_c_api_runs_a_tile_here(wheel):
    """No silent skip: each wheel whose onnxruntime.dll the set-up extracts is installed, and its
    DirectML provider runs a Tile equal to numpy.tile (asked again, not read from the record)."""
    assert wheel in ort_provider.installed_wheels(), ort_provider.ort_wheels()
    check = ort_provider.check_tile(wheel)
    assert check["runs_tile"], check["reason"]
    doctor = {w["wheel"]: w for w in dmltile.doctor_report()["directml"]["hosted_provider"]["wheels"]}
    assert doctor[wheel]["runs_tile"], doctor[wheel]


def test_the_readme_example_runs_bit_exactly_on_the_real_provider():
    doc = json.loads((ROOT / "examples" / "doc_example.json").read_text())
    op = dmltile.compile(doc, backend="onnxruntime-directml")
    assert op.provider.startswith("DmlExecutionProvider (onnxruntime-directml ")
    x = np.random.default_rng(3).standard_normal(op.in_shape).astype(np.float32)
    expected = dmltile.compile(doc)(x)
    got = op(x)
    assert got.tobytes() == expected.tobytes() and got.tobytes() == np.tile(x, doc_repeats(doc)).tobytes()
    result = CliRunner().invoke(
        app, ["run", str(ROOT / "examples" / "doc_example.json"), "--backend", "onnxruntime-directml"]
    )
    assert result.exit_code == 0 and "DmlExecutionProvider" in result.output


def doc_repeats(doc) -> tuple[int, ...]:
    return tuple((doc.get("Desc") or doc)["Repeats"])


@pytest.mark.parametrize("wheel", ["1.20.1", "1.24.4"])
def test_compare_backends_takes_it(wheel):
    if wheel not in ort_provider.installed_wheels():
        pytest.skip(f"onnxruntime-directml {wheel} is not installed here")
    desc = {
        "InputTensor": {"DataType": "INT64", "Sizes": [1, 2, 3]},
        "OutputTensor": {"DataType": "INT64", "Sizes": [2, 2, 9]},
        "Repeats": [2, 1, 3],
    }
    result = dmltile.compare_backends(desc, backends=("numpy", "onnxruntime-directml"), wheel=wheel)
    assert result.identical, result.message


@pytest.mark.parametrize(
    "wheel", sorted(p.stem for p in (ROOT / "tests" / "lower" / "golden_placement").glob("*.json"))
)
def test_the_golden_placements_are_observed_again(wheel):
    from dmltile.lower.observe import observe_models
    from tests.lower.placement_cases import all_cases

    if wheel not in ort_provider.installed_wheels():
        pytest.skip(f"onnxruntime-directml {wheel} is not installed here")
    golden = json.loads((ROOT / "tests" / "lower" / "golden_placement" / f"{wheel}.json").read_text())
    recorded = {c["id"]: {n["name"]: n["status"] for n in c["nodes"]} for c in golden["cases"]}
    cases = all_cases()
    seen = observe_models([(c.model, c.inputs, c.free_dims) for c in cases], wheel)
    now = {c.id: {n: o.status for n, o in s.nodes.items()} for c, s in zip(cases, seen, strict=True)}
    assert now == recorded


def test_check_observe_compares_every_node(tmp_path):
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [
            helper.make_node("Tile", ["x", "r"], ["a"], name="fixed"),
            helper.make_node("Tile", ["a", "q"], ["y"], name="fed"),
        ],
        "g",
        [vi("x", TensorProto.FLOAT, ["batch", 3]), vi("q", TensorProto.INT64, [2])],
        [vi("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([1, 2], np.int64), "r")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = tmp_path / "two.onnx"
    onnx.save(model, path)
    result = CliRunner().invoke(
        app, ["check", str(path), "--observe", "--dim", "batch=2", "--repeats", "fed=3,1", "--json"]
    )
    doc = json.loads(result.stdout)
    nodes = {n["name"]: n for n in doc["nodes"]}
    assert nodes["fixed"]["observed"] == "dispatch" and nodes["fixed"]["observation"]["fused"] is True
    assert nodes["fed"]["observed"] == "dispatch-per-value"
    assert all(n["agrees"] for n in nodes.values()) and result.exit_code == 0
    text = CliRunner().invoke(app, ["check", str(path), "--observe", "--dim", "batch=2"])
    assert text.exit_code == 0 and "agrees" in text.output and "DISAGREES" not in text.output


def test_check_observe_exits_by_the_agreement(tmp_path):
    """A model importing opset 6: the provider runs Tile-6 on DirectML, fused, as check predicts (its
    source alone said the CPU); the exit status is 1 exactly when prediction and observation differ."""
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Tile", ["x", "r"], ["y"], name="t")],
        "g",
        [vi("x", TensorProto.FLOAT, [2, 3])],
        [vi("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([2, 2], np.int64), "r")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 6)])
    model.ir_version = 8
    path = tmp_path / "opset6.onnx"
    onnx.save(model, path)
    result = CliRunner().invoke(app, ["check", str(path), "--observe", "--json"])
    [node] = json.loads(result.stdout)["nodes"]
    assert node["observed"] == "dispatch"
    assert result.exit_code == (0 if node["predicted"] == "dispatch" else 1)


def _one_tile(elem, repeats):
    graph = helper.make_graph(
        [helper.make_node("Tile", ["x", "r"], ["y"], name="t")],
        "g",
        [helper.make_tensor_value_info("x", elem, [2, 3])],
        [helper.make_tensor_value_info("y", elem, None)],
        [numpy_helper.from_array(np.array(repeats, np.int64), "r")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize(
    ("elem", "repeats"),
    [(TensorProto.BFLOAT16, [2, 2]), (TensorProto.FLOAT, [-1, 2])],
    ids=["bfloat16", "negative"],
)
def test_observe_runs_the_cpu_reference_on_inputs_of_every_type(elem, repeats):
    """A bfloat16 input is made (as its bits) and fed; the CPU reference session runs the model on the
    inputs, so negative repeats, which fail at the first run there too, are observed invalid as check says."""
    from dmltile.lower.observe import generated_inputs, observe_model

    model = _one_tile(elem, repeats)
    [predicted] = dmltile.check_model(model)
    feeds, free = generated_inputs(model)
    seen = observe_model(model, feeds, free)
    assert predicted.status == "invalid" and seen.nodes["t"].status == "invalid", seen.nodes["t"]
