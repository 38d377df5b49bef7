"""A DirectML run that must wait for another one's lock says so once, then runs (no DLL needed)."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import time
from pathlib import Path

import pytest

CHILD = """
import sys
from pathlib import Path
from types import SimpleNamespace
from dmltile.execute.directml import process
print("ready", flush=True)
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
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        time.sleep(1)
        assert child.poll() is None  # waiting while the lock is held
    out, err = child.communicate(timeout=60)  # the lock released: it runs
    assert out == "ran\n" and "waiting for another DirectML run to finish" in err
