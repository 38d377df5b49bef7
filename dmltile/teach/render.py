"""Drawing an ``Explanation`` with rich: tables for the fields, sizes and levels, and the picture of
which input element every output element copies."""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from ..core.operator import OperatorDesc
from .explain import Explanation, rule_text
from .picture import PALETTE, Cell, Grid, Picture, Segment, Strip, build_picture, key


def _cell_text(cell: Cell, width: int) -> Text:
    if cell.index is None:
        return Text(" " + "…".center(width) + " ", style="dim")
    left, right = ("[", "]") if cell.highlight else (" ", " ")
    style = f"bold white on {PALETTE[cell.colour]}" + (" underline" if cell.highlight else "")
    return Text(left + cell.label.center(width) + right, style=style)


def grid_text(grid: Grid, width: int) -> Text:
    """One grid with box lines around every copy of the input, coordinates along the top and left."""
    cols, rows = grid.cols.block_ids(), grid.rows.block_ids()
    widest_tick = max((len(str(t)) for t in grid.cols.ticks if t is not None), default=1)
    width = max(width, widest_tick - 1)  # a space between two column numbers, however many digits
    cell_w = width + 2
    lead_w = max(len(str(grid.rows.size - 1)), 1) + 1
    starts = [p for p in range(len(cols)) if p == 0 or cols[p] != cols[p - 1]]

    def rule(left: str, mid: str, right: str) -> str:
        parts = []
        for n, p in enumerate(starts):
            end = starts[n + 1] if n + 1 < len(starts) else len(cols)
            parts.append("─" * (cell_w * (end - p)))
        return " " * lead_w + left + mid.join(parts) + right

    text = Text()
    head = " " * (lead_w + 1)
    for p, t in enumerate(grid.cols.ticks):
        if p and p in starts:
            head += " "
        head += ("…" if t is None else str(t)).center(cell_w)
    text.append(head.rstrip() + "\n", style="dim")
    text.append(rule("┌", "┬", "┐") + "\n")
    for r, line in enumerate(grid.cells):
        if r and rows[r] != rows[r - 1]:
            text.append(rule("├", "┼", "┤") + "\n")
        t = grid.rows.ticks[r]
        coord = "" if grid.rows.dim is None else ("⋮" if t is None else str(t))
        text.append(coord.rjust(lead_w - 1) + " ", style="dim")
        text.append("│")
        for p, cell in enumerate(line):
            if p and p in starts:
                text.append("│")
            text.append_text(_cell_text(cell, width))
        text.append("│\n")
    text.append(rule("└", "┴", "┘"))
    return text


def _marker(seg: Segment) -> str:
    if seg.kind == "gap":
        return f"+{seg.length}B"
    if seg.kind == "padding":
        return "pad"
    if seg.kind == "outside":
        return "past end"
    if seg.kind == "shared":
        return f"×{seg.count}"
    return ""


def strip_text(strip: Strip, width: int, max_width: int) -> Text:
    """A buffer as rows of element slots, each row starting with its byte offset; under the slots,
    ×n where n elements share one, pad where none is, +nB for bytes left out of the drawing."""
    cell_w = max(width + 2, 5)
    lead_w = len(f"byte {strip.total_bytes}") + 1
    text = Text()
    lines: list[list[tuple[Segment, int]]] = [[]]
    used = 0
    for seg in strip.segments:
        w = max(cell_w, len(_marker(seg)) + 1)
        if lines[-1] and used + w > max_width - lead_w - 2:
            lines.append([])
            used = 0
        lines[-1].append((seg, w))
        used += w
    for line in lines:
        text.append(f"byte {line[0][0].start}".ljust(lead_w) + "│", style="dim")
        for seg, w in line:
            if seg.kind == "gap":
                text.append("…".center(w), style="dim")
            elif seg.kind == "padding":
                text.append("·" * w, style="dim")
            else:
                left, right = ("[", "]") if seg.highlight else (" ", " ")
                style = f"bold white on {PALETTE[seg.colour]}" + (" underline" if seg.highlight else "")
                text.append(left + seg.label.center(w - 2) + right, style=style)
        text.append("│\n", style="dim")
        marks = [(_marker(seg), w) for seg, w in line]
        if any(m for m, _ in marks):
            text.append(
                " " * (lead_w + 1) + "".join(m.center(w) for m, w in marks).rstrip() + "\n", style="dim"
            )
    return text


def picture(
    desc: OperatorDesc | Picture, index: Sequence[int] | None = None, max_width: int = 100
) -> RenderableType:
    """The picture model drawn for a terminal: the input and output grids (each outlined block is one
    copy of the input; cells name the input element they copy, one colour per input element, the
    ``index`` element and its source in [brackets]) and the memory view of both buffers."""
    model = desc if isinstance(desc, Picture) else build_picture(desc, index, max_width=max_width)
    if not model.drawable:
        return Text(model.message)
    assert model.input_grid is not None and model.output_grid is not None
    width = max(len(c.label) for row in model.output_grid.cells for c in row)
    parts: list[RenderableType] = [Text(" ".join(model.notes[:1] + [model.legend]))]
    parts += [Text(n) for n in model.notes[1:]]
    if model.highlight is not None:
        o, i = model.highlight
        parts.append(Text(f"[brackets]: output [{key(o)}] and the input element [{key(i)}] it copies."))
    parts += [
        Text(model.input_grid.slice_text),
        grid_text(model.input_grid, width),
        Text(f"{model.output_grid.slice_text} (each outlined block is one copy of the input)"),
        grid_text(model.output_grid, width),
    ]
    parts.append(
        Text("Memory: the buffers byte by byte, one slot per element, named by the input element it holds")
    )
    for strip in (model.input_strip, model.output_strip):
        if strip is None:
            continue
        parts += [Text(note) for note in strip.notes]
        if strip.segments:
            parts.append(strip_text(strip, width, model.max_width))
    return Group(*parts)


def render(ex: Explanation, model: Picture | None = None) -> RenderableType:
    """The whole explanation as one rich renderable (``model``: its picture, when already built)."""
    parts: list[RenderableType] = [Rule("What Tile does"), Text(ex.summary)]
    if ex.desc is None:
        parts += [Rule("Why it cannot be read"), _issues_table(ex.report.issues)]
        return Group(*parts)
    parts += [Rule("Fields"), *_fields(ex)]
    parts += [Rule("Output sizes"), _shape_table(ex)]
    parts += [Rule("Strides and byte sizes (DMLCalcBufferTensorSize)"), *_size_derivations(ex)]
    parts += [Rule("Feature levels"), _levels_table(ex), *_verdict(ex)]
    if ex.mapping is not None:
        parts += [Rule("Index mapping")] + [_line(step) for step in ex.mapping.steps]
    index = ex.mapping.output_index if ex.mapping is not None else None
    parts += [Rule("Picture"), picture(model if model is not None else build_picture(ex.desc, index))]
    return Group(*parts)


def _fields(ex: Explanation) -> list[RenderableType]:
    """Every field with its value and meaning, under the struct it belongs to."""
    fields: list[RenderableType] = []
    struct = None
    for row in ex.fields:
        if row.struct != struct:
            struct = row.struct
            fields.append(Text(struct, style="bold underline"))
        line = Text("  ") + Text(row.path.rsplit(".", 1)[-1], style="bold") + Text(f" = {row.value}")
        if not row.written:
            line.append("  (left out: the default)", style="dim")
        fields += [line, Padding(Text(f"{row.c_type}: {row.meaning}", style="dim"), (0, 0, 0, 6))]
    return fields


def _shape_table(ex: Explanation) -> Table:
    shape = Table(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        title="OutputTensor.Sizes[i] = InputTensor.Sizes[i] * Repeats[i]",
    )
    for col in ("dim", "input size", "repeat", "output size implied", "output size written", ""):
        shape.add_column(col, justify="right")
    for dim in ex.shape:
        implied = (
            f"{dim['input']} * {dim['repeat']} = {dim['implied']}" if dim["implied"] is not None else "-"
        )
        shape.add_row(
            str(dim["dimension"]),
            _dash(dim["input"]),
            _dash(dim["repeat"]),
            implied,
            _dash(dim["written"]),
            "[green]ok[/]" if dim["ok"] else "[red]differs[/]",
        )
    return shape


def _size_derivations(ex: Explanation) -> list[RenderableType]:
    """Each byte size worked out step by step, its result green when right and red when not."""
    lines: list[RenderableType] = []
    for derivation in ex.sizes:
        style = "green" if derivation.ok else "red"
        lines.append(_line(derivation.steps[0], style="bold"))
        lines += [
            _line("  " + step, style=style if n == len(derivation.steps) - 2 else "")
            for n, step in enumerate(derivation.steps[1:])
        ]
    return lines


def _levels_table(ex: Explanation) -> Table:
    """The verdict at every feature level, with each rule that rejects it and its messages."""
    levels = Table(box=box.SIMPLE_HEAD, show_edge=False)
    levels.add_column("feature level", no_wrap=True)
    levels.add_column("verdict")
    for verdict in ex.levels:
        if verdict.valid:
            levels.add_row(verdict.label, "[green]accepted[/]")
            continue
        text = Text()
        for n, code in enumerate(dict.fromkeys(i.code for i in verdict.issues)):
            text.append(("\n" if n else "") + code, style="red")
            text.append(f" {rule_text(code)}")
            for i in verdict.issues:
                if i.code == code:
                    text.append(f"\n  {i.message}", style="dim")
        levels.add_row(verdict.label, text)
    return levels


def _verdict(ex: Explanation) -> list[RenderableType]:
    """The verdict at the requested level, and its issues with their fixes."""
    level = ex.report.feature_level.dotted if ex.report.feature_level else "an unknown feature level"
    verdict: list[RenderableType] = [
        Text(
            f"At {level}: " + ("valid." if ex.report.valid else "INVALID."),
            style="green" if ex.report.valid else "red bold",
        )
    ]
    if ex.report.issues:
        verdict.append(_issues_table(ex.report.issues))
    return verdict


def _line(text: str, style: str = "") -> Text:
    """One line of a derivation; wrapped lines stay indented under their step."""
    return Text(text, style=style)


def _dash(value) -> str:
    return "-" if value is None else str(value)


def _issues_table(issues) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for col in ("code", "where", "what, and the fix"):
        table.add_column(col, overflow="fold")
    for i in issues:
        table.add_row(
            Text(i.code, style="red" if i.severity == "error" else "yellow"),
            Text(i.path or "<document>"),  # the user's own keys: text, never markup
            Text(i.message + (f"\nfix: {i.hint}" if i.hint else "")),
        )
    return table


def to_text(renderable, width: int = 100) -> str:
    """Plain text of any rich renderable (no colour), e.g. for ``str(explanation)``."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, force_terminal=False)
    console.print(render(renderable) if isinstance(renderable, Explanation) else renderable)
    return buffer.getvalue()
