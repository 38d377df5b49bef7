"""``dmltile new``, ``fmt`` and ``schema``: round trips at every level, canonical form, JSON Schema."""

from __future__ import annotations

import json

import pytest

import dmltile
from tests.cli_support import (
    DOC_EXAMPLE,
    EXAMPLES,
    LEVELS,
    invoke,
    json_out,
    no_traceback,
    page_accepts,
    script,
    without_positions,
)

CASES = [
    (2, "FLOAT32"),
    (4, "FLOAT16"),
    (4, "INT8"),
    (5, "UINT16"),
    (3, "INT64"),
    (4, "UINT64"),
    (8, "INT32"),
    (1, "FLOAT64"),
]


@pytest.mark.parametrize("level", LEVELS)
def test_new_then_validate_round_trip_at_every_level(tmp_path, level):
    for dims, dtype in CASES:
        sizes = ",".join(str(2 + k % 2) for k in range(dims))
        repeats = ",".join(str(1 + k % 3) for k in range(dims))
        made = invoke(
            "new", "--sizes", sizes, "--repeats", repeats, "--dtype", dtype, "--feature-level", level
        )
        want = 0 if page_accepts(level, dims, dtype) else 1
        assert made.exit_code == want, (level, dims, dtype, made.stderr)
        path = tmp_path / f"{dims}_{dtype}.json"
        path.write_text(made.stdout)
        checked = invoke("validate", path, "--feature-level", level, "--json")
        assert checked.exit_code == want, (level, dims, dtype)
        (report,) = without_positions(json_out(checked.stdout)["files"][0]["reports"])
        assert report == dmltile.validate(path, level).to_dict()
        assert report["output_sizes"] == [
            int(s) * int(r) for s, r in zip(sizes.split(","), repeats.split(","), strict=False)
        ]


def test_new_through_the_installed_script(tmp_path):
    proc = script("new", "--sizes", "1,1,2,3", "--repeats", "1,1,3,3", "--dtype", "FLOAT16")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    # Hand-computed: 6 FLOAT16 = 12 bytes in; 54 = 108 bytes out (both multiples of 4).
    assert doc["Desc"]["InputTensor"]["Desc"]["TotalTensorSizeInBytes"] == 12
    assert doc["Desc"]["OutputTensor"]["Desc"]["TotalTensorSizeInBytes"] == 108
    assert doc["Desc"]["OutputTensor"]["Desc"]["Sizes"] == [1, 1, 6, 9]
    (tmp_path / "d.json").write_text(proc.stdout)
    assert script("validate", tmp_path / "d.json", "--feature-level", "1.0").returncode == 0


def test_new_doc_example_equals_the_shipped_file():
    result = invoke("new", "--sizes", "1,1,2,3", "--repeats", "1,1,3,3")
    assert json.loads(result.stdout) == json.loads(DOC_EXAMPLE.read_text())


def test_new_with_strides_computes_the_strided_byte_size():
    result = invoke("new", "--sizes", "2,3", "--repeats", "2,2", "--strides", "4,1")
    doc = json.loads(result.stdout)
    # last element at (2-1)*4 + (3-1)*1 = 6 -> 7 FLOAT32 = 28 bytes
    assert doc["Desc"]["InputTensor"]["Desc"]["Strides"] == [4, 1]
    assert doc["Desc"]["InputTensor"]["Desc"]["TotalTensorSizeInBytes"] == 28


@pytest.mark.parametrize(
    "args",
    [
        ["--sizes", "1,a,3", "--repeats", "1,1,1"],
        ["--sizes", "", "--repeats", "1"],
        ["--sizes", "-1,2", "--repeats", "1,1"],
        ["--sizes", "1,2", "--repeats", "1"],
        ["--sizes", "2,3", "--repeats", "2,2", "--strides", "1"],
        ["--sizes", "2,3", "--repeats", "2,2", "--dtype", "BOOL"],
        ["--sizes", "4294967295,1", "--repeats", "2,1"],
        ["--sizes", "99999999999999999999", "--repeats", "1"],
        ["--sizes", "2,3", "--repeats", "2,2", "--feature-level", "0.5"],
        ["--repeats", "2,2"],
    ],
)
def test_new_bad_options_exit_2_with_one_line(args):
    proc = script("new", *args)
    assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
    no_traceback(proc.stdout, proc.stderr)
    assert proc.stdout == ""


def test_new_zero_repeat_prints_but_exits_1():
    result = invoke("new", "--sizes", "2,3", "--repeats", "0,1")
    assert result.exit_code == 1 and "DML203" in result.stderr
    assert json.loads(result.stdout)["Desc"]["Repeats"] == [0, 1]


def test_fmt_short_form_gives_the_canonical_doc_example():
    # valid_short_form.json is the DirectML page's example with every defaultable field left out.
    result = invoke("fmt", EXAMPLES / "valid_short_form.json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == json.loads(DOC_EXAMPLE.read_text())


def test_fmt_is_idempotent_and_in_place(tmp_path):
    path = tmp_path / "d.json"
    path.write_text((EXAMPLES / "valid_short_form.json").read_text())
    assert invoke("fmt", path, "--in-place").exit_code == 0
    once = path.read_text()
    assert invoke("fmt", path).stdout == once
    assert json.loads(once) == json.loads(DOC_EXAMPLE.read_text())


def test_fmt_keeps_what_is_wrong_and_reports_what_cannot_be_read(tmp_path):
    # a wrong output size is content, not structure: fmt writes it as it is
    out = json.loads(invoke("fmt", EXAMPLES / "invalid_output_sizes.json").stdout)
    assert out["Desc"]["OutputTensor"]["Desc"]["Sizes"][3] == 8
    missing = invoke("fmt", EXAMPLES / "invalid_missing_sizes.json")
    assert missing.exit_code == 1 and "DML002" in missing.stderr
    (tmp_path / "x.json").write_text("not json")
    assert invoke("fmt", tmp_path / "x.json").exit_code == 2
    assert invoke("fmt", tmp_path / "missing.json").exit_code == 2
