"""check_model(): what onnxruntime's DirectML execution provider does with every Tile node of a model.

Each node gets one verdict (``status``):
* ``dispatch``: the provider runs it as the DirectML Tile in ``descriptor``, compiled once (at
  session creation, inside the fused DirectML graph, when its repeats are an initializer and its
  shapes are static).
* ``dispatch-per-value``: the provider runs it on DirectML, but its repeats are fed at run time or
  its input shape is symbolic: the operator is compiled at the first run, outside the fused graph,
  and again for every run whose values differ from the first run's (DML504, DML505).
* ``empty``: the output has no elements; nothing is dispatched.
* ``cpu-fallback``: the provider does not take the node (or the model): it runs on the CPU EP.
* ``invalid``: no onnxruntime execution provider runs it (ONNX rejects the node, or onnxruntime
  has no kernel for it).

``reason`` is the node's own verdict and reads the same at every feature level; ``level_reason``
adds what the level changes. Concrete values turn symbolic and run-time cases into exact
descriptors: ``dims`` (symbolic dimension sizes), ``inputs`` (whole input shapes), ``repeats``
(per node). An OpenVINO IR (``.xml``) is read with the ``openvino`` extra (``openvino_ir``).
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from ..core.enums import FeatureLevel
from ..core.operator import OperatorDesc
from ..errors import FrameworkError, InputError
from ..validate.levels import DEFAULT_FEATURE_LEVEL, known_levels, parse_feature_level
from .from_onnx import check_type, tile_version
from .lowering import lower
from .mapping import lowest_dispatch_level, map_to_directml
from .onnx_graph import ONNX_TYPES, Scope, infer, read_model, text, tile_nodes, with_values
from .provider import (
    MIN_LEVEL,
    MIN_OPSET,
    NO_EP_TYPES,
    PER_VALUE_COST,
    PROVIDER,
    below_min_level,
    device_type_findings,
    first_directml,
    provider_min_level,
    provider_plan,
    registration_verdict,
)

__all__ = ["ONNX_TYPES", "STATUSES", "TileNodeReport", "check_model", "check_model_levels"]
STATUSES = ("dispatch", "dispatch-per-value", "empty", "cpu-fallback", "invalid")
RUNS_ON_GPU = ("dispatch", "dispatch-per-value", "empty")


@dataclass
class TileNodeReport:
    """What the DirectML EP does with one Tile node at one feature level (``status``: see STATUSES)."""

    name: str
    opset: int | None
    input_shape: list | None  # ints, symbolic names, "?" for unknown dims; None if the rank is unknown
    input_type: str | None
    repeats: list[int] | None  # None when not known before run time
    repeats_source: str = ""
    output_shape: list | None = None
    status: str = "invalid"
    reason: str | None = None  # the node's own verdict: the same at every feature level
    descriptor: OperatorDesc | None = None
    min_feature_level: FeatureLevel | None = None
    steps: list[str] = field(default_factory=list)
    feature_level: FeatureLevel | None = None
    level_reason: str | None = None  # what this feature level adds to the verdict
    min_directml: str | None = None  # the first DirectML release with min_feature_level
    fused: bool = False  # compiled into the provider's fused DirectML graph at session creation
    compiled: str | None = None  # when the provider compiles the DirectML operator
    rules: list[str] = field(default_factory=list)  # the DML5xx provider rules behind the verdict
    warnings: list[str] = field(default_factory=list)
    supplied: list[str] = field(default_factory=list)  # values given by the caller, not the model
    framework: str = "onnx"

    def to_dict(self) -> dict:
        """The report as JSON-ready data (the descriptor in canonical wrapped form, levels dotted)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["descriptor"] = self.descriptor.to_dict() if self.descriptor is not None else None
        data["min_feature_level"] = self.min_feature_level.dotted if self.min_feature_level else None
        data["feature_level"] = self.feature_level.dotted if self.feature_level else None
        return data


@dataclass
class _Node:
    """What is known of a node whatever the level: the report's level-independent fields and the values."""

    report: TileNodeReport
    shape: tuple[int, ...] | None = None  # the framework's (promoted) input shape, when every dim is known
    reps: tuple[int, ...] | None = None  # the framework's effective repeats, when known
    dtype: str | None = None
    per_value: bool = False  # values only known at run time (before the caller supplied any)


def _symbolic_output(shape: list, repeats: list[int]) -> list:
    return [
        s * r if isinstance(s, int) else (0 if r == 0 else s if r == 1 else f"{s}*{r}")
        for s, r in zip(shape, repeats, strict=False)
    ]


def _structural_problem(node, opset: int | None) -> str | None:
    if opset is None:
        return "the model imports no ai.onnx opset, so no Tile version applies"
    version = tile_version(opset)
    wanted = ["input", "tiles", "axis"] if version == 1 else ["input", "repeats"]
    if len(node.input) != len(wanted) or not all(node.input):
        return f"ONNX Tile-{version} has {len(wanted)} inputs ({', '.join(wanted)}); this node has {len(node.input)}"
    return None


def _per_value_reason(what: str, fix: str) -> str:
    return (
        f"{what}: {PROVIDER} keeps the node out of the fused DirectML graph and compiles its Tile "
        "operator at the first run, for the values that run brings; any later run whose values differ "
        f"from the first run's compiles a new operator for that run alone (it is not cached); {PER_VALUE_COST}. "
        f"{fix}"
    )


def _invalid(node: _Node, reason: str) -> _Node:
    node.report.status, node.report.reason = "invalid", reason
    return node


def _judge_type(rep: TileNodeReport, version: int) -> str | None:
    """The level-independent verdict from the opset and element type, or None when the provider takes both."""
    found = registration_verdict(rep.opset, rep.input_type)
    if rep.input_type is None and (found is None or found.status != "invalid"):
        return "invalid"  # onnxruntime needs every type to load the model
    if found is None:
        return None
    rep.rules.append(found.code)
    return found.status


TYPE_REASONS = {
    "no-type": (
        "the input's element type is unknown: onnx shape inference found none, and onnxruntime "
        "needs every type to load the model"
    ),
    "tile-1": (
        "ONNX Tile-1 (opsets 1-5): no onnxruntime execution provider implements it (the CPU EP's Tile starts at "
        f"opset 6, {PROVIDER}'s at {MIN_OPSET}); convert the model to opset 7 or later (DML501)"
    ),
    "opset": (
        f"{PROVIDER} registers Tile for opsets {MIN_OPSET}-12 and 13 on; at opset {{opset}} the node runs on "
        f"CPUExecutionProvider (DML501). Convert the model to opset {MIN_OPSET} or later to keep it on the GPU"
    ),
    "string": (
        f"{PROVIDER} registers Tile for numeric and bool types only; a string Tile runs on CPUExecutionProvider, "
        "with copies between GPU and CPU around it (DML502)"
    ),
    "no-ep": (
        "no onnxruntime execution provider tiles {dtype}: the CPU EP has no bfloat16 Tile kernel and onnxruntime "
        f"has no complex tensors, and {PROVIDER} registers neither (DML502)"
    ),
}


def _analyse(node, scope: Scope, opset: int | None, name: str, overrides: dict, static_shapes: dict) -> _Node:
    """The level-independent facts and verdict of one ONNX Tile node."""
    shape, dtype = scope.shape_and_type(node.input[0]) if node.input else (None, None)
    rep = TileNodeReport(text(name), opset, shape, dtype, None)
    out = _Node(rep, dtype=dtype)
    problem = _structural_problem(node, opset)
    if problem:
        return _invalid(out, problem)
    assert opset is not None  # _structural_problem says so otherwise
    version = tile_version(opset)
    rep.repeats_source = "; ".join(
        scope.constants[n].source if n in scope.constants else scope.runtime_source(n) for n in node.input[1:]
    )
    if version != 1:
        _, repeats_type = scope.shape_and_type(node.input[1])
        if repeats_type not in (None, "int64"):
            return _invalid(
                out,
                f"ONNX Tile-{version}: repeats has type tensor({repeats_type}); T1 allows tensor(int64) only",
            )
    if dtype is not None:
        try:
            check_type(version, dtype)
        except FrameworkError as e:
            return _invalid(out, str(e))
    constant = all(n in scope.constants for n in node.input[1:])
    key = next((k for k in (name, node.name, node.input[-1]) if k and k in overrides), None)
    values = None
    if key is not None and version != 1:
        overrides[key][1] = True
        values = [np.asarray(overrides[key][0], dtype=np.int64)]
        rep.supplied.append(f"repeats {overrides[key][0]} (--repeats {key})")
        rep.repeats_source += f"; values given: {list(overrides[key][0])}"
    elif constant:
        try:  # external data outside the model's folder, a FIFO, a truncated file: no runtime runs it
            values = [scope.constants[n].value(scope.base) for n in node.input[1:]]
        except InputError as e:
            return _invalid(out, str(e))
    symbolic = [d for d in shape if not isinstance(d, int)] if shape is not None else None
    inferred_out, _ = scope.shape_and_type(node.output[0]) if node.output else (None, None)
    if inferred_out is not None:  # names onnx made up for unknown dims read as unknown
        inferred_out = ["?" if isinstance(d, str) and d.startswith("unk__") else d for d in inferred_out]
    if inferred_out is not None and values is None and "only a default" in rep.repeats_source:
        inferred_out = ["?"] * len(inferred_out)  # onnx inferred it from the default, callers may feed others
    rep.output_shape = inferred_out
    if values is not None and shape is not None:
        repeats, tiles, axis = (None, values[0], values[1]) if len(values) == 2 else (values[0], None, None)
        try:  # symbolic dims as 1: the framework's rules do not depend on them
            plan = lower(
                "onnx",
                [d if isinstance(d, int) else 1 for d in shape],
                repeats,
                dtype or "float32",
                opset,
                MIN_LEVEL,
                tiles,
                axis,
            )
        except FrameworkError as e:
            return _invalid(out, str(e))
        ft = plan._node
        assert ft is not None  # lower() always keeps the framework's node
        rep.repeats, rep.steps = [int(r) for r in plan.repeats], list(ft.steps)
        rep.output_shape = _symbolic_output(shape, rep.repeats) if symbolic else list(plan.output_shape)
        out.reps = tuple(ft.effective_repeats)
        if not symbolic:
            out.shape = tuple(ft.shape)
    elif values is not None and version != 1:
        rep.repeats = [int(r) for r in np.asarray(values[0]).reshape(-1)]
    kind = _judge_type(rep, version)
    if kind is not None:
        reason_key = "tile-1" if version == 1 else "no-type" if dtype is None else None
        if reason_key is None:
            reason_key = "no-ep" if dtype in NO_EP_TYPES else "opset" if opset < MIN_OPSET else "string"
        rep.status, rep.reason = kind, TYPE_REASONS[reason_key].format(opset=opset, dtype=dtype)
        return out
    if rep.output_shape is not None and 0 in rep.output_shape:
        rep.status = "empty"
        rep.reason = f"the output shape {rep.output_shape} has no elements, so nothing is dispatched"
        return out
    model_static = static_shapes.get(name, False)
    if values is None or shape is None or symbolic:
        out.per_value = True
        rep.status = "dispatch-per-value"
        what = []
        if values is None:
            noun = "tiles and axis are" if version == 1 else "repeats is"
            what.append(
                f"{noun} not constant ({rep.repeats_source}) but a required constant CPU input (DML504)"
            )
        if shape is None:
            what.append("the input's rank is unknown (shape inference found none)")
        elif symbolic:
            what.append(f"input dims {symbolic} are symbolic, known only at run time (DML505)")
        fix = []
        if values is None:
            fix.append(f"--repeats {name}=... gives the exact descriptor; an initializer would fuse it")
            if "only a default" in rep.repeats_source:
                fix.append(
                    "the provider's partitioner finds names with GetInitializedTensor, which may see this default "
                    "and fuse the node with it: feed other values only if you have checked that on your version"
                )
        if symbolic:
            fix.append(
                "--dim NAME=VALUE (onnxruntime: SessionOptions.add_free_dimension_override_by_name) gives the exact "
                "descriptor and a fused node"
            )
        rep.rules += ["DML504"] if values is None else []
        rep.rules += ["DML505"] if symbolic or shape is None else []
        fix_text = "; ".join(fix)
        rep.reason = _per_value_reason(
            "; ".join(what), fix_text[:1].upper() + fix_text[1:] + "." if fix else ""
        )
        rep.compiled = "at the first run, and again for each run whose values differ from the first run's"
        return out
    rep.status = "dispatch"
    from_model = constant and key is None and model_static
    if from_model:
        rep.fused, rep.compiled = True, "once, at session creation, inside the fused DirectML graph"
    elif key is not None and not constant:
        rep.compiled = (
            "at the first run, outside the fused graph (and again for any run whose repeats differ)"
        )
        rep.reason = (
            f"repeats come from the model at run time ({rep.repeats_source}); this is the descriptor {PROVIDER} "
            "compiles for the values given. It keeps the node out of the fused graph and compiles it at the first "
            "run, and again for any run whose repeats differ (DML504); an initializer would fuse it"
        )
        rep.rules.append("DML504")
    else:
        rep.fused, rep.compiled = True, "once, at session creation, inside the fused DirectML graph"
        if not model_static:
            rep.reason = (
                "input shape from the values given; fused as shown when onnxruntime knows the same sizes "
                "(SessionOptions.add_free_dimension_override_by_name), otherwise compiled at the first run (DML505)"
            )
    for found in device_type_findings(dtype):
        rep.rules.append(found.code)
        rep.warnings.append(f"{found.message} ({found.code})")
    return out


def _directml_itself(node: _Node, level: FeatureLevel) -> str:
    """What DirectML at ``level`` would take (dmltile's own lowering), for a level where the provider does not start."""
    if node.shape is not None and node.reps is not None and node.dtype:
        plan = lower("onnx", node.shape, list(node.reps), node.dtype, 13, level)
        if plan.status == "dispatch":
            return f"DirectML itself takes it at {level.dotted} as dmltile lowers it (dmltile.lower)"
        if plan.unsupported_reason:
            first = plan.min_feature_level
            return (
                "DirectML itself: "
                + plan.unsupported_reason
                + (f" (dispatches from {first.dotted})" if first else "")
            )
    if node.dtype:
        first = lowest_dispatch_level((2,), (1,), node.dtype)
        if first is not None and first > level:
            return f"DirectML itself tiles {node.dtype} from {first.dotted}"
    return ""


def _at_level(node: _Node, level: FeatureLevel) -> TileNodeReport:
    """The node's report at one level: the level-independent verdict, plus what the level changes."""
    rep = copy.deepcopy(node.report)
    rep.feature_level = level
    if rep.status in ("invalid", "cpu-fallback"):
        return rep
    if rep.framework != "onnx":
        return _directml_at_level(node, rep, level)
    if rep.status == "dispatch":
        assert (
            node.shape is not None and node.reps is not None and node.dtype is not None
        )  # dispatch: all known
        plan = provider_plan(node.shape, node.reps, node.dtype, max(level, MIN_LEVEL))
        rep.steps += plan.steps
        rep.warnings += [f"{i.code} {i.message}" for i in plan.warnings]
        rep.min_feature_level = provider_min_level(node.shape, node.reps, node.dtype)
        if plan.descriptor is None:
            rep.status, rep.level_reason, rep.compiled, rep.fused = "cpu-fallback", plan.reason, None, False
            rep.rules.append("DML507")
            return rep
        rep.descriptor = plan.descriptor
        if any("DML507" in s for s in plan.steps):
            rep.rules.append("DML507")
    elif rep.status == "dispatch-per-value":
        rep.min_feature_level = MIN_LEVEL
    rep.min_directml = first_directml(rep.min_feature_level)
    if level < MIN_LEVEL:
        itself = _directml_itself(node, level)
        rep.status, rep.descriptor, rep.fused, rep.compiled = "cpu-fallback", None, False, None
        rep.level_reason = below_min_level() + (f"; {itself}" if itself else "")
        rep.rules.append("DML506")
    return rep


def _directml_at_level(node: _Node, rep: TileNodeReport, level: FeatureLevel) -> TileNodeReport:
    """A layer of another framework (no onnxruntime provider): dmltile's own lowering at the level."""
    if rep.status == "dispatch":
        assert (
            node.shape is not None and node.reps is not None and node.dtype is not None
        )  # dispatch: all known
        m = map_to_directml(node.shape, node.reps, node.dtype, level)
        rep.steps += m.steps
        rep.min_feature_level = lowest_dispatch_level(node.shape, node.reps, node.dtype)
        if m.descriptor is None:
            rep.status, rep.level_reason, rep.compiled = (
                "cpu-fallback",
                f"DirectML at {level.dotted}: {m.reason}",
                None,
            )
        rep.descriptor = m.descriptor
    elif rep.status == "dispatch-per-value" and node.dtype:
        rep.min_feature_level = lowest_dispatch_level((2,), (1,), node.dtype)
    rep.min_directml = first_directml(rep.min_feature_level)
    return rep


def _static_shapes(model, base: str, opset) -> dict[str, bool]:
    """Per Tile node: is its input shape static in the model as given? (The output's follows from it
    and the repeats; onnx's inference may leave it unknown where onnxruntime's knows it.)"""
    out = {}
    for name, node, scope in tile_nodes(model.graph, Scope(base)):
        shape = scope.shape_and_type(node.input[0])[0] if node.input else None
        out[name] = shape is not None and all(isinstance(d, int) for d in shape)
    return out


def _analyse_model(path: Any, dims, inputs, repeats) -> list[_Node]:
    if _is_openvino(path):
        from .openvino_ir import analyse_ir

        return analyse_ir(path, dims, inputs, repeats)
    model, base = read_model(path)
    original = infer(model)
    given = infer(with_values(model, dims, inputs)) if dims or inputs else original
    opsets = {imp.domain: imp.version for imp in model.opset_import}
    opset = opsets.get("", opsets.get("ai.onnx"))
    static = _static_shapes(original, base, opset)
    overrides = {k: [list(v), False] for k, v in (repeats or {}).items()}
    nodes = [
        _analyse(node, scope, opset, name, overrides, static)
        for name, node, scope in tile_nodes(given.graph, Scope(base))
    ]
    unused = [k for k, (_, used) in overrides.items() if not used]
    if unused:
        names = [n.report.name for n in nodes]
        raise InputError(
            f"--repeats {unused[0]}: no Tile node of the model has that name or repeats input; "
            + (f"its Tile nodes are {', '.join(names)}" if names else "it has no Tile nodes")
        )
    for n in nodes:
        if dims or inputs:
            shown = [f"{k}={v}" for k, v in (dims or {}).items()] + [
                f"{k}={','.join(map(str, v))}" for k, v in (inputs or {}).items()
            ]
            if not static.get(n.report.name, True) or n.report.supplied:
                n.report.supplied.append("shapes from " + ", ".join(shown))
    return nodes


def _is_openvino(path: Any) -> bool:
    try:
        return os.fspath(path).lower().endswith(".xml")
    except TypeError:
        return False


def check_model(
    path: Any,
    feature_level: Any = DEFAULT_FEATURE_LEVEL,
    dims: dict[str, int] | None = None,
    inputs: dict[str, list[int]] | None = None,
    repeats: dict[str, list[int]] | None = None,
) -> list[TileNodeReport]:
    """One report per Tile node of an ONNX model (subgraphs included) at ``feature_level`` (default: newest).

    ``path`` is a file path or an ``onnx.ModelProto`` (an OpenVINO IR ``.xml`` with the openvino
    extra). ``dims`` gives symbolic dimensions a size (``{"batch": 8}``), ``inputs`` whole input
    shapes (``{"x": [2, 3, 4]}``), ``repeats`` the repeats of a node, named by the node or by its
    repeats input (``{"y": [1, 2, 3]}``). Raises InputError when the model cannot be read or a
    name is not in it, ValueError for an unknown feature level.
    """
    level = parse_feature_level(feature_level)
    return [_at_level(n, level) for n in _analyse_model(path, dims, inputs, repeats)]


def check_model_levels(
    path: Any,
    levels: Any = None,
    dims: dict[str, int] | None = None,
    inputs: dict[str, list[int]] | None = None,
    repeats: dict[str, list[int]] | None = None,
) -> dict[str, list[TileNodeReport]]:
    """Per node name, its report at each level (every known level by default), the model read once."""
    chosen = [parse_feature_level(lv) for lv in levels] if levels is not None else list(known_levels())
    nodes = _analyse_model(path, dims, inputs, repeats)
    return {n.report.name: [_at_level(n, lv) for lv in chosen] for n in nodes}
