"""``numpy.tile(A, reps)`` as a Tile node.

Source: numpy.tile's documentation (numpy.org/doc/stable/reference/generated/numpy.tile.html):
"The number of dimensions of the result is max(d, A.ndim)"; if ``A.ndim < d`` A is promoted "by
prepending new axes", if ``A.ndim > d`` reps is promoted "by pre-pending 1's to it". Behaviour past
the page is NumPy's implementation (numpy/lib/_shape_base_impl.py), checked by the tests against
numpy.tile itself: a scalar ``reps`` is one repeat; negative repeats fail with "negative dimensions
are not allowed" unless they multiply a zero-length axis; float repeats fail ("'float' object
cannot be interpreted as an integer") unless every repeat equals 1 (then tile returns a copy).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.shape import tile_output_sizes
from ..errors import FrameworkError
from .framework import FrameworkTile, check_shape, element_count, itemsize, promote_ranks

OP = "numpy.tile"
INTP_MAX = int(np.iinfo(np.intp).max)


def _reps_tuple(reps: Any) -> tuple:
    if isinstance(reps, np.ndarray) and reps.ndim > 1:
        raise FrameworkError(
            f"{OP}: reps has shape {list(reps.shape)}; it must be an integer or a 1-D sequence of integers"
        )
    if isinstance(reps, (str, bytes)):
        raise FrameworkError(f"{OP}: reps is {reps!r}; it must be an integer or a 1-D sequence of integers")
    if isinstance(reps, np.ndarray):
        return tuple(reps.tolist()) if reps.ndim == 1 else (reps.item(),)
    return tuple(reps) if isinstance(reps, Sequence) else (reps,)


def numpy_tile(input_shape: Any, reps: Any, dtype: str) -> FrameworkTile:
    """Apply numpy.tile's rules to a shape; FrameworkError where numpy.tile raises."""
    shape = check_shape(OP, input_shape)
    tup = _reps_tuple(reps)
    for i, r in enumerate(tup):
        if not isinstance(r, (numbers.Real, np.bool_)):
            raise FrameworkError(f"{OP}: reps[{i}] is {r!r}; repeats are integers")
    if any(not isinstance(r, (numbers.Integral, np.bool_)) for r in tup):
        if not all(r == 1 for r in tup):
            bad = next(r for r in tup if not isinstance(r, (numbers.Integral, np.bool_)))
            raise FrameworkError(
                f"{OP}: reps holds {bad!r}; '{type(bad).__name__}' object cannot be interpreted as an "
                "integer (only an all-ones reps may be floats)"
            )
    given = tuple(int(r) for r in tup)
    promoted_shape, promoted_reps, steps = promote_ranks(OP, shape, given, "A", "reps")
    for i, (s, r) in enumerate(zip(promoted_shape, promoted_reps, strict=False)):
        if r < 0 and s > 0:
            raise FrameworkError(
                f"{OP}: reps {list(given)} holds {r} for axis {i} of size {s}: negative dimensions "
                "are not allowed"
            )
    effective = tuple(max(r, 0) for r in promoted_reps)
    out = list(tile_output_sizes(promoted_shape, effective))
    size = itemsize(dtype) or 1
    if element_count(out) * size > INTP_MAX:
        raise FrameworkError(
            f"{OP}: an output of shape {out} ({dtype}) is {element_count(out) * size} bytes; "
            f"array is too big (NumPy arrays hold at most {INTP_MAX} bytes)"
        )
    if effective != promoted_reps:
        steps.append(
            f"{OP}: negative repeats on zero-length axes give zero-length output axes, as numpy.tile allows."
        )
    steps.append(f"{OP}: output shape[i] = shape[i] * reps[i] with reps {list(effective)}.")
    return FrameworkTile("numpy", OP, shape, given, dtype, promoted_shape, effective, steps)
