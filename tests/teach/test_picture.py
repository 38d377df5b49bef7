"""The picture model and its three drawings (terminal, SVG, HTML), checked against numpy.tile,
mod arithmetic and a naive count of every element's byte offset, all computed here."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.teach.html import explanation_page
from dmltile.teach.picture import PALETTE, build_picture
from dmltile.teach.render import picture, to_text
from dmltile.teach.svg import to_svg
from tests.cli_support import DOC_EXAMPLE, EXAMPLES, invoke, script

SVG = "{http://www.w3.org/2000/svg}"


def output_grid_rows(text: str) -> list[tuple[str, list[str]]]:
    """(row coordinate, cell labels) of the output grid in a picture's text; '…' for elisions."""
    block = text.split("(each outlined block is one copy of the input)")[1].split("Memory:")[0]
    rows = []
    for line in block.splitlines():
        if "│" not in line:
            continue
        coord, _, cells = line.partition("│")
        labels = re.findall(r"\d+(?:,\d+)*|…", cells)
        rows.append((coord.strip(), labels))
    return rows


def desc_with(sizes, repeats, in_strides=None, out_strides=None, dtype="FLOAT32"):
    d = dmltile.tile_desc(sizes, repeats, dtype=dtype).to_dict()
    for name, strides in (("InputTensor", in_strides), ("OutputTensor", out_strides)):
        if strides is not None:
            t = d["Desc"][name]["Desc"]
            t["Strides"] = strides
            t.pop("TotalTensorSizeInBytes")
    return dmltile.load(d)


def naive_counts(sizes, strides) -> dict[int, int]:
    """element offset -> how many indices reach it, by visiting every index."""
    counts: dict[int, int] = {}
    for idx in np.ndindex(*sizes):
        off = sum(a * s for a, s in zip(idx, strides, strict=True))
        counts[off] = counts.get(off, 0) + 1
    return counts


# -- the grids ------------------------------------------------------------------------------
def test_a_repeated_axis_0_is_drawn_with_its_three_copies(tmp_path):
    made = script("new", "--sizes", "2,1,3", "--repeats", "3,1,1")
    assert made.returncode == 0, made.stderr
    (tmp_path / "f.json").write_text(made.stdout)
    proc = script("explain", tmp_path / "f.json")
    assert proc.returncode == 0, proc.stderr
    rows = output_grid_rows(proc.stdout)
    labels = np.array([[f"{r},{c}" for c in range(3)] for r in range(2)])
    assert [coord for coord, _ in rows] == [str(r) for r in range(6)]  # axis 0: 2 x 3 copies
    assert [cells for _, cells in rows] == np.tile(labels, (3, 1)).tolist()
    grid = proc.stdout.split("(each outlined block is one copy of the input)")[1].split("Memory:")[0]
    assert grid.count("├") == 2  # three copies, two lines between them
    assert "rows along axis 0 (6: 3 copies of 2)" in " ".join(proc.stdout.split())


def test_doc_example_output_grid_is_numpy_tile_of_the_input_labels():
    text = to_text(picture(dmltile.load(DOC_EXAMPLE)))
    labels = np.array([[f"{r},{c}" for c in range(3)] for r in range(2)])
    assert [cells for _, cells in output_grid_rows(text)] == np.tile(labels, (3, 3)).tolist()


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_grid_model_shows_the_tiling_truthfully(data):
    n = data.draw(st.integers(1, 4))
    sizes = data.draw(st.lists(st.integers(1, 12), min_size=n, max_size=n))
    reps = data.draw(st.lists(st.integers(1, 6), min_size=n, max_size=n))
    out_sizes = [s * r for s, r in zip(sizes, reps, strict=True)]
    index = data.draw(st.one_of(st.none(), st.tuples(*(st.integers(0, o - 1) for o in out_sizes))))
    model = build_picture(dmltile.tile_desc(sizes, reps), index, max_width=100)
    assert_the_tiled_axes_are_drawn_with_two_copies(model, sizes, reps)
    assert_every_output_cell_copies_its_drawn_source(model, sizes)
    assert_only_the_index_and_its_source_are_highlighted(model, index, sizes, out_sizes)
    if index is None:  # (a highlighted element may add a column past the width)
        for line in to_text(picture(model), width=300).splitlines():
            if "│" in line and "byte" not in line:
                assert len(line) <= 100, line  # grids fit the width they were built for


def assert_the_tiled_axes_are_drawn_with_two_copies(model, sizes, reps) -> None:
    og = model.output_grid
    tiled = [k for k in range(len(sizes)) if reps[k] > 1]
    drawn = [a.dim for a in (og.rows, og.cols) if a.dim is not None]
    assert set(drawn) >= set(tiled[-2:])  # the tiled axes are the drawn ones
    for axis in (og.rows, og.cols):
        if axis.dim is not None and reps[axis.dim] > 1:
            copies = {t // sizes[axis.dim] for t in axis.ticks if t is not None}
            assert len(copies) >= 2  # at least two copies along every drawn repeated axis


def assert_every_output_cell_copies_its_drawn_source(model, sizes) -> None:
    drawn_inputs = {c.index for row in model.input_grid.cells for c in row if c.index is not None}
    for c in (c for row in model.output_grid.cells for c in row if c.index is not None):
        src = tuple(o % s for o, s in zip(c.index, sizes, strict=True))
        assert c.source == src and src in drawn_inputs
        assert c.colour == int(np.ravel_multi_index(src, sizes)) % len(PALETTE)


def assert_only_the_index_and_its_source_are_highlighted(model, index, sizes, out_sizes) -> None:
    highlighted_out = [c.index for row in model.output_grid.cells for c in row if c.highlight]
    highlighted_in = [c.index for row in model.input_grid.cells for c in row if c.highlight]
    if index is None:
        assert highlighted_out == [] and highlighted_in == []
        return
    src = tuple(o % s for o, s in zip(index, sizes, strict=True))
    assert highlighted_out == [tuple(index)] and highlighted_in == [src]
    label = ",".join(str(src[k]) for k in range(len(sizes)) if sizes[k] > 1) or str(src[-1])
    for strip, idx, shape in ((model.input_strip, src, sizes), (model.output_strip, index, out_sizes)):
        if strip.segments:  # (not computed above a million elements)
            lit = [(seg.start, seg.label) for seg in strip.segments if seg.highlight]
            assert lit == [(int(np.ravel_multi_index(idx, shape)) * 4, label)]


def test_a_large_input_keeps_copies_and_elides_the_middle():
    desc = dmltile.tile_desc([40, 50], [3, 3])
    model = build_picture(desc, [70, 120], max_width=100)
    rows = [t for t in model.output_grid.rows.ticks if t is not None]
    cols = [t for t in model.output_grid.cols.ticks if t is not None]
    assert None in model.output_grid.rows.ticks and None in model.output_grid.cols.ticks
    assert len({r // 40 for r in rows}) >= 2 and len({c // 50 for c in cols}) >= 2
    assert 70 in rows and 120 in cols and {0, 39, 40, 119} <= set(rows) and {0, 49, 149} <= set(cols)
    text = to_text(picture(model), width=200)
    assert "[30,20]" in text  # the source of [70, 120], bracketed in the input grid and the output grid
    assert text.count("[30,20]") >= 3  # input grid, output grid, and the input buffer
    assert "left out at …" in text


def test_other_tiled_axes_are_named():
    model = build_picture(dmltile.tile_desc([2, 2, 2], [2, 3, 4]))
    assert (model.output_grid.rows.dim, model.output_grid.cols.dim) == (1, 2)
    assert any("axis 0 (2 copies of 2)" in n for n in model.notes)


# -- the memory view ------------------------------------------------------------------------
def test_broadcast_input_shows_each_slot_read_by_two_elements():
    desc = desc_with([1, 1, 2, 3], [1, 1, 2, 2], in_strides=[0, 0, 0, 1])
    strip = build_picture(desc).input_strip
    assert [(s.start, s.length, s.kind, s.count) for s in strip.segments] == [
        (0, 4, "shared", 2),
        (4, 4, "shared", 2),
        (8, 4, "shared", 2),
    ]
    assert strip.shared_slots == 3 and strip.padding_bytes == 0
    assert set(strip.segments[1].indices) == {(0, 0, 0, 1), (0, 0, 1, 1)}
    text = to_text(picture(desc))
    assert "Broadcast" in text and text.count("×2") == 3
    # rows 0 and 1 of the input read the same bytes, so they are drawn in the same colours
    cells = build_picture(desc).input_grid.cells
    assert [c.colour for c in cells[0]] == [c.colour for c in cells[1]]


def test_padded_input_shows_the_bytes_that_are_skipped():
    desc = dmltile.load(EXAMPLES / "valid_strided_padded_input.json")  # Sizes [1,2,2,3] Strides [0,0,4,1]
    strip = build_picture(desc).input_strip
    counts = naive_counts(desc.input.sizes, desc.input.strides)
    slots = desc.input.total_tensor_size_in_bytes // 4
    want = [
        (k * 4, "padding" if k not in counts else "shared" if counts[k] > 1 else "element")
        for k in range(slots)
    ]
    assert [(s.start, s.kind) for s in strip.segments] == want
    assert strip.padding_bytes == 4 * sum(1 for k in range(slots) if k not in counts)
    text = to_text(picture(desc))
    assert "pad" in text and "never read" in " ".join(text.split())


def test_padded_and_overlapping_outputs():
    padded = desc_with([1, 1, 2, 3], [1, 1, 3, 3], out_strides=[0, 0, 10, 1])
    strip = build_picture(padded).output_strip
    counts = naive_counts([1, 1, 6, 9], [0, 0, 10, 1])
    pads = [s.start for s in strip.segments if s.kind == "padding"]
    total = padded.output.total_tensor_size_in_bytes
    assert pads == [k * 4 for k in range(total // 4) if k not in counts]
    assert "never written" in " ".join(to_text(picture(padded)).split())
    overlap = desc_with([1, 1, 2, 3], [1, 1, 3, 3], out_strides=[0, 0, 1, 1])
    strip = build_picture(overlap).output_strip
    counts = naive_counts([1, 1, 6, 9], [0, 0, 1, 1])
    assert {s.start // 4: s.count for s in strip.segments if s.kind != "padding"} == counts
    assert "Overlap" in to_text(picture(overlap))


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_strip_segments_cover_the_buffer_and_count_every_element(data):
    n = data.draw(st.integers(1, 3))
    sizes = data.draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    strides = data.draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
    dtype, elem = data.draw(st.sampled_from([("FLOAT32", 4), ("FLOAT16", 2), ("UINT8", 1), ("INT64", 8)]))
    desc = desc_with(sizes, [1] * n, in_strides=strides, dtype=dtype)
    strip = build_picture(desc, strip_slots=10_000).input_strip
    counts = naive_counts(sizes, strides)
    end = 0
    for seg in strip.segments:
        assert seg.start == end
        end += seg.length
        slot = seg.start // elem
        assert seg.count == counts.get(slot, 0)
        assert seg.kind == ("padding" if slot not in counts else "shared" if counts[slot] > 1 else "element")
    assert end == desc.input.total_tensor_size_in_bytes
    assert strip.padding_bytes == desc.input.total_tensor_size_in_bytes - elem * len(counts)


# -- SVG and HTML ---------------------------------------------------------------------------
def test_svg_is_a_real_drawing_of_the_model(tmp_path):
    svg = tmp_path / "t.svg"
    result = invoke("explain", DOC_EXAMPLE, "--index", "0,0,4,7", "--svg", svg)
    assert result.exit_code == 0
    root = ET.fromstring(svg.read_text())  # well-formed XML
    assert root.tag == f"{SVG}svg" and not root.findall(f".//{SVG}foreignObject")
    texts = [t.text for t in root.iter(f"{SVG}text")]
    labels = np.array([[f"{r},{c}" for c in range(3)] for r in range(2)])
    # input grid (6 labels), then output grid (54), then the two buffers (6 + 54 slots)
    cell_labels = [t for t in texts if t and re.fullmatch(r"\d,\d", t)]
    assert cell_labels[:6] == labels.ravel().tolist()
    assert cell_labels[6:60] == np.tile(labels, (3, 3)).ravel().tolist()
    assert len(cell_labels) == 6 + 54 + 6 + 54
    fills = {r.get("fill") for r in root.iter(f"{SVG}rect")}
    assert set(PALETTE[:6]) <= fills
    assert len([r for r in root.iter(f"{SVG}rect") if r.get("class") == "highlight"]) == 4  # 2 cells, 2 slots
    padded = tmp_path / "p.svg"
    assert invoke("explain", EXAMPLES / "valid_strided_padded_input.json", "--svg", padded).exit_code == 0
    assert 'fill="url(#pad)"' in padded.read_text()


def test_html_page_is_self_contained_and_every_output_cell_names_its_source(tmp_path):
    page = tmp_path / "t.html"
    result = invoke("explain", EXAMPLES / "valid_strided_padded_input.json", "--html", page)
    assert result.exit_code == 0 and "html saved to" in result.stdout
    text = page.read_text()
    assert text.startswith("<!doctype html>") and "<script src" not in text and "<link" not in text
    assert not re.search(r"(src|href)=\"?(https?:)?//", text)
    ins = [1, 2, 2, 3]
    cells = re.findall(r'data-out="([\d,]+)" data-src="([\d,]+)" data-ob="(\d+)" data-ib="(\d+)"', text)
    assert len(cells) >= 24 + 48  # the drawn output grid and every output slot
    for out, src, ob, ib in cells:
        o = [int(v) for v in out.split(",")]
        s = [v % n for v, n in zip(o, ins, strict=True)]
        assert src == ",".join(map(str, s))
        assert int(ob) == int(np.ravel_multi_index(o, [1, 2, 4, 6])) * 4
        assert int(ib) == (s[1] * 0 + s[2] * 4 + s[3]) * 4  # Strides [0, 0, 4, 1]
    assert "DMLCalcBufferTensorSize" in text and "accepted" in text


def test_html_to_an_unwritable_place_exits_2(tmp_path):
    result = invoke("explain", DOC_EXAMPLE, "--html", tmp_path / "no" / "such" / "x.html")
    assert result.exit_code == 2 and "--html" in result.stderr


def test_jupyter_shows_the_same_view_for_an_explanation():
    ex = dmltile.explain(DOC_EXAMPLE, index=[0, 0, 4, 7])
    page = ex._repr_html_()
    assert 'class="dmltile"' in page and "<script>" in page and "grid-output" in page
    assert page.count('class="cell hl') == 2  # the index and its source
    assert explanation_page(ex).count('data-out="0,0,4,7"') == 2  # grid cell and buffer slot
    unreadable = dmltile.explain(EXAMPLES / "invalid_missing_sizes.json")._repr_html_()
    assert "DML002" in unreadable and 'class="grid grid-output"' not in unreadable


def test_no_picture_for_mismatched_or_empty():
    bad = dmltile.tile_desc([2, 3], [2, 2]).to_dict()
    bad["Desc"]["Repeats"] = [2, 2, 2]
    bad["Desc"]["RepeatsCount"] = 3
    model = build_picture(dmltile.load(bad))
    assert not model.drawable and "different lengths" in model.message
    svg = to_svg(model)
    assert ET.fromstring(svg) is not None and "different lengths" in svg
    assert json.dumps(model.message)


def _wide(input_strides=None, output_strides=None) -> dict:
    def tensor(sizes, strides):
        t = {"DataType": "DML_TENSOR_DATA_TYPE_FLOAT32", "DimensionCount": 4, "Sizes": sizes}
        return t | ({"Strides": strides} if strides else {})

    return {
        "InputTensor": tensor([1, 1, 2, 20], input_strides),
        "OutputTensor": tensor([1, 1, 6, 40], output_strides),
        "RepeatsCount": 4,
        "Repeats": [1, 1, 3, 2],
    }


@pytest.mark.parametrize(
    "doc, markers",
    [
        (_wide(), {"+752B"}),  # the slots left out of the drawing
        (_wide(input_strides=[0, 0, 0, 1]), {"×2"}),  # two input rows share their slots
        (_wide(output_strides=[252, 252, 42, 1]), {"pad", "+792B"}),  # 2 slots of padding per row
    ],
)
def test_piped_memory_rows_fit_80_columns_with_each_marker_under_its_slot(tmp_path, doc, markers):
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(doc))
    lines = script("explain", path, columns=80).stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    memory = lines[next(n for n, line in enumerate(lines) if line.startswith("Memory")) :]
    rows = [n for n, line in enumerate(memory) if line.startswith("byte ")]
    assert len(rows) > 2
    seen = set()
    for n in rows:
        row = memory[n]
        assert row.endswith("│"), row  # a whole row on one line: nothing wrapped onto the next
        under = memory[n + 1] if n + 1 < len(memory) else ""
        for mark in re.finditer(r"\S+", under if not under.startswith(("byte ", "output")) else ""):
            seen.add(mark.group())
            slot = row[mark.start() : mark.end()]  # what the marker is written under
            assert "│" not in slot and slot.strip(), (row, under)
            kind = mark.group()
            want = "·" if kind == "pad" else "…" if kind.startswith("+") else None
            assert want is None or want in slot, (kind, slot)
    assert markers <= seen
