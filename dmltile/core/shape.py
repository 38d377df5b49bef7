"""The one output-shape function of Tile, shared by validation, execution and lowering."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

from ..errors import ArgumentError


def whole_numbers(name: str, values: Any, minimum: int | None = None) -> tuple[int, ...]:
    """``values`` as a tuple of ints (of at least ``minimum``, if given); ArgumentError naming
    ``name`` and the value when it is no sequence of whole numbers (a bool, a float, a string, NaN
    are none)."""
    if (
        isinstance(values, (str, bytes))
        or not isinstance(values, (Sequence, range))
        and not hasattr(values, "tolist")
    ):
        raise ArgumentError(f"{name} must be a sequence of whole numbers, not {_shown(values)}")
    out = []
    for k, v in enumerate(values.tolist() if hasattr(values, "tolist") else values):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ArgumentError(f"{name}[{k}] is {_shown(v)}; {name} holds whole numbers")
        if minimum is not None and int(v) < minimum:
            raise ArgumentError(f"{name}[{k}] is {int(v)}; {name} holds whole numbers of at least {minimum}")
        out.append(int(v))
    return tuple(out)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def tile_output_sizes(input_sizes: Sequence[int], repeats: Sequence[int]) -> tuple[int, ...]:
    """``output[i] = input[i] * repeats[i]`` (DML_TILE_OPERATOR_DESC, OutputTensor).

    Both sequences must have the same length and hold whole numbers; ArgumentError (a ValueError)
    otherwise. Values are plain Python ints, so products never overflow here: callers compare them
    with the limits they care about.
    """
    sizes, reps = whole_numbers("input_sizes", input_sizes), whole_numbers("repeats", repeats)
    if len(sizes) != len(reps):
        raise ArgumentError(f"{len(reps)} repeats for {len(sizes)} input dimensions")
    return tuple(s * r for s, r in zip(sizes, reps, strict=True))


def input_index(output_index: Sequence[int], input_sizes: Sequence[int]) -> tuple[int, ...]:
    """The input element an output element copies: ``in[k] = out[k] mod input_sizes[k]``.
    ArgumentError for indices below 0, sizes below 1 or sequences of different lengths."""
    index, sizes = (
        whole_numbers("output_index", output_index, 0),
        whole_numbers("input_sizes", input_sizes, 1),
    )
    if len(index) != len(sizes):
        raise ArgumentError(f"output_index has {len(index)} values for {len(sizes)} input_sizes")
    return tuple(o % s for o, s in zip(index, sizes, strict=True))


def wrapped_output_size(input_size: int, repeat: int) -> int:
    """``input_size * repeat`` as 32-bit arithmetic leaves it: every DirectML measured multiplies
    the two in 32 bits when it checks an output size, so this is the one it accepts past 2^32."""
    return (int(input_size) * int(repeat)) % (1 << 32)


def output_size_wraps(input_size: int, repeat: int, output_size: int) -> bool:
    """The product passes 2^32 and ``output_size`` is what is left after the wrap (not 0, which no
    tensor has)."""
    product = int(input_size) * int(repeat)
    return product >= 1 << 32 and 0 < int(output_size) == wrapped_output_size(input_size, repeat)
