"""check_model(): what onnxruntime's DirectML execution provider does with every Tile node of a model.

Each node gets one verdict (``status``, judged on the ladder in ``node_report``); for the provider
they mean:
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

import functools
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.enums import FeatureLevel
from ..errors import FrameworkError, InputError
from ..validate.levels import DEFAULT_FEATURE_LEVEL, known_levels, parse_feature_level
from ..validate.rules.model_ir import ir_finding
from .folding import fold
from .framework import dtype_name
from .from_onnx import check_type, onnx_tile, tile_version
from .lowering import LoweringPlan, lower
from .mapping import lowest_dispatch_level, map_to_directml
from .node_report import (
    CPU_FALLBACK,
    DISPATCH,
    INVALID,
    PER_VALUE,
    RUNS_ON_GPU,
    SETTLED,
    STATUSES,
    TileNode,
    TileNodeReport,
    settle,
    symbolic_output,
)
from .onnx_graph import ONNX_TYPES, Scope, infer, read_model, text, tile_nodes, with_values
from .provider import (
    MIN_LEVEL,
    MIN_OPSET,
    PER_VALUE_COST,
    PROVIDER,
    below_min_level,
    device_type_findings,
    first_directml,
    provider_min_level,
    provider_plan,
    registration_verdict,
)

__all__ = ["ONNX_TYPES", "RUNS_ON_GPU", "STATUSES", "TileNodeReport", "check_model", "check_model_levels"]


def _structural_problem(node, opset: int | None) -> str | None:
    if opset is None:
        return "the model imports no ai.onnx opset, so no Tile version applies"
    version = tile_version(opset)
    wanted = ["input", "tiles", "axis"] if version == 1 else ["input", "repeats"]
    if len(node.input) != len(wanted) or not all(node.input):
        return f"ONNX Tile-{version} has {len(wanted)} inputs ({', '.join(wanted)}); this node has {len(node.input)}"
    return None


def _type_problem(node, scope: Scope, version: int, dtype: str | None) -> str | None:
    """Why ONNX's type constraints reject the node's repeats or input, or None."""
    if version != 1:
        _, repeats_type = scope.shape_and_type(node.input[1])
        if repeats_type not in (None, "int64"):
            return (
                f"ONNX Tile-{version}: repeats has type tensor({repeats_type}); T1 allows tensor(int64) only"
            )
    if dtype is not None:
        try:
            check_type(version, dtype)
        except FrameworkError as e:
            return str(e)
    return None


def _per_value_reason(what: str, fix: str) -> str:
    return (
        f"{what}: {PROVIDER} keeps the node out of the fused DirectML graph and compiles its Tile "
        "operator at the first run, for the values that run brings; any later run whose values differ "
        f"from the first run's compiles a new operator for that run alone (it is not cached); {PER_VALUE_COST}. "
        f"{fix}"
    )


TYPE_REASONS = {
    "no-type": (
        "the input's element type is unknown: onnx shape inference found none, and onnxruntime "
        "needs every type to load the model"
    ),
    "tile-1": (
        "ONNX Tile-1 (opsets 1-5): no onnxruntime execution provider implements it (the CPU EP's Tile and "
        f"{PROVIDER}'s start at opset {MIN_OPSET}); convert the model to opset {MIN_OPSET} or later (DML501)"
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


# Which reason each provider-registration finding gives, by (rule, status).
_REASON_KEYS = {
    ("DML501", INVALID): "tile-1",
    ("DML502", INVALID): "no-ep",
    ("DML502", CPU_FALLBACK): "string",
}


def _type_verdict(rep: TileNodeReport) -> tuple[str, str] | None:
    """(status, reason) when the Tile version, opset or element type keeps the node off the provider;
    None when the provider takes them. Adds the DML5xx rule behind it to ``rep.rules``."""
    dtype, opset = rep.input_type, rep.opset
    found = registration_verdict(opset, dtype)
    if dtype is None and (found is None or found.status != INVALID):
        return INVALID, TYPE_REASONS["no-type"]
    if found is None:
        return None
    rep.rules.append(found.code)
    key = _REASON_KEYS[(found.code, found.status)]
    return found.status, TYPE_REASONS[key].format(opset=opset, dtype=dtype)


def _override_key(node, name: str, overrides: dict) -> str | None:
    """The ``repeats`` key the caller named this node by (its display name, its name or its repeats input)."""
    return next((k for k in (name, node.name, node.input[-1]) if k and k in overrides), None)


def _repeat_values(node, scope: Scope, version: int, key: str | None, overrides: dict, rep: TileNodeReport):
    """The repeats (or tiles and axis) as arrays, from the caller or the model; None when known only at run
    time. InputError when the model's constant cannot be read."""
    if key is not None and version != 1:
        overrides[key][1] = True
        rep.supplied.append(f"repeats {overrides[key][0]} (--repeats {key})")
        rep.repeats_source += f"; values given: {list(overrides[key][0])}"
        return [np.asarray(overrides[key][0], dtype=np.int64)]
    if all(n in scope.constants for n in node.input[1:]):
        # external data outside the model's folder, a FIFO, a truncated file: InputError, no runtime runs it
        return [scope.constants[n].value(scope.base) for n in node.input[1:]]
    return None


def _inferred_output(node, scope: Scope, values, repeats_source: str) -> list | None:
    """The output shape onnx inferred, with the dims it only made up or guessed from a default as "?"."""
    inferred, _ = scope.shape_and_type(node.output[0]) if node.output else (None, None)
    if inferred is None:
        return None
    inferred = ["?" if isinstance(d, str) and d.startswith("unk__") else d for d in inferred]
    if values is None and "only a default" in repeats_source:
        return ["?"] * len(inferred)  # onnx inferred it from the default, callers may feed others
    return inferred


def _lower_values(tile: TileNode, shape: list, values: list, opset: int) -> None:
    """Repeats, steps and output shape from dmltile's lowering of the node (symbolic dims as 1: the
    framework's rules do not depend on them). FrameworkError when ONNX rejects the values."""
    rep = tile.report
    repeats, tiles, axis = (None, values[0], values[1]) if len(values) == 2 else (values[0], None, None)
    known = [d if isinstance(d, int) else 1 for d in shape]
    # ONNX's rules alone: the DirectML mapping is judged per level, later, by the provider's plan.
    ft = onnx_tile(known, repeats, dtype_name(tile.dtype or "float32"), opset, tiles, axis)
    rep.repeats, rep.steps = [int(r) for r in ft.repeats], list(ft.steps)
    symbolic = known != shape
    rep.output_shape = symbolic_output(shape, rep.repeats) if symbolic else list(ft.output_shape)
    tile.reps = tuple(ft.effective_repeats)
    if not symbolic:
        tile.shape = tuple(ft.shape)


def _run_time_reason(
    rep: TileNodeReport, name: str, version: int, values, symbolic: list | None
) -> str | None:
    """Why the node is compiled per value (DML504, DML505), with how to give the exact descriptor; None
    when its repeats and input shape are known."""
    shape = rep.input_shape
    if values is not None and shape is not None and not symbolic:
        return None
    what, fix = [], []
    if values is None:
        noun = "tiles and axis are" if version == 1 else "repeats is"
        what.append(f"{noun} not constant ({rep.repeats_source}) but a required constant CPU input (DML504)")
        fix.append(f"--repeats {name}=... gives the exact descriptor; an initializer would fuse it")
        if "only a default" in rep.repeats_source:
            fix.append(
                "the provider's partitioner finds names with GetInitializedTensor, which may see this default "
                "and fuse the node with it: feed other values only if you have checked that on your version"
            )
    if shape is None:
        what.append("the input's rank is unknown (shape inference found none)")
    elif symbolic:
        what.append(f"input dims {symbolic} are symbolic, known only at run time (DML505)")
        if "?" in symbolic:
            fix.append(
                "--input NAME=SIZES gives the exact descriptor; a dimension without a name stays per "
                "value in onnxruntime, which fixes symbolic dimensions only by name (name it to fuse the node)"
            )
        else:
            fix.append(
                "--dim NAME=VALUE (onnxruntime: SessionOptions.add_free_dimension_override_by_name) gives the exact "
                "descriptor and a fused node"
            )
    fix_text = "; ".join(fix)
    return _per_value_reason("; ".join(what), fix_text[:1].upper() + fix_text[1:] + "." if fix else "")


def _per_value(rep: TileNodeReport, values, symbolic: list | None) -> None:
    rep.rules += ["DML504"] if values is None else []
    rep.rules += ["DML505"] if symbolic or rep.input_shape is None else []
    rep.compiled = "at the first run, and again for each run whose values differ from the first run's"


def _dispatch(rep: TileNodeReport, from_run_time: bool, model_static: bool) -> None:
    """How the provider compiles a node it dispatches: fused at session creation, unless the caller gave
    the repeats of a run-time input (``from_run_time``); plus the device-dependent type warning."""
    if from_run_time:
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
                "sizes from the values given (the input's, or the shapes its repeats are folded from); fused as "
                "shown when onnxruntime knows the same sizes "
                "(SessionOptions.add_free_dimension_override_by_name), otherwise compiled at the first run (DML505)"
            )
    for found in device_type_findings(rep.input_type):
        rep.rules.append(found.code)
        rep.warnings.append(f"{found.message} ({found.code})")


@dataclass
class ModelFacts:
    """What every node's analysis needs of the model as written (before the caller's values)."""

    static_shapes: dict[str, bool]  # per Tile node: is its input shape static?
    scopes: dict[str, Scope]  # per Tile node: its scope in the model as written
    opsets: Any  # the model's opset imports
    given: bool  # the caller gave dims or input shapes


def _folded_values(node, name: str, scope: Scope, facts: ModelFacts, rep: TileNodeReport):
    """Repeats onnxruntime folds to a constant before partitioning: (values, constant in the model as
    written, symbolic dims they depend on that no name can fix); None when it does not fold them."""
    written = facts.scopes.get(name)
    if written is not None:
        folded = fold(node.input[1], written, facts.opsets)
        if folded is not None:
            rep.repeats_source = folded.source
            return [folded.value], True, []
    if not facts.given:
        return None
    folded = fold(node.input[1], scope, facts.opsets)
    if folded is None:
        return None
    rep.repeats_source = folded.source + " with the sizes given"
    unnamed = [v for v in folded.shapes_read if written and "?" in (written.shape_and_type(v)[0] or [])]
    return [folded.value], False, unnamed


def _values_known(node, name: str, scope: Scope, version: int, key, overrides: dict, facts: ModelFacts, rep):
    """(repeat values or None, constant when the provider sees the graph, input names whose unnamed dims
    the caller sized): the caller's or the model's values, else what onnxruntime folds them to."""
    values = _repeat_values(node, scope, version, key, overrides, rep)
    constant = all(n in scope.constants for n in node.input[1:])
    unnamed = _unnamed_dims(node, name, facts)
    if values is None and version != 1:
        found = _folded_values(node, name, scope, facts, rep)
        if found is not None:
            values, constant, unnamed_read = found
            unnamed += unnamed_read
    return values, constant, unnamed


def _analyse(
    node, scope: Scope, opset: int | None, name: str, overrides: dict, facts: ModelFacts
) -> TileNode:
    """The level-independent facts and verdict of one ONNX Tile node."""
    shape, dtype = scope.shape_and_type(node.input[0]) if node.input else (None, None)
    rep = TileNodeReport(text(name), opset, shape, dtype, None)
    tile = TileNode(rep, dtype=dtype)
    problem = _structural_problem(node, opset)
    if problem:
        return tile.reject(problem)
    assert opset is not None  # _structural_problem says so otherwise
    version = tile_version(opset)
    rep.repeats_source = "; ".join(
        scope.constants[n].source if n in scope.constants else scope.runtime_source(n) for n in node.input[1:]
    )
    problem = _type_problem(node, scope, version, dtype)
    if problem:
        return tile.reject(problem)
    key = _override_key(node, name, overrides)
    try:
        values, constant, unnamed = _values_known(node, name, scope, version, key, overrides, facts, rep)
    except InputError as e:
        return tile.reject(str(e))
    rep.output_shape = _inferred_output(node, scope, values, rep.repeats_source)
    symbolic = [d for d in shape if not isinstance(d, int)] if shape is not None else None
    if values is not None and shape is not None:
        try:
            _lower_values(tile, shape, values, opset)
        except FrameworkError as e:
            return tile.reject(str(e))
    elif values is not None and version != 1:
        rep.repeats = [int(r) for r in np.asarray(values[0]).reshape(-1)]
    run_time = _run_time_reason(rep, name, version, values, symbolic) or _unnamed_reason(unnamed)
    status = settle(tile, _type_verdict(rep), run_time)
    if status == PER_VALUE:
        _per_value(rep, values, symbolic or unnamed)
    elif status == DISPATCH:
        _dispatch(rep, key is not None and not constant, facts.static_shapes.get(name, False) and constant)
    return tile


def _unnamed_dims(node, name: str, facts: ModelFacts) -> list[str]:
    """The Tile's input, when the caller gave sizes for dims the model as written leaves symbolic without
    a name ("?"): no free-dimension override reaches them, so onnxruntime learns them at run time."""
    written = facts.scopes.get(name)
    if not facts.given or written is None or not node.input:
        return []
    dims = written.shape_and_type(node.input[0])[0] or []
    return [text(node.input[0])] if "?" in dims else []


def _unnamed_reason(unnamed: list[str]) -> str | None:
    if not unnamed:
        return None
    return _per_value_reason(
        f"the sizes given fill dimensions of {', '.join(sorted(set(unnamed)))} that the model leaves without a "
        "name: onnxruntime can fix a symbolic dimension only by its name "
        "(SessionOptions.add_free_dimension_override_by_name), so it learns these at run time (DML505)",
        "Name the dimensions (dim_param) and fix them by name to fuse the node.",
    )


@functools.lru_cache(maxsize=4096)
def _lowered(shape: tuple[int, ...], reps: tuple[int, ...], dtype: str, level: FeatureLevel) -> LoweringPlan:
    """dmltile's own lowering of a node, once per (shape, repeats, type, level): nodes alike share it."""
    return lower("onnx", shape, list(reps), dtype, 13, level)


def _directml_itself(node: TileNode, level: FeatureLevel) -> str:
    """What DirectML at ``level`` would take (dmltile's own lowering), for a level where the provider does not start."""
    if node.shape is not None and node.reps is not None and node.dtype:
        plan = _lowered(tuple(node.shape), tuple(node.reps), node.dtype, level)
        if plan.status == DISPATCH:
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


def _at_level(node: TileNode, level: FeatureLevel) -> TileNodeReport:
    """The node's report at one level: the level-independent verdict, plus what the level changes."""
    rep = node.report.copy()
    rep.feature_level = level
    if rep.status in SETTLED:
        return rep
    if rep.framework != "onnx":
        return _directml_at_level(node, rep, level)
    if rep.status == DISPATCH:
        assert (
            node.shape is not None and node.reps is not None and node.dtype is not None
        )  # dispatch: all known
        plan = provider_plan(node.shape, node.reps, node.dtype, max(level, MIN_LEVEL))
        rep.steps += plan.steps
        rep.warnings += [f"{i.code} {i.message}" for i in plan.warnings]
        rep.min_feature_level = provider_min_level(node.shape, node.reps, node.dtype)
        if plan.descriptor is None:
            rep.rules.append("DML507")
            return rep.fall_back(plan.reason)
        rep.descriptor = plan.descriptor
        if any("DML507" in s for s in plan.steps):
            rep.rules.append("DML507")
    elif rep.status == PER_VALUE:
        rep.min_feature_level = MIN_LEVEL
    rep.min_directml = first_directml(rep.min_feature_level)
    if level < MIN_LEVEL:
        itself = _directml_itself(node, level)
        rep.rules.append("DML506")
        rep.fall_back(below_min_level() + (f"; {itself}" if itself else ""))
    return rep


def _directml_at_level(node: TileNode, rep: TileNodeReport, level: FeatureLevel) -> TileNodeReport:
    """A layer of another framework (no onnxruntime provider): dmltile's own lowering at the level."""
    if rep.status == DISPATCH:
        assert (
            node.shape is not None and node.reps is not None and node.dtype is not None
        )  # dispatch: all known
        m = map_to_directml(node.shape, node.reps, node.dtype, level)
        rep.steps += m.steps
        rep.min_feature_level = lowest_dispatch_level(node.shape, node.reps, node.dtype)
        if m.descriptor is None:
            rep.fall_back(f"DirectML at {level.dotted}: {m.reason}")
        rep.descriptor = m.descriptor
    elif rep.status == PER_VALUE and node.dtype:
        rep.min_feature_level = lowest_dispatch_level((2,), (1,), node.dtype)
    rep.min_directml = first_directml(rep.min_feature_level)
    return rep


def _static_shapes(model, base: str | None) -> dict[str, bool]:
    """Per Tile node: is its input shape static in the model as given? (The output's follows from it
    and the repeats; onnx's inference may leave it unknown where onnxruntime's knows it.)"""
    out = {}
    for name, node, scope in tile_nodes(model.graph, Scope(base)):
        shape = scope.shape_and_type(node.input[0])[0] if node.input else None
        out[name] = shape is not None and all(isinstance(d, int) for d in shape)
    return out


def _check_overrides_used(overrides: dict, nodes: list[TileNode]) -> None:
    """InputError for a ``repeats`` key that named no Tile node."""
    unused = [k for k, (_, used) in overrides.items() if not used]
    if unused:
        names = [n.report.name for n in nodes]
        raise InputError(
            f"--repeats {unused[0]}: no Tile node of the model has that name or repeats input; "
            + (f"its Tile nodes are {', '.join(names)}" if names else "it has no Tile nodes")
        )


def _note_given_shapes(nodes: list[TileNode], static: dict[str, bool], dims, inputs) -> None:
    """Mark the nodes whose shapes come from the caller's ``dims``/``inputs`` rather than the model."""
    shown = [f"{k}={v}" for k, v in (dims or {}).items()]
    shown += [f"{k}={','.join(map(str, v))}" for k, v in (inputs or {}).items()]
    for n in nodes:
        if not static.get(n.report.name, True) or n.report.supplied:
            n.report.supplied.append("shapes from " + ", ".join(shown))


def _analyse_model(path: Any, dims, inputs, repeats) -> list[TileNode]:
    if _is_openvino(path):
        from .openvino_ir import analyse_ir  # the openvino extra, only for an IR

        return analyse_ir(path, dims, inputs, repeats)
    model, base = read_model(path)
    original = infer(model)
    given = infer(with_values(model, dims, inputs)) if dims or inputs else original
    opsets = {imp.domain: imp.version for imp in model.opset_import}
    opset = opsets.get("", opsets.get("ai.onnx"))
    static = _static_shapes(original, base)
    scopes = {name: scope for name, _, scope in tile_nodes(original.graph, Scope(base))}
    facts = ModelFacts(static, scopes, list(model.opset_import), bool(dims or inputs))
    overrides = {k: [list(v), False] for k, v in (repeats or {}).items()}
    nodes = [
        _analyse(node, scope, opset, name, overrides, facts)
        for name, node, scope in tile_nodes(given.graph, Scope(base))
    ]
    _check_overrides_used(overrides, nodes)
    if dims or inputs:
        _note_given_shapes(nodes, static, dims, inputs)
    _apply_ir_version(nodes, int(model.ir_version) if model.HasField("ir_version") else None)
    return nodes


def _apply_ir_version(nodes: list[TileNode], ir_version: int | None) -> None:
    """DML508: a model no measured onnxruntime loads makes every node invalid; one that some do not
    load gets the warning."""
    found = ir_finding(ir_version)
    if found is None:
        return
    for n in nodes:
        n.report.rules.append(found.code)
        if found.status == INVALID:
            n.reject(f"{found.message} ({found.code})")
            n.report.fused, n.report.compiled = False, None  # nothing loads, so nothing is compiled
        else:
            n.report.warnings.append(f"{found.message} ({found.code})")


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
