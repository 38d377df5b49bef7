"""compare_backends(): run one descriptor on two backends and report the first element whose bits differ,
with the value the definition of Tile (``reference``) puts there, so the message says which backend is wrong.
"reference" names the definition itself as a backend (for outputs up to its size limit)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..validate.levels import DEFAULT_FEATURE_LEVEL
from ..validate.source import Source
from .buffers import CompiledTile
from .compile import compile
from .directml import oracle
from .reference import ReferenceTile, source_index


@dataclass(frozen=True)
class BackendComparison:
    """The outcome of compare_backends: ``identical``, the first differing ``index`` (or None),
    the two ``values`` there, the two ``backends``, a one-line ``message``, and ``expected``: what
    the definition of Tile puts at ``index`` (None when identical)."""

    identical: bool
    index: tuple[int, ...] | None
    values: tuple[Any, Any] | None
    backends: tuple[str, str]
    message: str
    expected: Any = None

    def __bool__(self) -> bool:
        return self.identical

    def to_dict(self) -> dict[str, Any]:
        """The comparison as ``run --compare --json`` prints it."""
        return {
            "identical": self.identical,
            "backends": list(self.backends),
            "index": list(self.index) if self.index is not None else None,
            "values": [_show(v) for v in self.values] if self.values is not None else None,
            "expected": _show(self.expected) if self.expected is not None else None,
            "message": self.message,
        }


def compared_with(backend: str) -> str:
    """The backend NumPy is compared with when ``backend`` is named: that one, and for NumPy itself
    the real DirectML.dll where its runner is set up, else onnxruntime."""
    if backend != "numpy":
        return backend
    return "directml" if oracle.setup_problem() is None else "onnxruntime"


def random_input(op, seed: int = 0) -> np.ndarray:
    """Random bits of the op's input dtype and Sizes (NaN and Inf patterns included for floats)."""
    rng = np.random.default_rng(seed)
    width = op.dtype.itemsize
    bits = rng.integers(0, 2 ** (8 * width), size=op.in_shape, dtype=np.dtype(f"u{width}"), endpoint=False)
    return bits.view(op.dtype)


def compare_backends(
    desc: Source,
    x: np.ndarray | None = None,
    feature_level: Any = DEFAULT_FEATURE_LEVEL,
    backends: Sequence[str] = ("numpy", "onnxruntime"),
    **options: Any,
) -> BackendComparison:
    """Run ``desc`` on ``x`` (random bits when None) with both backends and compare bit for bit.

    A backend is one compile() takes, or ``"reference"``: the per-element definition. ``options``
    go to the second backend's compile() (e.g. ``require_provider``).
    """
    first, second = backends
    op_a = _compile(desc, feature_level, first, {})
    op_b = _compile(desc, feature_level, second, options)
    if x is None:
        x = random_input(op_a)
    a, b = op_a(x), op_b(x)
    names = (op_a.backend, op_b.backend)
    bits = np.dtype(f"u{a.dtype.itemsize}")
    differ = a.view(bits) != b.view(bits)
    if not differ.any():
        return BackendComparison(True, None, None, names, "identical")
    index = tuple(int(i) for i in np.unravel_index(int(np.argmax(differ)), a.shape))
    va, vb = a[index], b[index]
    source = source_index(index, op_a.in_shape)
    expected = x[source]
    message = (
        f"first difference at [{_join(index)}]: {names[0]}={_show(va)} {names[1]}={_show(vb)}; "
        f"Tile copies input [{_join(source)}] there: {_show(expected)}"
    )
    return BackendComparison(False, index, (va, vb), names, message, expected)


def _compile(desc: Source, feature_level: Any, backend: str, options: dict) -> CompiledTile:
    if backend == ReferenceTile.backend:  # compile() validates the descriptor the definition then runs
        return ReferenceTile(compile(desc, feature_level, "numpy").desc)
    return compile(desc, feature_level, backend, **options)


def _join(index: tuple[int, ...]) -> str:
    return ",".join(map(str, index))


def _show(value: np.generic) -> str:
    """A value, with its bit pattern for floats (two NaNs differ only in their bits)."""
    if np.issubdtype(value.dtype, np.floating):
        width = value.dtype.itemsize
        return f"{value!s}(0x{int(value.view(f'u{width}')):0{2 * width}x})"
    return str(value)
