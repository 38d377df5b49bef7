"""Finding the DirectML set-up: the runner, the DLLs, and the Wine environment they run in.

``setup.sh`` fills one cache folder; this module finds it, says what is missing (with the command
that installs it), and builds the environment that Wine and Mesa's lavapipe need.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SETUP_SCRIPT = HERE / "setup.sh"
INSTALL_COMMAND = "dmltile directml setup"  # `make directml` in a checkout


class OracleError(RuntimeError):
    """The DirectML runner could not be found, started or understood."""


def default_home() -> Path:
    """The cache folder that ``setup.sh`` fills: ``$DMLTILE_DIRECTML_HOME`` or the XDG cache default."""
    env = os.environ.get("DMLTILE_DIRECTML_HOME")
    if env:
        return Path(env).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "dmltile" / "directml"


@dataclass(frozen=True)
class Setup:
    """Where the runner, the DLLs and the Wine environment live."""

    home: Path
    runner: Path
    dlls: dict[str, Path]  # folder under dll/ (the onnxruntime-directml version, or package-version) -> DLL
    native: bool  # True on Windows: no Wine, no Xvfb
    env: dict[str, str] = field(default_factory=dict)

    def versions(self) -> list[dict[str, Any]]:
        """The recorded version table (``versions.json``), one row per DLL."""
        path = self.home / "versions.json"
        if not path.is_file():
            return []
        rows: list[dict[str, Any]] = json.loads(path.read_text())
        return rows


def _wine_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "WINEPREFIX": str(home / "prefix"),
            "WINEDEBUG": "-all",
            "VKD3D_DEBUG": "none",
            "XDG_RUNTIME_DIR": str(home / "xdg"),
            "VK_ICD_FILENAMES": str(home / "lvp.json"),
            "LD_LIBRARY_PATH": str(home / "mesa" / "usr" / "lib" / "x86_64-linux-gnu"),
            # the runner's own cabinet.dll (cabinet_shim.c): DirectML <= 1.7 unpacks its shaders through it
            "WINEDLLOVERRIDES": "cabinet=n,b",
        }
    )
    return env


def setup_problem(home: Path | None = None) -> str | None:
    """Why the DirectML set-up cannot run here (with the command that installs it), or None when it can."""
    home = Path(home) if home else default_home()
    fix = f"run `{INSTALL_COMMAND}` (or `bash {SETUP_SCRIPT}`)"
    if not (home / "runner.exe").is_file():
        return f"no DirectML runner in {home}: {fix}"
    if not any((home / "dll").glob("*/DirectML.dll")):
        return f"no DirectML.dll under {home / 'dll'}: {fix}"
    if sys.platform == "win32":
        return None
    if platform.system() != "Linux":
        return f"the DirectML oracle runs on Windows natively or on Linux through Wine, not on {platform.system()}"
    missing = [tool for tool in ("wine", "xvfb-run", "wineserver") if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not installed: {fix}"
    if not (home / "lvp.json").is_file():
        return f"Mesa lavapipe (Vulkan on the CPU) missing in {home}: {fix}"
    if not (home / "prefix" / "system.reg").is_file():
        return f"no Wine prefix in {home / 'prefix'}: {fix}"
    return None


def find_setup(home: Path | None = None) -> Setup | None:
    """The DirectML set-up, or None when it is absent (``setup_problem()`` then says why and how to install)."""
    home = Path(home) if home else default_home()
    if setup_problem(home) is not None:
        return None
    dlls = {p.parent.name: p for p in sorted((home / "dll").glob("*/DirectML.dll"))}
    native = sys.platform == "win32"
    return Setup(
        home=home, runner=home / "runner.exe", dlls=dlls, native=native, env={} if native else _wine_env(home)
    )


def require_setup(home: Path | None = None) -> Setup:
    """Like ``find_setup`` but raises ``OracleError`` naming the reason and the install command."""
    setup = find_setup(home)
    if setup is None:
        raise OracleError(setup_problem(home) or "DirectML set-up missing")
    return setup
