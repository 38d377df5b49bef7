"""Drawing an ``Explanation`` with rich: tables for the fields, sizes and levels, and the picture of
which input element every output element copies."""

from __future__ import annotations

import io
import math

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from ..core.operator import OperatorDesc
from .explain import Explanation, expected_output_sizes, rule_text

# Background colours for input elements; neighbours differ strongly so repeated blocks stand out.
PALETTE = [
    "red3",
    "green3",
    "dodger_blue2",
    "gold3",
    "magenta3",
    "dark_cyan",
    "orange3",
    "medium_purple",
    "chartreuse3",
    "deep_pink3",
    "steel_blue",
    "light_salmon3",
]


def _last_two(values) -> tuple[int, int]:
    """(rows, columns) of a tensor's last two axes; a 1-D tensor is one row."""
    values = list(values)
    return (1, values[-1]) if len(values) == 1 else (values[-2], values[-1])


def _label(r: int, c: int, one_d: bool, width: int) -> str:
    return (str(c) if one_d else f"{r},{c}").center(width)


def picture(
    desc: OperatorDesc, max_rows: int = 12, max_cols: int = 18, max_width: int = 78
) -> RenderableType:
    """The input's and the output's last two axes as grids. Each output cell names the input
    element it copies (``row,col`` of the input, one colour per input element); every repeated
    block of the input is outlined. Large outputs show their top-left corner."""
    out = expected_output_sizes(desc)
    if out is None:
        return Text("No picture: Repeats and InputTensor.Sizes have different lengths.")
    ins, reps = list(desc.input.sizes), list(desc.repeats)
    if 0 in ins or 0 in reps:
        return Text("No picture: a size or a repeat is 0, so the output has no elements.")
    one_d = len(ins) == 1
    in_r, in_c = _last_two(ins)
    rep_r, rep_c = _last_two(reps)
    out_r, out_c = in_r * rep_r, in_c * rep_c
    width = len(_label(in_r - 1, in_c - 1, one_d, 0))
    shown_r, shown_c = min(out_r, max_rows), min(out_c, max_cols)
    while shown_c > 1 and shown_c * (width + 2) + math.ceil(shown_c / in_c) + 1 > max_width:
        shown_c -= 1  # keep every grid line on one line of the terminal

    def cell(r: int, c: int) -> Text:
        colour = PALETTE[(r * in_c + c) % len(PALETTE)]
        return Text(" " + _label(r, c, one_d, width) + " ", style=f"bold white on {colour}")

    def block(rows: range, cols: range) -> Text:
        text = Text()
        for n, r in enumerate(rows):
            if n:
                text.append("\n")
            for c in cols:
                text.append_text(cell(r % in_r, c % in_c))
        return text

    source = Table(box=box.SQUARE, show_header=False, padding=0)
    source.add_column()
    source.add_row(block(range(min(in_r, shown_r)), range(min(in_c, shown_c))))

    grid = Table(box=box.SQUARE, show_header=False, show_lines=True, padding=0)
    blocks_r, blocks_c = math.ceil(shown_r / in_r), math.ceil(shown_c / in_c)
    for _ in range(blocks_c):
        grid.add_column()
    for br in range(blocks_r):
        grid.add_row(
            *(
                block(
                    range(br * in_r, min((br + 1) * in_r, shown_r)),
                    range(bc * in_c, min((bc + 1) * in_c, shown_c)),
                )
                for bc in range(blocks_c)
            )
        )

    lead = ", ".join("0" for _ in ins[:-2])
    where = f"[{lead}, :, :]" if lead else ""
    notes = [
        f"The last two axes of input{where} ({in_r}x{in_c}) and output{where} ({out_r}x{out_c}); "
        f"cell 'r,c' copies input element [..., r, c]."
        if not one_d
        else f"input ({in_c}) and output ({out_c}); cell 'c' copies input element [c]."
    ]
    if (shown_r, shown_c) != (out_r, out_c) or shown_c < in_c:
        notes.append(f"Showing the top-left {shown_r}x{shown_c} of the {out_r}x{out_c} output.")
    return Group(
        Text(" ".join(notes)),
        Text("input"),
        source,
        Text("output (each outlined block is one copy of the input)"),
        grid,
    )


def render(ex: Explanation) -> RenderableType:
    """The whole explanation as one rich renderable."""
    parts: list[RenderableType] = [Rule("What Tile does"), Text(ex.summary)]
    if ex.desc is None:
        parts += [Rule("Why it cannot be read"), _issues_table(ex.report.issues)]
        return Group(*parts)

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
    parts += [Rule("Fields"), *fields]

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
    parts += [Rule("Output sizes"), shape]

    parts.append(Rule("Strides and byte sizes (DMLCalcBufferTensorSize)"))
    for derivation in ex.sizes:
        style = "green" if derivation.ok else "red"
        parts.append(_line(derivation.steps[0], style="bold"))
        parts += [
            _line("  " + step, style=style if n == len(derivation.steps) - 2 else "")
            for n, step in enumerate(derivation.steps[1:])
        ]

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
    parts += [Rule("Feature levels"), levels]

    level = ex.report.feature_level.dotted if ex.report.feature_level else "an unknown feature level"
    parts.append(
        Text(
            f"At {level}: " + ("valid." if ex.report.valid else "INVALID."),
            style="green" if ex.report.valid else "red bold",
        )
    )
    if ex.report.issues:
        parts.append(_issues_table(ex.report.issues))

    if ex.mapping is not None:
        parts += [Rule("Index mapping")] + [_line(step) for step in ex.mapping.steps]
    parts += [Rule("Picture"), picture(ex.desc)]
    return Group(*parts)


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
            i.path or "<document>",
            Text(i.message + (f"\nfix: {i.hint}" if i.hint else "")),
        )
    return table


def to_text(renderable, width: int = 100) -> str:
    """Plain text of any rich renderable (no colour), e.g. for ``str(explanation)``."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, force_terminal=False)
    console.print(render(renderable) if isinstance(renderable, Explanation) else renderable)
    return buffer.getvalue()
