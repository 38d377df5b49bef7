"""DML208: an output size that is the product wrapped at 2^32, which DirectML's 32-bit check accepts.

DirectML multiplies InputTensor.Sizes[i] by Repeats[i] in 32 bits when it checks the output's
size, so the size left after the wrap passes. Its shader then fills the output as it fills every
Tile: element j along the axis copies input element j mod InputTensor.Sizes[i], so the output
holds the first Sizes[i] elements of the tiling, not Repeats[i] copies of the input.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from ...core.enums import FeatureLevel
from ...core.operator import OperatorDesc
from ...core.shape import output_size_wraps
from ...core.tables import read_table
from ..report import Edit, Issue
from .citations import MEASURED, TILE_PAGE
from .edits import split_path
from .registry import Example, Words, found, rule
from .values import repeats_of, sizes_of


@functools.cache
def wrapping_versions() -> str:
    """The measured DirectML versions that accept a wrapped output size, as a range ("1.0.2006 to 1.15.4")."""
    rows = read_table("directml_versions.toml")["version"]
    found = sorted(
        (r["directml"].removesuffix(".0") for r in rows if r.get("output_size_wraps_32bit")),
        key=lambda v: tuple(int(p) for p in v.split(".")),
    )
    return f"{found[0]} to {found[-1]}" if found else "no version measured"


def whole_copies(input_size: int, output_size: int) -> int | None:
    """The repeat that makes the same output without the wrap: only when the output holds whole copies."""
    return output_size // input_size if output_size % input_size == 0 else None


def _fix_wrap(doc: Any, found: Issue, level: FeatureLevel) -> list[Edit] | None:
    """Repeats[i] = OutputTensor.Sizes[i] / InputTensor.Sizes[i]: the same elements, and a product
    that fits. A partial last copy has no Tile that makes it exactly: no fix then."""
    i = split_path(found.path)[-1]
    ins, reps, outs = sizes_of(doc, "InputTensor"), repeats_of(doc), sizes_of(doc, "OutputTensor")
    if not isinstance(i, int) or not ins or not reps or not outs or not 0 <= i < min(len(ins), len(outs)):
        return None
    rep = whole_copies(ins[i], outs[i]) if ins[i] else None
    return None if rep is None else [Edit(op="set", path=f"Desc.Repeats[{i}]", value=rep)]


@rule(
    "DML208",
    "OutputTensor.Sizes[i] is not InputTensor.Sizes[i] * Repeats[i] wrapped at 2^32",
    TILE_PAGE + f"; {MEASURED}: CreateOperator of every DirectML measured accepts the wrapped size, "
    "and the output holds element j mod InputTensor.Sizes[i] along the axis",
    severity="warning",
    why="DirectML checks OutputTensor.Sizes[i] against InputTensor.Sizes[i] * Repeats[i] computed in 32 "
    "bits, so a product past 2^32 wraps and the wrapped size passes. The descriptor is valid, but it "
    "does not describe Repeats[i] copies: the output is only as long as its Sizes say, each element "
    "copying the input's element at its index mod the input's size.",
    example=Example(
        {
            "InputTensor": {"DataType": "UINT8", "Sizes": [1, 1, 1, 2]},
            "OutputTensor": {"DataType": "UINT8", "Sizes": [1, 1, 1, 6]},
            "Repeats": [1, 1, 1, 2147483651],
        }
    ),
    fix=_fix_wrap,
    words={
        case: Words(
            "OutputTensor.Sizes[{axis}] is {out}: InputTensor.Sizes[{axis}] * Repeats[{axis}] = {n} * {rep} = "
            "{product} wrapped at 2^32. DirectML ({versions}) multiplies in 32 bits and accepts it; the output "
            "then holds {out:element} along axis {axis}, element j copying input element j mod {n} "
            f"({{copies:whole copy|whole copies}} of the input{holds}), not {{rep:copy|copies}}",
            hint,
        )
        for case, holds, hint in (
            ("", "", "set Repeats[{axis}] to {copies}: the same output, with a product that does not wrap"),
            (
                "partial",
                " and its first {rest:element}",
                "no Tile without the wrap makes exactly this output ({out} is not a multiple of "
                "{n}); Repeats[{axis}] = {more} with OutputTensor.Sizes[{axis}] = {longer} makes them and "
                "then the rest of the last copy",
            ),
        )
    },
    field="OutputTensor",
    limit="a size equal to InputTensor.Sizes[i] * Repeats[i] wrapped at 2^32 is accepted, with a warning",
)
def check_wrapped_output_sizes(desc: OperatorDesc) -> Iterator[Issue]:
    ins, reps, outs = desc.input.sizes, desc.repeats, desc.output.sizes
    if not len(ins) == len(reps) == len(outs):
        return
    for i in range(len(ins)):
        n, out = ins[i], outs[i]
        if output_size_wraps(n, reps[i], out):
            copies, rest = divmod(out, n)
            yield found(
                "DML208",
                f"Desc.OutputTensor.Desc.Sizes[{i}]",
                "partial" if rest else "",
                axis=i,
                n=n,
                rep=reps[i],
                out=out,
                product=n * reps[i],
                versions=wrapping_versions(),
                copies=copies,
                rest=rest,
                more=copies + 1,
                longer=n * (copies + 1),
            )
