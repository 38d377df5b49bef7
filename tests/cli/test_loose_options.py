"""Options that used to be read loosely: `check --repeats` values, `run --output` naming a device."""

from __future__ import annotations

from pathlib import Path

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
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=10), path)
    result = invoke("check", path, "--repeats", f"t={value}")
    assert result.exit_code == 2 and "integers" in result.output
    assert invoke("check", path, "--repeats", "t=1x2").exit_code == 0  # "x" still separates


def test_run_output_to_a_device_is_refused_by_its_name_not_written_beside_it():
    result = invoke("run", "examples/doc_example.json", "--output", "/dev/null")
    assert result.exit_code == 2 and "/dev/null is not a regular file" in result.output
    assert not Path("/dev/null.npy").exists()
