"""``compile(desc, backend="directml")`` and ``dmltile run --backend directml``: the exact descriptor
on the real DirectML.dll. The live tests need ``make directml`` and run with the other live ones
(``make directml-live``); the refusal without a set-up runs everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import dmltile
from dmltile.cli import app
from dmltile.execute.directml import oracle

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
live = pytest.mark.directml_live
needs_setup = pytest.mark.skipif(
    oracle.find_setup() is None, reason=f"DirectML set-up absent: {oracle.setup_problem()}"
)


def test_without_a_set_up_the_backend_names_the_command_that_installs_it(tmp_path, monkeypatch):
    monkeypatch.setenv("DMLTILE_DIRECTML_HOME", str(tmp_path / "nothing-here"))
    with pytest.raises(dmltile.UnsupportedError, match="dmltile directml setup"):
        dmltile.compile(EXAMPLES / "doc_example.json", backend="directml")


@live
@needs_setup
def test_the_doc_example_runs_on_real_directml():
    op = dmltile.compile(EXAMPLES / "doc_example.json", backend="directml")
    assert op.provider.startswith("DirectML 1.15.4 (level 6.4")
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 2, 3)
    assert np.array_equal(op(x), np.tile(x, (1, 1, 3, 3)))


@live
@needs_setup
def test_padded_strided_buffers_match_the_numpy_backend_byte_for_byte():
    # Output rows padded to a pitch of 8 elements and a float16 NaN payload in the input: DirectML
    # leaves the padding bytes alone and copies the payload bit-exactly, as the NumPy backend does.
    desc = dmltile.tile_desc([2, 3], [2, 2], "FLOAT16").to_dict()
    out = desc["Desc"]["OutputTensor"]["Desc"]
    out.update(Strides=[8, 1], TotalTensorSizeInBytes=2 * (3 * 8 + 6))
    x = np.array([[1, -0.0, 2], [np.inf, 3, 4]], np.float16)
    x.view(np.uint16)[1, 1] = 0x7D55  # a signalling NaN with a payload
    buffers = []
    for backend in ("numpy", "directml"):
        op = dmltile.compile(desc, backend=backend)
        y = bytearray([0xAB]) * out["TotalTensorSizeInBytes"]
        op.run_buffers(x.tobytes(), y)
        buffers.append(bytes(y))
    assert buffers[0] == buffers[1]


@live
@needs_setup
def test_run_backend_directml_prints_the_tiled_output_and_names_the_version():
    result = CliRunner().invoke(app, ["run", str(EXAMPLES / "doc_example.json"), "--backend", "directml"])
    assert result.exit_code == 0, result.output
    assert "DirectML 1.15.4" in result.output
    args = ["run", str(EXAMPLES / "doc_example.json"), "--backend", "directml", "--json", "--seed", "3"]
    doc = json.loads(CliRunner().invoke(app, args).stdout)
    numpy_doc = json.loads(CliRunner().invoke(app, args[:2] + ["--json", "--seed", "3"]).stdout)
    assert doc["directml_version"] == "1.15.4" and doc["output"] == numpy_doc["output"]


@live
@needs_setup
def test_an_older_directml_runs_and_judges_as_it_does():
    # DirectML 1.9.1 (max level 5.0): the level follows from the version, and the DLL is that one.
    op = dmltile.compile(EXAMPLES / "doc_example.json", backend="directml", directml="1.9.1")
    assert op.provider.startswith("DirectML 1.9.1 (level 5.0")


def test_directml_versions_lists_the_measured_table_with_what_is_installed():
    result = CliRunner().invoke(app, ["directml", "versions", "--json"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    rows = {r["directml"]: r for r in doc["versions"]}
    assert rows["1.15.4"]["max_feature_level"] == "6.4" and rows["1.9.1"]["max_feature_level"] == "5.0"
    assert rows["1.0.2006.1020"]["max_feature_level"] == "2.1"
    assert (
        rows["1.7.0"]["max_feature_level"] == "4.1"
        and rows["1.7.0"]["wheel"] == "tensorflow-directml==1.15.5"
    )
    assert all(r["executes_here"] for r in rows.values())  # DirectML <= 1.7 through the runner's cabinet.dll
    installed = oracle.find_setup() is not None
    assert rows["1.15.4"]["installed"] == installed and (doc["setup_problem"] is None) == installed
