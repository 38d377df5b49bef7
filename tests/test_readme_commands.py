"""Every CLI example in README.md and docs/ runs, with the exit status its comment states.

A ```sh block line that starts with ``dmltile`` or ``.venv/bin/dmltile`` is run by bash from a fresh
folder holding ``examples/`` (so the commands may create files there). ``# ... exit N`` in the
line's comment gives the expected status; none means 0. Once a block runs another program (say
``dxdispatch.exe`` on Windows), its later dmltile lines may need that program's output, so they
are not run here.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from .cli_support import ROOT, SCRIPT

BLOCK = re.compile(r"```sh\n(.*?)```", re.S)
PREFIX = re.compile(r"^(\.venv/bin/dmltile|dmltile)(?=\s)")
EXPECT = re.compile(r"#.*\bexit (\d)\b")


def doc_files() -> list[Path]:
    """README.md and every Markdown file under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def commands(path: Path) -> list[tuple[str, int]]:
    """(command line, expected exit status) for every dmltile line of the file's sh blocks."""
    found = []
    for block in BLOCK.findall(path.read_text(encoding="utf-8")):
        for line in block.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if not PREFIX.match(line):
                break  # the rest of the block may depend on what this other program made
            expect = EXPECT.search(line)
            found.append((line, int(expect.group(1)) if expect else 0))
    return found


def test_the_readme_has_cli_examples():
    lines = [c for c, _ in commands(ROOT / "README.md")]
    assert len(lines) >= 15
    for verb in ("validate", "explain", "run", "new", "fmt", "schema", "levels", "rules", "doctor"):
        assert any(f"dmltile {verb}" in c for c in lines), verb


@pytest.mark.parametrize("doc", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_cli_example_runs_with_its_exit_status(doc, tmp_path):
    if not SCRIPT.exists():
        pytest.skip(f"the dmltile script is not installed next to {SCRIPT.parent}")
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    failures = []
    for line, expected in commands(doc):
        command = PREFIX.sub(lambda _: f'"{SCRIPT}"', line)
        proc = subprocess.run(
            ["bash", "-c", command],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "COLUMNS": "100"},
        )
        if proc.returncode != expected or "Traceback" in proc.stdout + proc.stderr:
            failures.append(
                f"{line}\n  exit {proc.returncode}, expected {expected}\n  {proc.stderr.strip()[:500]}"
            )
    assert not failures, "\n".join(failures)
    if (tmp_path / "tile.svg").exists():
        assert (tmp_path / "tile.svg").read_text().lstrip().startswith("<svg")
