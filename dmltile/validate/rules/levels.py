"""Feature-level rules (DML3xx, and DML112): what Tile takes at a DirectML feature level, or in one
DirectML version."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ...core.enums import DataType, FeatureLevel
from ...core.operator import OperatorDesc
from ...core.tables import read_table
from ..levels import known_levels, levels_text, parse_feature_level, tile_row, tile_support
from ..report import Edit, Issue
from ..suggest import accepted_values
from .citations import MEASURED, TILE_PAGE
from .edits import TENSORS, apply_fix, describe, split_path, wrapped
from .registry import Example, Words, found, register, rule
from .tensor import tensors
from .values import at, buffer, dtype_of, repeats_of, sizes_of

VALID_2D = {
    "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
    "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
    "Repeats": [2, 3],
}


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


def first_level_text(data_type: DataType) -> str:
    """The first level whose Tile row takes ``data_type``, dotted ("4.1"), for the rules' sentences."""
    level = lowest_level("InputTensor", data_type=data_type)
    return level.dotted if level else "no level"


# FLOAT64's place in the table is measured (the page lists none); the sentences below follow the table.
FLOAT64_FROM = first_level_text(DataType.FLOAT64)


# -- rank and type rewrites: the fixes of DML301 and DML302 ---------------------------------------
def _rank_edits(
    doc: Any,
    sizes_fn: Callable[[list], list],
    repeats_fn: Callable[[list], list],
    strides_fn: Callable[[list], list],
) -> list[Edit]:
    """Edits applying one axis rewrite to both tensors and the Repeats (and their counts)."""
    edits = []
    for tensor in TENSORS:
        t = buffer(doc, tensor)
        base = f"Desc.{tensor}.Desc"
        sizes = sizes_fn(list(t.get("Sizes", [])))
        edits.append(Edit(op="set", path=f"{base}.Sizes", value=sizes))
        if isinstance(t.get("Strides"), list):
            edits.append(Edit(op="set", path=f"{base}.Strides", value=strides_fn(list(t["Strides"]))))
        if "DimensionCount" in t:
            edits.append(Edit(op="set", path=f"{base}.DimensionCount", value=len(sizes)))
    reps = repeats_fn(list(at(doc, "Desc", "Repeats") or []))
    edits.append(Edit(op="set", path="Desc.Repeats", value=reps))
    if "RepeatsCount" in (at(doc, "Desc") or {}):
        edits.append(Edit(op="set", path="Desc.RepeatsCount", value=len(reps)))
    return edits


def _pad_rank(doc: Any, ins: list[int], k: int) -> list[Edit]:
    """``k`` leading axes of size 1 (their strides span the whole tensor, as packed ones would)."""

    def lead(strides: list) -> list:
        span = strides[0] * ins[0] if strides else 1
        return [span] * k + strides

    return _rank_edits(doc, lambda v: [1] * k + v, lambda v: [1] * k + v, lead)


def fit_rank(doc: Any, level: FeatureLevel) -> list[Edit] | None:
    """Pad with leading 1s, or drop axes of size 1 that are not repeated, to a rank the level takes."""
    row = tile_support(level)
    ins, outs, reps = sizes_of(doc, "InputTensor"), sizes_of(doc, "OutputTensor"), repeats_of(doc)
    if row is None or not ins or not outs or not reps or not len(ins) == len(outs) == len(reps):
        return None
    dims = row.tensors["InputTensor"].dimension_counts
    n = len(ins)
    if n in dims:
        return []
    if n < min(dims):
        return _pad_rank(doc, ins, min(dims) - n)
    drop = [i for i in range(n) if ins[i] == 1 and reps[i] == 1 and outs[i] == 1]
    target = max((d for d in dims if d <= n), default=None)
    if target is None or n - len(drop) > target:
        return None
    keep = [i for i in range(n) if i not in drop[: n - target]]

    def pick(v: list) -> list:
        return [v[i] for i in keep]

    return _rank_edits(doc, pick, pick, pick)


def same_width(dtype: DataType, supported: Sequence[DataType]) -> DataType | None:
    """The supported type with ``dtype``'s width (unsigned first), whose elements are the same bytes."""
    same = sorted((d for d in supported if d.bits == dtype.bits), key=lambda d: not d.name.startswith("UINT"))
    return same[0] if same else None


def halves(dtype: DataType, supported: Sequence[DataType]) -> DataType | None:
    """For a 64-bit type, the 32-bit type the level takes (UINT32, else FLOAT32) whose pairs hold its
    bytes: Tile copies bits, so each element tiles as two; None when the level takes neither."""
    if dtype.bits != 64:
        return None
    return next((d for d in (DataType.UINT32, DataType.FLOAT32) if d in supported), None)


def _as_pairs(doc: Any, dims: frozenset[int]) -> list[Edit] | None:
    """Each element read as two 32-bit ones, within the dimension counts ``dims``: one more
    innermost axis of 2 (repeat 1) where the level takes one more dimension, else the innermost size
    doubled, which holds the same bytes only where the innermost elements are contiguous."""
    ins = sizes_of(doc, "InputTensor")
    if not ins:
        return None
    if len(ins) + 1 in dims:
        return _rank_edits(doc, lambda v: v + [2], lambda v: v + [1], lambda st: [s * 2 for s in st] + [1])
    strided = [buffer(doc, t).get("Strides") for t in TENSORS]
    sizes = [sizes_of(doc, t) or [] for t in TENSORS]
    if len(ins) not in dims or any(
        isinstance(st, list) and st and (st[-1] != 1 and sz[-1:] != [1])
        for st, sz in zip(strided, sizes, strict=True)
    ):
        return None
    return _rank_edits(
        doc, lambda v: v[:-1] + [v[-1] * 2], lambda v: v, lambda st: [s * 2 for s in st[:-1]] + [1]
    )


def as_pairs(doc: Any, level: FeatureLevel, half: DataType) -> list[Edit] | None:
    """The edits reading each element as two ``half`` ones, at a rank the level takes; only the
    fields they change."""
    row, fitted = tile_support(level), fit_rank(doc, level)
    if row is None or fitted is None:
        return None
    pairs = _as_pairs(apply_fix(doc, fitted), row.tensors["InputTensor"].dimension_counts)
    if pairs is None:
        return None
    edits = [Edit(op="set", path=f"Desc.{t}.Desc.DataType", value=half.c_name) for t in TENSORS] + pairs
    return [e for e in edits if at(doc, *split_path(e.path)) != e.value]


def retype(doc: Any, level: FeatureLevel, dtype: DataType) -> list[Edit] | None:
    """Tile copies bits: the same bytes as an accepted type of the same width, or 64-bit elements
    as two 32-bit ones each, at a rank the level takes (``as_pairs``)."""
    ok = accepted_values("DML_TENSOR_DATA_TYPE", level)
    same = same_width(dtype, ok)
    if same:
        return [Edit(op="set", path=f"Desc.{t}.Desc.DataType", value=same.c_name) for t in TENSORS]
    half = halves(dtype, ok)
    return None if half is None else as_pairs(doc, level, half)


def _compact(values: Any) -> str:
    return "[" + ",".join(str(v) for v in values) + "]" if isinstance(values, list) else str(values)


def say_pairs(dtype: DataType, edits: list[Edit]) -> str:
    """The pairs rewrite in one sentence per tensor, with what it does to the Repeats:
    "InputTensor: read the INT64 data as UINT32 pairs: Sizes [2,2,2,6], same bytes"."""
    new = {e.path: e.value for e in edits if e.op == "set"}
    said = []
    for t in TENSORS:
        base = f"Desc.{t}.Desc"
        if f"{base}.DataType" not in new:  # a tensor of another type (a mismatch) keeps its own
            continue
        half = DataType.parse(new[f"{base}.DataType"]).name
        layout = f"Sizes {_compact(new.get(f'{base}.Sizes'))}"
        if isinstance(new.get(f"{base}.Strides"), list):
            layout += f", Strides {_compact(new[f'{base}.Strides'])}"
        said.append(f"{t}: read the {dtype.name} data as {half} pairs: {layout}, same bytes")
    return "; ".join(said) + (f"; Repeats {_compact(new['Desc.Repeats'])}" if "Desc.Repeats" in new else "")


def say_as_uint32_pairs(desc: OperatorDesc, level: FeatureLevel, dtype: DataType) -> str:
    """How ``desc``'s 64-bit ``dtype`` tiles as UINT32 pairs at ``level`` (``as_pairs``, said by
    ``say_pairs``), for the rules that tell a 64-bit Tile it can do without its type."""
    pairs = as_pairs(wrapped(desc.to_dict()), level, DataType.UINT32)
    return say_pairs(dtype, pairs) if pairs else "tile its bytes as UINT32 pairs"


def _fix_rank(doc: Any, found: Issue, level: FeatureLevel) -> list[Edit] | None:
    return fit_rank(doc, level) or None


def _fix_type(doc: Any, found: Issue, level: FeatureLevel) -> list[Edit] | None:
    dtype = dtype_of(doc, str(split_path(found.path)[1]))
    return retype(doc, level, dtype) if dtype else None


def _rank_case(n: int, dims: frozenset[int]) -> str:
    """Which of DML301's hints fits: pad to the level's one rank, merge down to its most, or neither."""
    if n < 4 and dims == frozenset({4}):
        return "pad"
    return "merge" if n > max(dims) else ""


@rule(
    "DML301",
    "the dimension count is one Tile supports at the feature level",
    TILE_PAGE + ", Tensor support",
    "feature_level",
    why="Each feature level lists the dimension counts its Tile implementation takes: exactly 4 "
    "before DML_FEATURE_LEVEL_3_1, 1 to 8 from 3.1 on. A device at a lower level has no code for "
    "other ranks.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 1, 2, 3]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 1, 4, 9]},
            "Repeats": [1, 1, 1, 1, 2, 3],
        },
        feature_level="2.1",
    ),
    fix=_fix_rank,
    fix_hint=lambda found, edits, own: f"{found.hint}: {describe(edits[:own])}",
    words={
        case: Words("{tensor} has {rank:dimension}; Tile at {level} supports {dims}", "{reach}" + other)
        for case, other in (
            ("", ""),
            ("pad", ", or pad Sizes (and Repeats) with {pad:leading 1|leading 1s} to make it 4-D"),
            ("merge", ", or merge neighbouring dimensions that tile alike to get {most} or fewer"),
        )
    },
)
def check_level_dims(desc: OperatorDesc, level: FeatureLevel) -> Iterator[Issue]:
    row = tile_row(level)
    for name, p, t in tensors(desc):
        sup = row.tensors[name]
        n = len(t.sizes)
        if n not in sup.dimension_counts:
            up = lowest_level(name, dims=n)
            yield found(
                "DML301",
                f"{p}.DimensionCount",
                _rank_case(n, sup.dimension_counts),
                tensor=name,
                rank=n,
                level=level.c_name,
                dims=sup.dims_text(),
                reach=later_level(up) if up else f"no feature level takes {n} dimensions",
                pad=4 - n,
                most=max(sup.dimension_counts),
            )


@functools.cache
def first_version_reaching(level: FeatureLevel) -> str | None:
    """The oldest measured DirectML version whose maximum feature level is ``level`` or above."""
    rows = read_table("directml_versions.toml")["version"]
    reaching = [r["directml"] for r in rows if parse_feature_level(r["max_feature_level"]) >= level]
    oldest = min(reaching, key=lambda v: tuple(int(p) for p in v.split(".")), default=None)
    return oldest.removesuffix(".0") if oldest and oldest.count(".") == 3 else oldest


def later_level(up: FeatureLevel) -> str:
    """'use LEVEL or later' and the DirectML version that first offers it, so that a user pinned to
    an older DLL sees it cannot reach the level."""
    version = first_version_reaching(up)
    return f"use {up.c_name} or later" + (f" (DirectML {version} or newer)" if version else "")


def _data_type_hint(data_type: DataType, edits: list[Edit] | None, up: FeatureLevel | None) -> str:
    """Ways to tile ``data_type`` anyway: its bits as a type the level takes (Tile copies bits, so
    the result is the same bytes), said from the edits that do it, or a later level; says so when no
    way fits at this level."""
    ways = []
    if edits and len(edits) == len(TENSORS):
        same = DataType.parse(edits[0].value).name
        ways.append(f"{' and '.join(TENSORS)}: read the {data_type.name} data as {same}, same bytes")
    elif edits:
        ways.append(say_pairs(data_type, edits))
    if up:
        ways.append(later_level(up))
    if not edits:
        ways.append(f"no layout this level takes holds {data_type.name}'s {data_type.bits}-bit elements")
    head = "" if up else f"no feature level tiles {data_type.name}; "
    return head + "; or ".join(ways)


def _hint_type(found: Issue, edits: list[Edit], own: int) -> str:
    """The check said the rewrite from these same edits (``retype`` on the descriptor it judged)."""
    return found.hint


@rule(
    "DML302",
    "the data type is one Tile supports at the feature level",
    TILE_PAGE + ", Tensor support",
    "feature_level",
    why="Each feature level lists the data types its Tile takes: FLOAT32 and FLOAT16 from 1.0, 8-, "
    f"16- and 32-bit integers from 2.1, 64-bit integers from 4.1, FLOAT64 from {FLOAT64_FROM} as measured (the "
    "page lists none). Tile copies bits, so another type of the same width tiles the same bytes.",
    example=Example(
        {
            "InputTensor": {"DataType": "INT16", "Sizes": [1, 1, 2, 3]},
            "OutputTensor": {"DataType": "INT16", "Sizes": [1, 1, 4, 9]},
            "Repeats": [1, 1, 2, 3],
        },
        feature_level="1.0",
    ),
    fix=_fix_type,
    fix_hint=_hint_type,
    words=Words("{tensor}.DataType is {type}; Tile at {level} supports {supported}", "{ways}"),
)
def check_level_types(desc: OperatorDesc, level: FeatureLevel) -> Iterator[Issue]:
    row = tile_row(level)
    for name, p, t in tensors(desc):
        sup = row.tensors[name]
        if t.data_type not in sup.data_types:
            up = lowest_level(name, data_type=t.data_type)
            edits = retype(wrapped(desc.to_dict()), level, t.data_type)
            yield found(
                "DML302",
                f"{p}.DataType",
                tensor=name,
                type=t.data_type.name,
                level=level.c_name,
                supported=", ".join(d.name for d in sup.data_types),
                ways=_data_type_hint(t.data_type, edits, up),
            )


register(
    "DML303",
    f"the feature level is one DirectML defines ({levels_text()})",
    "DML_FEATURE_LEVEL (DirectML.h)",
    "feature_level",
    why="A feature level names a set of operators and tensor support that a device promises; a "
    "level DirectML does not define promises nothing, so there is nothing to judge the document by.",
    example=Example(
        VALID_2D,
        feature_level="3.2",
        note="`dmltile validate` refuses the option itself: exit status 2 with this rule's message",
    ),
    words=Words("{reason}", "use a level from {levels}, e.g. 4.1"),
)


@rule(
    "DML304",
    f"FLOAT64 Tile is accepted by DirectML from {FLOAT64_FROM}, though the Tile page lists no FLOAT64",
    TILE_PAGE + ", Tensor support (no FLOAT64); CreateOperator of DirectML 1.7.0 (level 4.1) to 1.15.4 "
    "(docs/directml-conformance.md) accepts FLOAT64 at ranks 1 to 8",
    "feature_level",
    severity="warning",
    why="Where the page is silent and DirectML accepts, the descriptor is valid and the silence is a "
    "warning: a driver or a future DirectML could hold to the page.",
    example=Example(
        {
            "InputTensor": {"DataType": "FLOAT64", "Sizes": [2, 3]},
            "OutputTensor": {"DataType": "FLOAT64", "Sizes": [4, 9]},
            "Repeats": [2, 3],
        }
    ),
    words=Words(
        "{tensor}.DataType FLOAT64: DirectML (1.7.0 to 1.15.4) accepts FLOAT64 Tile, but the "
        "DML_TILE_OPERATOR_DESC page does not list it",
        "to rely only on what the page lists: {pairs}",
    ),
)
def check_undocumented_type(desc: OperatorDesc, level: FeatureLevel) -> Iterator[Issue]:
    row = tile_row(level)
    for name, p, t in tensors(desc):
        if t.data_type == DataType.FLOAT64 and t.data_type in row.tensors[name].data_types:
            yield found(
                "DML304", f"{p}.DataType", tensor=name, pairs=say_as_uint32_pairs(desc, level, t.data_type)
            )


register(
    "DML305",
    "the DirectML version is one dmltile has measured, and the feature level is at most its max",
    "feature_levels/directml_versions.toml (" + MEASURED + ")",
    "feature_level",
    why="dmltile answers for a DirectML version only from what that DLL was measured to do, and a "
    "DLL offers no feature level above its own maximum: an unmeasured version, or a level above "
    "what the version has, cannot be judged.",
    example=Example(
        VALID_2D,
        directml="9.9",
        note="`dmltile validate` refuses the option itself: exit status 2 with this rule's message",
    ),
    words={
        "unknown": Words("{reason}", "use one of the versions `dmltile levels` lists"),
        "above": Words(
            "feature level {level} is above what {version} supports",
            "use {most} or lower, or a newer DirectML",
        ),
    },
)

register(
    "DML112",
    "a TotalTensorSizeInBytes that only the 32-bit size arithmetic of DirectML 1.12 and older accepts",
    MEASURED + ": DirectML 1.12.0 and older compute the last element's index in 32 bits (1.8.0 and older "
    "the byte count too) and accept the wrapped size; 1.13.1 and later reject it",
    "feature_level",
    severity="warning",
    why="DirectML 1.12 and older compute a tensor's extent in 32-bit arithmetic, so a strided tensor "
    "reaching past 2^32 elements wraps to a small size they accept, though the elements really lie "
    "beyond the buffer; 1.13.1 and later compute it in 64 bits and reject the size (DML105).",
    example=Example(
        {
            "InputTensor": {
                "DataType": "FLOAT32",
                "Sizes": [3, 3],
                "Strides": [2147483648, 1],
                "TotalTensorSizeInBytes": 12,
            },
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [3, 3]},
            "Repeats": [1, 1],
        },
        directml="1.9.1",
    ),
    words=Words(
        "{tensor}.TotalTensorSizeInBytes is {total}: {version} computes the tensor's extent in 32 bits and "
        "accepts it ({wrapped:byte} after the wrap), but the elements really reach past it; DirectML 1.13 "
        "and later reject it",
        "{hint}",
    ),
)


def wrapped_size(name: str, path: str, total: int, version_label: str, wrapped: int, hint: str) -> Issue:
    """DML112: a size only the 32-bit arithmetic of ``version_label`` accepts (``wrapped``: the bytes
    it computes); ``hint`` is DML105's, which newer versions report."""
    return found("DML112", path, tensor=name, total=total, version=version_label, wrapped=wrapped, hint=hint)
