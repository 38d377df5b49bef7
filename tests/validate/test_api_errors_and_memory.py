"""The Python API raises only dmltile.errors, naming the argument and the value; memory stays near the
document's size; long lists in messages are capped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.errors import ArgumentError, DmlTileError
from tests.cli_support import DOC_EXAMPLE, invoke

DESC = dmltile.load(DOC_EXAMPLE)
DOC = json.loads(DOC_EXAMPLE.read_text())

junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.lists(
        st.one_of(st.integers(-5, 2**70), st.floats(), st.text(max_size=3), st.none(), st.booleans()),
        max_size=5,
    ),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=3),
)
edits = st.lists(
    st.builds(
        dmltile.Edit,
        op=st.sampled_from(["set", "rename", "remove"]),
        keys=st.lists(
            st.one_of(st.sampled_from(["Desc", "InputTensor", "Sizes", "x"]), st.integers(0, 5)), max_size=5
        ),
        value=st.integers(),
        to=st.sampled_from(["Sizes", "y"]),
    ),
    max_size=3,
)

CALLS = {
    "map_index": lambda a, b: dmltile.map_index(DESC if a is DOC else a, b),
    "input_index": dmltile.input_index,
    "tile_output_sizes": dmltile.tile_output_sizes,
    "apply_fix": lambda a, b: dmltile.apply_fix(a, b),
}


@pytest.mark.parametrize("name", list(CALLS))
@settings(max_examples=150, deadline=None)
@given(first=st.one_of(junk, st.just(DOC)), second=st.one_of(junk, edits))
def test_the_api_raises_only_dmltile_errors(name, first, second):
    try:
        CALLS[name](first, second)
    except DmlTileError as e:
        assert str(e)
    # any other exception fails the test: it is not one of dmltile's


@pytest.mark.parametrize(
    "call,words",
    [
        (lambda: dmltile.map_index(DESC, [0, 0, 0, float("inf")]), "output_index[3] is inf"),
        (lambda: dmltile.map_index(None, [0]), "desc must be an OperatorDesc"),
        (lambda: dmltile.input_index([1, 2], [0, 3]), "input_sizes[0] is 0"),
        (lambda: dmltile.tile_output_sizes(["a"], [1]), "input_sizes[0] is 'a'"),
        (lambda: dmltile.tile_output_sizes([2], [1.5]), "repeats[0] is 1.5"),
        (lambda: dmltile.apply_fix([], []), "document must be"),
        (lambda: dmltile.apply_fix({}, [dmltile.Edit(op="remove", path="Desc.Q")]), "remove Desc.Q"),
    ],
)
def test_each_error_names_the_argument_and_value(call, words):
    with pytest.raises(ArgumentError, match=words.replace("[", r"\[").replace("(", r"\(")):
        call()


def test_the_results_are_what_they_were_for_good_arguments():
    assert dmltile.tile_output_sizes([2, 3], [4, 5]) == (8, 15)
    assert dmltile.input_index([5, 7], [2, 3]) == (1, 1)
    assert dmltile.map_index(DESC, [0, 0, 5, 8]).input_index == (0, 0, 1, 2)


def test_cli_seed_below_zero_is_a_usage_error_not_an_internal_one():
    result = invoke("run", DOC_EXAMPLE, "--seed", "-1")
    assert result.exit_code == 2 and "internal error" not in result.output


PEAK = """
import json, sys
import dmltile
doc = json.loads(open(sys.argv[1]).read())
doc["Desc"].update({f"k{i}": i for i in range(200_000)})
text = json.dumps(doc)
del doc
report = dmltile.validate(text)
assert not report.valid and report.issues[-1].message.startswith("... and")
# VmHWM is this process's own peak: ru_maxrss keeps the peak of the process it was forked from
# (a test runner of a gigabyte), since the kernel carries it across exec.
hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(int(hwm.split()[1]) // 1024)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/status")
def test_200000_unknown_keys_are_judged_in_under_150_mb():
    """The whole process, interpreter and imports included (about 50 MB of it): the 4 MB document
    once as text and once as data, never a deep copy or an error object per key."""
    out = subprocess.run(
        [sys.executable, "-c", PEAK, str(DOC_EXAMPLE)], capture_output=True, text=True, check=True
    )
    assert int(out.stdout) < 150, out.stdout


# The peak of one command run as this process's only child (a test's own children would mix in).
CHILD_PEAK = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], capture_output=True, check=False)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux")
def test_200000_unknown_keys_are_fixed_in_under_150_mb(tmp_path):
    """``validate --fix`` (the installed command, its whole process) on the 4 MB document: the text,
    the document as read and as fixed, and where each of its values is in the text, never a copy
    per fix or per change; the real fields kept, the listed unknown keys removed."""
    doc = json.loads(DOC_EXAMPLE.read_text())
    doc["Desc"].update({f"k{i}": i for i in range(200_000)})
    path = tmp_path / "many.json"
    path.write_text(json.dumps(doc, indent=2))
    command = [
        str(Path(sys.executable).with_name("dmltile")),
        "validate",
        "--fix",
        "--unsafe-fixes",
        str(path),
    ]
    out = subprocess.run(
        [sys.executable, "-c", CHILD_PEAK, *command], capture_output=True, text=True, check=True
    )
    assert int(out.stdout) < 150, out.stdout
    fixed = json.loads(path.read_text())
    assert "k0" not in fixed["Desc"] and "k199999" in fixed["Desc"]
    assert {k: fixed["Desc"][k] for k in ("InputTensor", "OutputTensor", "Repeats")} == {
        k: DOC["Desc"][k] for k in ("InputTensor", "OutputTensor", "Repeats")
    }


def test_a_model_of_many_other_dispatchables_names_a_few_and_counts_the_rest():
    model = {
        "resources": {},
        "dispatchables": {
            f"d{i}": {"type": "DML_OPERATOR_ELEMENT_WISE_IDENTITY", "desc": {}} for i in range(5000)
        },
        "commands": [],
    }
    issue = dmltile.validate(model).issues[0]
    assert issue.code == "DML207" and "'d7'" in issue.message and "'d8'" not in issue.message
    assert "and 4992 more" in issue.message and len(issue.message) < 1000
    many = {**model, "dispatchables": {f"t{i}": {"type": "DML_OPERATOR_TILE", "desc": {}} for i in range(50)}}
    with pytest.raises(dmltile.DescriptorError, match="50 Tile dispatchables .* and 42 more"):
        dmltile.load(many)


def test_explain_of_sizes_past_numpys_index_range_is_a_verdict_not_an_internal_error(tmp_path):
    """Three sizes of 2^32-1 with two strides: validate says invalid (exit 1), and so must explain,
    whose picture numbers the elements past what a NumPy index holds."""
    doc = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [4294967295] * 3, "Strides": [1, 1]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4294967295] * 3},
        "Repeats": [1, 1, 1],
    }
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc))
    for command in ("validate", "explain"):
        result = invoke(command, path)
        assert result.exit_code == 1 and "internal error" not in result.output, command
