"""On Windows with dxdispatch.exe on PATH: run every valid example on real DirectML and compare.

Skipped elsewhere (DirectML needs Windows and a DirectX 12 device; nothing here is faked).
Set DMLTILE_DXDISPATCH to the executable's path if it is not on PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dmltile
from dmltile.interop import dxdispatch_export as dx
from dmltile.interop.dxdispatch_print import compare_dxdispatch

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DXDISPATCH = os.environ.get("DMLTILE_DXDISPATCH") or shutil.which("dxdispatch")

pytestmark = [
    pytest.mark.directml,
    pytest.mark.skipif(
        sys.platform != "win32" or not DXDISPATCH,
        reason="needs Windows, a DirectX 12 device and dxdispatch.exe (on PATH or DMLTILE_DXDISPATCH)",
    ),
]


@pytest.mark.parametrize(
    "path", sorted(p for p in EXAMPLES.glob("*.json") if dmltile.validate(p).valid), ids=lambda p: p.name
)
def test_directml_output_matches_numpy(path, tmp_path):
    desc = dmltile.load(path)
    small = desc.output.data_type.element_size == 1
    model = dmltile.to_dxdispatch(
        desc, seed=1, verbose_print=not small, write_file="written.npy" if small else None
    )
    model_file = tmp_path / "model.json"
    model_file.write_text(dx.dumps(model))
    expected = dx.expected_outputs(model)["output"]
    run = subprocess.run([DXDISPATCH, str(model_file)], cwd=tmp_path, capture_output=True, timeout=300)
    assert run.returncode == 0, run.stderr.decode(errors="replace")
    (tmp_path / "out.txt").write_bytes(run.stdout)
    result = compare_dxdispatch(tmp_path / ("written.npy" if small else "out.txt"), expected)
    assert result.identical, result.message
