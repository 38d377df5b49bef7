"""DML508: the model's IR version against the highest each measured onnxruntime loads.

onnxruntime refuses, at session creation, a ModelProto whose ``ir_version`` is above the one its
ONNX build knows ("Unsupported model IR version: N, max supported IR version: M"), before any
execution provider sees the graph. The onnx package writes its own newest IR version by default, so
a model saved by a newer onnx than the onnxruntime's fails to load. The maximum per wheel is
measured (the version table's ``onnxruntime_max_ir_version``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

from ...core.tables import read_table
from .provider import OBSERVED, Finding, NodeFacts, finding
from .registry import Example, Words, rule


@functools.cache
def max_ir_versions() -> dict[str, int]:
    """onnxruntime-directml wheel version -> the highest model IR version its onnxruntime.dll loads, newest first."""
    rows = [r for r in read_table("directml_versions.toml")["version"] if "onnxruntime_max_ir_version" in r]
    found = {r["wheel"].split("==")[1]: int(r["onnxruntime_max_ir_version"]) for r in rows}
    return dict(sorted(found.items(), key=lambda kv: tuple(int(p) for p in kv[0].split(".")), reverse=True))


def _limits(wheels: list[str]) -> str:
    """Each wheel with the highest IR version it loads: "1.24.4 (IR 13), 1.20.1 (IR 10)"."""
    return ", ".join(f"{w} (IR {max_ir_versions()[w]})" for w in wheels)


def ir_finding(ir_version: int | None) -> Finding | None:
    """DML508 for a model of ``ir_version``: invalid when no measured onnxruntime loads it, a warning
    naming the ones that do not when some do; None when every one loads it (or it is not known)."""
    limits = max_ir_versions()
    refusing = [w for w, ir in limits.items() if ir_version is not None and ir_version > ir]
    if not refusing:
        return None
    if len(refusing) == len(limits):
        return finding(
            "DML508", "invalid", "none", ir=ir_version, limits=_limits(refusing), highest=max(limits.values())
        )
    return finding("DML508", "warning", "some", ir=ir_version, limits=_limits(refusing))


@rule(
    "DML508",
    "onnxruntime loads a model whose IR version is at most the one its ONNX build knows (measured per "
    "onnxruntime-directml wheel)",
    "microsoft/onnxruntime, onnxruntime/core/graph/model.cc (Model::Model: 'Unsupported model IR version'), "
    "checked before onnxruntime/core/providers/dml/ sees the graph; "
    + OBSERVED
    + ", with models of IR 3 to 14",
    "provider",
    severity="warning",
    why="onnxruntime checks ModelProto.ir_version when it creates the session, before any execution "
    "provider sees the graph, and refuses a version newer than its ONNX build. The onnx package writes "
    "its newest IR version by default, so a model saved by a newer onnx does not load at all.",
    example=Example(
        node={
            "opset": 13,
            "element_type": "float32",
            "input_shape": [2, 3],
            "repeats": [2, 2],
            "ir_version": 14,
        }
    ),
    words={
        "none": Words(
            "the model is IR version {ir}, above the highest IR version each measured onnxruntime-directml "
            'loads: {limits}; none of them loads it ("Unsupported model IR version")',
            "save it with ir_version {highest} or lower (onnx.helper.make_model(..., ir_version=N)) if it "
            "uses nothing newer",
        ),
        "some": Words(
            "the model is IR version {ir}, above the highest IR version some measured onnxruntime-directml "
            "wheels load: {limits}; each refuses it"
        ),
    },
)
def check_ir_version(facts: NodeFacts) -> Iterator[Finding]:
    found = ir_finding(facts.ir_version)
    if found is not None:
        yield found
