"""One way in: a source is opened once and parsed once, whatever asks for it and at however many levels."""

import json
import os
import shutil
import sys

import pytest
from typer.testing import CliRunner

import dmltile
from dmltile.cli import app
from dmltile.validate import document, source
from tests.cli_support import DOC_EXAMPLE, EXAMPLES, invoke

DXDISPATCH_EXAMPLE = EXAMPLES / "dxdispatch" / "tile_doc_example.json"


@pytest.fixture
def opens(monkeypatch):
    """How often each file was opened (by path), counted at ``os.open``, through which every read
    of a document goes."""
    counts: dict[str, int] = {}
    real_open = os.open

    def counting_open(path, *args, **kwargs):
        counts[os.fsdecode(path)] = counts.get(os.fsdecode(path), 0) + 1
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_open)
    return counts


@pytest.fixture
def reads(monkeypatch):
    """The sources handed to the reader (``read_source``), counted in every module that imports it."""
    calls: list[object] = []
    real_read = source.read_source

    def counting_read(src):
        calls.append(src)
        return real_read(src)

    for module in list(sys.modules.values()):
        if module.__name__.startswith("dmltile") and getattr(module, "read_source", None) is real_read:
            monkeypatch.setattr(module, "read_source", counting_read)
    return calls


@pytest.fixture
def parses(monkeypatch):
    """How many documents were parsed into a model (or into the issues that stop one)."""
    calls: list[object] = []
    real_parse = document.parse_data

    def counting_parse(data):
        calls.append(data)
        return real_parse(data)

    monkeypatch.setattr(document, "parse_data", counting_parse)
    return calls


@pytest.mark.parametrize("example", [DOC_EXAMPLE, DXDISPATCH_EXAMPLE], ids=["descriptor", "dxdispatch"])
def test_the_api_reads_a_file_once(tmp_path, opens, reads, example):
    path = tmp_path / example.name
    shutil.copy(example, path)
    assert dmltile.validate(path).valid
    assert opens[str(path)] == 1 and len(reads) == 1


@pytest.mark.parametrize("example", [DOC_EXAMPLE, DXDISPATCH_EXAMPLE], ids=["descriptor", "dxdispatch"])
def test_validate_all_levels_reads_and_parses_once(tmp_path, opens, reads, parses, example):
    path = tmp_path / example.name
    shutil.copy(example, path)
    result = invoke("validate", path, "--all-levels", "--json")
    reports = json.loads(result.stdout)["files"][0]["reports"]
    assert result.exit_code == 0 and len(reports) == len(dmltile.known_levels())
    assert opens[str(path)] == 1 and len(reads) == 1
    assert len(parses) == 1


def test_a_directory_is_read_once_per_file(tmp_path, opens, reads, parses):
    shutil.copy(DOC_EXAMPLE, tmp_path / "a.json")
    shutil.copy(DXDISPATCH_EXAMPLE, tmp_path / "b.json")
    (tmp_path / "report.json").write_text(json.dumps({"files": [], "feature_levels": []}))
    result = invoke("validate", tmp_path, "--json")
    out = json.loads(result.stdout)
    assert result.exit_code == 0 and len(out["files"]) == 2 and len(out["skipped"]) == 1
    assert [opens[str(tmp_path / name)] for name in ("a.json", "b.json", "report.json")] == [1, 1, 1]
    assert len(reads) == 3 and len(parses) == 2


def test_standard_input_is_read_once_and_judged_at_every_level(reads, parses):
    result = invoke_stdin(DOC_EXAMPLE.read_text(), "validate", "-", "--all-levels", "--json")
    out = json.loads(result.stdout)
    assert result.exit_code == 0 and out["files"][0]["file"] == "<stdin>"
    assert len(out["files"][0]["reports"]) == len(dmltile.known_levels())
    assert len(reads) == 1 and len(parses) == 1


def invoke_stdin(text, *args):
    return CliRunner().invoke(app, list(args), input=text)
