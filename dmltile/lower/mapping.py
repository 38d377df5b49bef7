"""Map a framework's Tile (shape, non-negative repeats, element type) onto DML_TILE_OPERATOR_DESC.

Tile copies elements without looking at them, so the mapping may change how the bytes are
described as long as every output byte comes from the same input byte:
* element types: a type the level's Tile row lists is used as is; any other fixed-size type is
  described as unsigned integers of a width the level lists (bool as UINT8, bfloat16 as UINT16,
  64-bit types as UINT32 pairs below 4.1 and float64 always, complex64/128 as 2/4 UINT32), the
  extra UINT32s forming one more innermost axis that repeats once. Integer types are used for
  this because they copy every bit pattern; a float copy on a GPU may flush denormals.
* dimensions: fewer dimensions than the level takes are padded with leading 1s; more are reduced
  by dropping size-1 axes that repeat once and merging neighbours that tile alike.
What the level accepts is asked of ``feature_levels`` and ``validation``, never re-derived here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

from ..core.enums import DataType, FeatureLevel
from ..core.operator import OperatorDesc
from ..core.shape import tile_output_sizes
from ..validate.api import validate
from ..validate.levels import tile_row, tile_rows, tile_support
from ..validate.rules import lowest_level
from .framework import element_count, itemsize

NATIVE = {d.numpy_dtype.name: d for d in DataType if d.numpy_dtype is not None}
# Types DirectML names but whose bits a lowering always copies as UINT32 groups (the Tile page lists
# no FLOAT64).
ALWAYS_REINTERPRET = {"float64"}
REINTERPRET_WIDTHS = (DataType.UINT32, DataType.UINT16, DataType.UINT8)


@dataclass
class Mapping:
    """The DirectML side of a plan at one level: a descriptor, or the reason there is none."""

    level: FeatureLevel
    descriptor: OperatorDesc | None = None
    reason: str | None = None
    data_type: DataType | None = None
    group: int = 1  # DirectML elements per framework element
    steps: list[str] = field(default_factory=list)


def _element_type(dtype: str, level: FeatureLevel) -> tuple[DataType | None, int, str]:
    """(DataType, DirectML elements per element, the step sentence or the unsupported reason)."""
    size = itemsize(dtype)
    if size is None:
        return (
            None,
            0,
            (
                f"{dtype} elements have no fixed size and no DML_TENSOR_DATA_TYPE; DirectML tensors "
                "hold fixed-size elements, so a string Tile cannot run on DirectML"
            ),
        )
    supported = tile_row(level).tensors["InputTensor"].data_types
    native = NATIVE.get(dtype)
    if native is not None and native in supported and dtype not in ALWAYS_REINTERPRET:
        return native, 1, ""
    for width in REINTERPRET_WIDTHS:
        if width in supported and size % width.element_size == 0:
            group = size // width.element_size
            how = (
                f"as {width.name}"
                if group == 1
                else f"as {group} {width.name} values (one more innermost axis of {group}, repeat 1)"
            )
            return (
                width,
                group,
                f"Reinterpreted each {dtype} element {how}, bit-exactly: Tile copies bits and "
                f"{level.c_name} Tile has no {native.name if native else dtype} type.",
            )
    first = lowest_level("InputTensor", data_type=DataType.UINT8)
    listed = ", ".join(d.name for d in supported)
    since = f"which Tile has from {first.c_name}" if first else "which no feature level's Tile has"
    return (
        None,
        0,
        (
            f"Tile at {level.c_name} supports only {listed}; copying {dtype} bit-exactly needs an integer "
            f"type of the same width, {since}"
        ),
    )


def _reduce_once(axes: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], str] | None:
    """One rank reduction that keeps the copy identical, with its sentence; None when none applies."""
    for i, (s, r) in enumerate(axes):
        if s == 1 and r == 1 and len(axes) > 1:
            return axes[:i] + axes[i + 1 :], f"Dropped axis {i} (size 1, repeat 1): it changes nothing."
    for i in range(len(axes) - 1):
        (a, ra), (b, rb) = axes[i], axes[i + 1]
        if rb == 1:  # the whole a*b block is copied ra times
            merged = (a * b, ra)
        elif a == 1:  # b is copied rb times, and that ra times
            merged = (b, ra * rb)
        else:
            continue
        return (
            axes[:i] + [merged] + axes[i + 2 :],
            f"Merged axes {i} and {i + 1} (sizes {a} and {b}, repeats {ra} and {rb}) into one axis of size "
            f"{merged[0]} repeated {merged[1]} times: both copy the same bytes in the same order.",
        )
    return None


def _fit_dimensions(
    axes: list[tuple[int, int]], level: FeatureLevel, steps: list[str]
) -> list[tuple[int, int]]:
    counts = tile_row(level).tensors["InputTensor"].dimension_counts
    lo, hi = min(counts), max(counts)
    while len(axes) > hi:
        reduced = _reduce_once(axes)
        if reduced is None:
            break
        axes, sentence = reduced
        steps.append(sentence)
    if len(axes) < lo:
        pad = lo - len(axes)
        why = (
            f"Tile at {level.c_name} takes exactly {lo} dimensions"
            if lo == hi
            else "DirectML tensors have at least 1 dimension"
        )
        steps.append(
            f"Padded to {lo} dimension{'s' * (lo > 1)} with {pad} leading size-1 axes repeated once: {why}."
        )
        axes = [(1, 1)] * pad + axes
    return axes


def map_to_directml(
    shape: tuple[int, ...], repeats: tuple[int, ...], dtype: str, level: FeatureLevel
) -> Mapping:
    """The DirectML descriptor for a non-empty Tile of ``shape`` by ``repeats`` at ``level``, or why not.
    Each (shape, repeats, type, level) is judged once: a model's nodes alike, and the levels
    ``lowest_dispatch_level`` tries, share it (the caller gets steps of its own)."""
    m = _mapped(tuple(shape), tuple(repeats), dtype, level)
    return replace(m, steps=list(m.steps))


@functools.lru_cache(maxsize=4096)
def _mapped(shape: tuple[int, ...], repeats: tuple[int, ...], dtype: str, level: FeatureLevel) -> Mapping:
    m = Mapping(level)
    if tile_support(level) is None:
        m.reason = f"{level.c_name} has no Tile operator"
        return m
    data_type, group, sentence = _element_type(dtype, level)
    if data_type is None:
        m.reason = sentence
        return m
    m.data_type, m.group = data_type, group
    if sentence:
        m.steps.append(sentence)
    axes = list(zip(shape, repeats, strict=False)) + ([(group, 1)] if group > 1 else [])
    axes = _fit_dimensions(axes, level, m.steps)
    sizes, reps = [s for s, _ in axes], [r for _, r in axes]
    doc = {
        "InputTensor": {"DataType": data_type.name, "Sizes": sizes},
        "OutputTensor": {"DataType": data_type.name, "Sizes": list(tile_output_sizes(sizes, reps))},
        "Repeats": reps,
    }
    report = validate(doc, level)
    if not report.valid:
        m.reason = "; ".join(f"{i.code} {i.path}: {i.message}" for i in report.errors)
        return m
    m.descriptor = OperatorDesc.model_validate(doc)
    m.steps.append(
        f"DirectML Tile at {level.c_name}: {data_type.name} input Sizes {sizes}, Repeats {reps}, "
        f"output Sizes {list(m.descriptor.output.sizes)}."
    )
    return m


def lowest_dispatch_level(
    shape: tuple[int, ...], repeats: tuple[int, ...], dtype: str
) -> FeatureLevel | None:
    """The lowest known feature level at which this Tile maps onto a valid descriptor."""
    if element_count(tile_output_sizes(shape, repeats)) == 0:
        return None
    # Support only changes at the tables' rows, so the first level of each row stands for the row.
    for level in (row.feature_level for row in tile_rows()):
        if map_to_directml(shape, repeats, dtype, level).descriptor is not None:
            return level
    return None
