"""The DirectML driver without Wine: it loads without dmltile, and its C view of a descriptor is the
one dmltile's models give (defaults, wrapping, sizes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import dmltile
from dmltile.execute.directml import oracle

from .generate_cases import load_oracle

STANDALONE = Path(oracle.__file__).with_name("standalone.py")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_standalone_driver_imports_nothing_of_dmltile_numpy_or_pydantic(tmp_path):
    code = (
        "import importlib.util, json, sys\n"
        f"spec = importlib.util.spec_from_file_location('standalone', {str(STANDALONE)!r})\n"
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
        "oracle = module.load()\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('dmltile', 'numpy', 'pydantic')]\n"
        "print(json.dumps([oracle.__name__, loaded]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    name, loaded = json.loads(out.stdout)
    assert name.endswith("execute.directml.oracle") and loaded == []


def test_the_standalone_command_line_answers_without_a_set_up(tmp_path):
    env = {"DMLTILE_DIRECTML_HOME": str(tmp_path / "none"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, str(STANDALONE), "problem"], capture_output=True, text=True, env=env, check=True
    )
    assert "dmltile directml setup" in out.stdout


BARE = {
    "InputTensor": {"DataType": "UINT8", "Sizes": [1, 3], "Strides": [0, 1]},
    "OutputTensor": {"Type": "DML_TENSOR_TYPE_BUFFER", "Desc": {"DataType": 5, "Sizes": [2, 3]}},
    "Repeats": [2, 1],
}


@pytest.mark.parametrize(
    "document", [BARE, EXAMPLES / "valid_strided_padded_input.json"], ids=["bare", "file"]
)
def test_the_c_view_is_dmltiles_canonical_document(document):
    if isinstance(document, Path):
        document = json.loads(document.read_text())
    canonical = dmltile.load(document).to_dict()["Desc"]
    for driver in (oracle, load_oracle()):  # in the package and loaded standalone
        view = driver.to_c_view(document)
        assert view["OperatorType"] == 70 and view["Repeats"] == list(canonical["Repeats"])
        assert view["RepeatsCount"] == canonical["RepeatsCount"]
        for name in ("InputTensor", "OutputTensor"):
            ours = canonical[name]["Desc"]
            assert view[name]["Type"] == 1
            assert view[name]["DataType"] == dmltile.DataType.parse(ours["DataType"]).value
            for key in ("DimensionCount", "Sizes", "Strides", "TotalTensorSizeInBytes"):
                assert view[name][key] == ours[key], (name, key)


@pytest.mark.parametrize(
    "bad,message",
    [
        ({**BARE, "Repeats": [2**32, 1]}, "Repeats\\[0\\] = 4294967296 does not fit a UINT"),
        ({**BARE, "InputTensor": {"DataType": "BOOL", "Sizes": [1]}}, "InputTensor.DataType: unknown value"),
        ({**BARE, "OutputTensor": [1]}, "InputTensor and OutputTensor must be objects"),
        ([1], "the descriptor must be"),
    ],
)
def test_what_c_structs_cannot_hold_is_refused_by_name(bad, message):
    with pytest.raises((ValueError, TypeError), match=message):
        oracle.to_c_view(bad)
