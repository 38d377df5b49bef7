"""compile() and execute(): the analogue of IDMLDevice::CompileOperator and a dispatch."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.operator import OperatorDesc
from ..core.shape import output_size_wraps
from ..errors import DmlTileError, UnsupportedError
from ..validate.api import check
from ..validate.levels import DEFAULT_FEATURE_LEVEL
from ..validate.source import Source
from .buffers import CompiledTile
from .directml_backend import DirectmlTile
from .limits import check_output_size
from .numpy_backend import NumpyTile
from .ort_backend import OrtTile
from .ort_directml_backend import OrtDirectmlTile
from .reference import ReferenceTile

__all__ = ["CompiledTile", "compile", "execute", "BACKENDS"]

BACKENDS = ("numpy", "onnxruntime", "directml", "onnxruntime-directml")


def compile(
    source: Source,
    feature_level: Any = DEFAULT_FEATURE_LEVEL,
    backend: str = "numpy",
    directml: str | None = None,
    **options: Any,
) -> CompiledTile:
    """Validate once (DescriptorError with every issue) and return a compiled op with a cached plan.

    ``directml="1.9.1"`` validates as that DirectML version does (and, with ``backend="directml"``,
    runs on that DLL; with ``backend="onnxruntime-directml"``, on the wheel that ships it). Options:
    ``max_output_bytes`` (refuse larger outputs before allocating anything; default
    ``dmltile.execute.limits.MAX_OUTPUT_BYTES`` or a fraction of available memory), ``threads``
    (numpy: 1 or 2), ``providers`` / ``require_provider`` (onnxruntime),
    ``wheel`` (onnxruntime-directml: the wheel version, default the newest installed).
    """
    desc = check(source, feature_level, directml)
    check_output_size(desc, options.pop("max_output_bytes", None))
    if backend == "directml":
        return DirectmlTile(desc, version=directml, **_only(options, "directml", set()))
    if backend in ("numpy", "onnxruntime") and wrapped_axes(desc):
        return _wrapped(desc, backend, options)
    if backend == "numpy":
        return NumpyTile(desc, **_only(options, "numpy", {"threads"}))
    if backend == "onnxruntime":
        return OrtTile(desc, **_only(options, "onnxruntime", {"providers", "require_provider"}))
    if backend == "onnxruntime-directml":
        return OrtDirectmlTile(desc, directml=directml, **_only(options, backend, {"wheel"}))
    raise DmlTileError(f"unknown backend {backend!r}; available: {', '.join(BACKENDS)}")


def wrapped_axes(desc: OperatorDesc) -> list[int]:
    """The axes whose output size is the product wrapped at 2^32 (DML208)."""
    sizes = zip(desc.input.sizes, desc.repeats, desc.output.sizes, strict=False)
    return [i for i, (n, r, out) in enumerate(sizes) if output_size_wraps(n, r, out)]


def _wrapped(desc: OperatorDesc, backend: str, options: dict) -> CompiledTile:
    """A wrapped output size (DML208) is run by the definition (element j mod the input's size, as
    DirectML fills it); the planner and ONNX's Tile only know outputs of whole copies."""
    axes = wrapped_axes(desc)
    if backend == "onnxruntime":
        raise UnsupportedError(
            f"OutputTensor.Sizes{[desc.output.sizes[i] for i in axes]} on axes {axes} are products wrapped "
            "at 2^32 (DML208), which an ONNX Tile cannot express; run it with backend 'numpy' or 'directml'"
        )
    _only(options, "numpy", {"threads"})
    return ReferenceTile(desc)


def _only(options: dict, backend: str, allowed: set[str]) -> dict:
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise DmlTileError(
            f"unknown option{'s' * (len(unknown) > 1)} {', '.join(unknown)} for backend {backend!r}; "
            f"known: max_output_bytes, {', '.join(sorted(allowed))}"
        )
    return options


def execute(
    source: Source,
    x: np.ndarray,
    feature_level: Any = DEFAULT_FEATURE_LEVEL,
    backend: str = "numpy",
    **options: Any,
) -> np.ndarray:
    """Compile and run once: ``compile(source, feature_level, backend, **options)(x)``."""
    return compile(source, feature_level, backend, **options)(x)
