"""The playground's HTTP server: the standard library's ``http.server`` around the page and its two
endpoints (``playground``), bound to 127.0.0.1 unless asked otherwise, with request bodies capped."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .exercises import EXERCISES
from .playground import new_descriptor, playground_page, respond

MAX_BODY = 256 * 1024


class _Handler(BaseHTTPRequestHandler):
    server_version = "dmltile-playground"

    def _send(self, status: int, body: str, content_type: str) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        path = self.path.split("?", 1)[0]
        if path in ("/", "/index.html"):
            self._send(200, playground_page(), "text/html; charset=utf-8")
        elif path == "/api/exercises":
            self._send(200, json.dumps(EXERCISES), "application/json")
        else:
            self._send(404, json.dumps({"error": f"no page {path}"}), "application/json")

    def do_POST(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0]
        handlers = {"/api/explain": respond, "/api/new": new_descriptor}
        if path not in handlers:
            self._send(404, json.dumps({"error": f"no endpoint {path}"}), "application/json")
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._send(
                413, json.dumps({"error": f"the request is over {MAX_BODY} bytes"}), "application/json"
            )
            return
        try:
            payload = json.loads(self.rfile.read(length) or b"null")
        except (ValueError, UnicodeDecodeError) as e:
            self._send(400, json.dumps({"error": f"not JSON: {e}"}), "application/json")
            return
        self._send(200, json.dumps(handlers[path](payload)), "application/json")

    def log_message(self, format: str, *args: Any) -> None:  # quiet: one line per request is noise
        pass


def make_server(host: str = "127.0.0.1", port: int = 8765) -> ThreadingHTTPServer:
    """The playground's HTTP server (not started); port 0 picks a free port (see server_address)."""
    server = ThreadingHTTPServer((host, port), _Handler)
    server.daemon_threads = True
    return server


__all__ = ["MAX_BODY", "make_server"]
