"""compile() and execute(): the analogue of IDMLDevice::CompileOperator and a dispatch."""

from __future__ import annotations

from typing import Any

import numpy as np

from .document import Source
from .errors import DmlTileError
from .executors.reference import run_tile_buffers, strided
from .operator import OperatorDesc
from .validation import DEFAULT_FEATURE_LEVEL, check


class CompiledTile:
    """A validated Tile descriptor, ready to run many times without re-validation."""

    def __init__(self, desc: OperatorDesc, backend: str = "numpy"):
        self.desc = desc
        self.backend = backend
        self.provider = "numpy"

    def run_buffers(self, in_buf: Any, out_buf: Any, poison_padding: bool = False) -> None:
        """Run on raw byte buffers honouring Strides and TotalTensorSizeInBytes."""
        run_tile_buffers(self.desc, in_buf, out_buf, poison_padding=poison_padding)

    def __call__(self, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Tile an array of the input Sizes into an array of the output Sizes."""
        t_in, t_out = self.desc.input, self.desc.output
        dt = t_in.data_type.numpy_dtype
        x = np.asarray(x)
        if x.shape != t_in.sizes:
            raise DmlTileError(f"input has shape {x.shape}, but InputTensor.Sizes is {list(t_in.sizes)}")
        if x.dtype != dt:
            raise DmlTileError(f"input has dtype {x.dtype}, but InputTensor.DataType {t_in.data_type.name} is {dt}")
        result = np.tile(x, self.desc.repeats) if out is None else out
        if out is not None:
            np.copyto(out, np.tile(x, self.desc.repeats))
        return result


def compile(source: Source, feature_level: Any = DEFAULT_FEATURE_LEVEL, backend: str = "numpy") -> CompiledTile:
    """Validate once (DescriptorError with every issue) and return a runnable compiled op."""
    if backend != "numpy":
        raise DmlTileError(f"unknown backend {backend!r}; available: numpy")
    return CompiledTile(check(source, feature_level), backend)


def execute(source: Source, x: np.ndarray, feature_level: Any = DEFAULT_FEATURE_LEVEL, backend: str = "numpy") -> np.ndarray:
    """Compile and run once."""
    return compile(source, feature_level, backend)(x)
