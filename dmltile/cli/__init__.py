"""The ``dmltile`` command line (typer + rich). Each module in this package registers its commands."""

from . import (  # registers the commands
    authoring,
    check,
    directml,
    dxdispatch,
    explain,
    info,
    run,
    serve,
    validate,
)
from .app import app, main

__all__ = [
    "app",
    "authoring",
    "check",
    "directml",
    "dxdispatch",
    "explain",
    "info",
    "main",
    "run",
    "serve",
    "validate",
]
