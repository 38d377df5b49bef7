"""The playground against clients that dribble, idle or send costly input, over real HTTP on 127.0.0.1:
others are still answered while they do, every one of them gets a JSON answer, and the HTTP layer's
own refusals are JSON with a 4xx status too. Each attack stops by itself: the server's request
deadline here is DEADLINE seconds, and every socket has a timeout as a hang guard."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from dmltile.teach.server import MAX_BODY
from tests.examples_support import EXAMPLES
from tests.teach.server_support import CAP, DEADLINE, post, raw_request, running

DOC = json.loads((EXAMPLES / "doc_example.json").read_text())
GUARD = 60  # seconds any one answer may take before the test gives up (a hang guard, not a verdict)


@pytest.fixture()
def server():
    with running() as address:
        yield address


def answer_of(s: socket.socket) -> tuple[int, dict]:
    reply = b""
    while chunk := s.recv(65536):
        reply += chunk
    header, _, payload = reply.partition(b"\r\n\r\n")
    return int(header.split()[1]), json.loads(payload)


def send_raw(address: tuple[str, int], data: bytes) -> tuple[int, dict]:
    with socket.create_connection(address, timeout=GUARD) as s:
        s.sendall(data)
        return answer_of(s)


def test_dribbling_and_idle_clients_do_not_keep_others_waiting(server):
    """Sixteen idle connections and four sending a header byte every 0.3 s: more than the old
    server's workers and wait list together. Visitors are answered meanwhile, and each attacker gets
    a JSON 408 once its request has not arrived whole within the deadline."""
    host, port = server
    idle = [socket.create_connection(server, timeout=GUARD) for _ in range(16)]
    dribblers = [socket.create_connection(server, timeout=GUARD) for _ in range(4)]
    head = f"POST /api/explain HTTP/1.1\r\nHost: {host}:{port}\r\nX-Slow: " + "a" * 100
    stop = threading.Event()

    def dribble() -> None:
        for byte in head.encode():
            if stop.is_set():
                return
            for s in dribblers:
                try:
                    s.send(bytes([byte]))
                except OSError:
                    return
            time.sleep(0.3)

    thread = threading.Thread(target=dribble, daemon=True)
    thread.start()
    try:
        time.sleep(0.5)
        for _ in range(3):
            status, answer = post(server, json.dumps({"document": DOC}).encode())
            assert status == 200 and answer["valid"]
        for s in idle + dribblers:
            status, answer = answer_of(s)
            assert status == 408 and answer["status"] == 408 and "whole" in answer["error"]
    finally:
        stop.set()
        thread.join(GUARD)
        for s in idle + dribblers:
            s.close()


def test_a_quarter_megabyte_guess_of_spaces_is_answered_and_holds_no_one(server):
    """'1', spaces to the body limit, 'x': a regex that backtracks took about an hour on it, holding
    the interpreter; a page load sent meanwhile is answered, and so is the guess."""
    host, port = server
    guess = "1" + " " * (MAX_BODY - 4096) + "x"
    body = json.dumps({"document": DOC, "exercise": "predict", "guess": guess}).encode()
    got: dict = {}
    thread = threading.Thread(
        target=lambda: got.update(zip(("status", "answer"), post(server, body), strict=True))
    )
    thread.start()
    page = raw_request(server, f"GET /api/exercises HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close")
    thread.join(GUARD)
    assert page[0] == 200 and isinstance(page[1], list)
    assert got["status"] == 200 and got["answer"]["exercise"]["solved"] is False


def test_a_quarter_megabyte_data_type_is_judged(server):
    doc = json.loads(json.dumps(DOC))
    doc["Desc"]["InputTensor"]["Desc"]["DataType"] = "FLOAT" + "3" * (MAX_BODY - 4096)
    status, answer = post(server, json.dumps({"document": doc}).encode())
    assert status == 200 and not answer["valid"]
    issue = next(i for i in answer["issues"] if i["code"] == "DML005")
    assert "did you mean" not in issue["hint"] and len(issue["message"]) < 400


POST = "POST /api/explain HTTP/1.1\r\nHost: {h}\r\nContent-Type: application/json\r\n"


def request(head: str) -> bytes:
    return head.encode("latin-1") + b"\r\n\r\n"


@pytest.mark.parametrize(
    "data,status",
    [
        (request("PUT /api/explain HTTP/1.1\r\nHost: {h}"), 405),
        (request("BREW / HTTP/1.1\r\nHost: {h}"), 405),
        (request("DELETE / HTTP/1.0"), 405),
        (request("GARBAGE"), 400),
        (request("GET / HTTP/1.1 extra\r\nHost: {h}"), 400),
        (request("GET noslash HTTP/1.1\r\nHost: {h}"), 400),
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64 + b"\r\n\r\n", 400),  # TLS hello
        (request("GET /" + "a" * 10_000 + " HTTP/1.1\r\nHost: {h}"), 414),
        (request("GET / HTTP/1.1\r\nHost: {h}\r\nX-Long: " + "a" * 10_000), 431),
        (request("GET / HTTP/1.1\r\nHost: {h}" + "".join(f"\r\nX-{n}: 1" for n in range(100))), 431),
        (request("GET / HTTP/1.1\r\nHost: {h}\r\n folded"), 400),
        (request("GET / HTTP/1.1\r\nHost: {h}\r\nHost: {h}"), 400),
        (request(POST + "Content-Length: ²"), 400),
        (request(POST + "Content-Length: " + "9" * 5000), 413),
        (request(POST + "Transfer-Encoding: chunked"), 411),
    ],
    ids=[
        "PUT", "unknown-method", "DELETE", "no-target", "four-parts", "no-slash", "tls", "long-line",
        "long-header", "many-headers", "folded-header", "two-hosts", "superscript-length", "5000-digit-length",
        "chunked",
    ],
)  # fmt: skip
def test_the_http_layer_refuses_in_json_with_a_4xx_status(server, data, status):
    host, port = server
    got, answer = send_raw(server, data.replace(b"{h}", f"{host}:{port}".encode()))
    assert got == status and answer["status"] == status and answer["error"]


@pytest.mark.parametrize(
    "body,words",
    [
        (b'{"document": {"Type": 1, "Type": 2}}', "twice"),  # the CLI reports DML003; never judged silently
        (b'{"document": {}, "index": [Infinity]}', "Infinity"),
        (b'{"document": {}, "index": NaN}', "NaN"),
        (b'{"document": {"Repeats": [' + b"9" * 5000 + b"]}}", "JSON"),  # int() refuses 4,300+ digits
    ],
    ids=["duplicate-key", "infinity", "nan", "5000-digits"],
)
def test_json_that_is_no_json_or_repeats_a_key_is_a_400(server, body, words):
    status, answer = post(server, body)
    assert status == 400 and answer["status"] == 400 and words in answer["error"]
    assert "Infinity" not in json.dumps(answer).replace(answer["error"], "")


@pytest.mark.parametrize(
    "payload",
    [
        {"form": {"in-sizes": "9" * 5000, "in-dtype": "FLOAT32"}},
        {"form": {"in-bytes": "²", "in-dtype": "FLOAT32", "in-sizes": "2 3"}},
        {"form": {"in-sizes": "2 3", "in-dtype": "FLOAT32"}, "index": "0 ²"},
    ],
    ids=["5000-digit-size", "superscript-bytes", "superscript-index"],
)
def test_form_fields_past_what_numbers_hold_are_judged_not_a_500(server, payload):
    status, answer = post(server, json.dumps(payload).encode())
    assert status == 200 and answer["valid"] is False and answer["issues"]


def test_a_new_descriptor_without_sizes_is_a_400_naming_them(server):
    host, port = server
    body = b"{}"
    head = (
        f"POST /api/new HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close"
    )
    status, answer = raw_request(server, head, body)
    assert status == 400 and "'sizes'" in answer["error"] and "'repeats'" in answer["error"]


def test_connections_past_the_cap_are_told_busy_and_the_rest_still_answered(server):
    held = [socket.create_connection(server, timeout=GUARD) for _ in range(CAP)]
    try:
        time.sleep(0.2)
        status, answer = post(server, json.dumps({"document": DOC}).encode())
        assert status == 503 and answer["status"] == 503
    finally:
        for s in held:
            s.close()
    deadline = time.monotonic() + GUARD
    status = 503
    while status == 503 and time.monotonic() < deadline:
        status, answer = post(server, json.dumps({"document": DOC}).encode())
    assert status == 200 and answer["valid"]


def test_the_server_listens_on_ipv6_loopback():
    try:
        socket.create_server(("::1", 0), family=socket.AF_INET6).close()
    except OSError:
        pytest.skip("this machine has no IPv6 loopback")
    with running("::1") as address:
        status, answer = post(address, json.dumps({"document": DOC}).encode())
    assert status == 200 and answer["valid"]


def test_deadline_is_whole_request_not_per_read(server):
    """A client that sends a byte every half second never waits long on one read, yet its request
    is refused once DEADLINE has passed since it connected."""
    host, port = server
    head = f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\n".encode() + b"X: " + b"a" * 40
    with socket.create_connection(server, timeout=GUARD) as s:
        start = time.monotonic()
        for byte in head:
            try:
                s.send(bytes([byte]))
            except OSError:
                break
            time.sleep(0.5)
            if time.monotonic() - start > DEADLINE * 3:
                break
        status, answer = answer_of(s)
    assert status == 408 and answer["status"] == 408
