"""The playground's server side (``respond``, ``new_descriptor``, the exercises) and ``dmltile serve``
over HTTP on a loopback port (no browser needed; tests/teach/test_browser.py drives the page)."""

from __future__ import annotations

import copy
import json
import socket
import subprocess
import time
import urllib.request

import pytest

import dmltile
from dmltile.teach.exercises import EXERCISES
from dmltile.teach.playground import PayloadError, new_descriptor, playground_page, respond
from tests.cli_support import SCRIPT
from tests.conftest import DOC_EXAMPLE


def exercise(exercise_id: str) -> dict:
    return copy.deepcopy(next(e for e in EXERCISES if e["id"] == exercise_id))


def test_an_edit_gets_the_validators_verdict_and_hints():
    doc = copy.deepcopy(DOC_EXAMPLE)
    doc["Desc"]["OutputTensor"]["Desc"]["Sizes"][3] = 8
    r = respond({"document": doc, "feature_level": "1.0"})
    report = dmltile.validate(doc, "1.0")  # the same validator, called directly
    assert r["valid"] is False and r["verdict"] == "INVALID at 1.0"
    assert [(i["code"], i["path"], i["hint"]) for i in r["issues"]] == [
        (i.code, i.path, i.hint) for i in report.issues
    ]
    assert r["issues"][0]["code"] == "DML205" and r["min_feature_level"] is None
    assert 'class="grid grid-output"' in r["html"] and "<script>" not in r["html"]
    ok = respond({"document": DOC_EXAMPLE, "feature_level": "6.4", "index": [0, 0, 4, 7]})
    assert ok["valid"] and ok["min_feature_level"] == "1.0" and ok["output_sizes"] == [1, 1, 6, 9]
    assert "output index [0, 0, 4, 7] copies input index" in ok["html"]


def test_bad_requests_answer_with_an_error_not_a_crash():
    with pytest.raises(PayloadError, match="document"):
        respond([1, 2])
    assert "error" in respond({"document": DOC_EXAMPLE, "feature_level": "2.5"})
    r = respond({"document": DOC_EXAMPLE, "index": [9, 9, 9, 9]})
    assert r["valid"] and "outside the output" in r["index_error"]
    unreadable = respond({"document": {"InputTensor": {}}})
    assert unreadable["valid"] is False and {i["code"] for i in unreadable["issues"]} >= {"DML002"}
    assert new_descriptor({"sizes": [2, 3]}).get("error")
    made = new_descriptor({"sizes": [5, 7], "repeats": [2, 1], "dtype": "INT32"})
    assert made["document"]["Desc"]["OutputTensor"]["Desc"]["Sizes"] == [10, 7]


def test_exercises_are_judged_on_the_real_explanation():
    predict = exercise("predict")
    wrong = respond({"document": predict["document"], "exercise": "predict", "guess": "2,1,3"})
    right = respond({"document": predict["document"], "exercise": "predict", "guess": "[6, 1, 3]"})
    assert not wrong["exercise"]["solved"] and "[6, 1, 3]" in wrong["exercise"]["message"]
    assert right["exercise"]["solved"]

    fix = exercise("valid-1.0")
    assert not respond({"document": fix["document"], "feature_level": "1.0", "exercise": "valid-1.0"})[
        "exercise"
    ]["solved"]
    fixed = dmltile.tile_desc([1, 1, 2, 3], [1, 1, 2, 2], dtype="FLOAT16").to_dict()
    assert respond({"document": fixed, "feature_level": "1.0", "exercise": "valid-1.0"})["exercise"]["solved"]

    pad = exercise("padding")
    # Sizes [1,2,2,3] Strides [0,0,4,1]: 7 slots of 4 bytes; elements at 0,1,2 and 4,5,6: slot 3 is padding
    assert respond({"document": pad["document"], "exercise": "padding", "guess": "4"})["exercise"]["solved"]
    assert not respond({"document": pad["document"], "exercise": "padding", "guess": "0"})["exercise"][
        "solved"
    ]

    bc = exercise("broadcast")
    assert not respond({"document": bc["document"], "exercise": "broadcast"})["exercise"]["solved"]
    bc["document"]["Desc"]["InputTensor"]["Desc"]["Strides"] = [0, 0, 0, 1]
    bc["document"]["Desc"]["InputTensor"]["Desc"].pop("TotalTensorSizeInBytes", None)
    assert respond({"document": bc["document"], "exercise": "broadcast"})["exercise"]["solved"]


def test_the_page_is_self_contained_and_lists_the_exercises():
    page = playground_page()
    assert page.startswith("<!doctype html>") and "<script src" not in page and "<link" not in page
    for e in EXERCISES:
        assert f'id="ex-{e["id"]}"' in page
    for field in ("in-sizes", "in-strides", "in-bytes", "repeats", "out-sizes", "out-strides", "out-bytes"):
        assert f'id="{field}"' in page
    assert 'id="dtype"' in page and 'id="level"' in page


def test_the_page_carries_its_script_and_the_exercises_as_data():
    page = playground_page()
    assert "function documentFromForm()" in page  # static/playground.js, inlined
    start = page.index('<script id="playground-data" type="application/json">')
    data = json.loads(page[page.index(">", start) + 1 : page.index("</script>", start)])
    assert data["exercises"] == EXERCISES and data["start"]["Desc"]["Repeats"] == [1, 1, 3, 3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_answers_on_loopback_and_stops():
    if not SCRIPT.exists():
        pytest.skip(f"the dmltile script is not installed next to {SCRIPT.parent}")
    port = _free_port()
    proc = subprocess.Popen(
        [str(SCRIPT), "serve", "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                page = opener.open(base + "/", timeout=5).read().decode()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.2)
        assert "dmltile playground" in page
        body = json.dumps({"document": DOC_EXAMPLE, "feature_level": "1.0"}).encode()
        req = urllib.request.Request(base + "/api/explain", body, {"Content-Type": "application/json"})
        answer = json.loads(opener.open(req, timeout=10).read())
        assert answer["verdict"] == "valid at 1.0"
        bad = urllib.request.Request(
            base + "/api/explain", b"{not json", {"Content-Type": "application/json"}
        )
        with pytest.raises(urllib.error.HTTPError) as e:
            opener.open(bad, timeout=10)
        assert e.value.code == 400
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    out = proc.stdout.read() if proc.stdout else ""
    assert f"http://127.0.0.1:{port}/" in out


def test_serve_on_a_taken_port_exits_2():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        from tests.cli_support import invoke

        result = invoke("serve", "--port", str(port))
    assert result.exit_code == 2 and "cannot listen" in result.stderr
