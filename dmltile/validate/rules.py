"""Every rule dmltile checks, as data (code, one-line rule, source, severity) plus a small function.

Parse-phase rules (DML0xx, DML207) are enforced while reading the document (``document.py``);
the functions here run on a parsed ``OperatorDesc``. Descriptor rules take ``(desc)``;
feature-level rules take ``(desc, level)``. Each yields ``Issue``s whose paths point into the
canonical wrapped document.
"""

from __future__ import annotations

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
from .levels import known_levels, levels_text, tile_support
from .report import Issue

Phase = Literal["parse", "descriptor", "feature_level"]

TILE_PAGE = "DML_TILE_OPERATOR_DESC (learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_tile_operator_desc)"
BUFFER_PAGE = "DML_BUFFER_TENSOR_DESC (learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_buffer_tensor_desc)"
HELPERS_PAGE = "DirectML helper functions, DMLCalcBufferTensorSize (learn.microsoft.com/windows/ai/directml/dml-helper-functions)"
DOCUMENT = "dmltile's descriptor document (README, 'A 30-second tour'; its JSON Schema: `dmltile schema`)"
DXDISPATCH = "DxDispatch's model parser (microsoft/DirectML, DxDispatch/src/model/JsonParsers.cpp)"


@dataclass(frozen=True)
class Rule:
    """One rule: its stable code, what it requires, where that comes from."""

    code: str
    rule: str
    source: str
    phase: Phase
    severity: Literal["error", "warning"] = "error"
    check: Callable[..., Iterator[Issue]] | None = None


RULES: dict[str, Rule] = {}


def _register(code: str, rule: str, source: str, phase: Phase, severity: str = "error", check=None) -> None:
    RULES[code] = Rule(code, rule, source, phase, severity, check)


def rule(code: str, text: str, source: str, phase: Phase = "descriptor", severity: str = "error"):
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
    "each value has its C type: UINT 0..2^32-1, UINT64 0..2^64-1, arrays of UINT, objects for structs; booleans are not integers",
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
                f"write {len(t.sizes)} strides in elements (packed: {list(packed_strides(t.sizes))}), or null for packed",
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
                f"set TotalTensorSizeInBytes to {need} (or more, in multiples of 4), or leave it out to have it computed",
            )


@rule("DML106", "TotalTensorSizeInBytes is a multiple of 4 (bound buffers are DWORD-aligned)", HELPERS_PAGE)
def check_dword_size(desc: OperatorDesc):
    """'DirectML requires that all bound buffers must have a total size that is DWORD-aligned.'"""
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
                f"{name}.TotalTensorSizeInBytes is {total}, not a multiple of 4",
                f"set TotalTensorSizeInBytes to {max(need, total + (-total) % 4)}",
            )


@rule("DML107", "GuaranteedBaseOffsetAlignment is 0 or a power of two at least the element size", BUFFER_PAGE)
def check_alignment(desc: OperatorDesc):
    """0 means no guarantee; otherwise 'a power of two that is at least as large as the element size'."""
    for name, p, t in tensors(desc):
        a, size = t.guaranteed_base_offset_alignment, max(t.data_type.element_size, 1)
        if a != 0 and (a & (a - 1) or a < size):
            yield issue(
                "DML107",
                f"{p}.GuaranteedBaseOffsetAlignment",
                f"{name}.GuaranteedBaseOffsetAlignment is {a}; it must be 0 or a power of two of at least "
                f"{size} (the {t.data_type.name} element size)",
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
                f"{name}.Sizes {list(t.sizes)} hold {t.element_count} elements; a buffer tensor holds at most 4294967295",
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
    "output strides do not make two output elements share memory",
    BUFFER_PAGE + " (outputs: DirectML may write anywhere in the tensor)",
    severity="warning",
)
def check_output_aliasing(desc: OperatorDesc):
    """Not a documented rejection: DirectML's page does not say it rejects aliasing output strides,
    but GPU threads write output elements in parallel, so two elements at one address race and the
    result depends on scheduling. Flagged as a warning."""
    t = desc.output
    if t.strides is None or not _strides_usable(t) or 0 in t.sizes:
        return
    overlap = overlapping_strides(t.sizes, t.strides)
    if overlap is not False:
        zero = [i for i, (s, st) in enumerate(zip(t.sizes, t.strides, strict=False)) if st == 0 and s > 1]
        where = f"stride 0 on dimension {zero[0]} of size {t.sizes[zero[0]]}" if zero else "these strides"
        msg = f"OutputTensor.Strides {list(t.strides)} with Sizes {list(t.sizes)}: {where} " + (
            "maps several output elements to one address"
            if overlap
            else "may map several output elements to one address (too large to prove either way)"
        )
        yield issue(
            "DML109",
            "Desc.OutputTensor.Desc.Strides",
            msg + "; GPU threads writing them race",
            f"give the output distinct element addresses, e.g. packed strides {list(packed_strides(t.sizes))} (null)",
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
                f"OutputTensor.Sizes[{i}] must be InputTensor.Sizes[{i}] * Repeats[{i}] = {ins[i]} * {reps[i]} = {want[i]}, "
                "which does not fit a UINT size"
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
    row = tile_support(level)
    for name, p, t in tensors(desc):
        sup = row.tensors[name]
        n = len(t.sizes)
        if n not in sup.dimension_counts:
            up = lowest_level(name, dims=n)
            hint = f"use {up.c_name} or later" if up else f"no feature level takes {n} dimensions"
            if n < 4 and sup.dimension_counts == frozenset({4}):
                hint += f", or pad Sizes (and Repeats) with {4 - n} leading 1s to make it 4-D"
            elif n > max(sup.dimension_counts):
                hint += f", or merge neighbouring dimensions that tile alike to get {max(sup.dimension_counts)} or fewer"
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
    """FLOAT32/FLOAT16 from 1.0; 8/16/32-bit integers from 2.1; 64-bit integers from 4.1; never FLOAT64."""
    row = tile_support(level)
    for name, p, t in tensors(desc):
        sup = row.tensors[name]
        if t.data_type not in sup.data_types:
            up = lowest_level(name, data_type=t.data_type)
            supported = ", ".join(d.name for d in sup.data_types)
            same_width = [d.name for d in sup.data_types if d.bits == t.data_type.bits]
            pairs = (
                f"tile the same bytes as {t.data_type.bits // 32} UINT32 values per element"
                f" (one more innermost dimension of {t.data_type.bits // 32}, repeat 1)"
            )
            if up and same_width:
                hint = (
                    f"use {up.c_name} or later, or tile the same bits as {same_width[0]}"
                    " (Tile copies, it never converts)"
                )
            elif up and t.data_type.bits > 32 and DataType.UINT32 in sup.data_types:
                hint = f"use {up.c_name} or later, or {pairs}"
            elif up:
                hint = f"use {up.c_name} or later"
            else:
                same = sorted(
                    (d.name for d in sup.data_types if d.bits == t.data_type.bits),
                    key=lambda n: not n.startswith("UINT"),
                )
                hint = f"no feature level tiles {t.data_type.name}; Tile copies bits, so tile the same bytes as another type"
                if same:
                    hint += f": {same[0]}"
                if t.data_type.bits > 32:
                    hint += (
                        f"{' or' if same else ':'} {t.data_type.bits // 32} UINT32 values per element"
                        f" (one more innermost dimension of {t.data_type.bits // 32}, repeat 1)"
                    )
            yield issue(
                "DML302",
                f"{p}.DataType",
                f"{name}.DataType is {t.data_type.name}; Tile at {level.c_name} supports {supported}",
                hint,
            )


_register(
    "DML303",
    f"the feature level is one DirectML defines ({levels_text()})",
    "DML_FEATURE_LEVEL (DirectML.h)",
    "feature_level",
)


def descriptor_rules() -> list[Rule]:
    """The rules that depend on the descriptor alone, in code order."""
    return [r for r in sorted(RULES.values(), key=lambda r: r.code) if r.phase == "descriptor"]


def level_rules() -> list[Rule]:
    """The rules that depend on the feature level, in code order."""
    return [r for r in sorted(RULES.values(), key=lambda r: r.code) if r.phase == "feature_level" and r.check]
