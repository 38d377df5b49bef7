"""check_model() against what onnxruntime's DirectML EP does: the ONNX conformance Tile cases,
concrete values (--dim, --input, --repeats), the provider's own rules (DML501-DML508), levels,
and OpenVINO IR files. Models are built with onnx.helper; onnxruntime's CPU EP is the reference
wherever it runs the node."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import dmltile
from dmltile.cli import app
from dmltile.errors import InputError
from dmltile.lower.onnx_graph import ONNX_TYPES
from dmltile.lower.provider import provider_plan
from dmltile.validate.rules import RULES
from dmltile.validate.rules.provider import NodeFacts, provider_findings
from tests.lowering_support import np_dtype, same_bits
from tests.validate.test_rule_words import _pattern

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

vi = helper.make_tensor_value_info


def _model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _tile_model(elem, shape, repeats, opset=13, name="t"):
    """One Tile node, repeats an initializer."""
    return _model(
        [helper.make_node("Tile", ["x", "r"], ["y"], name=name)],
        [vi("x", elem, shape)],
        [vi("y", elem, None)],
        [numpy_helper.from_array(np.array(repeats, np.int64), "r")],
        opset,
    )


def _ort_cpu(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _run_descriptor(report, x, out_shape):
    """The node's DirectML descriptor run on the NumPy backend, on x's bytes (bool viewed as uint8)."""
    d = report.descriptor
    data = x.view(np.uint8) if x.dtype == np.bool_ else x
    y = dmltile.compile(d, report.feature_level)(np.ascontiguousarray(data).reshape(d.input.sizes))
    return np.asarray(y).reshape(out_shape).view(x.dtype)


# -- the ONNX conformance Tile cases ---------------------------------------------------------------
def conformance_cases():
    """Every Tile case of the installed onnx (onnx.backend.test.case.node.tile), captured from its
    ``expect`` calls and rebuilt as a model with onnx.helper."""
    from onnx.backend.test.case.node import tile as tile_cases

    captured = []

    def expect(node, inputs, outputs, name, **kwargs):
        captured.append((name, node, inputs, outputs))

    saved = tile_cases.expect
    tile_cases.expect = expect
    try:
        np.random.seed(0)
        for attr in sorted(vars(tile_cases.Tile)):
            if attr.startswith("export"):
                getattr(tile_cases.Tile, attr)()
    finally:
        tile_cases.expect = saved
    cases = []
    for name, node, inputs, outputs in captured:
        graph_inputs = [
            vi(n, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape))
            for n, a in zip(node.input, inputs, strict=True)
        ]
        graph_outputs = [vi(node.output[0], helper.np_dtype_to_tensor_dtype(outputs[0].dtype), None)]
        cases.append((name, _model([node], graph_inputs, graph_outputs), inputs, outputs[0]))
    return cases


CASES = conformance_cases()


def test_every_conformance_tile_case_is_here():
    assert {c[0] for c in CASES} >= {"test_tile", "test_tile_precomputed"}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_conformance_case(case, tmp_path):
    name, model, (x, repeats), expected = case
    # dmltile's lowering reproduces the expected output bit for bit
    plan = dmltile.lower("onnx", x.shape, repeats, x.dtype, opset=13)
    assert same_bits(plan.run(x), expected)
    # without values: repeats is a graph input, fed at run time
    [r] = dmltile.check_model(model)
    assert r.status == "dispatch-per-value" and r.descriptor is None and "DML504" in r.rules
    assert "graph input 'y'" in r.reason and "first run" in r.reason
    # with the values: the exact descriptor, validated, and it computes the expected output
    [r] = dmltile.check_model(model, repeats={"y": repeats.tolist()})
    assert r.status == "dispatch" and not r.fused and "first run" in r.compiled
    assert dmltile.validate(r.descriptor, r.feature_level).valid
    assert r.output_shape == list(expected.shape)
    assert same_bits(_run_descriptor(r, x, expected.shape), expected)
    # onnxruntime's CPU EP computes the same
    [got] = _ort_cpu(model, {"x": x, "y": repeats})
    assert same_bits(got, expected)


@pytest.mark.parametrize("case", CASES[:2], ids=[c[0] for c in CASES[:2]])
def test_conformance_models_on_the_command_line(case, tmp_path):
    name, model, (x, repeats), _ = case
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, path)
    plain = CliRunner().invoke(app, ["check", str(path)])
    assert plain.exit_code == 0 and "dispatch-per-value" in plain.output
    given = ",".join(str(int(v)) for v in repeats)
    result = CliRunner().invoke(app, ["check", str(path), "--repeats", f"y={given}"])
    assert result.exit_code == 0
    sizes = list(x.shape)  # no size-1 dims in these cases: the provider keeps the rank
    assert f"DirectML: FLOAT32 Sizes {sizes} Repeats {[int(v) for v in repeats]}" in result.output
    doc = json.loads(
        CliRunner().invoke(app, ["check", str(path), "--repeats", f"y={given}", "--json"]).stdout
    )
    [node] = doc["nodes"]
    assert node["status"] == "dispatch" and node["descriptor"]["Desc"]["Repeats"] == [int(v) for v in repeats]


# -- the symbolic-batch model: one reason at every level, exact with --dim ---------------------------
@pytest.fixture
def batch_model(tmp_path):
    model = _tile_model(TensorProto.INT64, ["batch", 3], [2, 1], name="tile_batch")
    path = tmp_path / "batch.onnx"
    onnx.save(model, path)
    return path


def test_symbolic_batch_gives_one_reason_at_every_level(batch_model):
    results = dmltile.check_model_levels(batch_model)
    [reports] = results.values()
    assert len({r.reason for r in reports}) == 1 and "['batch']" in reports[0].reason
    assert all(r.input_shape == ["batch", 3] and r.output_shape == ["batch*2", 3] for r in reports)
    for r in reports:
        if r.feature_level < dmltile.FeatureLevel._5_0:
            assert r.status == "cpu-fallback" and "DML506" in r.level_reason
        else:
            assert r.status == "dispatch-per-value" and r.level_reason is None


def test_symbolic_batch_with_a_dim_value_is_exact(batch_model):
    [r] = dmltile.check_model(batch_model, dims={"batch": 8})
    assert (r.status, r.input_shape, r.output_shape) == ("dispatch", [8, 3], [16, 3])
    assert r.descriptor.input.sizes == (8, 3) and r.descriptor.repeats == (2, 1)
    assert r.descriptor.input.data_type.name == "INT64" and r.fused
    assert any("batch=8" in s for s in r.supplied)
    x = np.arange(24, dtype=np.int64).reshape(8, 3) - 12
    [expected] = _ort_cpu(onnx.load(batch_model), {"x": x})
    assert same_bits(_run_descriptor(r, x, expected.shape), expected)
    result = CliRunner().invoke(app, ["check", str(batch_model), "--dim", "batch=8", "--steps"])
    assert result.exit_code == 0 and "int64[8,3] x [2,1] -> [16,3]" in result.output
    assert "DirectML: INT64 Sizes [8, 3] Repeats [2, 1] -> Sizes [16, 3]" in result.output
    assert "step: ONNX Tile-13: output_dim[i] = input_dim[i] * repeats[i]" in result.output


def test_all_levels_matrix_and_json(batch_model):
    result = CliRunner().invoke(app, ["check", str(batch_model), "--all-levels"])
    assert result.exit_code == 0
    assert "1.0-4.1" in result.output and "5.0-6.4" in result.output
    assert "per-value" in result.output and "cpu" in result.output
    assert result.output.count("why:") == 1  # the node's reason once, not once per level
    doc = json.loads(CliRunner().invoke(app, ["check", str(batch_model), "--all-levels", "--json"]).stdout)
    assert doc["feature_levels"][0] == "1.0" and doc["feature_levels"][-1] == "6.4"
    [node] = doc["nodes"]
    assert [lv["status"] for lv in node["levels"]] == ["cpu-fallback"] * 7 + ["dispatch-per-value"] * 8
    both = CliRunner().invoke(app, ["check", str(batch_model), "--all-levels", "-l", "5.0"])
    assert both.exit_code == 2


# -- concrete values --------------------------------------------------------------------------------
def test_shapes_known_only_through_data_propagation_are_used():
    """x's shape reaches Reshape through Shape: only onnx's data propagation knows Tile's input shape."""
    model = _model(
        [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Reshape", ["flat", "s"], ["z"]),
            helper.make_node("Tile", ["z", "r"], ["y"], name="after_reshape"),
        ],
        [vi("x", TensorProto.FLOAT, [2, 3]), vi("flat", TensorProto.FLOAT, [6])],
        [vi("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([1, 2], np.int64), "r")],
        opset=18,  # Reshape-14 and later read propagated shape data
    )
    [r] = dmltile.check_model(model)
    assert (r.status, r.input_shape, r.output_shape) == ("dispatch", [2, 3], [2, 6])
    # without data propagation onnx leaves the Reshape output shapeless
    plain = onnx.shape_inference.infer_shapes(model)
    [z] = [v for v in plain.graph.value_info if v.name == "z"]
    assert not all(d.HasField("dim_value") for d in z.type.tensor_type.shape.dim)


def test_input_shapes_and_their_errors():
    model = _tile_model(TensorProto.FLOAT, ["n", "m"], [1, 2])
    [r] = dmltile.check_model(model, inputs={"x": [4, 5]})
    assert (r.status, r.output_shape, r.descriptor.input.sizes) == ("dispatch", [4, 10], (4, 5))
    with pytest.raises(InputError, match="rank 2"):
        dmltile.check_model(model, inputs={"x": [4, 5, 6]})
    with pytest.raises(InputError, match="no tensor input of that name"):
        dmltile.check_model(model, inputs={"nope": [1]})
    with pytest.raises(InputError, match="they have n, m"):
        dmltile.check_model(model, dims={"batch": 2})
    with pytest.raises(InputError, match="its Tile nodes are t"):
        dmltile.check_model(model, repeats={"other": [1, 1]})
    runner = CliRunner()
    assert runner.invoke(app, ["check", "m.onnx", "--dim", "batch"]).exit_code == 2
    assert runner.invoke(app, ["check", "m.onnx", "--input", "x=a,b"]).exit_code == 2


def test_supplied_repeats_are_validated_like_any_other():
    model = _model(
        [helper.make_node("Tile", ["x", "r"], ["y"], name="t")],
        [vi("x", TensorProto.FLOAT, [2, 3]), vi("r", TensorProto.INT64, [2])],
        [vi("y", TensorProto.FLOAT, None)],
    )
    assert dmltile.check_model(model, repeats={"t": [2, 0]})[0].status == "empty"
    bad = dmltile.check_model(model, repeats={"t": [2, -1]})[0]
    assert bad.status == "invalid" and "repeats[1] is -1" in bad.reason
    short = dmltile.check_model(model, repeats={"r": [2]})[0]
    assert short.status == "invalid" and "rank 2" in short.reason


# -- the provider's own rules -----------------------------------------------------------------------
def test_every_provider_rule_cites_the_provider_source():
    provider = [r for r in RULES.values() if r.phase == "provider"]
    assert [r.code for r in sorted(provider, key=lambda r: r.code)] == [f"DML50{i}" for i in range(1, 9)]
    for r in provider:
        assert "microsoft/onnxruntime" in r.source and "onnxruntime/core/providers/dml/" in r.source


def _model_of(facts: dict):
    """An ONNX model with one Tile node of these facts (an example of a provider rule)."""
    names = {v: k for k, v in ONNX_TYPES.items()}  # "float32" -> "FLOAT"
    elem = TensorProto.DataType.Value(names.get(facts["element_type"], facts["element_type"].upper()))
    if facts["opset"] < 6:  # Tile-1: the input tiled `tiles` times along `axis`
        return _model(
            [helper.make_node("Tile", ["x", "tiles", "axis"], ["y"], name="t")],
            [vi("x", elem, facts["input_shape"])],
            [vi("y", elem, None)],
            [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in (("tiles", 2), ("axis", 0))],
            opset=facts["opset"],
        )
    if facts.get("repeats_initializer", True):
        model = _tile_model(elem, facts["input_shape"], facts["repeats"], facts["opset"])
    else:
        rank = len(facts["input_shape"])
        model = _model(
            [helper.make_node("Tile", ["x", "r"], ["y"], name="t")],
            [vi("x", elem, facts["input_shape"]), vi("r", TensorProto.INT64, [rank])],
            [vi("y", elem, None)],
            opset=facts["opset"],
        )
    if "ir_version" in facts:
        model.ir_version = facts["ir_version"]
    return model


@pytest.mark.parametrize("code", [f"DML50{i}" for i in range(1, 9)])
def test_each_provider_rules_example_is_reported_by_check_model(code):
    facts = RULES[code].example.node
    [r] = dmltile.check_model(_model_of(facts), facts.get("feature_level", "6.4"))
    assert code in r.rules, r


@pytest.mark.parametrize("code", [f"DML50{i}" for i in range(1, 9)])
def test_check_model_says_each_provider_rule_in_the_rules_own_words(code):
    # What `dmltile check` shows for the example's model is one of the rule's messages filled in (the
    # model tells more than the example's facts: where repeats come from, say), tagged with its code.
    facts = RULES[code].example.node
    [r] = dmltile.check_model(_model_of(facts), facts.get("feature_level", "6.4"))
    shown = [r.reason or "", r.level_reason or "", *r.warnings, *r.steps]
    said = [text for text in shown if f"({code})" in text]
    templates = [_pattern(w.message) for w in RULES[code].words.values()]
    assert any(t.search(text) for t in templates for text in said), (code, shown)
    # and the node's facts alone give the same sentences through the provider's checks
    assert any(
        t.fullmatch(f.message) for f in provider_findings(NodeFacts.from_dict(facts)) for t in templates
    )


def test_float64_is_dml304s_warning_and_no_step_says_the_tile_table_lacks_it():
    """The table has FLOAT64 from 4.1 (measured), and the provider starts at 5.0 only: no level at which it
    builds a Tile may claim dmltile's table lists no FLOAT64 (once said beside DML304's warning)."""
    for level in ("5.0", "6.4"):
        plan = provider_plan((2, 3), (2, 2), "float64", dmltile.parse_feature_level(level))
        assert plan.descriptor is not None and plan.descriptor.input.data_type.name == "FLOAT64"
        assert [i.code for i in plan.warnings] == ["DML304", "DML304"]
        assert not any("FLOAT64" in step and "lists no" in step for step in plan.steps), plan.steps
    [r] = dmltile.check_model(_tile_model(TensorProto.DOUBLE, [2, 3], [2, 2]))
    assert r.status == "dispatch" and any(w.startswith("DML304") for w in r.warnings)
    assert not any("lists no FLOAT64" in step for step in r.steps), r.steps


def test_opset_6_runs_on_directml_as_observed():
    """The provider's source registers Tile at opsets 7 and 13, but the real provider fuses Tile-6."""
    model = _tile_model(TensorProto.FLOAT, [2, 3], [2, 2], opset=6)
    [r] = dmltile.check_model(model)
    assert r.status == "dispatch" and "DML501" not in r.rules and r.fused
    x = np.ones((2, 3), np.float32)
    assert _ort_cpu(model, {"x": x})[0].shape == (4, 6)  # the CPU EP runs it


@pytest.mark.parametrize(
    "elem, status",
    [
        (TensorProto.STRING, "cpu-fallback"),
        (TensorProto.BFLOAT16, "invalid"),
        (TensorProto.COMPLEX64, "invalid"),
    ],
    ids=["string", "bfloat16", "complex64"],
)
def test_types_the_provider_does_not_register(elem, status):
    model = _tile_model(elem, [2, 3], [2, 2])
    [r] = dmltile.check_model(model)
    assert r.status == status and "DML502" in r.rules
    cpu_runs = True
    try:
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception:
        cpu_runs = False
    assert cpu_runs == (status == "cpu-fallback")  # invalid: onnxruntime's CPU EP cannot run it either


@pytest.mark.parametrize(
    "elem, dml",
    [
        (TensorProto.BOOL, "UINT8"),
        (TensorProto.FLOAT16, "FLOAT16"),
        (TensorProto.DOUBLE, "FLOAT64"),
        (TensorProto.UINT64, "UINT64"),
        (TensorProto.INT8, "INT8"),
    ],
    ids=["bool", "float16", "float64", "uint64", "int8"],
)
def test_provider_descriptors_compute_what_onnxruntime_computes(elem, dml):
    """Size-1 output axes dropped, bool as UINT8: the provider's descriptor copies the same bits."""
    model = _tile_model(elem, [1, 3, 1, 2], [1, 1, 2, 1])
    [r] = dmltile.check_model(model)
    assert r.status == "dispatch" and r.descriptor.input.data_type.name == dml
    assert r.descriptor.input.sizes == (3, 1, 2) and r.descriptor.repeats == (1, 2, 1)
    assert "DML507" in r.rules and any("size-1 output dimensions [0]" in s for s in r.steps)
    assert ("DML503" in r.rules) == (dml in ("FLOAT16", "FLOAT64", "UINT64"))
    dtype = np_dtype(helper.tensor_dtype_to_np_dtype(elem).name)
    rng = np.random.default_rng(1)
    x = (
        rng.integers(0, 2, (1, 3, 1, 2)) if dtype == np.bool_ else rng.integers(-50, 50, (1, 3, 1, 2))
    ).astype(dtype)
    [expected] = _ort_cpu(model, {"x": x})
    assert same_bits(_run_descriptor(r, x, expected.shape), expected)


def test_ranks_past_eight_leave_the_gpu_even_when_squeezing_would_leave_eight():
    """Observed on the real provider: it counts the node's own rank, before dropping size-1 dimensions."""
    many = _tile_model(TensorProto.FLOAT, [2] * 9, [1] * 9)
    [r] = dmltile.check_model(many)
    assert r.status == "cpu-fallback" and "DML507" in r.rules and "9 dimensions" in r.level_reason
    ones = _tile_model(TensorProto.FLOAT, [1, 1, 2, 1, 2, 1, 1, 2, 1, 3], [1] * 9 + [2])
    [r] = dmltile.check_model(ones)
    assert r.status == "cpu-fallback" and "DML507" in r.rules and "10 dimensions" in r.level_reason
    eight = _tile_model(TensorProto.FLOAT, [1, 2, 1, 2, 1, 2, 1, 3], [1] * 7 + [2])
    [r] = dmltile.check_model(eight)
    assert r.status == "dispatch" and r.descriptor.input.sizes == (2, 2, 2, 3)
    x = np.arange(24, dtype=np.float32).reshape(1, 2, 1, 2, 1, 2, 1, 3)
    [expected] = _ort_cpu(eight, {"x": x})
    assert same_bits(_run_descriptor(r, x, expected.shape), expected)


def test_a_scalar_tile_is_one_dimension_of_size_one_on_directml():
    """Observed on the real provider: a rank-0 Tile runs on DirectML, fused."""
    scalar = _tile_model(TensorProto.FLOAT, [], [])
    [r] = dmltile.check_model(scalar)
    assert r.status == "dispatch" and r.fused and "DML507" in r.rules
    assert r.descriptor.input.sizes == (1,) and r.descriptor.repeats == (1,)
    x = np.array(3.5, np.float32)
    [expected] = _ort_cpu(scalar, {"x": x})
    assert expected.shape == () and same_bits(_run_descriptor(r, x, expected.shape), expected)


# -- OpenVINO IR ------------------------------------------------------------------------------------
def test_openvino_ir_without_the_extra_says_what_to_install(tmp_path, monkeypatch):
    path = tmp_path / "model.xml"
    path.write_text("<net/>")
    monkeypatch.setitem(sys.modules, "openvino", None)  # import openvino fails
    with pytest.raises(InputError, match=r"pip install 'dmltile\[openvino\]'"):
        dmltile.check_model(path)
    result = CliRunner().invoke(app, ["check", str(path)])
    assert result.exit_code == 2 and "dmltile[openvino]" in result.output


# OpenVINO runs in a child process (in one process with onnxruntime its CPU plugin crashed here).
OPENVINO_CHILD = r"""
import json, sys
import numpy as np
import openvino as ov
from openvino import opset8 as ops
x = ops.parameter([2, 3], ov.Type.f32, name="x")
d = ops.parameter([-1, 3], ov.Type.f32, name="d")
r = ops.parameter([2], ov.Type.i64, name="r")
layers = {
    "tile_const": ops.tile(x, ops.constant(np.array([2, 2], np.int64))),
    "tile_runtime": ops.tile(x, r),
    "tile_dynamic": ops.tile(d, ops.constant(np.array([1, 2], np.int32))),
    "tile_negative": ops.tile(x, ops.constant(np.array([3, -1, 2], np.int64))),
}
for name, layer in layers.items():
    layer.set_friendly_name(name)
ov.save_model(ov.Model(list(layers.values()), [x, d, r]), sys.argv[1])
"""


def test_openvino_ir_tile_layers(tmp_path):
    probe = subprocess.run([sys.executable, "-c", "import openvino"], capture_output=True, text=True)
    if probe.returncode:
        pytest.skip("OpenVINO is not importable here; pip install 'dmltile[openvino]' to run it")
    path = tmp_path / "model.xml"
    subprocess.run([sys.executable, "-c", OPENVINO_CHILD, str(path)], check=True, timeout=300)
    cli = Path(sys.executable).with_name("dmltile")

    def check(*args):
        proc = subprocess.run([str(cli), "check", str(path), "--json", *args], capture_output=True, text=True)
        assert proc.returncode in (0, 1), proc.stderr
        return {n["name"]: n for n in json.loads(proc.stdout)["nodes"]}

    nodes = check()
    assert {n: v["status"] for n, v in nodes.items()} == {
        "tile_const": "dispatch",
        "tile_runtime": "dispatch-per-value",
        "tile_dynamic": "dispatch-per-value",
        "tile_negative": "empty",  # OpenVINO clamps negative repeats to 0
    }
    assert nodes["tile_const"]["descriptor"]["Desc"]["Repeats"] == [2, 2]
    assert all(n["framework"] == "openvino" for n in nodes.values())
    given = check("--input", "d=4,3", "--repeats", "tile_runtime=1,3", "-l", "1.0")
    assert given["tile_dynamic"]["descriptor"]["Desc"]["InputTensor"]["Desc"]["Sizes"] == [1, 1, 4, 3]
    assert given["tile_runtime"]["output_shape"] == [2, 9] and given["tile_runtime"]["status"] == "dispatch"


@pytest.mark.parametrize(
    ("ir", "status", "refusing"),
    [
        (10, "dispatch", []),
        (11, "dispatch", ["1.20.1"]),
        (13, "dispatch", ["1.20.1"]),
        (14, "invalid", ["1.24.4", "1.20.1"]),
    ],
)
def test_the_ir_version_is_judged_against_each_measured_onnxruntime(ir, status, refusing):
    """DML508 against the maxima measured on the wheels (1.24.4 loads up to IR 13, 1.20.1 up to IR 10):
    a model no measured onnxruntime loads is invalid, one that some refuse carries the warning naming them."""
    model = _tile_model(TensorProto.FLOAT, [2, 3], [2, 2])
    model.ir_version = ir
    [r] = dmltile.check_model(model)
    assert r.status == status, r
    assert ("DML508" in r.rules) == bool(refusing)
    said = r.reason if status == "invalid" else " ".join(r.warnings)
    for wheel in refusing:
        assert wheel in said, said
