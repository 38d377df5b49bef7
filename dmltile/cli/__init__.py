"""The ``dmltile`` command line (typer + rich). Each module in this package registers its commands;
``app`` imports a command's module when that command is used (``app.COMMAND_MODULES``)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import app

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point. ``dmltile --version`` is answered before the command line's
    framework is imported: an editor or a hook asking for the version waits for nothing else."""
    if sys.argv[1:] == ["--version"]:
        from .. import __version__

        print(f"dmltile {__version__}")
        return
    from .app import main as run

    run()


def __getattr__(name: str) -> Any:
    if name == "app":
        from .app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
