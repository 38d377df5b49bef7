"""A DxDispatch model's Tile dispatchables as dmltile descriptors, and their validation reports."""

from __future__ import annotations

from typing import Any

from .api import validate
from .document import parse_descriptor
from .dxdispatch import read_model, split_model
from .levels import DEFAULT_FEATURE_LEVEL, parse_feature_level
from .report import Issue, ValidationReport


class DxDispatchModel(dict):
    """``{dispatchable name: OperatorDesc}`` for the Tile dispatchables that parse, plus every
    dispatchable that is not there and why: ``invalid`` (Tile, with the structural issues that
    stop it) and ``not_covered`` (other operators, HLSL, ONNX: name -> type)."""

    def __init__(self) -> None:
        super().__init__()
        self.invalid: dict[str, list[Issue]] = {}
        self.not_covered: dict[str, str] = {}
        self.warnings: dict[str, list[Issue]] = {}  # what DxDispatch would reject but dmltile defaults
        self.order: list[str] = []

    def __repr__(self) -> str:
        return (
            f"DxDispatchModel(tile={list(self)}, invalid={list(self.invalid)}, "
            f"not_covered={self.not_covered})"
        )

    @property
    def tile_names(self) -> list[str]:
        """Every Tile dispatchable, parsed or not, in model order."""
        return [n for n in self.order if n in self or n in self.invalid]

    def reports(self, feature_level: Any = DEFAULT_FEATURE_LEVEL) -> dict[str, Any]:
        """name -> ValidationReport for every Tile dispatchable (invalid ones carry their issues)."""
        out = {}
        for name in self.tile_names:
            if name in self:
                report = validate(self[name], feature_level)
            else:
                report = ValidationReport(
                    valid=False, feature_level=parse_feature_level(feature_level), issues=self.invalid[name]
                )
            out[name] = report.model_copy(update={"issues": report.issues + self.warnings.get(name, [])})
        return out


def from_dxdispatch(source: Any) -> DxDispatchModel:
    """Read a DxDispatch model (dict, JSON text or path; or one ``{"type", "desc"}`` dispatchable).

    Returns ``{name: OperatorDesc}`` for its Tile dispatchables; a Tile dispatchable that cannot be
    parsed is in ``.invalid`` with its issues, any other dispatchable in ``.not_covered``. Nothing
    is dropped. Bad content never raises; a source that is not a DxDispatch model raises
    DescriptorError, an unreadable file InputError.
    """
    parts = split_model(read_model(source))
    result = DxDispatchModel()
    result.order, result.not_covered, result.warnings = parts.order, parts.not_covered, parts.warnings
    for name in parts.order:
        if name in parts.broken:
            result.invalid[name] = parts.broken[name]
        elif name in parts.tiles:
            desc, issues = parse_descriptor(parts.tiles[name])
            if desc is None:
                result.invalid[name] = issues
            else:
                result[name] = desc
    return result
