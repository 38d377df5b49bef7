"""Build hook: compile the optional copy kernel (dmltile/execute/fast/c/kernel.c).

It is a plain shared library loaded with ctypes (no Python headers needed), built with the C
compiler Python was built with, else ``cc``/``gcc``/``clang`` (``CC`` overrides). When no compiler
works the build goes on without it and recipes run on NumPy alone; ``DMLTILE_BUILD_KERNEL=0``
skips it on purpose, ``=1`` makes a failure fatal.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = Path("dmltile/execute/fast/c/kernel.c")
LIBRARY = SOURCE.with_name("_kernel" + (".dll" if sys.platform == "win32" else ".so"))


def compilers() -> list[list[str]]:
    """Compiler commands to try, in order."""
    found: list[list[str]] = []
    for cmd in (os.environ.get("CC"), sysconfig.get_config_var("CC"), "cc", "gcc", "clang"):
        words = shlex.split(cmd) if cmd else []
        if words and shutil.which(words[0]) and words not in found:
            found.append(words)
    return found


def build(root: Path) -> str | None:
    """Compile the kernel into the package; returns None on success, else why it was not built."""
    source, target = root / SOURCE, root / LIBRARY
    # The source's digest goes in, so that dmltile refuses a library built from another kernel.c
    # (dmltile.execute.fast.kernel.source_digest computes the same).
    digest = hashlib.sha256(source.read_bytes()).hexdigest() if source.is_file() else ""
    flags = ["-O2", f'-DSOURCE_DIGEST="{digest}"', "-shared", "-o", str(target), str(source)]
    if sys.platform != "win32":
        flags[1:1] = ["-fPIC", "-pthread"]  # the kernel's worker thread
    errors = []
    for cc in compilers():
        done = subprocess.run([*cc, *flags], capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return None
        errors.append(f"{' '.join(cc)}: {done.stderr.strip()[:400]}")
    return "; ".join(errors) or "no C compiler found (tried $CC, Python's CC, cc, gcc, clang)"


class KernelBuildHook(BuildHookInterface):
    """Compiles the kernel before the wheel (or the editable install) is assembled."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        wanted = os.environ.get("DMLTILE_BUILD_KERNEL", "")
        if wanted == "0":
            return
        why = build(Path(self.root))
        if why is None:
            build_data["artifacts"].append(str(LIBRARY))
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
            return
        if wanted == "1":
            raise RuntimeError(f"dmltile's copy kernel did not build: {why}")
        self.app.display_warning(f"dmltile: copy kernel not built, recipes will run on NumPy only ({why})")
