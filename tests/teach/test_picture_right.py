"""Pictures that are right: an output slot several output elements write lists every writer and
says the value left there is undefined; column numbers never run together; counted nouns agree
with their count; a high-rank picture draws the tiled axes. Each checked against a naive loop or
hand-computed text."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.core.words import plural
from dmltile.teach.html import explanation_page
from dmltile.teach.picture import build_picture
from dmltile.teach.render import picture, to_text
from tests.teach.test_picture import desc_with


def naive_writers(out_sizes, out_strides, in_sizes) -> dict[int, list[tuple[str, str]]]:
    """element offset -> [(output index, input index it copies)] in row-major order, by visiting
    every output index."""
    writers: dict[int, list[tuple[str, str]]] = {}
    for idx in np.ndindex(*out_sizes):
        off = sum(a * s for a, s in zip(idx, out_strides, strict=True))
        src = tuple(a % s for a, s in zip(idx, in_sizes, strict=True))
        writers.setdefault(off, []).append((",".join(map(str, idx)), ",".join(map(str, src))))
    return writers


def test_an_output_slot_with_two_writers_names_both_and_says_directml_rejects_the_strides():
    desc = desc_with([1, 2], [2, 2], out_strides=[1, 1], dtype="INT8")
    strip = build_picture(desc).output_strip
    assert strip is not None
    expected = naive_writers((2, 4), (1, 1), (1, 2))
    shared = [seg for seg in strip.segments if seg.kind == "shared"]
    assert [seg.start for seg in shared] == [1, 2, 3]
    for seg in shared:
        # the slot does not pretend to hold one writer's value
        assert seg.label == "?"
        named = re.findall(r"\[(\d+,\d+)\] \(input \[(\d+,\d+)\]\)", seg.writers)
        assert named == expected[seg.start]
        # equal strides: DirectML rejects the descriptor (DML109), so no value is left there to race
        assert "DirectML rejects these strides (DML109)" in seg.writers and "undefined" not in seg.writers
    text = " ".join(to_text(picture(desc), width=400).split())
    assert "Byte 1: addressed by 2 output elements, [0,1] (input [0,1]), [1,0] (input [0,0])" in text
    assert "DirectML rejects these strides (DML109)" in text and "race:" not in text


def test_a_slot_with_many_writers_names_the_first_few_and_counts_the_rest():
    # Strides [0, 1] over Sizes [5, 4]: each of the 4 slots is written by all 5 rows
    desc = desc_with([1, 4], [5, 1], out_strides=[0, 1], dtype="INT8")
    strip = build_picture(desc).output_strip
    assert strip is not None
    seg = next(s for s in strip.segments if s.kind == "shared")
    assert seg.count == 5
    assert re.findall(r"\[(\d+,\d+)\] \(input", seg.writers) == [f"{r},0" for r in range(5)]
    big = desc_with([1, 2], [40, 1], out_strides=[0, 1], dtype="INT8")
    big_strip = build_picture(big).output_strip
    assert big_strip is not None
    seg = next(s for s in big_strip.segments if s.kind == "shared")
    listed = re.findall(r"\[(\d+,\d+)\] \(input", seg.writers)
    assert seg.count == 40 and 0 < len(listed) < 40
    assert f"and {40 - len(listed)} more" in seg.writers


def test_the_page_lists_every_writer_of_a_shared_output_slot_in_its_hover_text():
    desc = desc_with([1, 2], [2, 2], out_strides=[1, 1], dtype="INT8")
    page = explanation_page(dmltile.explain(desc))
    found = re.findall(r'data-writers="([^"]*)"', page)
    assert len(found) == 3
    assert "[0,1] (input [0,1]), [1,0] (input [0,0])" in found[0] and "DML109" in found[0]


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 9), st.integers(1, 10**6))
def test_column_numbers_never_run_together(size, repeat):
    desc = desc_with([1, size], [1, repeat], dtype="INT8")
    text = to_text(picture(desc))
    block = text.split("(each outlined block is one copy of the input)")[1]
    header = block.splitlines()[1]
    numbers = re.findall(r"\d+", header)
    model = build_picture(desc)
    assert model.output_grid is not None
    expected = [str(t) for t in model.output_grid.cols.ticks if t is not None]
    assert numbers == expected  # each number whole: none glued to its neighbour


def test_repeats_of_100000_print_the_last_column_numbers_apart():
    made = dmltile.tile_desc([1, 2], [1, 100000], dtype="INT8")
    text = to_text(picture(made))
    assert "199998199999" not in text
    assert re.search(r"\b199998\s+199999\b", text)


def test_counts_of_one_take_the_singular():
    assert plural(1, "byte") == "1 byte" and plural(2, "byte") == "2 bytes" and plural(0, "slot") == "0 slots"
    assert plural(3, "copy", "copies") == "3 copies"
    desc = desc_with([1, 1], [1, 1], dtype="INT8")
    text = to_text(picture(desc))
    assert "1 bytes" not in text and "1 slots" not in text and "1 times" not in text
    assert "1 byte;" in text or "of 1 byte" in text
    assert "each one 1 time." in text
    whole = to_text(dmltile.explain(desc), width=400)
    assert "INT8, 1 byte per element" in whole
    assert not re.search(r"\b1 (bytes|slots|times|values|copies)\b", whole)


def test_an_8d_picture_draws_the_tiled_axes_and_says_which():
    desc = dmltile.tile_desc([1, 1, 1, 1, 1, 1, 2, 3], [1, 2, 1, 1, 1, 1, 1, 2], dtype="INT8")
    model = build_picture(desc)
    assert model.output_grid is not None
    assert (model.output_grid.rows.dim, model.output_grid.cols.dim) == (1, 7)
    assert "rows along axis 1" in model.notes[0] and "columns along axis 7" in model.notes[0]
