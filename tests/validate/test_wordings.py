"""The document's JSON Schema carries the rules' limits, and the smaller wordings say what is true."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

import dmltile
from dmltile.teach.explain import explain
from dmltile.teach.render import render, to_text
from dmltile.validate.rules import RULES, all_rules
from dmltile.validate.schema import document_schema
from tests.cli_support import invoke

BOUNDED = [r for r in all_rules() if r.bounds] + [RULES["DML004"]]


@pytest.mark.parametrize("rule", BOUNDED, ids=lambda r: r.code)
def test_the_schema_rejects_what_the_validator_rejects_on_the_rules_own_examples(rule):
    document = rule.example.document
    assert rule.code in dmltile.validate(document).codes
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, document_schema())


def test_the_schema_bounds_come_from_the_rules_and_titles_are_the_c_names():
    buffer = document_schema()["$defs"]["BufferTensorDesc"]["properties"]
    assert (
        buffer["Sizes"]["items"]["minimum"] == 1 and buffer["TotalTensorSizeInBytes"]["maximum"] == 2**64 - 1
    )
    assert buffer["TotalTensorSizeInBytes"]["title"] == "TotalTensorSizeInBytes"
    repeats = document_schema()["$defs"]["TileOperatorDesc"]["properties"]["Repeats"]
    assert repeats["items"]["minimum"] == 1
    valid = dmltile.tile_desc([2, 3], [2, 2]).to_dict()
    jsonschema.validate(valid, document_schema())  # what is valid stays valid
    huge = json.loads(json.dumps(valid))
    huge["Desc"]["InputTensor"]["Desc"]["TotalTensorSizeInBytes"] = 2**64
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(huge, document_schema())


def dml109_document():
    return {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
        "OutputTensor": {
            "DataType": "FLOAT32",
            "Sizes": [4, 9],
            "Strides": [9, 0],
            "TotalTensorSizeInBytes": 144,
        },
        "Repeats": [2, 3],
    }


def test_explain_of_strides_directml_rejects_says_so_and_no_race():
    ex = explain(dml109_document())
    text = " ".join(to_text(render(ex)).split())  # the sentences, whatever the wrapping
    assert "DML109" in ex.report.codes
    assert "DirectML rejects these strides (DML109)" in text and "(marked ?)" in text
    assert "race:" not in text and "another DirectML version or GPU" not in text and "mores" not in text


def test_dml109_message_agrees_in_number():
    document = dml109_document()
    document["OutputTensor"]["Strides"] = [3, 1]
    (issue,) = [i for i in dmltile.validate(document).issues if i.code == "DML109"]
    assert "these strides map several" in issue.message


def test_a_whole_number_written_as_a_float_is_not_called_a_fraction():
    document = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3.0]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},
        "Repeats": [2, 3],
    }
    (issue,) = dmltile.validate(document).issues
    assert (
        "only whole numbers" not in issue.message
        and "3.0 is a whole number written as a float; write 3" in issue.message
    )


def test_new_dtype_reads_names_as_a_documents_datatype_does():
    result = invoke("new", "--sizes", "2,3", "--repeats", "2,2", "--dtype", "float16")
    assert result.exit_code == 2 and 'did you mean "DML_TENSOR_DATA_TYPE_FLOAT16"' in result.output
    assert invoke("new", "--sizes", "2,3", "--repeats", "2,2", "--dtype", "FLOAT16").exit_code == 0


@pytest.mark.parametrize("args", [["directml", "--help"], ["directml", "setup", "--help"]])
def test_directml_help_shows_no_python_types(args):
    out = invoke(*args).output
    assert "<bool>" not in out and "<list[str]>" not in out and "[[" not in out


# -- a count and its noun agree, in every rule's words -------------------------------------------------
def _tile(ins, reps, outs=None, **input_fields):
    outs = outs or [s * r for s, r in zip(ins, reps, strict=True)]
    return {
        "InputTensor": {"DataType": "UINT8", "Sizes": ins, **input_fields},
        "OutputTensor": {"DataType": "UINT8", "Sizes": outs},
        "Repeats": reps,
    }


@pytest.mark.parametrize(
    "document, level, code, says, never",
    [
        # 2 * (2^31 + 1) wraps to 2: the output holds one whole copy of the 2-element input
        (
            _tile([1, 1, 1, 2], [1, 1, 1, 2**31 + 1], [1, 1, 1, 2]),
            "6.4",
            "DML208",
            "(1 whole copy of",
            "copies of",
        ),
        # 3 * 2863311531 wraps to 1: one element, the first of the first copy
        (
            _tile([1, 1, 1, 3], [1, 1, 1, 2863311531], [1, 1, 1, 1]),
            "6.4",
            "DML208",
            "holds 1 element along axis 3, element j copying input element j mod 3 (0 whole copies of the "
            "input and its first 1 element)",
            "1 elements",
        ),
        (_tile([3], [2], DimensionCount=2), "6.4", "DML102", "Sizes [3] has 1 value", "1 values"),
        (_tile([3], [2], Strides=[1, 1]), "6.4", "DML103", "has 2 values, but Sizes has 1 value", "1 values"),
        (
            _tile([2, 3], [2, 3], Strides=[1]),
            "6.4",
            "DML103",
            "has 1 value, but Sizes has 2 values",
            "1 values",
        ),
        (
            {**_tile([3], [2]), "Repeats": [2, 2]},
            "6.4",
            "DML201",
            "but the input has 1 dimension",
            "1 dimensions",
        ),
        ({**_tile([2, 3], [2, 3]), "Repeats": [2]}, "6.4", "DML201", "Repeats [2] has 1 value", "1 values"),
        (
            _tile([2, 3], [2, 3], [4]),
            "6.4",
            "DML204",
            "OutputTensor has 1 dimension (Sizes [4])",
            "1 dimensions",
        ),
        (_tile([3], [2]), "2.1", "DML301", "InputTensor has 1 dimension;", "1 dimensions"),
        (_tile([1, 2, 3], [1, 2, 3]), "2.1", "DML301", "with 1 leading 1 to make it 4-D", "1 leading 1s"),
    ],
    ids=[
        "208-one-copy",
        "208-one-element",
        "102",
        "103-one-size",
        "103-one-stride",
        "201-rank",
        "201-values",
        "204",
        "301-rank",
        "301-pad",
    ],
)
def test_a_count_and_its_noun_agree(document, level, code, says, never):
    report = dmltile.validate(document, level)
    words = [f"{i.message} {i.hint}" for i in report.issues if i.code == code]
    assert words and any(says in w for w in words), words
    assert not any(never in w for w in words), words


def test_no_rules_words_put_a_bare_count_before_a_counted_noun():
    # A count renders through ``{n:noun}``, which agrees in number; a bare ``{n} values`` reads "1 values".
    bare = re.compile(r"\{\w+\} (values|dimensions|elements|bytes|copies|repeats|strides|leading 1s)\b")
    found = [
        (r.code, case, m.group(0))
        for r in all_rules()
        for case, w in r.words.items()
        for m in bare.finditer(w.message + " | " + w.hint)
    ]
    assert not found
