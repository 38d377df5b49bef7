"""``dmltile schema``: the JSON Schema accepts every valid example and every spelling ``load`` accepts."""

from __future__ import annotations

import json

import pytest

import dmltile
from tests.cli_support import DOC_EXAMPLE, EXAMPLES, invoke

jsonschema = pytest.importorskip("jsonschema")


def _schema():
    result = invoke("schema")
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("valid_*.json")) + [DOC_EXAMPLE], ids=lambda p: p.name)
def test_every_valid_example_matches_the_schema(path):
    _schema().validate(json.loads(path.read_text()))


@pytest.mark.parametrize(
    "name",
    [
        "invalid_unknown_field.json",
        "invalid_missing_sizes.json",
        "invalid_negative_size.json",
        "invalid_bool_data_type.json",
    ],
)
def test_structurally_broken_examples_fail_the_schema(name):
    assert not _schema().is_valid(json.loads((EXAMPLES / name).read_text()))


def test_schema_accepts_every_spelling_load_accepts():
    doc = {
        "Type": 70,
        "Desc": {
            "InputTensor": {"Type": "BUFFER", "DataType": 1, "Sizes": [2, 3]},
            "OutputTensor": {"DataType": "DML_TENSOR_DATA_TYPE_FLOAT32", "Sizes": [4, 3]},
            "Repeats": [2, 1],
        },
    }
    assert dmltile.validate(doc).valid
    _schema().validate(doc)
