"""The playground server against a hostile web page or client, over real HTTP on loopback: each attack,
then the refusal. A page elsewhere must not read files through it, reach it under another name, or
post to it across sites; malformed or oversized requests get a JSON error with a status, never a
dropped connection; slow or many connections cannot take more than a fixed number of threads."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import tracemalloc
from collections.abc import Iterator

import pytest

from dmltile.teach.playground import respond
from dmltile.teach.server import MAX_BODY, WORKERS
from tests.examples_support import EXAMPLES
from tests.teach.server_support import CAP, DEADLINE, post, raw_request, running

DOC = json.loads((EXAMPLES / "doc_example.json").read_text())


@pytest.fixture()
def server() -> Iterator[tuple[str, int]]:
    with running() as address:
        yield address


def test_a_path_in_the_document_is_never_read(server, tmp_path):
    secret = tmp_path / "token.json"
    secret.write_text(json.dumps({"token": "ghp_secret_value_1234"}))
    for document in (str(secret), "/etc/passwd", str(tmp_path / "missing.json")):
        status, answer = post(server, json.dumps({"document": document}).encode())
        assert status == 400 and answer["status"] == 400
        assert "JSON object" in answer["error"]
        assert "ghp_" not in json.dumps(answer) and "root:" not in json.dumps(answer)
        assert "exist" not in answer["error"]  # nor says whether a path exists


def test_the_own_page_is_answered(server):
    host, port = server
    status, answer = post(server, json.dumps({"document": DOC}).encode(), Origin=f"http://{host}:{port}")
    assert status == 200 and answer["valid"]
    status, answer = post(server, json.dumps({"document": DOC}).encode(), Host=f"localhost:{port}")
    assert status == 200 and answer["valid"]


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "evil.example"},  # DNS rebinding: another name that resolves here
        {"Host": "127.0.0.1:1"},  # another port
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
    ],
)
def test_another_site_is_refused(server, headers):
    status, answer = post(server, json.dumps({"document": DOC}).encode(), **headers)
    assert status == 403 and answer["status"] == 403 and "valid" not in answer


def test_a_foreign_host_cannot_read_the_page_either(server):
    status, answer = raw_request(server, "GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: close")
    assert status == 403 and "address" in answer["error"]


def test_cross_site_simple_posts_and_preflights_are_refused(server):
    host, port = server
    body = json.dumps({"document": DOC}).encode()
    status, answer = post(server, body, Content_Type="text/plain")
    assert status == 415 and "application/json" in answer["error"]
    status, answer = raw_request(
        server,
        f"OPTIONS /api/explain HTTP/1.1\r\nHost: {host}:{port}\r\nOrigin: http://evil.example\r\n"
        "Access-Control-Request-Method: POST\r\nConnection: close",
    )
    assert status == 403


@pytest.mark.parametrize(
    "length,status",
    [("", 411), ("-1", 400), ("abc", 400), (str(MAX_BODY + 1), 413), ("99999999999999999999", 413)],
)
def test_content_length_is_required_numeric_and_bounded(server, length, status):
    got, answer = post(server, b"{}", Content_Length=length)
    assert got == status and answer["status"] == status and answer["error"]


def test_deep_nesting_and_wrong_field_types_get_400(server):
    status, answer = post(server, b"[" * 100_000)
    assert status == 400 and "nests deeper" in answer["error"]
    for edit in (
        {"document": DOC, "exercise": "predict", "guess": 123},
        {"document": DOC, "feature_level": 4.1},
        {"document": DOC, "index": 7},
        {"document": [DOC]},
        {"documents": DOC},
        {"document": DOC, "form": {"in-sizes": "1, 2"}},  # one descriptor, never two
        {"form": {"in-sizes": [1, 2]}},  # the form's fields are text
        {"form": {"../etc/passwd": "x"}},  # and only its own fields
        {"form": "in-sizes=1"},
    ):
        status, answer = post(server, json.dumps(edit).encode())
        assert status == 400 and answer["status"] == 400, edit
    status, answer = post(server, b"\xff\xfe{}")
    assert status == 400 and "UTF-8" in answer["error"]


def test_connections_beyond_the_cap_are_told_busy_and_threads_stay_bounded(server):
    before = threading.active_count()
    idle = [socket.create_connection(server, timeout=20) for _ in range(CAP)]
    try:
        host, port = server
        slow = f"POST /api/explain HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        idle[0].sendall(slow.encode() + b"Content-Length: 1000\r\n\r\n{")  # 1 of 1,000 bytes promised
        extra = http.client.HTTPConnection(*server, timeout=20)
        extra.request("GET", "/")
        reply = extra.getresponse()
        assert reply.status == 503 and json.loads(reply.read())["status"] == 503
        extra.close()
        assert threading.active_count() <= before + WORKERS
    finally:
        for s in idle:
            s.close()
    # Room again once the server has seen the closed connections end (a bounded wait, not a speed
    # verdict: the event loop notices each close when it reads the end of the stream).
    deadline = time.monotonic() + 60
    status, answer = post(server, json.dumps({"document": DOC}).encode())
    while status == 503 and time.monotonic() < deadline:
        time.sleep(0.05)
        status, answer = post(server, json.dumps({"document": DOC}).encode())
    assert status == 200 and answer["valid"]


def test_a_body_that_never_arrives_is_answered_408_and_frees_its_connection(server):
    """A client that sends 1 of the 1,000 bytes it promised is told so once the request's deadline
    passes (JSON, 408), never held forever nor answered as a dmltile bug."""
    host, port = server
    head = f"POST /api/explain HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
    with socket.create_connection(server, timeout=DEADLINE * 10) as s:  # a hang guard only
        s.sendall(head.encode() + b"Content-Length: 1000\r\n\r\n{")
        reply = b""
        while chunk := s.recv(65536):
            reply += chunk
    header, _, payload = reply.partition(b"\r\n\r\n")
    assert int(header.split()[1]) == 408 and json.loads(payload)["status"] == 408
    status, answer = post(server, json.dumps({"document": DOC}).encode())
    assert status == 200 and answer["valid"]


@pytest.mark.parametrize(
    "claim",
    [
        {"TotalTensorSizeInBytes": 4_000_000_000},
        {"TotalTensorSizeInBytes": 2**34},
        {"Strides": [0, 0, 1_000_000_000, 1], "TotalTensorSizeInBytes": 2**34},
    ],
)
def test_a_huge_claimed_byte_size_costs_what_the_elements_cost(server, claim):
    """The pictures size their arrays by the slots drawn, never by the byte size a document claims
    (counted with tracemalloc, which sees NumPy's buffers: independent of the machine)."""
    doc = json.loads(json.dumps(DOC))
    doc["Desc"]["InputTensor"]["Desc"].update(claim)
    doc["Desc"]["InputTensor"]["Desc"].pop("Strides", None) if "Strides" not in claim else None
    tracemalloc.start()
    try:
        answer = respond({"document": doc, "feature_level": "6.4"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, peak
    assert answer["input_padding_bytes"] == claim["TotalTensorSizeInBytes"] - (
        24 if "Strides" not in claim else 4 * 6
    )
    status, over_http = post(server, json.dumps({"document": doc}).encode())
    assert status == 200 and over_http["input_padding_bytes"] == answer["input_padding_bytes"]
