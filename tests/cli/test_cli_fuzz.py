"""No input makes a command crash: random JSON documents and random mutations of the doc example
go through validate, explain, fmt and run in-process (a crash re-raises there), and end in 0, 1 or 2.
Each command sees FUZZ_EXAMPLES mutated doc examples and as many random JSON values per run: a
few hundred in `make test`, thousands in `make fuzz` (DMLTILE_FUZZ_EXAMPLES)."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli_support import DOC_EXAMPLE, EXAMPLES, invoke
from tests.examples_support import example_level

FUZZ_EXAMPLES = int(os.environ.get("DMLTILE_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
FIELD_NAMES = [
    "Type",
    "Desc",
    "InputTensor",
    "OutputTensor",
    "RepeatsCount",
    "Repeats",
    "DataType",
    "Flags",
    "DimensionCount",
    "Sizes",
    "Strides",
    "TotalTensorSizeInBytes",
    "GuaranteedBaseOffsetAlignment",
]
SMALL = st.one_of(
    st.integers(0, 9),
    st.lists(st.integers(0, 9), max_size=9),
    st.none(),
    st.booleans(),
    st.sampled_from(
        [
            "FLOAT32",
            "INT64",
            "BOOL",
            "UINT4",
            "DML_TENSOR_TYPE_INVALID",
            "OWNED_BY_DML",
            "TILE",
            "DML_OPERATOR_ADD",
        ]
    ),
    JSON,
)


def _paths(node, prefix=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield prefix + (key,)
            yield from _paths(value, prefix + (key,))


@st.composite
def mutated_doc_example(draw):
    doc = json.loads(DOC_EXAMPLE.read_text())
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(_paths(doc))))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(SMALL)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(FIELD_NAMES + ["Repeat", "Size"]))] = draw(SMALL)
        if not isinstance(doc, dict) or not any(True for _ in _paths(doc)):
            break
    return doc


def _check_all_commands(tmp_path, doc) -> None:
    path = tmp_path / "fuzz.json"
    path.write_text(json.dumps(doc, allow_nan=True))
    for args in (
        ("validate", path),
        ("validate", path, "--all-levels", "--json"),
        ("explain", path, "-l", "1.0"),
        ("fmt", path),
        ("run", path, "--seed", "0"),
    ):
        result = invoke(*args)  # re-raises any crash
        assert result.exit_code in (0, 1, 2), args
        if "--json" in args:
            json.loads(result.stdout)


@FUZZ
@given(mutated_doc_example())
def test_mutated_doc_example_never_crashes(tmp_path, doc):
    _check_all_commands(tmp_path, doc)


@FUZZ
@given(JSON)
def test_random_json_never_crashes(tmp_path, doc):
    _check_all_commands(tmp_path, doc)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_every_example_is_explained_and_run_with_the_status_its_name_promises(path, tmp_path):
    expected = 1 if path.name.startswith("invalid_") else 0
    level = example_level(path)
    explained = invoke("explain", path, "--feature-level", level)
    assert explained.exit_code == expected and "What Tile does" in explained.stdout
    ran = invoke("run", path, "--feature-level", level, "--output", tmp_path / "y.npy")
    assert ran.exit_code == expected, ran.stdout + ran.stderr
    assert (tmp_path / "y.npy").exists() == (expected == 0)


def test_keys_and_file_names_that_look_like_markup_are_shown_as_they_are(tmp_path):
    # The terminal output is styled with rich, whose markup uses brackets: a document key "[/]" once
    # crashed `explain`, and a file named "a[red]b.json" was listed as "ab.json".
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps({"[/]": None}))
    explained = invoke("explain", doc, "-l", "1.0")
    assert explained.exit_code == 1 and 'unknown field "[/]"' in explained.stdout
    named = tmp_path / "a[red]b.json"
    named.write_text(DOC_EXAMPLE.read_text())
    listed = invoke("validate", named, DOC_EXAMPLE, "--all-levels")
    assert listed.exit_code == 0 and "a[red]b.json" in listed.stdout
    checked = invoke("validate", named)
    assert checked.exit_code == 0 and "a[red]b.json: valid" in checked.stdout
    formatted = invoke("fmt", doc)
    assert formatted.exit_code != 0 and "[/]" in formatted.stderr
    for args, shown in (
        (("run", named, "--output", tmp_path / "y[red].npy"), "y[red].npy"),
        (("run", named, "--output-buffer", tmp_path / "y[red].bin"), "y[red].bin"),
        (("explain", named, "--svg", tmp_path / "y[red].svg"), "y[red].svg"),
        (("export", named, "--dxdispatch", "-o", tmp_path / "y[red].json"), "y[red].json"),
    ):
        done = invoke(*args)
        assert done.exit_code == 0 and shown in done.stdout, (args, done.stdout)
