"""`check --repeats NAME=VALUES`: every value is an integer, or the option is refused (exit 2)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.cli_support import invoke


@pytest.mark.parametrize("value", ["1,2,x", "1,,2", "1,2,", "2x"])
def test_a_repeats_value_that_is_no_integer_is_refused_not_dropped(tmp_path, value):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    init = numpy_helper.from_array(np.array([1, 2], np.int64), "r")
    node = helper.make_node("Tile", ["x", "r"], ["y"], name="t")
    graph = helper.make_graph([node], "g", [x], [y], initializer=[init])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    result = invoke("check", path, "--repeats", f"t={value}")
    assert result.exit_code == 2 and "integers" in result.output
    assert invoke("check", path, "--repeats", "t=1x2").exit_code == 0  # "x" still separates
