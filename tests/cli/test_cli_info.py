"""``dmltile levels``, ``rules``, ``doctor``: checked against the DirectML page and the machine."""

from __future__ import annotations

import platform
import sys

import numpy as np
import pytest

import dmltile
from tests.cli_support import PAGE_ROWS, invoke, json_out, script

# The rule codes the project promises, written out independently of dmltile.RULES.
CONTRACT_CODES = (  # the codes of the contract, plus the DxDispatch-model codes
    [f"DML00{i}" for i in range(1, 6)]
    + [f"DML1{i:02d}" for i in range(1, 13)]
    + [f"DML20{i}" for i in range(1, 9)]
    + ["DML301", "DML302", "DML303", "DML304", "DML305", "DML306"]
    + ["DML401", "DML402"]  # DxDispatch models
    + [f"DML50{i}" for i in range(1, 9)]  # onnxruntime's DirectML EP (dmltile check)
)


def test_levels_json_rows_are_the_directml_page_rows():
    proc = script("levels", "--json")
    assert proc.returncode == 0
    doc = json_out(proc.stdout)
    rows = [
        (r["feature_level"], set(r["InputTensor"]["dimension_counts"]), set(r["InputTensor"]["data_types"]))
        for r in doc["rows"]
    ]
    assert rows == PAGE_ROWS
    assert all(r["OutputTensor"] == r["InputTensor"] for r in doc["rows"])
    assert (
        doc["known_levels"][0] == "1.0"
        and doc["known_levels"][-1] == "6.4"
        and len(doc["known_levels"]) == 15
    )


def test_levels_table_names_every_row():
    out = invoke("levels").stdout
    for level in (
        "DML_FEATURE_LEVEL_1_0",
        "DML_FEATURE_LEVEL_2_1",
        "DML_FEATURE_LEVEL_3_1",
        "DML_FEATURE_LEVEL_4_1",
    ):
        assert level in out
    assert "1 to 8" in out and "UINT64" in out


def test_rules_lists_every_design_code_with_rule_and_source():
    doc = json_out(invoke("rules", "--json").stdout)["rules"]
    assert [r["code"] for r in doc] == CONTRACT_CODES
    assert all(r["rule"] and r["source"] for r in doc)
    assert {r["code"] for r in doc if r["severity"] == "warning"} == {
        "DML106",
        "DML111",
        "DML112",
        "DML208",
        "DML304",
        "DML306",
        "DML402",
    } | {f"DML50{i}" for i in range(1, 9)}
    provider = [r for r in doc if r["code"].startswith("DML5")]
    assert all(r["phase"] == "provider" and "microsoft/onnxruntime" in r["source"] for r in provider)
    out = invoke("rules").stdout
    for code in CONTRACT_CODES:
        assert code in out


def test_doctor_reports_this_machine():
    report = dmltile.doctor_report()
    assert report["python"]["version"] == platform.python_version()
    assert report["numpy"] == np.__version__
    assert report["os"]["system"] == platform.system()
    try:
        import onnxruntime as ort
    except ImportError:
        assert report["onnxruntime"]["version"] is None
    else:
        assert report["onnxruntime"]["version"] == ort.__version__
        assert report["onnxruntime"]["providers"] == ort.get_available_providers()
    if sys.platform != "win32":
        provider = report["directml"]["onnxruntime_provider"]
        assert not provider["usable"] and "runs only on Windows" in provider["reason"]


def test_doctor_reports_the_directml_runner_and_the_versions_set_up():
    """The runner that ``run --backend directml`` uses, not only onnxruntime's provider: where it is
    set up the versions are those the oracle lists, and DirectML is usable on any OS."""
    from dmltile.execute.directml import oracle

    dml = dmltile.doctor_report()["directml"]
    runner = dml["runner"]
    assert runner["usable"] == (oracle.setup_problem() is None and bool(oracle.list_versions()))
    if runner["usable"]:
        assert [v["directml"] for v in runner["versions"]] == [
            r["directml_version"] for r in oracle.list_versions()
        ]
        assert dml["usable"] and "run --backend directml runs DirectML" in dml["reason"]
        assert runner["versions"][0]["directml"] in invoke("doctor").stdout
    else:
        assert runner["problem"] and runner["problem"] in dml["reason"]


def test_doctor_without_a_runner_says_what_is_missing_and_how_to_set_it_up(tmp_path, monkeypatch):
    monkeypatch.setenv("DMLTILE_DIRECTML_HOME", str(tmp_path))
    dml = dmltile.doctor_report()["directml"]
    assert not dml["runner"]["usable"] and dml["runner"]["versions"] == []
    assert str(tmp_path) in dml["reason"] and "dmltile directml setup" in dml["reason"]


def test_doctor_cli_json_and_table():
    proc = script("doctor", "--json")
    assert proc.returncode == 0
    doc = json_out(proc.stdout)
    assert doc["numpy"] == np.__version__ and "usable" in doc["directml"]
    out = invoke("doctor").stdout
    assert "DirectML" in out and platform.python_version() in out


def test_every_command_has_help_with_an_example():
    for command in ("validate", "explain", "run", "new", "fmt", "schema", "levels", "rules", "doctor"):
        result = invoke(command, "--help")
        assert result.exit_code == 0 and f"Example: dmltile {command}" in result.stdout, command


@pytest.mark.skipif(sys.platform == "win32", reason="checks the non-Windows answer")
def test_doctor_says_why_no_adapters_are_listed_off_windows():
    adapters = dmltile.doctor_report()["gpu_adapters"]
    assert adapters["names"] == [] and "Windows only" in adapters["reason"]
    assert "GPU adapters" in invoke("doctor").stdout


@pytest.mark.directml
@pytest.mark.skipif(
    sys.platform != "win32", reason="GPU adapters are listed through Windows' WMI; this is not Windows"
)
def test_doctor_lists_the_windows_adapters():
    adapters = dmltile.doctor_report()["gpu_adapters"]
    assert adapters["names"], adapters["reason"]  # a runner without a GPU still has a basic display adapter


def test_the_directml_probe_runs_a_real_tile_or_names_what_is_missing():
    from dmltile.execute.doctor import _dml_session_works

    usable, reason = _dml_session_works()
    if "DmlExecutionProvider" in dmltile.backend_info()["providers"]:
        assert usable, reason
    else:
        assert not usable and "DmlExecutionProvider" in reason and "CPUExecutionProvider" in reason


def test_levels_say_which_rows_a_measured_dll_stands_behind():
    """Level 1.0 (and 2.0) shipped only inside Windows: its row is the documentation's alone. Every other
    row has a measured DLL whose max level falls under it, and every measured DLL stands behind one row."""
    doc = json_out(script("levels", "--json").stdout)
    measured = {r["feature_level"]: r["measured_by"] for r in doc["rows"]}
    assert measured["1.0"] == []
    assert "1.0.2006.1020" in measured["2.1"] and "1.5.1" in measured["3.1"] and "1.7.0" in measured["4.1"]
    every = [v for versions in measured.values() for v in versions]
    assert sorted(every) == sorted(v["directml"] for v in doc["directml_versions"])
    text = script("levels", columns=1000).stdout  # each row on one line
    assert "no DLL: the documentation only" in text and "1.7.0" in text


def test_rules_piped_wrap_to_columns_without_the_sources_details():
    """Piped, the list wraps to $COLUMNS, every rule's code listed, with the head of its source (not
    the quotes and commits of a 1,300-character source); ``rules CODE`` gives the whole source,
    wrapped too (its example JSON stays one line, to copy)."""
    from dmltile.validate.rules import all_rules

    for columns in (60, 100):
        out = script("rules", columns=columns).stdout
        assert max(len(line) for line in out.splitlines()) <= columns
        assert all(r.code in out for r in all_rules())
    out = script("rules", columns=1000).stdout  # wide enough for each row on one line
    longest = max(all_rules(), key=lambda r: len(r.source))
    assert len(longest.source) > 1000 and longest.source not in out
    assert longest.source.split(" (")[0] in out
    assert all(r.rule in out for r in all_rules())
    one = script("rules", longest.code).stdout
    assert " ".join(longest.source.split()) in " ".join(one.split())
    assert max(len(line) for line in one.splitlines() if not line.startswith("{")) <= 100
