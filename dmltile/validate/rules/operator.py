"""Operator rules (DML2xx): what DML_TILE_OPERATOR_DESC requires of its fields together."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ...core.enums import FeatureLevel
from ...core.operator import OperatorDesc
from ...core.shape import output_size_wraps, tile_output_sizes
from ...core.tensor import UINT32_MAX
from ..report import Edit, Issue
from .citations import TILE_PAGE
from .edits import split_path
from .registry import Example, issue, register, rule
from .values import (
    at,
    derived_repeats,
    derived_sizes,
    dtype_of,
    fix_field_value,
    hint_value_then_rule,
    repeats_of,
    sizes_of,
)


def _fix_repeats_count(doc: Any, found: Issue, level: FeatureLevel) -> list[Edit] | None:
    """One repeat per input dimension, and a RepeatsCount (when written) to match."""
    ins, reps = sizes_of(doc, "InputTensor"), repeats_of(doc)
    if ins is None:
        return None
    edits = []
    if reps is None or len(reps) != len(ins):
        edits.append(Edit(op="set", path="Desc.Repeats", value=derived_repeats(doc)))
    if "RepeatsCount" in (at(doc, "Desc") or {}):
        edits.append(Edit(op="set", path="Desc.RepeatsCount", value=len(ins)))
    return edits or None


@rule(
    "DML201",
    "RepeatsCount equals InputTensor.DimensionCount",
    TILE_PAGE,
    why="Tile repeats each input dimension a number of times, so there is one repeat per input "
    "dimension: 'this value must be the same as the InputTensor.DimensionCount'. The input's rank is "
    "taken from its Sizes; a DimensionCount that disagrees with them is DML102's to report.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
            "Repeats": [2, 3],
            "RepeatsCount": 3,
        }
    ),
    fix=_fix_repeats_count,
    field="RepeatsCount",
    limit="must equal InputTensor.DimensionCount",
)
def check_repeats_count(desc: OperatorDesc) -> Iterator[Issue]:
    n, count = len(desc.input.sizes), desc.desc.repeats_count
    if count != n and "repeats_count" in desc.desc.model_fields_set:
        yield issue(
            "DML201",
            "Desc.RepeatsCount",
            f"RepeatsCount is {count}, but the input has {n} dimensions",
            f"give one repeat per input dimension: RepeatsCount {n} and {n} Repeats",
        )
    elif count != n:  # left out, RepeatsCount is the number of Repeats: they are what is wrong
        yield issue(
            "DML201",
            "Desc.Repeats",
            f"Repeats {list(desc.repeats)} has {count} value{'s' * (count != 1)}, but the input has {n} "
            "dimensions",
            f"write {n} repeats, one per input dimension",
        )


@rule(
    "DML202",
    "Repeats has RepeatsCount values",
    TILE_PAGE,
    why="RepeatsCount 'determines the size of the Repeats array': DirectML reads that many values "
    "through the pointer. When Repeats already has one value per input dimension, a wrong "
    "RepeatsCount is the only fault and DML201 names it.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
            "Repeats": [2, 3, 1],
            "RepeatsCount": 2,
        }
    ),
    fix=_fix_repeats_count,
)
def check_repeats_length(desc: OperatorDesc) -> Iterator[Issue]:
    count, values, n = desc.desc.repeats_count, desc.repeats, len(desc.input.sizes)
    if len(values) != count and len(values) != n:
        yield issue(
            "DML202",
            "Desc.Repeats",
            f"Repeats {list(values)} has {len(values)} values, but RepeatsCount is {count}",
            f"write {n} repeats, one per input dimension"
            + (f", and set RepeatsCount to {n}" if count != n else ""),
        )


@rule(
    "DML203",
    "every repeat is larger than 0",
    TILE_PAGE,
    why="Repeats: 'Values must be larger than 0.' A zero repeat would make an empty output, and "
    "DirectML has no empty tensors; a framework Tile with a zero repeat needs no dispatch.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 3]},
            "Repeats": [2, 0],
        }
    ),
    fix=fix_field_value,
    fix_hint=hint_value_then_rule,
    field="Repeats",
    limit="each larger than 0",
)
def check_zero_repeats(desc: OperatorDesc) -> Iterator[Issue]:
    for i, r in enumerate(desc.repeats):
        if r == 0:
            yield issue(
                "DML203",
                f"Desc.Repeats[{i}]",
                f"Repeats[{i}] is 0; values must be larger than 0",
                "use 1 to keep a dimension as it is; a zero repeat means an empty output, which needs no dispatch",
            )


def _fix_output_rank(doc: Any, found: Issue, level: FeatureLevel) -> list[Edit] | None:
    ins, reps = sizes_of(doc, "InputTensor"), repeats_of(doc)
    if not ins or not reps or len(ins) != len(reps):
        return None
    return [Edit(op="set", path=found.path, value=derived_sizes(doc, "OutputTensor"))]


@rule(
    "DML204",
    "OutputTensor.DimensionCount equals InputTensor.DimensionCount",
    TILE_PAGE,
    why="Tile repeats the input along its own dimensions and adds none: the output 'must have the "
    "same DimensionCount as the input tensor'.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9, 1]},
            "Repeats": [2, 3],
        }
    ),
    fix=_fix_output_rank,
)
def check_same_rank(desc: OperatorDesc) -> Iterator[Issue]:
    a, b = len(desc.input.sizes), len(desc.output.sizes)
    if a != b:
        yield issue(
            "DML204",
            "Desc.OutputTensor.Desc.Sizes",
            f"OutputTensor has {b} dimensions (Sizes {list(desc.output.sizes)}), but InputTensor has {a}",
            f"give the output {a} dimensions: Sizes[i] = InputTensor.Sizes[i] * Repeats[i]",
        )


def swapped(ins: Sequence[int], reps: Sequence[int], outs: Sequence[int]) -> bool:
    """Whether the input's Sizes are what the output's should be and the other way round: the two
    tensors written in each other's place (the repeats divide the input instead of multiplying it).
    A size of 0 (DML104) says nothing either way: 0 is 0 times any repeat."""
    if not len(ins) == len(reps) == len(outs) or all(r == 1 for r in reps) or 0 in (*ins, *outs):
        return False
    return all(i == o * r for i, r, o in zip(ins, reps, outs, strict=True))


def _fix_output_size(doc: Any, found: Issue, level: FeatureLevel) -> list[Edit] | None:
    """The product, or, when it does not fit a UINT, the largest repeat whose product does; for
    tensors written in each other's place, their Sizes exchanged."""
    i = split_path(found.path)[-1]
    ins, reps, outs = sizes_of(doc, "InputTensor"), repeats_of(doc), sizes_of(doc, "OutputTensor")
    if ins and reps and outs and swapped(ins, reps, outs):
        return [
            Edit(op="set", path="Desc.InputTensor.Desc.Sizes", value=outs),
            Edit(op="set", path="Desc.OutputTensor.Desc.Sizes", value=ins),
        ]
    if not isinstance(i, int) or not ins or not reps:
        return None
    want = ins[i] * reps[i]
    if want <= UINT32_MAX:
        return [Edit(op="set", path=found.path, value=want)]
    rep = max(1, UINT32_MAX // ins[i])
    return [
        Edit(op="set", path=f"Desc.Repeats[{i}]", value=rep),
        Edit(op="set", path=found.path, value=ins[i] * rep),
    ]


def _output_size_issue(i: int, ins: int, rep: int, out: int, want: int) -> Issue:
    if want > UINT32_MAX:
        msg = (
            f"OutputTensor.Sizes[{i}] must be InputTensor.Sizes[{i}] * Repeats[{i}] = "
            f"{ins} * {rep} = {want}, which does not fit a UINT size"
        )
        hint = f"lower Repeats[{i}] to at most {UINT32_MAX // ins}"
    else:
        msg = f"OutputTensor.Sizes[{i}] is {out}, but InputTensor.Sizes[{i}] * Repeats[{i}] = {ins} * {rep} = {want}"
        hint = f"set OutputTensor.Sizes[{i}] to {want}" + (
            f", or Repeats[{i}] to {out // ins}" if out % ins == 0 and out else ""
        )
    return issue("DML205", f"Desc.OutputTensor.Desc.Sizes[{i}]", msg, hint)


@rule(
    "DML205",
    "OutputTensor.Sizes[i] = InputTensor.Sizes[i] * Repeats[i]",
    TILE_PAGE,
    why="The output shape is fixed by the input shape and the repeats: each dimension holds "
    "Repeats[i] copies of the input's. DirectML does not infer it, so a written size that differs "
    "is a contradiction it rejects.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 8]},
            "Repeats": [2, 3],
        }
    ),
    fix=_fix_output_size,
    field="OutputTensor",
    limit="Sizes[i] = InputTensor.Sizes[i] * Repeats[i]",
)
def check_output_sizes(desc: OperatorDesc) -> Iterator[Issue]:
    ins, reps, outs = desc.input.sizes, desc.repeats, desc.output.sizes
    if swapped(ins, reps, outs):
        yield issue(
            "DML205",
            "Desc.OutputTensor.Desc.Sizes",
            f"InputTensor.Sizes {list(ins)} and OutputTensor.Sizes {list(outs)} look swapped: the input is "
            "the output's size times the Repeats, where the output should be the input's",
            f"exchange them: InputTensor.Sizes {list(outs)}, OutputTensor.Sizes {list(ins)}",
        )
        return
    if not len(ins) == len(reps) == len(outs):
        return  # the axes do not line up: DML201, DML202 or DML204 says why, sizes compared would mislead
    want = tile_output_sizes(ins, reps)
    for i in range(len(ins)):
        if reps[i] == 0 or ins[i] == 0 or outs[i] == want[i] or output_size_wraps(ins[i], reps[i], outs[i]):
            continue  # a size wrapped at 2^32 is DirectML's to accept: DML208 says what it holds
        yield _output_size_issue(i, ins[i], reps[i], outs[i], want[i])


def _fix_same_type(doc: Any, found: Issue, level: FeatureLevel) -> list[Edit] | None:
    dtype = dtype_of(doc, "InputTensor")
    return [Edit(op="set", path=found.path, value=dtype.c_name)] if dtype else None


@rule(
    "DML206",
    "OutputTensor.DataType equals InputTensor.DataType",
    TILE_PAGE + ", Tensor constraints",
    why="'InputTensor and OutputTensor must have the same DataType.' Tile copies elements; it never "
    "converts them.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
            "OutputTensor": {"DataType": "INT32", "Sizes": [4, 9]},
            "Repeats": [2, 3],
        }
    ),
    fix=_fix_same_type,
)
def check_same_type(desc: OperatorDesc) -> Iterator[Issue]:
    a, b = desc.input.data_type, desc.output.data_type
    if a != b:
        yield issue(
            "DML206",
            "Desc.OutputTensor.Desc.DataType",
            f"OutputTensor.DataType is {b.c_name}, but InputTensor.DataType is {a.c_name}",
            f"use {a.c_name} for both; Tile copies elements and never converts them",
        )


# Found while reading the document: the Desc of another operator is not read as a Tile desc at all.
register(
    "DML207",
    "the operator Type is DML_OPERATOR_TILE",
    TILE_PAGE,
    "parse",
    why="dmltile describes DML_TILE_OPERATOR_DESC only; a DML_OPERATOR_DESC of another Type holds "
    "another struct in Desc, which no Tile rule applies to.",
    example=Example(
        {
            "Type": "DML_OPERATOR_GEMM",
            "Desc": {
                "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
                "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
                "Repeats": [2, 3],
            },
        }
    ),
    fix=fix_field_value,
)


def not_tile(path: str, message: str) -> Issue:
    """DML207 for a document whose Type names another operator (the reader's message names it)."""
    return issue(
        "DML207", path, message, 'use "Type": "DML_OPERATOR_TILE" with a DML_TILE_OPERATOR_DESC in "Desc"'
    )


def no_tile_dispatchable(found: str) -> Issue:
    """DML207 for a DxDispatch model without a Tile dispatchable (``found``: what it has instead)."""
    return issue(
        "DML207",
        "dispatchables",
        f"the DxDispatch model has no DML_OPERATOR_TILE dispatchable (found: {found}); dmltile covers Tile only",
        'add a dispatchable {"type": "DML_OPERATOR_TILE", "desc": {...}}',
    )
