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

from collections.abc import Mapping
from typing import Any

from ..core.enums import TILE, OperatorType
from ..errors import DescriptorError
from .report import Issue
from .rules.document import duplicate_key, not_json
from .rules.dxdispatch import not_a_model, several_tiles
from .rules.operator import no_tile_dispatchable
from .source import NotJson, is_dispatchable, is_model, read_source

DISPATCHABLE = "tile"  # the name a lone dispatchable gets, and the one the export writes
DXDISPATCH_KEYS = ("dmlCompileType", "executionFlags", "bindings")  # dispatchable keys beside the desc


def read_model(source: Any) -> dict:
    """A DxDispatch model (or one dispatchable) from a dict, JSON text or a path; comments and
    trailing commas are accepted as DxDispatch accepts them. A lone dispatchable is wrapped as
    a model with that one dispatchable, named ``tile``."""
    model, issues = _model_or_issues(source)
    if model is None:
        raise DescriptorError(issues, context="cannot read the DxDispatch model")
    return model


def _model_or_issues(source: Any) -> tuple[dict | None, list[Issue]]:
    """``read_model``'s model, or (None, the issue that stops it)."""
    data = read_source(source)
    if isinstance(data, NotJson):
        if data.code == "DML003":
            return None, [duplicate_key(data.key, data.reason)]
        return None, [not_json(data.reason, "the model")]
    if is_dispatchable(data):
        return {"dispatchables": {DISPATCHABLE: data}}, []
    if not is_model(data) or not isinstance(data["dispatchables"], dict):
        return None, [not_a_model()]
    return data, []


def operator_name(raw: Mapping) -> Any:
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
    return {"Type": operator_name(raw), "Desc": desc}


def is_tile(dispatchable: Any) -> bool:
    try:
        return OperatorType.parse(operator_name(dispatchable)) == TILE
    except ValueError:
        return False


def single_tile_document(data: Any) -> tuple[Any, list[Issue]]:
    """For ``document.parse``: the canonical document of the one Tile dispatchable in a DxDispatch
    model or dispatchable, or issues explaining why there is not exactly one."""
    model, issues = _model_or_issues(data)
    if model is None:
        return None, issues
    dispatchables = model["dispatchables"]
    tiles = [n for n, d in dispatchables.items() if isinstance(d, dict) and is_tile(d)]
    others = {
        n: str(operator_name(d)) if isinstance(d, dict) else "?"
        for n, d in dispatchables.items()
        if n not in tiles
    }
    if len(tiles) == 1:
        return canonical_document(dispatchables[tiles[0]]), []
    if not tiles:
        found = ", ".join(f"{n!r} ({op})" for n, op in others.items()) or "none"
        return None, [no_tile_dispatchable(found)]
    return None, [several_tiles(tiles)]
