"""The onnxruntime backend: one ONNX Tile-13 node per compiled op, run with IO binding.

Provider order: DmlExecutionProvider (Windows, ``onnxruntime-directml``), CUDAExecutionProvider,
CPUExecutionProvider. ``require_provider`` makes the choice strict: the session is created with
only that provider and with ORT's CPU fallback disabled (session config
``session.disable_cpu_ep_fallback``), so a node the provider cannot run fails loudly instead of
silently running on the CPU.

Measured with onnxruntime 1.32 (CPU): Tile runs on all ten DirectML data types, but its FLOAT16
kernel is not a pure copy for NaNs: it quiets signalling NaNs and can lose NaN payloads
(0x7D55 came back as 0x7E00). ``dmltile.compare_backends`` shows such differences.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.operator import OperatorDesc
from ..core.shape import tile_output_sizes
from ..errors import DmlTileError, UnsupportedError
from .buffers import CompiledTile, buffer_views, output_aliases, scatter_row_major, strided

PROVIDER_ORDER = ("DmlExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider")
DML_HINT = (
    "DmlExecutionProvider needs Windows 10+ with a DirectX 12 adapter and `pip install dmltile[directml]`"
)


def import_onnxruntime():
    """The onnx and onnxruntime modules, or a DmlTileError saying which extra to install."""
    try:
        import onnx  # noqa: F401
        import onnxruntime
    except ImportError as e:
        raise DmlTileError(
            f"backend 'onnxruntime' needs onnx and onnxruntime ({e.name} is missing): "
            "pip install 'dmltile[onnx]' (on Windows for DirectML: 'dmltile[directml]')"
        ) from None
    return onnxruntime


def available_providers() -> list[str]:
    """The execution providers of the installed onnxruntime ([] when it is not installed)."""
    try:
        import onnxruntime
    except ImportError:
        return []
    return list(onnxruntime.get_available_providers())


def backend_info() -> dict:
    """What can run Tile here: onnx/onnxruntime versions, the providers present and the one chosen by default."""
    info: dict = {"onnx": None, "onnxruntime": None, "providers": [], "default_provider": "numpy only"}
    try:
        import onnx

        info["onnx"] = onnx.__version__
    except ImportError:
        pass
    try:
        import onnxruntime
    except ImportError:
        info["note"] = (
            "pip install 'dmltile[onnx]' (Windows GPU: 'dmltile[directml]') for the onnxruntime backend"
        )
        return info
    info["onnxruntime"] = onnxruntime.__version__
    info["providers"] = list(onnxruntime.get_available_providers())
    info["default_provider"] = next((p for p in PROVIDER_ORDER if p in info["providers"]), None)
    if "DmlExecutionProvider" not in info["providers"]:
        info["note"] = DML_HINT
    return info


def tile_model(input_shape: Sequence[int], repeats: Sequence[int], dtype: Any) -> bytes:
    """A serialized one-node ONNX model: ``output = Tile-13(input, repeats)``, repeats an int64 initializer."""
    import_onnxruntime()
    from onnx import helper, numpy_helper

    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    out_shape = list(tile_output_sizes(input_shape, repeats))
    graph = helper.make_graph(
        [helper.make_node("Tile", ["input", "repeats"], ["output"])],
        "dmltile_tile",
        [helper.make_tensor_value_info("input", elem, list(input_shape))],
        [helper.make_tensor_value_info("output", elem, out_shape)],
        [numpy_helper.from_array(np.asarray(repeats, dtype=np.int64), "repeats")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="dmltile")
    model.ir_version = 8  # opset 13 needs IR 7+; 8 keeps older onnxruntime-directml wheels working
    return model.SerializeToString()


def make_session(model: bytes, providers: Sequence[str] | None = None, require_provider: str | None = None):
    """An InferenceSession on the best provider present, or strictly on ``require_provider``."""
    ort = import_onnxruntime()
    present = list(ort.get_available_providers())
    options = ort.SessionOptions()
    options.log_severity_level = 4  # errors are raised as exceptions; keep stderr clean
    if require_provider is not None:
        if require_provider not in present:
            hint = f"; {DML_HINT}" if require_provider == "DmlExecutionProvider" else ""
            raise DmlTileError(
                f"require_provider={require_provider!r} is not available; onnxruntime "
                f"{ort.__version__} has: {', '.join(present)}{hint}"
            )
        chosen = [require_provider]
        if require_provider != "CPUExecutionProvider":
            options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    else:
        wanted = list(providers) if providers is not None else list(PROVIDER_ORDER)
        chosen = [p for p in wanted if p in present]
        if not chosen:
            raise DmlTileError(
                f"none of the providers {wanted} is available; onnxruntime has: {', '.join(present)}"
            )
    if (
        "DmlExecutionProvider" in chosen
    ):  # the DirectML EP supports neither memory patterns nor parallel execution
        options.enable_mem_pattern = False
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model, sess_options=options, providers=chosen)


class OrtTile(CompiledTile):
    """The onnxruntime backend's compiled op: the session is created once, an IO binding once per thread."""

    backend = "onnxruntime"

    def __init__(
        self, desc: OperatorDesc, providers: Sequence[str] | None = None, require_provider: str | None = None
    ):
        super().__init__(desc)
        ort = import_onnxruntime()
        try:
            self.session = make_session(
                tile_model(self.in_shape, desc.repeats, self.dtype), providers, require_provider
            )
        except DmlTileError:
            raise
        except Exception as e:  # onnxruntime's own errors: a type or shape the provider cannot run
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise UnsupportedError(
                f"onnxruntime {ort.__version__} cannot run Tile on {self.data_type.name} "
                f"{list(self.in_shape)} with {require_provider or 'its providers'}: {first}"
            ) from None
        self.provider = self.session.get_providers()[0]
        if require_provider is not None and self.provider != require_provider:
            raise DmlTileError(f"require_provider={require_provider!r}, but the session uses {self.provider}")
        self._local = threading.local()  # an IO binding per calling thread: bindings are not shareable
        self.aliasing_output = output_aliases(desc.output)

    def tile_array(self, x: np.ndarray, out: np.ndarray) -> None:
        """One run_with_iobinding from ``x`` (made contiguous) into ``out``."""
        self._run(np.ascontiguousarray(x), out)

    def _run(self, x: np.ndarray, out: np.ndarray) -> None:
        binding = getattr(self._local, "binding", None)
        if binding is None:
            binding = self._local.binding = self.session.io_binding()
        binding.bind_input("input", "cpu", 0, self.dtype, self.in_shape, x.ctypes.data)
        binding.bind_output("output", "cpu", 0, self.dtype, self.out_shape, out.ctypes.data)
        self.session.run_with_iobinding(binding)

    def run_buffers(self, in_buf: Any, out_buf: Any, poison_padding: bool = False) -> None:
        """Run on raw byte buffers honouring Strides and TotalTensorSizeInBytes (same contract as numpy).

        The input is gathered through its strided view into a packed array, the session tiles it,
        and the result is scattered through the output's strides; other output bytes stay untouched
        unless ``poison_padding``.
        """
        src, dst = buffer_views(self.desc, in_buf, out_buf, poison_padding)
        x = np.ascontiguousarray(strided(src, self.desc.input)).view(self.dtype)
        y = np.empty(self.out_shape, self.dtype)
        self._run(x, y)
        if self.aliasing_output:
            scatter_row_major(dst, self.desc.output, y)
        else:
            np.copyto(strided(dst, self.desc.output), y.view(f"u{self.dtype.itemsize}"))
