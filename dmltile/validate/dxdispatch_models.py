"""A DxDispatch model's Tile dispatchables as dmltile descriptors, and their validation reports."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .api import validate
from .document import parse
from .dxdispatch import canonical_document, is_tile, operator_name, read_model
from .levels import DEFAULT_FEATURE_LEVEL, parse_feature_level
from .report import Issue, ValidationReport
from .rules.dxdispatch import dispatchable_not_an_object, missing_repeats_count


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


def _repeats_count_warning(raw: Mapping) -> list[Issue]:
    desc = raw.get("desc", raw.get("Desc", raw))
    if isinstance(desc, dict) and "RepeatsCount" not in desc:
        return [missing_repeats_count()]
    return []


def from_dxdispatch(source: Any) -> DxDispatchModel:
    """Read a DxDispatch model (dict, JSON text or path; or one ``{"type", "desc"}`` dispatchable).

    Returns ``{name: OperatorDesc}`` for its Tile dispatchables; a Tile dispatchable that cannot be
    parsed is in ``.invalid`` with its issues, any other dispatchable in ``.not_covered``. Nothing
    is dropped. Bad content never raises; a source that is not a DxDispatch model raises
    DescriptorError, an unreadable file InputError.
    """
    model = read_model(source)
    result = DxDispatchModel()
    for name, raw in model["dispatchables"].items():
        result.order.append(name)
        if not isinstance(raw, dict):
            result.invalid[name] = [dispatchable_not_an_object(name)]
            continue
        if not is_tile(raw):
            result.not_covered[name] = str(operator_name(raw))
            continue
        desc, issues = parse(canonical_document(raw))
        if warnings := _repeats_count_warning(raw):
            result.warnings[name] = warnings
        if desc is None:
            result.invalid[name] = issues
        else:
            result[name] = desc
    return result
