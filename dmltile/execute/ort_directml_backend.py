"""``backend="onnxruntime-directml"``: the descriptor as a one-node ONNX Tile model on onnxruntime's
real DirectML execution provider.

The provider comes from an ``onnxruntime-directml`` Windows wheel: natively on Windows, through
Wine over Mesa's lavapipe on Linux after ``make directml``. Compiling creates a session and reads
the provider's own placement of the node (its verbose log), so ``op.provider`` names the provider
that really runs it; a node the provider leaves to the CPU is refused at compile time, never run
on the CPU silently (the ``require_provider`` contract of the onnxruntime backend). Each call starts
the runner once (seconds under Wine): this backend is for checking, not speed.
"""

from __future__ import annotations

import numpy as np

from ..core.operator import OperatorDesc
from ..errors import DmlTileError, UnsupportedError
from .buffers import output_aliases
from .directml import oracle, ort_provider
from .ort_backend import OrtTile, tile_model


def require_ort_directml() -> None:
    """Raise UnsupportedError, naming the command that installs it, when the real provider cannot run here."""
    problem = ort_provider.ort_setup_problem()
    if problem is not None:
        raise UnsupportedError(
            f"the onnxruntime-directml backend needs onnxruntime.dll from an onnxruntime-directml wheel, which is "
            f"not set up here: {problem}. Install it with `{oracle.INSTALL_COMMAND}` (`make directml` in a checkout)"
        )


def _tile_request(model: bytes, x: np.ndarray | None = None) -> dict:
    """A request with the graph's fusion off, so the node keeps its name in the log and the profile."""
    request: dict = {"id": "tile", "model": model, "fusion": False}
    if x is not None:
        request.update(inputs={"input": x}, outputs=["output"])
    return request


class OrtDirectmlTile(OrtTile):
    """A descriptor run by onnxruntime's DirectML EP; ``op.provider`` names the provider, the wheel and DirectML."""

    backend = "onnxruntime-directml"

    def __init__(self, desc: OperatorDesc, wheel: str | None = None, directml: str | None = None):
        super(OrtTile, self).__init__(desc)  # no onnxruntime session in this process
        require_ort_directml()
        try:
            self.wheel = ort_provider.resolve_wheel(wheel, directml)
        except oracle.OracleError as e:
            raise DmlTileError(str(e)) from None
        self.model = tile_model(self.in_shape, desc.repeats, self.dtype)
        [run] = ort_provider.run_models([_tile_request(self.model)], self.wheel)
        info = next(r for r in ort_provider.ort_wheels() if r["wheel_version"] == self.wheel)
        where = f"onnxruntime-directml {self.wheel}"
        if not run.ok:
            raise UnsupportedError(
                f"{where} cannot run Tile on {self.data_type.name} {list(self.in_shape)}: "
                f"{run.stage} failed: {run.error or run.crash}"
            )
        placed = placement(run)
        if placed != ort_provider.DML:
            raise UnsupportedError(
                f"{where} places the Tile node on {placed}, not on {ort_provider.DML}; dmltile does not run it "
                "there silently (use backend='onnxruntime' for onnxruntime's CPU provider)"
            )
        self.provider = f"{placed} (onnxruntime-directml {self.wheel}, DirectML {info.get('directml')})"
        self.aliasing_output = output_aliases(desc.output)

    def _run(self, x: np.ndarray, out: np.ndarray) -> None:
        [run] = ort_provider.run_models([_tile_request(self.model, np.ascontiguousarray(x))], self.wheel)
        if not run.ok or "output" not in run.outputs:
            raise UnsupportedError(
                f"onnxruntime-directml {self.wheel} could not run the Tile model: {run.stage} {run.error or ''}"
            )
        ran_on = sorted(set(run.providers.values()))  # the model's one node (unnamed) as the profiler saw it
        if ran_on != [ort_provider.DML]:
            raise UnsupportedError(
                f"onnxruntime-directml {self.wheel} ran the Tile node on {', '.join(ran_on) or 'no provider'}, "
                f"not on {ort_provider.DML}"
            )
        out[...] = run.outputs["output"].reshape(out.shape)


def placement(run: ort_provider.ModelRun) -> str | None:
    """The provider holding the model's one node after partitioning, from the verbose log's placement lines."""
    return next(iter(run.placed), None) if len(run.placed) == 1 else None
