"""``dmltile validate``: exit statuses, --json against the Python API, directories, the matrix,
and a dozen malformed inputs that must end in one clear line and never a traceback."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import dmltile
from tests.cli_support import DOC_EXAMPLE, EXAMPLES, invoke, json_out, no_traceback, script, without_positions

VALID = sorted(EXAMPLES.glob("valid_*.json")) + [DOC_EXAMPLE]
INVALID = sorted(EXAMPLES.glob("invalid_*.json"))


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_examples_exit_0_at_their_lowest_level(path):
    level = dmltile.min_feature_level(path)
    result = invoke("validate", path, "--feature-level", level.dotted)
    assert result.exit_code == 0, result.stdout
    assert "valid at" in result.stdout


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_examples_exit_1_and_json_equals_the_api_report(path):
    # The examples are named for the rule they break at 1.0 (invalid_fl*) or at every level.
    result = invoke("validate", path, "--feature-level", "1.0", "--json")
    assert result.exit_code == 1
    doc = json_out(result.stdout)
    assert doc["valid"] is False and doc["unreadable"] == []
    assert without_positions(doc["files"][0]["reports"]) == [dmltile.validate(path, "1.0").to_dict()]


def test_doc_example_json_report_from_a_real_subprocess():
    proc = script("validate", DOC_EXAMPLE, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json_out(proc.stdout)  # nothing but one JSON document on stdout
    assert doc["files"][0]["reports"][0] == dmltile.validate(DOC_EXAMPLE).to_dict()
    assert doc["files"][0]["reports"][0]["output_sizes"] == [1, 1, 6, 9]  # the DirectML page's example
    assert doc["feature_levels"] == ["6.4"]


def test_several_files_exit_1_when_any_is_invalid():
    assert invoke("validate", DOC_EXAMPLE, EXAMPLES / "valid_short_form.json").exit_code == 0
    assert invoke("validate", DOC_EXAMPLE, EXAMPLES / "invalid_zero_repeat.json").exit_code == 1


def test_directory_expands_to_its_json_files():
    result = invoke("validate", EXAMPLES, "--json")
    doc = json_out(result.stdout)
    assert [Path(f["file"]).name for f in doc["files"]] == sorted(p.name for p in EXAMPLES.glob("*.json"))
    assert result.exit_code == 1  # the invalid examples are in there


def test_all_levels_json_has_one_report_per_known_level():
    doc = json_out(invoke("validate", EXAMPLES / "invalid_fl3_1_int64.json", "--all-levels", "--json").stdout)
    reports = doc["files"][0]["reports"]
    assert [r["feature_level"] for r in reports] == [lv.dotted for lv in dmltile.known_levels()]
    # INT64 Tile needs 4.1 (DirectML page, tensor support); the example is 2-D, so below 3.1 DML301 too.
    valid_from = [r["feature_level"] for r in reports if r["valid"]]
    assert valid_from[0] == "4.1" and len(valid_from) == len(reports) - 6


def test_all_levels_matrix_rows_files_columns_levels():
    result = invoke(
        "validate", EXAMPLES / "doc_example.json", EXAMPLES / "invalid_fl3_1_int64.json", "--all-levels"
    )
    out = result.stdout
    assert result.exit_code == 1
    assert "doc_example.json" in out and "invalid_fl3_1_int64.json" in out
    # columns where support changes for these files: 1.0-3.0 (DML301+DML302), 3.1-4.0 (DML302), 4.1-6.4 (ok)
    assert "DML301" in out and "DML302" in out and "ok" in out
    for label in ("1.0", "3.1", "4.1", "6.4"):
        assert label in out


def test_all_levels_with_feature_level_is_a_usage_error():
    assert invoke("validate", DOC_EXAMPLE, "--all-levels", "--feature-level", "1.0").exit_code == 2


def test_warning_alone_keeps_exit_0(tmp_path):
    # A TotalTensorSizeInBytes that is not a multiple of 4: DirectML accepts it, DML106 warns.
    desc = dmltile.tile_desc([2, 1], [1, 2]).to_dict()
    desc["Desc"]["OutputTensor"]["Desc"]["TotalTensorSizeInBytes"] = 18
    path = tmp_path / "odd_size.json"
    path.write_text(dmltile.load(desc).to_json())
    result = invoke("validate", path)
    assert result.exit_code == 0 and "DML106" in result.stdout


# -- malformed inputs: exit 2 (unreadable / usage), one clear line, no traceback ------------------
def _write(tmp: Path, name: str, data: bytes) -> Path:
    path = tmp / name
    path.write_bytes(data)
    return path


MALFORMED = {
    "binary": (lambda t: _write(t, "binary.json", bytes(range(256)) * 8), "not JSON"),
    "empty": (lambda t: _write(t, "empty.json", b""), "not JSON"),
    "json_array": (lambda t: _write(t, "array.json", b"[1, 2, 3]"), "array"),
    "json_null": (lambda t: _write(t, "null.json", b"null"), "null"),
    "json_string": (lambda t: _write(t, "string.json", b'"DML_OPERATOR_TILE"'), "string"),
    "truncated": (
        lambda t: _write(t, "truncated.json", b'{"Type": "DML_OPERATOR_TILE", "Desc": {'),
        "not JSON",
    ),
    "nested_10mb_arrays": (
        lambda t: _write(t, "deep.json", b"[" * 5_000_000 + b"]" * 5_000_000),
        "nested too deeply",
    ),
    "nested_10mb_objects": (
        lambda t: _write(t, "deep_obj.json", b'{"a":' * 2_000_000 + b"1" + b"}" * 2_000_000),
        "nested too deeply",
    ),
    "latin1": (lambda t: _write(t, "latin1.json", '{"Type": "Tîle"}'.encode("latin-1")), "not UTF-8"),
    "missing": (lambda t: t / "does_not_exist.json", "no such file"),
    "subdir_named_json": (lambda t: (t / "sub.json").mkdir() or t / "sub.json", None),
    "empty_dir": (lambda t: (t / "emptydir").mkdir() or t / "emptydir", "no *.json"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_input_exits_2_without_traceback(tmp_path, case):
    make, expected = MALFORMED[case]
    path = make(tmp_path)
    proc = script("validate", path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    no_traceback(proc.stdout, proc.stderr)
    assert proc.stderr.strip(), "the reason goes to stderr"
    if expected:
        assert expected in proc.stderr.replace("\n", " ")
    as_json = script("validate", path, "--json")
    assert as_json.returncode == 2
    doc = json_out(as_json.stdout)  # still exactly one JSON document: the one every command gives
    assert doc == {"error": doc["error"], "exit_status": 2} and doc["error"].strip()


def test_directory_with_one_bad_file_among_good_ones(tmp_path):
    for name in ("doc_example.json", "valid_short_form.json"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    (tmp_path / "broken.json").write_text('{"Type": ')
    proc = script("validate", tmp_path, "--json")
    assert proc.returncode == 2
    no_traceback(proc.stdout, proc.stderr)
    doc = json_out(proc.stdout)
    assert [Path(u["file"]).name for u in doc["unreadable"]] == ["broken.json"]
    assert sorted(Path(f["file"]).name for f in doc["files"] if f["valid"]) == [
        "doc_example.json",
        "valid_short_form.json",
    ]


@pytest.mark.skipif(
    os.name == "nt" or os.geteuid() == 0, reason="root (or Windows) reads files whatever their mode"
)
def test_directory_with_an_unreadable_file(tmp_path):
    shutil.copy(DOC_EXAMPLE, tmp_path / "good.json")
    locked = tmp_path / "locked.json"
    shutil.copy(DOC_EXAMPLE, locked)
    locked.chmod(0)
    proc = script("validate", tmp_path)
    assert proc.returncode == 2 and "cannot read" in proc.stderr
    no_traceback(proc.stdout, proc.stderr)


@pytest.mark.parametrize("level", ["9.9", "DML_FEATURE_LEVEL_7_0", "0x1234", "", "one"])
def test_unknown_feature_level_exits_2(level):
    proc = script("validate", DOC_EXAMPLE, "--feature-level", level)
    assert proc.returncode == 2
    no_traceback(proc.stdout, proc.stderr)
    assert "unknown feature level" in proc.stderr and "6.4" in proc.stderr


@pytest.mark.parametrize("spelling", ["3_1", "DML_FEATURE_LEVEL_3_1", "0x3100", "3.1"])
def test_feature_level_spellings(spelling):
    doc = json_out(invoke("validate", DOC_EXAMPLE, "-l", spelling, "--json").stdout)
    assert doc["feature_levels"] == ["3.1"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_directory_with_a_pipe_among_good_files_does_not_hang(tmp_path):
    # a pipe named *.json would block a plain read forever; as root a chmod-0 file stays readable,
    # so the pipe is the unreadable file here
    shutil.copy(DOC_EXAMPLE, tmp_path / "good.json")
    os.mkfifo(tmp_path / "pipe.json")
    proc = script("validate", tmp_path, timeout=30)
    assert proc.returncode == 2 and "not a regular file" in proc.stderr
    no_traceback(proc.stdout, proc.stderr)
    for command in ("explain", "run", "fmt"):
        result = script(command, tmp_path / "pipe.json", timeout=30)
        assert result.returncode == 2 and "not a regular file" in result.stderr, command
