"""DxDispatch rules (DML4xx): reading a DxDispatch model (or one dispatchable) as Tile descriptors."""

from __future__ import annotations

from .citations import DXDISPATCH
from .registry import Example, register

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
)
