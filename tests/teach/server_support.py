"""A playground server over real HTTP on 127.0.0.1 for the attack tests, and raw requests to it."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator

from dmltile.teach.server import make_server

DEADLINE = 2.0  # seconds a request may take to arrive here: short, so that the attacks end soon
CAP = 24  # connections open at once here


@contextlib.contextmanager
def running(host: str = "127.0.0.1") -> Iterator[tuple[str, int]]:
    srv = make_server(host, 0, deadline=DEADLINE, max_connections=CAP)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield host, int(srv.server_address[1])
    finally:
        srv.shutdown()
        srv.server_close()


def raw_request(address: tuple[str, int], head: str, body: bytes = b"") -> tuple[int, dict]:
    """Send exactly these bytes; the status and the JSON body of the answer."""
    with socket.create_connection(address, timeout=20) as s:
        s.sendall(head.encode() + b"\r\n\r\n" + body)
        reply = b""
        while chunk := s.recv(65536):
            reply += chunk
    header, _, payload = reply.partition(b"\r\n\r\n")
    status = int(header.split()[1])
    return status, json.loads(payload)


def post(address: tuple[str, int], body: bytes, **headers: str) -> tuple[int, dict]:
    host, port = address
    shown = f"[{host}]" if ":" in host else host
    fields = {"Host": f"{shown}:{port}", "Content-Type": "application/json", "Content-Length": str(len(body))}
    fields.update({k.replace("_", "-"): v for k, v in headers.items()})
    head = "POST /api/explain HTTP/1.1\r\n" + "\r\n".join(f"{k}: {v}" for k, v in fields.items() if v != "")
    head += "\r\nConnection: close"
    return raw_request(address, head, body)
