"""DML306: data types a DirectML version accepts at CreateOperator and refuses at CompileOperator.

DirectML 1.7.0 to 1.8.2 create a 64-bit Tile (INT64, UINT64, FLOAT64) and then answer E_INVALIDARG
when it is compiled, on the stack where every version was measured (Wine's vkd3d 1.6 over Mesa's
lavapipe); the later versions compile and run the same descriptors bit-exactly there. The versions and
types come from the version table's ``compile_fails_here``, which the measurement writes.
"""

from __future__ import annotations

import functools

from ...core.enums import DataType
from ...core.operator import OperatorDesc
from ...core.tables import read_table
from ..report import Issue
from .citations import MEASURED
from .registry import Example, issue, register
from .tensor import tensors

STACK = "Wine 8 (vkd3d 1.6) over Mesa 25 lavapipe"


def _short(version: str) -> str:
    return version.removesuffix(".0") if version.count(".") == 3 else version


@functools.cache
def compile_refusals() -> dict[str, frozenset[DataType]]:
    """Per measured DirectML version (short form, "1.8.0"), the data types its CompileOperator refuses."""
    return {
        _short(r["directml"]): frozenset(DataType[name] for name in r.get("compile_fails_here", []))
        for r in read_table("directml_versions.toml")["version"]
    }


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def refusing_versions() -> str:
    """The versions that refuse some type at CompileOperator, oldest first ("1.7.0, 1.8.0, 1.8.2")."""
    return ", ".join(sorted((v for v, types in compile_refusals().items() if types), key=_key))


def first_compiling() -> str:
    """The oldest measured version newer than every refusing one: where the refusals end."""
    last = max((_key(v) for v, types in compile_refusals().items() if types), default=(0,))
    return min((v for v in compile_refusals() if _key(v) > last), key=_key, default="none measured")


register(
    "DML306",
    "a data type the DirectML version accepts at CreateOperator also compiles (CompileOperator)",
    f"{MEASURED}; CompileOperator and a dispatch of each data type on every measured version "
    f"({STACK}; feature_levels/directml_versions.toml, compile_fails_here)",
    "feature_level",
    severity="warning",
    why="CreateOperator checks the descriptor; CompileOperator builds the shader. DirectML "
    f"{refusing_versions()} accept INT64, UINT64 and FLOAT64 Tile at CreateOperator and answer "
    f"E_INVALIDARG at CompileOperator on {STACK}; {first_compiling()} and later compile the same descriptors "
    "there. "
    "The descriptor is valid, but on such a device the program fails one step later.",
    example=Example(
        {
            "InputTensor": {"DataType": "INT64", "Sizes": [2, 3]},
            "OutputTensor": {"DataType": "INT64", "Sizes": [4, 9]},
            "Repeats": [2, 3],
        },
        directml="1.8.0",
    ),
)


def compile_refusal_hint(data_type: DataType) -> str:
    """How to tile the same bytes where the version compiles: 2 UINT32 per element, or a newer DirectML."""
    return (
        f"tile each {data_type.name} element as 2 UINT32 values (one more innermost dimension of 2, "
        f"repeat 1; the bytes are the same), or use DirectML {first_compiling()} or newer"
    )


def compile_refusal_issues(desc: OperatorDesc, version: str, label: str) -> list[Issue]:
    """DML306 on each tensor whose data type ``version`` (short form) refuses at CompileOperator."""
    refused = compile_refusals().get(version, frozenset())
    out = []
    for name, path, t in tensors(desc):
        if t.data_type in refused:
            out.append(
                issue(
                    "DML306",
                    f"{path}.DataType",
                    f"{name}.DataType is {t.data_type.name}: {label} accepts it at CreateOperator, but its "
                    f"CompileOperator answers E_INVALIDARG (measured on {STACK})",
                    compile_refusal_hint(t.data_type),
                )
            )
    return out
