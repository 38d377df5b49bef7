"""What onnxruntime's constant folding makes of a Tile's repeats before the provider sees the graph.

At session creation onnxruntime's graph optimizer (ConstantFolding, on at the default optimization
level in both versions observed, 1.20.1 and 1.24.4) evaluates each deterministic node whose inputs
are all initializers, and replaces a Shape node whose input shape is fully known by its value. A
repeats input computed only from such values (Shape -> Tile; Shape -> Gather; Shape -> Slice ->
Concat; Add of two initializers) is an initializer by the time the provider partitions the graph, so
the provider fuses the node as if the model had written the constant. ``fold`` finds such a value
and computes it with onnx's reference evaluator.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .onnx_graph import Scope, onnx_modules, text

# The nodes a repeats computation is made of, which onnxruntime folds when their inputs are constant.
# Only these are evaluated here: each is cheap on the handful of values a shape holds (onnxruntime
# folds more, e.g. Expand or Range, whose outputs a hostile model could make huge).
FOLDED = {
    "Shape",
    "Gather",
    "Slice",
    "Concat",
    "Unsqueeze",
    "Squeeze",
    "Reshape",
    "Flatten",
    "Cast",
    "Identity",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Max",
    "Min",
    "Abs",
    "Neg",
}
MAX_NODES = 64  # a repeats computation is a few nodes; more is not worth evaluating here
MAX_CONSTANT = 64  # elements of an initializer it reads: shapes and indices, never weights


@dataclass
class Folded:
    """A value onnxruntime computes before partitioning: ``value``, the words for where it came from,
    and the values whose shapes its Shape nodes read."""

    value: np.ndarray
    source: str
    shapes_read: list[str] = field(default_factory=list)


def _small_constant(name: str, scope: Scope) -> bool:
    dims, _ = scope.constants[name].shape_and_type()
    return int(np.prod(dims or [1])) <= MAX_CONSTANT


def _walk(
    name: str, scope: Scope, picked: dict[str, Any], shapes: dict[str, list[int]], depth: int = 0
) -> bool:
    """Collect the nodes computing ``name`` from small constants and fully known shapes; False when
    one of them depends on anything else (or the computation is longer than MAX_NODES)."""
    if name in scope.constants:
        return _small_constant(name, scope)
    if name in picked or name in shapes:
        return True
    node = scope.producers.get(name)
    if node is None or depth > MAX_NODES or len(picked) > MAX_NODES:
        return False
    if node.domain not in ("", "ai.onnx") or node.op_type not in FOLDED:
        return False
    if node.op_type == "Shape":
        dims, _ = scope.shape_and_type(node.input[0])
        if dims is None or not all(isinstance(d, int) for d in dims):
            return False
        attrs = {a.name: a.i for a in node.attribute}
        start, end = attrs.get("start", 0), attrs.get("end", len(dims))
        shapes[name] = dims[slice(start, end if "end" in attrs else None)]
        picked[name] = node
        return True
    if not all(_walk(i, scope, picked, shapes, depth + 1) for i in node.input if i):
        return False
    for out in node.output:
        picked[out] = node
    return True


def _distinct(picked: dict[str, Any]) -> list[tuple[str, Any]]:
    """(first output, node) once per node (protobuf messages are not hashable), in the order picked."""
    seen: set[int] = set()
    out = []
    for name, node in picked.items():
        if id(node) not in seen:
            seen.add(id(node))
            out.append((name, node))
    return out


def _model(name: str, scope: Scope, picked: dict[str, Any], shapes: dict[str, list[int]], opsets: Any):
    onnx, numpy_helper = onnx_modules()
    helper = onnx.helper
    nodes, inits = [], {}
    for out, node in _distinct(picked):
        if node.op_type == "Shape":
            value = numpy_helper.from_array(np.asarray(shapes[out], np.int64))
            nodes.append(helper.make_node("Constant", [], [out], value=value))
            continue
        nodes.append(node)
        for i in node.input:
            if i in scope.constants and i not in inits:
                inits[i] = numpy_helper.from_array(np.asarray(scope.constants[i].value(scope.base)), i)
    if name in scope.constants:
        inits[name] = numpy_helper.from_array(np.asarray(scope.constants[name].value(scope.base)), name)
    graph = helper.make_graph(
        nodes,
        "fold",
        [],
        [helper.make_tensor_value_info(name, onnx.TensorProto.INT64, None)],
        list(inits.values()),
    )
    return helper.make_model(graph, opset_imports=list(opsets))


def fold(name: str, scope: Scope, opsets: Any) -> Folded | None:
    """The value of ``name`` when onnxruntime's constant folding computes it from initializers and
    fully known input shapes (at least one node of computation; a plain constant is not folding), or None."""
    if name in scope.constants or name not in scope.producers:
        return None
    picked: dict[str, Any] = {}
    shapes: dict[str, list[int]] = {}
    if not _walk(name, scope, picked, shapes):
        return None
    try:
        reference = importlib.import_module("onnx.reference")  # the onnx extra, loaded only to fold
        value = reference.ReferenceEvaluator(_model(name, scope, picked, shapes, opsets)).run(None, {})[0]
    except Exception:  # an op the reference evaluator lacks, or values it rejects: not modelled
        return None
    nodes = [node for _, node in _distinct(picked)]
    ops = [text(n.op_type) + (f" of '{text(n.input[0])}'" if n.op_type == "Shape" else "") for n in nodes]
    source = f"folded by onnxruntime's constant folding from {' -> '.join(ops)}"
    read = [text(n.input[0]) for n in nodes if n.op_type == "Shape"]
    return Folded(np.asarray(value), source, read)
