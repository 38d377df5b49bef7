"""Every ```python block of README.md runs as written (from the repository root, where examples/ is)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_python_block_runs(index):
    run = subprocess.run(
        [sys.executable, "-c", BLOCKS[index]], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, f"block {index}:\n{BLOCKS[index]}\n{run.stderr}"
