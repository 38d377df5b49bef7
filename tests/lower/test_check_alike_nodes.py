"""A model's nodes alike cost one judgement: `check --all-levels` of a model with many equal Tile
nodes asks DirectML's rules about each distinct (shape, repeats, type, level) once, so its work grows
with the distinct nodes and the levels, not with the nodes times the levels. Counted by wrapping the
validator the lowering calls (it still runs), never timed."""

from __future__ import annotations

import numpy as np
import pytest

from dmltile.lower import mapping, model_check, provider
from dmltile.validate.levels import known_levels

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def _model(shapes: list[tuple[int, ...]], repeats=(1, 2, 3)):
    """One Tile node per entry of ``shapes``, each on its own input, all by the same repeats."""
    nodes, inputs, outputs = [], [], []
    for i, shape in enumerate(shapes):
        nodes.append(helper.make_node("Tile", [f"x{i}", "r"], [f"y{i}"], name=f"t{i}"))
        inputs.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, list(shape)))
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None))
    r = numpy_helper.from_array(np.array(repeats, np.int64), "r")
    graph = helper.make_graph(nodes, "g", inputs, outputs, [r])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _judgements(monkeypatch, model) -> int:
    """How many descriptors DirectML's rules judge while every node is checked at every level."""
    for cached in (provider._judged_plan, mapping._mapped, model_check._lowered):
        cached.cache_clear()
    calls = []

    def counted(real):
        def judge(*args, **kwargs):
            calls.append(args)
            return real(*args, **kwargs)

        return judge

    monkeypatch.setattr(provider, "validate", counted(provider.validate))
    monkeypatch.setattr(mapping, "validate", counted(mapping.validate))
    model_check.check_model_levels(model)
    return len(calls)


def test_equal_nodes_are_judged_once_per_level(monkeypatch):
    one = _judgements(monkeypatch, _model([(2, 3, 4)]))
    many = _judgements(monkeypatch, _model([(2, 3, 4)] * 40))
    two_kinds = _judgements(monkeypatch, _model([(2, 3, 4)] * 20 + [(5, 3, 4)] * 20))
    assert one > 0
    assert many == one
    assert one < two_kinds <= 2 * one  # a second kind of node is judged too, once


def test_each_level_gets_lists_of_its_own(monkeypatch):
    """Alike nodes share a judgement, never the report lists a level appends to."""
    reports = model_check.check_model_levels(_model([(2, 3, 4)] * 2))
    first, second = reports["t0"], reports["t1"]
    assert len(first) == len(list(known_levels()))
    lists = [r.steps for r in first + second] + [r.warnings for r in first + second]
    assert len({id(x) for x in lists}) == len(lists)
    assert [r.to_dict() | {"name": ""} for r in first] == [r.to_dict() | {"name": ""} for r in second]
