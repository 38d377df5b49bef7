"""The picture of a Tile descriptor as data: which cells of the input and the output are drawn, their
labels and colours, which are highlighted, and both buffers as strips of byte segments.

``build_picture(desc, index)`` computes it once; ``render.py`` draws it in a terminal with rich,
``svg.py`` as a vector drawing and ``html.py`` as an interactive page, all from the same model.

What is drawn, and why:

* **Grids.** Two axes of the output are drawn as rows and columns, chosen among the axes that are
  tiled (``Repeats[k] > 1``), so every picture shows the copies. Along each drawn axis at least two
  copies appear; long axes keep their first elements, their last ones and the ``index`` element,
  and mark what they leave out with an elision cell (``None`` in ``Axis.ticks``). Every other axis is
  held at the ``index`` element's value (0 without one). Each output cell names and is coloured
  like the input element it copies (``o_k mod InputTensor.Sizes[k]``).
* **Strips.** Each buffer is a row of element-sized slots from byte 0 to TotalTensorSizeInBytes:
  a slot that one element occupies, a slot several elements share (a Stride of 0 in the input
  reads one element many times; overlapping output strides write one slot several times), padding
  no element occupies (never read, or never written), and elements that fall past the end.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..core.operator import OperatorDesc
from ..core.shape import input_index, tile_output_sizes
from ..core.tensor import BufferTensorDesc, element_offsets
from ..core.words import plural

# One colour per input element in memory (by its element offset, cycling); neighbours differ strongly.
PALETTE = (
    "#c62828",
    "#2e7d32",
    "#1565c0",
    "#b8860b",
    "#8e24aa",
    "#00838f",
    "#e65100",
    "#5e35b1",
    "#558b2f",
    "#ad1457",
    "#37474f",
    "#6d4c41",
)

# Above this many elements in a tensor the strip is not computed (one int64 per element).
STRIP_ELEMENT_LIMIT = 1 << 20

Index = tuple[int, ...]


def key(index: Sequence[int]) -> str:
    """``(0, 0, 4, 7)`` -> ``"0,0,4,7"``: how an index is written in labels and HTML attributes."""
    return ",".join(str(int(v)) for v in index)


@dataclass(frozen=True)
class Axis:
    """One drawn axis of a grid: the tensor dimension, and the coordinates shown along it in order
    (``None`` marks an elision: the coordinates between its neighbours are left out)."""

    dim: int | None  # None: the single row of a grid that draws one axis
    ticks: tuple[int | None, ...]
    copy_size: int  # InputTensor.Sizes[dim]: a copy of the input starts every copy_size coordinates
    size: int  # the tensor's size along dim

    def copy_of(self, tick: int) -> int:
        return tick // self.copy_size

    def block_ids(self) -> list[object]:
        """Which copy of the input each drawn position belongs to; an elision between two copies is
        a block of its own, one inside a copy belongs to it."""
        ids: list[object] = []
        for p, t in enumerate(self.ticks):
            if t is not None:
                ids.append(self.copy_of(t))
                continue
            before, after = self.ticks[p - 1], self.ticks[p + 1]
            assert before is not None and after is not None  # elisions sit between shown ticks
            a, b = self.copy_of(before), self.copy_of(after)
            ids.append(a if a == b else ("gap", p))
        return ids

    def blocks(self) -> list[tuple[int, int]]:
        """(first, end) positions of each block of ``block_ids``."""
        ids = self.block_ids()
        spans, start = [], 0
        for p in range(1, len(ids) + 1):
            if p == len(ids) or ids[p] != ids[p - 1]:
                spans.append((start, p))
                start = p
        return spans


@dataclass(frozen=True)
class Cell:
    """One drawn cell of a grid. ``index`` is None for an elision cell."""

    index: Index | None
    source: Index | None  # the input element it holds (an input cell holds itself)
    label: str
    colour: int  # index into PALETTE; -1 for an elision
    highlight: bool = False
    byte_offset: int | None = None


@dataclass(frozen=True)
class Grid:
    """Two axes of one tensor, every other axis held at ``fixed``."""

    name: str  # "input" or "output"
    sizes: Index
    rows: Axis
    cols: Axis
    fixed: Index  # the full index the grid is a slice through (drawn axes ignored)
    cells: tuple[tuple[Cell, ...], ...]

    @property
    def slice_text(self) -> str:
        """``output[0, 0, r, c]``: the slice drawn, with r and c for the drawn axes."""
        parts = []
        for k, v in enumerate(self.fixed):
            parts.append("r" if k == self.rows.dim else "c" if k == self.cols.dim else str(v))
        return f"{self.name}[{', '.join(parts)}]"


@dataclass(frozen=True)
class Segment:
    """A run of bytes in a buffer: one element slot, padding, or an elided stretch."""

    start: int  # byte offset
    length: int  # bytes
    kind: str  # "element", "shared", "padding", "outside" (past TotalTensorSizeInBytes) or "gap"
    indices: tuple[Index, ...] = ()  # the tensor's indices at these bytes (at most a few listed)
    count: int = 0  # how many indices sit here in all
    source: Index | None = None  # the input element the bytes hold
    label: str = ""
    colour: int = -1
    highlight: bool = False
    writers: str = (
        ""  # for an output slot several output elements write: who, and that the value is undefined
    )


@dataclass(frozen=True)
class Strip:
    """One buffer, from byte 0 to TotalTensorSizeInBytes (and past it, if elements fall outside)."""

    name: str  # "input" or "output"
    total_bytes: int
    element_bytes: int
    strides: Index  # in elements
    segments: tuple[Segment, ...]
    padding_bytes: int  # bytes of TotalTensorSizeInBytes no element occupies
    shared_slots: int  # slots that more than one index reaches
    notes: tuple[str, ...]


@dataclass
class Picture:
    """Everything the three renderers draw. ``message`` alone means there is nothing to draw."""

    message: str = ""
    input_grid: Grid | None = None
    output_grid: Grid | None = None
    input_strip: Strip | None = None
    output_strip: Strip | None = None
    notes: list[str] = field(default_factory=list)
    legend: str = ""
    highlight: tuple[Index, Index] | None = None  # (output index, input index)

    @property
    def drawable(self) -> bool:
        return self.output_grid is not None


# -- choosing axes and ticks ------------------------------------------------------------------
def choose_axes(input_sizes: Sequence[int], repeats: Sequence[int]) -> tuple[int | None, int]:
    """(row dimension or None, column dimension): the tiled axes first (the last two if more than
    two are tiled), then the largest-numbered axes with more than one element, then any."""
    n = len(input_sizes)
    picked = [k for k in range(n) if repeats[k] > 1][-2:]
    for pool in (
        [k for k in reversed(range(n)) if input_sizes[k] > 1 and repeats[k] == 1],
        list(reversed(range(n))),
    ):
        for k in pool:
            if len(picked) < 2 and k not in picked:
                picked.append(k)
    picked.sort()
    return (None, picked[0]) if len(picked) == 1 else (picked[0], picked[1])


def offsets_within(size: int, budget: int, must: int | None) -> list[int]:
    """The coordinates of one copy that are drawn: all when they fit in ``budget``, else the first
    and last ones (and ``must``)."""
    if size <= budget:
        chosen = set(range(size))
    else:
        head, tail = (budget + 1) // 2, budget // 2
        chosen = set(range(head)) | set(range(size - tail, size))
    if must is not None:
        chosen.add(must)
    return sorted(chosen)


def copies_shown(repeat: int, must: int | None, most: int = 3) -> list[int]:
    """Which copies along an axis are drawn: all up to ``most`` (3 or 2), else the first ``most - 1``
    and the last (and the one holding ``must``): always at least two when the axis is tiled."""
    chosen = set(range(repeat)) if repeat <= most else set(range(most - 1)) | {repeat - 1}
    if must is not None:
        chosen.add(must)
    return sorted(chosen)


def with_gaps(coords: Sequence[int]) -> tuple[int | None, ...]:
    """Sorted coordinates with ``None`` wherever some are left out between two neighbours."""
    ticks: list[int | None] = []
    for n, c in enumerate(coords):
        if n and c - coords[n - 1] > 1:
            ticks.append(None)
        ticks.append(c)
    return tuple(ticks)


def axis_ticks(
    in_size: int, repeat: int, budget: int, must: int | None, most_copies: int = 3
) -> tuple[tuple[int | None, ...], tuple[int | None, ...]]:
    """(output ticks, input ticks) along one axis: shown copies x shown offsets, the same offsets
    in the input, so every drawn output cell's source is drawn too."""
    offsets = offsets_within(in_size, budget, None if must is None else must % in_size)
    copies = copies_shown(repeat, None if must is None else must // in_size, most_copies)
    out = [c * in_size + o for c in copies for o in offsets]
    return with_gaps(out), with_gaps(offsets)


# -- building -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Look:
    """How a cell names and colours the input element it holds: by its coordinates along the axes
    of more than one element, and one colour per input slot in memory, so elements that share bytes
    (a Stride of 0) share a colour and the grids show which output elements hold the same value."""

    input_sizes: Index
    label_axes: tuple[int, ...]
    strides: Index | None  # the input's element strides; None when they do not fit its Sizes

    @classmethod
    def of(cls, desc: OperatorDesc, ins: Index) -> _Look:
        axes = tuple(k for k in range(len(ins)) if ins[k] > 1) or (len(ins) - 1,)
        return cls(ins, axes, _strides_or_none(desc.input))

    def label(self, src: Index) -> str:
        return key([src[k] for k in self.label_axes])

    def colour(self, src: Index) -> int:
        if self.strides is None:  # the element's row-major number, in Python ints: sizes past 2^63 too
            number = 0
            for a, n in zip(src, self.input_sizes, strict=True):
                number = number * n + a
            return number % len(PALETTE)
        return sum(a * s for a, s in zip(src, self.strides, strict=True)) % len(PALETTE)

    def legend(self) -> str:
        names = "abcdefgh"
        parts = [
            names[self.label_axes.index(k)] if k in self.label_axes else "0"
            for k in range(len(self.input_sizes))
        ]
        return (
            f"A cell '{','.join(names[: len(self.label_axes)])}' holds input"
            f"[{', '.join(parts)}]; one colour per input element in memory (elements that share "
            "bytes share a colour)."
        )


def _no_picture(ins: Index, reps: Index) -> str | None:
    """Why a descriptor has nothing to draw, or None."""
    if len(ins) != len(reps):
        return "No picture: Repeats and InputTensor.Sizes have different lengths."
    if not ins:
        return "No picture: the input has no dimensions."
    if 0 in ins or 0 in reps:
        return "No picture: a size or a repeat is 0, so the output has no elements."
    return None


def _checked_index(index: Sequence[int] | None, out_sizes: Index) -> Index | None:
    if index is None:
        return None
    o_idx = tuple(int(v) for v in index)
    if len(o_idx) != len(out_sizes) or any(not 0 <= v < n for v, n in zip(o_idx, out_sizes, strict=True)):
        raise ValueError(f"index {list(o_idx)} is outside the output {list(out_sizes)}")
    return o_idx


def _tries(size: int, rep: int, cap: int) -> list[tuple[int, int]]:
    """(copies at most, elements per copy) to try along an axis, the richest first."""
    mosts = sorted({min(rep, 8), min(rep, 3), min(rep, 2)}, reverse=True)
    budgets = range(min(size, cap), min(size, 2) - 1, -1)
    return [(m, b) for m in mosts for b in budgets] or [(2, 2)]


Ticks = tuple[int | None, ...]


def _fit_ticks(
    ins: Index, reps: Index, dims: tuple[int | None, int], o_idx: Index | None, fits
) -> tuple[Ticks, Ticks]:
    """(output ticks, input ticks) along one drawn axis: the most copies and elements per copy for
    which ``fits(output ticks)`` holds (the last try when none does)."""
    dim = dims[0]
    if dim is None:
        return (0,), (0,)
    must = None if o_idx is None else o_idx[dim]
    ticks: tuple[Ticks, Ticks] = ((0,), (0,))
    for most, budget in _tries(ins[dim], reps[dim], dims[1]):
        ticks = axis_ticks(ins[dim], reps[dim], budget, must, most)
        if fits(ticks[0]):
            break
    return ticks


def _tick_width(ticks: Ticks) -> int:
    """The widest column number (a cell is at least one wider, so numbers never run together)."""
    return max((len(str(t)) for t in ticks if t is not None), default=1)


@dataclass(frozen=True)
class _Layout:
    """What the two grids share: the drawn dimensions, the input's Sizes, the highlighted indices."""

    row_dim: int | None
    col_dim: int
    ins: Index
    look: _Look
    o_idx: Index | None
    i_idx: Index | None

    def grid(
        self, name: str, sizes: Index, ticks: tuple[Ticks, Ticks], fixed: Index, t: BufferTensorDesc | None
    ):
        """The grid of one tensor (``t`` gives byte offsets when its strides fit ``sizes``)."""
        rows, cols = ticks
        row_dim, col_dim, ins = self.row_dim, self.col_dim, self.ins
        row_axis = Axis(
            row_dim,
            rows,
            ins[row_dim] if row_dim is not None else 1,
            sizes[row_dim] if row_dim is not None else 1,
        )
        col_axis = Axis(col_dim, cols, ins[col_dim], sizes[col_dim])
        strides = _strides_or_none(t) if t is not None else None
        elem = t.data_type.bits // 8 if t is not None and t.data_type.bits % 8 == 0 else 0
        lines = []
        for r in rows:
            line = []
            for c in cols:
                if r is None or c is None:
                    line.append(Cell(None, None, "…", -1))
                    continue
                full = list(fixed)
                if row_dim is not None:
                    full[row_dim] = r
                full[col_dim] = c
                line.append(self.cell(name, tuple(full), strides, elem))
            lines.append(tuple(line))
        return Grid(name, sizes, row_axis, col_axis, fixed, tuple(lines))

    def cell(self, name: str, idx: Index, strides: Index | None, elem: int) -> Cell:
        src = input_index(idx, self.ins)
        offset = None
        if strides is not None and elem:
            offset = sum(a * s for a, s in zip(idx, strides, strict=True)) * elem
        hl = (self.o_idx == idx) if name == "output" else (self.i_idx == idx)
        return Cell(idx, src, self.look.label(src), self.look.colour(src), hl, offset)


def build_picture(
    desc: OperatorDesc,
    index: Sequence[int] | None = None,
    max_width: int = 100,
    max_rows: int = 14,
    strip_slots: int = 64,
) -> Picture:
    """The picture model of ``desc``; ``index`` (an output index) is highlighted with its source.

    ``max_width`` (characters) and ``max_rows`` bound the grids as a terminal draws them (a cell is
    its label plus two spaces); ``strip_slots`` bounds the slots drawn per buffer. Never raises for
    a bad descriptor: ``Picture.message`` says why nothing is drawn.
    """
    ins, reps = tuple(int(v) for v in desc.input.sizes), tuple(int(v) for v in desc.repeats)
    problem = _no_picture(ins, reps)
    if problem:
        return Picture(message=problem)
    out_sizes = tile_output_sizes(ins, reps)
    o_idx = _checked_index(index, out_sizes)
    i_idx = input_index(o_idx, ins) if o_idx is not None else None
    look = _Look.of(desc, ins)
    row_dim, col_dim = choose_axes(ins, reps)
    # Columns: the most copies and elements per copy that keep each grid line within max_width.
    cell_w = max(len(look.label(tuple(s - 1 for s in ins))), 1) + 2
    out_cols, in_cols = _fit_ticks(
        ins,
        reps,
        (col_dim, 16),
        o_idx,
        lambda ticks: (
            len(str(out_sizes[col_dim])) + 2 + len(ticks) * (max(cell_w, _tick_width(ticks) + 1) + 1) + 1
            <= max_width
        ),
    )
    out_rows, in_rows = _fit_ticks(
        ins, reps, (row_dim, max_rows), o_idx, lambda ticks: len(ticks) <= max_rows
    )
    fixed_out = o_idx if o_idx is not None else tuple(0 for _ in ins)
    layout = _Layout(row_dim, col_dim, ins, look, o_idx, i_idx)
    input_grid = layout.grid("input", ins, (in_rows, in_cols), input_index(fixed_out, ins), desc.input)
    written = tuple(desc.output.sizes) == out_sizes
    output_grid = layout.grid(
        "output", out_sizes, (out_rows, out_cols), fixed_out, desc.output if written else None
    )
    picture = Picture(
        input_grid=input_grid,
        output_grid=output_grid,
        notes=_grid_notes(input_grid, output_grid, reps, fixed_out),
        legend=look.legend(),
        highlight=(o_idx, i_idx) if o_idx is not None and i_idx is not None else None,
    )
    _add_strips(picture, desc, look, out_sizes, strip_slots, math.prod(reps))
    return picture


def _grid_notes(input_grid: Grid, output_grid: Grid, reps: Index, fixed_out: Index) -> list[str]:
    """What the grids draw, and which tiled axes they leave out."""
    drawn = (output_grid.rows.dim, output_grid.cols.dim)
    ins = input_grid.sizes
    notes = [_axes_note(input_grid, output_grid, reps)]
    others = [k for k in range(len(ins)) if reps[k] > 1 and k not in drawn]
    if others:
        notes.append(
            "Also tiled, not drawn: "
            + ", ".join(f"axis {k} ({reps[k]} copies of {ins[k]})" for k in others)
            + f"; the picture is the slice at {key(fixed_out)}."
        )
    return notes


def _add_strips(
    picture: Picture, desc: OperatorDesc, look: _Look, out_sizes: Index, strip_slots: int, reads: int
) -> None:
    """Both buffers as strips, with a note for a buffer that cannot be drawn."""
    o_idx, i_idx = picture.highlight if picture.highlight else (None, None)
    picture.input_strip = build_strip("input", desc.input, look, i_idx, strip_slots, reads)
    if picture.input_strip is None:
        picture.notes.append(f"The input buffer is not drawn: {_no_strip(desc.input)}.")
    if tuple(desc.output.sizes) != out_sizes:
        picture.notes.append(
            f"The output buffer is not drawn: OutputTensor.Sizes is {list(desc.output.sizes)}, "
            f"not the {list(out_sizes)} Tile writes (DML205)."
        )
        return
    picture.output_strip = build_strip("output", desc.output, look, o_idx, strip_slots)
    if picture.output_strip is None:
        picture.notes.append(f"The output buffer is not drawn: {_no_strip(desc.output)}.")


def _no_strip(t: BufferTensorDesc) -> str:
    if t.strides is not None and len(t.strides) != len(t.sizes):
        return f"its Strides has {plural(len(t.strides), 'value')} for {len(t.sizes)} Sizes (DML103)"
    return f"{t.data_type.name} elements are not whole bytes"


def _strides_or_none(t: BufferTensorDesc) -> Index | None:
    if t.strides is not None and len(t.strides) != len(t.sizes):
        return None
    return tuple(int(s) for s in t.effective_strides)


def _axis_text(axis: Axis, reps: Sequence[int]) -> str:
    if axis.dim is None:
        return ""
    n = reps[axis.dim]
    copies = f"{n} copies of {axis.copy_size}" if n > 1 else "not tiled"
    shown = [t for t in axis.ticks if t is not None]
    left_out = axis.size - len(shown)
    return (
        f"axis {axis.dim} ({axis.size}: {copies}" + (f"; {left_out} left out at …" if left_out else "") + ")"
    )


def _axes_note(input_grid: Grid, output_grid: Grid, reps: Sequence[int]) -> str:
    rows = _axis_text(output_grid.rows, reps)
    cols = _axis_text(output_grid.cols, reps)
    lead = f"Drawn: {output_grid.slice_text} and {input_grid.slice_text}; "
    return lead + (f"rows along {rows}, columns along {cols}." if rows else f"columns along {cols}.")


# -- strips ---------------------------------------------------------------------------------
class _Occupancy:
    """Which element slots of a buffer the indices of a tensor reach, and how often.

    Kept sparse (the slots used, with their counts) so that memory and work follow the elements,
    never the byte size a document claims: TotalTensorSizeInBytes 4,000,000,000 costs what 6 costs."""

    def __init__(self, sizes: Index, strides: Index, total: int, elem: int):
        self.sizes = sizes
        self.offsets = element_offsets(sizes, strides)
        self.in_slots = -(-total // elem)  # slots inside TotalTensorSizeInBytes (the last may be short)
        self.last_used = int(self.offsets.max()) if self.offsets.size else -1
        self.used, self.used_counts = np.unique(self.offsets, return_counts=True)
        self.order = np.argsort(self.offsets, kind="stable")
        self.ordered = self.offsets[self.order]

    @property
    def slots(self) -> int:
        return max(self.in_slots, self.last_used + 1)

    def count_at(self, slot: int) -> int:
        """How many indices reach ``slot``."""
        at = int(np.searchsorted(self.used, slot))
        return int(self.used_counts[at]) if at < self.used.size and self.used[at] == slot else 0

    def used_inside(self) -> int:
        """How many slots inside TotalTensorSizeInBytes hold an element."""
        return int(np.count_nonzero(self.used < self.in_slots))

    @property
    def shared(self) -> int:
        return int(np.count_nonzero(self.used_counts > 1))

    @property
    def most(self) -> int:
        return int(self.used_counts.max()) if self.used_counts.size else 0

    def indices_at(self, slot: int, limit: int = 4) -> tuple[Index, ...]:
        """The first ``limit`` indices (row-major) whose element sits in ``slot``."""
        lo = int(np.searchsorted(self.ordered, slot, side="left"))
        flat = self.order[lo : min(lo + limit, int(np.searchsorted(self.ordered, slot, side="right")))]
        return tuple(tuple(int(v) for v in np.unravel_index(int(f), self.sizes)) for f in flat)

    def shown(self, budget: int, hl_slot: int | None) -> list[int]:
        """The slots to draw: all if few, else the first and last ones and those around the last used
        slot and the highlight."""
        slots = self.slots
        if slots <= budget:
            return list(range(slots))
        keep = set(range(budget * 2 // 3)) | set(range(slots - budget // 6, slots))
        keep |= set(range(max(0, self.last_used - 1), min(slots, self.last_used + 2)))
        if hl_slot is not None:
            keep |= set(range(max(0, hl_slot - 2), min(slots, hl_slot + 3)))
        return sorted(keep)


def _strip_head(name: str, t: BufferTensorDesc, elem: int, strides: Index, total: int) -> str:
    byte_strides = [s * elem for s in strides]
    return (
        f"{name} buffer: TotalTensorSizeInBytes {total} = {plural(total // elem, 'slot')}"
        + f" of {plural(elem, 'byte')}"
        + (f" + {plural(total % elem, 'byte')}" if total % elem else "")
        + f"; Strides {list(strides)} elements = {byte_strides} bytes"
        + (" (packed)" if t.strides is None else "")
        + "."
    )


def _segments(
    name: str, occ: _Occupancy, shown: list[int], elem: int, total: int, look: _Look, highlight: Index | None
) -> list[Segment]:
    """The drawn slots as segments, with a "gap" segment wherever slots are left out."""
    hl_slot = _slot_of(highlight, occ)
    segments: list[Segment] = []
    prev = -1
    for s in shown:
        if s - prev > 1:
            start = (prev + 1) * elem
            segments.append(Segment(start, s * elem - start, "gap", label="…"))
        prev = s
        start = s * elem
        length = total - start if s == occ.in_slots - 1 and total % elem else elem
        n = occ.count_at(s)
        if n == 0:
            segments.append(Segment(start, length, "padding", label=""))
            continue
        idxs = occ.indices_at(s)
        hl = highlight is not None and s == hl_slot
        first = idxs[0]
        if hl and highlight is not None:  # name the highlighted one among those sharing the slot
            first = highlight
            if highlight not in idxs:
                idxs = (highlight, *idxs[:3])
        src = input_index(first, look.input_sizes) if name == "output" else first
        kind = "outside" if s >= occ.in_slots else "shared" if n > 1 else "element"
        label, writers = look.label(src), ""
        if name == "output" and n > 1:
            idxs = occ.indices_at(s, WRITERS_LISTED)
            label, writers = "?", writers_text(start, idxs, n, look.input_sizes)
        segments.append(Segment(start, length, kind, idxs, n, src, label, look.colour(src), hl, writers))
    return segments


WRITERS_LISTED = 6  # the writers of one output slot named in full; past that, how many more
WRITTEN_SLOTS_LISTED = 4  # the output slots with several writers whose writers are listed
OVERLAP_UNDEFINED = "which value ends there is undefined"
OVERLAP_WHY = "the writes race: another DirectML version or GPU may leave another one"


def writers_text(start: int, writers: Sequence[Index], count: int, input_sizes: Index) -> str:
    """Every output element that writes the slot at byte ``start`` (the first ``WRITERS_LISTED`` and
    how many more), each with the input element it copies, and that the value left is undefined."""
    named = ", ".join(f"[{key(o)}] (input [{key(input_index(o, input_sizes))}])" for o in writers)
    more = f" and {plural(count - len(writers), 'more')}" if count > len(writers) else ""
    return f"byte {start}: written by {count} output elements, {named}{more}; {OVERLAP_UNDEFINED}."


def _slot_of(index: Index | None, occ: _Occupancy) -> int | None:
    if index is None:
        return None
    return int(occ.offsets[np.ravel_multi_index(index, occ.sizes)])


def _padding_note(name: str, padding: int, total: int, occ: _Occupancy, elem: int) -> str:
    verb = "never read" if name == "input" else "never written (DirectML may overwrite them)"
    trailing = max(0, total - (occ.last_used + 1) * elem)
    where = []
    if padding - trailing:
        where.append(f"{padding - trailing} between elements (the Strides leave gaps)")
    if trailing:
        where.append(f"{trailing} after the last element")
    holds = "holds" if padding == 1 else "hold"
    return f"Padding: {padding} of {plural(total, 'byte')} {holds} no element, {' and '.join(where)}: {verb}."


def _sharing_note(name: str, shared: int, occ: _Occupancy, strides: Index, reads: int) -> str:
    most = occ.most
    if name == "input":
        zero = [k for k, (s, st) in enumerate(zip(occ.sizes, strides, strict=True)) if s > 1 and st == 0]
        why = f"Strides[{zero[0]}] = 0" if zero else "overlapping Strides"
        return (
            f"Broadcast: {plural(shared, 'slot')} hold{'s' if shared == 1 else ''} up to {most} input elements "
            f"each ({why}); Tile reads every input element {plural(reads, 'time')}, so such a slot is read up "
            f"to {plural(most * reads, 'time')}."
        )
    return (
        f"Overlap: {plural(shared, 'slot')} {'is' if shared == 1 else 'are'} written by up to {most} output "
        f"elements each (overlapping Strides): {OVERLAP_UNDEFINED} ({OVERLAP_WHY})."
    )


def _writers_notes(segments: Sequence[Segment]) -> list[str]:
    """The writers of the first drawn output slots that several output elements write."""
    written = [seg for seg in segments if seg.writers]
    notes = [seg.writers[0].upper() + seg.writers[1:] for seg in written[:WRITTEN_SLOTS_LISTED]]
    if len(written) > WRITTEN_SLOTS_LISTED:
        notes.append(
            f"And {plural(len(written) - WRITTEN_SLOTS_LISTED, 'more slot')} drawn with several writers."
        )
    return notes


def build_strip(
    name: str, t: BufferTensorDesc, look: _Look, highlight: Index | None, budget: int, reads: int = 1
) -> Strip | None:
    """The buffer of ``t`` as slots of one element each, and what sits in each; None when the
    element size is not whole bytes or the strides do not fit the sizes. ``reads``: how many times
    Tile reads each element (the input's: prod(Repeats))."""
    bits = t.data_type.bits
    if bits == 0 or bits % 8 or (t.strides is not None and len(t.strides) != len(t.sizes)):
        return None
    elem = bits // 8
    sizes = tuple(int(s) for s in t.sizes)
    strides = tuple(int(s) for s in t.effective_strides)
    total = int(t.total_tensor_size_in_bytes or 0)
    notes = [_strip_head(name, t, elem, strides, total)]
    if math.prod(sizes) > STRIP_ELEMENT_LIMIT:
        return Strip(name, total, elem, strides, (), 0, 0, (*notes, "Too many elements to draw."))
    occ = _Occupancy(sizes, strides, total, elem)
    shown = occ.shown(budget, _slot_of(highlight, occ))
    segments = _segments(name, occ, shown, elem, total, look, highlight)
    padding = total - min(occ.used_inside() * elem, total)
    shared = occ.shared
    outside = int(occ.used.size) - occ.used_inside()
    if padding:
        notes.append(_padding_note(name, padding, total, occ, elem))
    if shared:
        notes.append(_sharing_note(name, shared, occ, strides, reads))
        notes += _writers_notes(segments)
    elif name == "input":
        notes.append(f"Each input element sits in its own slot; Tile reads each one {plural(reads, 'time')}.")
    if outside:
        lies = "lies" if outside == 1 else "lie"
        notes.append(
            f"{plural(outside, 'slot')} {lies} past TotalTensorSizeInBytes: the buffer is too small (DML105)."
        )
    return Strip(name, total, elem, strides, tuple(segments), padding, shared, tuple(notes))


__all__ = [
    "PALETTE",
    "Axis",
    "Cell",
    "Grid",
    "Picture",
    "Segment",
    "Strip",
    "build_picture",
    "choose_axes",
    "key",
]
