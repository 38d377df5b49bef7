"""What onnxruntime's DirectML execution provider does with an ONNX Tile node: the DirectML Tile it
builds, judged at a feature level.

The provider's rules (DML501-DML507, each with the onnxruntime file and revision it follows) and
the plain facts they read are in ``validate/rules/provider.py``; here a node's values become those
facts, and the descriptor the provider passes to DirectML is built and validated.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from ..core.enums import FeatureLevel
from ..core.operator import OperatorDesc
from ..core.shape import tile_output_sizes
from ..validate.api import validate
from ..validate.levels import known_levels
from ..validate.report import Issue
from ..validate.rules.provider import (
    CPU_ONLY_TYPES,
    DEVICE_DEPENDENT,
    DML_TYPES,
    MAX_RANK,
    MIN_LEVEL,
    MIN_OPSET,
    NO_EP_TYPES,
    PROVIDER,
    Finding,
    NodeFacts,
    below_min_level,
    check_device_type,
    check_squeezed,
    finding,
    first_directml,
    registration_verdict,
    squeeze,
)

__all__ = [
    "CPU_ONLY_TYPES",
    "DEVICE_DEPENDENT",
    "DML_TYPES",
    "MAX_RANK",
    "MIN_LEVEL",
    "MIN_OPSET",
    "NO_EP_TYPES",
    "PER_VALUE_COST",
    "PROVIDER",
    "Finding",
    "ProviderPlan",
    "below_min_level",
    "device_type_findings",
    "first_directml",
    "provider_min_level",
    "provider_plan",
    "registration_verdict",
    "squeeze",
]

PER_VALUE_COST = (
    "each such compile is a CreateOperator + CompileOperator + operator initialization on the CPU "
    "and GPU (typically far slower than the copy itself), repeats are read on the CPU (a GPU-to-CPU "
    "copy and wait when a GPU node computed them), and the node runs as its own dispatch between "
    "fused partitions"
)


@dataclass
class ProviderPlan:
    """The DirectML Tile the provider builds for one node at one level, or why it cannot."""

    descriptor: OperatorDesc | None
    reason: str | None
    steps: list[str] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)


def provider_plan(
    shape: tuple[int, ...], repeats: tuple[int, ...], dtype: str, level: FeatureLevel
) -> ProviderPlan:
    """The descriptor the provider passes to DirectML for a non-empty Tile, validated at ``level``.
    Each (shape, repeats, type, level) is judged once: a model's nodes alike, and the levels
    ``provider_min_level`` tries, share it (the caller gets lists of its own)."""
    plan = _judged_plan(tuple(shape), tuple(repeats), dtype, level)
    return ProviderPlan(plan.descriptor, plan.reason, list(plan.steps), list(plan.warnings))


@functools.lru_cache(maxsize=4096)
def _judged_plan(
    shape: tuple[int, ...], repeats: tuple[int, ...], dtype: str, level: FeatureLevel
) -> ProviderPlan:
    facts = NodeFacts(element_type=dtype, input_shape=shape, repeats=repeats, feature_level=level)
    rewrite = list(check_squeezed(facts))  # DML507: how the node's Tile becomes DirectML's
    steps = [f"{f.said}." for f in rewrite if f.status == "rewritten"]
    failed = [f.said for f in rewrite if f.status == "cpu-fallback"]
    if failed:
        return ProviderPlan(None, failed[0], steps)
    data_type = DML_TYPES[dtype]
    sizes, reps, _ = squeeze(shape, repeats)
    doc = {
        "InputTensor": {"DataType": data_type.name, "Sizes": sizes},
        "OutputTensor": {"DataType": data_type.name, "Sizes": list(tile_output_sizes(sizes, reps))},
        "Repeats": reps,
    }
    report = validate(doc, level)
    if report.errors:
        errors = "; ".join(f"{i.code} {i.path}: {i.message}" for i in report.errors)
        rejected = finding("DML507", "cpu-fallback", "rejected", level=level.c_name, errors=errors)
        return ProviderPlan(None, rejected.said, steps)
    desc = OperatorDesc.model_validate(doc)
    steps.append(
        f"DirectML Tile at {level.c_name}: {data_type.name} input Sizes {sizes}, Repeats {reps}, "
        f"output Sizes {list(desc.output.sizes)}."
    )
    return ProviderPlan(desc, None, steps, report.warnings)


def device_type_findings(dtype: str | None) -> list[Finding]:
    """DML503 for an element type whose support DirectML reports per device."""
    return list(check_device_type(NodeFacts(element_type=dtype)))


def provider_min_level(shape: tuple[int, ...], repeats: tuple[int, ...], dtype: str) -> FeatureLevel | None:
    """The lowest known level at which the provider starts and DirectML takes its descriptor."""
    for level in known_levels():
        if (
            level >= MIN_LEVEL
            and _judged_plan(tuple(shape), tuple(repeats), dtype, level).descriptor is not None
        ):
            return level
    return None
