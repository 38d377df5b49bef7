"""Every rule dmltile checks, as data (code, one-line rule, source, severity) plus a small function.

Parse-phase rules (DML0xx, DML207) are enforced while reading the document (``document.py``);
provider-phase rules (DML5xx) are what onnxruntime's DirectML execution provider requires of a
model's Tile node, applied by ``dmltile check`` (``lower/model_check.py``); the functions here
run on a parsed ``OperatorDesc``. Descriptor rules take ``(desc)``;
feature-level rules take ``(desc, level)``. Each yields ``Issue``s whose paths point into the
canonical wrapped document.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from ..core.enums import DataType, FeatureLevel, TensorFlags, TensorType
from ..core.operator import OperatorDesc
from ..core.shape import tile_output_sizes
from ..core.tensor import (
    UINT32_MAX,
    BufferTensorDesc,
    calc_buffer_tensor_size,
    overlapping_strides,
    packed_strides,
)
from .levels import known_levels, levels_text, tile_row, tile_support
from .report import Issue, Severity

Phase = Literal["parse", "descriptor", "feature_level", "provider"]

_API = "learn.microsoft.com/windows/win32/api/directml/"
TILE_PAGE = f"DML_TILE_OPERATOR_DESC ({_API}ns-directml-dml_tile_operator_desc)"
BUFFER_PAGE = f"DML_BUFFER_TENSOR_DESC ({_API}ns-directml-dml_buffer_tensor_desc)"
HELPERS_PAGE = (
    "DirectML helper functions, DMLCalcBufferTensorSize "
    "(learn.microsoft.com/windows/ai/directml/dml-helper-functions)"
)
# What the real DirectML.dll answered to CreateOperator (docs/directml-conformance.md, measured on
# DirectML 1.8.0, 1.9.1 and 1.15.4 through Wine; 1.5.1 and a 1.0 prerelease for creation only).
MEASURED = "CreateOperator of DirectML 1.8.0, 1.9.1 and 1.15.4 (docs/directml-conformance.md)"
DOCUMENT = "dmltile's descriptor document (README, 'A 30-second tour'; its JSON Schema: `dmltile schema`)"
DXDISPATCH = "DxDispatch's model parser (microsoft/DirectML, DxDispatch/src/model/JsonParsers.cpp)"


@dataclass(frozen=True)
class Rule:
    """One rule: its stable code, what it requires, where that comes from."""

    code: str
    rule: str
    source: str
    phase: Phase
    severity: Severity = "error"
    check: Callable[..., Iterator[Issue]] | None = None  # None for the parse-phase rules


DescriptorCheck = Callable[[OperatorDesc], Iterator[Issue]]
LevelCheck = Callable[[OperatorDesc, FeatureLevel], Iterator[Issue]]


RULES: dict[str, Rule] = {}


def _register(
    code: str,
    rule: str,
    source: str,
    phase: Phase,
    severity: Severity = "error",
    check: Callable[..., Iterator[Issue]] | None = None,
) -> None:
    RULES[code] = Rule(code, rule, source, phase, severity, check)


def rule(code: str, text: str, source: str, phase: Phase = "descriptor", severity: Severity = "error"):
    """Register the decorated function as the check for ``code``."""

    def decorate(fn):
        _register(code, text, source, phase, severity, fn)
        return fn

    return decorate


def unreadable_issues(issues: list[Issue]) -> list[Issue]:
    """The issues that say the input is not a document at all (DML001): unreadable input, exit 2."""
    return [i for i in issues if i.code == "DML001"]


def issue(code: str, path: str, message: str, hint: str = "") -> Issue:
    """An Issue with the severity its rule carries."""
    return Issue(code=code, path=path, message=message, hint=hint, severity=RULES[code].severity)


# -- parse-phase rules (enforced by document.parse) -------------------------------------------
_register("DML001", "the document is JSON text holding one object", DOCUMENT, "parse")
_register(
    "DML002",
    "every required field is present (DataType, Sizes, InputTensor, OutputTensor, Repeats)",
    DOCUMENT,
    "parse",
)
_register("DML003", "no field other than the C struct's members", DOCUMENT, "parse")
_register(
    "DML004",
    "each value has its C type: UINT 0..2^32-1, UINT64 0..2^64-1, arrays of UINT, objects for structs; "
    "booleans are not integers",
    DOCUMENT,
    "parse",
)
_register(
    "DML005",
    "enum values name a member of their DirectML enum (full name, short name or integer)",
    "DirectML.h enums",
    "parse",
)
_register("DML207", "the operator Type is DML_OPERATOR_TILE", TILE_PAGE, "parse")
_register(
    "DML401",
    "a DxDispatch model read as one descriptor has exactly one Tile dispatchable",
    DXDISPATCH,
    "parse",
)
_register(
    "DML402",
    "fields DxDispatch's parser requires are present (RepeatsCount), though dmltile defaults them",
    DXDISPATCH,
    "parse",
    "warning",
)


def tensors(desc: OperatorDesc) -> Iterator[tuple[str, str, BufferTensorDesc]]:
    """(field name, path prefix of its buffer desc, buffer desc) for both tensors."""
    yield "InputTensor", "Desc.InputTensor.Desc", desc.input
    yield "OutputTensor", "Desc.OutputTensor.Desc", desc.output


def _strides_usable(t: BufferTensorDesc) -> bool:
    return t.strides is None or len(t.strides) == len(t.sizes)


# -- tensor rules -------------------------------------------------------------------------
@rule("DML101", "each tensor's Type is DML_TENSOR_TYPE_BUFFER", BUFFER_PAGE)
def check_tensor_type(desc: OperatorDesc):
    """DirectML defines only buffer tensors (DML_TENSOR_TYPE_INVALID is the other value)."""
    for name, td in (("InputTensor", desc.desc.input_tensor), ("OutputTensor", desc.desc.output_tensor)):
        if td.type != TensorType.BUFFER:
            yield issue(
                "DML101",
                f"Desc.{name}.Type",
                f"{name}.Type is {td.type.c_name}; DirectML tensors are buffers",
                'set "Type": "DML_TENSOR_TYPE_BUFFER"',
            )


@rule("DML102", "DimensionCount equals the number of Sizes", BUFFER_PAGE)
def check_dimension_count(desc: OperatorDesc):
    """DimensionCount is the length of the Sizes (and Strides) arrays."""
    for name, p, t in tensors(desc):
        if t.dimension_count != len(t.sizes):
            yield issue(
                "DML102",
                f"{p}.DimensionCount",
                f"{name}.DimensionCount is {t.dimension_count}, but Sizes {list(t.sizes)} has {len(t.sizes)} values",
                f"set DimensionCount to {len(t.sizes)}, or write {t.dimension_count} Sizes",
            )


@rule("DML103", "Strides, when given, has DimensionCount values", BUFFER_PAGE)
def check_strides_length(desc: OperatorDesc):
    """Strides is optional (null = packed); when present it has one value per dimension."""
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
    "DML104", "every size is at least 1 (a zero size 'is invalid, and will result in an error')", BUFFER_PAGE
)
def check_zero_sizes(desc: OperatorDesc):
    """DML_BUFFER_TENSOR_DESC: a zero in any dimension is invalid. DirectML has no empty tensors."""
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
)
def check_total_size(desc: OperatorDesc):
    """The buffer must span every element the desc addresses; larger is allowed."""
    for name, p, t in tensors(desc):
        if not _strides_usable(t) or 0 in t.sizes or t.data_type.bits == 0:
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


@rule(
    "DML106",
    "TotalTensorSizeInBytes that is not a multiple of 4 is accepted, but the buffer bound to it must "
    "still be DWORD-aligned in size",
    HELPERS_PAGE
    + " ('all bound buffers must have a total size that is DWORD-aligned'); "
    + MEASURED
    + " accepts any TotalTensorSizeInBytes at or above the minimum",
    severity="warning",
)
def check_dword_size(desc: OperatorDesc):
    """The helper page asks for DWORD-aligned bound buffers, but CreateOperator accepts a tensor
    size that is not a multiple of 4 (25 where 24 is needed): a hazard for the binding, not an error."""
    for name, p, t in tensors(desc):
        total = t.total_tensor_size_in_bytes
        if total % 4:
            # one value that satisfies DML105 too when the size is also below the minimum
            need = (
                calc_buffer_tensor_size(t.data_type, t.sizes, t.strides)
                if _strides_usable(t) and t.data_type.bits
                else 0
            )
            yield issue(
                "DML106",
                f"{p}.TotalTensorSizeInBytes",
                f"{name}.TotalTensorSizeInBytes is {total}, not a multiple of 4: DirectML accepts the "
                "descriptor, but the buffer you bind for it must be a multiple of 4 bytes long",
                f"set TotalTensorSizeInBytes to {max(need, total + (-total) % 4)} (or bind a buffer that long)",
            )


MINIMUM_BUFFER_TENSOR_ALIGNMENT = 16  # DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT


@rule(
    "DML107",
    "GuaranteedBaseOffsetAlignment is 0 or a power of two of at least 16 (DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT)",
    BUFFER_PAGE + "; " + MEASURED + " rejects 1, 2, 4 and 8",
)
def check_alignment(desc: OperatorDesc):
    """0 means no guarantee. The page asks for 'a power of two at least as large as the element
    size', but DirectML rejects 1, 2, 4 and 8 for every data type and accepts 16, 32, ... 2^31:
    buffer offsets are 16-byte aligned anyway, so a guarantee below 16 says nothing."""
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


@rule(
    "DML108",
    "at most 2^32-1 elements in a buffer tensor, by Sizes and by TotalTensorSizeInBytes",
    BUFFER_PAGE,
)
def check_addressable(desc: OperatorDesc):
    """'The total size of a buffer tensor may not exceed (2^32 - 1) elements' (16 GB for FLOAT32)."""
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
                f"{calc_buffer_tensor_size(t.data_type, t.sizes, t.strides if _strides_usable(t) else None)}",
            )


@rule(
    "DML109",
    "output strides give no two output elements one address by a zero stride, two equal strides, or "
    "more elements than the strides' span holds",
    MEASURED + " rejects such output strides",
)
def check_output_aliasing(desc: OperatorDesc):
    """No page says it, but CreateOperator rejects output strides that map two output elements to
    one address (GPU threads would race on them); padded and permuted output strides are accepted.
    Strides too large to decide either way are DML111's warning."""
    t = desc.output
    if t.strides is None or not _strides_usable(t) or 0 in t.sizes:
        return
    if certainly_rejected_aliasing(t.sizes, t.strides):
        zero = [i for i, (s, st) in enumerate(zip(t.sizes, t.strides, strict=False)) if st == 0 and s > 1]
        where = f"stride 0 on dimension {zero[0]} of size {t.sizes[zero[0]]}" if zero else "these strides"
        yield issue(
            "DML109",
            "Desc.OutputTensor.Desc.Strides",
            f"OutputTensor.Strides {list(t.strides)} with Sizes {list(t.sizes)}: {where} maps several output "
            "elements to one address; DirectML rejects such an output",
            f"give the output distinct element addresses, e.g. packed strides {list(packed_strides(t.sizes))} (null)",
        )


_register(
    "DML305",
    "the DirectML version is one dmltile has measured, and the feature level is at most its max",
    "feature_levels/directml_versions.toml (" + MEASURED + ")",
    "feature_level",
)
_register(
    "DML112",
    "a TotalTensorSizeInBytes that only the 32-bit size arithmetic of DirectML 1.12 and older accepts",
    MEASURED + ": DirectML 1.12.0 and older compute the last element's index in 32 bits (1.8.0 and older "
    "the byte count too) and accept the wrapped size; 1.13.1 and later reject it",
    "feature_level",
    "warning",
)


def certainly_rejected_aliasing(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """The aliasing every measured DirectML rejects: a zero stride or two equal strides on axes of
    more than one element, or more elements than addresses in the span they cover."""
    dims = [(st, s) for s, st in zip(sizes, strides, strict=True) if s > 1]
    span = sum((s - 1) * st for st, s in dims) + 1
    steps = [st for st, _ in dims]
    return 0 in steps or len(set(steps)) < len(steps) or math.prod(s for _, s in dims) > span


@rule(
    "DML111",
    "output strides that interleave do not make two output elements share memory",
    MEASURED + " accepts some interleaved aliasing output strides and rejects others (a rule not "
    "yet identified); GPU threads writing one address race",
    severity="warning",
)
def check_output_aliasing_interleaved(desc: OperatorDesc):
    """Interleaved output strides that alias (or that are too large to prove either way) and that
    DML109 does not catch: DirectML accepted 40 such cases of 170 and rejected 7, by a rule not yet
    identified, so dmltile warns."""
    t = desc.output
    if t.strides is None or not _strides_usable(t) or 0 in t.sizes:
        return
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


@rule(
    "DML110", "OutputTensor does not carry DML_TENSOR_FLAG_OWNED_BY_DML", BUFFER_PAGE + "; DML_TENSOR_FLAGS"
)
def check_flags(desc: OperatorDesc):
    """OWNED_BY_DML marks a tensor bound once at operator initialization (constant weights);
    an output is written at every dispatch, so it cannot be owned by DirectML."""
    if desc.output.flags & TensorFlags.OWNED_BY_DML:
        yield issue(
            "DML110",
            "Desc.OutputTensor.Desc.Flags",
            "OutputTensor.Flags is DML_TENSOR_FLAG_OWNED_BY_DML; that flag is for inputs bound at initialization",
            'set "Flags": "DML_TENSOR_FLAG_NONE" on the output',
        )


# -- operator rules -----------------------------------------------------------------------
@rule("DML201", "RepeatsCount equals InputTensor.DimensionCount", TILE_PAGE)
def check_repeats_count(desc: OperatorDesc):
    """'This value must be the same as the InputTensor.DimensionCount.' The input's rank is taken
    from its Sizes; a DimensionCount that disagrees with them is DML102's to report."""
    n, count = len(desc.input.sizes), desc.desc.repeats_count
    if count != n:
        yield issue(
            "DML201",
            "Desc.RepeatsCount",
            f"RepeatsCount is {count}, but the input has {n} dimensions",
            f"give one repeat per input dimension: RepeatsCount {n} and {n} Repeats",
        )


@rule("DML202", "Repeats has RepeatsCount values", TILE_PAGE)
def check_repeats_length(desc: OperatorDesc):
    """RepeatsCount 'determines the size of the Repeats array'. When Repeats already has one value
    per input dimension, a wrong RepeatsCount is the only fault and DML201 names it."""
    count, values, n = desc.desc.repeats_count, desc.repeats, len(desc.input.sizes)
    if len(values) != count and len(values) != n:
        yield issue(
            "DML202",
            "Desc.Repeats",
            f"Repeats {list(values)} has {len(values)} values, but RepeatsCount is {count}",
            f"write {n} repeats, one per input dimension"
            + (f", and set RepeatsCount to {n}" if count != n else ""),
        )


@rule("DML203", "every repeat is larger than 0", TILE_PAGE)
def check_zero_repeats(desc: OperatorDesc):
    """Repeats: 'Values must be larger than 0.'"""
    for i, r in enumerate(desc.repeats):
        if r == 0:
            yield issue(
                "DML203",
                f"Desc.Repeats[{i}]",
                f"Repeats[{i}] is 0; values must be larger than 0",
                "use 1 to keep a dimension as it is; a zero repeat means an empty output, which needs no dispatch",
            )


@rule("DML204", "OutputTensor.DimensionCount equals InputTensor.DimensionCount", TILE_PAGE)
def check_same_rank(desc: OperatorDesc):
    """'This tensor must have the same DimensionCount as the input tensor.'"""
    a, b = len(desc.input.sizes), len(desc.output.sizes)
    if a != b:
        yield issue(
            "DML204",
            "Desc.OutputTensor.Desc.Sizes",
            f"OutputTensor has {b} dimensions (Sizes {list(desc.output.sizes)}), but InputTensor has {a}",
            f"give the output {a} dimensions: Sizes[i] = InputTensor.Sizes[i] * Repeats[i]",
        )


@rule("DML205", "OutputTensor.Sizes[i] = InputTensor.Sizes[i] * Repeats[i]", TILE_PAGE)
def check_output_sizes(desc: OperatorDesc):
    """The output shape is fixed by the input shape and the repeats (see ``shape.tile_output_sizes``)."""
    ins, reps, outs = desc.input.sizes, desc.repeats, desc.output.sizes
    n = min(len(ins), len(reps), len(outs))
    want = tile_output_sizes(ins[:n], reps[:n])
    for i in range(n):
        if reps[i] == 0 or ins[i] == 0 or outs[i] == want[i]:
            continue
        if want[i] > UINT32_MAX:
            msg = (
                f"OutputTensor.Sizes[{i}] must be InputTensor.Sizes[{i}] * Repeats[{i}] = "
                f"{ins[i]} * {reps[i]} = {want[i]}, which does not fit a UINT size"
            )
            hint = f"lower Repeats[{i}] to at most {UINT32_MAX // ins[i]}"
        else:
            msg = (
                f"OutputTensor.Sizes[{i}] is {outs[i]}, but InputTensor.Sizes[{i}] * Repeats[{i}] = "
                f"{ins[i]} * {reps[i]} = {want[i]}"
            )
            hint = f"set OutputTensor.Sizes[{i}] to {want[i]}" + (
                f", or Repeats[{i}] to {outs[i] // ins[i]}" if outs[i] % ins[i] == 0 and outs[i] else ""
            )
        yield issue("DML205", f"Desc.OutputTensor.Desc.Sizes[{i}]", msg, hint)


@rule("DML206", "OutputTensor.DataType equals InputTensor.DataType", TILE_PAGE + ", Tensor constraints")
def check_same_type(desc: OperatorDesc):
    """'InputTensor and OutputTensor must have the same DataType.' Tile copies; it never converts."""
    a, b = desc.input.data_type, desc.output.data_type
    if a != b:
        yield issue(
            "DML206",
            "Desc.OutputTensor.Desc.DataType",
            f"OutputTensor.DataType is {b.c_name}, but InputTensor.DataType is {a.c_name}",
            f"use {a.c_name} for both; Tile copies elements and never converts them",
        )


# -- feature-level rules ------------------------------------------------------------------
def lowest_level(
    tensor: str, dims: int | None = None, data_type: DataType | None = None
) -> FeatureLevel | None:
    """The lowest known level whose Tile row accepts this dimension count and/or data type."""
    for level in known_levels():
        row = tile_support(level)
        if row is None:
            continue
        sup = row.tensors[tensor]
        if (dims is None or dims in sup.dimension_counts) and (
            data_type is None or data_type in sup.data_types
        ):
            return level
    return None


@rule(
    "DML301",
    "the dimension count is one Tile supports at the feature level",
    TILE_PAGE + ", Tensor support",
    "feature_level",
)
def check_level_dims(desc: OperatorDesc, level: FeatureLevel):
    """Tile takes 4 dimensions before DML_FEATURE_LEVEL_3_1 and 1 to 8 from 3.1 on."""
    row = tile_row(level)
    for name, p, t in tensors(desc):
        sup = row.tensors[name]
        n = len(t.sizes)
        if n not in sup.dimension_counts:
            up = lowest_level(name, dims=n)
            hint = f"use {up.c_name} or later" if up else f"no feature level takes {n} dimensions"
            if n < 4 and sup.dimension_counts == frozenset({4}):
                hint += f", or pad Sizes (and Repeats) with {4 - n} leading 1s to make it 4-D"
            elif n > max(sup.dimension_counts):
                hint += (
                    ", or merge neighbouring dimensions that tile alike to get "
                    f"{max(sup.dimension_counts)} or fewer"
                )
            yield issue(
                "DML301",
                f"{p}.DimensionCount",
                f"{name} has {n} dimensions; Tile at {level.c_name} supports {sup.dims_text()}",
                hint,
            )


@rule(
    "DML302",
    "the data type is one Tile supports at the feature level",
    TILE_PAGE + ", Tensor support",
    "feature_level",
)
def check_level_types(desc: OperatorDesc, level: FeatureLevel):
    """FLOAT32/FLOAT16 from 1.0; 8/16/32-bit integers from 2.1; 64-bit integers from 4.1; FLOAT64
    from 5.0 as measured (the page lists none)."""
    row = tile_row(level)
    for name, p, t in tensors(desc):
        sup = row.tensors[name]
        if t.data_type not in sup.data_types:
            up = lowest_level(name, data_type=t.data_type)
            supported = ", ".join(d.name for d in sup.data_types)
            yield issue(
                "DML302",
                f"{p}.DataType",
                f"{name}.DataType is {t.data_type.name}; Tile at {level.c_name} supports {supported}",
                _data_type_hint(t.data_type, sup.data_types, up),
            )


def _data_type_hint(data_type: DataType, supported: tuple[DataType, ...], up: FeatureLevel | None) -> str:
    """Ways to tile ``data_type`` anyway: a later level, or its bits as a supported type (Tile copies
    bits, so the result is the same bytes)."""
    ways = [f"use {up.c_name} or later"] if up else []
    same = sorted(
        (d.name for d in supported if d.bits == data_type.bits), key=lambda n: not n.startswith("UINT")
    )
    if same:
        ways.append(f"tile the same bytes as {same[0]} (Tile copies bits)")
    if data_type.bits > 32:
        n = data_type.bits // 32
        ways.append(f"tile each element as {n} UINT32 values (one more innermost dimension of {n}, repeat 1)")
    head = "" if up else f"no feature level tiles {data_type.name}; "
    return head + "; or ".join(ways)


@rule(
    "DML304",
    "FLOAT64 Tile is accepted by DirectML from 5.0, though the Tile page lists no FLOAT64",
    TILE_PAGE + ", Tensor support (no FLOAT64); " + MEASURED + " accepts FLOAT64 at ranks 1 to 8",
    "feature_level",
    severity="warning",
)
def check_undocumented_type(desc: OperatorDesc, level: FeatureLevel):
    """Where the page is silent and DirectML accepts, the descriptor is valid and the silence is a
    warning: a driver or a future DirectML could hold to the page."""
    row = tile_row(level)
    for name, p, t in tensors(desc):
        if t.data_type == DataType.FLOAT64 and t.data_type in row.tensors[name].data_types:
            yield issue(
                "DML304",
                f"{p}.DataType",
                f"{name}.DataType FLOAT64: DirectML (1.8.0 to 1.15.4) accepts FLOAT64 Tile, but the "
                "DML_TILE_OPERATOR_DESC page does not list it",
                "to rely only on what the page lists, tile each element as 2 UINT32 values "
                "(one more innermost dimension of 2, repeat 1); the bytes are the same",
            )


_register(
    "DML303",
    f"the feature level is one DirectML defines ({levels_text()})",
    "DML_FEATURE_LEVEL (DirectML.h)",
    "feature_level",
)


# -- onnxruntime's DirectML execution provider (applied by check_model to a model's Tile nodes) --
ORT_DML = "microsoft/onnxruntime, onnxruntime/core/providers/dml/"
ORT_EP = ORT_DML + "DmlExecutionProvider/src/"
PROVIDER_SOURCES = {
    "registration": ORT_EP
    + "Operators/OperatorRegistration.cpp (main: REG_INFO(7, Tile) and REG_INFO(13, Tile), "
    "supportedTypeListAllScalars, requiredConstantCpuInputs(1); SupportedTensorDataTypes::AllScalars = "
    "UInt8..UInt64, Int8..Int64, Float16, Float32, Float64, Bool; older revisions such as 9471b93 "
    "registered Tile-7 only)",
    "partitioner": ORT_EP
    + "GraphPartitioner.cpp @ 82b45a7 (GetRegistrationProperties: a node joins the fused DirectML graph "
    "only if every required constant CPU input is an initializer (GetInitializedTensor) and "
    "TryGetStaticInputShapes/TryGetStaticOutputShapes succeed without empty dimensions; "
    "DoesNodeContainSupportedDataTypes checks every tensor type against supportedDeviceDataTypeMask)",
    "kernel": ORT_EP
    + "MLOperatorAuthorImpl.cpp (main, stored revision 65f7d76: AbiOpKernel creates the kernel at session "
    "creation only when the constant CPU inputs and input shapes are known; otherwise at the first "
    "Compute, snapshotting them in m_constantInputTensorContentsOfKernel; a later run whose shapes or "
    "RequiredCpuInputChanged values differ from that snapshot creates a local kernel for that run only)",
    "device": ORT_DML
    + "dml_provider_factory.cc @ b1436eb (CreateDMLDevice: DMLCreateDevice1(..., DML_FEATURE_LEVEL_5_0, ...); "
    "DirectML 1.8.0 is the first with 5.0: learn.microsoft.com/windows/ai/directml/dml-version-history); "
    "the CPU retry: onnxruntime/python/onnxruntime_inference_collection.py (InferenceSession, "
    "enable_fallback=True: on an error creating the session it retries with CPUExecutionProvider; "
    "onnxruntime 1.32.0)",
    "types": ORT_EP
    + "DmlCommon.cpp @ a27ef39 (GetDmlDataTypeFromMlDataTypeNoThrow: Bool -> DML_TENSOR_DATA_TYPE_UINT8, "
    "String/Complex -> UNKNOWN; GetSupportedDeviceDataTypeMask: CheckFeatureSupport("
    "DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT) for every type up to INT64)",
    "tile": ORT_EP
    + "Operators/DmlOperatorTile.cpp @ 17ef3cb (removes every size-1 output dimension, keeping one, from "
    "input, output and repeats; TensorDesc(..., TensorAxis::DoNotCoerce, TensorAxis::W, RightAligned, 1, 0))",
    "rank": ORT_EP
    + "TensorDesc.cpp (ML_CHECK_VALID_ARGUMENT(rank <= MaximumDimensionCount)) and DmlCommon.h "
    "(MaximumDimensionCount = DML_TENSOR_DIMENSION_COUNT_MAX1, 8)",
}
_register(
    "DML501",
    "onnxruntime's DirectML EP registers Tile for ai.onnx opsets 7 to 12 (Tile-6) and 13 on (Tile-13); "
    "a Tile of a model importing opset 6 is left to the CPU EP, and no EP implements Tile-1 (opsets 1-5)",
    PROVIDER_SOURCES["registration"],
    "provider",
    "warning",
)
_register(
    "DML502",
    "the DirectML EP takes Tile for uint8/16/32/64, int8/16/32/64, float16/32/64 and bool only; "
    "string Tile is left to the CPU EP, and no EP implements bfloat16 or complex Tile",
    PROVIDER_SOURCES["registration"] + "; " + PROVIDER_SOURCES["types"],
    "provider",
    "warning",
)
_register(
    "DML503",
    "the DirectML EP leaves to the CPU any node whose tensor type the device does not report in "
    "CheckFeatureSupport(DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT) (supportedDeviceDataTypeMask); "
    "float64, 64-bit integer and float16 support vary between GPUs",
    PROVIDER_SOURCES["partitioner"] + "; " + PROVIDER_SOURCES["types"],
    "provider",
    "warning",
)
_register(
    "DML504",
    "Tile's repeats is a required constant CPU input: when it is not an initializer the node stays out "
    "of the fused DirectML graph and its operator is compiled at the first run, and again for every "
    "run whose repeats differ from the first run's",
    PROVIDER_SOURCES["registration"]
    + "; "
    + PROVIDER_SOURCES["partitioner"]
    + "; "
    + PROVIDER_SOURCES["kernel"],
    "provider",
    "warning",
)
_register(
    "DML505",
    "only a node with static, non-empty input and output shapes joins the fused DirectML graph; with "
    "symbolic dimensions the operator is compiled at the first run, and again for every run whose "
    "input shape differs from the first run's",
    PROVIDER_SOURCES["partitioner"] + "; " + PROVIDER_SOURCES["kernel"],
    "provider",
    "warning",
)
_register(
    "DML506",
    "the DirectML EP creates its DirectML device at DML_FEATURE_LEVEL_5_0 or newer (DirectML 1.8 or newer); "
    "below that the provider does not start and onnxruntime's Python InferenceSession retries the whole "
    "model on the CPU EP (an application passing its own IDMLDevice chooses that device's level)",
    PROVIDER_SOURCES["device"],
    "provider",
    "warning",
)
_register(
    "DML507",
    "the DirectML EP describes a Tile to DirectML with every size-1 output dimension removed (one kept "
    "when all are 1) and bool elements as UINT8; the squeezed rank must be at most 8, or creating the "
    "operator fails",
    PROVIDER_SOURCES["tile"] + "; " + PROVIDER_SOURCES["rank"] + "; " + PROVIDER_SOURCES["types"],
    "provider",
    "warning",
)


def provider_rules() -> list[Rule]:
    """The rules of onnxruntime's DirectML execution provider, in code order."""
    return [r for r in sorted(RULES.values(), key=lambda r: r.code) if r.phase == "provider"]


def descriptor_checks() -> list[DescriptorCheck]:
    """The checks of the rules that depend on the descriptor alone, in code order."""
    return [
        r.check for r in sorted(RULES.values(), key=lambda r: r.code) if r.phase == "descriptor" and r.check
    ]


def level_checks() -> list[LevelCheck]:
    """The checks of the rules that depend on the feature level, in code order."""
    return [
        r.check
        for r in sorted(RULES.values(), key=lambda r: r.code)
        if r.phase == "feature_level" and r.check
    ]
