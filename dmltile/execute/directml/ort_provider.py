"""Drive onnxruntime's real DirectML execution provider: run ONNX models, observe node placement.

``ort_runner.c`` (built by ``setup.sh`` into ``ort_runner.exe``) loads ``onnxruntime.dll`` from an
``onnxruntime-directml`` Windows wheel (one folder per wheel under ``ort/`` in the DirectML cache)
and speaks JSON lines; on Linux it runs under Wine + Xvfb over Mesa's lavapipe, in the same Wine
prefix as the DirectML runner, and on Windows natively. stdlib + numpy only, like ``oracle``.

Public API::

    ort_setup_problem()                   # why it cannot run here, or None
    ort_wheels()                          # every wheel looked at: version, has onnxruntime.dll, DirectML
    run_models(requests, wheel="1.24.4")  # one ModelRun per request

A request is a dict: ``id``, ``model`` (serialized ModelProto bytes), ``inputs`` ({name: ndarray;
strings as an object array of str}), ``outputs`` (names to fetch; none: the session is only
created), ``fusion`` (False keeps every node under its own name: ep.dml.disable_graph_fusion),
``cpu_fallback`` (False: session creation fails when a node would leave the provider),
``free_dims`` ({symbolic name: size}), ``dml`` (False: the CPU provider alone, as a reference).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

if __package__:
    from . import oracle
else:  # run by path (setup.sh): the driver, loaded without dmltile by its sibling module
    import standalone  # type: ignore[import-not-found]

    oracle = standalone.load()

RUNNER = "ort_runner.exe"
DLL = "onnxruntime.dll"
NO_DLL = "no-onnxruntime-dll.txt"  # left by setup.sh in the folder of a wheel that ships no onnxruntime.dll
INFO = "info.json"  # the runner's --info line, recorded by setup.sh
DML = "DmlExecutionProvider"
CPU = "CPUExecutionProvider"
SECONDS_PER_MODEL = 15  # session creation takes 1.5-2.5 s under Wine; a generous bound per model

# ONNX TensorProto element types <-> NumPy (the runner speaks the TensorProto numbers)
ONNX_TO_NUMPY = {
    1: "float32",
    2: "uint8",
    3: "int8",
    4: "uint16",
    5: "int16",
    6: "int32",
    7: "int64",
    8: "object",
    9: "bool",
    10: "float16",
    11: "float64",
    12: "uint32",
    13: "uint64",
    14: "complex64",
    15: "complex128",
}
NUMPY_TO_ONNX = {v: k for k, v in ONNX_TO_NUMPY.items()}
STRING = 8


@dataclass
class ModelRun:
    """What the real provider did with one model.

    ``stage`` is "done" or the step that failed (``error`` then holds onnxruntime's message);
    ``providers`` maps each executed node's name to the provider that ran it (the profiler's
    ``args.provider``); ``placed`` holds the verbose log's placement lines per provider (node
    names, or "all" when every node is on that provider); ``outputs`` the fetched arrays.
    """

    id: str
    stage: str
    error: str | None = None
    providers: dict[str, str] = field(default_factory=dict)
    ops: dict[str, str] = field(default_factory=dict)  # node name -> op type, from the profiler
    output_shapes: dict[str, list[list[int]]] = field(
        default_factory=dict
    )  # node name -> its outputs' shapes
    placed: dict[str, list[str]] = field(default_factory=dict)
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    log: list[dict[str, Any]] = field(default_factory=list)
    crash: str | None = None

    @property
    def ok(self) -> bool:
        return self.stage == "done"


# ------------------------------------------------------------------------------------------------
# where things are


def ort_folder(home: Path | None = None) -> Path:
    """The folder holding one sub-folder per onnxruntime-directml wheel."""
    return (Path(home) if home else oracle.default_home()) / "ort"


def ort_wheels(home: Path | None = None) -> list[dict[str, Any]]:
    """Every onnxruntime-directml wheel setup.sh looked at, newest first: ``wheel_version``,
    ``has_dll`` (False: the wheel ships only the Python extension, so the C API cannot be driven),
    and from the runner's --info line ``ort_version``, ``directml`` (the DirectML.dll FileVersion)
    and ``dml_ok`` (the provider starts here)."""
    rows = []
    for folder in ort_folder(home).glob("*"):
        if not folder.is_dir():
            continue
        row: dict[str, Any] = {"wheel_version": folder.name, "has_dll": (folder / DLL).is_file()}
        if (folder / NO_DLL).is_file():
            row["note"] = (folder / NO_DLL).read_text().strip()
        if (folder / INFO).is_file():
            row.update(json.loads((folder / INFO).read_text()))
        rows.append(row)
    return sorted(rows, key=lambda r: _key(r["wheel_version"]), reverse=True)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version))


def installed_wheels(home: Path | None = None) -> list[str]:
    """The wheel versions whose onnxruntime.dll can be driven here, newest first."""
    return [r["wheel_version"] for r in ort_wheels(home) if r["has_dll"]]


def ort_setup_problem(home: Path | None = None) -> str | None:
    """Why the real provider cannot run here (with the command that installs it), or None."""
    home = Path(home) if home else oracle.default_home()
    problem = oracle.setup_problem(home)
    if problem is not None:
        return problem
    fix = f"run `{oracle.INSTALL_COMMAND}` (or `bash {oracle.SETUP_SCRIPT}`)"
    if not (home / RUNNER).is_file():
        return f"no onnxruntime-directml runner ({RUNNER}) in {home}: {fix}"
    if not installed_wheels(home):
        return f"no onnxruntime.dll under {ort_folder(home)}: {fix}"
    return None


def resolve_wheel(wheel: str | None = None, directml: str | None = None, home: Path | None = None) -> str:
    """The wheel to run: ``wheel`` itself, the newest whose DirectML.dll is ``directml``, or the newest."""
    wheels = [r for r in ort_wheels(home) if r["has_dll"]]
    names = ", ".join(r["wheel_version"] for r in wheels) or "none"
    if wheel is not None:
        wheel = str(wheel).removeprefix("onnxruntime-directml==")
        if wheel not in [r["wheel_version"] for r in wheels]:
            raise oracle.OracleError(
                f"onnxruntime-directml {wheel} is not installed here; installed: {names}"
            )
        return wheel
    if directml is not None:
        for r in wheels:
            if str(r.get("directml", "")) in (directml, f"{directml}.0"):
                return str(r["wheel_version"])
        found = ", ".join(f"{r['wheel_version']} (DirectML {r.get('directml')})" for r in wheels)
        raise oracle.OracleError(
            f"no installed onnxruntime-directml wheel ships DirectML {directml}: {found}"
        )
    if not wheels:
        raise oracle.OracleError(ort_setup_problem(home) or "no onnxruntime-directml wheel installed")
    return str(wheels[0]["wheel_version"])


# ------------------------------------------------------------------------------------------------
# requests and answers


@dataclass(frozen=True)
class TypedArray:
    """An input of an ONNX element type NumPy has no dtype for (bfloat16): its raw elements (uint16
    bits for bfloat16) and the TensorProto type number they are sent as."""

    onnx_type: int
    array: np.ndarray


def _encode_input(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, TypedArray):
        raw = np.ascontiguousarray(value.array)
        return {"name": name, "type": value.onnx_type, "shape": list(raw.shape), "data": raw.tobytes().hex()}
    array = np.asarray(value)
    if array.dtype.kind in "OUS":
        strings = [str(s).encode() for s in array.reshape(-1)]
        return {
            "name": name,
            "type": STRING,
            "shape": list(array.shape),
            "strings": [s.hex() for s in strings],
        }
    kind = NUMPY_TO_ONNX.get(array.dtype.name)
    if kind is None:
        raise ValueError(f"input {name!r}: dtype {array.dtype} has no ONNX tensor type here")
    return {
        "name": name,
        "type": kind,
        "shape": list(array.shape),
        "data": np.ascontiguousarray(array).tobytes().hex(),
    }


def request_line(request: dict[str, Any], index: int) -> str:
    """The runner's JSON line for one request."""
    line = {
        "id": str(request.get("id", index)),
        "model": bytes(request["model"]).hex(),
        "fusion": bool(request.get("fusion", True)),
        "cpu_fallback": bool(request.get("cpu_fallback", True)),
        "dml": bool(request.get("dml", True)),
        "free_dims": {k: int(v) for k, v in (request.get("free_dims") or {}).items()},
        "inputs": [_encode_input(k, v) for k, v in (request.get("inputs") or {}).items()],
        "outputs": list(request.get("outputs") or []),
    }
    return json.dumps(line, separators=(",", ":"))


def _decode_output(out: dict[str, Any]) -> np.ndarray:
    shape = tuple(out.get("shape") or ())
    if "strings" in out:
        values = [bytes.fromhex(s).decode("utf-8", "replace") for s in out["strings"]]
        return np.array(values, dtype=object).reshape(shape)
    dtype = np.dtype(ONNX_TO_NUMPY.get(int(out["type"]), "uint16" if int(out["type"]) == 16 else "uint8"))
    return np.frombuffer(bytes.fromhex(out["data"]), dtype).reshape(shape).copy()


PLACED = re.compile(r"(All nodes|Node\(s\)) placed on \[(\w+)\]\. Number of nodes: (\d+)")
NODE_LINE = re.compile(r"^\s+(\S+) \((.*)\)\s*$")


def parse_placements(log: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The verbose log's placement message as {provider: node names}, ["all"] for "All nodes placed on".

    onnxruntime logs it once per session after partitioning: "All nodes placed on [P]. Number of
    nodes: n", or per provider "Node(s) placed on [P]. Number of nodes: n" followed by one line per
    node, "  OpType (node name)" (in the same message or the next ones).
    """
    placed: dict[str, list[str]] = {}
    provider = None
    for entry in log:
        for line in str(entry.get("message", "")).splitlines():
            m = PLACED.search(line)
            if m:
                provider = m.group(2)
                placed.setdefault(provider, ["all"] if m.group(1) == "All nodes" else [])
                continue
            n = NODE_LINE.match(line)
            if n and provider is not None and placed[provider] != ["all"]:
                placed[provider].append(n.group(2))
    return placed


def parse_profile(events: list[dict[str, Any]], run: ModelRun) -> None:
    """Each executed node's provider, op type and output shapes, from the profiler's kernel events."""
    for e in events:
        args = e.get("args") or {}
        name = str(e.get("name", ""))
        if e.get("cat") == "Node" and "provider" in args and name.endswith("_kernel_time"):
            node = name.removesuffix("_kernel_time")
            run.providers[node] = str(args["provider"])
            run.ops[node] = str(args.get("op_name", ""))
            shapes: list[Any] = [
                next(iter(o.values()), []) for o in args.get("output_type_shape") or [] if isinstance(o, dict)
            ]
            run.output_shapes[node] = [[int(d) for d in shape] for shape in shapes]


def _answer(raw: dict[str, Any], request_id: str) -> ModelRun:
    log = list(raw.get("log") or [])
    run = ModelRun(
        id=str(raw.get("id", request_id)),
        stage=str(raw.get("stage", "crash" if "crash" in raw else "?")),
        error=raw.get("error"),
        placed=parse_placements(log),
        log=log,
        crash=raw.get("crash"),
    )
    parse_profile(raw.get("profile") or [], run)
    for out in raw.get("outputs") or []:
        if "error" not in out:
            run.outputs[out["name"]] = _decode_output(out)
    return run


# ------------------------------------------------------------------------------------------------
# running


def _command(setup: oracle.Setup, dll: Path, *extra: str) -> list[str]:
    return oracle.runner_command(setup, setup.home / RUNNER, dll, *extra)


def runner_info(wheel: str, home: Path | None = None) -> dict[str, Any]:
    """The runner's info line for one wheel: onnxruntime and DirectML versions, does the provider start."""
    setup = oracle.require_setup(home)
    with oracle.session(setup):  # the DirectML runner's lock: one runner at a time
        proc = subprocess.run(
            _command(setup, ort_folder(setup.home) / wheel / DLL, "--info"),
            env=setup.env or None,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    rows = oracle.parse_lines(proc.stdout)
    if not rows:
        raise oracle.OracleError(
            f"{RUNNER} printed nothing for {wheel} (exit {proc.returncode}): {proc.stderr[-400:]}"
        )
    return rows[0]


def run_models(
    requests: list[dict[str, Any]], wheel: str | None = None, home: Path | None = None
) -> list[ModelRun]:
    """Run each request on the real DirectML provider of one onnxruntime-directml wheel; one ModelRun each.

    All requests share one runner process (Wine starts once); a request that crashes the runner
    gets ``stage="crash"`` and the rest continue in a fresh process.
    """
    problem = ort_setup_problem(home)
    if problem is not None:
        raise oracle.OracleError(problem)
    setup = oracle.require_setup(home)
    wheel = resolve_wheel(wheel, home=home)
    dll = ort_folder(setup.home) / wheel / DLL
    lines = [request_line(r, i) for i, r in enumerate(requests)]
    ids = [json.loads(line)["id"] for line in lines]
    answers: list[ModelRun] = []
    with oracle.session(setup):  # the DirectML runner's lock: one runner at a time
        while len(answers) < len(lines):
            rest = lines[len(answers) :]
            rows, diag = _batch(setup, dll, rest)
            fatal = [r for r in rows if r.get("kind") == "fatal"]
            if fatal:
                raise oracle.OracleError(f"onnxruntime-directml {wheel} did not start: {fatal[0]}")
            results = [r for r in rows if r.get("kind") is None]
            answers += [_answer(r, ids[len(answers) + i]) for i, r in enumerate(results)]
            if not results or "crash" not in results[-1]:
                if len(answers) < len(lines):  # stopped without a word: blame the next request
                    answers.append(ModelRun(ids[len(answers)], "stopped", error=diag))
            if len(answers) < len(lines):
                oracle.end_wine(setup)
    return answers


def _batch(setup: oracle.Setup, dll: Path, lines: list[str]) -> tuple[list[dict[str, Any]], str]:
    timeout = 60 + SECONDS_PER_MODEL * len(lines)
    with tempfile.TemporaryFile("w+b") as stdin:
        stdin.write(("\n".join(lines) + "\n").encode())
        stdin.seek(0)
        try:
            proc = subprocess.run(
                _command(setup, dll), stdin=stdin, env=setup.env or None, capture_output=True, timeout=timeout
            )
        except subprocess.TimeoutExpired as exc:
            return oracle.parse_lines(
                (exc.stdout or b"").decode("utf-8", "replace")
            ), f"timed out after {timeout} s"
    tail = proc.stderr.decode("utf-8", "replace")[-300:].strip()
    return oracle.parse_lines(proc.stdout.decode("utf-8", "replace")), f"exit {proc.returncode}: {tail}"


# ------------------------------------------------------------------------------------------------
# does the provider run a Tile here? (setup.sh asks once per installation; doctor reads the answer)

TILE_CHECK = "tile-check.json"  # the answer, beside the DLL, with the files it was measured with


def _field(number: int, payload: bytes | int) -> bytes:
    """One protobuf field: a varint (int) or length-delimited (bytes) value."""

    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
            n >>= 7
            if not n:
                return bytes(out)

    if isinstance(payload, int):
        return varint(number << 3) + varint(payload)
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def _tensor_type(name: str, elem_type: int, dims: list[int]) -> bytes:
    shape = b"".join(_field(1, _field(1, d)) for d in dims)  # TensorShapeProto.dim[].dim_value
    tensor = _field(1, elem_type) + _field(2, shape)  # TypeProto.Tensor
    return _field(1, name.encode()) + _field(2, _field(1, tensor))  # ValueInfoProto


def tile_model() -> bytes:
    """A serialized ONNX model (IR 7, opset 13) of one Tile: float32 x [1, 2], repeats [2, 3] as an
    initializer, y [2, 6]. Written field by field so that the set-up needs no onnx package."""
    repeats = _field(1, 2) + _field(2, 7) + _field(7, bytes([2, 3])) + _field(8, b"r")  # TensorProto
    node = _field(1, b"x") + _field(1, b"r") + _field(2, b"y") + _field(3, b"tile") + _field(4, b"Tile")
    graph = (
        _field(1, node)
        + _field(2, b"tile_check")
        + _field(5, repeats)
        + _field(11, _tensor_type("x", 1, [1, 2]))
        + _field(12, _tensor_type("y", 1, [2, 6]))
    )
    opset = _field(1, b"") + _field(2, 13)
    return _field(1, 7) + _field(8, opset) + _field(7, graph)


def _stamp(home: Path, wheel: str) -> list[float]:
    return [(ort_folder(home) / wheel / DLL).stat().st_mtime, (home / RUNNER).stat().st_mtime]


def check_tile(wheel: str, home: Path | None = None) -> dict[str, Any]:
    """Run one Tile on the wheel's DirectML provider (CPU fallback off) and compare it with numpy.tile:
    ``{"wheel", "runs_tile", "reason"}``."""
    x = np.array([[1.5, -2.0]], dtype=np.float32)
    request = {
        "id": "tile",
        "model": tile_model(),
        "inputs": {"x": x},
        "outputs": ["y"],
        "cpu_fallback": False,
        "fusion": False,  # the node keeps its name in the profile
    }
    try:
        [run] = run_models([request], wheel=wheel, home=home)
    except oracle.OracleError as e:
        return {"wheel": wheel, "runs_tile": False, "reason": str(e)}
    if not run.ok:
        reason = f"a Tile model failed at {run.stage}: {run.error or run.crash}"
    elif run.providers.get("tile") != DML:
        reason = f"the Tile ran on {run.providers.get('tile') or 'no provider the profile names'}, not {DML}"
    elif "y" not in run.outputs or not np.array_equal(run.outputs["y"], np.tile(x, (2, 3))):
        reason = f"the Tile on {DML} gave {run.outputs.get('y')!r}, not numpy.tile's"
    else:
        return {"wheel": wheel, "runs_tile": True, "reason": f"ran a Tile on {DML}, equal to numpy.tile"}
    return {"wheel": wheel, "runs_tile": False, "reason": reason}


def tile_checks(home: Path | None = None, again: bool = False) -> list[dict[str, Any]]:
    """``check_tile`` of every installed wheel, recorded beside its DLL and asked again when the DLL
    or the runner has changed since, when it failed last time, or with ``again``."""
    home = Path(home) if home else oracle.default_home()
    out = []
    for wheel in installed_wheels(home):
        path = ort_folder(home) / wheel / TILE_CHECK
        stamp = _stamp(home, wheel) if (home / RUNNER).is_file() else []
        known = json.loads(path.read_text()) if path.is_file() else {}
        if again or not stamp or known.get("stamp") != stamp or not known.get("runs_tile"):
            known = {**check_tile(wheel, home), "stamp": stamp}
            if stamp:
                path.write_text(json.dumps(known))
        out.append({k: v for k, v in known.items() if k != "stamp"})
    return out


def record_info(home: Path | None = None) -> list[dict[str, Any]]:
    """Ask each installed wheel's runner that has not answered yet for its info line and keep it
    beside the DLL (``info.json``)."""
    rows = []
    for wheel in installed_wheels(home):
        if (ort_folder(home) / wheel / INFO).is_file():
            continue
        info = runner_info(wheel, home)
        (ort_folder(home) / wheel / INFO).write_text(json.dumps(info, indent=1))
        rows.append(info)
    return rows


def main(argv: list[str] | None = None) -> int:
    """``python ort_provider.py record-info | check-tile | wheels`` (used by setup.sh)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["record-info"]:
        for row in record_info():
            state = "starts" if row.get("dml_ok") else f"does not start: {row.get('error')}"
            print(
                f"  onnxruntime {row.get('ort_version'):>8}  DirectML {row.get('directml')}  provider {state}"
            )
        return 0
    if args == ["check-tile"]:  # exit 1 when a wheel that ships onnxruntime.dll cannot run a Tile here
        checks = tile_checks()
        for c in checks:
            print(
                f"  onnxruntime-directml {c['wheel']:>8}  {'runs a Tile' if c['runs_tile'] else 'FAILS'}: {c['reason']}"
            )
        if not checks:
            print("  no onnxruntime-directml wheel with onnxruntime.dll is set up: nothing to run")
        return 0 if all(c["runs_tile"] for c in checks) else 1
    if args == ["wheels"]:
        print(json.dumps(ort_wheels(), indent=1))
        return 0
    print("usage: ort_provider.py record-info | check-tile | wheels", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
