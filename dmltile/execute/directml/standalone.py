"""Load the DirectML driver without importing dmltile (no pydantic, no numpy, any Python 3.10+).

    python dmltile/execute/directml/standalone.py record-versions    # what setup.sh runs
    load()                                                           # the ``oracle`` module

The driver's modules use relative imports, also of ``core/layout``. Here they are imported under a
private package name whose parents are bare module objects pointing at dmltile's folders, so that
no ``__init__`` of dmltile runs and a process that also imports dmltile keeps the two apart.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

PACKAGE = "_dmltile_directml_standalone"
HERE = Path(__file__).resolve().parent
DMLTILE = HERE.parents[1]


def load(module: str = "oracle") -> types.ModuleType:
    """The driver's ``module`` (``oracle``: its public face), imported without dmltile."""
    folders = {
        PACKAGE: DMLTILE,
        f"{PACKAGE}.core": DMLTILE / "core",
        f"{PACKAGE}.execute": DMLTILE / "execute",
        f"{PACKAGE}.execute.directml": HERE,
    }
    for name, folder in folders.items():
        if name not in sys.modules:
            package = types.ModuleType(name)
            package.__path__ = [str(folder)]
            sys.modules[name] = package
    return importlib.import_module(f"{PACKAGE}.execute.directml.{module}")


if __name__ == "__main__":
    sys.exit(load("command_line").main())
