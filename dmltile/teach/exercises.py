"""The playground's guided exercises: what to do, the descriptor each starts from, and whether what
the person sent solves it, judged here on the explanation of it (never in the page's JavaScript)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..validate.build import tile_desc
from .explain import Explanation
from .picture import Picture


def form_document(sizes, repeats, dtype="FLOAT32", strides=None) -> dict:
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
        "document": form_document([2, 1, 3], [3, 1, 1]),
        "level": "6.4",
        "kind": "guess",
        "hide": ["result", "output"],
    },
    {
        "id": "valid-1.0",
        "title": "Make this descriptor valid at 1.0",
        "text": "A 2-D INT64 Tile is fine at 4.1, but feature level 1.0 knows only 4-D FLOAT32 and "
        "FLOAT16. Edit it until the verdict at 1.0 is valid (the hints say how).",
        "document": form_document([2, 3], [2, 2], "INT64"),
        "level": "1.0",
        "kind": "goal",
    },
    {
        "id": "padding",
        "title": "How many input bytes are never read?",
        "text": "This input's rows are 4 elements apart but hold 3, and both planes share one memory "
        "(Strides [0, 0, 4, 1]). How many of its TotalTensorSizeInBytes are padding? Guess, then reveal.",
        "document": form_document([1, 2, 2, 3], [1, 1, 2, 2], strides=[0, 0, 4, 1]),
        "level": "6.4",
        "kind": "guess",
        "hide": ["result"],
    },
    {
        "id": "broadcast",
        "title": "Broadcast one row",
        "text": "Change only the InputTensor's Strides so that both input rows read the same 3 elements "
        "in memory (one element read for two), keeping the descriptor valid.",
        "document": form_document([1, 1, 2, 3], [1, 1, 3, 3]),
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


__all__ = ["EXERCISES", "check_exercise", "form_document"]
