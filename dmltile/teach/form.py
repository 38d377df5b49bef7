"""The playground's form, both ways: the fields a person typed into a descriptor document, and a
document back into fields. The page only posts the fields' text; the document is built here, in its
canonical wrapped shape by ``core.layout.wrap_document``, so that no second spelling of the document
lives in the page's JavaScript."""

from __future__ import annotations

from typing import Any

from ..core.layout import wrap_document

# The form's fields, by element id, per tensor ("in-", "out-") and the operator's Repeats.
TENSOR_FIELDS = ("dtype", "sizes", "strides", "bytes")
FORM_FIELDS: tuple[str, ...] = (
    *(f"in-{f}" for f in TENSOR_FIELDS),
    "repeats",
    *(f"out-{f}" for f in TENSOR_FIELDS),
)
_DTYPE_PREFIX = "DML_TENSOR_DATA_TYPE_"


# Digits a whole number typed into the form may have: any UINT64 fits in 20; longer ones stay text
# (and are named by the validator), so that no conversion of a huge number string is ever attempted.
MAX_DIGITS = 40


def whole_number(text: str) -> int | None:
    """``text`` as a whole number (ASCII digits, an optional minus sign), else None: "²" and other
    characters Unicode counts as digits are text, not numbers."""
    digits = text.removeprefix("-")
    ok = 0 < len(digits) <= MAX_DIGITS and digits.isascii() and digits.isdigit()
    return int(text) if ok else None


def tokens(text: str) -> list[int | str]:
    """A list typed as text ("1, 1, 2 3"): whole numbers become ints; anything else stays text, so
    that the validator names the field and the value rather than the form dropping it."""
    return [t if (n := whole_number(t)) is None else n for t in text.replace(",", " ").split()]


def _tensor(form: dict[str, str], prefix: str) -> dict[str, Any]:
    """One tensor's buffer desc from its fields: empty Strides are null (packed), an empty byte size
    is left out (computed)."""
    desc: dict[str, Any] = {"DataType": form.get(f"{prefix}-dtype", "").strip()}
    sizes = form.get(f"{prefix}-sizes", "").strip()
    if sizes:
        desc["Sizes"] = tokens(sizes)
    strides = form.get(f"{prefix}-strides", "").strip()
    desc["Strides"] = tokens(strides) if strides else None
    size = form.get(f"{prefix}-bytes", "").strip()
    if size:
        number = whole_number(size)
        desc["TotalTensorSizeInBytes"] = size if number is None or number < 0 else number
    return desc


def document_from_form(form: dict[str, str]) -> dict:
    """The descriptor document the form describes, wrapped as every document is read."""
    bare = {
        "InputTensor": _tensor(form, "in"),
        "OutputTensor": _tensor(form, "out"),
        "Repeats": tokens(form.get("repeats", "")),
    }
    return wrap_document(bare)


def _listed(values: Any) -> str:
    return "" if values is None else ", ".join(str(v) for v in values)


def form_fields(document: dict) -> dict[str, str]:
    """The form's fields showing a wrapped descriptor document (its byte sizes, when absent, empty)."""
    fields = {"repeats": _listed(document["Desc"]["Repeats"])}
    for prefix, name in (("in", "InputTensor"), ("out", "OutputTensor")):
        t = document["Desc"][name]["Desc"]
        fields[f"{prefix}-dtype"] = str(t["DataType"]).removeprefix(_DTYPE_PREFIX)
        fields[f"{prefix}-sizes"] = _listed(t["Sizes"])
        fields[f"{prefix}-strides"] = _listed(t.get("Strides"))
        fields[f"{prefix}-bytes"] = str(t.get("TotalTensorSizeInBytes", ""))
    return {k: fields[k] for k in FORM_FIELDS}


__all__ = ["FORM_FIELDS", "document_from_form", "form_fields", "tokens"]
