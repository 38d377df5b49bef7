"""The typer app, the consoles, and the exit-status conventions shared by every command.

Exit status: 0 valid / done, 1 a descriptor or model is invalid, 2 usage error or unreadable input.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys

import typer
from rich.console import Console

from ..errors import DmlTileError

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2

app = typer.Typer(
    name="dmltile",
    help="Validate, run, lower and explain DirectML Tile descriptors (DML_TILE_OPERATOR_DESC).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True, soft_wrap=True)  # an error stays one line, whatever the width


def fail(message: str, status: int = EXIT_USAGE) -> typer.Exit:
    """Print one clear line to stderr and return the Exit to raise."""
    err_console.print("[bold red]error:[/] ", end="")
    err_console.print(message, highlight=False, markup=False)
    return typer.Exit(status)


class QuietPipe:
    """stdout that ends quietly when the reader goes away (``dmltile check m.onnx | head -1``): the
    first broken-pipe write points the descriptor at the null device and drops the rest, so the
    command runs to its end and exits with the status it would have had."""

    def __init__(self, inner):
        self._inner = inner
        self.broken = False

    def _guard(self, call, *args):
        if self.broken:
            return len(args[0]) if args else None
        try:
            return call(*args)
        except BrokenPipeError:
            self.broken = True
            try:
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, self._inner.fileno())
                os.close(null)
            except (OSError, ValueError):
                pass
            return len(args[0]) if args else None

    def write(self, text):
        return self._guard(self._inner.write, text)

    def flush(self):
        return self._guard(self._inner.flush)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def main() -> None:
    """Console-script entry point: user errors become one line and exit 2, never a traceback."""
    if not isinstance(sys.stdout, QuietPipe) and sys.stdout is not None:
        sys.stdout = QuietPipe(sys.stdout)
    try:
        app()
    except DmlTileError as e:
        err_console.print(f"error: {e}", highlight=False, markup=False)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # a bug in dmltile: still one line, unless DMLTILE_DEBUG asks for the traceback
        if os.environ.get("DMLTILE_DEBUG"):
            raise
        err_console.print(
            f"internal error ({type(e).__name__}: {e}); this is a dmltile bug, please report it "
            "(set DMLTILE_DEBUG=1 for the traceback)",
            highlight=False,
            markup=False,
        )
        sys.exit(EXIT_USAGE)


def _version(value: bool) -> None:
    if value:
        console.print(f"dmltile {importlib.metadata.version('dmltile')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Validate, run, lower and explain DirectML Tile descriptors (DML_TILE_OPERATOR_DESC)."""
