"""A DirectML run that must wait for another one's lock says so once, then runs (no DLL needed)."""

from __future__ import annotations

import fcntl
import select
import subprocess
import sys
from pathlib import Path

import pytest

CHILD = """
import sys
from pathlib import Path
from types import SimpleNamespace
from dmltile.execute.directml import process
with process.session(SimpleNamespace(home=Path(sys.argv[1]), native=True)):
    print("ran")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="the lock is flock's")
def test_a_run_waiting_on_the_lock_says_so_and_then_runs(tmp_path: Path):
    with open(tmp_path / "run.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert child.stderr is not None
        said, _, _ = select.select([child.stderr], [], [], 60)  # a hang guard, not a verdict on speed
        first = child.stderr.readline() if said else ""
        assert child.poll() is None  # still waiting while the lock is held
    out, err = child.communicate(timeout=60)  # the lock released: it runs
    assert out == "ran\n" and "waiting for another DirectML run to finish" in first + err
