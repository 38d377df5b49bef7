"""Record what onnxruntime's real DirectML provider does with every placement case (golden_placement/).

    .venv/bin/python -m tests.lower.record_placement [--missing] [WHEEL ...]   (default: every installed wheel;
                                                       --missing: only the cases a wheel's file lacks)

Needs the onnxruntime-directml set-up (`make directml`). For each wheel it writes
``golden_placement/<wheel>.json``: per case, per Tile node, the observed status, provider and
fusion, and the outputs' shape, dtype and SHA-256 with whether they equal onnxruntime's CPU provider
(the Python package here) bit for bit.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from dmltile.execute.directml import ort_provider
from dmltile.lower.observe import Observation, observe_models
from tests.lower.placement_cases import GOLDEN, PlacementCase, all_cases

FOLDER = Path(__file__).with_name(GOLDEN)


def _digest(a: np.ndarray) -> dict[str, Any]:
    data = (
        "\0".join(map(str, a.reshape(-1))).encode()
        if a.dtype == object
        else np.ascontiguousarray(a).tobytes()
    )
    return {"shape": list(a.shape), "dtype": str(a.dtype), "sha256": hashlib.sha256(data).hexdigest()}


def cpu_reference(case: PlacementCase) -> dict[str, np.ndarray] | None:
    """The outputs of onnxruntime's CPU provider (the Python package), or None when it cannot run the model."""
    import onnxruntime as ort

    try:
        session = ort.InferenceSession(case.model.SerializeToString(), providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        return dict(zip(names, session.run(None, case.inputs), strict=True))
    except Exception:
        return None


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype == object:
        return bool(np.all(a == b))
    return a.tobytes() == b.tobytes()


def record(case: PlacementCase, seen: Observation) -> dict[str, Any]:
    """One case's golden entry."""
    reference = cpu_reference(case)
    outputs = {}
    for name, value in seen.outputs.items():
        entry = _digest(value)
        if reference is not None and name in reference:
            entry["equals_cpu"] = _same(value, np.asarray(reference[name]))
        outputs[name] = entry
    return {
        "id": case.id,
        "kind": case.kind,
        "nodes": [n.to_dict() for n in seen.nodes.values()],
        "session_error": seen.session_error.strip().splitlines()[0][:300] if seen.session_error else None,
        "outputs": outputs,
    }


def main(args: list[str]) -> int:
    """``[--missing] [WHEEL ...]``: every case, or with --missing only the cases the wheel's file lacks."""
    missing = "--missing" in args
    wheels = [a for a in args if a != "--missing"]
    for wheel in wheels or ort_provider.installed_wheels():
        t0 = time.monotonic()
        info = next(r for r in ort_provider.ort_wheels() if r["wheel_version"] == wheel)
        path = FOLDER / f"{wheel}.json"
        kept = (
            {e["id"]: e for e in json.loads(path.read_text())["cases"]} if missing and path.is_file() else {}
        )
        cases = [c for c in all_cases() if c.id not in kept]
        seen = observe_models([(c.model, c.inputs, c.free_dims) for c in cases], wheel)
        new = {c.id: record(c, s) for c, s in zip(cases, seen, strict=True)}
        doc = {
            "wheel": f"onnxruntime-directml=={wheel}",
            "onnxruntime": info.get("ort_version"),
            "directml": info.get("directml"),
            "device": "Mesa lavapipe (Vulkan on the CPU) through Wine's vkd3d, under Xvfb",
            "cases": [kept.get(c.id) or new[c.id] for c in all_cases()],
        }
        FOLDER.mkdir(exist_ok=True)
        (FOLDER / f"{wheel}.json").write_text(json.dumps(doc, indent=1) + "\n")
        print(f"onnxruntime-directml {wheel}: {len(cases)} cases in {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
