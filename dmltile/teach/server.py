"""The playground's HTTP server: the standard library's ``http.server`` around the page and its two
endpoints (``playground``), bound to 127.0.0.1 unless asked otherwise.

It is a local tool that a browser talks to, so it must not become a way for another web page to
reach this machine: it answers only requests addressed to its own name and port (a page elsewhere
that rebinds its DNS name to 127.0.0.1 still sends its own name as Host) and coming from its own page
(Origin), takes JSON bodies only (a cross-site request with that type needs a CORS preflight, which
is refused), never reads a file a request names, and bounds every request: the body's size, each
socket read, and how many connections are served or waiting at once. Every refusal is a JSON body
with an HTTP status, never a dropped connection.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from .exercises import EXERCISES
from .playground import PayloadError, new_descriptor, playground_page, respond

MAX_BODY = 256 * 1024  # bytes of one request body; a descriptor document is a few hundred
SOCKET_TIMEOUT = 10.0  # seconds one read or write of a connection may wait
WORKERS = 4  # requests answered at once
WAITING = 16  # connections accepted beyond those, waiting for a worker; more are told 503 at once
MAX_NESTING = 64  # brackets deep; a descriptor document needs 5

ENDPOINTS: dict[str, Callable[[Any], dict]] = {"/api/explain": respond, "/api/new": new_descriptor}


class RequestError(Exception):
    """A request refused with ``status`` and a sentence saying why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _nesting(text: str) -> int:
    """How deep brackets nest in ``text`` (strings skipped), counted before parsing so that a body
    of 100,000 '[' is refused without recursing through it."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_body(raw: bytes) -> Any:
    """The request body as JSON: UTF-8, at most MAX_NESTING deep; RequestError(400) otherwise."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RequestError(400, f"the body is not UTF-8 text ({e.reason} at byte {e.start})") from None
    if _nesting(text) > MAX_NESTING:
        raise RequestError(400, f"the JSON nests deeper than {MAX_NESTING} levels; a descriptor needs 5")
    try:
        return json.loads(text)
    except ValueError as e:
        raise RequestError(400, f"not JSON: {e}") from None


def body_length(header: str | None) -> int:
    """The Content-Length a POST must carry: present (411), a whole number (400), within MAX_BODY (413)."""
    if header is None:
        raise RequestError(411, "a POST needs a Content-Length header")
    if not header.strip().isdigit():
        raise RequestError(400, f"Content-Length {header[:40]!r} is not a whole number of bytes")
    length = int(header)
    if length > MAX_BODY:
        raise RequestError(413, f"the request body is {length} bytes; at most {MAX_BODY} are taken")
    return length


class _Handler(BaseHTTPRequestHandler):
    server_version = "dmltile-playground"
    timeout = SOCKET_TIMEOUT  # applied to the connection's socket by StreamRequestHandler
    server: PlaygroundServer

    def _send(self, status: int, body: str, content_type: str = "application/json") -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(data)

    def _refuse(self, error: RequestError) -> None:
        self.close_connection = True
        self._send(error.status, json.dumps({"error": str(error), "status": error.status}))

    def _check_origin(self) -> None:
        """Only requests to this server's own name and port, from its own pages."""
        host = (self.headers.get("Host") or "").lower()
        if host not in self.server.allowed_hosts:
            raise RequestError(403, f"Host {host[:80]!r} is not this playground's address")
        origin = self.headers.get("Origin")
        if origin is not None and origin.lower() not in self.server.allowed_origins:
            raise RequestError(
                403, f"requests from {origin[:80]!r} are not answered; open the playground itself"
            )

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        try:
            self._check_origin()
        except RequestError as e:
            self._refuse(e)
            return
        path = self.path.split("?", 1)[0]
        if path in ("/", "/index.html"):
            self._send(200, playground_page(), "text/html; charset=utf-8")
        elif path == "/api/exercises":
            self._send(200, json.dumps(EXERCISES))
        else:
            self._refuse(RequestError(404, f"no page {path[:80]}"))

    def do_POST(self) -> None:  # noqa: N802
        try:
            self._send(200, json.dumps(self._answer()))
        except RequestError as e:
            self._refuse(e)
        except Exception as e:  # a bug of ours: say so in JSON rather than drop the connection
            self._refuse(RequestError(500, f"internal error ({type(e).__name__}); this is a dmltile bug"))

    def _answer(self) -> dict:
        self._check_origin()
        path = self.path.split("?", 1)[0]
        if path not in ENDPOINTS:
            raise RequestError(404, f"no endpoint {path[:80]}")
        kind = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        if kind != "application/json":
            raise RequestError(415, f"send the document as application/json, not {kind[:60] or 'no type'}")
        length = body_length(self.headers.get("Content-Length"))
        try:
            raw = self.rfile.read(length)
        except TimeoutError:  # a client that promises more than it sends holds a worker no longer
            raise RequestError(
                408, f"the body's {length} bytes did not arrive within {SOCKET_TIMEOUT:g} s"
            ) from None
        payload = parse_body(raw)
        try:
            return ENDPOINTS[path](payload)
        except PayloadError as e:
            raise RequestError(400, str(e)) from None

    def do_OPTIONS(self) -> None:  # noqa: N802 (a CORS preflight: only another site's page sends one)
        self._refuse(RequestError(403, "cross-origin requests are not answered"))

    def log_message(self, format: str, *args: Any) -> None:  # quiet: one line per request is noise
        pass


def _names(hosts: Iterable[str], port: int) -> frozenset[str]:
    out = set()
    for host in hosts:
        shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
        out |= {f"{shown}:{port}".lower()}
        if port == 80:
            out.add(shown.lower())
    return frozenset(out)


class PlaygroundServer(HTTPServer):
    """An HTTP server answering on a fixed pool of worker threads, with a bounded wait list."""

    # The kernel's accept queue holds more than the wait list, so connections are taken in the order
    # they came and the ones past the wait list are told 503 rather than left unaccepted.
    request_queue_size = 4 * (WORKERS + WAITING)

    def __init__(self, address: tuple[str, int], names: Iterable[str] = ()) -> None:
        self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="dmltile-playground")
        super().__init__(address, _Handler)  # closes itself (server_close) when it cannot bind
        self._slots = threading.BoundedSemaphore(WORKERS + WAITING)
        port = int(self.server_address[1])
        host = str(address[0])
        loopback = ("127.0.0.1", "localhost", "::1") if host in ("127.0.0.1", "localhost", "::1", "") else ()
        self.allowed_hosts = _names({host, *loopback, *names}, port)
        self.allowed_origins = frozenset(f"http://{h}" for h in self.allowed_hosts)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self._busy(request)
            return
        self._pool.submit(self._serve_one, request, client_address)

    def _busy(self, request: Any) -> None:
        """Answer 503 without a worker. The request is read (briefly, a little of it) before the
        socket closes: closing over unread bytes resets the connection and loses the answer."""
        body = json.dumps({"error": "the playground is busy; try again", "status": 503}).encode()
        head = f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
        try:
            request.settimeout(0.2)
            request.recv(65536)
            request.sendall(head.encode() + b"\r\nConnection: close\r\n\r\n" + body)
            request.shutdown(socket.SHUT_WR)
            request.recv(65536)
        except OSError:
            pass
        request.close()

    def _serve_one(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            self._slots.release()

    def server_close(self) -> None:
        super().server_close()
        self._pool.shutdown(wait=False, cancel_futures=True)


def make_server(host: str = "127.0.0.1", port: int = 8765, names: Iterable[str] = ()) -> PlaygroundServer:
    """The playground's HTTP server (not started); port 0 picks a free port (see server_address).
    Requests must name it by ``host`` (and, on loopback, 127.0.0.1, localhost or ::1) or one of
    ``names``, with the port it listens on."""
    return PlaygroundServer((host, port), names)


__all__ = ["MAX_BODY", "PlaygroundServer", "RequestError", "make_server"]
