"""Every fix, applied, satisfies the rule it names and makes no new error.

The fixes are computed from the document at hand; these tests apply them to the shipped invalid
examples and to a few hundred descriptors broken at random, and validate again.
"""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.validate.fixes import apply_fix
from tests.examples_support import EXAMPLES, example_level

# issues no edit of the document can fix: not a document, an unknown level, a DxDispatch-only rule
UNFIXABLE = {"DML001", "DML303", "DML401", "DML402"}


def errors(report) -> set[tuple[str, str]]:
    return {(i.code, i.path) for i in report.issues if i.severity == "error"}


def check_every_fix(document, level: str) -> int:
    """Apply each issue's fix; its rule passes at its path and no error appears that was not there."""
    report = dmltile.validate(document, level)
    before = errors(report)
    # several rules on one field: their fixes give that field one value, not two
    values: dict[str, list] = {}
    for issue in report.issues:
        for edit in issue.fix:
            if edit.op == "set" and edit.path == issue.path:
                values.setdefault(issue.path, []).append(edit.value)
    assert all(len({json.dumps(v) for v in vs}) == 1 for vs in values.values()), values
    applied = 0
    for issue in report.issues:
        if not issue.fix:
            continue
        fixed = apply_fix(document, issue)
        after_report = dmltile.validate(fixed, level)
        after = errors(after_report)
        assert (issue.code, issue.path) not in after, (issue, fixed)
        assert after <= before - {(issue.code, issue.path)}, (issue, after - before, fixed)
        applied += 1
    return applied


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("invalid_*.json")), ids=lambda p: p.name)
def test_every_fix_of_every_invalid_example_fixes_what_it_names(path):
    level = example_level(path)
    document = json.loads(path.read_text())
    report = dmltile.validate(document, level)
    assert all(i.fix for i in report.errors if i.code not in UNFIXABLE), report
    assert check_every_fix(document, level) >= 1


def test_applying_every_fix_in_turn_makes_each_example_valid():
    for path in sorted(EXAMPLES.glob("invalid_*.json")):
        level = example_level(path)
        document = json.loads(path.read_text())
        for _ in range(10):
            report = dmltile.validate(document, level)
            fixable = [i for i in report.errors if i.fix]
            if not fixable:
                break
            document = apply_fix(document, fixable[0])
        assert dmltile.validate(document, level).valid, path.name


# -- the examples quoted in the issue -----------------------------------------------------------
def test_missing_output_sizes_get_the_sizes_this_file_needs():
    doc = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [5, 7]},
        "OutputTensor": {"DataType": "FLOAT32"},
        "Repeats": [2, 1],
    }
    (issue,) = dmltile.validate(doc).issues
    assert issue.code == "DML002" and "[10, 7]" in issue.hint
    assert dmltile.validate(apply_fix(doc, issue)).valid


def test_a_misspelt_repeats_is_one_issue_a_rename_that_keeps_its_values():
    doc = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [5, 7]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [10, 7]},
        "Repeat": [2, 1],
    }
    issues = {i.code: i for i in dmltile.validate(doc).issues}
    assert set(issues) == {"DML003"}  # not also "Repeats is missing": the rename supplies it
    assert 'did you mean "Repeats"' in issues["DML003"].hint
    assert dmltile.validate(apply_fix(doc, issues["DML003"])).valid


def test_one_size_field_breaking_two_rules_gets_one_value():
    doc = dmltile.tile_desc([1, 1, 2, 3], [1, 1, 3, 3]).to_dict()
    doc["Desc"]["OutputTensor"]["Desc"]["TotalTensorSizeInBytes"] = 54
    issues = dmltile.validate(doc).issues
    assert {i.code for i in issues} == {"DML105"}  # DML106's "DirectML accepts it" would contradict it
    for issue in issues:
        assert "216" in issue.hint and "56" not in issue.hint
        assert dmltile.validate(apply_fix(doc, issue)).valid


def test_int64_below_4_1_is_told_to_use_uint32_pairs_not_int32():
    (issue, *_) = dmltile.validate(EXAMPLES / "invalid_fl3_1_int64.json", "3.1").issues
    assert "as UINT32 pairs" in issue.hint and "INT32" not in issue.hint.replace("UINT32", "")
    fixed = apply_fix(json.loads((EXAMPLES / "invalid_fl3_1_int64.json").read_text()), issue)
    assert dmltile.validate(fixed, "3.1").valid
    assert fixed["Desc"]["InputTensor"]["Desc"]["Sizes"][-1] == 2


@pytest.mark.parametrize(
    ("where", "value", "meant"),
    [
        (("Type",), "DML_OPERATOR_TILES", "DML_OPERATOR_TILE"),
        (("Desc", "InputTensor", "Desc", "Flags"), "DML_TENSOR_FLAGS_NONE", "DML_TENSOR_FLAG_NONE"),
        (("Desc", "InputTensor", "Desc", "DataType"), "float16", "DML_TENSOR_DATA_TYPE_FLOAT16"),
        (
            ("Desc", "InputTensor", "Desc", "DataType"),
            "DML_TENSOR_DATA_TYPE_FP16",
            "DML_TENSOR_DATA_TYPE_FLOAT16",
        ),
        (("Desc", "InputTensor", "Type"), "DML_TENSOR_TYPE_BUFER", "DML_TENSOR_TYPE_BUFFER"),
    ],
)
def test_enum_typos_get_did_you_mean(where, value, meant):
    doc = dmltile.tile_desc([1, 1, 2, 3], [1, 1, 3, 3], dtype="FLOAT16").to_dict()
    target = doc
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    issue = next(i for i in dmltile.validate(doc).issues if i.code == "DML005")
    assert f'did you mean "{meant}"' in issue.hint
    for never in ("UNKNOWN", "UINT4", "INT4", "ELEMENT_WISE"):
        assert never not in issue.hint
    assert dmltile.validate(apply_fix(doc, issue)).valid


def test_data_types_offered_are_those_tile_takes_at_the_level():
    doc = dmltile.tile_desc([1, 1, 2, 3], [1, 1, 3, 3]).to_dict()
    doc["Desc"]["InputTensor"]["Desc"]["DataType"] = "QUUX"
    (issue, *_) = dmltile.validate(doc, "1.0").issues
    assert (
        "FLOAT32, FLOAT16 (" in issue.hint
        and "DML_FEATURE_LEVEL_1_0" in issue.hint
        and "INT8" not in issue.hint
    )


@pytest.mark.parametrize(
    "dtype", [np.float32, np.dtype("float32"), "float32", "FLOAT32", "DML_TENSOR_DATA_TYPE_FLOAT32"]
)
def test_tile_desc_takes_numpy_dtypes_and_their_names(dtype):
    assert dmltile.tile_desc([2, 3], [2, 1], dtype=dtype).input.data_type == dmltile.DataType.FLOAT32


# -- a few hundred descriptors broken at random -------------------------------------------------
TYPES = ["FLOAT32", "FLOAT16", "INT32", "UINT8", "INT64", "UINT16"]


@st.composite
def valid_documents(draw, level):
    """A descriptor valid at ``level``, so every error after a mutation comes from the mutation."""
    row = dmltile.tile_support(dmltile.parse_feature_level(level)).tensors["InputTensor"]
    rank = draw(st.sampled_from(sorted(d for d in row.dimension_counts if d <= 6)))
    sizes = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    repeats = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    dtype = draw(st.sampled_from([t for t in TYPES if dmltile.DataType[t] in row.data_types]))
    strides = None
    if draw(st.booleans()):
        strides = list(dmltile.core.tensor.packed_strides(sizes))
        strides = [s * draw(st.integers(1, 2)) for s in strides]
    doc = dmltile.tile_desc(sizes, repeats, dtype=dtype, strides=strides).to_dict()
    if draw(st.booleans()):  # the short form: optional fields left out, no wrappers
        d = doc["Desc"]
        short = {k: d[k] for k in ("Repeats",)}
        for name in ("InputTensor", "OutputTensor"):
            t = d[name]["Desc"]
            short[name] = {
                "DataType": t["DataType"].removeprefix("DML_TENSOR_DATA_TYPE_"),
                "Sizes": t["Sizes"],
            }
            if t["Strides"] is not None:
                short[name]["Strides"] = t["Strides"]
        doc = short
    return doc


def _tensor(doc, name):
    return doc["Desc"][name]["Desc"] if "Desc" in doc else doc[name]


def _desc(doc):
    return doc["Desc"] if "Desc" in doc else doc


def _misspell_key(doc, tensor, i, draw):
    key = draw(st.sampled_from(["Sizes", "DataType"]))
    tensor[draw(st.sampled_from([key.lower(), key[:-1], key + "s"]))] = tensor.pop(key)


def _small_total(doc, tensor, i, draw):
    tensor["TotalTensorSizeInBytes"] = draw(st.integers(0, 3)) * 4
    if tensor["TotalTensorSizeInBytes"] >= dmltile.calc_buffer_tensor_size(
        tensor["DataType"], tensor["Sizes"], tensor.get("Strides")
    ):
        tensor["TotalTensorSizeInBytes"] = 1


def _output_dtype(doc, tensor, i, draw):
    out = _tensor(doc, "OutputTensor")
    out["DataType"] = "INT8" if out["DataType"] not in ("INT8", "DML_TENSOR_DATA_TYPE_INT8") else "UINT16"


def _operator_typo(doc, tensor, i, draw):
    if "Desc" in doc:
        doc["Type"] = draw(st.sampled_from(["DML_OPERATOR_TILES", "TILE_", "tile"]))
    else:
        doc["Type"] = "DML_OPERATOR_TIL"


def _tensor_type_typo(doc, tensor, i, draw):
    if "Desc" in doc:
        doc["Desc"]["InputTensor"]["Type"] = draw(
            st.sampled_from(["DML_TENSOR_TYPE_BUFER", "buffer", "TENSOR"])
        )
    else:
        _desc(doc)["InputTensor"]["Type"] = "BUFFERS"


def _set(where, key, value):
    """A mutation setting ``key`` of the tensor (``where`` "tensor"), the Desc or the output to ``value(draw)``."""

    def mutate_one(doc, tensor, i, draw):
        target = {"tensor": tensor, "desc": _desc(doc), "output": _tensor(doc, "OutputTensor")}[where]
        target[key] = value(draw)

    return mutate_one


def _set_item(key, value):
    """A mutation setting element ``i`` of the tensor's Sizes (or the Repeats) to ``value(draw)``."""

    def mutate_one(doc, tensor, i, draw):
        (tensor["Sizes"] if key == "Sizes" else _desc(doc)["Repeats"])[i] = value(draw)

    return mutate_one


def _delete(where, key):
    def mutate_one(doc, tensor, i, draw):
        del {"tensor": tensor, "desc": _desc(doc)}[where][key if key else draw(st.sampled_from(TENSOR_NAMES))]

    return mutate_one


def _wrong_output_size(doc, tensor, i, draw):
    _tensor(doc, "OutputTensor")["Sizes"][i] += draw(st.integers(1, 3))


def _extra_key(doc, tensor, i, draw):
    tensor[draw(st.sampled_from(["Stride", "Size", "Foo", "datatype"]))] = [1]


TENSOR_NAMES = ["InputTensor", "OutputTensor"]
DTYPE_TYPOS = ["float16", "FP32", "DML_TENSOR_DATA_TYPE_FLOAT23", "int8", "BOOL", "HALF", "QUUX"]
# Each way to break a valid document: (document, one of its tensors, an axis index, draw) -> None.
MUTATIONS = {
    "delete_sizes": _delete("tensor", "Sizes"),
    "delete_repeats": _delete("desc", "Repeats"),
    "delete_datatype": _delete("tensor", "DataType"),
    "misspell_key": _misspell_key,
    "zero_size": _set_item("Sizes", lambda draw: 0),
    "zero_repeat": _set_item("Repeats", lambda draw: 0),
    "wrong_output_size": _wrong_output_size,
    "small_total": _small_total,
    "odd_total": _set(
        "tensor",
        "TotalTensorSizeInBytes",
        lambda draw: draw(st.integers(0, 400)) * 4 + draw(st.integers(1, 3)),
    ),
    "dtype_typo": _set("tensor", "DataType", lambda draw: draw(st.sampled_from(DTYPE_TYPOS))),
    "negative": _set_item("Sizes", lambda draw: -1),
    "bool_size": _set_item("Sizes", lambda draw: True),
    "dimension_count": lambda doc, tensor, i, draw: tensor.update(
        DimensionCount=len(tensor["Sizes"]) + draw(st.integers(1, 2))
    ),
    "repeats_count": lambda doc, tensor, i, draw: _desc(doc).update(
        RepeatsCount=len(tensor["Sizes"]) + draw(st.integers(1, 2))
    ),
    "strides_length": lambda doc, tensor, i, draw: tensor.update(Strides=[1] * (len(tensor["Sizes"]) + 1)),
    "owned_output": _set("output", "Flags", lambda draw: "DML_TENSOR_FLAG_OWNED_BY_DML"),
    "output_dtype": _output_dtype,
    "alignment": _set(
        "tensor", "GuaranteedBaseOffsetAlignment", lambda draw: draw(st.sampled_from([3, 6, 24, 1]))
    ),
    "flags_typo": _set(
        "tensor", "Flags", lambda draw: draw(st.sampled_from(["DML_TENSOR_FLAGS_NONE", "NONEE", "none"]))
    ),
    "operator_typo": _operator_typo,
    "extra_key": _extra_key,
    "string_repeats": _set("desc", "Repeats", lambda draw: "1,2"),
    "delete_tensor": _delete("desc", None),
    "extra_output_dim": lambda doc, tensor, i, draw: _tensor(doc, "OutputTensor").update(
        Sizes=[1, *_tensor(doc, "OutputTensor")["Sizes"]]
    ),
    "tensor_type_typo": _tensor_type_typo,
    "sizes_string": _set("tensor", "Sizes", lambda draw: "2,3"),
}


def mutate(doc, kind, draw):
    """A copy of ``doc`` broken in one way (``kind``, a key of MUTATIONS) on a tensor and axis drawn."""
    doc = copy.deepcopy(doc)
    tensor = _tensor(doc, draw(st.sampled_from(TENSOR_NAMES)))
    i = draw(st.integers(0, len(tensor["Sizes"]) - 1))
    MUTATIONS[kind](doc, tensor, i, draw)
    return doc


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_fix_of_a_randomly_broken_descriptor_fixes_what_it_names(data):
    level = data.draw(st.sampled_from(["1.0", "2.1", "3.1", "4.1", "6.4"]))
    doc = data.draw(valid_documents(level))
    assert dmltile.validate(doc, level).valid
    doc = mutate(doc, data.draw(st.sampled_from(sorted(MUTATIONS))), data.draw)
    report = dmltile.validate(doc, level)
    unfixed = [i for i in report.errors if not i.fix and i.code not in UNFIXABLE]
    # the only errors without a fix: a rank the level cannot take that no axis can be dropped from
    assert all(i.code in ("DML301", "DML302") for i in unfixed), unfixed
    check_every_fix(doc, level)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_fix_for_a_level_that_lacks_the_rank_or_type_fixes_what_it_names(data):
    doc = data.draw(valid_documents("6.4"))
    level = data.draw(st.sampled_from(["1.0", "2.1", "3.1"]))
    check_every_fix(doc, level)
    fixed = doc
    for _ in range(4):  # every fixable error in turn: what remains has no edit that could fix it
        fixable = [i for i in dmltile.validate(fixed, level).errors if i.fix]
        if not fixable:
            break
        fixed = apply_fix(fixed, fixable[0])
    assert all(i.code in ("DML301", "DML302") for i in dmltile.validate(fixed, level).errors)
