"""The record check_model keeps for one Tile node, and the one ladder its verdict climbs.

A node's verdict (``status``) is one of STATUSES, best first:
* ``dispatch``: DirectML runs the node as the Tile in ``descriptor``;
* ``dispatch-per-value``: it runs on DirectML, but its repeats or input shape are known only at
  run time, so the operator is compiled per value;
* ``empty``: the output has no elements; nothing is dispatched;
* ``cpu-fallback``: DirectML does not take the node; it runs on the CPU;
* ``invalid``: nothing runs it (the framework rejects the node).

Every framework's node is judged on the same ladder, worst rung first (``settle``): a reason the
framework rejects the node (``invalid``), a reason the element type keeps it off DirectML
(``cpu-fallback`` or ``invalid``), an empty output, values known only at run time, else
``dispatch``. A feature level can only make the verdict worse (``worse``): ``invalid`` and
``cpu-fallback`` are SETTLED whatever the level. ``lower()`` speaks of one node at one level:
``dispatch``, ``empty``, or ``unsupported`` where a model's node would fall back to the CPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..core.enums import FeatureLevel
from ..core.operator import OperatorDesc

DISPATCH = "dispatch"
PER_VALUE = "dispatch-per-value"
EMPTY = "empty"
CPU_FALLBACK = "cpu-fallback"
INVALID = "invalid"
UNSUPPORTED = "unsupported"  # lower()'s word for a level that has no descriptor for the node

STATUSES = (DISPATCH, PER_VALUE, EMPTY, CPU_FALLBACK, INVALID)  # best first
RUNS_ON_GPU = (DISPATCH, PER_VALUE, EMPTY)  # nothing of the node runs on the CPU
SETTLED = (CPU_FALLBACK, INVALID)  # verdicts of the node itself, the same at every feature level


def worse(a: str, b: str) -> str:
    """The worse of two verdicts: how a node's own verdict and a level's combine."""
    return max(a, b, key=STATUSES.index)


@dataclass
class TileNodeReport:
    """What DirectML (through the model's runtime) does with one Tile node at one feature level."""

    name: str
    opset: int | None
    input_shape: list | None  # ints, symbolic names, "?" for unknown dims; None if the rank is unknown
    input_type: str | None
    repeats: list[int] | None  # None when not known before run time
    repeats_source: str = ""
    output_shape: list | None = None
    status: str = INVALID  # one of STATUSES
    reason: str | None = None  # the node's own verdict: the same at every feature level
    descriptor: OperatorDesc | None = None
    min_feature_level: FeatureLevel | None = None
    steps: list[str] = field(default_factory=list)
    feature_level: FeatureLevel | None = None
    level_reason: str | None = None  # what this feature level adds to the verdict
    min_directml: str | None = None  # the first DirectML release with min_feature_level
    fused: bool = False  # compiled into the provider's fused DirectML graph at session creation
    compiled: str | None = None  # when the DirectML operator is compiled
    rules: list[str] = field(default_factory=list)  # the DML5xx provider rules behind the verdict
    warnings: list[str] = field(default_factory=list)
    supplied: list[str] = field(default_factory=list)  # values given by the caller, not the model
    framework: str = "onnx"

    def copy(self) -> TileNodeReport:
        """A copy whose lists are its own (a level's verdict appends to them); what they hold (ints,
        names, sentences) and the descriptor are never changed in place, so they are shared."""
        lists: dict[str, Any] = {
            f.name: list(v) for f in fields(self) if isinstance(v := getattr(self, f.name), list)
        }
        return replace(self, **lists)

    def fall_back(self, level_reason: str | None) -> TileNodeReport:
        """What a feature level that cannot take the node makes of it: the CPU runs it, nothing is compiled
        for DirectML; ``level_reason`` says why."""
        self.status = worse(self.status, CPU_FALLBACK)
        self.level_reason, self.descriptor, self.fused, self.compiled = level_reason, None, False, None
        return self

    def to_dict(self) -> dict:
        """The report as JSON-ready data (the descriptor in canonical wrapped form, levels dotted)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["descriptor"] = self.descriptor.to_dict() if self.descriptor is not None else None
        data["min_feature_level"] = self.min_feature_level.dotted if self.min_feature_level else None
        data["feature_level"] = self.feature_level.dotted if self.feature_level else None
        return data


@dataclass
class TileNode:
    """What is known of a node whatever the level: its report's level-independent fields, and the
    framework's (promoted) input shape, effective repeats and element type where they are known."""

    report: TileNodeReport
    shape: tuple[int, ...] | None = None  # None unless every dim is known
    reps: tuple[int, ...] | None = None
    dtype: str | None = None

    def reject(self, reason: str) -> TileNode:
        """The top rung: the framework rejects the node, so nothing runs it."""
        self.report.status, self.report.reason = INVALID, reason
        return self


def symbolic_output(shape: list, repeats: list[int]) -> list:
    """The output shape of a Tile whose input has symbolic dims: ``"batch*2"`` where a name repeats."""
    return [
        s * r if isinstance(s, int) else (0 if r == 0 else s if r == 1 else f"{s}*{r}")
        for s, r in zip(shape, repeats, strict=False)
    ]


def settle(node: TileNode, type_verdict: tuple[str, str] | None, run_time_reason: str | None) -> str:
    """Put the node on the ladder below ``invalid`` and return its status: ``type_verdict`` (status,
    reason) when the element type decides, then an empty output, then values known only at run time
    (``run_time_reason`` says which), else ``dispatch`` (the caller says how it is compiled)."""
    rep = node.report
    if type_verdict is not None:
        rep.status, rep.reason = type_verdict
    elif rep.output_shape is not None and 0 in rep.output_shape:
        rep.status = EMPTY
        rep.reason = f"the output shape {rep.output_shape} has no elements, so nothing is dispatched"
    elif run_time_reason is not None:
        rep.status, rep.reason = PER_VALUE, run_time_reason
    else:
        rep.status = DISPATCH
    return rep.status
