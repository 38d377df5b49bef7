"""The ``dmltile`` command line (typer + rich). Each module in this package registers its commands."""

from . import authoring, check, dxdispatch, explain, info, run, serve, validate  # registers the commands
from .app import app, main

__all__ = ["app", "authoring", "check", "dxdispatch", "explain", "info", "main", "run", "serve", "validate"]
