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
from .edits import describe, split_path
from .registry import Example, Words, found, register, rule
from .values import (
    at,
    buffer,
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
    words={
        "count": Words(
            "RepeatsCount is {count}, but the input has {rank:dimension}",
            "give one repeat per input dimension: RepeatsCount {rank} and {rank:value} in Repeats",
        ),
        "repeats": Words(
            "Repeats {repeats} has {values:value}, but the input has {rank:dimension}",
            "write {rank:repeat}, one per input dimension",
        ),
    },
)
def check_repeats_count(desc: OperatorDesc) -> Iterator[Issue]:
    n, count = len(desc.input.sizes), desc.desc.repeats_count
    if count != n and "repeats_count" in desc.desc.model_fields_set:
        yield found("DML201", "Desc.RepeatsCount", "count", count=count, rank=n)
    elif count != n:  # left out, RepeatsCount is the number of Repeats: they are what is wrong
        yield found("DML201", "Desc.Repeats", "repeats", repeats=list(desc.repeats), values=count, rank=n)


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
    words={
        case: Words(
            "Repeats {repeats} has {length:value}, but RepeatsCount is {count}",
            "write {rank:repeat}, one per input dimension" + also,
        )
        for case, also in (("", ""), ("recount", ", and set RepeatsCount to {rank}"))
    },
)
def check_repeats_length(desc: OperatorDesc) -> Iterator[Issue]:
    count, values, n = desc.desc.repeats_count, desc.repeats, len(desc.input.sizes)
    if len(values) != count and len(values) != n:
        yield found(
            "DML202",
            "Desc.Repeats",
            "recount" if count != n else "",
            repeats=list(values),
            length=len(values),
            count=count,
            rank=n,
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
    bounds={"minimum": 1},
    words=Words(
        "Repeats[{axis}] is 0; values must be larger than 0",
        "use 1 to keep a dimension as it is; a zero repeat means an empty output, which needs no dispatch",
    ),
)
def check_zero_repeats(desc: OperatorDesc) -> Iterator[Issue]:
    for i, r in enumerate(desc.repeats):
        if r == 0:
            yield found("DML203", f"Desc.Repeats[{i}]", axis=i)


def _fix_output_rank(doc: Any, found: Issue, level: FeatureLevel) -> list[Edit] | None:
    ins, reps = sizes_of(doc, "InputTensor"), repeats_of(doc)
    if not ins or not reps or len(ins) != len(reps):
        return None
    sizes = derived_sizes(doc, "OutputTensor")
    edits = [Edit(op="set", path=found.path, value=sizes)]
    if sizes is not None and "DimensionCount" in buffer(doc, "OutputTensor"):
        # A new rank takes its count with it, so the edit alone leaves the tensor whole.
        edits.append(Edit(op="set", path="Desc.OutputTensor.Desc.DimensionCount", value=len(sizes)))
    return edits


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
    words=Words(
        "OutputTensor has {rank:dimension} (Sizes {sizes}), but InputTensor has {input_rank}",
        "give the output {input_rank:dimension}: Sizes[i] = InputTensor.Sizes[i] * Repeats[i]",
    ),
)
def check_same_rank(desc: OperatorDesc) -> Iterator[Issue]:
    a, b = len(desc.input.sizes), len(desc.output.sizes)
    if a != b:
        sizes = list(desc.output.sizes)
        yield found("DML204", "Desc.OutputTensor.Desc.Sizes", rank=b, sizes=sizes, input_rank=a)


def swapped(ins: Sequence[int], reps: Sequence[int], outs: Sequence[int]) -> bool:
    """Whether the input's Sizes are what the output's should be and the other way round: the two
    tensors written in each other's place (the repeats divide the input instead of multiplying it).
    A size of 0 (DML104) says nothing either way: 0 is 0 times any repeat."""
    if not len(ins) == len(reps) == len(outs) or all(r == 1 for r in reps) or 0 in (*ins, *outs):
        return False
    return all(i == o * r for i, r, o in zip(ins, reps, outs, strict=True))


def _least_change(i: int, ins: int, rep: int, out: int) -> Edit:
    """The edit making Repeats[i] and OutputTensor.Sizes[i] agree that changes what the user wrote
    least: the repeat that makes the written size (Repeats typed as the output's sizes, say), or
    the size the repeat makes; on a tie, the size."""
    want = ins * rep
    if out and out % ins == 0 and abs(out // ins - rep) < abs(want - out):
        return Edit(op="set", path=f"Desc.Repeats[{i}]", value=out // ins)
    return Edit(op="set", path=f"Desc.OutputTensor.Desc.Sizes[{i}]", value=want)


def _fix_output_size(doc: Any, found: Issue, level: FeatureLevel) -> list[Edit] | None:
    """The least change that makes the two agree, or, when the product does not fit a UINT, the
    largest repeat whose product does; for tensors written in each other's place, their Sizes
    exchanged."""
    i = split_path(found.path)[-1]
    ins, reps, outs = sizes_of(doc, "InputTensor"), repeats_of(doc), sizes_of(doc, "OutputTensor")
    if ins and reps and outs and swapped(ins, reps, outs):
        return [
            Edit(op="set", path="Desc.InputTensor.Desc.Sizes", value=outs),
            Edit(op="set", path="Desc.OutputTensor.Desc.Sizes", value=ins),
        ]
    if not isinstance(i, int) or not ins or not reps or not outs or not ins[i]:
        return None
    want = ins[i] * reps[i]
    if want <= UINT32_MAX:
        return [_least_change(i, ins[i], reps[i], outs[i])]
    rep = max(1, UINT32_MAX // ins[i])
    return [
        Edit(op="set", path=f"Desc.Repeats[{i}]", value=rep),
        Edit(op="set", path=found.path, value=ins[i] * rep),
    ]


def _hint_output_size(found: Issue, edits: list[Edit], own: int) -> str:
    """The edit, and the other way to make the two agree when the check saw one."""
    other_way = [w.strip() for w in found.hint.split(", or ")[1:]] if ", or " in found.hint else []
    said = describe(edits[:own])
    first = found.hint.split(", or ")[0].removeprefix("set ")
    alternatives = [w for w in [first, *other_way] if w.split(" to ")[0] not in said and " to " in w]
    return said + "".join(f" (or set {w})" for w in alternatives)


def _output_size_issue(i: int, ins: int, rep: int, out: int, want: int) -> Issue:
    case = "too large" if want > UINT32_MAX else "divisible" if out % ins == 0 and out else "sizes"
    values = {"axis": i, "size": ins, "repeat": rep, "written": out, "want": want}
    return found(
        "DML205",
        f"Desc.OutputTensor.Desc.Sizes[{i}]",
        case,
        **values,
        most=UINT32_MAX // ins,
        other=out // ins,
    )


_PRODUCT = "InputTensor.Sizes[{axis}] * Repeats[{axis}] = {size} * {repeat} = {want}"


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
    fix_hint=_hint_output_size,
    field="OutputTensor",
    limit="Sizes[i] = InputTensor.Sizes[i] * Repeats[i]",
    words={
        "swapped": Words(
            "InputTensor.Sizes {input} and OutputTensor.Sizes {output} look swapped: the input is the "
            "output's size times the Repeats, where the output should be the input's",
            "exchange them: InputTensor.Sizes {output}, OutputTensor.Sizes {input}",
        ),
        "too large": Words(
            "OutputTensor.Sizes[{axis}] must be " + _PRODUCT + ", which does not fit a UINT size",
            "lower Repeats[{axis}] to at most {most}",
        ),
        "sizes": Words(
            "OutputTensor.Sizes[{axis}] is {written}, but " + _PRODUCT,
            "set OutputTensor.Sizes[{axis}] to {want}",
        ),
        "divisible": Words(
            "OutputTensor.Sizes[{axis}] is {written}, but " + _PRODUCT,
            "set OutputTensor.Sizes[{axis}] to {want}, or Repeats[{axis}] to {other}",
        ),
    },
)
def check_output_sizes(desc: OperatorDesc) -> Iterator[Issue]:
    ins, reps, outs = desc.input.sizes, desc.repeats, desc.output.sizes
    if swapped(ins, reps, outs):
        yield found("DML205", "Desc.OutputTensor.Desc.Sizes", "swapped", input=list(ins), output=list(outs))
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
    words=Words(
        "OutputTensor.DataType is {output}, but InputTensor.DataType is {input}",
        "use {input} for both; Tile copies elements and never converts them",
    ),
)
def check_same_type(desc: OperatorDesc) -> Iterator[Issue]:
    a, b = desc.input.data_type, desc.output.data_type
    if a != b:
        yield found("DML206", "Desc.OutputTensor.Desc.DataType", output=b.c_name, input=a.c_name)


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
    words={
        "type": Words(
            "operator Type is {op}; dmltile describes DML_OPERATOR_TILE only",
            'use "Type": "DML_OPERATOR_TILE" with a DML_TILE_OPERATOR_DESC in "Desc"',
        ),
        "dispatchables": Words(
            "the DxDispatch model has no DML_OPERATOR_TILE dispatchable (found: {others}); dmltile covers Tile only",
            'add a dispatchable {{"type": "DML_OPERATOR_TILE", "desc": {{...}}}}',
        ),
    },
)


def not_tile(path: str, op: str) -> Issue:
    """DML207 for a document whose Type names another operator, ``op``."""
    return found("DML207", path, "type", op=op)


def no_tile_dispatchable(others: str) -> Issue:
    """DML207 for a DxDispatch model without a Tile dispatchable (``others``: what it has instead)."""
    return found("DML207", "dispatchables", "dispatchables", others=others)
