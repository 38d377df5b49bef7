"""What a new user saw go wrong, tried again on the command line: the words ``validate`` prints,
and the file ``validate --fix`` writes (valid, with the user's own values kept).

Other tests check the same behaviours through the Python API (test_hints_keep_data.py); these run
the documents a user wrote through ``dmltile validate`` as the user runs it.
"""

from __future__ import annotations

import json

import pytest

import dmltile
from dmltile.validate.fixes import wrapped
from dmltile.validate.rules.registry import field_description
from dmltile.validate.versions import parse_directml_version

from ..cli_support import DOC_EXAMPLE, invoke


def int8(sizes, **more):
    return {"DataType": "INT8", "Sizes": sizes, **more}


def typed(dtype, sizes, out):
    return {
        "InputTensor": {"DataType": dtype, "Sizes": sizes},
        "OutputTensor": {"DataType": dtype, "Sizes": out},
    }


# (document, level, words the report must say, words it must not, what the fixed file must hold)
CASES = {
    "misspelt-wrapper-keys": (
        {"Input": int8([2, 3]), "Output": int8([4, 9]), "Repeats": [2, 3]},
        "6.4",
        ['did you mean "InputTensor"', 'did you mean "OutputTensor"'],
        ["FLOAT32", "is missing"],
        {"Desc.InputTensor.Desc.DataType": "INT8", "Desc.OutputTensor.Desc.Sizes": [4, 9]},
    ),
    "c-type-name-float": (
        {**typed("float", [2, 3], [4, 9]), "Repeats": [2, 3]},
        "6.4",
        ['did you mean "DML_TENSOR_DATA_TYPE_FLOAT32"'],
        ['did you mean "DML_TENSOR_DATA_TYPE_FLOAT64"'],
        {"Desc.InputTensor.Desc.DataType": "DML_TENSOR_DATA_TYPE_FLOAT32"},
    ),
    "int64-at-1.0": (
        {**typed("INT64", [1, 1, 2, 3], [1, 1, 4, 9]), "Repeats": [1, 1, 2, 3]},
        "1.0",
        ["InputTensor: read the INT64 data as FLOAT32 pairs: Sizes [1,1,2,6], same bytes"],
        ["UINT32"],
        {
            "Desc.InputTensor.Desc.DataType": "DML_TENSOR_DATA_TYPE_FLOAT32",
            "Desc.InputTensor.Desc.Sizes": [1, 1, 2, 6],
        },
    ),
    "repeats-shorter-than-repeats-count": (
        {**typed("FLOAT32", [1, 1, 2, 3], [1, 1, 6, 9]), "Repeats": [1, 3, 3], "RepeatsCount": 4},
        "6.4",
        ["DML202"],
        ["DML205"],
        {"Desc.Repeats": [1, 1, 3, 3], "Desc.OutputTensor.Desc.Sizes": [1, 1, 6, 9]},
    ),
    "output-of-lower-rank": (
        {**typed("FLOAT32", [2, 3, 1], [6, 9]), "Repeats": [3, 3, 1]},
        "6.4",
        ["DML204"],
        ["Repeats[0]"],
        {"Desc.Repeats": [3, 3, 1], "Desc.OutputTensor.Desc.Sizes": [6, 9, 1]},
    ),
    "input-and-output-swapped": (
        {**typed("FLOAT32", [6, 9], [2, 3]), "Repeats": [3, 3]},
        "6.4",
        ["swapped"],
        ["[18, 27]", "to 18", "to 27"],  # not the output grown to fit the swapped input
        {"Desc.InputTensor.Desc.Sizes": [2, 3], "Desc.OutputTensor.Desc.Sizes": [6, 9]},
    ),
    "size-below-the-minimum": (
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3], "TotalTensorSizeInBytes": 22},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
            "Repeats": [2, 3],
        },
        "6.4",
        ["DML105"],
        ["DML106", "accepts the descriptor"],
        {"Desc.InputTensor.Desc.TotalTensorSizeInBytes": 24},
    ),
    "repeats-count-left-out": (
        {**typed("FLOAT32", [2, 3], [4, 9]), "Repeats": [3]},
        "6.4",
        ["DML201"],
        ["RepeatsCount is"],
        {"Desc.Repeats": [2, 3]},
    ),
    "strides-packed": (
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3], "Strides": "packed"},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
            "Repeats": [2, 3],
        },
        "6.4",
        ["null (or leave it out) for packed"],
        ["e.g. null"],
        {"Desc.InputTensor.Desc.Strides": None},
    ),
    "zero-sizes-are-not-a-swap": (
        {**typed("INT32", [0], [0]), "Repeats": [2]},
        "6.4",
        ["DML104"],
        ["swapped"],
        {"Desc.InputTensor.Desc.Sizes": [1], "Desc.OutputTensor.Desc.Sizes": [2]},
    ),
}


def value_at(document, path: str):
    for step in path.split("."):
        document = document[step]
    return document


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_report_says_the_cause_and_fix_writes_a_valid_file_keeping_the_users_values(name, tmp_path):
    document, level, says, never, holds = CASES[name]
    target = tmp_path / "t.json"
    target.write_text(json.dumps(document, indent=2) + "\n")
    report = invoke("validate", target, "-l", level)
    assert report.exit_code == 1
    assert all(w in report.stdout for w in says), report.stdout
    assert not any(w in report.stdout for w in never), report.stdout
    assert invoke("validate", target, "-l", level, "--fix").exit_code == 0
    fixed = json.loads(target.read_text())
    assert dmltile.validate(fixed, level).valid
    for path, value in holds.items():
        assert value_at(wrapped(fixed), path) == value, (path, fixed)


def test_a_later_level_is_one_the_pinned_directml_cannot_reach_named_with_a_version_that_can(tmp_path):
    target = tmp_path / "t.json"
    target.write_text(json.dumps({**typed("FLOAT64", [2, 3], [4, 9]), "Repeats": [2, 3]}))
    out = invoke("validate", target, "--directml", "1.5.1").stdout
    assert "use DML_FEATURE_LEVEL_4_1 or later (DirectML 1.7.0 or newer)" in out, out
    assert parse_directml_version("1.5.1").max_feature_level < dmltile.parse_feature_level("4.1")
    assert parse_directml_version("1.7.0").max_feature_level >= dmltile.parse_feature_level("4.1")


def test_explain_describes_size_and_alignment_with_the_rules_own_limits():
    flat = " ".join(invoke("explain", DOC_EXAMPLE).stdout.split())  # piped text wraps between words
    size, alignment = (
        field_description(f) for f in ("TotalTensorSizeInBytes", "GuaranteedBaseOffsetAlignment")
    )
    assert " ".join(size.split()) in flat and " ".join(alignment.split()) in flat
    assert "dmltile warns otherwise" in size  # DML106 is a warning: not a requirement
    assert "power of two of at least 16" in alignment and "element size" not in alignment  # DML107
