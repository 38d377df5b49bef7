"""``dmltile serve``: the local playground (edit a descriptor, see the verdict, hints and pictures)."""

from __future__ import annotations

import ipaddress

import typer

from ..teach.server import make_server
from .app import app, console, err_console, fail


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@app.command("serve")
def serve_cmd(
    host: str = typer.Option("127.0.0.1", "--host", help="The address to listen on (loopback by default)."),
    port: int = typer.Option(8765, "--port", "-p", min=0, max=65535, help="The port; 0 picks a free one."),
    allow_host: list[str] = typer.Option(
        [],
        "--allow-host",
        help="Another name browsers reach this server by (e.g. the machine's name with --host 0.0.0.0); "
        "requests naming any other host are refused. Repeatable.",
    ),
) -> None:
    """Start the playground: a page where you edit sizes, repeats, strides, data type, byte sizes and
    feature level and see the verdict, the hints and the pictures update, with guided exercises.

    Every answer comes from dmltile's own validator and explainer, run here. Stop it with Ctrl-C.
    It answers only requests addressed to its own host and port, from its own page, with JSON bodies
    of at most 256 KiB; it never reads a file a request names.

    Example: dmltile serve --port 8765, then open http://127.0.0.1:8765/
    """
    try:
        server = make_server(host, port, allow_host)
    except OSError as e:
        raise fail(f"cannot listen on {host}:{port} ({e.strerror or e})") from None
    bound_host, bound_port = str(server.server_address[0]), int(server.server_address[1])
    if not _is_loopback(host):
        err_console.print(
            f"warning: listening on {host}, not only on this machine: anyone who can reach it can use it",
            highlight=False,
        )
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    console.print(f"dmltile playground on http://{shown}:{bound_port}/ (Ctrl-C to stop)", highlight=False)
    console.file.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
