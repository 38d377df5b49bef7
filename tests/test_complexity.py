"""Every function is short enough to read: cyclomatic complexity (radon's measure, which counts each
boolean operator and comprehension condition as a branch) at most 25, in the package, the tests and the
benchmark. A function past that is split into named steps, not exempted."""

from __future__ import annotations

from pathlib import Path

import pytest

radon_complexity = pytest.importorskip("radon.complexity", reason="radon is a dev dependency")

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 25
FOLDERS = ("dmltile", "tests", "bench")


def too_complex(source: str, limit: int = LIMIT) -> list[tuple[str, int, int]]:
    """(name, line, complexity) of every function or method above ``limit``."""
    blocks = radon_complexity.cc_visit(source)
    found = []
    for block in blocks:
        for b in [block, *getattr(block, "methods", [])]:
            if b.complexity > limit:
                found.append((b.name, b.lineno, b.complexity))
    return found


def test_no_function_above_the_limit():
    offenders = [
        f"{path.relative_to(ROOT)}:{line} {name} ({cc})"
        for folder in FOLDERS
        for path in sorted((ROOT / folder).rglob("*.py"))
        for name, line, cc in too_complex(path.read_text())
    ]
    assert not offenders, f"complexity above {LIMIT}: " + ", ".join(offenders)


def test_the_measure_catches_a_branchy_function():
    branches = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(LIMIT + 1))
    probe = f"def branchy(x):\n{branches}\n    return -1\n"
    assert too_complex(probe) == [("branchy", 1, LIMIT + 2)]
    assert too_complex(probe, limit=LIMIT + 2) == []
