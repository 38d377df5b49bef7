"""The one output-shape function of Tile, shared by validation, execution and lowering."""

from __future__ import annotations

from collections.abc import Sequence


def tile_output_sizes(input_sizes: Sequence[int], repeats: Sequence[int]) -> tuple[int, ...]:
    """``output[i] = input[i] * repeats[i]`` (DML_TILE_OPERATOR_DESC, OutputTensor).

    Both sequences must have the same length; ValueError otherwise. Values are plain Python ints,
    so products never overflow here: callers compare them with the limits they care about.
    """
    if len(input_sizes) != len(repeats):
        raise ValueError(f"{len(repeats)} repeats for {len(input_sizes)} input dimensions")
    return tuple(int(s) * int(r) for s, r in zip(input_sizes, repeats, strict=False))


def input_index(output_index: Sequence[int], input_sizes: Sequence[int]) -> tuple[int, ...]:
    """The input element an output element copies: ``in[k] = out[k] mod input_sizes[k]``."""
    return tuple(int(o) % int(s) for o, s in zip(output_index, input_sizes, strict=False))


def wrapped_output_size(input_size: int, repeat: int) -> int:
    """``input_size * repeat`` as 32-bit arithmetic leaves it: every DirectML measured multiplies
    the two in 32 bits when it checks an output size, so this is the one it accepts past 2^32."""
    return (int(input_size) * int(repeat)) % (1 << 32)


def output_size_wraps(input_size: int, repeat: int, output_size: int) -> bool:
    """The product passes 2^32 and ``output_size`` is what is left after the wrap (not 0, which no
    tensor has)."""
    product = int(input_size) * int(repeat)
    return product >= 1 << 32 and 0 < int(output_size) == wrapped_output_size(input_size, repeat)
