"""Every command with every combination of its flags under ``--json``: stdout is one JSON document
that validates against the schema the package ships for the command (or, for a usage error, the
error schema), and every human line went to stderr."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from dmltile.cli.report_schemas import report_schema
from dmltile.execute.compare import compared_with
from dmltile.execute.directml import oracle

from ..cli_support import DOC_EXAMPLE, EXAMPLES, invoke, tile_model_file

INVALID = EXAMPLES / "invalid_output_sizes.json"
SARIF_SCHEMA = json.loads((Path(__file__).parent / "sarif-schema-2.1.0.json").read_text())
DIRECTML = oracle.setup_problem() is None


def conforms(stdout: str, schema: str, status: int) -> dict:
    document = json.loads(stdout)  # exactly one JSON document, nothing printed around it
    name = "error" if status == 2 else schema
    jsonschema.validate(document, report_schema(name), cls=jsonschema.Draft202012Validator)
    return document


def combinations(flags: list[list[str]], most: int = 2) -> list[list[str]]:
    """The flag sets: none, each one, and each pair (each flag a list of words)."""
    out: list[list[str]] = []
    for n in range(most + 1):
        for chosen in itertools.combinations(flags, n):
            out.append([w for flag in chosen for w in flag])
    return out


VALIDATE_FLAGS = [
    ["--all-levels"],
    ["-l", "3.1"],
    ["--directml", "1.9.1"],
    ["--select", "DML2"],
    ["--ignore", "DML205"],
    ["--warnings-as-errors"],
    ["--diff"],  # the diff goes to stderr under --json
    ["--fix"],  # what changed goes to stderr under --json (on a copy of the files)
    ["--format", "json"],
    ["--format", "sarif"],  # stdout is the SARIF log alone, or a usage error beside --json
    ["--format", "github"],  # not JSON: a usage error beside --json
]
RUN_FLAGS = [
    ["--seed", "1"],
    ["--output-buffer", "{tmp}/out.bin"],
    ["--poison-padding"],
    ["--compare"],
    ["--backend", "onnxruntime"],
    ["--output", "{tmp}/y.npy"],
    ["-l", "3.1"],
    ["--directml", "1.9.1"],
    ["--input", "{tmp}/x.npy"],  # the example's input shape and type (written by ``inputs``)
    ["--input-buffer", "{tmp}/in.bin"],
]
# --backend directml runs the real DirectML.dll (seconds a run): test_compare_compares_the_backend_
# named_and_says_which runs it under --json; check --observe runs onnxruntime-directml the same way
# (tests/directml/test_ort_directml_live.py).


def _run(args: list[str], schema: str, tmp_path) -> tuple[int, dict]:
    words = [str(a).format(tmp=tmp_path) for a in args]
    result = invoke(*words, "--json", "--force") if words[0] == "run" else invoke(*words, "--json")
    assert result.exit_code in (0, 1, 2), (words, result.stdout, result.stderr)
    return result.exit_code, conforms(result.stdout, schema, result.exit_code)


@pytest.mark.parametrize("source", [DOC_EXAMPLE, INVALID, EXAMPLES], ids=["valid", "invalid", "directory"])
@pytest.mark.parametrize("flags", combinations(VALIDATE_FLAGS), ids=" ".join)
def test_validate(source, flags, tmp_path):
    copy = tmp_path / "files" / source.name  # --fix writes the files it checks
    if source.is_dir():
        shutil.copytree(source, copy)
    else:
        copy.parent.mkdir()
        shutil.copy(source, copy)
    formats = [flags[n + 1] for n, word in enumerate(flags) if word == "--format"]
    if formats[-1:] in ([], ["json"]):  # the last --format given is the one in effect
        _run(["validate", copy, *flags], "validate", tmp_path)
        return
    result = invoke("validate", copy, *flags, "--json")
    assert result.exit_code == 2, result.stdout  # --json and a CI format: choose one
    conforms(result.stdout, "error", 2)
    if formats[-1] == "sarif":  # alone, stdout is the SARIF log and only that
        alone = invoke("validate", copy, *flags)
        assert alone.exit_code in (0, 1), alone.stdout
        jsonschema.validate(json.loads(alone.stdout), SARIF_SCHEMA, cls=jsonschema.Draft4Validator)


@pytest.fixture
def inputs(tmp_path):
    """The input files RUN_FLAGS name: the examples' input, FLOAT32 [1, 1, 2, 3], as .npy and raw bytes."""
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 2, 3)
    np.save(tmp_path / "x.npy", x)
    (tmp_path / "in.bin").write_bytes(x.tobytes())


@pytest.mark.parametrize("source", [DOC_EXAMPLE, INVALID], ids=["valid", "invalid"])
@pytest.mark.parametrize("flags", combinations(RUN_FLAGS), ids=" ".join)
def test_run(source, flags, tmp_path, inputs):
    _run(["run", source, *flags], "run", tmp_path)


@pytest.mark.parametrize("args", [["levels"], ["rules"], ["rules", "DML205"], ["doctor"]], ids=" ".join)
def test_info(args, tmp_path):
    _run(args, args[0], tmp_path)


@pytest.fixture
def tile_model(tmp_path):
    path = tile_model_file(tmp_path)
    return path


CHECK_FLAGS = [
    ["--all-levels"],
    ["-l", "5.0"],
    ["--steps"],
    ["--dim", "n=4"],  # the model has no symbolic dimension: a usage error, as one JSON document
    ["--input", "x=2,3"],
    ["--repeats", "t=1,2"],
]


@pytest.mark.parametrize("flags", combinations(CHECK_FLAGS, 3), ids=" ".join)
def test_check(tile_model, flags, tmp_path):
    status, document = _run(["check", tile_model, *flags], "check", tmp_path)
    if status != 2 and "--all-levels" in flags:
        assert document["feature_levels"][0] == "1.0" and all("levels" in n for n in document["nodes"])


@pytest.mark.parametrize(
    "flags", combinations([["--resource", "output"], ["--resource", "other"]]), ids=" ".join
)
@pytest.mark.parametrize("printed", ["identical", "different", "nothing"])
def test_compare_dxdispatch(flags, printed, tmp_path):
    expected = tmp_path / "tile.expected.npy"
    exported = invoke("export", DOC_EXAMPLE, "--dxdispatch", "-o", tmp_path / "tile.json", "--expect")
    assert exported.exit_code == 0, exported.stdout
    values = ", ".join(str(int(v)) for v in np.load(expected))
    text = {
        "identical": values,
        "different": values.replace("4", "7", 1),
        "nothing": "",
    }[printed]
    out = tmp_path / "out.txt"
    out.write_text(f"Resource 'output': {text}\n" if text else "nothing printed\n")
    result = invoke("compare-dxdispatch", out, expected, *flags, "--json")
    status = result.exit_code
    # its schema holds its unreadable-input document too ("identical": null, the error)
    jsonschema.validate(
        json.loads(result.stdout), report_schema("compare-dxdispatch"), cls=jsonschema.Draft202012Validator
    )
    resource = ([w for w in flags if w != "--resource"] or ["output"])[-1]
    assert (
        status == {"identical": 0, "different": 1, "nothing": 2}[printed]
        if resource == "output"
        else status == 2
    )


# -- run --compare compares what it says it compares -------------------------------------------------
@pytest.mark.parametrize("backend", [None, "numpy", "onnxruntime", "directml"])
def test_compare_compares_the_backend_named_and_says_which(backend, tmp_path):
    if backend == "directml" and not DIRECTML:
        pytest.skip(f"the DirectML runner is not set up: {oracle.setup_problem()}")
    named = ["--backend", backend] if backend else []
    status, document = _run(["run", DOC_EXAMPLE, "--compare", *named], "run", tmp_path)
    expected = compared_with(backend or "numpy")
    assert expected == (
        backend if backend not in (None, "numpy") else "directml" if DIRECTML else "onnxruntime"
    )
    assert status == 0 and document["compare"]["backends"] == ["numpy", expected]
    assert document["compare"]["identical"] is True
    text = invoke("run", DOC_EXAMPLE, "--compare", *named)
    assert f"numpy and {expected}" in text.stdout


def test_run_json_with_an_output_buffer_prints_only_json_and_the_buffer_line_on_stderr(tmp_path):
    out = tmp_path / "out.bin"
    result = invoke("run", DOC_EXAMPLE, "--json", "--output-buffer", out)
    assert result.exit_code == 0
    document = conforms(result.stdout, "run", 0)  # no "output buffer: ..." line before the JSON
    assert "output buffer:" in result.stderr and "output buffer:" not in result.stdout
    assert np.array_equal(
        np.frombuffer(out.read_bytes(), np.float32)[: len(document["output"])], document["output"]
    )
