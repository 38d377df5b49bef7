"""DxDispatch rules (DML4xx): reading a DxDispatch model (or one dispatchable) as Tile descriptors."""

from __future__ import annotations

from ...core.words import listing
from ..report import Issue
from .citations import DXDISPATCH
from .registry import Example, issue, register
from .values import fix_field_value

_TILE_DESC = {
    "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
    "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
    "RepeatsCount": 2,
    "Repeats": [2, 3],
}

register(
    "DML401",
    "a DxDispatch model read as one descriptor has exactly one Tile dispatchable",
    DXDISPATCH,
    "parse",
    why="Where one descriptor is asked for (dmltile.validate, `dmltile explain`, `dmltile run`), a "
    "model with several Tile dispatchables does not say which one is meant.",
    example=Example(
        {
            "dispatchables": {
                "first": {"type": "DML_OPERATOR_TILE", "desc": _TILE_DESC},
                "second": {"type": "DML_OPERATOR_TILE", "desc": _TILE_DESC},
            }
        },
        command="explain",
        note="`dmltile validate` on a model file checks every Tile dispatchable instead, so it never "
        "reports this code",
    ),
)

register(
    "DML402",
    "fields DxDispatch's parser requires are present (RepeatsCount), though dmltile defaults them",
    DXDISPATCH,
    "parse",
    severity="warning",
    why="DxDispatch's generated parser reads every member of DML_TILE_OPERATOR_DESC and fails on a "
    "missing RepeatsCount, where dmltile takes the length of Repeats: the model dmltile accepts would "
    "not run in DxDispatch.",
    example=Example(
        {
            "dispatchables": {
                "tile": {
                    "type": "DML_OPERATOR_TILE",
                    "desc": {k: v for k, v in _TILE_DESC.items() if k != "RepeatsCount"},
                }
            }
        }
    ),
    fix=fix_field_value,
)


def not_a_model() -> Issue:
    """DML001 for JSON that is neither a DxDispatch model nor one dispatchable."""
    return issue(
        "DML001",
        "dispatchables",
        'not a DxDispatch model: expected an object with a "dispatchables" object',
        'write {"resources": {...}, "dispatchables": {"tile": {"type": '
        '"DML_OPERATOR_TILE", "desc": {...}}}, "commands": [...]}',
    )


def several_tiles(names: list[str]) -> Issue:
    """DML401 for a model with more than one Tile dispatchable where one descriptor is asked for."""
    return issue(
        "DML401",
        "dispatchables",
        f"the DxDispatch model has {len(names)} Tile dispatchables ({listing(map(repr, names), len(names))}); "
        "a single descriptor is needed here",
        "pick one with dmltile.from_dxdispatch(path)[name], or check them all with `dmltile validate`",
    )


def missing_repeats_count() -> Issue:
    """DML402 for a Tile dispatchable without RepeatsCount."""
    return issue(
        "DML402",
        "Desc.RepeatsCount",
        "RepeatsCount is missing: dmltile takes len(Repeats), but DxDispatch's parser requires it "
        "(\"Field 'RepeatsCount' is required.\")",
        'add "RepeatsCount" equal to the number of Repeats',
    )


def dispatchable_not_an_object(name: str) -> Issue:
    """DML001 for a dispatchable that is not a JSON object."""
    return issue("DML001", "", f"dispatchable {name!r} is not a JSON object")
