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
from .registry import Example, issue, rule
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
)
def check_tensor_type(desc: OperatorDesc) -> Iterator[Issue]:
    for name, td in (("InputTensor", desc.desc.input_tensor), ("OutputTensor", desc.desc.output_tensor)):
        if td.type != TensorType.BUFFER:
            yield issue(
                "DML101",
                f"Desc.{name}.Type",
                f"{name}.Type is {td.type.c_name}; DirectML tensors are buffers",
                'set "Type": "DML_TENSOR_TYPE_BUFFER"',
            )


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
)
def check_dimension_count(desc: OperatorDesc) -> Iterator[Issue]:
    for name, p, t in tensors(desc):
        if t.dimension_count != len(t.sizes):
            yield issue(
                "DML102",
                f"{p}.DimensionCount",
                f"{name}.DimensionCount is {t.dimension_count}, but Sizes {list(t.sizes)} has {len(t.sizes)} values",
                f"set DimensionCount to {len(t.sizes)}, or write {t.dimension_count} Sizes",
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
)
def check_strides_length(desc: OperatorDesc) -> Iterator[Issue]:
    for name, p, t in tensors(desc):
        if t.strides is not None and len(t.strides) != len(t.sizes):
            yield issue(
                "DML103",
                f"{p}.Strides",
                f"{name}.Strides {list(t.strides)} has {len(t.strides)} values, but there are {len(t.sizes)} Sizes",
                f"write {len(t.sizes)} strides in elements (packed: {list(packed_strides(t.sizes))}), "
                "or null for packed",
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
)
def check_zero_sizes(desc: OperatorDesc) -> Iterator[Issue]:
    for name, p, t in tensors(desc):
        for i, size in enumerate(t.sizes):
            if size == 0:
                yield issue(
                    "DML104",
                    f"{p}.Sizes[{i}]",
                    f"{name}.Sizes[{i}] is 0; DirectML has no empty tensors",
                    "use sizes of at least 1; a framework Tile with an empty output needs no dispatch at all",
                )


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
)
def check_total_size(desc: OperatorDesc) -> Iterator[Issue]:
    for name, p, t in tensors(desc):
        if not strides_usable(t) or 0 in t.sizes or t.data_type.bits == 0:
            continue
        need = calc_buffer_tensor_size(t.data_type, t.sizes, t.strides)
        if t.total_tensor_size_in_bytes < need:
            how = "packed" if t.strides is None else f"Strides {list(t.strides)}"
            yield issue(
                "DML105",
                f"{p}.TotalTensorSizeInBytes",
                f"{name}.TotalTensorSizeInBytes is {t.total_tensor_size_in_bytes}, below the {need} bytes that "
                f"DMLCalcBufferTensorSize gives for {t.data_type.name} Sizes {list(t.sizes)} ({how})",
                f"set TotalTensorSizeInBytes to {need} (or more), or leave it out to have it computed",
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
)
def check_dword_size(desc: OperatorDesc) -> Iterator[Issue]:
    for name, p, t in tensors(desc):
        total = t.total_tensor_size_in_bytes
        if total % 4 and total >= _needed(t):  # below the minimum, DML105 says DirectML rejects it
            yield issue(
                "DML106",
                f"{p}.TotalTensorSizeInBytes",
                f"{name}.TotalTensorSizeInBytes is {total}, not a multiple of 4: DirectML accepts the "
                "descriptor, but the buffer you bind for it must be a multiple of 4 bytes long",
                f"set TotalTensorSizeInBytes to {dword_size(total, _needed(t))} (or bind a buffer that long)",
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
)
def check_alignment(desc: OperatorDesc) -> Iterator[Issue]:
    for name, p, t in tensors(desc):
        a = t.guaranteed_base_offset_alignment
        if a != 0 and (a & (a - 1) or a < MINIMUM_BUFFER_TENSOR_ALIGNMENT):
            yield issue(
                "DML107",
                f"{p}.GuaranteedBaseOffsetAlignment",
                f"{name}.GuaranteedBaseOffsetAlignment is {a}; it must be 0 or a power of two of at least "
                f"{MINIMUM_BUFFER_TENSOR_ALIGNMENT} (DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT)",
                "use 0 (no guarantee), 16 (DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT) or a larger power of two such as 32",
            )


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
)
def check_addressable(desc: OperatorDesc) -> Iterator[Issue]:
    for name, p, t in tensors(desc):
        if t.data_type.bits == 0:
            continue
        if t.element_count > UINT32_MAX:
            yield issue(
                "DML108",
                f"{p}.Sizes",
                f"{name}.Sizes {list(t.sizes)} hold {t.element_count} elements; "
                "a buffer tensor holds at most 4294967295",
                "split the work into several dispatches of at most 2^32-1 elements each",
            )
            continue
        in_buffer = t.total_tensor_size_in_bytes * 8 // t.data_type.bits
        if in_buffer > UINT32_MAX:
            yield issue(
                "DML108",
                f"{p}.TotalTensorSizeInBytes",
                f"{name}.TotalTensorSizeInBytes is {t.total_tensor_size_in_bytes}: {in_buffer} {t.data_type.name} "
                f"elements, more than the 4294967295 a buffer tensor may span",
                f"use at most {UINT32_MAX * t.data_type.bits // 8 // 4 * 4} bytes, e.g. the computed "
                f"{calc_buffer_tensor_size(t.data_type, t.sizes, strides_or_packed(t.sizes, t.strides))}",
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
)
def check_output_aliasing(desc: OperatorDesc) -> Iterator[Issue]:
    t = desc.output
    if not _judged_output_strides(desc):
        return
    assert t.strides is not None  # _judged_output_strides says so
    if certainly_rejected_aliasing(t.sizes, t.strides):
        zero = [i for i, (s, st) in enumerate(zip(t.sizes, t.strides, strict=False)) if st == 0 and s > 1]
        where = (
            f"stride 0 on dimension {zero[0]} of size {t.sizes[zero[0]]} maps"
            if zero
            else "these strides map"
        )
        yield issue(
            "DML109",
            "Desc.OutputTensor.Desc.Strides",
            f"OutputTensor.Strides {list(t.strides)} with Sizes {list(t.sizes)}: {where} several output "
            "elements to one address; DirectML rejects such an output",
            f"give the output distinct element addresses, e.g. packed strides {list(packed_strides(t.sizes))} (null)",
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
)
def check_flags(desc: OperatorDesc) -> Iterator[Issue]:
    if desc.output.flags & TensorFlags.OWNED_BY_DML:
        yield issue(
            "DML110",
            "Desc.OutputTensor.Desc.Flags",
            "OutputTensor.Flags is DML_TENSOR_FLAG_OWNED_BY_DML; that flag is for inputs bound at initialization",
            'set "Flags": "DML_TENSOR_FLAG_NONE" on the output',
        )


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
        what = (
            "map several output elements to one address"
            if overlap
            else ("interleave, and the output is too large to prove that no two elements share an address")
        )
        yield issue(
            "DML111",
            "Desc.OutputTensor.Desc.Strides",
            f"OutputTensor.Strides {list(t.strides)} with Sizes {list(t.sizes)} {what}; GPU threads writing "
            "one address race, and some DirectML versions reject such strides",
            f"use strides that nest (each at least the span of the smaller ones), e.g. packed "
            f"{list(packed_strides(t.sizes))} (null)",
        )
