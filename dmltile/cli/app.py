"""The typer app, the consoles, and the exit-status conventions shared by every command.

Exit status: 0 valid / done, 1 a descriptor or model is invalid, 2 usage error or unreadable input.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import sys
from typing import TYPE_CHECKING, Any, cast

import typer
from typer import _click as click  # typer vendors click
from typer.core import TyperArgument, TyperCommand, TyperGroup
from typer.exceptions import Abort

from ..errors import DmlTileError

if TYPE_CHECKING:
    from rich.console import Console

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2

# The commands in the order a user meets them (``dmltile --help`` lists them so).
COMMAND_ORDER = (
    "validate",
    "explain",
    "run",
    "new",
    "check",
    "fmt",
    "schema",
    "levels",
    "rules",
    "export",
    "compare-dxdispatch",
    "doctor",
)

# The module of this package that defines each command. A command's module (and what it imports:
# NumPy, the planner, onnx, the playground) is imported only when that command runs or --help lists
# it, so each command starts with what it needs.
COMMAND_MODULES = {
    "validate": "validate",
    "explain": "explain",
    "run": "run",
    "new": "authoring",
    "check": "check",
    "fmt": "authoring",
    "schema": "authoring",
    "levels": "info",
    "rules": "info",
    "export": "dxdispatch",
    "compare-dxdispatch": "dxdispatch",
    "doctor": "info",
    "serve": "serve",
    "directml": "directml",
}


class _State:
    """Whether this invocation asked for ``--json`` and whether its one document is out yet."""

    json = False
    printed = False


state = _State()


def emit_json(document: dict, status: int) -> None:
    """Print the one JSON document of a ``--json`` run on stdout, carrying ``exit_status``: the
    status the process exits with, so a reader of the document alone knows the verdict."""
    document["exit_status"] = status
    # Written as encoded, piece by piece: a model's report can be far larger than the model, and
    # one string of all of it would hold the whole output in memory a second time.
    pieces: list[str] = []
    for piece in json.JSONEncoder(indent=2).iterencode(document):
        pieces.append(piece)
        if len(pieces) == 8192:
            sys.stdout.write("".join(pieces))
            pieces.clear()
    sys.stdout.write("".join(pieces) + "\n")
    state.printed = True


def error_document(message: str, status: int) -> dict:
    """What ``--json`` prints when a command cannot run (usage error, unreadable input)."""
    return {"error": message, "exit_status": status}


# What an option's value looks like in --help, instead of typer's "<str>" or "<Path>".
METAVARS = {
    "feature_level": "LEVEL",
    "index": "I,J,...",
    "sizes": "N,N,...",
    "repeats": "N,N,...",
    "strides": "N,N,...",
    "dtype": "TYPE",
    "backend": "NAME",
    "seed": "INT",
    "resource": "NAME",
    "write_file": "FILE",
    "svg": "FILE",
}


class _Argument(TyperArgument):
    def display_type_rich(self, ctx: click.Context) -> str | None:
        return None  # the metavar (FILE, FILES...) already says what it is

    def _rich_display_name(self) -> str:
        return self.display_name_raw + ("..." if self.nargs != 1 else "")

    def _usage_display_name(self) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")


def _is_path(param: Any) -> bool:
    desc = getattr(param, "type_descriptor", None)
    return bool(getattr(desc, "is_path", False))


def tidy_params(params: list) -> list:
    """Metavars that read well: nothing after a flag, FILE for paths, LEVEL for levels."""
    for p in params:
        if p.metavar is not None:
            continue
        if getattr(p, "is_flag", False):
            p.metavar = ""
        elif isinstance(p, TyperArgument):
            p.__class__ = _Argument
            p.metavar = (p.name or "arg").upper()
        else:
            p.metavar = METAVARS.get(p.name or "", "FILE" if _is_path(p) else (p.name or "").upper())
    return params


def unwrap_help(text: str | None) -> str | None:
    """Docstring paragraphs as one line each (the terminal wraps them to its width); a line that
    starts an example or an exit-status list keeps its own line."""
    if not text:
        return text
    out = []
    for para in text.split("\n\n"):
        lines: list[str] = []
        for line in para.strip().splitlines():
            line = line.strip()
            if lines and not line.startswith(("Example", "then", "dmltile ", "Exit status")):
                lines[-1] += " " + line
            else:
                lines.append(line)
        out.append("\n".join(lines))
    return "\n\n".join(out)


class DmlTileCommand(TyperCommand):
    """typer's command with tidy metavars and unwrapped help paragraphs."""

    def get_params(self, ctx: click.Context) -> list:
        return tidy_params(super().get_params(ctx))


class DmlTileGroup(TyperGroup):
    """typer's group with the commands in use order, no type metavars on flags, and ``--json``
    keeping its promise (one JSON document on stdout) for usage errors too."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = list(dict.fromkeys([*COMMAND_MODULES, *self.commands]))
        return [n for n in COMMAND_ORDER if n in names] + [n for n in names if n not in COMMAND_ORDER]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            self._load(COMMAND_MODULES[cmd_name])
        command = super().get_command(ctx, cmd_name)
        if type(command) is TyperCommand:
            command.__class__ = DmlTileCommand
            command.help = unwrap_help(command.help)
        return command

    def get_params(self, ctx: click.Context) -> list:
        return tidy_params(super().get_params(ctx))

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        if args and args[0] not in self.commands and args[0] not in COMMAND_MODULES:
            for module in dict.fromkeys(COMMAND_MODULES.values()):  # a typo: "did you mean" needs them all
                self._load(module)
        return super().resolve_command(ctx, args)

    def _load(self, module: str) -> None:
        """Import a command module (its decorators register its commands on ``app``) and add the
        commands it registered, as typer builds them."""
        importlib.import_module(f".{module}", __package__)
        short, markup = app.pretty_exceptions_short, app.rich_markup_mode
        for info in app.registered_commands:
            command = typer.main.get_command_from_info(
                info, pretty_exceptions_short=short, rich_markup_mode=markup
            )
            if command.name not in self.commands:
                self.add_command(command)
        for group in app.registered_groups:
            sub = typer.main.get_group_from_info(
                group,
                pretty_exceptions_short=short,
                suggest_commands=app.suggest_commands,
                rich_markup_mode=markup,
            )
            if sub.name not in self.commands:
                self.add_command(sub)

    def main(  # type: ignore[override]
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **kw: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        state.json, state.printed = "--json" in argv, False
        if not state.json:
            return super().main(args, prog_name, complete_var, standalone_mode, **kw)
        try:
            status = super().main(args, prog_name, complete_var, False, **kw)
        except click.ClickException as e:
            err_console.print(f"error: {e.format_message()}", highlight=False, markup=False)
            if not state.printed:
                emit_json(error_document(e.format_message(), e.exit_code), e.exit_code)
            status = e.exit_code
        except Abort:
            status = EXIT_INVALID
        if standalone_mode:
            sys.exit(status or 0)
        return status


app = typer.Typer(
    name="dmltile",
    help="Validate, run, lower and explain DirectML Tile descriptors (DML_TILE_OPERATOR_DESC).",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    cls=DmlTileGroup,
)


def _console(**kw: Any) -> Console:
    """A console that fits the terminal's window; when the output is not a terminal (a pipe, a
    file) it is $COLUMNS wide, else 80, and the one-line diagnostics (printed with soft_wrap) stay
    whole for ``grep``."""
    from rich.console import Console

    probe = Console(**kw)
    if probe.is_terminal:
        return probe
    return Console(soft_wrap=True, width=probe.width, **kw)


def _error_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True)  # an error stays one line, whatever the width


class _OnFirstUse:
    """A console made when it is first used: rich's console costs start-up time that a command
    printing nothing through it (``--version``, a JSON report) need not pay."""

    def __init__(self, make: Any) -> None:
        self._make = make
        self._made: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._made is None:
            self._made = self._make()
        return getattr(self._made, name)


console = cast("Console", _OnFirstUse(_console))


def say(*parts: str | tuple[str, str]) -> None:
    """One line of human output on stdout, whole (never wrapped): a part ``(text, style)`` is
    coloured in a terminal. Output that is no terminal (a pipe, CI, a pre-commit hook) is printed as
    it is, without importing rich at all."""
    if not (os.environ.get("FORCE_COLOR") or sys.stdout.isatty()):
        print("".join(p if isinstance(p, str) else p[0] for p in parts))
        return
    from rich.text import Text

    line = Text()
    for p in parts:
        line.append(*((p,) if isinstance(p, str) else p))
    console.print(line, soft_wrap=True)


def print_whole_lines(renderable: Any) -> None:
    """Print a table or an explanation wrapped to the console's width (a terminal's window; piped,
    $COLUMNS or 80 columns), without colour or trailing blanks when the output is not a terminal."""
    if console.is_terminal:
        console.print(renderable)
        return
    from rich.console import Console

    narrow = Console(width=console.width, file=io.StringIO(), color_system=None)
    narrow.print(renderable)
    for line in narrow.file.getvalue().splitlines():  # type: ignore[attr-defined]
        print(line.rstrip())


print_table = print_whole_lines  # a table at its natural width: each row one line, for grep


err_console = cast("Console", _OnFirstUse(_error_console))


def fail(message: str, status: int = EXIT_USAGE) -> typer.Exit:
    """Print one clear line to stderr (and, under ``--json``, the error document on stdout) and
    return the Exit to raise."""
    err_console.print("[bold red]error:[/] ", end="")
    err_console.print(message, highlight=False, markup=False)
    if state.json and not state.printed:
        emit_json(error_document(message, status), status)
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
        if state.json and not state.printed:
            emit_json(error_document(str(e), EXIT_USAGE), EXIT_USAGE)
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
        print(f"dmltile {sys.modules['dmltile'].__version__}")  # the package, loaded before its cli
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Validate, run, lower and explain DirectML Tile descriptors (DML_TILE_OPERATOR_DESC)."""
