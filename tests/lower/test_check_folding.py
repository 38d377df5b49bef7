"""check_model against onnxruntime's constant folding: repeats computed from fully known shapes and
small initializers are folded before the provider partitions the graph (observed on both wheels in
golden_placement/fold/*), so the node is fused with the values numpy computes from the same shapes;
anything else stays a run-time input, and hostile computations are refused quickly."""

from __future__ import annotations

import numpy as np
import pytest

import dmltile

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

vi = helper.make_tensor_value_info


def _model(nodes, inputs, inits=()):
    nodes = [*nodes, helper.make_node("Tile", ["x", "r"], ["y"], name="t")]
    graph = helper.make_graph(nodes, "g", inputs, [vi("y", TensorProto.FLOAT, None)], list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _i64(name, values):
    return numpy_helper.from_array(np.asarray(values, np.int64), name)


X = vi("x", TensorProto.FLOAT, [2, 3])


@pytest.mark.parametrize(
    ("nodes", "inits", "expected"),
    [
        ([helper.make_node("Shape", ["x"], ["r"])], [], np.array([2, 3])),
        (
            [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "i"], ["r"])],
            [_i64("i", [1, 0])],
            np.array([2, 3])[[1, 0]],
        ),
        (
            [
                helper.make_node("Shape", ["x"], ["s"]),
                helper.make_node("Slice", ["s", "a", "b"], ["t"]),
                helper.make_node("Mul", ["t", "two"], ["r"]),
            ],
            [_i64("a", [0]), _i64("b", [2]), _i64("two", [2])],
            np.array([2, 3]) * 2,
        ),
        (
            [helper.make_node("Add", ["a", "b"], ["r"])],
            [_i64("a", [1, 4]), _i64("b", [2, 1])],
            np.array([3, 5]),
        ),
    ],
    ids=["shape", "shape-gather", "shape-slice-mul", "add"],
)
def test_folded_repeats_are_constants_with_numpys_values(nodes, inits, expected):
    [r] = dmltile.check_model(_model(nodes, [X], inits))
    assert r.status == "dispatch" and r.fused, r
    assert r.repeats == expected.tolist() and "constant folding" in r.repeats_source
    assert list(r.descriptor.output.sizes) == (np.array([2, 3]) * expected).tolist()


def test_an_op_not_evaluated_leaves_the_repeats_to_run_time():
    """Expand may be folded by onnxruntime, but its output can be made huge: check does not evaluate it."""
    nodes = [helper.make_node("Expand", ["a", "shape"], ["r"])]
    [r] = dmltile.check_model(_model(nodes, [X], [_i64("a", [2]), _i64("shape", [2])]))
    assert r.status == "dispatch-per-value" and "DML504" in r.rules


def test_weights_are_never_read_to_fold():
    """An initializer of more than a shape's handful of values is not read (Add of two big tensors)."""
    big = numpy_helper.from_array(np.ones(10_000, np.int64), "big")
    nodes = [helper.make_node("Add", ["big", "big"], ["s"]), helper.make_node("Gather", ["s", "i"], ["r"])]
    [r] = dmltile.check_model(_model(nodes, [X], [big, _i64("i", [0, 1])]))
    assert r.status == "dispatch-per-value"


def test_a_long_chain_is_not_followed():
    """A repeats computation thousands of nodes long is refused, not walked (no recursion limit hit)."""
    nodes = [helper.make_node("Shape", ["x"], ["s0"])]
    nodes += [helper.make_node("Identity", [f"s{i}"], [f"s{i + 1}"]) for i in range(5000)]
    nodes.append(helper.make_node("Identity", ["s5000"], ["r"]))
    [r] = dmltile.check_model(_model(nodes, [X]))
    assert r.status == "dispatch-per-value"


def test_sizes_given_fold_a_shape_of_another_input():
    """--input on the input a Shape reads: exact repeats; fused only when its dims have names."""
    z_named, z_unnamed = vi("z", TensorProto.FLOAT, ["m", "k"]), vi("z", TensorProto.FLOAT, [None, None])
    nodes = [helper.make_node("Shape", ["z"], ["r"])]
    [named] = dmltile.check_model(_model(nodes, [X, z_named]), inputs={"z": [2, 3]})
    assert (
        named.status == "dispatch"
        and named.repeats == [2, 3]
        and "with the sizes given" in named.repeats_source
    )
    [unnamed] = dmltile.check_model(_model(nodes, [X, z_unnamed]), inputs={"z": [2, 3]})
    assert unnamed.status == "dispatch-per-value" and unnamed.repeats == [2, 3]
    assert "without a name" in unnamed.reason
    [alone] = dmltile.check_model(_model(nodes, [X, z_named]))
    assert alone.status == "dispatch-per-value" and alone.repeats is None
