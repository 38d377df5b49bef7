"""check_model() and `dmltile check` on ONNX models built here, one Tile node per status."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import dmltile
from dmltile.cli import app
from tests.lowering_support import same_bits

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def _i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def _model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def mixed_model():
    """Seven Tile nodes: dispatch, int64 dispatch, empty, string, runtime repeats, negative repeats,
    symbolic batch, plus one inside an If branch; repeats `rin` is a graph input with a default."""
    vi = helper.make_tensor_value_info
    then_branch = helper.make_graph(
        [helper.make_node("Tile", ["x", "r22"], ["t_out"], name="tile_in_branch")],
        "then",
        [],
        [vi("t_out", TensorProto.FLOAT, None)],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["e_out"])], "else", [], [vi("e_out", TensorProto.FLOAT, None)]
    )
    nodes = [
        helper.make_node("Tile", ["x", "r22"], ["y_dispatch"], name="tile_dispatch"),
        helper.make_node("Tile", ["xi", "r22"], ["y_int64"], name="tile_int64"),
        helper.make_node(
            "Constant", [], ["r02"], name="zeros", value=numpy_helper.from_array(np.array([0, 2], np.int64))
        ),
        helper.make_node("Tile", ["x", "r02"], ["y_empty"], name="tile_empty"),
        helper.make_node("Tile", ["s", "r22"], ["y_string"], name="tile_string"),
        helper.make_node("Shape", ["b"], ["shape_x"], name="shape_of_x"),  # b is [N, 3]: known at run time
        helper.make_node("Tile", ["x", "shape_x"], ["y_runtime"], name="tile_runtime"),
        helper.make_node("Tile", ["x", "rneg"], ["y_invalid"], name="tile_negative"),
        helper.make_node("Tile", ["b", "r21"], ["y_symbolic"], name="tile_symbolic"),
        helper.make_node("Tile", ["x", "rin"], ["y_input"], name="tile_graph_input"),
        helper.make_node(
            "If", ["cond"], ["y_if"], name="branch", then_branch=then_branch, else_branch=else_branch
        ),
    ]
    inputs = [
        vi("x", TensorProto.FLOAT, [2, 3]),
        vi("xi", TensorProto.INT64, [2, 3]),
        vi("s", TensorProto.STRING, [2, 3]),
        vi("b", TensorProto.FLOAT16, ["N", 3]),
        vi("rin", TensorProto.INT64, [2]),
        vi("cond", TensorProto.BOOL, []),
    ]
    outputs = [
        vi(n, TensorProto.UNDEFINED, None)
        for n in (
            "y_dispatch",
            "y_int64",
            "y_empty",
            "y_string",
            "y_runtime",
            "y_invalid",
            "y_symbolic",
            "y_input",
            "y_if",
        )
    ]
    return _model(
        nodes,
        inputs,
        outputs,
        [_i64("r22", [2, 2]), _i64("rneg", [-1, 2]), _i64("r21", [2, 1]), _i64("rin", [1, 1])],
    )


@pytest.fixture
def model_path(tmp_path):
    path = tmp_path / "mixed.onnx"
    onnx.save(mixed_model(), path)
    return path


def test_every_status(model_path):
    reports = {r.name: r for r in dmltile.check_model(model_path)}
    assert {n: r.status for n, r in reports.items()} == {
        "tile_dispatch": "dispatch",
        "tile_int64": "dispatch",
        "tile_empty": "empty",
        "tile_string": "cpu-fallback",
        "tile_runtime": "dispatch-per-value",
        "tile_negative": "invalid",
        "tile_symbolic": "dispatch-per-value",
        "tile_graph_input": "dispatch-per-value",
        "branch/then_branch/tile_in_branch": "dispatch",
    }
    assert all(
        r.feature_level == dmltile.FeatureLevel._6_4 for r in reports.values()
    )  # the newest by default
    d = reports["tile_dispatch"]
    assert (d.input_shape, d.input_type, d.repeats, d.output_shape) == ([2, 3], "float32", [2, 2], [4, 6])
    assert d.min_feature_level == dmltile.FeatureLevel._5_0 and d.min_directml == "1.8.0"
    assert d.descriptor.repeats == (2, 2) and d.repeats_source == "initializer 'r22'"
    assert d.fused and "session creation" in d.compiled and d.reason is None
    i64 = reports["tile_int64"].to_dict()
    assert i64["descriptor"]["Desc"]["InputTensor"]["Desc"]["DataType"] == "DML_TENSOR_DATA_TYPE_INT64"
    assert i64["min_feature_level"] == "5.0" and "DML503" in i64["rules"]
    assert reports["tile_empty"].output_shape == [0, 6] and reports["tile_empty"].descriptor is None
    assert reports["tile_empty"].repeats_source == "Constant node 'zeros'"
    s = reports["tile_string"]
    assert "string" in s.reason and "CPUExecutionProvider" in s.reason and s.rules == ["DML502"]
    rt = reports["tile_runtime"]
    assert rt.repeats is None and "Shape node 'shape_of_x'" in rt.reason and rt.descriptor is None
    assert "first run" in rt.reason and "fused" in rt.reason and not rt.fused and rt.rules == ["DML504"]
    assert "repeats[0] is -1" in reports["tile_negative"].reason
    sym = reports["tile_symbolic"]
    assert sym.input_shape == ["N", 3] and sym.output_shape == ["N*2", 3] and "symbolic" in sym.reason
    assert sym.descriptor is None and sym.rules == ["DML505"] and "--dim" in sym.reason
    gi = reports["tile_graph_input"]
    assert "graph input 'rin'" in gi.reason and "default" in gi.reason and gi.output_shape == ["?", "?"]


def test_below_the_providers_level_the_model_leaves_the_gpu(model_path):
    """The provider creates its device at 5.0: below that every node falls back, with the node's own
    reason unchanged and the level's reason (DML506) beside it."""
    newest = {r.name: r for r in dmltile.check_model(model_path)}
    for level in ("1.0", "3.1", "4.1"):
        reports = {r.name: r for r in dmltile.check_model(model_path, level)}
        for name, r in reports.items():
            assert r.reason == newest[name].reason, name
            if newest[name].status == "invalid":
                assert r.status == "invalid" and r.level_reason is None
            elif newest[name].status != "cpu-fallback":
                assert r.status == "cpu-fallback" and "DML506" in r.level_reason and "5_0" in r.level_reason
                assert r.descriptor is None and "DML506" in r.rules
    at_1 = {r.name: r for r in dmltile.check_model(model_path, "1.0")}
    assert "DirectML itself" in at_1["tile_int64"].level_reason and "2.1" in at_1["tile_int64"].level_reason
    at_5 = {r.name: r for r in dmltile.check_model(model_path, "5.0")}
    assert {n: r.status for n, r in at_5.items()} == {n: r.status for n, r in newest.items()}


def test_reported_descriptors_compute_what_onnxruntime_computes(tmp_path):
    """A model whose Tile nodes all dispatch or are empty: ORT runs it, our plans give the same outputs."""
    vi = helper.make_tensor_value_info
    model = _model(
        [
            helper.make_node("Tile", ["x", "r"], ["y1"], name="a"),
            helper.make_node("Tile", ["y1", "r0"], ["y2"], name="b"),
            helper.make_node("Tile", ["u", "r3"], ["y3"], name="c"),
        ],
        [vi("x", TensorProto.FLOAT, [2, 3]), vi("u", TensorProto.UINT8, [3, 1, 2])],
        [
            vi("y1", TensorProto.FLOAT, None),
            vi("y2", TensorProto.FLOAT, None),
            vi("y3", TensorProto.UINT8, None),
        ],
        [_i64("r", [3, 2]), _i64("r0", [1, 0]), _i64("r3", [1, 1, 2])],
    )
    path = tmp_path / "ok.onnx"
    onnx.save(model, path)
    feeds = {
        "x": np.random.default_rng(0).random((2, 3), dtype=np.float32),
        "u": np.arange(6, dtype=np.uint8).reshape(3, 1, 2),
    }
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    expected = dict(zip(["y1", "y2", "y3"], sess.run(None, feeds), strict=False))
    reports = {r.name: r for r in dmltile.check_model(path, "5.0")}
    assert [r.status for r in reports.values()] == ["dispatch", "empty", "dispatch"]
    inputs = {"a": feeds["x"], "b": expected["y1"], "c": feeds["u"]}
    for name, out in (("a", "y1"), ("b", "y2"), ("c", "y3")):
        r = reports[name]
        assert r.output_shape == list(expected[out].shape)
        if r.descriptor is not None:  # the provider's own descriptor, run on the NumPy backend
            x = inputs[name].reshape(r.descriptor.input.sizes)
            got = dmltile.compile(r.descriptor, "5.0")(x).reshape(expected[out].shape)
            assert same_bits(got, expected[out])
    assert reports["c"].descriptor.input.sizes == (
        3,
        2,
    )  # the size-1 output axis dropped, as the provider does
    assert CliRunner().invoke(app, ["check", str(path), "-l", "5.0"]).exit_code == 0


def test_tile_1_nodes_have_no_onnxruntime_kernel(tmp_path):
    vi = helper.make_tensor_value_info
    model = _model(
        [helper.make_node("Tile", ["x", "tiles", "axis"], ["y"], name="old")],
        [vi("x", TensorProto.FLOAT, [2, 3])],
        [vi("y", TensorProto.FLOAT, None)],
        [
            numpy_helper.from_array(np.array(3, np.float32), "tiles"),
            numpy_helper.from_array(np.array(1, np.float32), "axis"),
        ],
        opset=5,
    )
    [r] = dmltile.check_model(model)
    assert (r.status, r.opset, r.repeats, r.output_shape) == ("invalid", 5, [1, 3], [2, 9])
    assert "Tile-1" in r.reason and "DML501" in r.rules
    with pytest.raises(Exception, match="implementation for Tile"):  # onnxruntime agrees
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def test_cli_table_and_exit_status(model_path):
    result = CliRunner().invoke(app, ["check", str(model_path)])
    assert result.exit_code == 1
    for word in ("tile_dispatch", "tile_runtime", "invalid", "cpu-fallback", "empty", "dispatch-per-value"):
        assert word in result.output
    assert "float16[N,3] x [2,1] -> [N*2,3]" in result.output  # shapes are text, not rich markup


def test_cli_json(model_path):
    result = CliRunner().invoke(app, ["check", str(model_path), "--json", "-l", "DML_FEATURE_LEVEL_4_1"])
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["model"] == str(model_path) and doc["feature_level"] == "4.1"
    assert {n["name"]: n["status"] for n in doc["nodes"]}["tile_int64"] == "cpu-fallback"
    doc = json.loads(CliRunner().invoke(app, ["check", str(model_path), "--json"]).stdout)
    assert doc["feature_level"] == "6.4"
    assert {n["status"] for n in doc["nodes"]} == {
        "dispatch",
        "dispatch-per-value",
        "empty",
        "cpu-fallback",
        "invalid",
    }
    assert set(doc["nodes"][0]) >= {
        "name",
        "output_shape",
        "status",
        "reason",
        "descriptor",
        "min_feature_level",
    }


@pytest.mark.parametrize(
    "content", [None, b"not a model", b"", "dir"], ids=["missing", "garbage", "empty-file", "directory"]
)
def test_cli_unreadable_model_exits_2_without_traceback(tmp_path, content):
    path = tmp_path / "m.onnx"
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    result = CliRunner().invoke(app, ["check", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert str(path.name) in result.output


def test_cli_unknown_level_exits_2(model_path):
    result = CliRunner().invoke(app, ["check", str(model_path), "-l", "7.7"])
    assert result.exit_code == 2 and "7.7" in result.output


def test_symbolic_dims_do_not_hide_a_definite_verdict():
    vi = helper.make_tensor_value_info
    model = _model(
        [
            helper.make_node("Tile", ["s", "r"], ["y"], name="strings"),
            helper.make_node("Tile", ["x", "r0"], ["z"], name="zero"),
        ],
        [vi("s", TensorProto.STRING, ["N", 2]), vi("x", TensorProto.FLOAT, ["N", 2])],
        [vi("y", TensorProto.STRING, None), vi("z", TensorProto.FLOAT, None)],
        [_i64("r", [2, 2]), _i64("r0", [3, 0])],
    )
    reports = {r.name: r for r in dmltile.check_model(model, "6.4")}
    assert reports["strings"].status == "cpu-fallback" and "string" in reports["strings"].reason
    assert reports["zero"].status == "empty" and reports["zero"].output_shape == ["N*3", 0]


def test_malformed_nodes_are_invalid_not_crashes():
    vi = helper.make_tensor_value_info
    model = _model(
        [
            helper.make_node("Tile", ["x"], ["y"], name="one_input"),
            helper.make_node("Tile", ["x", "r", "r"], ["z"], name="three_inputs"),
            helper.make_node("Tile", ["x", "r32"], ["w"], name="int32_repeats"),
            helper.make_node("Tile", ["x", "r"], ["v"], name="custom", domain="com.example"),
        ],
        [vi("x", TensorProto.FLOAT, [2, 3])],
        [vi(n, TensorProto.FLOAT, None) for n in "yzwv"],
        [_i64("r", [2, 2]), numpy_helper.from_array(np.array([2, 2], np.int32), "r32")],
    )
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    reports = {r.name: r for r in dmltile.check_model(model, "4.1")}
    assert set(reports) == {
        "one_input",
        "three_inputs",
        "int32_repeats",
    }  # other domains' Tile is not ONNX Tile
    assert all(r.status == "invalid" for r in reports.values())
    assert (
        "has 2 inputs" in reports["one_input"].reason and "tensor(int32)" in reports["int32_repeats"].reason
    )
    del model.opset_import[:]
    assert all("no ai.onnx opset" in r.reason for r in dmltile.check_model(model, "4.1"))


def test_external_data_is_read_only_for_repeats(tmp_path):
    """Repeats stored as external data (next to the model) are read from there."""
    vi = helper.make_tensor_value_info
    model = _model(
        [helper.make_node("Tile", ["x", "r"], ["y"], name="t"), helper.make_node("Add", ["x", "w"], ["z"])],
        [vi("x", TensorProto.FLOAT, [64, 64])],
        [vi("y", TensorProto.FLOAT, None), vi("z", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.zeros((64, 64), np.float32), "w"), _i64("r", [2, 3])],
    )
    onnx.save(
        model,
        tmp_path / "m.onnx",
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="weights.bin",
        size_threshold=0,
    )
    [r] = dmltile.check_model(tmp_path / "m.onnx")
    assert (r.status, r.repeats, r.output_shape) == ("dispatch", [2, 3], [128, 192])
