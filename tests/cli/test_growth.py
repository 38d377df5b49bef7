"""Output bounded by what is shown, whatever the input claims: larger and larger hostile documents
(unknown keys, dimensions, long strings, nesting, huge claimed byte sizes and strides) give output
that stays under 200 KB and does not grow with the input. Output is counted, never timed."""

from __future__ import annotations

import json

import pytest

from tests.cli_support import invoke

BASE = {
    "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 3]},
    "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 6, 9]},
    "Repeats": [1, 1, 3, 3],
}
LIMIT = 200_000


def keys(n: int) -> dict:
    return {**BASE, **{f"k{i}": i for i in range(n)}}


def dims(n: int) -> dict:
    return {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1] * n},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1] * n},
        "Repeats": [1] * n,
    }


def long_string(n: int) -> dict:
    return {**BASE, "Repeats": "x" * n, "Note" + "y" * n: 1}


def nesting(n: int) -> str:
    return json.dumps(BASE)[:-1] + ', "Extra": ' + "[" * n + "0" + "]" * n + "}"


def claim(n: int) -> dict:
    doc = json.loads(json.dumps(BASE))
    doc["InputTensor"].update(Strides=[0, 0, n, 1], TotalTensorSizeInBytes=4 * n + 16)
    doc["OutputTensor"]["TotalTensorSizeInBytes"] = n * 1000
    return doc


GROWERS = {"keys": keys, "dims": dims, "long-string": long_string, "nesting": nesting, "claim": claim}
SIZES = {
    "keys": (100, 10_000),
    "dims": (100, 100_000),
    "long-string": (100, 1_000_000),
    "nesting": (10, 1_000),
    "claim": (1_000, 10**12),
}


@pytest.mark.parametrize("command", [["validate"], ["validate", "--json"], ["explain"]])
@pytest.mark.parametrize("kind", list(GROWERS))
def test_output_stays_flat_as_a_hostile_document_grows(tmp_path, kind, command):
    sizes = []
    for n in SIZES[kind]:
        path = tmp_path / f"{kind}-{n}.json"
        document = GROWERS[kind](n)
        path.write_text(document if isinstance(document, str) else json.dumps(document))
        result = invoke(*command, path)
        assert result.exit_code in (0, 1, 2), result.stderr
        sizes.append(len(result.stdout) + len(result.stderr))
    small, large = sizes
    if kind == "long-string":  # a key is a path, written whole so a fix can name it: output per input byte
        big = len((tmp_path / f"{kind}-{SIZES[kind][1]}.json").read_bytes())
        assert large <= 4 * big, (kind, command, sizes)
        return
    assert large < LIMIT, (kind, command, large)
    assert large <= 2 * small + 4_000, (kind, command, sizes)  # the name of the file and one number grow
