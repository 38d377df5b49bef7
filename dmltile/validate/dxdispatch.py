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
from dataclasses import dataclass, field
from typing import Any

from ..core.enums import TILE, OperatorType
from ..core.layout import wrap_tensor
from ..core.words import listing
from ..errors import DescriptorError
from .report import Issue
from .rules.document import duplicate_key, not_json
from .rules.dxdispatch import dispatchable_not_an_object, missing_repeats_count, not_a_model, several_tiles
from .rules.operator import no_tile_dispatchable
from .source import NotJson, is_dispatchable, is_model, read_source

DISPATCHABLE = "tile"  # the name a lone dispatchable gets, and the one the export writes
DXDISPATCH_KEYS = ("dmlCompileType", "executionFlags", "bindings")  # dispatchable keys beside the desc


def read_model(source: Any) -> dict:
    """A DxDispatch model (or one dispatchable) from a dict, JSON text or a path; comments and
    trailing commas are accepted as DxDispatch accepts them. A lone dispatchable is wrapped as
    a model with that one dispatchable, named ``tile``."""
    model, issues = model_of(read_source(source))
    if model is None:
        raise DescriptorError(issues, context="cannot read the DxDispatch model")
    return model


def model_of(data: Any) -> tuple[dict | None, list[Issue]]:
    """The DxDispatch model in data already read (a lone dispatchable becomes a model with that one
    dispatchable, named ``tile``), or (None, the issue that stops it)."""
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
    """The dispatchable's operator: its ``type`` (or ``Type``)."""
    return raw.get("type", raw.get("Type"))


def _canonical_tensor(tensor: Any) -> Any:
    if not isinstance(tensor, dict) or ("Desc" in tensor and not isinstance(tensor["Desc"], dict)):
        return tensor  # left for the model to report as it is
    wrapped = wrap_tensor(tensor)
    buffer = dict(wrapped["Desc"])
    size = buffer.get("TotalTensorSizeInBytes")
    if type(size) is int and size == 0:  # DxDispatch: 0 means "compute it" (false or 0.0 stay errors)
        del buffer["TotalTensorSizeInBytes"]
    if buffer.get("Strides") == []:  # DxDispatch: an empty array means packed
        buffer["Strides"] = None
    if buffer.get("Flags") == []:
        buffer["Flags"] = "DML_TENSOR_FLAG_NONE"
    return {**wrapped, "Desc": buffer}


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
    """Whether a dispatchable is a Tile operator (any spelling of its type)."""
    try:
        return OperatorType.parse(operator_name(dispatchable)) == TILE
    except ValueError:
        return False


@dataclass
class Dispatchables:
    """A model's dispatchables sorted by what dmltile does with each, in model order."""

    tiles: dict[str, dict] = field(default_factory=dict)  # name -> canonical document
    broken: dict[str, list[Issue]] = field(default_factory=dict)  # name -> why it cannot be read
    not_covered: dict[str, str] = field(default_factory=dict)  # name -> its type (other operators, HLSL)
    warnings: dict[str, list[Issue]] = field(
        default_factory=dict
    )  # what DxDispatch rejects, dmltile defaults
    order: list[str] = field(default_factory=list)

    def single(self) -> tuple[str | None, list[Issue]]:
        """The name of the model's one Tile dispatchable, or the issue why there is not exactly one
        (DML207 none, DML401 several; a model whose only candidates are broken: the first's issues)."""
        if len(self.tiles) == 1:
            return next(iter(self.tiles)), []
        if len(self.tiles) > 1:
            return None, [several_tiles(list(self.tiles))]
        if self.broken:
            return None, next(iter(self.broken.values()))
        return None, [no_tile_issue(self.not_covered)]


def split_model(model: dict) -> Dispatchables:
    """The Tile dispatchables of a model as canonical documents, and every other one with its reason."""
    out = Dispatchables()
    for name, raw in model["dispatchables"].items():
        out.order.append(name)
        if not isinstance(raw, dict):
            out.broken[name] = [dispatchable_not_an_object(name)]
        elif not is_tile(raw):
            out.not_covered[name] = str(operator_name(raw))
        else:
            out.tiles[name] = canonical_document(raw)
            if warnings := repeats_count_warning(raw):
                out.warnings[name] = warnings
    return out


def repeats_count_warning(raw: Mapping) -> list[Issue]:
    """DML402 when a dispatchable leaves RepeatsCount out, which DxDispatch's parser requires."""
    desc = raw.get("desc", raw.get("Desc", raw))
    if isinstance(desc, dict) and "RepeatsCount" not in desc:
        return [missing_repeats_count()]
    return []


def no_tile_issue(not_covered: Mapping[str, str]) -> Issue:
    """DML207 for a model that has no Tile dispatchable, naming what it has."""
    named = (f"{n!r} ({op})" for n, op in not_covered.items())
    return no_tile_dispatchable(listing(named, len(not_covered)) or "none")


def single_tile_document(data: Any) -> tuple[Any, list[Issue]]:
    """The canonical document of the one Tile dispatchable in a DxDispatch model or dispatchable
    (data already read), or issues explaining why there is not exactly one."""
    model, issues = model_of(data)
    if model is None:
        return None, issues
    parts = split_model(model)
    name, issues = parts.single()
    return (parts.tiles[name], []) if name is not None else (None, issues)
