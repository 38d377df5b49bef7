"""The picture model as a vector drawing: hand-built SVG rects and text, no terminal capture.

Each grid cell is a rect filled with its input element's colour and labelled with that element;
each copy of the input is outlined; the highlighted cells get a thick black border. Each buffer is
a strip of slots with its byte offsets: padding is hatched grey, shared slots say ×n, left-out
stretches say how many bytes they skip.
"""

from __future__ import annotations

from html import escape

from .picture import PALETTE, Grid, Picture, Strip

CHAR_W = 7.8  # px per character of the 13px monospace font
ROW_H = 24
FONT = "font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px"


class _Canvas:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.width = 0.0
        self.y = 16.0

    def text(self, x: float, y: float, s: str, **attrs: str) -> None:
        extra = "".join(f' {k.rstrip("_").replace("_", "-")}="{escape(v)}"' for k, v in attrs.items())
        self.parts.append(f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{escape(s)}</text>')
        self.width = max(self.width, x + len(s) * CHAR_W)

    def rect(self, x: float, y: float, w: float, h: float, **attrs: str) -> None:
        extra = "".join(f' {k.rstrip("_").replace("_", "-")}="{escape(v)}"' for k, v in attrs.items())
        self.parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}"{extra}/>')
        self.width = max(self.width, x + w)

    def line(self, s: str, bold: bool = False) -> None:
        self.text(8, self.y, s, font_weight="bold" if bold else "normal")
        self.y += 18


def _grid(c: _Canvas, grid: Grid, cell_w: float) -> None:
    lead = (len(str(grid.rows.size - 1)) + 1) * CHAR_W + 8
    x0, y0 = 8 + lead, c.y + 14
    for p, t in enumerate(grid.cols.ticks):
        c.text(
            x0 + p * cell_w + cell_w / 2,
            y0 - 4,
            "…" if t is None else str(t),
            text_anchor="middle",
            fill="#666",
        )
    for r, row in enumerate(grid.cells):
        y = y0 + r * ROW_H
        t = grid.rows.ticks[r]
        if grid.rows.dim is not None:
            c.text(x0 - 6, y + 16, "⋮" if t is None else str(t), text_anchor="end", fill="#666")
        for p, cell in enumerate(row):
            x = x0 + p * cell_w
            if cell.index is None:
                c.rect(x, y, cell_w, ROW_H, fill="#f2f2f2", stroke="#ffffff")
                c.text(x + cell_w / 2, y + 16, "…", text_anchor="middle", fill="#666")
                continue
            c.rect(x, y, cell_w, ROW_H, fill=PALETTE[cell.colour], stroke="#ffffff")
            c.text(
                x + cell_w / 2, y + 16, cell.label, text_anchor="middle", fill="#ffffff", font_weight="bold"
            )
    # one outline per copy of the input (per block of rows x block of columns)
    for rs, re_ in grid.rows.blocks():
        for cs, ce in grid.cols.blocks():
            c.rect(
                x0 + cs * cell_w, y0 + rs * ROW_H, (ce - cs) * cell_w, (re_ - rs) * ROW_H,
                fill="none", stroke="#222222", stroke_width="2",
            )  # fmt: skip
    for r, row in enumerate(grid.cells):
        for p, cell in enumerate(row):
            if cell.highlight:
                c.rect(x0 + p * cell_w + 1.5, y0 + r * ROW_H + 1.5, cell_w - 3, ROW_H - 3,
                       fill="none", stroke="#000000", stroke_width="3", class_="highlight")  # fmt: skip
    c.y = y0 + len(grid.cells) * ROW_H + 26


def _strip(c: _Canvas, strip: Strip, cell_w: float, max_width: float) -> None:
    for note in strip.notes:
        c.line(note)
    lead = len(f"byte {strip.total_bytes}") * CHAR_W + 14
    x = 8 + lead
    y = c.y
    c.text(8, y + 16, f"byte {strip.segments[0].start}" if strip.segments else "", fill="#666")
    for seg in strip.segments:
        if x + cell_w > max_width:
            x, y = 8 + lead, y + ROW_H + 18
            c.text(8, y + 16, f"byte {seg.start}", fill="#666")
        if seg.kind == "gap":
            c.rect(x, y, cell_w, ROW_H, fill="#ffffff", stroke="#999999", stroke_dasharray="3 2")
            c.text(x + cell_w / 2, y + 16, "…", text_anchor="middle")
            c.text(
                x + cell_w / 2,
                y + ROW_H + 13,
                f"+{seg.length}B",
                text_anchor="middle",
                fill="#666",
                font_size="11px",
            )
        elif seg.kind == "padding":
            c.rect(x, y, cell_w, ROW_H, fill="url(#pad)", stroke="#999999")
            c.text(x + cell_w / 2, y + ROW_H + 13, "pad", text_anchor="middle", fill="#666", font_size="11px")
        else:
            c.rect(x, y, cell_w, ROW_H, fill=PALETTE[seg.colour], stroke="#ffffff")
            c.text(
                x + cell_w / 2, y + 16, seg.label, text_anchor="middle", fill="#ffffff", font_weight="bold"
            )
            mark = {"shared": f"×{seg.count}", "outside": "past end"}.get(seg.kind, "")
            if mark:
                c.text(
                    x + cell_w / 2,
                    y + ROW_H + 13,
                    mark,
                    text_anchor="middle",
                    fill="#b00020",
                    font_size="11px",
                )
            if seg.highlight:
                c.rect(x + 1.5, y + 1.5, cell_w - 3, ROW_H - 3, fill="none", stroke="#000000", stroke_width="3",
                       class_="highlight")  # fmt: skip
        x += cell_w
    c.y = y + ROW_H + 34


def to_svg(model: Picture, title: str = "dmltile picture", max_width: float = 980) -> str:
    """The whole picture (grids, then both buffers) as one standalone SVG document."""
    c = _Canvas()
    c.line(title, bold=True)
    if not model.drawable:
        c.line(model.message)
    else:
        assert model.input_grid is not None and model.output_grid is not None
        width = max(len(cell.label) for row in model.output_grid.cells for cell in row)
        cell_w = max(width * CHAR_W + 14, 30)
        for note in [*model.notes, model.legend]:
            c.line(note)
        if model.highlight is not None:
            o, i = model.highlight
            c.line(
                f"Outlined in black: output [{','.join(map(str, o))}] and input [{','.join(map(str, i))}]."
            )
        c.line(model.input_grid.slice_text, bold=True)
        _grid(c, model.input_grid, cell_w)
        c.line(f"{model.output_grid.slice_text}: each outlined block is one copy of the input", bold=True)
        _grid(c, model.output_grid, cell_w)
        c.line(
            "Memory: the buffers byte by byte, one slot per element, named by the input element it holds",
            bold=True,
        )
        for strip in (model.input_strip, model.output_strip):
            if strip is not None:
                _strip(c, strip, cell_w, max_width)
    w, h = int(c.width + 16), int(c.y + 8)
    defs = (
        '<defs><pattern id="pad" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="#e6e6e6"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#b0b0b0" stroke-width="2"/></pattern></defs>'
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        f'style="{FONT}">{defs}<rect width="{w}" height="{h}" fill="#ffffff"/>'
        + "".join(c.parts)
        + "</svg>\n"
    )


__all__ = ["to_svg"]
