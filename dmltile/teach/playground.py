"""``dmltile serve``: a local playground page where a person edits a descriptor and sees the verdict,
the hints and the pictures update, with a few guided exercises.

The page only gathers the form into a descriptor document and POSTs it; everything it shows is
computed here, by the same validator and explainer as the command line (no second implementation
in JavaScript). ``respond`` and ``new_descriptor`` are plain functions (tested without a server);
``make_server`` wraps them in the standard library's ``http.server``, bound to 127.0.0.1 unless
asked otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..core.enums import DataType
from ..errors import DmlTileError
from ..validate.build import tile_desc
from ..validate.levels import DEFAULT_FEATURE_LEVEL, known_levels, parse_feature_level
from .explain import Explanation, explain, map_index
from .html import CSS, SCRIPT, explanation_html
from .picture import Picture, build_picture

MAX_BODY = 256 * 1024


def _doc(sizes, repeats, dtype="FLOAT32", strides=None) -> dict:
    """A correct descriptor with its byte sizes left out (the form shows them as "computed", so
    editing sizes or the data type never leaves a stale byte size behind)."""
    d = tile_desc(sizes, repeats, dtype=dtype).to_dict()
    d["Desc"]["InputTensor"]["Desc"]["Strides"] = strides
    for tensor in ("InputTensor", "OutputTensor"):
        d["Desc"][tensor]["Desc"].pop("TotalTensorSizeInBytes")
    return d


# Each exercise: what to do, the descriptor it starts from, the level, and what counts as solved
# (checked here, in Python, on the explanation of what the person sent).
EXERCISES: list[dict[str, Any]] = [
    {
        "id": "predict",
        "title": "Predict the output size",
        "text": "Input Sizes [2, 1, 3], Repeats [3, 1, 1]. What are the OutputTensor's Sizes? "
        "Type your answer (e.g. 1,2,3), then reveal.",
        "document": _doc([2, 1, 3], [3, 1, 1]),
        "level": "6.4",
        "kind": "guess",
        "hide": ["result", "output"],
    },
    {
        "id": "valid-1.0",
        "title": "Make this descriptor valid at 1.0",
        "text": "A 2-D INT64 Tile is fine at 4.1, but feature level 1.0 knows only 4-D FLOAT32 and "
        "FLOAT16. Edit it until the verdict at 1.0 is valid (the hints say how).",
        "document": _doc([2, 3], [2, 2], "INT64"),
        "level": "1.0",
        "kind": "goal",
    },
    {
        "id": "padding",
        "title": "How many input bytes are never read?",
        "text": "This input's rows are 4 elements apart but hold 3, and both planes share one memory "
        "(Strides [0, 0, 4, 1]). How many of its TotalTensorSizeInBytes are padding? Guess, then reveal.",
        "document": _doc([1, 2, 2, 3], [1, 1, 2, 2], strides=[0, 0, 4, 1]),
        "level": "6.4",
        "kind": "guess",
        "hide": ["result"],
    },
    {
        "id": "broadcast",
        "title": "Broadcast one row",
        "text": "Change only the InputTensor's Strides so that both input rows read the same 3 elements "
        "in memory (one element read for two), keeping the descriptor valid.",
        "document": _doc([1, 1, 2, 3], [1, 1, 3, 3]),
        "level": "6.4",
        "kind": "goal",
    },
]


def _answer(exercise_id: str, ex: Explanation, model: Picture | None) -> tuple[str, Callable[[str], bool]]:
    """(the answer as text, a test of a guess) for a guessing exercise."""
    if exercise_id == "predict":
        sizes = list(ex.report.output_sizes or [])

        def right(guess: str) -> bool:
            try:
                return [
                    int(v) for v in guess.replace("[", "").replace("]", "").replace(" ", "").split(",")
                ] == sizes
            except ValueError:
                return False

        return f"OutputTensor.Sizes = {sizes}", right
    pad = model.input_strip.padding_bytes if model is not None and model.input_strip is not None else 0

    def right_pad(guess: str) -> bool:
        return guess.strip().isdigit() and int(guess) == pad

    total = model.input_strip.total_bytes if model is not None and model.input_strip is not None else 0
    return f"{pad} of the input's {total} bytes are never read", right_pad


def check_exercise(exercise_id: str, ex: Explanation, model: Picture | None, guess: str | None) -> dict:
    """Whether what was sent solves the exercise, judged on the explanation of it."""
    exercise = next((e for e in EXERCISES if e["id"] == exercise_id), None)
    if exercise is None:
        return {"id": exercise_id, "solved": False, "message": "no such exercise"}
    if exercise["kind"] == "guess":
        if guess is None:
            return {"id": exercise_id, "solved": False, "message": ""}
        answer, right = _answer(exercise_id, ex, model)
        ok = right(guess)
        return {"id": exercise_id, "solved": ok, "message": ("Right! " if ok else "Not quite. ") + answer}
    level = ex.report.feature_level.dotted if ex.report.feature_level else "?"
    if exercise_id == "valid-1.0":
        ok = ex.report.valid and level == "1.0"
        msg = (
            "Solved: valid at 1.0."
            if ok
            else f"Not yet: {'valid' if ex.report.valid else 'invalid'} at {level}."
        )
        return {"id": exercise_id, "solved": ok, "message": msg}
    shared = model.input_strip.shared_slots if model is not None and model.input_strip is not None else 0
    ok = ex.report.valid and shared > 0 and ex.desc is not None and list(ex.desc.input.sizes) == [1, 1, 2, 3]
    msg = (
        "Solved: the two rows share their bytes, and the descriptor is valid."
        if ok
        else "Not yet: the input slots each hold one element"
        if not shared
        else "Not yet: the descriptor must stay valid, with the same input Sizes."
    )
    return {"id": exercise_id, "solved": ok, "message": msg}


def respond(payload: Any) -> dict:
    """The playground's answer to one edit: ``{"document": {...}, "feature_level": "1.0",
    "index": [0, 0, 4, 7] or null, "exercise": id or null, "guess": text or null}`` ->
    the verdict, the issues with their hints, per-level verdicts, memory facts and the HTML view."""
    if not isinstance(payload, dict) or "document" not in payload:
        return {"error": 'send a JSON object with a "document" key (the descriptor)'}
    try:
        level = parse_feature_level(payload.get("feature_level") or DEFAULT_FEATURE_LEVEL)
    except ValueError as e:
        return {"error": str(e)}
    try:
        ex = explain(payload["document"], level)
    except (DmlTileError, ValueError) as e:
        return {"error": str(e)}
    index = payload.get("index")
    index_error = None
    if index and ex.desc is not None:
        try:
            ex.mapping = map_index(ex.desc, [int(v) for v in index])
        except (ValueError, TypeError) as e:
            index_error = str(e)
    model = None
    if ex.desc is not None:
        model = build_picture(ex.desc, ex.mapping.output_index if ex.mapping else None, max_width=140)
    lowest = next((v.levels[0].dotted for v in ex.levels if v.valid), None)
    result = {
        "valid": ex.report.valid,
        "feature_level": level.dotted,
        "verdict": f"{'valid' if ex.report.valid else 'INVALID'} at {level.dotted}",
        "output_sizes": ex.report.output_sizes,
        "issues": [
            {"code": i.code, "severity": i.severity, "path": i.path, "message": i.message, "hint": i.hint}
            for i in ex.report.issues
        ],
        "levels": [
            {"levels": v.label, "valid": v.valid, "codes": sorted({i.code for i in v.issues})}
            for v in ex.levels
        ],
        "min_feature_level": lowest,
        "index_error": index_error,
        "input_padding_bytes": model.input_strip.padding_bytes if model and model.input_strip else None,
        "input_shared_slots": model.input_strip.shared_slots if model and model.input_strip else None,
        "output_shared_slots": model.output_strip.shared_slots if model and model.output_strip else None,
        "html": explanation_html(ex, model, with_assets=False),
    }
    if payload.get("exercise"):
        result["exercise"] = check_exercise(str(payload["exercise"]), ex, model, payload.get("guess"))
    return result


def new_descriptor(payload: Any) -> dict:
    """A correct descriptor for ``{"sizes": [...], "repeats": [...], "dtype": "FLOAT32"}`` (what
    ``dmltile new`` writes), for the page's "output from input x repeats" button."""
    try:
        desc = tile_desc(payload["sizes"], payload["repeats"], dtype=payload.get("dtype", "FLOAT32"))
    except (DmlTileError, ValueError, TypeError, KeyError) as e:
        return {"error": str(e) or type(e).__name__}
    return {"document": desc.to_dict()}


def _options(values: list[str], selected: str) -> str:
    return "".join(f"<option{' selected' if v == selected else ''}>{escape(v)}</option>" for v in values)


PAGE_CSS = """
body{margin:0;font-family:system-ui,-apple-system,Segoe UI,sans-serif;color:#1b1b1b}
header{background:#20304a;color:#fff;padding:.6em 1.2em}header h1{margin:0;font-size:1.25em}
main{display:grid;grid-template-columns:minmax(300px,360px) 1fr;gap:1.2em;padding:1em 1.2em}
form label{display:block;font-size:.85em;margin-top:.5em;color:#333}
form input,form select{width:100%;box-sizing:border-box;font:13px ui-monospace,Menlo,Consolas,monospace;
 padding:3px 5px}
fieldset{border:1px solid #ccc;margin:.6em 0;padding:.3em .7em .7em}legend{font-weight:bold}
#status{font-size:1.15em;font-weight:bold;padding:.4em .6em;border-radius:4px;background:#eee}
#status.ok{background:#e3f4e6;color:#1b6b2a}#status.bad{background:#fde7ea;color:#a0001c}
#hints{margin:.4em 0 1em;padding-left:1.2em}#hints li{margin:.2em 0}
.exercise{border:1px solid #ccd;border-radius:4px;padding:.4em .6em;margin:.4em 0;background:#f7f8fc}
.exercise button{margin-top:.3em}#exercise-box{background:#fff8e1;border:1px solid #e0c060;padding:.6em;
 border-radius:4px;margin-bottom:.8em;display:none}
body.veil-result #result,body.veil-result #hints,body.veil-output #out-fieldset{filter:blur(7px);user-select:none}
pre#doc-json{font-size:11px;background:#f5f5f5;padding:.4em;max-height:14em;overflow:auto}
"""

PAGE_JS = """
var $ = function(id){ return document.getElementById(id); };
var EXERCISES = __EXERCISES__;
var current = null, revealed = false, timer = null, seq = 0;
function tokens(text){
  return text.split(/[\\s,]+/).filter(function(t){ return t.length; }).map(function(t){
    return /^-?\\d+$/.test(t) ? Number(t) : t; });
}
function tensor(prefix){
  var d = {DataType: $('dtype').value, Sizes: tokens($(prefix + '-sizes').value)};
  if (!$(prefix + '-sizes').value.trim()) delete d.Sizes;
  var st = $(prefix + '-strides').value.trim(); d.Strides = st ? tokens(st) : null;
  var b = $(prefix + '-bytes').value.trim(); if (b) d.TotalTensorSizeInBytes = /^\\d+$/.test(b) ? Number(b) : b;
  return {Type: 'DML_TENSOR_TYPE_BUFFER', Desc: d};
}
function documentFromForm(){
  return {Type: 'DML_OPERATOR_TILE', Desc: {InputTensor: tensor('in'), OutputTensor: tensor('out'),
          Repeats: tokens($('repeats').value)}};
}
function fillForm(doc, level){
  var i = doc.Desc.InputTensor.Desc, o = doc.Desc.OutputTensor.Desc;
  $('dtype').value = i.DataType.replace('DML_TENSOR_DATA_TYPE_', '');
  $('in-sizes').value = i.Sizes.join(', '); $('in-strides').value = i.Strides ? i.Strides.join(', ') : '';
  $('in-bytes').value = ('TotalTensorSizeInBytes' in i) ? i.TotalTensorSizeInBytes : '';
  $('out-sizes').value = o.Sizes.join(', '); $('out-strides').value = o.Strides ? o.Strides.join(', ') : '';
  $('out-bytes').value = ('TotalTensorSizeInBytes' in o) ? o.TotalTensorSizeInBytes : '';
  $('repeats').value = doc.Desc.Repeats.join(', ');
  if (level) $('level').value = level;
  $('index').value = '';
}
function post(url, body){
  return fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'},
                     body: JSON.stringify(body)}).then(function(r){ return r.json(); });
}
function update(guess){
  var doc = documentFromForm();
  $('doc-json').textContent = JSON.stringify(doc, null, 1);
  var idx = $('index').value.trim();
  var body = {document: doc, feature_level: $('level').value, index: idx ? tokens(idx) : null,
              exercise: current ? current.id : null, guess: guess === undefined ? null : guess};
  var mine = ++seq;
  return post('api/explain', body).then(function(r){
    if (mine !== seq) return;
    var status = $('status'), hints = $('hints');
    hints.innerHTML = '';
    if (r.error){ status.textContent = r.error; status.className = 'bad'; return; }
    status.textContent = r.verdict + (r.min_feature_level ? ' (lowest level that accepts it: ' +
      r.min_feature_level + ')' : ' (no feature level accepts it)');
    status.className = r.valid ? 'ok' : 'bad';
    r.issues.forEach(function(i){
      var li = document.createElement('li'); li.className = 'hint-item ' + i.severity;
      li.textContent = i.code + ' ' + (i.path || '<document>') + ': ' + i.message + (i.hint ? '  fix: ' + i.hint : '');
      hints.appendChild(li);
    });
    if (r.index_error){ var li = document.createElement('li'); li.textContent = 'index: ' + r.index_error;
      hints.appendChild(li); }
    $('result').innerHTML = r.html;
    if (r.exercise && (r.exercise.message || r.exercise.solved)) $('exercise-status').textContent = r.exercise.message;
  });
}
function veil(parts){
  ['result', 'output'].forEach(function(p){ document.body.classList.toggle('veil-' + p, parts.indexOf(p) >= 0); });
}
function schedule(){ clearTimeout(timer); timer = setTimeout(function(){ update(); }, 200); }
function loadExercise(n){
  current = EXERCISES[n]; revealed = false; veil([]);
  fillForm(current.document, current.level);
  $('exercise-box').style.display = 'block';
  $('exercise-title').textContent = current.title; $('exercise-text').textContent = current.text;
  $('exercise-status').textContent = '';
  $('guess-row').style.display = current.kind === 'guess' ? 'block' : 'none';
  $('guess').value = '';
  veil(current.hide || []);
  update();
}
document.addEventListener('DOMContentLoaded', function(){
  document.querySelectorAll('form input, form select').forEach(function(el){
    el.addEventListener('input', schedule); el.addEventListener('change', schedule); });
  $('match').addEventListener('click', function(ev){
    ev.preventDefault();
    post('api/new', {sizes: tokens($('in-sizes').value), repeats: tokens($('repeats').value),
                     dtype: $('dtype').value}).then(function(r){
      if (r.error){ $('status').textContent = r.error; $('status').className = 'bad'; return; }
      var o = r.document.Desc.OutputTensor.Desc;
      $('out-sizes').value = o.Sizes.join(', '); $('out-strides').value = ''; $('out-bytes').value = '';
      update();
    });
  });
  $('reveal').addEventListener('click', function(ev){
    ev.preventDefault(); revealed = true; veil([]); update($('guess').value);
  });
  document.querySelectorAll('[data-exercise]').forEach(function(b){
    b.addEventListener('click', function(ev){ ev.preventDefault(); loadExercise(+b.dataset.exercise); }); });
  fillForm(__START__, '6.4');
  update();
});
"""


def playground_page() -> str:
    """The playground: the form, the exercises, and where the server's answers are shown."""
    levels = [lv.dotted for lv in known_levels()]
    dtypes = [d.name for d in DataType if d.name != "UNKNOWN"]
    start = _doc([1, 1, 2, 3], [1, 1, 3, 3])

    def field(id_: str, label: str, hint: str = "") -> str:
        return f'<label for="{id_}">{label}</label><input id="{id_}" autocomplete="off" placeholder="{hint}">'

    exercises = "".join(
        f'<div class="exercise"><b>{escape(e["title"])}</b><br>'
        f'<button data-exercise="{n}" id="ex-{e["id"]}">Try it</button></div>'
        for n, e in enumerate(EXERCISES)
    )
    form = (
        '<form id="desc-form" autocomplete="off">'
        f'<label for="dtype">DataType (both tensors)</label><select id="dtype">{_options(dtypes, "FLOAT32")}</select>'
        f'<label for="level">Feature level</label><select id="level">{_options(levels, DEFAULT_FEATURE_LEVEL)}</select>'
        "<fieldset><legend>InputTensor</legend>"
        + field("in-sizes", "Sizes", "1, 1, 2, 3")
        + field("in-strides", "Strides (empty = null, packed)", "packed")
        + field("in-bytes", "TotalTensorSizeInBytes (empty = computed)", "computed")
        + "</fieldset>"
        + field("repeats", "Repeats", "1, 1, 3, 3")
        + '<fieldset id="out-fieldset"><legend>OutputTensor</legend>'
        + field("out-sizes", "Sizes", "1, 1, 6, 9")
        + field("out-strides", "Strides (empty = null, packed)", "packed")
        + field("out-bytes", "TotalTensorSizeInBytes (empty = computed)", "computed")
        + '<button id="match">Output = input × repeats</button></fieldset>'
        + field("index", "Follow one output index (optional)", "0, 0, 4, 7")
        + "</form>"
    )
    js = PAGE_JS.replace("__EXERCISES__", json.dumps(EXERCISES)).replace("__START__", json.dumps(start))
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>dmltile playground</title>'
        f"<style>{PAGE_CSS}{CSS}</style><script>{SCRIPT}</script><script>{js}</script></head><body>"
        "<header><h1>dmltile playground: DirectML Tile (DML_TILE_OPERATOR_DESC)</h1></header><main>"
        f"<section>{form}<h3>Exercises</h3>{exercises}"
        '<h3>The document sent</h3><pre id="doc-json"></pre></section>'
        '<section><div id="exercise-box"><b id="exercise-title"></b><p id="exercise-text"></p>'
        '<div id="guess-row"><input id="guess" placeholder="your answer"> <button id="reveal">Reveal</button></div>'
        '<p id="exercise-status"></p></div>'
        '<div id="status">…</div><ul id="hints"></ul><div id="result"></div></section>'
        "</main></body></html>\n"
    )


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


__all__ = ["EXERCISES", "check_exercise", "make_server", "new_descriptor", "playground_page", "respond"]
