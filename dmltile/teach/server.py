"""The playground's HTTP server: one asyncio event loop around the page and its two endpoints
(``playground``), bound to 127.0.0.1 unless asked otherwise.

It is a local tool that a browser talks to, so it must not become a way for another web page to
reach this machine: it answers only requests addressed to its own name and port (a page elsewhere
that rebinds its DNS name to 127.0.0.1 still sends its own name as Host) and coming from its own page
(Origin), takes JSON bodies only (a cross-site request with that type needs a CORS preflight, which
is refused), and never reads a file a request names.

Nor may a slow or idle client take it from everyone else. Connections wait on the event loop, which
holds no thread for them; each request must arrive whole (request line, headers and body) within
REQUEST_DEADLINE; at most MAX_CONNECTIONS are open at once; and judging runs on WORKERS threads with
at most WAITING more requests queued for them. Every refusal, the HTTP layer's own included (a
malformed request line, a method it does not serve, a line or header block too long), is a JSON body
with a 4xx status (503 when busy), and the connection closes after each answer.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from typing import Any

from ..validate.source import DuplicateKey, unique_object
from .exercises import EXERCISES
from .playground import PayloadError, new_descriptor, playground_page, respond

MAX_BODY = 256 * 1024  # bytes of one request body; a descriptor document is a few hundred
MAX_LINE = 8 * 1024  # bytes of the request line, and of each header line
MAX_HEADERS = 64  # header lines; a browser sends about a dozen
REQUEST_DEADLINE = 10.0  # seconds for a whole request (line, headers and body) to arrive
MAX_CONNECTIONS = 128  # open at once; more are told 503 at once
WORKERS = 4  # requests judged at once
WAITING = 16  # judged requests queued beyond those; more are told 503
MAX_NESTING = 64  # brackets deep; a descriptor document needs 5
MAX_DIGITS = 20  # of a Content-Length: MAX_BODY has 6, any 64-bit count 20

ENDPOINTS: dict[str, Callable[[Any], dict]] = {"/api/explain": respond, "/api/new": new_descriptor}
METHODS = ("GET", "POST", "OPTIONS")


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


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number; send a number or a string")


def parse_body(raw: bytes) -> Any:
    """The request body as JSON: UTF-8, at most MAX_NESTING deep, no key twice in one object, no
    NaN or Infinity (which JSON lacks); RequestError(400) otherwise."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RequestError(400, f"the body is not UTF-8 text ({e.reason} at byte {e.start})") from None
    if _nesting(text) > MAX_NESTING:
        raise RequestError(400, f"the JSON nests deeper than {MAX_NESTING} levels; a descriptor needs 5")
    try:
        return json.loads(text, object_pairs_hook=unique_object, parse_constant=_no_constant)
    except DuplicateKey as e:
        raise RequestError(400, f"{str(e)[:120]}; send each key once") from None
    except ValueError as e:  # json's errors, and int() refusing a number of more than 4,300 digits
        raise RequestError(400, f"not JSON: {str(e)[:200]}") from None


def body_length(header: str | None) -> int:
    """The Content-Length a POST must carry: present (411), a whole number (400), within MAX_BODY (413)."""
    if header is None:
        raise RequestError(411, "a POST needs a Content-Length header")
    digits = header.strip()
    if not (digits.isascii() and digits.isdigit()):
        raise RequestError(400, f"Content-Length {header[:40]!r} is not a whole number of bytes")
    if len(digits) > MAX_DIGITS or int(digits) > MAX_BODY:
        raise RequestError(413, f"the request body is {digits[:40]} bytes; at most {MAX_BODY} are taken")
    return int(digits)


class Request:
    """A request as read: method, path (without the query), headers (lower-case names), body."""

    def __init__(self, method: str, path: str, headers: dict[str, str]) -> None:
        self.method, self.path, self.headers = method, path, headers
        self.body = b""


async def _line(reader: asyncio.StreamReader, status: int, what: str) -> str:
    """One line (without its line break) of at most MAX_LINE bytes; RequestError(status) when longer."""
    try:
        raw = await reader.readuntil(b"\n")
    except asyncio.LimitOverrunError:
        raise RequestError(status, f"{what} is longer than {MAX_LINE} bytes") from None
    except asyncio.IncompleteReadError:
        raise RequestError(400, f"the connection closed before the end of {what}") from None
    return raw.rstrip(b"\r\n").decode("latin-1")


def _request_line(line: str) -> tuple[str, str]:
    parts = line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1.") or not parts[1].startswith("/"):
        raise RequestError(400, f"malformed request line {line[:80]!r}; expected METHOD /path HTTP/1.1")
    method, target = parts[0], parts[1]
    if method not in METHODS:
        raise RequestError(405, f"method {method[:20]!r} is not served; use {', '.join(METHODS)}")
    return method, target.split("?", 1)[0]


async def read_request(reader: asyncio.StreamReader) -> Request:
    """The request line, the headers and (for a POST) the body; RequestError for a malformed one."""
    method, path = _request_line(await _line(reader, 414, "the request line"))
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS + 1):
        line = await _line(reader, 431, "a header line")
        if not line:
            break
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip() or line[:1] in (" ", "\t"):
            raise RequestError(400, f"malformed header line {line[:80]!r}")
        name = name.lower()
        if name in headers and name in ("host", "content-length", "content-type", "origin"):
            raise RequestError(400, f"the {name} header is given twice")
        headers[name] = value.strip()
    else:
        raise RequestError(431, f"more than {MAX_HEADERS} header lines")
    request = Request(method, path, headers)
    if method == "POST":
        if "transfer-encoding" in headers:
            raise RequestError(411, "send the body with a Content-Length, not a Transfer-Encoding")
        length = body_length(headers.get("content-length"))
        try:
            request.body = await reader.readexactly(length)
        except asyncio.IncompleteReadError as e:
            raise RequestError(400, f"the body has {len(e.partial)} of the {length} bytes promised") from None
    return request


def _response(status: int, body: str, content_type: str = "application/json") -> bytes:
    data = body.encode("utf-8")
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
        f"Content-Type: {content_type}\r\nContent-Length: {len(data)}\r\n"
        "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
        "Server: dmltile-playground\r\nConnection: close\r\n\r\n"
    )
    return head.encode("latin-1") + data


def _refusal(error: RequestError) -> bytes:
    return _response(error.status, json.dumps({"error": str(error), "status": error.status}))


def _names(hosts: Iterable[str], port: int) -> frozenset[str]:
    out = set()
    for host in hosts:
        shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
        out |= {f"{shown}:{port}".lower()}
        if port == 80:
            out.add(shown.lower())
    return frozenset(out)


class PlaygroundServer:
    """The playground on an asyncio event loop in the thread that calls ``serve_forever``; the
    listening socket is bound when the server is made (so ``server_address`` names the port)."""

    def __init__(
        self,
        address: tuple[str, int],
        names: Iterable[str] = (),
        deadline: float = REQUEST_DEADLINE,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        host, port = address
        self.deadline, self.max_connections = deadline, max_connections
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.create_server((host, port), family=family, backlog=max_connections)
        self.server_address: tuple[Any, ...] = self.socket.getsockname()
        bound = int(self.server_address[1])
        loopback = ("127.0.0.1", "localhost", "::1") if host in ("127.0.0.1", "localhost", "::1", "") else ()
        self.allowed_hosts = _names({host, *loopback, *names}, bound)
        self.allowed_origins = frozenset(f"http://{h}" for h in self.allowed_hosts)
        self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="dmltile-playground")
        self._open = 0
        self._judging = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._started = threading.Event()
        self._done = threading.Event()

    def serve_forever(self) -> None:
        """Answer requests until ``shutdown`` is called (from another thread) or Ctrl-C."""
        try:
            asyncio.run(self._serve())
        finally:
            self._done.set()

    async def _serve(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        server = await asyncio.start_server(self._connection, sock=self.socket, limit=MAX_LINE)
        self._started.set()
        async with server:
            await self._stop.wait()

    def shutdown(self) -> None:
        """Stop ``serve_forever`` (running in another thread) and wait until it has."""
        if self._started.wait(timeout=30) and self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._done.wait(timeout=30)

    def server_close(self) -> None:
        self.socket.close()
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._open += 1
        try:
            if self._open > self.max_connections:
                answer = _refusal(RequestError(503, "the playground is busy; try again"))
            else:
                answer = await self._answer(reader)
            writer.write(answer)
            await asyncio.wait_for(writer.drain(), self.deadline)
            await self._close(reader, writer)
        except (OSError, asyncio.TimeoutError):
            writer.transport.abort()
        finally:
            self._open -= 1

    @staticmethod
    async def _close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Close after the answer, reading (briefly) what the client still sends: closing over
        unread bytes resets the connection, and the client would lose the answer."""
        if writer.can_write_eof():
            writer.write_eof()
        try:
            await asyncio.wait_for(_drained(reader), 0.5)
        except (asyncio.TimeoutError, OSError):
            pass
        writer.close()

    async def _answer(self, reader: asyncio.StreamReader) -> bytes:
        try:
            request = await asyncio.wait_for(read_request(reader), self.deadline)
        except asyncio.TimeoutError:
            return _refusal(RequestError(408, f"the request did not arrive whole within {self.deadline:g} s"))
        except RequestError as e:
            return _refusal(e)
        try:
            self._check_origin(request.headers)
            return await self._route(request)
        except RequestError as e:
            return _refusal(e)
        except Exception as e:  # a bug of ours: say so in JSON rather than drop the connection
            return _refusal(RequestError(500, f"internal error ({type(e).__name__}); this is a dmltile bug"))

    def _check_origin(self, headers: dict[str, str]) -> None:
        """Only requests to this server's own name and port, from its own pages."""
        host = headers.get("host", "").lower()
        if host not in self.allowed_hosts:
            raise RequestError(403, f"Host {host[:80]!r} is not this playground's address")
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self.allowed_origins:
            raise RequestError(
                403, f"requests from {origin[:80]!r} are not answered; open the playground itself"
            )

    async def _route(self, request: Request) -> bytes:
        if request.method == "OPTIONS":  # a CORS preflight: only another site's page sends one
            raise RequestError(403, "cross-origin requests are not answered")
        if request.method == "GET":
            if request.path in ("/", "/index.html"):
                return _response(200, playground_page(), "text/html; charset=utf-8")
            if request.path == "/api/exercises":
                return _response(200, json.dumps(EXERCISES))
            raise RequestError(404, f"no page {request.path[:80]}")
        if request.path not in ENDPOINTS:
            raise RequestError(404, f"no endpoint {request.path[:80]}")
        kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if kind != "application/json":
            raise RequestError(415, f"send the document as application/json, not {kind[:60] or 'no type'}")
        payload = parse_body(request.body)
        return _response(200, json.dumps(await self._judge(ENDPOINTS[request.path], payload)))

    async def _judge(self, endpoint: Callable[[Any], dict], payload: Any) -> dict:
        """``endpoint(payload)`` on the worker pool, or 503 when WORKERS + WAITING are already taken."""
        if self._judging >= WORKERS + WAITING:
            raise RequestError(503, "the playground is busy; try again")
        self._judging += 1
        try:
            assert self._loop is not None
            return await self._loop.run_in_executor(self._pool, _call, endpoint, payload)
        finally:
            self._judging -= 1


async def _drained(reader: asyncio.StreamReader) -> None:
    while await reader.read(65536):
        pass


def _call(endpoint: Callable[[Any], dict], payload: Any) -> dict:
    try:
        return endpoint(payload)
    except PayloadError as e:
        raise RequestError(400, str(e)) from None


def make_server(
    host: str = "127.0.0.1", port: int = 8765, names: Iterable[str] = (), **limits: Any
) -> PlaygroundServer:
    """The playground's HTTP server (not started); port 0 picks a free port (see server_address).
    Requests must name it by ``host`` (and, on loopback, 127.0.0.1, localhost or ::1) or one of
    ``names``, with the port it listens on. ``limits``: ``deadline`` (seconds for a request to
    arrive whole) and ``max_connections`` (open at once), REQUEST_DEADLINE and MAX_CONNECTIONS by
    default."""
    return PlaygroundServer((host, port), names, **limits)


__all__ = [
    "MAX_BODY",
    "MAX_CONNECTIONS",
    "REQUEST_DEADLINE",
    "PlaygroundServer",
    "RequestError",
    "make_server",
]
