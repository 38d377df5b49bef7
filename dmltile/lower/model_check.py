"""check_model(): every Tile node of an ONNX model, lowered onto DirectML at one feature level.

A node's repeats are constant when an initializer (not overridable as a graph input) or a
``Constant`` node feeds them; anything else is computed at run time, which a DirectML Tile cannot
take: its Repeats and Sizes are part of the descriptor, fixed when the operator is compiled.
Symbolic dimensions are reported by name, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from ..core.enums import FeatureLevel
from ..core.operator import OperatorDesc
from ..errors import FrameworkError, InputError
from ..validate.levels import DEFAULT_FEATURE_LEVEL, parse_feature_level
from .from_onnx import check_type, tile_version
from .lowering import lower
from .onnx_graph import ONNX_TYPES, Scope, load_model, text, tile_nodes

__all__ = ["ONNX_TYPES", "STATUSES", "TileNodeReport", "check_model"]
STATUSES = ("dispatch", "empty", "unsupported", "invalid")
COMPILED = "DirectML's Tile takes Repeats and Sizes in its descriptor, fixed when the operator is compiled"


@dataclass
class TileNodeReport:
    """What one Tile node needs on DirectML: ``status`` is dispatch, empty, unsupported or invalid."""

    name: str
    opset: int | None
    input_shape: list | None  # ints, symbolic names, "?" for unknown dims; None if the rank is unknown
    input_type: str | None
    repeats: list[int] | None  # None when not constant
    repeats_source: str = ""
    output_shape: list | None = None
    status: str = "invalid"
    reason: str | None = None
    descriptor: OperatorDesc | None = None
    min_feature_level: FeatureLevel | None = None
    steps: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The report as JSON-ready data (the descriptor in canonical wrapped form, levels dotted)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["descriptor"] = self.descriptor.to_dict() if self.descriptor is not None else None
        data["min_feature_level"] = self.min_feature_level.dotted if self.min_feature_level else None
        return data


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


def _runtime_verdict(rep: TileNodeReport, node, scope: Scope, version: int) -> None:
    """Repeats (or Tile-1's tiles/axis) not constant: only the type rules can be checked."""
    _, repeats_type = scope.shape_and_type(node.input[1])
    if version != 1 and repeats_type not in (None, "int64"):
        rep.reason = (
            f"ONNX Tile-{version}: repeats has type tensor({repeats_type}); T1 allows tensor(int64) only"
        )
        return
    if rep.input_type is not None:
        try:
            check_type(version, rep.input_type)
        except FrameworkError as e:
            rep.reason = str(e)
            return
    what = "tiles and axis are" if version == 1 else "repeats is"
    rep.status, rep.reason = "unsupported", f"{what} not constant ({rep.repeats_source}); {COMPILED}"


def _constant_verdict(rep: TileNodeReport, node, scope: Scope, level: FeatureLevel) -> None:
    shape = rep.input_shape
    try:
        values = [scope.constants[n].value(scope.base) for n in node.input[1:]]
    except InputError as e:
        rep.reason = str(e)
        return
    repeats, tiles, axis = (None, values[0], values[1]) if len(values) == 2 else (values[0], None, None)
    if repeats is not None:
        if repeats.ndim != 1:
            rep.reason = (
                f"ONNX Tile: repeats must be a 1-D tensor (one value per input dimension); "
                f"{rep.repeats_source} has shape {list(repeats.shape)}"
            )
            return
        rep.repeats = repeats.tolist()
    symbolic = [d for d in shape if not isinstance(d, int)]
    try:  # symbolic dims as 1: the framework's rules do not depend on them
        plan = lower(
            "onnx",
            [d if isinstance(d, int) else 1 for d in shape],
            repeats,
            rep.input_type,
            rep.opset,
            level,
            tiles,
            axis,
        )
    except FrameworkError as e:
        rep.reason = str(e)
        return
    rep.repeats, rep.steps = [int(r) for r in plan.repeats], plan.steps
    rep.output_shape = _symbolic_output(shape, rep.repeats) if symbolic else list(plan.output_shape)
    if symbolic and plan.status == "dispatch":
        # Size-1 dims are the easiest to fit (they can be dropped), so only a dispatch depends on the real sizes.
        rep.status = "unsupported"
        rep.reason = (
            f"input dims {symbolic} are symbolic, known only at run time; {COMPILED}. "
            f"With those dims set to 1 it lowers from {plan.min_feature_level.dotted}"
        )
        return
    rep.status, rep.reason = plan.status, plan.unsupported_reason
    rep.descriptor, rep.min_feature_level = plan.descriptor, plan.min_feature_level


def _report_node(node, scope: Scope, opset: int | None, name: str, level: FeatureLevel) -> TileNodeReport:
    shape, dtype = scope.shape_and_type(node.input[0]) if node.input else (None, None)
    rep = TileNodeReport(text(name), opset, shape, dtype, None)
    rep.reason = _structural_problem(node, opset)
    if rep.reason:
        return rep
    version = tile_version(opset)
    rep.repeats_source = "; ".join(
        scope.constants[n].source if n in scope.constants else scope.runtime_source(n) for n in node.input[1:]
    )
    if not all(n in scope.constants for n in node.input[1:]):
        _runtime_verdict(rep, node, scope, version)
    elif dtype is None or shape is None:
        rep.status = "unsupported"
        rep.reason = f"the input's {'element type' if dtype is None else 'rank'} is unknown (shape inference found none)"
    else:
        _constant_verdict(rep, node, scope, level)
    return rep


def check_model(path: Any, feature_level: Any = DEFAULT_FEATURE_LEVEL) -> list[TileNodeReport]:
    """One report per Tile node of an ONNX model (subgraphs included), lowered at ``feature_level``.

    ``path`` is a file path or an ``onnx.ModelProto``. Raises InputError when the model cannot be
    read, ValueError for an unknown feature level.
    """
    level = parse_feature_level(feature_level)
    model, base = load_model(path)
    opsets = {imp.domain: imp.version for imp in model.opset_import}
    opset = opsets.get("", opsets.get("ai.onnx"))
    return [
        _report_node(node, scope, opset, name, level)
        for name, node, scope in tile_nodes(model.graph, Scope(base))
    ]
