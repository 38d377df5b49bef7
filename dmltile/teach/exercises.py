"""The playground's guided exercises: what to do, the descriptor each starts from, and whether an
answer solves it, judged here (never in the page's JavaScript). A guess is judged against the
exercise's own descriptor, explained and drawn as the command line does; a goal against the
explanation of the descriptor the person sent."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from ..core.tensor import element_offsets
from ..validate.api import validate
from ..validate.build import tile_desc
from ..validate.levels import known_levels, tile_row
from .explain import Explanation, explain
from .form import form_fields, whole_number
from .picture import Picture, build_picture


def form_document(sizes, repeats, dtype="FLOAT32", strides=None) -> dict:
    """A correct descriptor with its byte sizes left out (the form shows them as "computed", so
    editing sizes or the data type never leaves a stale byte size behind)."""
    d = tile_desc(sizes, repeats, dtype=dtype).to_dict()
    d["Desc"]["InputTensor"]["Desc"]["Strides"] = strides
    for tensor in ("InputTensor", "OutputTensor"):
        d["Desc"][tensor]["Desc"].pop("TotalTensorSizeInBytes")
    return d


def _exercise(id_: str, title: str, text: str, document: dict, level: str, kind: str, **rest: Any) -> dict:
    """One exercise, with its starting descriptor both as a document and as the form's fields."""
    return {
        "id": id_,
        "title": title,
        "text": text,
        "document": document,
        "form": form_fields(document),
        "level": level,
        "kind": kind,
        **rest,
    }


_INT64_2D = form_document([2, 3], [2, 2], "INT64")


def _valid_at_1_0_text(document: dict) -> str:
    """The exercise's text, its facts read from the Tile support table and the validator."""
    first = known_levels()[0]
    takes = tile_row(first).tensors["InputTensor"]
    lowest = next(lv.dotted for lv in known_levels() if validate(document, lv).valid)
    return (
        f"A 2-D INT64 Tile is valid from feature level {lowest}, but {first.dotted} takes only "
        f"{takes.dims_text()}-D {' and '.join(d.name for d in takes.data_types)} tensors. Edit it until "
        f"the verdict at {first.dotted} is valid (the hints say how)."
    )


# Each exercise: what to do, the descriptor it starts from, the level, its kind ("guess": typed,
# then revealed; "goal": edit the form until it is solved) and the parts of the page that would give
# a guess away until it is made ("result": the pictures and hints; "output": the output's fields and
# the document sent).
EXERCISES: list[dict[str, Any]] = [
    _exercise(
        "predict",
        "Predict the output size",
        "Input Sizes [2, 1, 3], Repeats [3, 1, 1]. What are the OutputTensor's Sizes? "
        "Type your answer (e.g. 1,2,3), then reveal.",
        form_document([2, 1, 3], [3, 1, 1]),
        "6.4",
        "guess",
        hide=["result", "output"],
    ),
    _exercise(
        "valid-1.0",
        "Make this descriptor valid at 1.0",
        _valid_at_1_0_text(_INT64_2D),
        _INT64_2D,
        "1.0",
        "goal",
    ),
    _exercise(
        "padding",
        "How many input bytes are never read?",
        "This input's rows are 4 elements apart but hold 3, and both planes share one memory "
        "(Strides [0, 0, 4, 1]). How many of its TotalTensorSizeInBytes are padding? Guess, then reveal.",
        form_document([1, 2, 2, 3], [1, 1, 2, 2], strides=[0, 0, 4, 1]),
        "6.4",
        "guess",
        hide=["result"],
    ),
    _exercise(
        "broadcast",
        "Broadcast one row",
        "Change only the InputTensor's Strides so that both input rows read the same 3 elements "
        "in memory (one element read for two), keeping the descriptor valid.",
        form_document([1, 1, 2, 3], [1, 1, 3, 3]),
        "6.4",
        "goal",
    ),
]
_BY_ID = {e["id"]: e for e in EXERCISES}


@cache
def _own(exercise_id: str) -> tuple[Explanation, Picture | None]:
    """The exercise's own descriptor, explained and drawn: what its question is about."""
    exercise = _BY_ID[exercise_id]
    ex = explain(exercise["document"], exercise["level"])
    assert ex.desc is not None, f"exercise {exercise_id} starts from an unreadable descriptor"
    return ex, build_picture(ex.desc, None)


def said_numbers(guess: str) -> list[int] | None:
    """The whole numbers of a guess written as a list ("4, 9", "[1 1 6 9]", "(2,3)"), or None for
    anything else. Read token by token, each character once (no backtracking on runs of spaces)."""
    text = guess.strip()
    text = text[1:] if text[:1] in ("[", "(") else text
    text = text[:-1] if text[-1:] in ("]", ")") else text
    numbers: list[int] = []
    after_comma = False
    for token in text.replace(",", " , ").split():
        if token == ",":
            if not numbers or after_comma:
                return None
            after_comma = True
            continue
        number = whole_number(token)
        if number is None:
            return None
        numbers.append(number)
        after_comma = False
    return numbers if numbers and not after_comma else None


def said_byte_count(guess: str) -> int | None:
    """The count of a guess written as a number of bytes ("8", "8 bytes", "8B"), or None."""
    text = guess.strip()
    lower = text.lower()
    for unit in ("bytes", "byte", "b"):
        if lower.endswith(unit):
            text = text[: -len(unit)].rstrip()
            break
    return whole_number(text) if not text.startswith("-") else None


def _predict(guess: str) -> tuple[bool, str]:
    ex, _ = _own("predict")
    assert ex.desc is not None and ex.report.output_sizes is not None
    ok = said_numbers(guess) == ex.report.output_sizes
    answer = (
        f"Sizes {list(ex.desc.input.sizes)} x Repeats {list(ex.desc.repeats)}, size by size: "
        f"OutputTensor.Sizes = {ex.report.output_sizes}."
    )
    return ok, answer


def _padding(guess: str) -> tuple[bool, str]:
    _, model = _own("padding")
    strip = model.input_strip if model is not None else None
    assert strip is not None, "the padding exercise's input is drawn as a strip"
    note = next((n for n in strip.notes if n.startswith("Padding:")), "Padding: none.")
    return said_byte_count(guess) == strip.padding_bytes, note


_GUESSES = {"predict": _predict, "padding": _padding}


def _valid_at_1_0(ex: Explanation) -> tuple[bool, str]:
    level = ex.report.feature_level.dotted if ex.report.feature_level else "?"
    if ex.report.valid and level == "1.0":
        return True, "Solved: valid at 1.0."
    return (
        False,
        f"Not yet: {'valid' if ex.report.valid else 'INVALID'} at {level}; the goal is valid at 1.0.",
    )


def _kept(ex: Explanation) -> bool:
    """Whether all but the input's Strides (and byte sizes) are as the exercise started."""
    start, _ = _own("broadcast")
    d, s = ex.desc, start.desc
    assert d is not None and s is not None
    return (
        list(d.input.sizes) == list(s.input.sizes)
        and list(d.repeats) == list(s.repeats)
        and list(d.output.sizes) == list(s.output.sizes)
        and (d.input.data_type, d.output.data_type) == (s.input.data_type, s.output.data_type)
        and d.output.strides == s.output.strides
    )


def _broadcast(ex: Explanation) -> tuple[bool, str]:
    if ex.desc is None or not ex.report.valid:
        return False, "Not yet: the descriptor is INVALID (the hints say why); it must stay valid."
    if not _kept(ex):
        return False, "Not yet: change only the InputTensor's Strides; the rest must stay as it started."
    # Where each input element sits, as [.., row, column]: the rows share their bytes when every row
    # reaches the same slots, and a row holds 3 elements when its columns reach different slots.
    offsets = element_offsets(ex.desc.input.sizes, ex.desc.input.effective_strides)
    rows = offsets.reshape(-1, *ex.desc.input.sizes[-2:])[0]
    rows_share = bool(np.all(rows == rows[0]))
    columns_differ = len(np.unique(rows[0])) == rows.shape[1]
    if rows_share and columns_differ:
        return True, (
            f"Solved: both input rows read the same {rows.shape[1]} elements (slots {rows[0].tolist()}): "
            "each is read for two rows."
        )
    if rows_share:
        return False, "Not yet: the rows share their bytes, but so do the columns: a row reads one element."
    if not columns_differ:
        return False, "Not yet: the columns share their bytes (a row reads one element), not the rows."
    return False, "Not yet: the two rows read different elements."


_GOALS = {"valid-1.0": _valid_at_1_0, "broadcast": _broadcast}


def check_exercise(exercise_id: str, ex: Explanation, guess: str | None) -> dict:
    """Whether the answer solves the exercise: a guess (with the true answer, once guessed), or the
    descriptor sent, explained in ``ex``."""
    if exercise_id not in _BY_ID:
        return {"id": exercise_id, "solved": False, "message": "no such exercise"}
    if exercise_id in _GUESSES:
        if guess is None:
            return {"id": exercise_id, "solved": False, "message": ""}
        ok, answer = _GUESSES[exercise_id](guess)
        return {"id": exercise_id, "solved": ok, "message": ("Right! " if ok else "Not quite. ") + answer}
    ok, message = _GOALS[exercise_id](ex)
    return {"id": exercise_id, "solved": ok, "message": message}


__all__ = ["EXERCISES", "check_exercise", "form_document"]
