"""``dmltile explain`` and ``dmltile.explain``: field meanings, the byte-size derivation, the index
mapping and the picture, checked against numpy.tile and hand-computed numbers."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.teach.explain import explain, map_index, size_derivation
from dmltile.teach.render import to_text
from tests.cli_support import DOC_EXAMPLE, EXAMPLES, invoke, no_traceback, script


def test_doc_example_cli_shows_the_index_mapping_and_the_byte_size_derivation():
    proc = script("explain", DOC_EXAMPLE, "--index", "0,0,4,7")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    # Hand-computed for the DirectML page's example (2x3 input, repeats 3x3, FLOAT32):
    # output [0,0,4,7] copies input [0,0,4 mod 2,7 mod 3] = [0,0,0,1]; packed input strides [6,6,3,1]
    # put it at element 1 = byte 4; output strides [54,54,9,1] put [0,0,4,7] at element 43 = byte 172.
    assert "[0, 0, 4 mod 2" not in out  # mapping is written per dimension with its own size:
    assert "[0 mod 1, 0 mod 1, 4 mod 2, 7 mod 3] = [0, 0, 0, 1]" in out
    assert "byte 4" in out and "byte 172" in out
    # DMLCalcBufferTensorSize: last index 5 -> 24 bytes (input), last index 53 -> 216 bytes (output).
    assert "= 0 + 0 + 3 + 2 = 5" in out and "(5 + 1) * 4 = 24" in out
    assert "= 0 + 0 + 45 + 8 = 53" in out and "(53 + 1) * 4 = 216" in out
    assert "1.0 to 6.4" in out and "accepted" in out
    for field in (
        "DataType",
        "Sizes",
        "Strides",
        "TotalTensorSizeInBytes",
        "RepeatsCount",
        "Repeats",
        "GuaranteedBaseOffsetAlignment",
    ):
        assert field in out


def test_rejected_levels_show_rule_and_code_and_exit_1():
    result = invoke("explain", EXAMPLES / "invalid_fl3_1_int64.json", "--feature-level", "3.1")
    assert result.exit_code == 1
    out = result.stdout
    assert "DML302" in out
    assert " ".join(dmltile.RULES["DML302"].rule.split()) in " ".join(out.split())
    assert "4.1 to 6.4" in out  # INT64 Tile from 4.1 (DirectML page)


def test_levels_grouped_exactly_where_support_changes():
    ex = explain(EXAMPLES / "invalid_fl3_1_int64.json")
    groups = [(v.label, v.valid, sorted({i.code for i in v.issues})) for v in ex.levels]
    assert groups == [
        ("1.0 to 3.0", False, ["DML301", "DML302"]),
        ("3.1 to 4.0", False, ["DML302"]),
        ("4.1 to 6.4", True, []),
    ]


def test_left_out_fields_are_marked_as_defaults():
    ex = explain(EXAMPLES / "valid_short_form.json")
    written = {r.path: r.written for r in ex.fields}
    assert written["Desc.InputTensor.Desc.Sizes"] and written["Desc.Repeats"]
    assert not written["Desc.InputTensor.Desc.TotalTensorSizeInBytes"] and not written["Desc.RepeatsCount"]
    assert "left out: the default" in to_text(ex)


def test_strided_input_offsets_hand_computed():
    # valid_strided_padded_input: input Sizes [1,2,2,3] Strides [0,0,4,1], Repeats [1,1,2,2].
    desc = dmltile.load(EXAMPLES / "valid_strided_padded_input.json")
    m = map_index(desc, [0, 1, 3, 5])
    assert m.input_index == (0, 1, 1, 2)
    assert m.input_byte_offset == (1 * 0 + 1 * 4 + 2 * 1) * 4  # 24
    assert m.output_byte_offset == (1 * 24 + 3 * 6 + 5) * 4  # packed output [48,24,6,1]: 188
    steps = size_derivation("InputTensor", desc.input).steps
    assert any("= 0 + 0 + 4 + 2 = 6" in s for s in steps) and any("(6 + 1) * 4 = 28" in s for s in steps)


@pytest.mark.parametrize("bad", [["9"], ["0", "0", "6", "0"], ["0", "0", "0", "-1"], ["0", "0", "0", "x"]])
def test_bad_index_exits_2(bad):
    result = invoke("explain", DOC_EXAMPLE, "--index", ",".join(bad))
    assert result.exit_code == 2
    no_traceback(result.stdout, result.stderr)
    assert "--index" in result.stderr


def test_unreadable_and_unknown_level_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    for args in (
        ("explain", bad),
        ("explain", tmp_path / "missing.json"),
        ("explain", DOC_EXAMPLE, "-l", "2.5"),
    ):
        result = invoke(*args)
        assert result.exit_code == 2, args
        no_traceback(result.stdout, result.stderr)


def test_unparseable_descriptor_is_explained_with_its_issues():
    result = invoke("explain", EXAMPLES / "invalid_missing_sizes.json")
    assert result.exit_code == 1 and "DML002" in result.stdout


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_index_mapping_agrees_with_numpy_tile_and_packed_offsets(data):
    sizes = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=5))
    reps = data.draw(st.lists(st.integers(1, 3), min_size=len(sizes), max_size=len(sizes)))
    dtype = data.draw(st.sampled_from(["FLOAT32", "FLOAT16", "INT8", "UINT64"]))
    desc = dmltile.tile_desc(sizes, reps, dtype=dtype)
    out_sizes = [s * r for s, r in zip(sizes, reps, strict=False)]
    o = tuple(data.draw(st.integers(0, n - 1)) for n in out_sizes)
    m = map_index(desc, o)
    x = np.arange(np.prod(sizes)).reshape(sizes)
    assert np.tile(x, reps)[o] == x[m.input_index]
    elem = desc.input.data_type.element_size
    assert m.input_byte_offset == np.ravel_multi_index(m.input_index, sizes) * elem
    assert m.output_byte_offset == np.ravel_multi_index(o, out_sizes) * elem


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_byte_size_derivation_matches_a_naive_count(data):
    n = data.draw(st.integers(1, 4))
    sizes = data.draw(st.lists(st.integers(1, 5), min_size=n, max_size=n))
    strides = data.draw(st.one_of(st.none(), st.lists(st.integers(0, 40), min_size=n, max_size=n)))
    dtype = data.draw(st.sampled_from(["FLOAT32", "FLOAT16", "INT8", "INT64"]))
    t = dmltile.BufferTensorDesc.packed(dtype, sizes, strides)
    d = size_derivation("InputTensor", t)
    # naive: visit every index, take the largest element offset it reaches
    eff = strides if strides is not None else [int(np.prod(sizes[k + 1 :])) for k in range(n)]
    last = max(sum(i * s for i, s in zip(idx, eff, strict=False)) for idx in np.ndindex(*sizes))
    elem = {"FLOAT32": 4, "FLOAT16": 2, "INT8": 1, "INT64": 8}[dtype]
    assert d.minimum == -(-(last + 1) * elem // 4) * 4
    assert any(f"= {last}" in s for s in d.steps) and d.ok


def test_svg_export(tmp_path):
    svg = tmp_path / "tile.svg"
    result = invoke("explain", DOC_EXAMPLE, "--svg", svg)
    assert result.exit_code == 0
    text = svg.read_text()
    assert text.lstrip().startswith("<svg") and "0,0" in text.replace("&#160;", " ")
    assert len(set(re.findall(r'fill="(#[0-9a-f]{6})"', text))) >= 6  # one colour per input element


def test_svg_to_an_unwritable_place_exits_2(tmp_path):
    result = invoke("explain", DOC_EXAMPLE, "--svg", tmp_path / "no" / "such" / "dir" / "x.svg")
    assert result.exit_code == 2 and "--svg" in result.stderr


def test_demo_explains_and_runs_the_doc_example():
    import subprocess
    import sys

    from tests.cli_support import ROOT

    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "COLUMNS": "100"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "byte 172" in proc.stdout and "(53 + 1) * 4 = 216" in proc.stdout
    assert "[4. 5. 6. 4. 5. 6. 4. 5. 6.]" in proc.stdout
