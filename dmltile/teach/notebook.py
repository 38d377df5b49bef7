"""How descriptors, reports and explanations look in a notebook (``_repr_html_``), in rich
(``__rich__``) and in a REPL (``__repr__``).

The models of the lower layers know nothing of rich or HTML; ``register_displays()`` (called when
``dmltile.teach`` is imported, which ``import dmltile`` does) attaches these methods to them.
"""

from __future__ import annotations

import html
from typing import Any

from rich import box
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from ..core.operator import OperatorDesc
from ..validate.report import ValidationReport
from .explain import Explanation
from .html import explanation_html
from .render import render, to_text


def _rows(obj: Any) -> tuple[str, list[str], list[list[str]]]:
    """(caption, header, rows) for an OperatorDesc or a ValidationReport."""
    if isinstance(obj, OperatorDesc):
        rows = []
        for name, t in (("InputTensor", obj.input), ("OutputTensor", obj.output)):
            rows.append(
                [
                    name,
                    t.data_type.name,
                    str(list(t.sizes)),
                    "null (packed)" if t.strides is None else str(list(t.strides)),
                    str(t.total_tensor_size_in_bytes),
                    t.flags.name,
                ]
            )
        caption = f"DML_OPERATOR_TILE: Repeats {list(obj.repeats)} (RepeatsCount {obj.desc.repeats_count})"
        return caption, ["tensor", "DataType", "Sizes", "Strides", "TotalTensorSizeInBytes", "Flags"], rows
    level = obj.feature_level.c_name if obj.feature_level else "an unknown feature level"
    caption = f"{'valid' if obj.valid else 'INVALID'} at {level}" + (
        f", output Sizes {obj.output_sizes}" if obj.output_sizes is not None else ""
    )
    rows = [[i.code, i.severity, i.path or "<document>", i.message, i.hint] for i in obj.issues]
    return caption, ["code", "severity", "path", "message", "fix"], rows


def to_html(obj: Any) -> str:
    """An HTML table (escaped) with a caption, for Jupyter."""
    caption, header, rows = _rows(obj)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return (
        f"<table><caption style='text-align:left'><b>{html.escape(caption)}</b></caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def to_rich(obj: Any) -> Table:
    """The same table for rich consoles."""
    caption, header, rows = _rows(obj)
    table = Table(title=caption, title_justify="left", box=box.SIMPLE_HEAD)
    for h in header:
        table.add_column(h, overflow="fold", no_wrap=h in ("code", "tensor", "DataType", "Flags"))
    for row in rows:
        table.add_row(*(Text(c) for c in row))
    return table


def short_repr(obj: Any) -> str:
    """One readable line: ``<OperatorDesc FLOAT32 [1, 1, 2, 3] x [1, 1, 3, 3] -> [1, 1, 6, 9]>``."""
    if isinstance(obj, OperatorDesc):
        return (
            f"<OperatorDesc {obj.input.data_type.name} {list(obj.input.sizes)} x {list(obj.repeats)}"
            f" -> {list(obj.output.sizes)}>"
        )
    level = obj.feature_level.dotted if obj.feature_level else "?"
    codes = ", ".join(obj.codes)
    return f"<ValidationReport {'valid' if obj.valid else 'INVALID'} at {level}" + (
        f": {codes}>" if codes else ">"
    )


def register_displays() -> None:
    """Give OperatorDesc and ValidationReport an HTML table, a rich table and a one-line repr, and
    Explanation its rich rendering, plain text and interactive HTML view."""
    # Display hooks patched onto classes from modules that cannot import this one (lower layers, and
    # explain.py, which render.py imports): the type system has no way to declare attributes and
    # methods added at run time, hence the ignores.
    for cls in (OperatorDesc, ValidationReport):
        cls._repr_html_ = to_html  # type: ignore[union-attr]
        cls.__rich__ = to_rich  # type: ignore[union-attr]
        cls.__repr__ = short_repr  # type: ignore[method-assign]
    Explanation.__rich__ = _explanation_rich  # type: ignore[attr-defined]
    Explanation.__str__ = _explanation_text  # type: ignore[method-assign, assignment]
    Explanation._repr_html_ = _explanation_html  # type: ignore[attr-defined]


def _explanation_rich(ex: Explanation) -> RenderableType:
    return render(ex)


def _explanation_html(ex: Explanation) -> str:
    """The same page as ``dmltile explain --html`` (grids, buffers, hover), for Jupyter."""
    return explanation_html(ex)


def _explanation_text(ex: Explanation) -> str:
    return to_text(ex)
