"""The playground page of ``dmltile serve`` and the answers to its two requests: a person edits a
descriptor and sees the verdict, the hints and the pictures update, with guided exercises.

The page (``static/playground.js``) only posts the form's fields as typed; the descriptor document
is built from them here (``form``) and everything the page shows is computed here, by the same
validator and explainer as the command line (no second implementation in JavaScript).
``respond`` and ``new_descriptor`` are plain functions, tested without a server;
``server.make_server`` serves them.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from ..core.enums import DataType, FeatureLevel
from ..errors import DmlTileError
from ..validate.build import tile_desc
from ..validate.levels import DEFAULT_FEATURE_LEVEL, known_levels, parse_feature_level
from .exercises import EXERCISES, check_exercise, form_document
from .explain import Explanation, explain, map_index
from .form import FORM_FIELDS, document_from_form, form_fields, tokens
from .html import CSS, SCRIPT, asset, explanation_html
from .picture import Picture, build_picture


class PayloadError(ValueError):
    """A request whose shape is wrong (not the descriptor's content, which the answer judges)."""


# What each key of an edit may hold: the descriptor itself is a JSON object, never a path or text, so
# nothing a request sends reaches the file system.
_EDIT_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "document": ((dict,), "the descriptor as a JSON object"),
    "form": ((dict,), "the form's fields as an object of texts"),
    "feature_level": ((str, type(None)), 'a level such as "4.1", or null'),
    "index": ((list, str, type(None)), "a list of output indices (or its text), or null"),
    "exercise": ((str, type(None)), "an exercise id, or null"),
    "guess": ((str, type(None)), "the guess as text, or null"),
}


def check_edit(payload: Any) -> dict:
    """The edit, when it is a JSON object whose keys hold what they should; PayloadError otherwise."""
    if not isinstance(payload, dict) or ("document" in payload) == ("form" in payload):
        raise PayloadError(
            'send a JSON object with a "document" key (the descriptor as a JSON object) '
            'or a "form" key (the form\'s fields), not both'
        )
    for key, value in payload.items():
        if key not in _EDIT_KEYS:
            raise PayloadError(f"unknown key {key[:40]!r}; an edit has {', '.join(_EDIT_KEYS)}")
        types, what = _EDIT_KEYS[key]
        if not isinstance(value, types):
            raise PayloadError(f"{key} must be {what}, not {type(value).__name__}")
    for name, text in payload.get("form", {}).items():
        if name not in FORM_FIELDS or not isinstance(text, str):
            raise PayloadError(
                f"form field {str(name)[:40]!r} is not one of {', '.join(FORM_FIELDS)} holding text"
            )
    return payload


def respond(payload: Any) -> dict:
    """The playground's answer to one edit: ``{"document": {...}`` or ``"form": {field: text}``,
    ``"feature_level": "1.0", "index": [0, 0, 4, 7] or "0, 0, 4, 7" or null, "exercise": id or null,
    "guess": text or null}`` -> the document judged, the verdict, the issues with their hints,
    per-level verdicts, memory facts and the HTML view. PayloadError when the edit itself is
    malformed (``check_edit``)."""
    payload = check_edit(payload)
    document = payload["document"] if "document" in payload else document_from_form(payload["form"])
    try:
        level = parse_feature_level(payload.get("feature_level") or DEFAULT_FEATURE_LEVEL)
    except ValueError as e:
        return {"error": str(e)}
    try:
        ex = explain(document, level)
    except (DmlTileError, ValueError) as e:
        return {"document": document, "error": str(e)}
    index_error = _follow_index(ex, payload.get("index"))
    model = None
    if ex.desc is not None:
        model = build_picture(ex.desc, ex.mapping.output_index if ex.mapping else None, max_width=140)
    result = {"document": document, **_verdict(ex, level), "index_error": index_error, **_memory_facts(model)}
    result["html"] = explanation_html(ex, model, with_assets=False)
    if payload.get("exercise"):
        result["exercise"] = check_exercise(str(payload["exercise"]), ex, payload.get("guess"))
    return result


def _follow_index(ex: Explanation, index: Any) -> str | None:
    """Follow one output index through the descriptor (``ex.mapping``); the error when it is no index."""
    if isinstance(index, str):
        index = tokens(index)
    if index and ex.desc is not None:
        try:
            ex.mapping = map_index(ex.desc, [int(v) for v in index])
        except (ValueError, TypeError) as e:
            return str(e)
    return None


def _verdict(ex: Explanation, level: FeatureLevel) -> dict:
    """The verdict at the level, its issues with their hints, and the verdict at every level."""
    return {
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
        "min_feature_level": next((v.levels[0].dotted for v in ex.levels if v.valid), None),
    }


def _memory_facts(model: Picture | None) -> dict:
    """What the pictures count: the input's padding bytes and the slots shared by several elements."""
    strip_in = model.input_strip if model else None
    strip_out = model.output_strip if model else None
    return {
        "input_padding_bytes": strip_in.padding_bytes if strip_in else None,
        "input_shared_slots": strip_in.shared_slots if strip_in else None,
        "output_shared_slots": strip_out.shared_slots if strip_out else None,
    }


def new_descriptor(payload: Any) -> dict:
    """A correct descriptor for ``{"sizes": [...], "repeats": [...], "dtype": "FLOAT32"}`` (what
    ``dmltile new`` writes; sizes and repeats may be typed text), as a document and as the form's
    fields, for the page's "output = input x repeats" button."""
    if not isinstance(payload, dict):
        raise PayloadError('send a JSON object with "sizes", "repeats" and optionally "dtype"')
    missing = [k for k in ("sizes", "repeats") if k not in payload]
    if missing:
        raise PayloadError(
            f"{' and '.join(repr(k) for k in missing)} missing: send the input's sizes and the repeats"
        )
    listed: dict[str, Any] = {
        k: tokens(v) if isinstance(v, str) else v for k, v in payload.items() if k in ("sizes", "repeats")
    }
    try:
        desc = tile_desc(listed["sizes"], listed["repeats"], dtype=payload.get("dtype", "FLOAT32"))
    except (DmlTileError, ValueError, TypeError, KeyError) as e:
        return {"error": str(e) or type(e).__name__}
    document = desc.to_dict()
    # The form's byte sizes stay empty (computed), so a later edit never leaves a stale one behind.
    return {"document": document, "form": {**form_fields(document), "in-bytes": "", "out-bytes": ""}}


def _options(values: list[str], selected: str) -> str:
    return "".join(f"<option{' selected' if v == selected else ''}>{escape(v)}</option>" for v in values)


def _json_in_script(data: Any) -> str:
    """JSON that can sit inside a <script> element: no "</" can close it early."""
    return json.dumps(data).replace("</", "<\\/")


def playground_page() -> str:
    """The playground: the form, the exercises, and where the server's answers are shown."""
    levels = [lv.dotted for lv in known_levels()]
    dtypes = [d.name for d in DataType if d.name != "UNKNOWN"]
    start = form_fields(form_document([1, 1, 2, 3], [1, 1, 3, 3]))

    def field(id_: str, label: str, hint: str = "") -> str:
        return f'<label for="{id_}">{label}</label><input id="{id_}" autocomplete="off" placeholder="{hint}">'

    def tensor(prefix: str, name: str, sizes: str) -> str:
        return (
            f"<legend>{name}</legend>"
            f'<label for="{prefix}-dtype">DataType</label>'
            f'<select id="{prefix}-dtype">{_options(dtypes, "FLOAT32")}</select>'
            + field(f"{prefix}-sizes", "Sizes", sizes)
            + field(f"{prefix}-strides", "Strides (empty = null, packed)", "packed")
            + field(f"{prefix}-bytes", "TotalTensorSizeInBytes (empty = computed)", "computed")
        )

    exercises = "".join(
        f'<div class="exercise"><b>{escape(e["title"])}</b><br>'
        f'<button data-exercise="{n}" id="ex-{e["id"]}">Try it</button></div>'
        for n, e in enumerate(EXERCISES)
    )
    form = (
        '<form id="desc-form" autocomplete="off">'
        f'<label for="level">Feature level</label><select id="level">{_options(levels, DEFAULT_FEATURE_LEVEL)}</select>'
        f"<fieldset>{tensor('in', 'InputTensor', '1, 1, 2, 3')}</fieldset>"
        + field("repeats", "Repeats", "1, 1, 3, 3")
        + f'<fieldset id="out-fieldset">{tensor("out", "OutputTensor", "1, 1, 6, 9")}'
        + '<button id="match">Output = input × repeats</button></fieldset>'
        + field("index", "Follow one output index (optional)", "0, 0, 4, 7")
        + "</form>"
    )
    data = _json_in_script({"exercises": EXERCISES, "fields": FORM_FIELDS, "start": start, "level": "6.4"})
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>dmltile playground</title>'
        f"<style>{asset('playground.css')}{CSS}</style><script>{SCRIPT}</script>"
        f'<script id="playground-data" type="application/json">{data}</script>'
        f"<script>{asset('playground.js')}</script></head><body>"
        "<header><h1>dmltile playground: DirectML Tile (DML_TILE_OPERATOR_DESC)</h1></header><main>"
        f"<section>{form}<h3>Exercises</h3>{exercises}"
        '<h3>The document sent</h3><pre id="doc-json"></pre></section>'
        '<section><div id="exercise-box"><b id="exercise-title"></b><p id="exercise-text"></p>'
        '<div id="guess-row"><input id="guess" placeholder="your answer"> <button id="reveal">Reveal</button></div>'
        '<p id="veil-note">What would give the answer away is hidden until you reveal it.</p>'
        '<p id="exercise-status"></p></div>'
        '<div id="status">…</div><ul id="hints"></ul><div id="result"></div></section>'
        "</main></body></html>\n"
    )


__all__ = ["new_descriptor", "playground_page", "respond"]
