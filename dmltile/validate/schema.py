"""The JSON Schema of the descriptor document, generated from the pydantic models.

The models accept two shorthands that their generated schema does not show: a bare
DML_TILE_OPERATOR_DESC without the Type/Desc wrapper, and a tensor written as a bare
DML_BUFFER_TENSOR_DESC (with an optional Type beside its fields, as DxDispatch writes it).
``document_schema`` adds both as ``anyOf`` alternatives, so the schema accepts what ``load`` accepts
structurally (cross-field rules such as DML205 are beyond JSON Schema; ``dmltile validate`` checks them).
"""

from __future__ import annotations

import copy
from typing import Any

from ..core.fields import c_type_range
from ..core.operator import OperatorDesc
from .rules import all_rules

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _with_type(struct: dict, type_schema: dict) -> dict:
    """``struct`` with an optional ``Type`` member beside its own fields."""
    bare = copy.deepcopy(struct)
    bare["properties"] = {"Type": type_schema, **bare["properties"]}
    return bare


def _integers(schema: dict) -> list[dict]:
    """The integer schemas of a property: itself, its array's items, or those among ``anyOf``."""
    if schema.get("type") == "integer":
        return [schema]
    if isinstance(schema.get("items"), dict):
        return _integers(schema["items"])
    return [s for alt in schema.get("anyOf", []) if isinstance(alt, dict) for s in _integers(alt)]


def _fields_as_in_c(struct: dict) -> None:
    """Each member titled with its C name, and its integers bounded as the rules bound them: the C
    type's range (DML004), then each rule's own limit on the field (DML104's sizes of at least 1)."""
    props: dict[str, Any] = struct.get("properties", {})
    for name, prop in props.items():
        prop["title"] = name
        lo, hi = c_type_range(name)
        bounds = {"minimum": lo, "maximum": hi}
        for rule in all_rules():
            if rule.field == name:
                bounds.update(rule.bounds)
        for integer in _integers(prop):
            if "enum" not in integer:
                integer.update(bounds)


def document_schema() -> dict:
    """The JSON Schema that ``dmltile schema`` prints."""
    schema = OperatorDesc.model_json_schema(by_alias=True)
    defs = schema["$defs"]
    wrapped = {k: v for k, v in schema.items() if k != "$defs"}
    tensor = defs["TensorDesc"]
    defs["BareBufferTensorDesc"] = _with_type(defs["BufferTensorDesc"], tensor["properties"]["Type"])
    defs["WrappedTensorDesc"] = tensor
    defs["TensorDesc"] = {
        "description": "DML_TENSOR_DESC, or a bare DML_BUFFER_TENSOR_DESC",
        "anyOf": [{"$ref": "#/$defs/WrappedTensorDesc"}, {"$ref": "#/$defs/BareBufferTensorDesc"}],
    }
    for struct in list(defs.values()) + [wrapped]:
        _fields_as_in_c(struct)
    defs["WrappedOperatorDesc"] = wrapped
    defs["BareTileOperatorDesc"] = _with_type(defs["TileOperatorDesc"], wrapped["properties"]["Type"])
    return {
        "$schema": SCHEMA_DIALECT,
        "title": "DirectML Tile operator descriptor (dmltile)",
        "description": "DML_OPERATOR_DESC holding a DML_TILE_OPERATOR_DESC, or the bare DML_TILE_OPERATOR_DESC",
        "anyOf": [{"$ref": "#/$defs/WrappedOperatorDesc"}, {"$ref": "#/$defs/BareTileOperatorDesc"}],
        "$defs": defs,
    }
