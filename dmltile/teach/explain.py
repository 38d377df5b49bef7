"""Teaching one Tile descriptor: what each field means, how the output sizes and byte sizes follow,
which feature levels accept it, which input element each output element copies, and a picture.

``explain(source)`` returns an ``Explanation`` (plain data, printable with rich); ``map_index`` and
``size_derivation`` are usable on their own. Facts come from the DML_TILE_OPERATOR_DESC page
(output[i] = input[i mod input size], OutputTensor.Sizes = InputTensor.Sizes * Repeats) and the
DML_BUFFER_TENSOR_DESC page and DMLCalcBufferTensorSize (helper functions page) for strides and sizes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.enums import FeatureLevel
from ..core.fields import FIELDS
from ..core.operator import OperatorDesc
from ..core.shape import input_index, tile_output_sizes, whole_numbers
from ..core.tensor import BufferTensorDesc, calc_buffer_tensor_size
from ..core.words import plural
from ..errors import ArgumentError, DmlTileError
from ..validate.api import parse_and_validate, validate
from ..validate.levels import DEFAULT_FEATURE_LEVEL, known_levels
from ..validate.report import Issue, ValidationReport
from ..validate.rules import RULES, field_description
from ..validate.source import Loaded, Source, read_source

WHAT_TILE_DOES = (
    "Tile copies the whole input tensor Repeats[i] times along each dimension i, "
    "so output element o is input element (o mod InputTensor.Sizes)."
)


@dataclass(frozen=True)
class FieldRow:
    """One field of the canonical document: where it sits, its value, its C type and meaning."""

    struct: str
    path: str
    value: str
    c_type: str
    meaning: str
    written: bool


@dataclass(frozen=True)
class SizeDerivation:
    """DMLCalcBufferTensorSize for one tensor, step by step."""

    tensor: str
    minimum: int | None
    written: int
    steps: list[str]
    ok: bool


@dataclass(frozen=True)
class IndexMapping:
    """Which input element one output element copies, and where both sit in their buffers."""

    output_index: tuple[int, ...]
    input_index: tuple[int, ...]
    input_byte_offset: float
    output_byte_offset: float
    steps: list[str]


@dataclass(frozen=True)
class LevelVerdict:
    """The verdict at a run of neighbouring feature levels that all answer alike."""

    levels: tuple[FeatureLevel, ...]
    valid: bool
    issues: list[Issue]

    @property
    def label(self) -> str:
        """``"2.1"`` or ``"2.1 to 3.0"``."""
        first, last = self.levels[0].dotted, self.levels[-1].dotted
        return first if first == last else f"{first} to {last}"


@dataclass
class Explanation:
    """Everything ``dmltile explain`` prints, as data."""

    desc: OperatorDesc | None
    report: ValidationReport
    summary: str
    fields: list[FieldRow] = field(default_factory=list)
    shape: list[dict] = field(default_factory=list)
    sizes: list[SizeDerivation] = field(default_factory=list)
    levels: list[LevelVerdict] = field(default_factory=list)
    mapping: IndexMapping | None = None


def explain(
    source: Source, feature_level: Any = DEFAULT_FEATURE_LEVEL, index: Sequence[int] | None = None
) -> Explanation:
    """Explain a descriptor (path, JSON text, dict or OperatorDesc) at ``feature_level``.

    Bad content is explained, not raised: the report lists its issues. Raises InputError for a
    file that cannot be read, ValueError for an unknown level or an ``index`` outside the output.
    """
    raw = read_source(source)
    desc, report = parse_and_validate(Loaded(raw), feature_level)
    if report.feature_level is None:
        raise DmlTileError(next(i.message for i in report.issues if i.code == "DML303"))
    if desc is None:
        return Explanation(
            desc=None,
            report=report,
            summary=WHAT_TILE_DOES + " This document cannot be read as a "
            "descriptor; the issues below say why.",
        )
    out = expected_output_sizes(desc)
    summary = WHAT_TILE_DOES + (
        f" Here an input of DataType {desc.input.data_type.name} and Sizes {list(desc.input.sizes)} "
        f"repeated {list(desc.repeats)} times becomes an output of Sizes {list(out)}."
        if out is not None
        else ""
    )
    return Explanation(
        desc=desc,
        report=report,
        summary=summary,
        fields=field_rows(desc, raw if isinstance(raw, dict) else None),
        shape=shape_rows(desc),
        sizes=[size_derivation("InputTensor", desc.input), size_derivation("OutputTensor", desc.output)],
        levels=level_verdicts(desc),
        mapping=map_index(desc, index) if index is not None else None,
    )


def expected_output_sizes(desc: OperatorDesc) -> tuple[int, ...] | None:
    """The output sizes the input sizes and repeats imply, or None when their counts differ."""
    try:
        return tile_output_sizes(desc.input.sizes, desc.repeats)
    except ValueError:
        return None


# -- fields ---------------------------------------------------------------------------------
_STRUCTS = {
    "": "DML_OPERATOR_DESC",
    "Desc": "DML_TILE_OPERATOR_DESC",
    "Desc.InputTensor": "InputTensor: DML_TENSOR_DESC",
    "Desc.InputTensor.Desc": "InputTensor: DML_BUFFER_TENSOR_DESC",
    "Desc.OutputTensor": "OutputTensor: DML_TENSOR_DESC",
    "Desc.OutputTensor.Desc": "OutputTensor: DML_BUFFER_TENSOR_DESC",
}


def _was_written(raw: dict | None, parts: list[str]) -> bool:
    """Whether the document as written holds this field (the Type/Desc wrappers are optional)."""
    node: Any = raw
    for part in parts:
        if not isinstance(node, dict):
            return False
        if part in node:
            node = node[part]
        elif part != "Desc":
            return False
    return True


def field_rows(desc: OperatorDesc, raw: dict | None = None) -> list[FieldRow]:
    """Every leaf field of the canonical document, in document order, with its meaning.

    ``raw`` (the document as written) marks which fields were left out and filled by default.
    """
    rows: list[FieldRow] = []

    def walk(node: dict, parts: list[str]) -> None:
        for key, value in node.items():
            here = parts + [key]
            if isinstance(value, dict):
                walk(value, here)
                continue
            info = FIELDS.get(key)
            rows.append(
                FieldRow(
                    struct=_STRUCTS.get(".".join(parts), ".".join(parts)),
                    path=".".join(here),
                    value=json.dumps(value),
                    c_type=info.c_type if info else "",
                    meaning=field_description(key) if info else "",
                    written=raw is None or _was_written(raw, here),
                )
            )

    walk(desc.to_dict(), [])
    return rows


def shape_rows(desc: OperatorDesc) -> list[dict]:
    """Per dimension: input size, repeat, the output size they imply, and the output size written."""
    ins, reps, outs = desc.input.sizes, desc.repeats, desc.output.sizes
    rows = []
    for k in range(max(len(ins), len(reps), len(outs))):
        i = ins[k] if k < len(ins) else None
        r = reps[k] if k < len(reps) else None
        want = i * r if i is not None and r is not None else None
        got = outs[k] if k < len(outs) else None
        rows.append(
            {
                "dimension": k,
                "input": i,
                "repeat": r,
                "implied": want,
                "written": got,
                "ok": want is not None and want == got,
            }
        )
    return rows


# -- byte sizes -----------------------------------------------------------------------------
def _offset_text(bits: int) -> str:
    return f"byte {bits // 8}" if bits % 8 == 0 else f"bit {bits} (byte {bits // 8}, bit {bits % 8})"


def size_derivation(name: str, t: BufferTensorDesc) -> SizeDerivation:
    """DMLCalcBufferTensorSize for ``t``, as the steps a student would write down.

    index of the last element = sum((Sizes[i]-1) * Strides[i]); bytes = (index + 1) * element
    size; rounded up to a multiple of 4. The result is checked against TotalTensorSizeInBytes.
    """
    dt, sizes = t.data_type, list(t.sizes)
    width = plural(dt.bits // 8, "byte") if dt.bits % 8 == 0 else plural(dt.bits, "bit")
    steps = [f"{name}: {dt.name}, {width} per element, Sizes {sizes}"]
    written = t.total_tensor_size_in_bytes
    if dt.bits == 0:
        steps.append(f"{dt.c_name} has no element size, so no byte size follows")
        return SizeDerivation(name, None, written, steps, False)
    if t.strides is not None and len(t.strides) != len(sizes):
        steps.append(
            f"Strides {list(t.strides)} has {plural(len(t.strides), 'value')} for {len(sizes)} Sizes: "
            "no size follows (DML103)"
        )
        return SizeDerivation(name, None, written, steps, False)
    if 0 in sizes:
        steps.append(
            "a size is 0: the tensor has no elements, so DMLCalcBufferTensorSize gives 0 (and DML104 rejects it)"
        )
        return SizeDerivation(name, 0, written, steps, False)
    strides = list(t.effective_strides)
    if t.strides is None:
        steps.append(f"Strides null = packed: {strides} (the product of the sizes to the right)")
    else:
        steps.append(f"Strides {strides} (in elements; 0 repeats the same element along that dimension)")
    terms = [(s - 1) * st for s, st in zip(sizes, strides, strict=False)]
    last = sum(terms)
    steps.append("index of the last element = sum((Sizes[i]-1) * Strides[i])")
    steps.append(
        "  = "
        + " + ".join(f"({s}-1)*{st}" for s, st in zip(sizes, strides, strict=False))
        + " = "
        + (" + ".join(str(x) for x in terms) + " = " if len(terms) > 1 else "")
        + str(last)
    )
    raw_bits = (last + 1) * dt.bits
    raw_bytes = (raw_bits + 7) // 8
    if dt.bits % 8 == 0:
        steps.append(f"bytes = ({last} + 1) * {dt.bits // 8} = {raw_bytes}")
    else:
        steps.append(f"bytes = ceil(({last} + 1) * {dt.bits} bits / 8) = {raw_bytes}")
    minimum = calc_buffer_tensor_size(dt, sizes, t.strides)
    steps.append(f"rounded up to a multiple of 4 (DWORD-aligned) = {minimum} = DMLCalcBufferTensorSize")
    ok = written >= minimum and written % 4 == 0
    if ok:
        verdict = "ok" + (
            " (exactly the minimum)"
            if written == minimum
            else f" ({plural(written - minimum, 'byte')} of padding)"
        )
    elif written < minimum:
        verdict = f"too small: at least {minimum} is needed (DML105)"
    else:
        verdict = "not a multiple of 4 (DML106)"
    steps.append(f"TotalTensorSizeInBytes is {written}: {verdict}")
    return SizeDerivation(name, minimum, written, steps, ok)


# -- index mapping --------------------------------------------------------------------------
def map_index(desc: OperatorDesc, output_index: Sequence[int]) -> IndexMapping:
    """The input element that output element ``output_index`` copies (``o_k mod in_k``), and the
    byte offsets of both in their buffers (offset = sum(index_k * Strides[k]) * element size).

    Raises ArgumentError (a ValueError) when ``desc`` is no OperatorDesc or the index is no index of
    the output the descriptor implies.
    """
    if not isinstance(desc, OperatorDesc):
        raise ArgumentError(
            f"desc must be an OperatorDesc (dmltile.load reads one), not {type(desc).__name__}"
        )
    out_sizes = expected_output_sizes(desc)
    if out_sizes is None:
        raise ArgumentError(
            f"Repeats has {plural(len(desc.repeats), 'value')} for {plural(len(desc.input.sizes), 'input dimension')}, "
            "so no output index maps to an input index"
        )
    o = whole_numbers("output_index", output_index)
    if len(o) != len(out_sizes):
        raise ArgumentError(
            f"--index {list(o)} has {plural(len(o), 'value')}, "
            f"but the output has {plural(len(out_sizes), 'dimension')} "
            f"(Sizes {list(out_sizes)})"
        )
    for k, (v, n) in enumerate(zip(o, out_sizes, strict=False)):
        if not 0 <= v < n:
            raise ArgumentError(
                f"--index value {v} at dimension {k} is outside the output: it must be from 0 to {n - 1}"
            )
    ins = desc.input.sizes
    i = input_index(o, ins)
    steps = [
        f"output index {list(o)} copies input index [o_k mod InputTensor.Sizes[k]]",
        "  = [" + ", ".join(f"{a} mod {n}" for a, n in zip(o, ins, strict=False)) + f"] = {list(i)}",
    ]
    offsets = []
    for name, t, idx in (("input", desc.input, i), ("output", desc.output, o)):
        if t.strides is not None and len(t.strides) != len(idx):
            steps.append(
                f"{name} byte offset: Strides {list(t.strides)} has the wrong length (DML103), so none follows"
            )
            offsets.append(float("nan"))
            continue
        strides = t.effective_strides
        elements = sum(a * s for a, s in zip(idx, strides, strict=False))
        bits = elements * t.data_type.bits
        offsets.append(bits / 8)
        steps.append(
            f"{name} byte offset = sum(index_k * stride_k) * element size, "
            + ("strides" if t.strides is not None else "packed")
            + f" {list(strides)}"
        )
        steps.append(
            "  = ("
            + " + ".join(f"{a}*{s}" for a, s in zip(idx, strides, strict=False))
            + f") * {t.data_type.bits // 8 or t.data_type.bits / 8} = {_offset_text(bits)}"
        )
    if tuple(desc.output.sizes) != tuple(out_sizes):
        steps.append(
            f"note: the output as written has Sizes {list(desc.output.sizes)}, not the {list(out_sizes)} "
            "that Tile produces (DML205), so its offsets follow the written desc"
        )
    return IndexMapping(o, i, offsets[0], offsets[1], steps)


# -- feature levels -------------------------------------------------------------------------
def level_verdicts(desc: OperatorDesc) -> list[LevelVerdict]:
    """The verdict at every known level, neighbouring levels with the same issues merged."""
    verdicts: list[LevelVerdict] = []
    for level in known_levels():
        report = validate(desc, level)
        errors = report.errors
        if (
            verdicts
            and verdicts[-1].valid == report.valid
            and [(x.code, x.path) for x in verdicts[-1].issues] == [(x.code, x.path) for x in errors]
        ):
            last = verdicts[-1]
            verdicts[-1] = LevelVerdict(last.levels + (level,), last.valid, last.issues)
        else:
            verdicts.append(LevelVerdict((level,), report.valid, errors))
    return verdicts


def rule_text(code: str) -> str:
    """The one-line rule behind a code."""
    rule = RULES.get(code)
    return rule.rule if rule else ""


__all__ = [
    "Explanation",
    "FieldRow",
    "IndexMapping",
    "LevelVerdict",
    "SizeDerivation",
    "explain",
    "expected_output_sizes",
    "field_rows",
    "level_verdicts",
    "map_index",
    "rule_text",
    "shape_rows",
    "size_derivation",
]
