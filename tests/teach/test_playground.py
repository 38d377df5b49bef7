"""The playground's server side (``respond``, ``new_descriptor``, the exercises) and ``dmltile serve``
over HTTP on a loopback port (no browser needed; tests/teach/test_browser.py drives the page)."""

from __future__ import annotations

import copy
import json
import socket
import subprocess
import time
import urllib.request

import numpy as np
import pytest

import dmltile
from dmltile.teach.exercises import EXERCISES
from dmltile.teach.form import FORM_FIELDS, document_from_form
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
    with pytest.raises(PayloadError, match="'repeats' missing"):  # the request's shape: a 400, named
        new_descriptor({"sizes": [2, 3]})
    assert new_descriptor({"sizes": [2, 3], "repeats": [1]}).get("error")  # its content: judged
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
    assert 'id="in-dtype"' in page and 'id="out-dtype"' in page and 'id="level"' in page


def test_the_page_carries_its_script_and_the_exercises_as_data():
    page = playground_page()
    assert "function formFields()" in page  # static/playground.js, inlined
    start = page.index('<script id="playground-data" type="application/json">')
    data = json.loads(page[page.index(">", start) + 1 : page.index("</script>", start)])
    assert data["exercises"] == EXERCISES and data["start"]["repeats"] == "1, 1, 3, 3"
    assert data["fields"] == list(FORM_FIELDS)
    for field in FORM_FIELDS:  # every field the page posts is on the page
        assert f'id="{field}"' in page


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


# -- the form, built into a document on the server ---------------------------------------------------
FORM = {
    "in-dtype": "INT8",
    "in-sizes": "1, 2 3",
    "in-strides": "",
    "in-bytes": "",
    "repeats": "2,1, 1",
    "out-dtype": "INT8",
    "out-sizes": "2, 2, 3",
    "out-strides": "6 3 1",
    "out-bytes": "12",
}


def test_the_form_is_built_into_the_wrapped_document_the_validator_reads():
    want = {  # written out by hand: the canonical wrapped shape, byte size left out when empty
        "Type": "DML_OPERATOR_TILE",
        "Desc": {
            "InputTensor": {
                "Type": "DML_TENSOR_TYPE_BUFFER",
                "Desc": {"DataType": "INT8", "Sizes": [1, 2, 3], "Strides": None},
            },
            "OutputTensor": {
                "Type": "DML_TENSOR_TYPE_BUFFER",
                "Desc": {
                    "DataType": "INT8",
                    "Sizes": [2, 2, 3],
                    "Strides": [6, 3, 1],
                    "TotalTensorSizeInBytes": 12,
                },
            },
            "Repeats": [2, 1, 1],
        },
    }
    assert document_from_form(FORM) == want
    r = respond({"form": FORM, "feature_level": "6.4", "index": "1, 1, 2"})
    assert r["document"] == want and r["valid"] and r["output_sizes"] == [2, 2, 3]
    assert "output index [1, 1, 2] copies input index" in r["html"] and "= [0, 1, 2]" in r["html"]
    # Text that is no number reaches the validator as it was typed, which names field and value.
    typo = respond({"form": {**FORM, "repeats": "2, x, 1"}})
    assert not typo["valid"] and any("Repeats" in i["path"] and '"x"' in i["message"] for i in typo["issues"])


def test_the_form_shows_each_exercise_and_posts_back_the_same_descriptor():
    for e in EXERCISES:
        back = document_from_form(e["form"])
        for tensor in ("InputTensor", "OutputTensor"):
            sent, start = back["Desc"][tensor]["Desc"], e["document"]["Desc"][tensor]["Desc"]
            assert [sent[k] for k in ("Sizes", "Strides")] == [start[k] for k in ("Sizes", "Strides")]
            assert start["DataType"] == f"DML_TENSOR_DATA_TYPE_{sent['DataType']}"
        assert back["Desc"]["Repeats"] == e["document"]["Desc"]["Repeats"]
        assert dmltile.validate(back, e["level"]).valid == dmltile.validate(e["document"], e["level"]).valid


def test_a_data_type_per_tensor_shows_the_registrys_dml206():
    r = respond({"form": {**FORM, "out-dtype": "UINT8"}, "feature_level": "6.4"})
    report = dmltile.validate(document_from_form({**FORM, "out-dtype": "UINT8"}), "6.4")
    assert not r["valid"] and [i["code"] for i in r["issues"]] == ["DML206"]
    assert [(i["message"], i["hint"]) for i in r["issues"]] == [(i.message, i.hint) for i in report.issues]
    assert "INT8" in r["issues"][0]["message"] and "UINT8" in r["issues"][0]["message"]


def test_an_edit_is_one_descriptor_of_text_fields():
    for bad in ({"document": DOC_EXAMPLE, "form": FORM}, {"form": {"in-sizes": [1]}}, {"form": {"x": "1"}}):
        with pytest.raises(PayloadError):
            respond(bad)
    made = new_descriptor({"sizes": "2 3", "repeats": "2, 1", "dtype": "INT16"})
    assert made["form"]["out-sizes"] == "4, 3" and made["form"]["out-bytes"] == ""


# -- each exercise accepts exactly its right answers --------------------------------------------------
def _judge(exercise_id: str, guess: str | None = None, form: dict | None = None, level: str | None = None):
    e = exercise(exercise_id)
    edit = {
        "form": form or e["form"],
        "feature_level": level or e["level"],
        "exercise": exercise_id,
        "guess": guess,
    }
    return respond(edit)["exercise"]


def test_predict_accepts_the_tiled_shape_in_any_usual_spelling_and_nothing_else():
    want = list(np.tile(np.zeros((2, 1, 3)), (3, 1, 1)).shape)  # numpy.tile, the reference
    assert want == [6, 1, 3]
    for right in ("6,1,3", "[6, 1, 3]", " 6 1 3 ", "(6,1,3)"):
        assert _judge("predict", right)["solved"], right
    for wrong in ("2,1,3", "6,1", "6,1,3,1", "613", "", "6;1;3", "3,1,1"):
        verdict = _judge("predict", wrong)
        assert not verdict["solved"] and verdict["message"].startswith("Not quite."), wrong
    assert "OutputTensor.Sizes = [6, 1, 3]" in _judge("predict", "1,1,1")["message"]
    # The question is about its own descriptor: editing the form does not move the answer.
    moved = {**exercise("predict")["form"], "in-sizes": "5, 1, 3"}
    assert _judge("predict", "6,1,3", form=moved)["solved"]
    assert _judge("predict", "15,1,3", form=moved)["solved"] is False


def test_padding_accepts_the_unread_bytes_and_says_where_they_are():
    # Sizes [1,2,2,3], Strides [0,0,4,1], FLOAT32: the elements sit at 0,1,2 and 4,5,6 (both planes
    # on the same ones), so 7 slots of 4 bytes hold 6 elements: slot 3, 4 bytes, is never read.
    used = {4 * r + c for r in range(2) for c in range(3)}
    want = (max(used) + 1 - len(used)) * 4
    assert want == 4
    for right in ("4", " 4 bytes", "4B", "4 byte"):
        assert _judge("padding", right)["solved"], right
    for wrong in ("3", "28", "8", "", "four", "4 bits", "-4"):
        assert not _judge("padding", wrong)["solved"], wrong
    message = _judge("padding", "4")["message"]
    assert message.startswith("Right!") and "4 of 28 bytes" in message and "never read" in message


def _strides(*strides: int) -> dict:
    return {**exercise("broadcast")["form"], "in-strides": ", ".join(map(str, strides))}


def test_broadcast_accepts_rows_sharing_their_bytes_and_only_those():
    # Input Sizes [1,1,2,3]: the rows share their 3 elements exactly when the row stride (axis 2) is
    # 0 and the column stride (axis 3) is not, so the 3 columns of a row are distinct elements.
    for planes in ((0, 0), (6, 6), (0, 3)):
        for row in range(4):
            for col in range(4):
                strides = (*planes, row, col)
                verdict = _judge("broadcast", form=_strides(*strides))
                assert verdict["solved"] == (row == 0 and col != 0), (strides, verdict)
    solved = _judge("broadcast", form=_strides(0, 0, 0, 1))["message"]
    assert solved.startswith("Solved") and "slots [0, 1, 2]" in solved
    columns = _judge("broadcast", form=_strides(0, 0, 1, 0))["message"]  # the reported case
    assert "columns share" in columns and "not the rows" in columns
    both = _judge("broadcast", form=_strides(0, 0, 0, 0))["message"]
    assert "rows share" in both and "so do the columns" in both
    assert "different elements" in _judge("broadcast", form=_strides(0, 0, 3, 1))["message"]
    # Only the Strides may change: another input shape or data type is no answer.
    for other in (
        {"in-sizes": "1, 1, 1, 3"},
        {"in-dtype": "INT32", "out-dtype": "INT32"},
        {"repeats": "1,1,6,3"},
    ):
        verdict = _judge("broadcast", form={**_strides(0, 0, 0, 1), **other})
        assert not verdict["solved"] and ("only" in verdict["message"] or "INVALID" in verdict["message"]), (
            other
        )


def test_valid_at_1_0_is_solved_at_1_0_only():
    fixed = {**exercise("valid-1.0")["form"], "in-dtype": "FLOAT16", "out-dtype": "FLOAT16"}
    fixed |= {"in-sizes": "1, 1, 2, 3", "repeats": "1, 1, 2, 2", "out-sizes": "1, 1, 4, 6"}
    assert _judge("valid-1.0", form=fixed)["solved"]
    assert not _judge("valid-1.0", form=fixed, level="4.1")["solved"]  # valid, but not the level asked
    assert "INVALID at 1.0" in _judge("valid-1.0")["message"]
    assert not _judge("valid-1.0", form={**fixed, "out-sizes": "1, 1, 4, 5"})["solved"]
