"""Lowering: a framework's Tile node (ONNX, OpenVINO, numpy.tile) onto DML_TILE_OPERATOR_DESC.

``lower()`` applies the framework's rules (``from_onnx``, ``from_openvino``, ``from_numpy``), then
maps the result onto DirectML at a feature level (``mapping``). ``check_model`` (``model_check``)
does it for every Tile node of a model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.enums import FeatureLevel
from ..core.operator import OperatorDesc
from ..errors import LoweringError, UnsupportedError
from ..execute.compile import CompiledTile, compile
from ..validate.levels import DEFAULT_FEATURE_LEVEL, parse_feature_level
from .framework import FrameworkTile, dtype_name, element_count
from .from_numpy import numpy_tile
from .from_onnx import onnx_tile
from .from_openvino import openvino_tile
from .mapping import lowest_dispatch_level, map_to_directml
from .node_report import DISPATCH, EMPTY, UNSUPPORTED

FRAMEWORKS = ("onnx", "openvino", "numpy")


@dataclass
class LoweringPlan:
    """How one framework Tile node runs on DirectML at one feature level.

    ``status`` is ``"dispatch"`` (``descriptor`` runs it), ``"empty"`` (the output has no elements,
    so nothing is dispatched) or ``"unsupported"`` (``unsupported_reason`` says why).
    ``min_feature_level`` is the lowest level at which the node dispatches (None when it never
    does: empty outputs need no dispatch, unsupported ones cannot have one).
    """

    framework: str
    operator: str
    input_shape: tuple[int, ...]
    repeats: tuple[int, ...]
    dtype: str
    feature_level: FeatureLevel
    output_shape: tuple[int, ...]
    descriptor: OperatorDesc | None
    unsupported_reason: str | None
    min_feature_level: FeatureLevel | None
    steps: list[str]
    framework_tile: FrameworkTile = field(repr=False)  # the framework's node, as its rules read it
    _compiled: dict[str, CompiledTile] = field(default_factory=dict, repr=False)

    @property
    def status(self) -> str:
        """``"dispatch"``, ``"empty"`` or ``"unsupported"``."""
        if self.descriptor is not None:
            return DISPATCH
        return UNSUPPORTED if self.unsupported_reason else EMPTY

    def to_dict(self) -> dict:
        """A JSON-ready summary (the descriptor in its canonical wrapped form)."""
        return {
            "framework": self.framework,
            "operator": self.operator,
            "input_shape": list(self.input_shape),
            "repeats": list(self.repeats),
            "dtype": self.dtype,
            "feature_level": self.feature_level.dotted,
            "output_shape": list(self.output_shape),
            "status": self.status,
            "descriptor": self.descriptor.to_dict() if self.descriptor is not None else None,
            "unsupported_reason": self.unsupported_reason,
            "min_feature_level": self.min_feature_level.dotted if self.min_feature_level else None,
            "steps": list(self.steps),
        }

    def at_level(self, feature_level: Any) -> LoweringPlan:
        """The same node lowered at another feature level."""
        return _plan(self.framework_tile, _level(feature_level))

    def _check_input(self, x: np.ndarray) -> None:
        if tuple(x.shape) != self.input_shape:
            raise LoweringError(
                f"x has shape {list(x.shape)}, but this plan tiles input shape {list(self.input_shape)}"
            )
        got = dtype_name(x.dtype)
        if got != self.dtype and not (self.dtype == "bfloat16" and x.dtype == np.uint16):
            hint = " (or its uint16 view)" if self.dtype == "bfloat16" else ""
            raise LoweringError(f"x has dtype {got}, but this plan tiles {self.dtype}{hint} elements")

    def run(self, x: Any, backend: str = "numpy") -> np.ndarray:
        """The framework's output for input ``x``, computed by executing ``descriptor``.

        ``x`` has the framework's input shape and dtype (bfloat16 data may be given as a uint16
        view; the result then is a uint16 view too). An empty output is returned without a
        dispatch; an unsupported plan raises UnsupportedError.
        """
        x = np.asarray(x)
        self._check_input(x)
        if self.descriptor is None:  # status "empty" or "unsupported": nothing to dispatch
            if self.status == EMPTY:
                return np.empty(self.output_shape, dtype=x.dtype)
            raise UnsupportedError(
                f"{self.operator} on {self.dtype} {list(self.input_shape)} by {list(self.repeats)} "
                f"cannot run on DirectML at {self.feature_level.c_name}: {self.unsupported_reason}"
            )
        if backend not in self._compiled:
            self._compiled[backend] = compile(self.descriptor, self.feature_level, backend=backend)
        op = self._compiled[backend]
        flat = np.ascontiguousarray(x).reshape(-1)
        # The descriptor's input is x's bytes as the mapping's DataType: the compiled op's dtype.
        y = op(flat.view(op.dtype).reshape(op.in_shape))
        return np.ascontiguousarray(y).reshape(-1).view(x.dtype).reshape(self.output_shape)


def _framework_tile(
    framework: str, input_shape: Any, repeats: Any, dtype: str, opset: Any, tiles: Any, axis: Any
) -> FrameworkTile:
    if framework == "onnx":
        return onnx_tile(input_shape, repeats, dtype, opset, tiles, axis)
    if tiles is not None or axis is not None:
        raise LoweringError(f"tiles and axis are ONNX Tile-1 inputs; {framework} takes repeats")
    if framework == "openvino":
        return openvino_tile(input_shape, repeats, dtype)
    return numpy_tile(input_shape, repeats, dtype)


def lower(
    framework: str,
    input_shape: Any,
    repeats: Any,
    dtype: Any = "float32",
    opset: int = 13,
    feature_level: Any = DEFAULT_FEATURE_LEVEL,
    tiles: Any = None,
    axis: Any = None,
) -> LoweringPlan:
    """Map a framework's Tile node onto DirectML's Tile at ``feature_level`` (default: the newest).

    ``framework`` is ``"onnx"`` (Tile-1/-6/-13 by ``opset``; Tile-1 takes ``tiles`` and ``axis``),
    ``"openvino"`` (Tile-1) or ``"numpy"`` (numpy.tile). Raises FrameworkError when the framework
    itself rejects the node, LoweringError for an unknown framework or feature level.
    """
    name = str(framework).strip().lower()
    if name not in FRAMEWORKS:
        raise LoweringError(f"framework is {framework!r}; choose one of " + ", ".join(FRAMEWORKS))
    level = _level(feature_level)
    return _plan(_framework_tile(name, input_shape, repeats, dtype_name(dtype), opset, tiles, axis), level)


def _level(feature_level: Any) -> FeatureLevel:
    try:
        return parse_feature_level(feature_level)
    except ValueError as e:
        raise LoweringError(f"feature_level: {e}") from None


def _plan(ft: FrameworkTile, level: FeatureLevel) -> LoweringPlan:
    steps = list(ft.steps)
    out = ft.output_shape
    if element_count(out) == 0:
        steps.append(
            f"The output shape {list(out)} has no elements, so nothing is dispatched "
            "(DirectML has no empty tensors and an empty copy needs none)."
        )
        descriptor = reason = min_level = None
    else:
        mapping = map_to_directml(ft.shape, ft.effective_repeats, ft.dtype, level)
        steps += mapping.steps
        descriptor, reason = mapping.descriptor, mapping.reason
        min_level = lowest_dispatch_level(ft.shape, ft.effective_repeats, ft.dtype)
        if reason:
            steps.append(
                f"Unsupported at {level.c_name}: {reason}"
                + (f" (it dispatches from {min_level.c_name})" if min_level else "")
                + "."
            )
    return LoweringPlan(
        ft.framework,
        ft.operator,
        ft.input_shape,
        ft.repeats,
        ft.dtype,
        level,
        out,
        descriptor,
        reason,
        min_level,
        steps,
        ft,
    )
