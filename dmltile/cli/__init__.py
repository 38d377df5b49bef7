"""The ``dmltile`` command line (typer + rich). Each module in this package registers its commands;
``app`` imports a command's module when that command is used (``app.COMMAND_MODULES``)."""

from __future__ import annotations

import gc
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import app

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point. ``dmltile --version`` is answered before the command line's
    framework is imported: an editor or a hook asking for the version waits for nothing else."""
    if sys.argv[1:] == ["--version"]:
        print(f"dmltile {sys.modules['dmltile'].__version__}")  # the package, loaded before its cli
        return
    from .app import main as run

    try:
        run()
    finally:
        # What the run built (typer's and pydantic's machinery, the rules, the models) lives until
        # the process ends: frozen, it is skipped by the garbage collections the interpreter makes on
        # its way out, which would otherwise walk every one of those objects again to find nothing.
        gc.freeze()


def __getattr__(name: str) -> Any:
    """``app``, the Typer app, imported on first use."""
    if name == "app":
        from .app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Package(types.ModuleType):
    """This package, whose ``app`` stays the Typer app: importing the module ``app.py`` would
    otherwise set the package's ``app`` to that module (the module stays in ``sys.modules``)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if not (name == "app" and isinstance(value, types.ModuleType)):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
