"""Tensor rules (DML1xx): what DML_BUFFER_TENSOR_DESC requires of each tensor, alone."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from ...core.enums import FeatureLevel, TensorFlags, TensorType
from ...core.layout import dword_aligned, strides_or_packed
from ...core.operator import OperatorDesc
from ...core.tensor import (
    UINT32_MAX,
    BufferTensorDesc,
    calc_buffer_tensor_size,
    overlapping_strides,
    packed_strides,
)
from ..report import Edit, Issue
from .citations import BUFFER_PAGE, HELPERS_PAGE, MEASURED
from .edits import split_path
from .registry import Example, Words, found, rule
from .values import (
    buffer,
    fix_field_value,
    fix_to_null,
    hint_value_then_rule,
    needed_bytes,
)


def tensors(desc: OperatorDesc) -> Iterator[tuple[str, str, BufferTensorDesc]]:
    """(field name, path prefix of its buffer desc, buffer desc) for both tensors."""
    yield "InputTensor", "Desc.InputTensor.Desc", desc.input
    yield "OutputTensor", "Desc.OutputTensor.Desc", desc.output


def strides_usable(t: BufferTensorDesc) -> bool:
    """Whether the Strides (if any) have one value per dimension, so sizes can be computed from them."""
    return t.strides is None or len(t.strides) == len(t.sizes)


@rule(
    "DML101",
    "each tensor's Type is DML_TENSOR_TYPE_BUFFER",
    BUFFER_PAGE,
    why="DirectML has one kind of tensor, a buffer: DML_TENSOR_TYPE_INVALID is the enum's only other "
    "value, and no operator reads a tensor of that type.",
    example=Example(
        {
            "Type": "DML_OPERATOR_TILE",
            "Desc": {
                "InputTensor": {
                    "Type": "DML_TENSOR_TYPE_INVALID",
                    "Desc": {"DataType": "FLOAT32", "Sizes": [2, 3]},
                },
                "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
                "Repeats": [2, 3],
            },
        }
    ),
    fix=fix_field_value,
    words=Words(
        "{tensor}.Type is {type}; DirectML tensors are buffers", 'set "Type": "DML_TENSOR_TYPE_BUFFER"'
    ),
)
def check_tensor_type(desc: OperatorDesc) -> Iterator[Issue]:
    for name, td in (("InputTensor", desc.desc.input_tensor), ("OutputTensor", desc.desc.output_tensor)):
        if td.type != TensorType.BUFFER:
            yield found("DML101", f"Desc.{name}.Type", tensor=name, type=td.type.c_name)


@rule(
    "DML102",
    "DimensionCount equals the number of Sizes",
    BUFFER_PAGE,
    why="DimensionCount is how DirectML knows the length of the Sizes and Strides arrays it is given "
    "by pointer; a count that disagrees with the array makes DirectML read past it or stop short.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3], "DimensionCount": 3},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
            "Repeats": [2, 3],
        }
    ),
    fix=fix_field_value,
    field="DimensionCount",
    limit="equals the number of Sizes",
    words=Words(
        "{tensor}.DimensionCount is {count}, but Sizes {sizes} has {rank:value}",
        "set DimensionCount to {rank}, or write {count:value} in Sizes",
    ),
)
def check_dimension_count(desc: OperatorDesc) -> Iterator[Issue]:
    for name, p, t in tensors(desc):
        if t.dimension_count != len(t.sizes):
            yield found(
                "DML102",
                f"{p}.DimensionCount",
                tensor=name,
                count=t.dimension_count,
                sizes=list(t.sizes),
                rank=len(t.sizes),
            )


@rule(
    "DML103",
    "Strides, when given, has DimensionCount values",
    BUFFER_PAGE,
    why="Strides is optional (null means packed), but when given DirectML reads one stride per "
    "dimension from it, DimensionCount of them.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3], "Strides": [1]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
            "Repeats": [2, 3],
        }
    ),
    fix=fix_to_null,
    words=Words(
        "{tensor}.Strides {strides} has {count:value}, but Sizes has {rank:value}",
        "write {rank:stride} in elements (packed: {packed}), or null for packed",
    ),
)
def check_strides_length(desc: OperatorDesc) -> Iterator[Issue]:
    for name, p, t in tensors(desc):
        if t.strides is not None and len(t.strides) != len(t.sizes):
            yield found(
                "DML103",
                f"{p}.Strides",
                tensor=name,
                strides=list(t.strides),
                count=len(t.strides),
                rank=len(t.sizes),
                packed=list(packed_strides(t.sizes)),
            )


@rule(
    "DML104",
    "every size is at least 1 (a zero size 'is invalid, and will result in an error')",
    BUFFER_PAGE,
    why="DirectML has no empty tensors: the buffer tensor page calls a zero in any dimension invalid. "
    "A framework Tile with an empty input or output needs no dispatch at all.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 0]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 0]},
            "Repeats": [2, 3],
        }
    ),
    fix=fix_field_value,
    fix_hint=hint_value_then_rule,
    field="Sizes",
    limit="every size is at least 1",
    bounds={"minimum": 1},
    words=Words(
        "{tensor}.Sizes[{axis}] is 0; DirectML has no empty tensors",
        "use sizes of at least 1; a framework Tile with an empty output needs no dispatch at all",
    ),
)
def check_zero_sizes(desc: OperatorDesc) -> Iterator[Issue]:
    for name, p, t in tensors(desc):
        for i, size in enumerate(t.sizes):
            if size == 0:
                yield found("DML104", f"{p}.Sizes[{i}]", tensor=name, axis=i)


@rule(
    "DML105",
    "TotalTensorSizeInBytes is at least DMLCalcBufferTensorSize(DataType, Sizes, Strides)",
    BUFFER_PAGE + "; " + HELPERS_PAGE,
    why="The buffer must hold every element the Sizes and Strides address, or the GPU reads and "
    "writes past its end; DMLCalcBufferTensorSize is that extent, rounded up to 4 bytes. A larger "
    "size is allowed.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3], "TotalTensorSizeInBytes": 20},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
            "Repeats": [2, 3],
        }
    ),
    fix=fix_field_value,
    field="TotalTensorSizeInBytes",
    limit="at least DMLCalcBufferTensorSize",
    words={
        case: Words(
            "{tensor}.TotalTensorSizeInBytes is {total}, below the {need:byte} that DMLCalcBufferTensorSize "
            "gives for {type} Sizes {sizes} (" + layout + ")",
            "set TotalTensorSizeInBytes to {need} (or more), or leave it out to have it computed",
        )
        for case, layout in (("packed", "packed"), ("strided", "Strides {strides}"))
    },
)
def check_total_size(desc: OperatorDesc) -> Iterator[Issue]:
    for name, p, t in tensors(desc):
        if not strides_usable(t) or 0 in t.sizes or t.data_type.bits == 0:
            continue
        need = calc_buffer_tensor_size(t.data_type, t.sizes, t.strides)
        if t.total_tensor_size_in_bytes < need:
            yield found(
                "DML105",
                f"{p}.TotalTensorSizeInBytes",
                "packed" if t.strides is None else "strided",
                tensor=name,
                total=t.total_tensor_size_in_bytes,
                need=need,
                type=t.data_type.name,
                sizes=list(t.sizes),
                strides=list(t.strides or ()),
            )


def dword_size(total: int, need: int) -> int:
    """The size DML106 asks for: the next multiple of 4, and at least ``need`` (DML105's minimum) so
    that the two rules' fixes give the field one value."""
    return max(need, dword_aligned(total))


def _needed(t: BufferTensorDesc) -> int:
    usable = strides_usable(t) and t.data_type.bits
    return calc_buffer_tensor_size(t.data_type, t.sizes, t.strides) if usable else 0


def _fix_dword_size(doc: Any, found: Issue, level: FeatureLevel) -> list[Edit] | None:
    tensor = str(split_path(found.path)[1])
    total = buffer(doc, tensor).get("TotalTensorSizeInBytes")
    if not isinstance(total, int):
        return None
    return [Edit(op="set", path=found.path, value=dword_size(total, needed_bytes(doc, tensor) or 0))]


@rule(
    "DML106",
    "TotalTensorSizeInBytes that is not a multiple of 4 is accepted, but the buffer bound to it must "
    "still be DWORD-aligned in size",
    HELPERS_PAGE
    + " ('all bound buffers must have a total size that is DWORD-aligned'); "
    + MEASURED
    + " accepts any TotalTensorSizeInBytes at or above the minimum",
    severity="warning",
    why="The helper functions page asks for every bound buffer to be a whole number of DWORDs long, "
    "yet CreateOperator accepts a tensor size that is not a multiple of 4 (25 where 24 is needed). "
    "The descriptor is valid; the hazard is binding a buffer only that long.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3], "TotalTensorSizeInBytes": 25},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
            "Repeats": [2, 3],
        }
    ),
    fix=_fix_dword_size,
    field="TotalTensorSizeInBytes",
    limit="best a multiple of 4, as the buffer bound to it must be (dmltile warns otherwise)",
    words=Words(
        "{tensor}.TotalTensorSizeInBytes is {total}, not a multiple of 4: DirectML accepts the descriptor, "
        "but the buffer you bind for it must be a multiple of 4 bytes long",
        "set TotalTensorSizeInBytes to {size} (or bind a buffer that long)",
    ),
)
def check_dword_size(desc: OperatorDesc) -> Iterator[Issue]:
    for name, p, t in tensors(desc):
        total = t.total_tensor_size_in_bytes
        if total % 4 and total >= _needed(t):  # below the minimum, DML105 says DirectML rejects it
            yield found(
                "DML106",
                f"{p}.TotalTensorSizeInBytes",
                tensor=name,
                total=total,
                size=dword_size(total, _needed(t)),
            )


MINIMUM_BUFFER_TENSOR_ALIGNMENT = 16  # DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT


@rule(
    "DML107",
    "GuaranteedBaseOffsetAlignment is 0 or a power of two of at least 16 (DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT)",
    BUFFER_PAGE + "; " + MEASURED + " rejects 1, 2, 4 and 8",
    why="0 means no guarantee. The page asks for a power of two at least as large as the element "
    "size, but DirectML rejects 1, 2, 4 and 8 for every data type and accepts 16, 32, ... 2^31: "
    "buffer offsets are 16-byte aligned anyway, so a guarantee below 16 says nothing.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3], "GuaranteedBaseOffsetAlignment": 4},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
            "Repeats": [2, 3],
        }
    ),
    fix=fix_field_value,
    field="GuaranteedBaseOffsetAlignment",
    limit=f"0 (no guarantee) or a power of two of at least {MINIMUM_BUFFER_TENSOR_ALIGNMENT}",
    words=Words(
        "{tensor}.GuaranteedBaseOffsetAlignment is {alignment}; it must be 0 or a power of two of at least "
        f"{MINIMUM_BUFFER_TENSOR_ALIGNMENT} (DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT)",
        f"use 0 (no guarantee), {MINIMUM_BUFFER_TENSOR_ALIGNMENT} (DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT) or a "
        f"larger power of two such as {2 * MINIMUM_BUFFER_TENSOR_ALIGNMENT}",
    ),
)
def check_alignment(desc: OperatorDesc) -> Iterator[Issue]:
    for name, p, t in tensors(desc):
        a = t.guaranteed_base_offset_alignment
        if a != 0 and (a & (a - 1) or a < MINIMUM_BUFFER_TENSOR_ALIGNMENT):
            yield found("DML107", f"{p}.GuaranteedBaseOffsetAlignment", tensor=name, alignment=a)


def _fix_addressable(doc: Any, found: Issue, level: FeatureLevel) -> list[Edit] | None:
    """Only a TotalTensorSizeInBytes can be lowered; too many elements by Sizes is the work's size."""
    return fix_field_value(doc, found, level) if found.path.endswith(".TotalTensorSizeInBytes") else None


@rule(
    "DML108",
    "at most 2^32-1 elements in a buffer tensor, by Sizes and by TotalTensorSizeInBytes",
    BUFFER_PAGE,
    why="DirectML addresses a buffer tensor's elements with 32-bit indices: 'the total size of a "
    "buffer tensor may not exceed (2^32 - 1) elements', counted by its Sizes and by its "
    "TotalTensorSizeInBytes (16 GiB of FLOAT32).",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3], "TotalTensorSizeInBytes": 17179869184},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
            "Repeats": [2, 3],
        }
    ),
    fix=_fix_addressable,
    words={
        "sizes": Words(
            f"{{tensor}}.Sizes {{sizes}} hold {{count:element}}; a buffer tensor holds at most {UINT32_MAX}",
            "split the work into several dispatches of at most 2^32-1 elements each",
        ),
        "bytes": Words(
            "{tensor}.TotalTensorSizeInBytes is {total}: {count:element} of {type}, more than the "
            f"{UINT32_MAX} a buffer tensor may span",
            "use at most {most:byte}, e.g. the computed {computed}",
        ),
    },
)
def check_addressable(desc: OperatorDesc) -> Iterator[Issue]:
    for name, p, t in tensors(desc):
        if t.data_type.bits == 0:
            continue
        if t.element_count > UINT32_MAX:
            yield found(
                "DML108", f"{p}.Sizes", "sizes", tensor=name, sizes=list(t.sizes), count=t.element_count
            )
            continue
        in_buffer = t.total_tensor_size_in_bytes * 8 // t.data_type.bits
        if in_buffer > UINT32_MAX:
            yield found(
                "DML108",
                f"{p}.TotalTensorSizeInBytes",
                "bytes",
                tensor=name,
                total=t.total_tensor_size_in_bytes,
                count=in_buffer,
                type=t.data_type.name,
                most=UINT32_MAX * t.data_type.bits // 8 // 4 * 4,
                computed=calc_buffer_tensor_size(t.data_type, t.sizes, strides_or_packed(t.sizes, t.strides)),
            )


def certainly_rejected_aliasing(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """The aliasing every measured DirectML rejects: a zero stride or two equal strides on axes of
    more than one element, or more elements than addresses in the span they cover."""
    dims = [(st, s) for s, st in zip(sizes, strides, strict=True) if s > 1]
    span = sum((s - 1) * st for st, s in dims) + 1
    steps = [st for st, _ in dims]
    return 0 in steps or len(set(steps)) < len(steps) or math.prod(s for _, s in dims) > span


def _judged_output_strides(desc: OperatorDesc) -> bool:
    """Whether the output has strides the aliasing rules can judge (given, usable, no zero size)."""
    t = desc.output
    return t.strides is not None and strides_usable(t) and 0 not in t.sizes


@rule(
    "DML109",
    "output strides give no two output elements one address by a zero stride, two equal strides, or "
    "more elements than the strides' span holds",
    MEASURED + " rejects such output strides",
    why="GPU threads write the output elements in parallel; two elements at one address race, so "
    "the result would depend on timing. No page says it, but CreateOperator rejects such output "
    "strides (padded and permuted ones are accepted).",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9], "Strides": [0, 1]},
            "Repeats": [2, 3],
        }
    ),
    fix=fix_to_null,
    words={
        case: Words(
            "OutputTensor.Strides {strides} with Sizes {sizes}: " + where + " several output elements to one "
            "address; DirectML rejects such an output",
            "give the output distinct element addresses, e.g. packed strides {packed} (null)",
        )
        for case, where in (
            ("zero", "stride 0 on dimension {axis} of size {size} maps"),
            ("", "these strides map"),
        )
    },
)
def check_output_aliasing(desc: OperatorDesc) -> Iterator[Issue]:
    t = desc.output
    if not _judged_output_strides(desc):
        return
    assert t.strides is not None  # _judged_output_strides says so
    if certainly_rejected_aliasing(t.sizes, t.strides):
        zero = [i for i, (s, st) in enumerate(zip(t.sizes, t.strides, strict=False)) if st == 0 and s > 1]
        yield found(
            "DML109",
            "Desc.OutputTensor.Desc.Strides",
            "zero" if zero else "",
            strides=list(t.strides),
            sizes=list(t.sizes),
            packed=list(packed_strides(t.sizes)),
            axis=zero[0] if zero else None,
            size=t.sizes[zero[0]] if zero else None,
        )


@rule(
    "DML110",
    "OutputTensor does not carry DML_TENSOR_FLAG_OWNED_BY_DML",
    BUFFER_PAGE + "; DML_TENSOR_FLAGS",
    why="OWNED_BY_DML marks a tensor bound once, when the operator is initialized (constant "
    "weights); an output is written at every dispatch, so DirectML cannot own it.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9], "Flags": "DML_TENSOR_FLAG_OWNED_BY_DML"},
            "Repeats": [2, 3],
        }
    ),
    fix=fix_field_value,
    field="Flags",
    limit="never OWNED_BY_DML on the output",
    words=Words(
        "OutputTensor.Flags is DML_TENSOR_FLAG_OWNED_BY_DML; that flag is for inputs bound at initialization",
        'set "Flags": "DML_TENSOR_FLAG_NONE" on the output',
    ),
)
def check_flags(desc: OperatorDesc) -> Iterator[Issue]:
    if desc.output.flags & TensorFlags.OWNED_BY_DML:
        yield found("DML110", "Desc.OutputTensor.Desc.Flags")


@rule(
    "DML111",
    "output strides that interleave do not make two output elements share memory",
    MEASURED + " accepts some interleaved aliasing output strides and rejects others (a rule not "
    "yet identified); GPU threads writing one address race",
    severity="warning",
    why="Interleaved output strides that DML109 does not catch may still map two output elements to "
    "one address, or be too large to prove otherwise. DirectML accepted 40 such cases of 170 and "
    "rejected 7, by a rule not yet identified, so dmltile warns rather than rejects.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1]},
            "OutputTensor": {
                "DataType": "FLOAT32",
                "Sizes": [3000, 3000],
                "Strides": [2, 3001],
                "TotalTensorSizeInBytes": 36023992,
            },
            "Repeats": [3000, 3000],
        }
    ),
    words={
        case: Words(
            "OutputTensor.Strides {strides} with Sizes {sizes} " + what + "; GPU threads writing one address "
            "race, and some DirectML versions reject such strides",
            "use strides that nest (each at least the span of the smaller ones), e.g. packed {packed} (null)",
        )
        for case, what in (
            ("overlap", "map several output elements to one address"),
            (
                "unproven",
                "interleave, and the output is too large to prove that no two elements share an address",
            ),
        )
    },
)
def check_output_aliasing_interleaved(desc: OperatorDesc) -> Iterator[Issue]:
    t = desc.output
    if not _judged_output_strides(desc):
        return
    assert t.strides is not None  # _judged_output_strides says so
    if certainly_rejected_aliasing(t.sizes, t.strides):
        return
    overlap = overlapping_strides(t.sizes, t.strides)
    if overlap is not False:
        yield found(
            "DML111",
            "Desc.OutputTensor.Desc.Strides",
            "overlap" if overlap else "unproven",
            strides=list(t.strides),
            sizes=list(t.sizes),
            packed=list(packed_strides(t.sizes)),
        )
