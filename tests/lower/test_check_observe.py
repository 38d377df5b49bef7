"""`check --observe` and the onnxruntime-directml backend without the provider: how the log and the
profiler are read, which inputs a run gets, and the clear errors when the set-up is missing."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

import dmltile
from dmltile.cli import app
from dmltile.errors import InputError, UnsupportedError
from dmltile.execute.directml import ort_provider
from dmltile.lower.observe import comparable_verdict, generated_inputs, named_tiles

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

vi = helper.make_tensor_value_info

# ALL_LOG and PROFILE are what onnxruntime-directml 1.24.4 logged and profiled (ort_runner.exe);
# MIXED_LOG follows the per-provider form onnxruntime logs when nodes are split (not yet captured here).
MIXED_LOG = [
    {"severity": 0, "message": "Node placements"},
    {"severity": 0, "message": " Node(s) placed on [DmlExecutionProvider]. Number of nodes: 1"},
    {"severity": 0, "message": "  Tile (numbers)"},
    {"severity": 0, "message": " Node(s) placed on [CPUExecutionProvider]. Number of nodes: 1"},
    {"severity": 0, "message": "  Tile (words)"},
]
ALL_LOG = [
    {"severity": 0, "message": "Node placements"},
    {"severity": 0, "message": " All nodes placed on [DmlExecutionProvider]. Number of nodes: 1"},
]
PROFILE = [
    {"cat": "Session", "name": "model_run", "args": {}},
    {
        "cat": "Node",
        "name": "t_kernel_time",
        "args": {
            "provider": "DmlExecutionProvider",
            "op_name": "Tile",
            "input_type_shape": [{"float": [2, 3]}, {"int64": [2]}],
            "output_type_shape": [{"float": [4, 0]}],
        },
    },
]


def test_placement_lines_name_each_node_or_all():
    assert ort_provider.parse_placements(MIXED_LOG) == {
        "DmlExecutionProvider": ["numbers"],
        "CPUExecutionProvider": ["words"],
    }
    assert ort_provider.parse_placements(ALL_LOG) == {"DmlExecutionProvider": ["all"]}
    assert ort_provider.parse_placements([{"severity": 2, "message": "a warning"}]) == {}


def test_the_profiler_gives_provider_op_and_output_shape_per_node():
    run = ort_provider.ModelRun("m", "done")
    ort_provider.parse_profile(PROFILE, run)
    assert run.providers == {"t": "DmlExecutionProvider"} and run.ops == {"t": "Tile"}
    assert run.output_shapes == {"t": [[4, 0]]}


def test_request_lines_carry_every_type_as_the_runner_reads_it():
    words = np.array([["a", "bc"]], dtype=object)
    line = ort_provider.request_line(
        {"model": b"\x01\x02", "inputs": {"w": words, "b": np.array([True, False])}, "fusion": False}, 0
    )
    assert '"model":"0102"' in line and '"fusion":false' in line and '"dml":true' in line
    assert '"strings":["61","6263"]' in line and '"type":8' in line and '"shape":[1,2]' in line
    assert '"type":9,"shape":[2],"data":"0100"' in line
    back = ort_provider._decode_output({"type": 9, "shape": [2], "data": "0100"})
    assert back.dtype == np.bool_ and back.tolist() == [True, False]


def _two_tiles():
    graph = helper.make_graph(
        [
            helper.make_node("Tile", ["x", "r"], ["a"]),  # unnamed
            helper.make_node("Tile", ["a", "q"], ["y"], name="fed"),
        ],
        "g",
        [vi("x", TensorProto.INT32, ["batch", 3]), vi("q", TensorProto.INT64, [2])],
        [vi("y", TensorProto.INT32, None)],
        [numpy_helper.from_array(np.array([1, 2], np.int64), "r")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def test_generated_inputs_follow_the_values_given():
    model = _two_tiles()
    feeds, free = generated_inputs(model, dims={"batch": 4}, repeats={"fed": [3, 1]})
    assert feeds["x"].shape == (4, 3) and feeds["x"].dtype == np.int32 and free == {"batch": 4}
    assert feeds["q"].tolist() == [3, 1] and "r" not in feeds  # an initializer is not fed
    feeds, free = generated_inputs(model, shapes={"x": [2, 3]})
    assert free == {"batch": 2} and feeds["q"].tolist() == [1, 1]  # run-time repeats default to ones
    with pytest.raises(InputError, match="--dim batch=N"):
        generated_inputs(model)


def test_unnamed_tile_nodes_get_the_name_check_shows():
    named, names = named_tiles(_two_tiles())
    reports = dmltile.check_model(_two_tiles(), dims={"batch": 2})
    assert names == [r.name for r in reports] == ["(node 0: Tile)", "fed"]
    assert named.graph.node[0].name == "(node 0: Tile)"


def test_a_dispatch_outside_the_fused_graph_reads_as_per_value():
    assert comparable_verdict("dispatch", True) == "dispatch"
    assert comparable_verdict("dispatch", False) == "dispatch-per-value"
    assert comparable_verdict("cpu-fallback", False) == "cpu-fallback"


@pytest.fixture
def no_setup(tmp_path, monkeypatch):
    monkeypatch.setenv("DMLTILE_DIRECTML_HOME", str(tmp_path / "nothing"))


def test_without_the_set_up_the_backend_and_observe_say_how_to_install(no_setup, tmp_path):
    desc = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [2]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4]},
        "Repeats": [2],
    }
    with pytest.raises(UnsupportedError, match="dmltile directml setup"):
        dmltile.compile(desc, backend="onnxruntime-directml")
    path = tmp_path / "m.onnx"
    onnx.save(_two_tiles(), path)
    result = CliRunner().invoke(app, ["check", str(path), "--observe", "--dim", "batch=2"])
    assert result.exit_code == 2 and "dmltile directml setup" in result.output


def test_observe_options_that_do_not_go_together(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(_two_tiles(), path)
    runner = CliRunner()
    assert runner.invoke(app, ["check", str(path), "--wheel", "1.24.4"]).exit_code == 2
    assert runner.invoke(app, ["check", str(path), "--observe", "--all-levels"]).exit_code == 2


def _shape_gather_model(elem=TensorProto.FLOAT, x_dims=("n", 3)):
    """Tile(x, Gather(Shape(x), idx)) with idx a graph input: repeats computed from another input."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "idx"], ["r"]),
        helper.make_node("Tile", ["x", "r"], ["y"], name="t"),
    ]
    graph = helper.make_graph(
        nodes, "g", [vi("x", elem, list(x_dims)), vi("idx", TensorProto.INT64, [2])], [vi("y", elem, None)]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def test_values_feed_any_graph_input_in_its_type_and_shape():
    """--value gives an input the repeats are computed from its values, not random signed ones."""
    feeds, free = generated_inputs(_shape_gather_model(), dims={"n": 2}, values={"idx": [1, 0]})
    assert feeds["idx"].dtype == np.int64 and feeds["idx"].tolist() == [1, 0]
    assert feeds["x"].shape == (2, 3) and free == {"n": 2}
    with pytest.raises(InputError, match=r"\(2 values\); 3 given"):
        generated_inputs(_shape_gather_model(), dims={"n": 2}, values={"idx": [1, 0, 1]})
    with pytest.raises(InputError, match="--value nope"):
        generated_inputs(_shape_gather_model(), dims={"n": 2}, values={"nope": [1]})


def test_bfloat16_inputs_are_made_as_their_bits():
    """bfloat16 has no NumPy dtype: the input goes to the runner as uint16 bits tagged BFLOAT16, which
    are the upper halves of float32 values (so they read back as those floats, truncated)."""
    feeds, _ = generated_inputs(_shape_gather_model(TensorProto.BFLOAT16, (2, 3)), values={"idx": [0, 1]})
    x = feeds["x"]
    assert isinstance(x, ort_provider.TypedArray) and x.onnx_type == TensorProto.BFLOAT16
    assert x.array.dtype == np.uint16 and x.array.shape == (2, 3)
    as_float = (x.array.astype(np.uint32) << 16).view(np.float32)
    assert np.all(np.isfinite(as_float)) and np.any(as_float != 0)
    line = ort_provider._encode_input("x", x)
    assert line["type"] == TensorProto.BFLOAT16 and bytes.fromhex(line["data"]) == x.array.tobytes()


def test_value_without_observe_is_a_usage_error(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(_shape_gather_model(), path)
    result = CliRunner().invoke(app, ["check", str(path), "--value", "idx=1,0"])
    assert result.exit_code == 2 and "--observe" in result.output
