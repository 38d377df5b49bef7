"""Every hint is followed as a user would follow it, and what it leaves is checked.

A hint is the words of a fix: these tests apply all the edits of one report, in the order the JSON
contract gives them, and judge the result at the level asked about, keeping every value no issue
names. The cases the hints got wrong when each was written for its own rule alone are here too:
64-bit types at the 4-D levels, byte sizes two fixes both change, two tensors' same field, and
Repeats typed as the output's sizes.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.validate.fixes import apply_all, wrapped
from dmltile.validate.rules import all_rules
from dmltile.validate.rules.edits import join_path
from tests.validate.test_fixes import UNFIXABLE, _output_dtype, _small_total, _tensor, valid_documents
from tests.validate.test_hints_keep_data import _wide_type, leaves, named


def typed(dtype, sizes, repeats, outs=None):
    outs = outs or [s * r for s, r in zip(sizes, repeats, strict=True)]
    return {
        "InputTensor": {"DataType": dtype, "Sizes": list(sizes)},
        "OutputTensor": {"DataType": dtype, "Sizes": list(outs)},
        "Repeats": list(repeats),
    }


def follow(document, level: str):
    """The document after following every hint of its report once, in order; and the paths the
    issues named (the values a fix may change)."""
    report = dmltile.validate(document, level)
    named_paths = {i.path for i in report.issues} | {e.path for i in report.issues for e in i.fix}
    return apply_all(document, report.issues), named_paths, report


def keeps_the_rest(original, fixed, paths) -> list[str]:
    """The paths of values the fix changed though no issue named them."""
    after = dict(leaves(wrapped(fixed)))
    return [
        join_path(list(p))
        for p, v in leaves(wrapped(original))
        if not named(p, paths) and after.get(p, v) != v
    ]


def said(value, hint: str) -> bool:
    """Whether ``hint`` writes ``value``, as JSON, compactly, or as an enum's short name."""
    forms = {json.dumps(value), json.dumps(value, separators=(",", ":"))}
    if isinstance(value, str):
        forms.add(value.rsplit("_TYPE_", 1)[-1])
    return any(f in hint for f in forms)


FIXABLE_EXAMPLES = [
    r
    for r in all_rules()
    if r.fix is not None
    and r.example.document is not None
    and r.code not in UNFIXABLE
    and r.phase != "provider"
]


@pytest.mark.parametrize("rule", FIXABLE_EXAMPLES, ids=lambda r: r.code)
def test_every_rules_hint_followed_as_written_gives_a_valid_document_keeping_the_rest(rule):
    level = rule.example.feature_level or "6.4"
    document = rule.example.document
    fixed, paths, report = follow(document, level)
    assert any(i.code == rule.code for i in report.issues), report
    for i in report.issues:
        if i.fix:  # the hint says the fix: every value the edits set is written in it
            assert all(said(e.value, i.hint) for e in i.fix if e.op == "set"), i
    after = dmltile.validate(fixed, level)
    assert not after.errors, (rule.code, fixed, after.issues)
    assert not keeps_the_rest(document, fixed, paths), (rule.code, fixed)


# -- 64-bit types where the level has none: 32-bit pairs within the level's rank ---------------------
@pytest.mark.parametrize(
    "level,sizes,repeats,pairs,pair_repeats",
    [
        ("2.1", [2, 2, 2, 3], [2, 2, 2, 2], [2, 2, 2, 6], [2, 2, 2, 2]),  # rank full: innermost doubled
        ("1.0", [1, 1, 2, 3], [1, 1, 2, 3], [1, 1, 2, 6], [1, 1, 2, 3]),
        ("3.1", [2, 3], [2, 2], [2, 3, 2], [2, 2, 1]),  # room for one more axis of 2
        ("3.1", [1, 1, 1, 1, 1, 1, 2, 3], [1] * 6 + [2, 2], [1] * 6 + [2, 6], [1] * 6 + [2, 2]),
    ],
    ids=["2.1-4D", "1.0-4D", "3.1-2D", "3.1-8D"],
)
def test_int64_is_read_as_pairs_within_the_levels_rank_and_keeps_the_bytes(
    level, sizes, repeats, pairs, pair_repeats
):
    document = typed("INT64", sizes, repeats)
    fixed, _, report = follow(document, level)
    half = "FLOAT32" if level == "1.0" else "UINT32"
    assert set(report.codes) == {"DML302"}
    sentence = (
        f"InputTensor: read the INT64 data as {half} pairs: Sizes [{','.join(map(str, pairs))}], same bytes"
    )
    assert all(sentence in i.hint and "OutputTensor: read the INT64" in i.hint for i in report.issues), report
    assert dmltile.validate(fixed, level).valid, fixed
    tile = wrapped(fixed)["Desc"]
    assert tile["InputTensor"]["Desc"]["Sizes"] == pairs and tile["Repeats"] == pair_repeats
    # same bytes in, same bytes out: the pairs tiled are numpy.tile of the 64-bit values
    x = np.arange(np.prod(sizes), dtype=np.int64).reshape(sizes) * 0x100000001 - 7
    as_pairs = x.view(np.uint32 if half == "UINT32" else np.float32).reshape(pairs)
    out = dmltile.execute(fixed, as_pairs, level)
    assert out.tobytes() == np.tile(x, repeats).tobytes()


def test_a_64_bit_type_whose_innermost_elements_are_apart_gets_no_pairs_fix_at_a_full_rank():
    document = typed("INT64", [1, 1, 2, 3], [1, 1, 2, 2])
    document["InputTensor"]["Strides"] = [12, 12, 6, 2]
    document["InputTensor"]["TotalTensorSizeInBytes"] = 96
    report = dmltile.validate(document, "2.1")
    assert all(not i.fix for i in report.issues if i.code == "DML302"), report


# -- fixes that add up ----------------------------------------------------------------------------
def test_repeats_typed_as_the_output_sizes_are_fixed_as_repeats():
    document = typed("FLOAT32", [1, 1, 2, 3], [1, 1, 6, 9], [1, 1, 6, 9])
    fixed, _, report = follow(document, "6.4")
    assert report.codes == ["DML205", "DML205"]
    assert [i.hint.split(" (or")[0] for i in report.issues] == ["set Repeats[2] to 3", "set Repeats[3] to 3"]
    assert wrapped(fixed)["Desc"]["Repeats"] == [1, 1, 3, 3]
    assert wrapped(fixed)["Desc"]["OutputTensor"]["Desc"]["Sizes"] == [1, 1, 6, 9]


def test_a_byte_size_two_fixes_change_is_the_size_both_need():
    document = typed("FLOAT32", [1, 1, 2, 3], [1, 1, 3, 3], [1, 1, 5, 7])
    document["OutputTensor"]["TotalTensorSizeInBytes"] = 140
    fixed, _, report = follow(document, "6.4")
    sizes = {e.value for i in report.issues for e in i.fix if e.path.endswith("TotalTensorSizeInBytes")}
    assert sizes == {6 * 9 * 4}, report  # not 168 for one axis and 180 for the other
    assert "then set OutputTensor.TotalTensorSizeInBytes to 216" in report.issues[0].hint
    assert dmltile.validate(fixed, "6.4").valid, fixed


def test_a_fix_touching_two_tensors_names_each():
    document = typed("FLOAT32", [2, 3, 0], [2, 3, 3], [4, 9, 0])
    report = dmltile.validate(document, "6.4")
    first = report.issues[0]
    assert (
        first.hint.startswith("set InputTensor.Sizes[2] to 1")
        and "then set OutputTensor.Sizes[2] to 3" in first.hint
    )
    assert dmltile.validate(apply_all(document, report.issues), "6.4").valid


def test_a_64_bit_input_beside_an_output_of_another_type_is_said_as_pairs_for_the_input_alone():
    # The pairs sentence names each tensor it rewrites; a mismatched output is DML206's to fix.
    doc = dmltile.tile_desc([1, 1, 2, 3], [1, 1, 3, 3], dtype="FLOAT64").to_dict()
    doc["Desc"]["OutputTensor"]["Desc"]["DataType"] = "DML_TENSOR_DATA_TYPE_FLOAT32"
    report = dmltile.validate(doc, feature_level="1.0")
    hint = next(i.hint for i in report.issues if i.code == "DML302")
    assert "InputTensor: read the FLOAT64 data as FLOAT32 pairs" in hint and "OutputTensor: read" not in hint


@pytest.mark.parametrize("output_total", [216, 0], ids=["written-for-float32", "zero"])
def test_a_mismatched_output_beside_a_64_bit_input_gets_the_byte_size_all_the_fixes_leave(output_total):
    # DML206 first makes the output FLOAT64 and DML302 then reads both tensors as FLOAT32 pairs: the
    # byte size is the one the document needs after both (432 for FLOAT32 [1,1,6,18]), not one
    # measured half way (864 for FLOAT64 of those Sizes), and DML105's own edit is that size too.
    doc = dmltile.tile_desc([1, 1, 2, 3], [1, 1, 3, 3], dtype="FLOAT64").to_dict()
    out = doc["Desc"]["OutputTensor"]["Desc"]
    out["DataType"], out["TotalTensorSizeInBytes"] = "DML_TENSOR_DATA_TYPE_FLOAT32", output_total
    fixed, _, report = follow(doc, "1.0")
    assert {"DML206", "DML302"} <= set(report.codes)
    assert dmltile.validate(fixed, "1.0").valid, (report.issues, fixed)
    tile = wrapped(fixed)["Desc"]
    need = dmltile.calc_buffer_tensor_size("FLOAT32", [1, 1, 6, 18])
    assert tile["OutputTensor"]["Desc"]["TotalTensorSizeInBytes"] == need == 432
    sizes = {e.value for i in report.issues for e in i.fix if e.path.endswith("TotalTensorSizeInBytes")}
    assert sizes == {need}, report.issues
    # the user's data kept: the FLOAT64 values' bytes, read as FLOAT32 pairs, tile to numpy.tile's bytes
    x = np.linspace(-3.5, 7.25, 6).reshape(1, 1, 2, 3)
    pairs = x.view(np.float32).reshape(tile["InputTensor"]["Desc"]["Sizes"])
    assert dmltile.execute(fixed, pairs, "1.0").tobytes() == np.tile(x, [1, 1, 3, 3]).tobytes()


# The levels whose Tile takes no 64-bit type: a 64-bit tensor is read as 32-bit pairs there.
WITHOUT_64_BIT = [
    lv.dotted
    for lv in dmltile.known_levels()
    if dmltile.DataType.INT64 not in dmltile.tile_support(lv).tensors["InputTensor"].data_types
]


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    phases=[Phase.generate],
)
@given(data=st.data())
def test_a_64_bit_document_followed_once_is_valid_keeps_its_bytes_and_sizes_its_buffers_as_needed(data):
    """One report's edits, in order, at a level without 64-bit types: the pairs rewrite beside a
    mismatched output (DML206) and byte sizes written for another type (DML105), which must add up."""
    level = data.draw(st.sampled_from(WITHOUT_64_BIT))
    doc = data.draw(valid_documents(level))
    _wide_type(doc, _tensor(doc, "InputTensor"), 0, data.draw)
    if data.draw(st.booleans()):
        _output_dtype(doc, None, 0, data.draw)
    if data.draw(st.booleans()):
        _small_total(
            doc, _tensor(doc, data.draw(st.sampled_from(["InputTensor", "OutputTensor"]))), 0, data.draw
        )
    report = dmltile.validate(doc, level)
    if any(not i.fix for i in report.errors):
        return  # no layout of this level holds it (strides apart at a full rank): no fix to follow
    fixed = apply_all(doc, report.issues)
    assert dmltile.validate(fixed, level).valid, (doc, report.issues, fixed)
    tile = wrapped(fixed)["Desc"]
    for name in ("InputTensor", "OutputTensor"):
        t = tile[name]["Desc"]
        written = wrapped(doc)["Desc"][name]["Desc"].get("TotalTensorSizeInBytes")
        need = dmltile.calc_buffer_tensor_size(t["DataType"], t["Sizes"], t.get("Strides"))
        if t.get("TotalTensorSizeInBytes") != written:  # an edited size is what the result needs
            assert t["TotalTensorSizeInBytes"] == need, (name, doc, report.issues, fixed)
    source = wrapped(doc)["Desc"]["InputTensor"]["Desc"]
    if source.get("Strides") is None:  # same bytes in, same bytes out
        sizes, reps = source["Sizes"], wrapped(doc)["Desc"]["Repeats"]
        wide = dmltile.DataType.parse(source["DataType"]).numpy_dtype
        x = (np.arange(int(np.prod(sizes))) * 0x10000001 + 3).astype(wide).reshape(sizes)
        narrow = dmltile.DataType.parse(tile["InputTensor"]["Desc"]["DataType"]).numpy_dtype
        got = dmltile.execute(fixed, x.view(narrow).reshape(tile["InputTensor"]["Desc"]["Sizes"]), level)
        assert got.tobytes() == np.tile(x, reps).tobytes(), (doc, fixed)


@pytest.mark.parametrize("repeats", [[1, 3], None])
def test_a_new_rank_takes_its_count_so_one_round_of_fixes_is_valid(repeats):
    # DML102 counts the Sizes as written (3); DML204 then gives the output the input's rank, and its
    # own count with it. Without Repeats, the output's leading 1 holds no copies: [1, 4, 9] from [4, 3]
    # is Repeats [1, 3], never a tile that drops the sizes the user wrote.
    doc = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [4, 3], "DimensionCount": 2},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 4, 9], "DimensionCount": 2},
    }
    if repeats is not None:
        doc["Repeats"] = repeats
    fixed, _, report = follow(doc, "5.0")
    assert {"DML102", "DML204"} <= set(report.codes)
    assert dmltile.validate(fixed, "5.0").valid, (report.issues, fixed)
    tile = wrapped(fixed)["Desc"]
    assert tile["OutputTensor"]["Desc"]["Sizes"] == [4, 9] and tile["Repeats"] == [1, 3]
    for issue in report.issues:  # each fix alone still settles its own issue
        assert issue.code not in dmltile.validate(apply_all(doc, [issue]), "5.0").codes, issue


def test_two_fixes_that_fit_the_written_byte_size_alone_but_not_together_set_the_size_both_need():
    # DML205 swaps the Sizes ([3] -> [9]), DML206 widens the output to INT64: each alone fits the
    # output's 24 bytes, together they need 72, so the last fix to change the output sets it.
    doc = dmltile.tile_desc([9], [3], dtype="INT64").to_dict()
    inp, out = doc["Desc"]["InputTensor"]["Desc"], doc["Desc"]["OutputTensor"]["Desc"]
    inp["Sizes"], inp["TotalTensorSizeInBytes"] = [9], 72
    out["Sizes"], out["DataType"], out["TotalTensorSizeInBytes"] = [3], "DML_TENSOR_DATA_TYPE_INT8", 24
    fixed, _, report = follow(doc, "6.1")
    assert {"DML205", "DML206"} <= set(report.codes) and "DML105" not in report.codes
    assert dmltile.validate(fixed, "6.1").valid, (report.issues, fixed)
    need = dmltile.calc_buffer_tensor_size("INT64", [9])
    assert wrapped(fixed)["Desc"]["OutputTensor"]["Desc"]["TotalTensorSizeInBytes"] == need == 72
    for issue in report.issues:  # each fix alone still settles its own issue
        assert issue.code not in dmltile.validate(apply_all(doc, [issue]), "6.1").codes, issue
