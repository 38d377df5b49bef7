"""Standard input has the limit files have: an endless stream is refused once it passes the size a
descriptor file may have, not read until memory runs out."""

from __future__ import annotations

import subprocess

import pytest

from dmltile.validate.source import READ_LIMITS
from tests.cli_support import SCRIPT


@pytest.mark.parametrize("command", [["validate", "-"], ["explain", "-"], ["fmt", "-"]])
def test_an_endless_stdin_is_refused_at_the_file_limit(command):
    if not SCRIPT.exists():
        pytest.skip("the dmltile script is not installed")
    with open("/dev/zero", "rb") as zero:
        proc = subprocess.run(
            [str(SCRIPT), *command], stdin=zero, capture_output=True, text=True, timeout=120
        )
    assert proc.returncode == 2, proc.stderr
    assert f"at most {READ_LIMITS['descriptor']} bytes" in proc.stderr and "Traceback" not in proc.stderr
