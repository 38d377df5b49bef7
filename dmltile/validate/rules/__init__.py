"""Every rule dmltile checks, one module per family; this package puts them in one registry.

* ``document`` DML0xx: what makes JSON a descriptor document (found while reading it);
* ``tensor`` DML1xx: what DML_BUFFER_TENSOR_DESC requires of each tensor;
* ``operator`` DML2xx: what DML_TILE_OPERATOR_DESC requires of its fields together (``wrap``: DML208);
* ``levels`` DML3xx and DML112: what Tile takes at a feature level, or in one DirectML version
  (``compile_time``: DML306, what a version creates but does not compile);
* ``dxdispatch`` DML4xx: reading DxDispatch models;
* ``provider`` DML5xx: what onnxruntime's DirectML execution provider does with a Tile node
  (``model_ir``: DML508, the model's IR version against each onnxruntime's maximum).

Descriptor rules check a parsed ``OperatorDesc`` (``check(desc)``), feature-level rules
``check(desc, level)``; each yields ``Issue``s whose paths point into the canonical wrapped document.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ...core.enums import FeatureLevel
from ...core.operator import OperatorDesc
from ..report import Issue
from . import compile_time, document, dxdispatch, levels, model_ir, operator, provider, tensor, wrap
from .levels import lowest_level
from .registry import (
    FIX_APPLICABILITY,
    RULES,
    Example,
    Phase,
    Rule,
    all_rules,
    field_description,
    found,
    issue,
    root_causes,
    rules_of,
    unreadable_issues,
)
from .tensor import tensors

DescriptorCheck = Callable[[OperatorDesc], Iterator[Issue]]
LevelCheck = Callable[[OperatorDesc, FeatureLevel], Iterator[Issue]]


def descriptor_checks() -> list[DescriptorCheck]:
    """The checks of the rules that depend on the descriptor alone, in code order."""
    return [r.check for r in rules_of("descriptor") if r.check]


def level_checks() -> list[LevelCheck]:
    """The checks of the rules that depend on the feature level, in code order."""
    return [r.check for r in rules_of("feature_level") if r.check]


def provider_rules() -> list[Rule]:
    """The rules of onnxruntime's DirectML execution provider, in code order."""
    return rules_of("provider")


__all__ = [
    "FIX_APPLICABILITY",
    "RULES",
    "compile_time",
    "DescriptorCheck",
    "Example",
    "LevelCheck",
    "Phase",
    "Rule",
    "all_rules",
    "descriptor_checks",
    "document",
    "dxdispatch",
    "field_description",
    "found",
    "issue",
    "level_checks",
    "levels",
    "model_ir",
    "lowest_level",
    "operator",
    "provider",
    "provider_rules",
    "root_causes",
    "rules_of",
    "tensor",
    "tensors",
    "unreadable_issues",
    "wrap",
]
