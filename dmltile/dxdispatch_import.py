"""Reading DxDispatch models: the Tile dispatchables of a model as dmltile descriptors.

Follows microsoft/DirectML at a9614e82, ``DxDispatch/src/model/JsonParsers.cpp``: ``ParseModel``
(rapidjson with kParseCommentsFlag | kParseTrailingCommasFlag: comments and trailing commas are
accepted), ``ParseModelDmlDispatchableDesc`` / ``ParseDmlOperatorDesc`` (``type`` or ``Type``;
``desc`` or ``Desc``, else the fields inline; ``dmlCompileType``, ``executionFlags`` and
``bindings`` beside them), ``ParseDmlTensorDesc`` / ``ParseDmlBufferTensorDesc`` (``Type`` BUFFER,
``Flags`` NONE as a string or a list of strings, ``DimensionCount`` len(Sizes), ``Strides`` missing
or ``[]`` = packed, ``TotalTensorSizeInBytes`` missing or 0 = DMLCalcBufferTensorSize,
``GuaranteedBaseOffsetAlignment`` 0); and ``JsonParsersGenerated.cpp`` ``ParseDmlTileOperatorDesc``
(``"DML_OPERATOR_TILE"`` or ``"TILE"``; ``RepeatsCount`` required).
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

from .enums import OperatorType
from .errors import DescriptorError
from .report import Issue

DISPATCHABLE = "tile"  # the name a lone dispatchable gets, and the one the export writes
DXDISPATCH_KEYS = ("dmlCompileType", "executionFlags", "bindings")  # dispatchable keys beside the desc

_JSONC_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.S)


def strip_jsonc(text: str) -> str:
    """Remove ``//`` and ``/* */`` comments and trailing commas outside strings (DxDispatch's
    parser accepts both: rapidjson kParseCommentsFlag | kParseTrailingCommasFlag)."""

    def keep(m: re.Match) -> str:
        token = m.group(0)
        return token if token.startswith('"') else ("\n" * token.count("\n") if token.startswith("/") else "")

    # Repeat the comma removal: a comment between a comma and the bracket hides it on the first pass.
    return _JSONC_TOKEN.sub(keep, _JSONC_TOKEN.sub(keep, text))


def is_model(data: Any) -> bool:
    """A DxDispatch model: an object with ``dispatchables`` (and usually resources and commands)."""
    return isinstance(data, dict) and "dispatchables" in data and not ({"Type", "Desc", "InputTensor"} & data.keys())


def is_dispatchable(data: Any) -> bool:
    """A DxDispatch-style dispatchable: lowercase ``type``/``desc`` keys, not our ``Type``/``Desc``."""
    return isinstance(data, dict) and bool({"type", "desc"} & data.keys()) and not ({"Type", "Desc"} & data.keys())


def looks_like_dxdispatch(data: Any) -> bool:
    """Whether ``data`` is a DxDispatch model or dispatchable rather than a canonical document."""
    return is_model(data) or is_dispatchable(data)


def read_model(source: Any) -> dict:
    """A DxDispatch model (or one dispatchable) from a dict, JSON text or a path; comments and
    trailing commas are accepted as DxDispatch accepts them. A lone dispatchable is wrapped as
    a model with that one dispatchable, named ``tile``."""
    from .document import NotJson, read_source

    data = read_source(source)
    if isinstance(data, NotJson):
        raise DescriptorError([Issue(code="DML001", path="", message=f"the model is not JSON: {data.reason}")],
                              context="cannot read the DxDispatch model")
    if is_dispatchable(data):
        return {"dispatchables": {DISPATCHABLE: data}}
    if not is_model(data) or not isinstance(data["dispatchables"], dict):
        raise DescriptorError([Issue(code="DML001", path="dispatchables",
                                     message="not a DxDispatch model: expected an object with a \"dispatchables\" object",
                                     hint='write {"resources": {...}, "dispatchables": {"tile": {"type": '
                                          '"DML_OPERATOR_TILE", "desc": {...}}}, "commands": [...]}')],
                              context="cannot read the DxDispatch model")
    return data


def parse_jsonc_model(text: str | bytes) -> Any:
    """JSON with comments/trailing commas, parsed only if it then is a DxDispatch model; else None."""
    try:
        data = json.loads(strip_jsonc(text.decode("utf-8") if isinstance(text, bytes) else text))
    except (ValueError, RecursionError):
        return None
    return data if looks_like_dxdispatch(data) else None


def _operator_name(raw: Mapping) -> Any:
    return raw.get("type", raw.get("Type"))


def _canonical_tensor(tensor: Any) -> Any:
    if not isinstance(tensor, dict) or ("Desc" in tensor and not isinstance(tensor["Desc"], dict)):
        return tensor  # left for the model to report as it is
    buffer = dict(tensor["Desc"]) if "Desc" in tensor else {k: v for k, v in tensor.items() if k != "Type"}
    size = buffer.get("TotalTensorSizeInBytes")
    if type(size) is int and size == 0:  # DxDispatch: 0 means "compute it" (false or 0.0 stay errors)
        del buffer["TotalTensorSizeInBytes"]
    if buffer.get("Strides") == []:  # DxDispatch: an empty array means packed
        buffer["Strides"] = None
    if buffer.get("Flags") == []:
        buffer["Flags"] = "DML_TENSOR_FLAG_NONE"
    out = {"Desc": buffer}
    if "Type" in tensor:
        out["Type"] = tensor["Type"]
    return out


def canonical_document(dispatchable: Mapping) -> dict:
    """A DxDispatch Tile dispatchable as dmltile's canonical document (a dict, not yet validated):
    ``type``/``desc`` become ``Type``/``Desc``, inline fields move into ``Desc``, and DxDispatch's
    defaults apply (``Strides: []`` = null, ``TotalTensorSizeInBytes: 0`` = computed, flag lists)."""
    raw = dict(dispatchable)
    if "desc" in raw or "Desc" in raw:
        desc = raw.get("desc", raw.get("Desc"))
    else:
        desc = {k: v for k, v in raw.items() if k not in ("type", "Type", *DXDISPATCH_KEYS)}
    if isinstance(desc, dict):
        desc = dict(desc)
        for name in ("InputTensor", "OutputTensor"):
            if name in desc:
                desc[name] = _canonical_tensor(desc[name])
    return {"Type": _operator_name(raw), "Desc": desc}


def _is_tile(dispatchable: Any) -> bool:
    try:
        return OperatorType.parse(_operator_name(dispatchable)) == OperatorType.TILE
    except ValueError:
        return False


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
        return (f"DxDispatchModel(tile={list(self)}, invalid={list(self.invalid)}, "
                f"not_covered={self.not_covered})")

    @property
    def tile_names(self) -> list[str]:
        """Every Tile dispatchable, parsed or not, in model order."""
        return [n for n in self.order if n in self or n in self.invalid]

    def reports(self, feature_level: Any = "6.4") -> dict[str, Any]:
        """name -> ValidationReport for every Tile dispatchable (invalid ones carry their issues)."""
        from .report import ValidationReport
        from .validation import parse_feature_level, validate

        out = {}
        for name in self.tile_names:
            if name in self:
                report = validate(self[name], feature_level)
            else:
                report = ValidationReport(valid=False, feature_level=parse_feature_level(feature_level),
                                          issues=self.invalid[name])
            out[name] = report.model_copy(update={"issues": report.issues + self.warnings.get(name, [])})
        return out


def _repeats_count_warning(raw: Mapping) -> list[Issue]:
    desc = raw.get("desc", raw.get("Desc", raw))
    if isinstance(desc, dict) and "RepeatsCount" not in desc:
        return [Issue(code="DML002", path="Desc.RepeatsCount", severity="warning",
                      message="RepeatsCount is missing: dmltile takes len(Repeats), but DxDispatch's parser requires it "
                              "(\"Field 'RepeatsCount' is required.\")",
                      hint="add \"RepeatsCount\" equal to the number of Repeats")]
    return []


def from_dxdispatch(source: Any) -> DxDispatchModel:
    """Read a DxDispatch model (dict, JSON text or path; or one ``{"type", "desc"}`` dispatchable).

    Returns ``{name: OperatorDesc}`` for its Tile dispatchables; a Tile dispatchable that cannot be
    parsed is in ``.invalid`` with its issues, any other dispatchable in ``.not_covered``. Nothing
    is dropped. Bad content never raises; a source that is not a DxDispatch model raises
    DescriptorError, an unreadable file InputError.
    """
    from .document import parse

    model = read_model(source)
    result = DxDispatchModel()
    for name, raw in model["dispatchables"].items():
        result.order.append(name)
        if not isinstance(raw, dict):
            result.invalid[name] = [Issue(code="DML001", path="", message=f"dispatchable {name!r} is not a JSON object")]
            continue
        if not _is_tile(raw):
            result.not_covered[name] = str(_operator_name(raw))
            continue
        desc, issues = parse(canonical_document(raw))
        if warnings := _repeats_count_warning(raw):
            result.warnings[name] = warnings
        if desc is None:
            result.invalid[name] = issues
        else:
            result[name] = desc
    return result


def single_tile_document(data: Any) -> tuple[Any, list[Issue]]:
    """For ``document.parse``: the canonical document of the one Tile dispatchable in a DxDispatch
    model or dispatchable, or issues explaining why there is not exactly one."""
    try:
        model = read_model(data)
    except DescriptorError as e:
        return None, e.issues
    dispatchables = model["dispatchables"]
    tiles = [n for n, d in dispatchables.items() if isinstance(d, dict) and _is_tile(d)]
    others = {n: str(_operator_name(d)) if isinstance(d, dict) else "?" for n, d in dispatchables.items() if n not in tiles}
    if len(tiles) == 1:
        return canonical_document(dispatchables[tiles[0]]), []
    if not tiles:
        found = ", ".join(f"{n!r} ({op})" for n, op in others.items()) or "none"
        return None, [Issue(code="DML207", path="dispatchables",
                            message=f"the DxDispatch model has no DML_OPERATOR_TILE dispatchable (found: {found}); "
                                    "dmltile covers Tile only",
                            hint='add a dispatchable {"type": "DML_OPERATOR_TILE", "desc": {...}}')]
    return None, [Issue(code="DML001", path="dispatchables",
                        message=f"the DxDispatch model has {len(tiles)} Tile dispatchables ({', '.join(map(repr, tiles))}); "
                                "a single descriptor is needed here",
                        hint="pick one with dmltile.from_dxdispatch(path)[name], or check them all with `dmltile validate`")]
