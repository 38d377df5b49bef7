"""The build hook that compiles the copy kernel: it reports why it could not, and can be skipped."""

import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def load_hook():
    pytest.importorskip("hatchling")
    spec = importlib.util.spec_from_file_location("hatch_build", ROOT / "hatch_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_a_working_compiler_the_hook_says_why(monkeypatch, tmp_path):
    hook = load_hook()
    monkeypatch.setattr(hook, "compilers", lambda: [])
    assert "no C compiler found" in hook.build(tmp_path)
    monkeypatch.setattr(
        hook, "compilers", lambda: [[sys.executable, "-c", "import sys; sys.exit('broken cc')"]]
    )
    why = hook.build(ROOT)
    assert "broken cc" in why and sys.executable in why


@pytest.mark.wheel
def test_a_wheel_built_without_the_kernel_is_pure_python(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(tmp_path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        env={**os.environ, "DMLTILE_BUILD_KERNEL": "0"},
    )
    (whl,) = tmp_path.glob("dmltile-*.whl")
    assert whl.name.endswith("-none-any.whl")
    assert not any("_kernel." in name for name in zipfile.ZipFile(whl).namelist())
