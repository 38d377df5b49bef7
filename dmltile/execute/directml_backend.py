"""``backend="directml"``: the exact descriptor through the real DirectML.dll.

The descriptor goes to IDMLDevice::CreateOperator field for field (Strides, TotalTensorSizeInBytes,
flags, alignment), is compiled, initialised and dispatched, and the whole output buffer is read
back: natively on Windows, through Wine over Mesa's lavapipe on Linux after ``make directml``. Each
call is one batch of the runner (a few seconds under Wine): this backend is for checking, not speed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.operator import OperatorDesc
from ..errors import DmlTileError, UnsupportedError
from ..validate.rules.compile_time import compile_refusal_issues
from .buffers import CompiledTile, buffer_views, pack_tensor, strided
from .directml import oracle


def require_directml() -> None:
    """Raise UnsupportedError, naming the command that installs it, when DirectML cannot run here."""
    problem = oracle.setup_problem()
    if problem is not None:
        raise UnsupportedError(
            f"the directml backend needs the real DirectML.dll, which is not set up here: {problem}. "
            f"Install it with `{oracle.INSTALL_COMMAND}` (`make directml` in a checkout)"
        )


class DirectmlTile(CompiledTile):
    """A descriptor compiled by a real DirectML.dll; ``op.provider`` names its version and adapter."""

    backend = "directml"

    def __init__(self, desc: OperatorDesc, version: str | None = None):
        super().__init__(desc)
        require_directml()
        versions = oracle.list_versions()  # newest first
        if not versions:
            raise UnsupportedError(f"no DirectML.dll is installed; run `{oracle.INSTALL_COMMAND}`")
        try:
            self.version = oracle.resolve_version(version or versions[0]["directml_version"])
        except (KeyError, ValueError, oracle.OracleError) as e:
            known = ", ".join(v["directml_version"] for v in versions)
            raise DmlTileError(
                f"DirectML version {version!r} is not installed here ({e}); installed: {known}"
            ) from None
        [answer] = oracle.run_cases([{"desc": desc.to_dict()}], self.version["directml_version"])
        if not answer.get("accepted"):
            raise DmlTileError(
                f"DirectML {self.version['directml_version']} CreateOperator answered "
                f"{answer.get('hresult_hex') or answer.get('error')} for a descriptor dmltile accepts; "
                "please report it with the descriptor"
            )
        setup = oracle.require_setup()
        adapter = "Mesa lavapipe through Wine" if not setup.native else (self.version.get("adapter") or "GPU")
        level = self.version["max_feature_level"]
        self.provider = f"DirectML {self.version['directml_version']} (level {level}, {adapter})"

    def _dispatch(self, in_bytes: bytes, out_init: bytes) -> bytes:
        [answer] = oracle.run_cases(
            [{"desc": self.desc.to_dict(), "execute": True, "input": in_bytes, "output_init": out_init}],
            self.version["directml_version"],
        )
        if not answer.get("executed"):
            raise UnsupportedError(self._failure(answer))
        return bytes(answer["output"])

    def _failure(self, answer: dict) -> str:
        """What stopped the run; where the version's CompileOperator is known to refuse the data type
        (DML306), that rule's message and hint instead of a bare HRESULT."""
        version = self.version["directml_version"]
        stage = (
            f"{answer.get('exec_stage')} {answer.get('exec_hresult_hex') or answer.get('error', '')}".strip()
        )
        label = f"DirectML {version} (max level {self.version['max_feature_level']})"
        known = compile_refusal_issues(self.desc, version, label)
        if known:
            first = known[0]
            return f"{label} could not run the descriptor here ({stage}): {first.code} {first.message}; {first.hint}"
        return f"DirectML {version} could not run the descriptor here: {stage}"

    def tile_array(self, x: np.ndarray, out: np.ndarray) -> None:
        """Upload ``x`` through the input's Strides, dispatch, and read the output through its own."""
        t_out = self.desc.output
        result = self._dispatch(
            pack_tensor(self.desc.input, x).tobytes(), bytes(t_out.total_tensor_size_in_bytes)
        )
        out[...] = strided(np.frombuffer(result, np.uint8), t_out).view(self.dtype)

    def run_buffers(self, in_buf: Any, out_buf: Any, poison_padding: bool = False) -> None:
        """Run on raw byte buffers: the output buffer's bytes go to the GPU and come back whole, so
        every byte DirectML leaves alone keeps its value (with ``poison_padding``: 0xCD)."""
        src, dst = buffer_views(self.desc, in_buf, out_buf, poison_padding)
        n_in, n_out = self.desc.input.total_tensor_size_in_bytes, self.desc.output.total_tensor_size_in_bytes
        result = self._dispatch(src[:n_in].tobytes(), dst[:n_out].tobytes())
        dst[:n_out] = np.frombuffer(result[:n_out], np.uint8)
