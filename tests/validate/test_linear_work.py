"""Work linear in the input at every entry point that reads, suggests, guesses or judges: the time at
twice the input is at most LINEAR (2.5) times the time at the input, for the inputs that used to cost
their square (a comment stripper restarting at every quote, difflib over a whole enum value, a
backtracking regex over runs of spaces). Ratios on one machine, never an absolute time."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.cli.checker import FixScope, fix_files
from dmltile.teach.exercises import check_exercise, said_byte_count, said_numbers
from dmltile.validate.levels import newest_level
from dmltile.validate.paths import split_path
from dmltile.validate.rules import RULES
from dmltile.validate.source import strip_jsonc
from dmltile.validate.splice import splice
from tests.cli_support import DOC_EXAMPLE
from tests.growth_support import LINEAR, growth

DOC = json.loads(DOC_EXAMPLE.read_text())


def with_data_type(value: str) -> str:
    doc = json.loads(json.dumps(DOC))
    doc["Desc"]["InputTensor"]["Desc"]["DataType"] = value
    return json.dumps(doc)


def with_unknown_keys(n: int) -> str:
    doc = json.loads(json.dumps(DOC))
    doc["Desc"].update({f"k{i}": i for i in range(n)})
    return json.dumps(doc)


READERS = {
    # Invalid JSON of escaped quotes in an unclosed string: the old stripper retried at each quote.
    "escaped-quotes": (lambda n: '{"a": "' + '\\"' * n, 200_000),
    "unclosed-comments": (lambda n: '{"a": 1} ' + "/* x " * n, 100_000),
    "comments": (lambda n: "// a\n/* b */\n" * n + json.dumps(DOC), 20_000),
    "trailing-commas": (lambda n: '{"a": [' + "1, " * n + "]}", 50_000),
}


@pytest.mark.parametrize("kind", list(READERS))
def test_reading_is_linear(kind):
    make, n = READERS[kind]
    assert growth(dmltile.validate, make, n) <= LINEAR


def test_stripping_comments_is_linear():
    assert growth(strip_jsonc, lambda n: '"\\"' + ' "\\" /* */ ' * n, 50_000) <= LINEAR


@pytest.mark.parametrize(
    "make",
    [
        lambda n: with_data_type("A" * n),  # "did you mean" over a huge enum value
        lambda n: with_data_type("DML_TENSOR_DATA_TYPE_FLOAT" + "3" * n),
        lambda n: json.dumps({**DOC, "T" + "y" * n + "pe": 1}),  # over a huge unknown key
    ],
    ids=["enum-value", "enum-prefix", "unknown-key"],
)
def test_suggesting_is_linear(make):
    assert growth(dmltile.validate, make, 100_000) <= LINEAR


@pytest.mark.parametrize("exercise", ["predict", "padding"])
@pytest.mark.parametrize(
    "make",
    [lambda n: "1" + " " * n + "x", lambda n: "[1" + ", 1" * n + " x", lambda n: "1" + " " * n + "bytes!"],
    ids=["spaces", "list", "unit"],
)
def test_guessing_is_linear(exercise, make):
    assert growth(lambda guess: check_exercise(exercise, None, guess), make, 100_000) <= LINEAR


def test_judging_many_unknown_keys_is_linear():
    assert growth(dmltile.validate, with_unknown_keys, 20_000) <= LINEAR


def every_other_key_removed(n: int) -> tuple[str, dict]:
    # Long values: a text many times longer than its members are many, whose copy per change shows.
    doc = {f"k{i}": "v" * 1000 for i in range(n)}
    return json.dumps(doc, indent=2), {k: v for k, v in list(doc.items())[::2]}


def test_splicing_many_changes_is_linear():
    """Each change made in one pass over the text (the text was copied whole for each change)."""
    assert growth(lambda made: splice(*made), every_other_key_removed, 2_000) <= LINEAR


def test_fixing_many_unknown_keys_is_linear(tmp_path):
    """``--diff`` (``--fix`` without the write): judging, fixing and splicing the fixed document into
    the text of a document of many unknown keys."""

    def written(n: int) -> str:
        path = tmp_path / f"{n}.json"
        path.write_text(json.dumps(json.loads(with_unknown_keys(n)), indent=2))
        return str(path)

    said: list[str] = []
    every = FixScope(frozenset(RULES), unsafe=True)  # removing an unknown key is an unsafe fix
    fix = lambda f: fix_files([f], newest_level(), write=False, say=said.append, scope=every)  # noqa: E731
    assert growth(fix, written, 2_000) <= LINEAR
    assert said and '-    "k0": 0,' in said[0]


def test_reading_a_path_is_linear():
    assert growth(split_path, lambda n: "Desc" + '["Repeats[0]"]' * n, 50_000) <= LINEAR


# The regexes the guesses were read with, quadratic on long runs of spaces but exact on short text:
# the reference the tokenizers must agree with.
OLD_LIST = re.compile(r"\s*[\[(]?\s*(-?\d+(?:\s*[,\s]\s*-?\d+)*)\s*[\])]?\s*")
OLD_BYTES = re.compile(r"\s*(\d+)\s*(?:bytes?|B)?\s*", re.IGNORECASE)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=" \t,[]()-0129xbyteBS", max_size=14))
def test_the_guess_tokenizers_read_what_the_regexes_read(guess):
    listed = OLD_LIST.fullmatch(guess)
    assert said_numbers(guess) == ([int(t) for t in re.split(r"[\s,]+", listed.group(1))] if listed else None)
    count = OLD_BYTES.fullmatch(guess)
    assert said_byte_count(guess) == (int(count.group(1)) if count else None)
