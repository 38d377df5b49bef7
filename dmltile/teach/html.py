"""The explanation as HTML: one self-contained page (``dmltile explain --html``), the fragment a
notebook shows for an ``Explanation`` and the playground updates, all from the picture model.

No network: the CSS and the small hover script (``static/explanation.css``, ``static/explanation.js``)
are inlined into what is shown. Hovering an output element (a grid cell
or a slot of the output buffer) highlights it, the input element it copies, and the bytes of both
in the two buffers. The elements carry what the script needs as data attributes, computed here in
Python: ``data-out`` (the output index), ``data-src`` (the input index it copies), ``data-ob`` and
``data-ib`` (their byte offsets); input cells carry ``data-in``; buffer slots ``data-start`` and
``data-len``.
"""

from __future__ import annotations

from html import escape
from importlib import resources

from .explain import Explanation, rule_text
from .picture import PALETTE, Cell, Grid, Picture, Segment, Strip, build_picture, key


def asset(name: str) -> str:
    """A file of the pages shipped beside this module (``static/``), read from the installed package."""
    return resources.files("dmltile.teach").joinpath("static").joinpath(name).read_text(encoding="utf-8")


CSS = asset("explanation.css")
SCRIPT = asset("explanation.js")


def _attrs(**values: object) -> str:
    return "".join(f' {k.replace("_", "-")}="{escape(str(v))}"' for k, v in values.items() if v is not None)


def _cell(grid: Grid, cell: Cell, classes: list[str], input_bytes: dict[str, int | None]) -> str:
    if cell.index is None:
        return f'<td class="cell elide {" ".join(classes)}">…</td>'
    assert cell.source is not None
    hl = " hl" if cell.highlight else ""
    style = f"background:{PALETTE[cell.colour]}"
    if grid.name == "input":
        data = _attrs(data_in=key(cell.index), data_ib=cell.byte_offset)
        title = f"input [{key(cell.index)}]" + (
            f", byte {cell.byte_offset}" if cell.byte_offset is not None else ""
        )
    else:
        ib = input_bytes.get(key(cell.source))
        data = _attrs(
            data_out=key(cell.index), data_src=key(cell.source), data_ob=cell.byte_offset, data_ib=ib
        )
        title = f"output [{key(cell.index)}] copies input [{key(cell.source)}]"
    return (
        f'<td class="cell{hl} {" ".join(classes)}" style="{style}"{data} title="{escape(title)}">'
        f"{escape(cell.label)}</td>"
    )


def _edges(axis) -> tuple[set[int], set[int]]:
    """Positions that start a block (copy) and that end one, along an axis."""
    spans = axis.blocks()
    return {first for first, _ in spans}, {end - 1 for _, end in spans}


def grid_html(grid: Grid, input_bytes: dict[str, int | None]) -> str:
    """A grid as a table: coordinates in the header row and column, copies outlined."""
    col_starts, col_ends = _edges(grid.cols)
    row_starts, row_ends = _edges(grid.rows)
    head = "<th></th>" + "".join(f"<th>{'…' if t is None else t}</th>" for t in grid.cols.ticks)
    rows = [f"<tr>{head}</tr>"]
    for r, line in enumerate(grid.cells):
        t = grid.rows.ticks[r]
        label = "" if grid.rows.dim is None else ("⋮" if t is None else str(t))
        cells = []
        for p, cell in enumerate(line):
            classes = [
                c
                for c, on in (
                    ("bl", p in col_starts),
                    ("br", p in col_ends),
                    ("bt", r in row_starts),
                    ("bb", r in row_ends),
                )
                if on
            ]
            cells.append(_cell(grid, cell, classes, input_bytes))
        rows.append(f"<tr><th>{label}</th>{''.join(cells)}</tr>")
    return f'<table class="grid grid-{grid.name}">' + "".join(rows) + "</table>"


def _segment(strip: Strip, seg: Segment, input_bytes: dict[str, int | None]) -> str:
    span = f"bytes {seg.start}–{seg.start + seg.length - 1}"
    data = _attrs(data_start=seg.start, data_len=seg.length)
    if seg.kind == "gap":
        return f'<div class="seg gap"{data} title="{span} left out">…<small>+{seg.length}B</small></div>'
    if seg.kind == "padding":
        verb = "never read" if strip.name == "input" else "never written"
        return f'<div class="seg padding"{data} title="{span}: padding, {verb}">·<small>pad</small></div>'
    assert seg.source is not None
    hl = " hl" if seg.highlight else ""
    who = "; ".join(f"[{key(i)}]" for i in seg.indices) + (" …" if seg.count > len(seg.indices) else "")
    title = f"{span}: {strip.name} {who}"
    mark = {"shared": f"×{seg.count}", "outside": "past end"}.get(seg.kind, f"@{seg.start}")
    if strip.name == "output":
        data += _attrs(
            data_out=key(seg.indices[0]),
            data_src=key(seg.source),
            data_ob=seg.start,
            data_ib=input_bytes.get(key(seg.source)),
        )
        title += f" copies input [{key(seg.source)}]"
        if seg.writers:
            title = f"{span}: {seg.writers}"
            data += _attrs(data_writers=seg.writers)
    else:
        data += _attrs(data_in=key(seg.indices[0]))
    return (
        f'<div class="seg {seg.kind}{hl}" style="background:{PALETTE[seg.colour]}"{data} '
        f'title="{escape(title)}">{escape(seg.label)}<small>{escape(mark)}</small></div>'
    )


class _InputBytes(dict):
    """The byte offset of an input element (by its key), from the input's strides."""

    def __init__(self, model: Picture) -> None:
        super().__init__()
        self.strip = model.input_strip

    def get(self, k: str, default: int | None = None) -> int | None:  # type: ignore[override]
        if self.strip is None:
            return default
        index = [int(v) for v in k.split(",")]
        return sum(a * s for a, s in zip(index, self.strip.strides, strict=True)) * self.strip.element_bytes


def picture_html(model: Picture) -> str:
    """The grids and the two buffers, with the hover info line."""
    if not model.drawable:
        return f"<p>{escape(model.message)}</p>"
    assert model.input_grid is not None and model.output_grid is not None
    input_bytes = _InputBytes(model)
    parts = [f"<p>{escape(n)}</p>" for n in model.notes] + [f"<p>{escape(model.legend)}</p>"]
    parts.append('<p class="dt-info">Hover over an output element.</p>')
    parts.append('<div style="display:flex;gap:2em;flex-wrap:wrap;align-items:flex-start">')
    parts.append(f"<div><b class='mono'>{escape(model.input_grid.slice_text)}</b>")
    parts.append(grid_html(model.input_grid, input_bytes) + "</div>")
    parts.append(
        f"<div><b class='mono'>{escape(model.output_grid.slice_text)}</b> (each outlined block is one copy)"
    )
    parts.append(grid_html(model.output_grid, input_bytes) + "</div></div>")
    parts.append("<h2>Memory: the buffers byte by byte</h2>")
    for strip in (model.input_strip, model.output_strip):
        if strip is None:
            continue
        parts += [f"<p>{escape(n)}</p>" for n in strip.notes]
        segs = "".join(_segment(strip, s, input_bytes) for s in strip.segments)
        parts.append(f'<div class="strip strip-{strip.name}">{segs}</div>')
    return "".join(parts)


def explanation_html(ex: Explanation, model: Picture | None = None, with_assets: bool = True) -> str:
    """The explanation as one ``<div class="dmltile">``: verdict and fixes, the levels, the size
    arithmetic, the index mapping and the picture; with its CSS and script unless ``with_assets``
    is False (the playground page carries them once)."""
    out: list[str] = []
    if with_assets:
        out.append(f"<style>{CSS}</style><script>{SCRIPT}</script>")
    out.append('<div class="dmltile">')
    out.append(f"<p>{escape(ex.summary)}</p>")
    level = ex.report.feature_level.dotted if ex.report.feature_level else "?"
    verdict = "valid" if ex.report.valid else "INVALID"
    out.append(
        f'<p class="verdict {"ok" if ex.report.valid else "bad"}" id="verdict">{verdict} at feature level {level}'
        + (f", output Sizes {ex.report.output_sizes}" if ex.report.output_sizes is not None else "")
        + "</p>"
    )
    if ex.report.issues:
        rows = "".join(
            f'<tr class="issue"><td class="{"bad" if i.severity == "error" else ""}">{escape(i.code)}</td>'
            f'<td class="mono">{escape(i.path or "<document>")}</td><td>{escape(i.message)}'
            + (f'<br><span class="hint">fix: {escape(i.hint)}</span>' if i.hint else "")
            + "</td></tr>"
            for i in ex.report.issues
        )
        out.append(f'<table class="issues">{rows}</table>')
    if ex.desc is None:
        out.append("</div>")
        return "".join(out)
    if model is None:
        model = build_picture(ex.desc, ex.mapping.output_index if ex.mapping is not None else None)
    out.append("<h2>Picture</h2>" + picture_html(model))
    if ex.levels:
        out.append("<h2>Feature levels</h2><table class='levels'>")
        for v in ex.levels:
            if v.valid:
                out.append(f"<tr><td>{v.label}</td><td class='ok'>accepted</td></tr>")
            else:
                codes = dict.fromkeys(i.code for i in v.issues)
                text = "<br>".join(f"<b class='bad'>{c}</b> {escape(rule_text(c))}" for c in codes)
                out.append(f"<tr><td>{v.label}</td><td>{text}</td></tr>")
        out.append("</table>")
    out.append("<h2>Strides and byte sizes (DMLCalcBufferTensorSize)</h2>")
    for d in ex.sizes:
        out.append(f'<pre class="size {"ok" if d.ok else "bad"}">' + escape("\n".join(d.steps)) + "</pre>")
    if ex.mapping is not None:
        out.append("<h2>Index mapping</h2><pre>" + escape("\n".join(ex.mapping.steps)) + "</pre>")
    out.append("</div>")
    return "".join(out)


def explanation_page(ex: Explanation, model: Picture | None = None, title: str = "dmltile explain") -> str:
    """One self-contained HTML document (inline CSS and script, nothing fetched)."""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title></head><body style='max-width:1100px;margin:1em auto;padding:0 1em'>"
        f"<h1 style='font-family:system-ui,sans-serif'>{escape(title)}</h1>"
        + explanation_html(ex, model)
        + "</body></html>\n"
    )


__all__ = ["CSS", "SCRIPT", "explanation_html", "explanation_page", "grid_html", "picture_html"]
