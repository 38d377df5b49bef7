"""check_model(): every Tile node of an ONNX model, lowered onto DirectML at one feature level.

The model is read with ``onnx`` and shape inference fills in what it can. A node's repeats are
constant when an initializer (not overridable as a graph input) or a ``Constant`` node feeds them;
anything else is computed at run time, which a DirectML Tile cannot take: its Repeats and Sizes
are part of the descriptor, fixed when the operator is compiled. Symbolic dimensions are reported
by name, never guessed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from ..document import InputError
from ..enums import FeatureLevel
from ..operator import OperatorDesc
from ..errors import FrameworkError
from ..validation import parse_feature_level
from . import lower
from .framework import dtype_name
from .from_onnx import check_type, tile_version

# ONNX TensorProto element types in NumPy terms (the rest keep their lower-cased ONNX name,
# which ONNX Tile's type constraint then rejects by name).
ONNX_TYPES = {
    "FLOAT": "float32", "DOUBLE": "float64", "FLOAT16": "float16", "BFLOAT16": "bfloat16", "BOOL": "bool",
    "STRING": "string", "INT8": "int8", "INT16": "int16", "INT32": "int32", "INT64": "int64", "UINT8": "uint8",
    "UINT16": "uint16", "UINT32": "uint32", "UINT64": "uint64", "COMPLEX64": "complex64", "COMPLEX128": "complex128",
}
STATUSES = ("dispatch", "empty", "unsupported", "invalid")


@dataclass
class TileNodeReport:
    """What one Tile node needs on DirectML: ``status`` is dispatch, empty, unsupported or invalid."""

    name: str
    opset: int | None
    input_shape: list | None          # ints, symbolic names, "?" for unknown dims; None if the rank is unknown
    input_type: str | None
    repeats: list[int] | None         # None when not constant
    repeats_source: str
    output_shape: list | None
    status: str
    reason: str | None
    descriptor: OperatorDesc | None
    min_feature_level: FeatureLevel | None
    steps: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The report as JSON-ready data (the descriptor in canonical wrapped form, levels dotted)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["descriptor"] = self.descriptor.to_dict() if self.descriptor is not None else None
        data["min_feature_level"] = self.min_feature_level.dotted if self.min_feature_level else None
        return data


@dataclass
class _Scope:
    """What a graph (and the graphs around it) knows about value names."""

    types: dict[str, Any] = field(default_factory=dict)      # name -> TypeProto.tensor_type
    constants: dict[str, tuple[np.ndarray, str]] = field(default_factory=dict)
    producers: dict[str, Any] = field(default_factory=dict)  # name -> NodeProto
    defaults: set[str] = field(default_factory=set)          # graph inputs whose initializer is only a default

    def child(self) -> "_Scope":
        return _Scope(dict(self.types), dict(self.constants), dict(self.producers), set(self.defaults))


def _onnx():
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError:  # pragma: no cover - the onnx extra is installed by make test
        raise InputError("checking a model needs the onnx package: pip install 'dmltile[onnx]'") from None
    return onnx, numpy_helper


def _load(path: Any):
    onnx, _ = _onnx()
    if isinstance(path, onnx.ModelProto):
        return path, "<model>"
    name = os.fspath(path)
    if os.path.isdir(name):
        raise InputError(f"{name} is a directory, not an ONNX model file")
    try:
        model = onnx.load(name)
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except Exception as e:  # protobuf DecodeError and friends: the bytes are not a model
        raise InputError(f"{name}: not a readable ONNX model ({type(e).__name__}: {str(e)[:120]})") from None
    if not model.HasField("graph"):
        raise InputError(f"{name}: not a readable ONNX model (no graph)")
    try:
        model = onnx.shape_inference.infer_shapes(model)
    except Exception:
        pass  # inference is a help; nodes whose shapes stay unknown are reported as such
    return model, name


def _constant_value(node) -> np.ndarray | None:
    _, numpy_helper = _onnx()
    for a in node.attribute:
        if a.name == "value":
            return numpy_helper.to_array(a.t)
        if a.name == "value_int":
            return np.asarray(a.i, dtype=np.int64)
        if a.name == "value_ints":
            return np.asarray(list(a.ints), dtype=np.int64)
    return None


def _read_graph(graph, scope: _Scope) -> None:
    _, numpy_helper = _onnx()
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        if vi.type.HasField("tensor_type"):
            scope.types[vi.name] = vi.type.tensor_type
    inputs = {vi.name for vi in graph.input}
    for name in inputs:  # a graph input shadows outer names, and callers may feed any value
        scope.constants.pop(name, None)
    for init in graph.initializer:
        if init.name in inputs:  # an initializer that is also an input is only a default
            scope.defaults.add(init.name)
        else:
            scope.constants[init.name] = (numpy_helper.to_array(init), f"initializer '{init.name}'")
    for node in graph.node:
        for out in node.output:
            scope.producers[out] = node
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and node.output:
            value = _constant_value(node)
            if value is not None:
                scope.constants[node.output[0]] = (value, f"Constant node '{node.name or node.output[0]}'")


def _shape_and_type(scope: _Scope, name: str) -> tuple[list | None, str | None]:
    onnx, _ = _onnx()
    if name in scope.constants:
        arr = scope.constants[name][0]
        return list(arr.shape), dtype_name(arr.dtype)
    tt = scope.types.get(name)
    if tt is None:
        return None, None
    type_name = None
    if tt.elem_type:
        onnx_name = onnx.TensorProto.DataType.Name(tt.elem_type)
        type_name = ONNX_TYPES.get(onnx_name, onnx_name.lower())
    if not tt.HasField("shape"):
        return None, type_name
    dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim]
    return dims, type_name


def _runtime_source(scope: _Scope, name: str) -> str:
    node = scope.producers.get(name)
    if node is not None:
        return f"computed at run time by {node.op_type} node '{node.name or name}'"
    default = " (its initializer is only a default that callers may replace)" if name in scope.defaults else ""
    return f"graph input '{name}', fed at run time{default}"


def _symbolic_output(shape: list, repeats: list[int]) -> list:
    return [s * r if isinstance(s, int) else (0 if r == 0 else s if r == 1 else f"{s}*{r}") for s, r in zip(shape, repeats)]


def _report_node(node, scope: _Scope, opset: int | None, name: str, level) -> TileNodeReport:
    shape, dtype = _shape_and_type(scope, node.input[0]) if node.input else (None, None)
    rep = TileNodeReport(name, opset, shape, dtype, None, "", None, "invalid", None, None, None)
    if opset is None:
        rep.reason = "the model imports no ai.onnx opset, so no Tile version applies"
        return rep
    version = tile_version(opset)
    wanted = ["input", "tiles", "axis"] if version == 1 else ["input", "repeats"]
    if len(node.input) != len(wanted) or not all(node.input):
        rep.reason = f"ONNX Tile-{version} has {len(wanted)} inputs ({', '.join(wanted)}); this node has {len(node.input)}"
        return rep
    consts = {n: scope.constants.get(n) for n in node.input[1:]}
    runtime = [n for n, c in consts.items() if c is None]
    if version != 1 and consts[node.input[1]] is not None:
        rep.repeats = consts[node.input[1]][0].tolist()
    rep.repeats_source = "; ".join(c[1] if c is not None else _runtime_source(scope, n) for n, c in consts.items())
    if runtime and version != 1:
        _, r_type = _shape_and_type(scope, node.input[1])
        if r_type is not None and r_type != "int64":
            rep.reason = f"ONNX Tile-{version}: repeats has type tensor({r_type}); T1 allows tensor(int64) only"
            return rep
    rep.status = "unsupported"
    if dtype is None:
        rep.reason = "the input's element type is unknown (shape inference found none)"
        return rep
    if shape is None:
        rep.reason = "the input's rank is unknown (shape inference found no shape)"
        return rep
    symbolic = [d for d in shape if not isinstance(d, int)]
    concrete = [d if isinstance(d, int) else 1 for d in shape]
    if runtime:
        try:  # the node's type rule still applies
            check_type(version, dtype)
        except FrameworkError as e:
            rep.status, rep.reason = "invalid", str(e)
            return rep
        rep.reason = (f"{' and '.join(wanted[1:]) if version == 1 else 'repeats'} "
                      f"{'are' if version == 1 else 'is'} not constant ({rep.repeats_source}); DirectML's Tile takes "
                      "Repeats in its descriptor, fixed when the operator is compiled")
        return rep
    values = [consts[n][0] for n in node.input[1:]]
    args = (None, values[0], values[1]) if version == 1 else (values[0], None, None)
    try:
        plan = lower("onnx", concrete, args[0], dtype, opset, level, args[1], args[2])
    except FrameworkError as e:
        rep.status, rep.reason = "invalid", str(e)
        return rep
    if version == 1:
        rep.repeats = [int(r) for r in plan.repeats]
    rep.steps = plan.steps
    if symbolic and plan.status == "dispatch":
        # Size-1 dims are the easiest to fit (they can be dropped), so only a dispatch depends on the real sizes.
        rep.output_shape = _symbolic_output(shape, list(plan.repeats))
        rep.reason = (f"input dims {symbolic} are symbolic: known only at run time, while DirectML's Sizes are fixed "
                      f"when the operator is compiled; with those dims set to 1 it lowers from "
                      f"{plan.min_feature_level.dotted}")
        return rep
    rep.output_shape = list(plan.output_shape) if not symbolic else _symbolic_output(shape, list(plan.repeats))
    rep.status, rep.reason = plan.status, plan.unsupported_reason
    rep.descriptor, rep.min_feature_level = plan.descriptor, plan.min_feature_level
    return rep


def _walk(graph, scope: _Scope, opset: int | None, prefix: str, level, out: list) -> None:
    _read_graph(graph, scope)
    onnx, _ = _onnx()
    for i, node in enumerate(graph.node):
        if node.op_type == "Tile" and node.domain in ("", "ai.onnx"):
            out.append(_report_node(node, scope, opset, prefix + (node.name or f"(node {i}: Tile)"), level))
        for a in node.attribute:
            subgraphs = [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)
            for sub in subgraphs:
                _walk(sub, scope.child(), opset, f"{prefix}{node.name or node.op_type}/{a.name}/", level, out)


def check_model(path: Any, feature_level: Any = "4.1") -> list[TileNodeReport]:
    """One report per Tile node of an ONNX model (subgraphs included), lowered at ``feature_level``.

    ``path`` is a file path or an ``onnx.ModelProto``. Raises InputError when the model cannot be
    read, ValueError for an unknown feature level.
    """
    level = parse_feature_level(feature_level)
    model, _ = _load(path)
    opsets = {imp.domain: imp.version for imp in model.opset_import}
    opset = opsets.get("", opsets.get("ai.onnx"))
    reports: list[TileNodeReport] = []
    _walk(model.graph, _Scope(), opset, "", level, reports)
    return reports
