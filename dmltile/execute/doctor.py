"""``doctor_report()``: what this machine offers dmltile (Python, NumPy, the copy kernel, onnxruntime and its
execution providers, whether DirectML runs here (through dmltile's runner or onnxruntime), the GPU
adapters, the OS)."""

from __future__ import annotations

import importlib
import importlib.metadata
import platform
import subprocess
import sys
from typing import Any

import numpy as np

from ..validate.build import tile_desc
from .compile import compile
from .directml import oracle, ort_provider
from .fast import kernel as copy_kernel

DML_PROVIDER = "DmlExecutionProvider"
ORT_DISTRIBUTIONS = ("onnxruntime", "onnxruntime-directml", "onnxruntime-gpu")


def _version(module: str) -> str | None:
    try:
        return getattr(importlib.import_module(module), "__version__", None) or "installed"
    except Exception:  # an import can fail in many ways (missing DLLs, ABI); all mean "not usable"
        return None


def _distribution_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _distributions() -> list[str]:
    found = []
    for name in ORT_DISTRIBUTIONS:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            pass
    return found


def _dml_session_works() -> tuple[bool, str]:
    """Compile and run a small Tile on the onnxruntime backend, strictly on DmlExecutionProvider,
    and compare it with numpy.tile."""
    try:
        op = compile(tile_desc([1, 2], [2, 1]), backend="onnxruntime", require_provider=DML_PROVIDER)
        x = np.array([[1, 2]], dtype=np.float32)
        if not np.array_equal(op(x), np.tile(x, (2, 1))):
            return False, f"a Tile on {op.provider} gave a wrong result"
        return True, f"ran a Tile model on {op.provider}"
    except Exception as e:  # any failure means "not usable", and the reason is the report
        return False, f"{type(e).__name__}: {e}"


ADAPTER_QUERY = "Get-CimInstance Win32_VideoController | ForEach-Object { $_.Name }"


def gpu_adapters() -> dict[str, Any]:
    """The display adapters Windows knows (names, from WMI's Win32_VideoController via PowerShell;
    DirectML runs on a DirectX 12 one, or on the WARP software adapter when none is). Elsewhere an
    empty list and the reason."""
    if sys.platform != "win32":
        return {
            "names": [],
            "reason": f"DirectX 12 adapters are listed on Windows only; this is {platform.system()}",
        }
    try:
        run = subprocess.run(
            ["powershell", "-NoProfile", "-NonInteractive", "-Command", ADAPTER_QUERY],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"names": [], "reason": f"could not ask Windows for its adapters: {e}"}
    names = [line.strip() for line in run.stdout.splitlines() if line.strip()]
    if run.returncode != 0 or not names:
        return {
            "names": names,
            "reason": f"PowerShell answered {run.returncode}: {run.stderr.strip()[:200] or 'no adapters'}",
        }
    return {"names": names, "reason": "Win32_VideoController"}


def directml_runner() -> dict[str, Any]:
    """The real DirectML.dll through dmltile's runner (``run --backend directml``; Wine off Windows):
    where it is set up, what stops it, and each DirectML version installed with its max level."""
    problem = oracle.setup_problem()
    rows = [] if problem else oracle.list_versions()
    versions = [
        {
            "directml": r["directml_version"],
            "wheel": r["wheel_version"],
            "max_feature_level": r["max_feature_level"],
        }
        for r in rows
    ]
    return {
        "usable": problem is None and bool(versions),
        "home": str(oracle.default_home()),
        "problem": problem or (None if versions else "no DirectML version is installed"),
        "versions": versions,
    }


def _provider_usable(ort_info: dict[str, Any]) -> tuple[bool, str]:
    """Whether onnxruntime's DirectML execution provider runs a Tile here, and why not."""
    if sys.platform != "win32":
        return False, (
            f"onnxruntime's {DML_PROVIDER} in this Python runs only on Windows; this is {platform.system()} "
            "(the wheels' onnxruntime.dll under Wine: hosted_provider)"
        )
    if ort_info["version"] is None:
        return False, "onnxruntime is not installed (pip install 'dmltile[directml]')"
    if DML_PROVIDER not in ort_info["providers"]:
        return False, f"{DML_PROVIDER} is not among the providers; install onnxruntime-directml"
    return _dml_session_works()


def wine_provider() -> dict[str, Any]:
    """onnxruntime-directml's own DirectML provider through ``ort_runner`` (Wine off Windows), per
    wheel: does it run a Tile here (asked once per installation, recorded beside each DLL)."""
    problem = ort_provider.ort_setup_problem()
    wheels = [] if problem else ort_provider.tile_checks()
    return {
        "usable": problem is None and any(w["runs_tile"] for w in wheels),
        "problem": problem,
        "wheels": wheels,
    }


def _directml(ort_info: dict[str, Any]) -> dict[str, Any]:
    """DirectML here: through dmltile's runner (``--backend directml``) and through onnxruntime, in
    this Python and through the Wine-hosted onnxruntime.dll of each wheel."""
    runner = directml_runner()
    hosted = wine_provider()
    provider, provider_reason = _provider_usable(ort_info)
    if runner["usable"]:
        newest = runner["versions"][0]
        reason = (
            f"run --backend directml runs DirectML {newest['directml']} (max level {newest['max_feature_level']}) "
            f"and {len(runner['versions']) - 1} older versions through the runner in {runner['home']}"
        )
    else:
        reason = f"the DirectML runner is not set up: {runner['problem']}"
    reason += f"; {provider_reason}" if not provider else f"; onnxruntime: {provider_reason}"
    return {
        "usable": runner["usable"] or provider,
        "reason": reason,
        "runner": runner,
        "onnxruntime_provider": {"usable": provider, "reason": provider_reason},
        "hosted_provider": hosted,
    }


def doctor_report() -> dict[str, Any]:
    """Facts about this machine as plain data (what ``dmltile doctor --json`` prints)."""
    report: dict[str, Any] = {
        "dmltile": _distribution_version("dmltile"),
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
        },
        "os": {
            "system": platform.system(),
            "release": platform.release(),
            "machine": platform.machine(),
            "platform": platform.platform(),
        },
        "numpy": _version("numpy"),
        "copy_kernel": {"loaded": copy_kernel.loaded() is not None, "status": copy_kernel.status()},
        "onnx": _version("onnx"),
        "openvino": _version("openvino"),
    }
    ort_info: dict[str, Any] = {
        "version": _version("onnxruntime"),
        "distributions": _distributions(),
        "providers": [],
    }
    if ort_info["version"] is not None:
        import onnxruntime as ort

        ort_info["providers"] = list(ort.get_available_providers())
    report["onnxruntime"] = ort_info
    report["directml"] = _directml(ort_info)
    report["gpu_adapters"] = gpu_adapters()
    return report
