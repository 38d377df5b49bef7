"""Drive the real DirectML.dll: CreateOperator verdicts and executions of Tile descriptors.

Self-contained on purpose (stdlib + numpy only; nothing else from dmltile), so that tests, the
golden-data generator and the future ``backend="directml"`` can all load it by path.

On Linux the runner (``runner.c`` built by ``setup.sh``) runs under Wine 8 + vkd3d over Mesa's
lavapipe inside ``xvfb-run``; on Windows ``runner.exe`` runs natively. Both speak one JSON object
per line: one descriptor in, one answer out (see ``runner.c``).

Public API::

    setup = find_setup()                  # Setup, or None (then setup_problem() says why)
    list_versions()                       # [{"directml_version": "1.15.4", "max_feature_level": "6.4", ...}]
    run_cases(cases, version="1.15.4")    # [{"id": ..., "hresult": 0, "accepted": True, ...}]
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import platform
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SETUP_SCRIPT = HERE / "setup.sh"
INSTALL_COMMAND = "dmltile directml setup"  # `make directml` in a checkout
S_OK = 0
E_INVALIDARG = 0x80070057

DATA_TYPES = {
    "UNKNOWN": 0,
    "FLOAT32": 1,
    "FLOAT16": 2,
    "UINT32": 3,
    "UINT16": 4,
    "UINT8": 5,
    "INT32": 6,
    "INT16": 7,
    "INT8": 8,
    "FLOAT64": 9,
    "UINT64": 10,
    "INT64": 11,
    "UINT4": 12,
    "INT4": 13,
}
ELEMENT_BITS = {1: 32, 2: 16, 3: 32, 4: 16, 5: 8, 6: 32, 7: 16, 8: 8, 9: 64, 10: 64, 11: 64, 12: 4, 13: 4}
TENSOR_TYPES = {"INVALID": 0, "BUFFER": 1}
TENSOR_FLAGS = {"NONE": 0, "OWNED_BY_DML": 1}
OPERATOR_TYPES = {"TILE": 70}
UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
# keys of a case that are not part of the descriptor
CASE_KEYS = frozenset(
    {
        "id",
        "desc",
        "execute",
        "input",
        "output_init",
        "input_offset",
        "output_offset",
        "input_size",
        "output_size",
        "input_buffer_size",
        "output_buffer_size",
        "input_fill",
        "output_fill",
    }
)


class OracleError(RuntimeError):
    """The DirectML runner could not be found, started or understood."""


# ------------------------------------------------------------------------------------------------
# finding the set-up


def default_home() -> Path:
    """The cache folder that ``setup.sh`` fills: ``$DMLTILE_DIRECTML_HOME`` or the XDG cache default."""
    env = os.environ.get("DMLTILE_DIRECTML_HOME")
    if env:
        return Path(env).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "dmltile" / "directml"


@dataclass(frozen=True)
class Setup:
    """Where the runner, the DLLs and the Wine environment live."""

    home: Path
    runner: Path
    dlls: dict[str, Path]  # folder under dll/ (the onnxruntime-directml version, or package-version) -> DLL
    native: bool  # True on Windows: no Wine, no Xvfb
    env: dict[str, str] = field(default_factory=dict)

    def versions(self) -> list[dict[str, Any]]:
        """The recorded version table (``versions.json``), one row per DLL."""
        path = self.home / "versions.json"
        if not path.is_file():
            return []
        rows: list[dict[str, Any]] = json.loads(path.read_text())
        return rows


def _wine_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "WINEPREFIX": str(home / "prefix"),
            "WINEDEBUG": "-all",
            "VKD3D_DEBUG": "none",
            "XDG_RUNTIME_DIR": str(home / "xdg"),
            "VK_ICD_FILENAMES": str(home / "lvp.json"),
            "LD_LIBRARY_PATH": str(home / "mesa" / "usr" / "lib" / "x86_64-linux-gnu"),
            # the runner's own cabinet.dll (cabinet_shim.c): DirectML <= 1.7 unpacks its shaders through it
            "WINEDLLOVERRIDES": "cabinet=n,b",
        }
    )
    return env


def setup_problem(home: Path | None = None) -> str | None:
    """Why the DirectML set-up cannot run here (with the command that installs it), or None when it can."""
    home = Path(home) if home else default_home()
    fix = f"run `{INSTALL_COMMAND}` (or `bash {SETUP_SCRIPT}`)"
    if not (home / "runner.exe").is_file():
        return f"no DirectML runner in {home}: {fix}"
    if not any((home / "dll").glob("*/DirectML.dll")):
        return f"no DirectML.dll under {home / 'dll'}: {fix}"
    if sys.platform == "win32":
        return None
    if platform.system() != "Linux":
        return f"the DirectML oracle runs on Windows natively or on Linux through Wine, not on {platform.system()}"
    missing = [tool for tool in ("wine", "xvfb-run", "wineserver") if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not installed: {fix}"
    if not (home / "lvp.json").is_file():
        return f"Mesa lavapipe (Vulkan on the CPU) missing in {home}: {fix}"
    if not (home / "prefix" / "system.reg").is_file():
        return f"no Wine prefix in {home / 'prefix'}: {fix}"
    return None


def find_setup(home: Path | None = None) -> Setup | None:
    """The DirectML set-up, or None when it is absent (``setup_problem()`` then says why and how to install)."""
    home = Path(home) if home else default_home()
    if setup_problem(home) is not None:
        return None
    dlls = {p.parent.name: p for p in sorted((home / "dll").glob("*/DirectML.dll"))}
    native = sys.platform == "win32"
    return Setup(
        home=home, runner=home / "runner.exe", dlls=dlls, native=native, env={} if native else _wine_env(home)
    )


def require_setup(home: Path | None = None) -> Setup:
    """Like ``find_setup`` but raises ``OracleError`` naming the reason and the install command."""
    setup = find_setup(home)
    if setup is None:
        raise OracleError(setup_problem(home) or "DirectML set-up missing")
    return setup


# ------------------------------------------------------------------------------------------------
# the PE version resource (FileVersion) without Windows


def pe_file_version(path: str | Path) -> str | None:
    """FileVersion ``a.b.c.d`` from a PE file's VS_FIXEDFILEINFO, found by its signature 0xFEEF04BD."""
    data = Path(path).read_bytes()
    signature = struct.pack("<I", 0xFEEF04BD)
    at = data.find(b"V\x00S\x00_\x00V\x00E\x00R\x00S\x00I\x00O\x00N\x00_\x00I\x00N\x00F\x00O\x00")
    at = data.find(signature, max(at, 0))
    if at < 0:
        return None
    ms, ls = struct.unpack_from("<II", data, at + 8)
    return f"{ms >> 16}.{ms & 0xFFFF}.{ls >> 16}.{ls & 0xFFFF}"


# ------------------------------------------------------------------------------------------------
# running the runner


def _dll_arg(setup: Setup, dll: Path) -> str:
    return str(dll) if setup.native else "Z:" + str(dll)


def _command(setup: Setup, dll: Path, *extra: str) -> list[str]:
    cmd = [str(setup.runner), "--dll", _dll_arg(setup, dll), *extra]
    if setup.native:
        return cmd
    return ["xvfb-run", "-a", "-s", "-screen 0 320x240x24", "wine", *cmd]


@contextlib.contextmanager
def _session(setup: Setup) -> Iterator[None]:
    """One runner at a time per cache folder; the Wine server is ended afterwards."""
    setup.home.mkdir(parents=True, exist_ok=True)
    with open(setup.home / "run.lock", "w") as lock:
        if sys.platform != "win32":
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if not setup.native:
                subprocess.run(["wineserver", "-k"], env=setup.env, capture_output=True, check=False)
                with contextlib.suppress(Exception):
                    subprocess.run(
                        ["wineserver", "-w"], env=setup.env, capture_output=True, check=False, timeout=30
                    )


def _parse_lines(text: str) -> list[dict[str, Any]]:
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            with contextlib.suppress(json.JSONDecodeError):
                rows.append(json.loads(line))
    return rows


def runner_info(setup: Setup, dll: Path) -> dict[str, Any]:
    """Start the runner on one DLL and return its info line (FileVersion, max feature level, data types)."""
    with _session(setup):
        proc = subprocess.run(
            _command(setup, dll, "--info"),
            env=setup.env or None,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    rows = _parse_lines(proc.stdout)
    if not rows:
        raise OracleError(f"runner printed nothing for {dll} (exit {proc.returncode}): {proc.stderr[-500:]}")
    return rows[0]


def record_versions(home: Path | None = None, *, force: bool = False) -> list[dict[str, Any]]:
    """Ask each installed DLL its version and max level; write ``versions.json`` (only new DLLs are asked)."""
    setup = require_setup(home)
    path = setup.home / "versions.json"
    old = {row["wheel_version"]: row for row in setup.versions()} if not force else {}
    rows = []
    for wheel_version, dll in setup.dlls.items():
        row = old.get(wheel_version)
        if row is None or row.get("dll_mtime") != dll.stat().st_mtime:
            info = runner_info(setup, dll)
            wheel_file = dll.parent / "wheel.txt"
            source = dll.parent / "source.txt"  # package==version, written by fetch_dlls.py
            wheel = (
                source.read_text().strip() if source.is_file() else f"onnxruntime-directml=={wheel_version}"
            )
            row = {
                "wheel": wheel,
                "wheel_version": wheel_version,
                "wheel_file": wheel_file.read_text().strip() if wheel_file.is_file() else None,
                "file_version": info.get("file_version") or pe_file_version(dll),
                "pe_file_version": pe_file_version(dll),
                "max_feature_level": info.get("max_feature_level"),
                "data_type_support": info.get("data_type_support"),
                "options1_patched": info.get("options1_patched"),
                "adapter": info.get("adapter"),
                "error": None if info.get("kind") == "info" else info,
                "dll_mtime": dll.stat().st_mtime,
            }
            fv = str(row["file_version"] or "")
            parts = fv.split(".")  # 1.15.4.0 -> 1.15.4; the 1.0.2006.1020 prerelease keeps its four parts
            row["directml_version"] = ".".join(parts[:3] if parts[3:] == ["0"] else parts) if fv else None
        rows.append(row)
    rows.sort(key=lambda r: _version_key(r["file_version"] or "0"), reverse=True)
    path.write_text(json.dumps(rows, indent=1) + "\n")
    return rows


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) if x.isdigit() else 0 for x in v.replace("-", ".").split("."))


def list_versions(home: Path | None = None) -> list[dict[str, Any]]:
    """Installed DirectML versions, newest first: wheel, DirectML FileVersion, max feature level, data types."""
    setup = find_setup(home)
    if setup is None:
        return []
    rows = setup.versions()
    if {r["wheel_version"] for r in rows} != set(setup.dlls):
        rows = record_versions(home)
    return rows


def resolve_version(version: str, home: Path | None = None) -> dict[str, Any]:
    """The version-table row for a DirectML version ("1.15.4", "1.15.4.0") or a wheel ("ort-1.24.4")."""
    rows = list_versions(home)
    v = str(version).strip()
    for prefix in ("onnxruntime-directml==", "ort-", "ort:"):
        if v.startswith(prefix):
            wheel = v[len(prefix) :]
            for row in rows:
                if row["wheel_version"] == wheel:
                    return row
            raise OracleError(
                f"onnxruntime-directml {wheel} is not installed; installed: "
                f"{', '.join(r['wheel_version'] for r in rows) or 'none'}"
            )
    for row in rows:  # newest wheel first
        if v in (row["directml_version"], row["file_version"]):
            return row
    raise OracleError(
        f"DirectML {v} is not installed; installed: "
        f"{', '.join(str(r['directml_version']) for r in rows) or 'none'} "
        f"(add a wheel: bash {SETUP_SCRIPT} <onnxruntime-directml version>)"
    )


# ------------------------------------------------------------------------------------------------
# descriptors -> runner lines


def _enum(value: Any, table: dict[str, int], prefix: str, what: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{what}: a boolean is not an enum value")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        name = value.strip().upper()
        name = name.removeprefix(prefix)
        if name in table:
            return table[name]
    raise ValueError(f"{what}: unknown value {value!r}")


def _flags(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, (list, tuple)):
        out = 0
        for v in value:
            out |= _flags(v)
        return out
    if isinstance(value, str) and "|" in value:
        return _flags([v.strip() for v in value.split("|")])
    return _enum(value, TENSOR_FLAGS, "DML_TENSOR_FLAG_", "Flags")


def element_bits(data_type: int) -> int:
    """Bits per element of a DML_TENSOR_DATA_TYPE (0 for an unknown type)."""
    return ELEMENT_BITS.get(data_type, 0)


def packed_strides(sizes: list[int]) -> list[int]:
    """Row-major strides in elements."""
    strides, acc = [0] * len(sizes), 1
    for i in range(len(sizes) - 1, -1, -1):
        strides[i] = acc
        acc *= sizes[i]
    return strides


def calc_buffer_tensor_size(data_type: int, sizes: list[int], strides: list[int] | None) -> int:
    """DMLCalcBufferTensorSize: (index of the last element + 1) * element size, rounded up to 4 bytes."""
    if not sizes or any(s == 0 for s in sizes):
        return 0
    st = strides if strides is not None else packed_strides(sizes)
    last = sum((s - 1) * t for s, t in zip(sizes, st, strict=False))
    bits = element_bits(data_type) or 32
    nbytes = ((last + 1) * bits + 7) // 8
    return (nbytes + 3) & ~3


def _tensor(t: dict[str, Any], where: str) -> dict[str, Any]:
    if "Desc" in t and isinstance(t.get("Desc"), dict):
        ttype = _enum(t.get("Type", 1), TENSOR_TYPES, "DML_TENSOR_TYPE_", f"{where}.Type")
        b = t["Desc"]
    else:
        ttype, b = 1, t
    data_type = _enum(b.get("DataType", 0), DATA_TYPES, "DML_TENSOR_DATA_TYPE_", f"{where}.DataType")
    sizes = [int(s) for s in b.get("Sizes") or []]
    strides = b.get("Strides")
    strides = None if strides is None else [int(s) for s in strides]
    dims = b.get("DimensionCount")
    dims = len(sizes) if dims is None else int(dims)
    total = b.get("TotalTensorSizeInBytes")
    if total is None:
        total = calc_buffer_tensor_size(data_type, sizes, strides)
    return {
        "Type": ttype,
        "DataType": data_type,
        "Flags": _flags(b.get("Flags")),
        "DimensionCount": dims,
        "Sizes": sizes,
        "Strides": strides,
        "TotalTensorSizeInBytes": int(total),
        "GuaranteedBaseOffsetAlignment": int(b.get("GuaranteedBaseOffsetAlignment") or 0),
    }


def descriptor_of(case: dict[str, Any]) -> dict[str, Any]:
    """The descriptor part of a case: ``case["desc"]``, or the case without its non-descriptor keys."""
    if "desc" in case:
        return dict(case["desc"])
    return {k: v for k, v in case.items() if k not in CASE_KEYS}


def to_c_view(desc: dict[str, Any]) -> dict[str, Any]:
    """The descriptor as the C structs see it: integer enums, defaults filled, wrapped or bare accepted.

    Raises ``ValueError`` when the document cannot be written as C structs (an out-of-range UINT,
    an unknown enum name, a missing tensor).
    """
    op_type = 70
    body = desc
    if "Desc" in desc and "InputTensor" not in desc:
        op_type = _enum(desc.get("Type", 70), OPERATOR_TYPES, "DML_OPERATOR_", "Type")
        body = desc["Desc"]
    if not isinstance(body.get("InputTensor"), dict) or not isinstance(body.get("OutputTensor"), dict):
        raise TypeError("InputTensor and OutputTensor must be objects")
    repeats = [int(r) for r in body.get("Repeats") or []]
    count = body.get("RepeatsCount")
    view = {
        "OperatorType": op_type,
        "InputTensor": _tensor(body["InputTensor"], "InputTensor"),
        "OutputTensor": _tensor(body["OutputTensor"], "OutputTensor"),
        "RepeatsCount": len(repeats) if count is None else int(count),
        "Repeats": repeats,
    }
    _check_ranges(view)
    return view


def _check_ranges(view: dict[str, Any]) -> None:
    def u32(v: int, what: str) -> None:
        if not 0 <= v <= UINT32_MAX:
            raise ValueError(f"{what} = {v} does not fit a UINT")

    u32(view["RepeatsCount"], "RepeatsCount")
    for i, r in enumerate(view["Repeats"]):
        u32(r, f"Repeats[{i}]")
    for name in ("InputTensor", "OutputTensor"):
        t = view[name]
        for key in ("Type", "DataType", "Flags", "DimensionCount", "GuaranteedBaseOffsetAlignment"):
            u32(t[key], f"{name}.{key}")
        for key in ("Sizes", "Strides"):
            for i, v in enumerate(t[key] or []):
                u32(v, f"{name}.{key}[{i}]")
        if not 0 <= t["TotalTensorSizeInBytes"] <= UINT64_MAX:
            raise ValueError(f"{name}.TotalTensorSizeInBytes does not fit a UINT64")
        if max(t["DimensionCount"], len(t["Sizes"]), len(t["Strides"] or [])) > 64:
            raise ValueError(f"{name}: more than 64 dimensions")
    if max(view["RepeatsCount"], len(view["Repeats"])) > 64:
        raise ValueError("more than 64 repeats")


def _as_bytes(value: Any) -> bytes:
    if value is None:
        return b""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if hasattr(value, "tobytes"):
        return bytes(value.tobytes())
    if isinstance(value, str):
        return bytes.fromhex(value)
    raise TypeError(f"expected bytes, got {type(value).__name__}")


def _round4(n: int) -> int:
    return (n + 3) & ~3


def input_pattern(n: int) -> bytes:
    """The default input bytes: a deterministic non-repeating-ish pattern (byte i = (i * 37 + 11) mod 256)."""
    return bytes((i * 37 + 11) & 0xFF for i in range(n))


def runner_line(case: dict[str, Any], index: int) -> tuple[str, dict[str, Any]]:
    """The runner's JSON line for one case, and the buffer layout it used (to slice the answer)."""
    view = to_c_view(descriptor_of(case))
    line: dict[str, Any] = {"id": str(case.get("id", index)), **view, "execute": bool(case.get("execute"))}
    layout: dict[str, Any] = {}
    if line["execute"]:
        for side, tensor, default_fill in (("input", "InputTensor", 0x00), ("output", "OutputTensor", 0xCD)):
            total = view[tensor]["TotalTensorSizeInBytes"]
            offset = int(case.get(f"{side}_offset", 0))
            size = int(case.get(f"{side}_size", _round4(total)))
            key = "input" if side == "input" else "output_init"
            data = (
                _as_bytes(case.get(key))
                if case.get(key) is not None
                else (input_pattern(size) if side == "input" else b"")
            )
            buffer_size = int(case.get(f"{side}_buffer_size", max(offset + size, offset + len(data), 4)))
            fill = int(case.get(f"{side}_fill", default_fill))
            buf = bytearray([fill]) * buffer_size
            buf[offset : offset + len(data)] = data[: max(0, buffer_size - offset)]
            line[f"{side}_buffer"] = buf.hex()
            line[f"{side}_offset"] = offset
            line[f"{side}_size"] = size
            layout[side] = (offset, size)
    return json.dumps(line, separators=(",", ":")), layout


def _answer(raw: dict[str, Any], layout: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": raw.get("id"),
        "directml_version": row.get("directml_version"),
        "file_version": row.get("file_version"),
        "max_feature_level": row.get("max_feature_level"),
        "wheel": row.get("wheel"),
    }
    if "create_hr" in raw:
        hr = int(raw["create_hr"], 16)
        out.update(hresult=hr, hresult_hex=f"0x{hr:08X}", accepted=hr == S_OK)
    for key in ("error", "crash"):
        if key in raw:
            out[key] = raw[key]
    if raw.get("device_removed"):
        out["device_removed"] = True
    if "crash" in raw and out.get("accepted"):
        out.update(executed=False, exec_stage="crash", exec_hresult_hex=raw["crash"])
    if "exec_stage" in raw:
        out["executed"] = bool(raw.get("executed"))
        out["exec_stage"] = raw["exec_stage"]
        out["exec_hresult_hex"] = raw.get("exec_hr")
        if raw.get("output_buffer") is not None:
            whole = bytes.fromhex(raw["output_buffer"])
            offset, size = layout["output"]
            out["output_buffer"] = whole
            out["output"] = whole[offset : offset + size]
    return out


def run_cases(
    cases: Iterable[dict[str, Any]],
    version: str,
    *,
    home: Path | None = None,
    batch_size: int = 4000,
    patch_options1: str = "auto",
) -> list[dict[str, Any]]:
    """Run Tile cases through one DirectML version; return one answer per case, in order.

    A case is a descriptor dict (wrapped or bare, enum names or integers, defaults allowed) with
    optional keys ``id``, ``execute`` (bool), ``input`` (bytes placed at ``input_offset``),
    ``output_init`` (bytes placed at ``output_offset``; the rest of the output buffer is 0xCD),
    ``input_offset``/``output_offset`` (binding offsets), ``input_size``/``output_size`` (binding
    sizes, default TotalTensorSizeInBytes rounded up to 4) and ``input_buffer_size``/``output_buffer_size``.
    Or the descriptor under ``desc`` and these keys beside it.

    An answer holds ``hresult`` (CreateOperator's HRESULT), ``accepted``, ``directml_version``,
    ``max_feature_level``, and for executed cases ``executed``, ``exec_stage``, ``output`` (the bytes of
    the output binding) and ``output_buffer`` (the whole output buffer). A case the C structs cannot
    express gets ``error`` instead; one that crashed the runner gets ``crash`` (an exception code).
    """
    setup = require_setup(home)
    row = resolve_version(version, home)
    dll = setup.dlls[row["wheel_version"]]
    cases = list(cases)
    answers: list[dict[str, Any] | None] = [None] * len(cases)
    pending: list[tuple[int, str, dict[str, Any]]] = []
    for i, case in enumerate(cases):
        try:
            line, layout = runner_line(case, i)
        except (ValueError, TypeError) as exc:
            answers[i] = {
                "id": case.get("id", i),
                "error": f"not expressible as C structs: {exc}",
                "directml_version": row.get("directml_version"),
                "max_feature_level": row.get("max_feature_level"),
            }
            continue
        pending.append((i, line, layout))
    extra = ["--patch-options1", patch_options1]
    with _session(setup):
        while pending:
            chunk = pending[:batch_size]
            n_exec = sum(1 for _, line, _ in chunk if '"execute":true' in line)
            timeout = 120 + 0.05 * len(chunk) + 10 * n_exec
            cmd_lines = [line for _, line, _ in chunk]
            rows, diag = _run_batch_cmd(setup, dll, cmd_lines, timeout, extra)
            startup = [r for r in rows if str(r.get("id", "")).startswith("(")]  # crashed before any case
            results = [r for r in rows if r.get("kind") is None and r not in startup]
            fatal = [r for r in rows if r.get("kind") == "fatal"] + startup
            if fatal and not results:
                raise OracleError(
                    f"DirectML {row.get('directml_version')} failed to start: {fatal[0]} ({diag})"
                )
            done = 0
            for (i, _, layout), raw in zip(chunk, results, strict=False):
                answers[i] = _answer(raw, layout, row)
                done += 1
            crashed = bool(results) and "crash" in results[min(done, len(results)) - 1]
            device_lost = diag.startswith("exit 4:") and done > 0  # restart at the unanswered case
            # stopped early without saying why: blame the next case
            if done < len(chunk) and not crashed and not device_lost:
                i, _, _ = chunk[done]
                answers[i] = {
                    "id": cases[i].get("id", i),
                    "error": f"runner stopped ({diag})",
                    "directml_version": row.get("directml_version"),
                    "max_feature_level": row.get("max_feature_level"),
                }
                done += 1
            pending = pending[done:]
            if pending and not setup.native:
                subprocess.run(["wineserver", "-k"], env=setup.env, capture_output=True, check=False)
    return [a if a is not None else {"error": "no answer"} for a in answers]


def _run_batch_cmd(
    setup: Setup, dll: Path, lines: list[str], timeout: float, extra: list[str]
) -> tuple[list[dict[str, Any]], str]:
    cmd = _command(setup, dll, *extra)
    with tempfile.TemporaryFile("w+b") as stdin:
        stdin.write(("\n".join(lines) + "\n").encode())
        stdin.seek(0)
        try:
            proc = subprocess.run(
                cmd, stdin=stdin, env=setup.env or None, capture_output=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired as exc:
            text = (exc.stdout or b"").decode("utf-8", "replace")
            return _parse_lines(text), f"timed out after {timeout:.0f} s"
    text = proc.stdout.decode("utf-8", "replace")
    tail = proc.stderr.decode("utf-8", "replace")[-300:].strip()
    return _parse_lines(text), f"exit {proc.returncode}: {tail}"


def encode_bytes(b: bytes) -> str:
    """Base64 text of bytes (the JSON form used in golden files)."""
    return base64.b64encode(b).decode()


# ------------------------------------------------------------------------------------------------
# command line: python oracle.py record-versions | versions | run VERSION < cases.jsonl


def main(argv: list[str] | None = None) -> int:
    """Small command line used by setup.sh and for manual runs."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print("usage: oracle.py record-versions [--force] | versions | problem | run VERSION < cases.jsonl")
        return 0 if args else 2
    if args[0] == "problem":
        print(setup_problem() or "ready")
        return 0
    if args[0] == "record-versions":
        t0 = time.monotonic()
        rows = record_versions(force="--force" in args)
        for r in rows:
            print(f"  {r['wheel']:<44}  DirectML {r['file_version']:<14}  max level {r['max_feature_level']}")
        print(f"  ({time.monotonic() - t0:.1f} s)")
        return 0
    if args[0] == "versions":
        print(json.dumps(list_versions(), indent=1))
        return 0
    if args[0] == "run" and len(args) == 2:
        cases = [json.loads(line) for line in sys.stdin if line.strip()]
        for a in run_cases(cases, args[1]):
            for key in ("output", "output_buffer"):
                if isinstance(a.get(key), bytes):
                    a[key] = a[key].hex()
            print(json.dumps(a))
        return 0
    print(f"unknown command: {' '.join(args)}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
