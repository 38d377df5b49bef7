"""Hints that keep the user's data, and all the fixes of one report applied together.

A fix never puts template values in place of what the user wrote: a misspelt key is renamed (its
value kept), a type name is read as C and NumPy read it, a hint offers only what the level (or a
DirectML version) can take, and an issue that is the consequence of another is not reported beside
it. The property test at the end applies *all* the fixes of a report at once to thousands of
broken documents and checks that the result is valid and keeps every field no issue named.
"""

from __future__ import annotations

import copy
import json
import re

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.validate.fixes import apply_all, wrapped
from dmltile.validate.rules.edits import join_path, split_path
from dmltile.validate.rules.levels import FLOAT64_FROM
from dmltile.validate.versions import known_versions, parse_directml_version
from tests.examples_support import EXAMPLES, example_level
from tests.validate.test_fixes import MUTATIONS, UNFIXABLE, _desc, _tensor, valid_documents


def int8(sizes):
    return {"DataType": "INT8", "Sizes": sizes}


def by_code(report) -> dict[str, list]:
    out: dict[str, list] = {}
    for i in report.issues:
        out.setdefault(i.code, []).append(i)
    return out


# -- case 2: a misspelt wrapper key is that key, its value kept ----------------------------------
@pytest.mark.parametrize(
    "document",
    [
        {"Input": int8([2, 3]), "Output": int8([4, 9]), "Repeats": [2, 3]},
        {"InputTensor": int8([2, 3]), "Output": int8([4, 9]), "repeats": [2, 3]},
        {
            "Type": "DML_OPERATOR_TILE",
            "Desc": {
                "Tensor": {"Type": "DML_TENSOR_TYPE_BUFFER", "Desc": int8([2, 3])},
                "OutputTensor": int8([4, 9]),
                "Repeats": [2, 3],
            },
        },
        {
            "Type": "DML_OPERATOR_TILE",
            "Desc": {
                "InputTensor": {"Type": "DML_TENSOR_TYPE_BUFFER", "Tensor": int8([2, 3])},
                "OutputTensor": int8([4, 9]),
                "Repeats": [2, 3],
            },
        },
    ],
    ids=["bare-Input-Output", "bare-lowercase-repeats", "Tensor-for-InputTensor", "Tensor-for-Desc"],
)
def test_a_misspelt_wrapper_key_is_renamed_and_its_data_kept(document):
    report = dmltile.validate(document)
    assert set(report.codes) == {"DML003"}, report  # not "required field ... is missing" besides
    assert all(i.hint.startswith("did you mean") for i in report.issues)
    assert all([e.op for e in i.fix] == ["rename"] for i in report.issues)
    fixed = apply_all(document, report.issues)
    assert dmltile.validate(fixed).valid, fixed
    tile = wrapped(fixed)["Desc"]
    assert tile["InputTensor"]["Desc"] == int8([2, 3]) and tile["OutputTensor"]["Desc"] == int8([4, 9])
    assert tile["Repeats"] == [2, 3]


def test_no_fix_inserts_the_readme_template_in_place_of_the_users_fields():
    document = {"Input": int8([2, 3]), "Output": int8([4, 9]), "Repeats": [2, 3]}
    text = json.dumps([i.model_dump() for i in dmltile.validate(document).issues])
    assert "FLOAT32" not in text and "[1, 1, 2, 3]" not in text


# -- a missing part is derived from the document, or left to the user with words, never a template --
@pytest.mark.parametrize(
    "document",
    [
        {"Type": "DML_OPERATOR_TILE"},
        {"Type": "DML_OPERATOR_TILE", "Desc": {}},
        {"Type": "DML_OPERATOR_TILE", "Desc": 5},
        {"Repeats": [2, 3]},
        {"InputTensor": 3, "Repeats": [2, 3]},
    ],
    ids=["no-Desc", "empty-Desc", "Desc-not-an-object", "no-tensors", "tensor-not-an-object-nor-other"],
)
def test_a_missing_part_nothing_implies_gets_no_fix_and_a_hint_in_words(document):
    report = dmltile.validate(document)
    assert report.errors and all(i.code in ("DML002", "DML004") for i in report.errors), report
    for i in report.errors:
        assert not i.fix, i  # no example data standing in for the user's own
        field = i.path.rsplit(".", 1)[-1]
        assert i.hint.startswith((f'add "{field}": ', f"write {field} as ")), i.hint
        assert not re.search(r"\d|FLOAT|\[", i.hint), i.hint  # words, not example values


@pytest.mark.parametrize(
    "document,tensor",
    [
        ({"OutputTensor": int8([4, 9]), "Repeats": [2, 3]}, "InputTensor"),
        ({"InputTensor": int8([2, 3]), "Repeats": [2, 3]}, "OutputTensor"),
        (
            {
                "InputTensor": {"Type": "DML_TENSOR_TYPE_BUFFER"},
                "OutputTensor": int8([4, 9]),
                "Repeats": [2, 3],
            },
            "InputTensor",
        ),
        ({"InputTensor": None, "OutputTensor": int8([4, 9]), "Repeats": [2, 3]}, "InputTensor"),
    ],
    ids=["no-input", "no-output", "input-without-Desc", "input-null"],
)
def test_a_missing_part_the_document_implies_is_fixed_from_it(document, tensor):
    report = dmltile.validate(document)
    assert report.errors and all(i.fix for i in report.errors), report
    fixed = apply_all(document, report.issues)
    assert dmltile.validate(fixed).valid, fixed
    expected = {"InputTensor": [2, 3], "OutputTensor": [4, 9]}[tensor]
    assert fixed["Desc"][tensor]["Desc"] == {"DataType": "DML_TENSOR_DATA_TYPE_INT8", "Sizes": expected}


# -- case 3: type names as C and NumPy read them ----------------------------------------------------
@pytest.mark.parametrize(
    "name,meant",
    [("float", "FLOAT32"), ("half", "FLOAT16"), ("double", "FLOAT64"), ("int", "INT32"), ("fp16", "FLOAT16")],
)
def test_c_type_names_map_as_c_does(name, meant):
    document = {
        "InputTensor": {"DataType": name, "Sizes": [2, 3]},
        "OutputTensor": {"DataType": name, "Sizes": [4, 9]},
        "Repeats": [2, 3],
    }
    report = dmltile.validate(document)
    assert {i.code for i in report.errors} == {"DML005"}  # and FLOAT64's warning, found in the same pass
    for i in report.errors:
        assert f'did you mean "DML_TENSOR_DATA_TYPE_{meant}"' in i.hint, i.hint
    assert set(report.codes) - {"DML005"} == set(dmltile.validate(apply_all(document, report.errors)).codes)
    fixed = dmltile.validate(apply_all(document, report.issues))
    assert fixed.valid or set(fixed.codes) == {"DML304"}  # FLOAT64's warning
    tensor = apply_all(document, report.issues)["Desc"]["InputTensor"]["Desc"]
    assert tensor["DataType"] == f"DML_TENSOR_DATA_TYPE_{meant}"


# -- case 4: level- and version-aware hints ---------------------------------------------------------
def typed(dtype, sizes=(2, 3), repeats=(2, 3)):
    return {
        "InputTensor": {"DataType": dtype, "Sizes": list(sizes)},
        "OutputTensor": {"DataType": dtype, "Sizes": [s * r for s, r in zip(sizes, repeats, strict=True)]},
        "Repeats": list(repeats),
    }


def test_int64_at_1_0_is_tiled_as_float32_pairs_the_only_32_bit_type_that_level_takes():
    document = typed("INT64", (1, 1, 2, 3), (1, 1, 2, 3))
    report = dmltile.validate(document, "1.0")
    dml302 = by_code(report)["DML302"]
    assert all("as FLOAT32 pairs" in i.hint and "UINT32" not in i.hint for i in dml302)
    assert all(i.fix for i in dml302)
    fixed = apply_all(document, report.issues)
    assert dmltile.validate(fixed, "1.0").valid, fixed
    # 1.0 takes 4 dimensions only: the innermost size doubled, not a fifth axis of 2
    assert fixed["Desc"]["InputTensor"]["Desc"]["Sizes"] == [1, 1, 2, 6]


def test_uint4_says_no_type_fits_and_has_no_fix_rather_than_an_empty_one():
    report = dmltile.validate(typed("UINT4"))
    for i in by_code(report)["DML302"]:
        assert not i.fix and "no feature level tiles UINT4" in i.hint
        assert "no layout this level takes" in i.hint and not i.hint.rstrip().endswith(";")


def test_a_later_level_is_named_with_a_directml_version_that_offers_it():
    """Pinned to DirectML 1.5.1 (max level 3.1), FLOAT64 needs a later level; the hint names the
    oldest measured DirectML whose max level reaches it, which 1.5.1 is not."""
    report = dmltile.validate(typed("FLOAT64"), directml="1.5.1")
    needed = dmltile.parse_feature_level(FLOAT64_FROM)
    oldest = min(
        (v for v in known_versions() if v.max_feature_level >= needed),
        key=lambda v: tuple(int(p) for p in v.version.split(".")),
    )
    for i in by_code(report)["DML302"]:
        assert f"{needed.c_name} or later (DirectML {oldest.version} or newer)" in i.hint, i.hint
    assert parse_directml_version("1.5.1").max_feature_level < needed


# -- case 5: consequences are not reported beside their cause ----------------------------------------
def test_repeats_of_the_wrong_length_give_no_output_size_issue_and_their_fix_is_whole():
    document = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 3]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 6, 9]},
        "Repeats": [1, 3, 3],
        "RepeatsCount": 4,
    }
    report = dmltile.validate(document)
    assert report.codes == ["DML202"]  # no DML205 "set OutputTensor.Sizes[1] to 3"
    assert dmltile.validate(apply_all(document, report.issues)).valid


def test_an_output_of_the_wrong_rank_gets_no_repeat_advice():
    document = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3, 1]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [6, 9]},
        "Repeats": [3, 3, 1],
    }
    report = dmltile.validate(document)
    assert report.codes == ["DML204"] and "Repeats[0]" not in report.issues[0].hint
    assert dmltile.validate(apply_all(document, report.issues)).valid


def test_swapped_input_and_output_are_named_a_swap():
    document = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [6, 9]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
        "Repeats": [3, 3],
    }
    report = dmltile.validate(document)
    assert report.codes == ["DML205"] and "swapped" in report.issues[0].message
    assert "18" not in report.issues[0].hint and "27" not in report.issues[0].hint
    fixed = apply_all(document, report.issues)
    assert dmltile.validate(fixed).valid
    assert fixed["Desc"]["InputTensor"]["Desc"]["Sizes"] == [2, 3]


def test_a_size_below_the_minimum_is_not_also_said_to_be_accepted():
    document = typed("FLOAT32")
    document["InputTensor"]["TotalTensorSizeInBytes"] = 22
    report = dmltile.validate(document)
    assert report.codes == ["DML105"]
    assert not any("accepts the descriptor" in i.message for i in report.issues)


def test_repeats_count_left_out_is_not_quoted_as_if_written():
    document = typed("FLOAT32")
    document["Repeats"] = [3]
    report = dmltile.validate(document)
    assert report.codes == ["DML201"]
    assert "RepeatsCount is" not in report.issues[0].message and report.issues[0].path == "Desc.Repeats"
    document["RepeatsCount"] = 1
    written = dmltile.validate(document)
    assert any("RepeatsCount is 1" in i.message for i in written.issues)


def test_strides_packed_is_told_to_write_null_or_leave_it_out():
    document = typed("FLOAT32")
    document["InputTensor"]["Strides"] = "packed"
    (only,) = dmltile.validate(document).issues
    assert "e.g. null" not in only.hint and "null (or leave it out) for packed" in only.hint
    assert dmltile.validate(apply_all(document, [only])).valid


# -- every fix of a report at once, over thousands of broken documents -------------------------------
def _swap(doc, tensor, i, draw):
    d = _desc(doc)
    d["InputTensor"], d["OutputTensor"] = d["OutputTensor"], d["InputTensor"]


def _rename_wrapper(doc, tensor, i, draw):
    d = _desc(doc)
    name = draw(st.sampled_from(["InputTensor", "OutputTensor"]))
    d[draw(st.sampled_from([name[: -len("Tensor")], name.lower()]))] = d.pop(name)


def _c_type_name(doc, tensor, i, draw):
    tensor["DataType"] = draw(st.sampled_from(["float", "half", "fp16", "single"]))


def _repeats_too_short(doc, tensor, i, draw):
    reps = _desc(doc)["Repeats"]
    if len(reps) > 1:
        del reps[0]


def _wide_type(doc, tensor, i, draw):
    # A 64-bit type, which levels before 4.1 tile only as 32-bit pairs: beside a mismatched output
    # (DML206) or a byte size written for the narrower type (DML105), fixes that must add up.
    wide = draw(st.sampled_from(["INT64", "UINT64", "FLOAT64"]))
    tensor["DataType"] = wide if "Desc" not in doc else f"DML_TENSOR_DATA_TYPE_{wide}"


BROKEN = {
    **MUTATIONS,
    "wide_type": _wide_type,
    "swap": _swap,
    "rename_wrapper": _rename_wrapper,
    "c_type_name": _c_type_name,
    "repeats_too_short": _repeats_too_short,
}
# 200 examples of 25 broken documents each: 5,000 documents fixed and checked in about 15 s. Generation only: a
# failure prints the document it failed on, and shrinking a batch this size would take minutes.
BATCH = 25
LEVELS = [level.dotted for level in dmltile.known_levels()]  # every level, 1.0 to 6.4
EXAMPLES_RUN = 200


def leaves(value, path=()):
    """(keys, value) of every scalar and empty container of a JSON value: an object emptied by a fix is
    a value it changed."""
    if isinstance(value, dict) and value:
        for k, v in value.items():
            yield from leaves(v, (*path, k))
    elif isinstance(value, list) and value:
        for n, v in enumerate(value):
            yield from leaves(v, (*path, n))
    else:
        yield path, value


def named(leaf: tuple, paths: set[str]) -> bool:
    """Whether an issue named this field (itself, an array or object holding it)."""
    text = join_path(list(leaf))
    return any(text == p or text.startswith((p + ".", p + "[")) for p in paths)


# A rank or a data type the level lacks is fixed by rewriting the layout (the same bytes as other
# axes or another type), so these issues name the Sizes, Strides, Repeats and counts they rewrite.
REWRITES = {"DML301", "DML302"}


def fix_all(document, level: str, rounds: int = 3):
    """Apply every fix of each report together, at most ``rounds`` times; the paths the issues named,
    and the keys renamed (old path, new path), whose values must be found under the new name."""
    paths: set[str] = set()
    renames: list[tuple[tuple, tuple]] = []
    for _ in range(rounds):
        report = dmltile.validate(document, level)
        if report.valid:
            break
        for i in report.issues:
            moved = [e for e in i.fix if e.op == "rename"]
            renames += [(tuple(split_path(e.path)), tuple(split_path(e.path)[:-1]) + (e.to,)) for e in moved]
            if not moved:  # a rename names the key, not its value: the value must stay
                paths.add(i.path)
            # the edits its hint spells out ("...; then set Repeats[0] to 1"): those settling an
            # error the issue's own edit would uncover, named in words though not in the path
            paths |= {
                e.path
                for e in i.fix
                if e.op != "rename" and (i.code in REWRITES or e.path.rsplit(".", 1)[-1] in i.hint)
            }
        document = apply_all(document, report.issues)
    return document, paths, renames


def moved_to(path: tuple, renames: list[tuple[tuple, tuple]]) -> list[tuple]:
    """Where a value of the original is after the renames: its path, and the same path in the
    wrapped form of a tensor that was written bare under a misspelt name (a later rename may name
    the wrapped form, as the document after the earlier fixes has it)."""

    def forms(p: tuple) -> list[tuple]:
        bare_tensor = (
            len(p) > 2 and p[0] == "Desc" and p[1] in ("InputTensor", "OutputTensor") and p[2] != "Desc"
        )
        return [p, (*p[:2], "Desc", *p[2:])] if bare_tensor else [p]

    places = [path]
    for old, new in renames:
        places = [new + p[len(old) :] if p[: len(old)] == old else p for q in places for p in forms(q)]
    return list(dict.fromkeys(p for q in places for p in forms(q)))


def check_all_fixes(original, level: str) -> None:
    fixed, paths, renames = fix_all(original, level)
    report = dmltile.validate(fixed, level)
    assert report.valid or not report.errors, (original, fixed, report.issues)
    after = dict(leaves(wrapped(fixed)))
    for path, value in leaves(wrapped(original)):
        places = moved_to(path, renames)
        if not any(named(p, paths) for p in (path, *places)):
            found = [after[p] for p in places if p in after]
            assert found[:1] == [value], (join_path(list(path)), original, fixed)


@settings(
    max_examples=EXAMPLES_RUN,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    phases=[Phase.generate],
)
@given(data=st.data())
def test_all_fixes_of_a_report_together_make_a_broken_document_valid_and_keep_the_rest(data):
    checked = 0
    while checked < BATCH:  # each example checks BATCH broken documents, so the total is counted
        level = data.draw(st.sampled_from(LEVELS))
        doc = copy.deepcopy(data.draw(valid_documents(level)))
        for kind in data.draw(st.lists(st.sampled_from(sorted(BROKEN)), min_size=1, max_size=2)):
            try:
                tensor = _tensor(doc, data.draw(st.sampled_from(["InputTensor", "OutputTensor"])))
                index = data.draw(st.integers(0, len(tensor["Sizes"]) - 1))
                BROKEN[kind](doc, tensor, index, data.draw)
            except (KeyError, TypeError, IndexError, AttributeError, ValueError):
                pass  # an earlier mutation took away what this one breaks: one broken thing is enough
        errors = dmltile.validate(doc, level).errors
        if (
            not errors
            or any(i.code in UNFIXABLE or not i.fix for i in errors)  # no edit makes it pass here
            or not {"InputTensor", "OutputTensor"} & wrapped(doc)["Desc"].keys()  # nothing to derive from
        ):
            continue
        check_all_fixes(doc, level)
        checked += 1


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("invalid_*.json")), ids=lambda p: p.name)
def test_all_fixes_make_each_invalid_example_valid_keeping_its_data(path):
    level = example_level(path)
    check_all_fixes(json.loads(path.read_text()), level)


def test_two_near_misses_of_one_key_are_not_both_renamed_onto_it():
    # "Size" and "Sizess" both resemble "Sizes": renamed together, the second value would overwrite the
    # first. Unknown keys are settled in order: the first is renamed, the second never onto that key.
    doc = {
        "Repeats": [2, 3],
        "InputTensor": {"DataType": "UINT16", "Sizes": [3, 3]},
        "OutputTensor": {"DataType": "UINT16", "Size": [1], "Sizess": [6, 9]},
    }
    targets = [e.to for i in dmltile.validate(doc, "4.1").issues for e in i.fix if e.op == "rename"]
    assert targets.count("Sizes") == 1
    check_all_fixes(doc, "4.1")
