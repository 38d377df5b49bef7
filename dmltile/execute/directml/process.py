"""The runner process: its command line (under Wine and Xvfb on Linux), one session at a time per
cache folder, and its JSON-lines answers."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .installation import OracleError, Setup

if sys.platform != "win32":
    import fcntl


def _dll_arg(setup: Setup, dll: Path) -> str:
    return str(dll) if setup.native else "Z:" + str(dll)


def runner_command(setup: Setup, runner: Path, dll: Path, *extra: str) -> list[str]:
    """A runner's command line on one DLL: natively on Windows, else under Wine inside Xvfb (the
    DXGI factory that DirectML needs cannot be created under Wine without an X display)."""
    cmd = [str(runner), "--dll", _dll_arg(setup, dll), *extra]
    if setup.native:
        return cmd
    return ["xvfb-run", "-a", "-s", "-screen 0 320x240x24", "wine", *cmd]


def _command(setup: Setup, dll: Path, *extra: str) -> list[str]:
    return runner_command(setup, setup.runner, dll, *extra)


def end_wine(setup: Setup) -> None:
    """End the Wine server (a no-op on Windows): a runner that crashed may leave it in a bad state."""
    if not setup.native:
        subprocess.run(["wineserver", "-k"], env=setup.env, capture_output=True, check=False)


@contextlib.contextmanager
def session(setup: Setup) -> Iterator[None]:
    """One runner at a time per cache folder; the Wine server is ended afterwards."""
    setup.home.mkdir(parents=True, exist_ok=True)
    with open(setup.home / "run.lock", "w") as lock:
        if sys.platform != "win32":
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # said once, so that a wait is never taken for a hang
                sys.stderr.write(f"waiting for another DirectML run to finish (it holds {lock.name})\n")
                sys.stderr.flush()
                fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if not setup.native:
                end_wine(setup)
                with contextlib.suppress(Exception):
                    subprocess.run(
                        ["wineserver", "-w"], env=setup.env, capture_output=True, check=False, timeout=30
                    )


def parse_lines(text: str) -> list[dict[str, Any]]:
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            with contextlib.suppress(json.JSONDecodeError):
                rows.append(json.loads(line))
    return rows


def runner_info(setup: Setup, dll: Path) -> dict[str, Any]:
    """Start the runner on one DLL and return its info line (FileVersion, max feature level, data types)."""
    with session(setup):
        proc = subprocess.run(
            _command(setup, dll, "--info"),
            env=setup.env or None,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    rows = parse_lines(proc.stdout)
    if not rows:
        raise OracleError(f"runner printed nothing for {dll} (exit {proc.returncode}): {proc.stderr[-500:]}")
    return rows[0]


def run_lines(
    setup: Setup, dll: Path, lines: list[str], timeout: float, extra: list[str]
) -> tuple[list[dict[str, Any]], str]:
    """Feed ``lines`` to one runner process (inside a ``session``); its answer lines, and how it
    ended (``exit N: <stderr tail>`` or ``timed out after N s``)."""
    cmd = _command(setup, dll, *extra)
    with tempfile.TemporaryFile("w+b") as stdin:
        stdin.write(("\n".join(lines) + "\n").encode())
        stdin.seek(0)
        try:
            proc = subprocess.run(
                cmd, stdin=stdin, env=setup.env or None, capture_output=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired as exc:
            text = (exc.stdout or b"").decode("utf-8", "replace")
            return parse_lines(text), f"timed out after {timeout:.0f} s"
    text = proc.stdout.decode("utf-8", "replace")
    tail = proc.stderr.decode("utf-8", "replace")[-300:].strip()
    return parse_lines(text), f"exit {proc.returncode}: {tail}"
