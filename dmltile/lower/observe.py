"""observe_model(): what onnxruntime's real DirectML execution provider did with every Tile node.

The model runs on concrete inputs on an ``onnxruntime-directml`` wheel's own provider
(``dmltile.execute.directml.ort_provider``: Wine + Xvfb here, natively on Windows) in two sessions:
one with the provider's graph fusion off, where every node keeps its name in the verbose log's
placement lines and in the profiler, and one as an application gets it (fusion on), where a node
that joined the fused DirectML graph disappears into ``DmlFusedNode_*``. When the session with the
provider cannot be created, the CPU provider alone is tried, to tell a model onnxruntime's Python
InferenceSession would retry on the CPU from one no provider runs.

Each node gets an observed ``status`` in ``check_model``'s terms: dispatch (on DirectML, fused),
dispatch-per-value (on DirectML, outside the fused graph), empty (on DirectML, no output elements),
cpu-fallback (on the CPU provider, or the session only starts without DirectML), invalid (no
provider runs the model).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from ..execute.directml import ort_provider
from .onnx_graph import text

DML, CPU = ort_provider.DML, ort_provider.CPU


@dataclass
class ObservedNode:
    """One Tile node as the real provider handled it."""

    name: str
    status: str  # dispatch, dispatch-per-value, empty, cpu-fallback, invalid, or unobserved
    provider: str | None  # the provider the node was placed on
    fused: bool | None  # joined the fused DirectML graph (None: not known)
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {k: getattr(self, k) for k in ("name", "status", "provider", "fused", "detail")}


@dataclass
class Observation:
    """The real provider's verdict on a model: per Tile node, and the outputs of the unfused session."""

    wheel: str
    nodes: dict[str, ObservedNode] = field(default_factory=dict)
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    session_error: str | None = None


def named_tiles(model: Any) -> tuple[Any, list[str]]:
    """A copy of ``model`` whose top-level Tile nodes all have names (an unnamed one gets the name
    ``check_model`` shows for it), and those names in graph order."""
    model = copy.deepcopy(model)
    names = []
    for i, node in enumerate(model.graph.node):
        if node.op_type == "Tile" and node.domain in ("", "ai.onnx"):
            if not node.name:
                node.name = f"(node {i}: Tile)"
            names.append(text(node.name))
    return model, names


def _requests(model: bytes, inputs: dict, outputs: list[str], free_dims: dict) -> list[dict]:
    base = {"model": model, "inputs": inputs, "outputs": outputs, "free_dims": free_dims}
    return [{**base, "id": "unfused", "fusion": False}, {**base, "id": "fused", "fusion": True}]


def _placed_on(run: ort_provider.ModelRun, name: str) -> str | None:
    for provider, nodes in run.placed.items():
        if nodes == ["all"] or name in nodes:
            return provider
    return run.providers.get(name)


def _node(name: str, unfused: ort_provider.ModelRun, fused: ort_provider.ModelRun) -> ObservedNode:
    provider = _placed_on(unfused, name)
    if provider is None:
        return ObservedNode(
            name, "unobserved", None, None, "the provider's log and profile do not name this node"
        )
    if provider != DML:
        return ObservedNode(name, "cpu-fallback", provider, False, f"placed on {provider}")
    shapes = unfused.output_shapes.get(name) or []
    if shapes and 0 in shapes[0]:
        return ObservedNode(
            name, "empty", provider, False, f"placed on {DML}; the output {shapes[0]} is empty"
        )
    if not fused.ok:
        return ObservedNode(name, "dispatch", provider, None, f"placed on {DML}; the fused session failed")
    alone = name in fused.providers or any(name in nodes for nodes in fused.placed.values())
    if alone:
        return ObservedNode(name, "dispatch-per-value", provider, False, f"on {DML}, outside the fused graph")
    return ObservedNode(name, "dispatch", provider, True, f"on {DML}, inside the fused DirectML graph")


def observe_model(
    model: Any,
    inputs: dict[str, np.ndarray],
    free_dims: dict[str, int] | None = None,
    wheel: str | None = None,
) -> Observation:
    """Run ``model`` (an onnx.ModelProto) on ``inputs`` on the real DirectML provider of ``wheel``
    (default: the newest installed) and say per top-level Tile node what it did. ``free_dims`` fixes
    symbolic dimensions as SessionOptions.add_free_dimension_override_by_name does."""
    [seen] = observe_models([(model, inputs, free_dims or {})], wheel)
    return seen


def observe_models(items: list[tuple[Any, dict, dict]], wheel: str | None = None) -> list[Observation]:
    """``observe_model`` for many (model, inputs, free_dims) at once: one runner process for all the
    sessions (Wine starts once), and one more for the CPU-only reference sessions."""
    wheel = ort_provider.resolve_wheel(wheel)
    prepared = []
    requests: list[dict] = []
    for model, inputs, free_dims in items:
        named, names = named_tiles(model)
        data = named.SerializeToString()
        base = {"model": data, "inputs": inputs, "outputs": [o.name for o in named.graph.output]}
        prepared.append(({**base, "free_dims": dict(free_dims or {})}, names))
        requests += _requests(data, inputs, base["outputs"], dict(free_dims or {}))
    runs = ort_provider.run_models(requests, wheel)
    pairs = [(runs[2 * i], runs[2 * i + 1]) for i in range(len(items))]
    failed = [i for i, (unfused, _) in enumerate(pairs) if unfused.stage == "CreateSession"]
    # the CPU reference runs the model on the same inputs: a session that is created but fails at its
    # first run (negative repeats) is no model the CPU provider runs either
    cpu_runs = (
        ort_provider.run_models([{**prepared[i][0], "id": f"cpu{i}", "dml": False} for i in failed], wheel)
        if failed
        else []
    )
    cpu = dict(zip(failed, cpu_runs, strict=True))
    return [_observation(wheel, names, *pairs[i], cpu.get(i)) for i, (_, names) in enumerate(prepared)]


def _observation(
    wheel: str,
    names: list[str],
    unfused: ort_provider.ModelRun,
    fused: ort_provider.ModelRun,
    cpu: ort_provider.ModelRun | None,
) -> Observation:
    seen = Observation(wheel, outputs=dict(unfused.outputs))
    if cpu is not None:
        seen.session_error = unfused.error
        first = (unfused.error or "").strip().splitlines()[0] if unfused.error else ""
        status = "cpu-fallback" if cpu.ok else "invalid"
        why = (
            f"the session with {DML} fails ({first}); the CPU provider alone runs the model"
            if cpu.ok
            else f"no provider runs the model: {first}"
        )
        seen.nodes = {n: ObservedNode(n, status, CPU if cpu.ok else None, False, why) for n in names}
        return seen
    if not unfused.ok:
        seen.session_error = f"{unfused.stage}: {unfused.error or unfused.crash}"
    seen.nodes = {n: _node(n, unfused, fused) for n in names}
    return seen


def load_external_data(model: Any, base: str) -> None:
    """Read the tensors a model keeps in external files (beside it, in ``base``) into the model."""
    from onnx.external_data_helper import load_external_data_for_model

    load_external_data_for_model(model, base)


def comparable_verdict(status: str, fused: bool) -> str:
    """check_model's verdict in the observation's terms: a dispatch compiled outside the fused graph
    (repeats given for a run-time input) is observed as dispatch-per-value."""
    return "dispatch-per-value" if status == "dispatch" and not fused else status


def generated_inputs(
    model: Any,
    dims: dict[str, int] | None = None,
    shapes: dict[str, list[int]] | None = None,
    repeats: dict[str, list[int]] | None = None,
    seed: int = 0,
    values: dict[str, list[int]] | None = None,
) -> tuple[dict[str, Any], dict[str, int]]:
    """Inputs to run ``model`` on, and the symbolic sizes to fix in the session (free dims).

    Every graph input that is not an initializer gets deterministic values of its type and shape
    (bfloat16 as its bits): ``shapes`` gives whole shapes, ``dims`` symbolic sizes; a Tile's repeats
    fed at run time takes its values from ``repeats`` (by node or input name) or ones; ``values``
    gives any integer or bool graph input its values (an input the repeats are computed from).
    InputError when a size is unknown or values do not fit.
    """
    rng = np.random.default_rng(seed)
    initializers = {i.name for i in model.graph.initializer}
    given = {**_repeats_inputs(model, repeats or {}), **(values or {})}
    unknown = [n for n in values or {} if n not in {vi.name for vi in model.graph.input} or n in initializers]
    if unknown:
        raise InputError(f"--value {unknown[0]}: the model has no graph input of that name fed at run time")
    feeds: dict[str, Any] = {}
    free = dict(dims or {})
    for vi in model.graph.input:
        if vi.name in initializers or not vi.type.HasField("tensor_type"):
            continue
        tt = vi.type.tensor_type
        shape = _shape(vi.name, tt, free, shapes or {})
        if tt.elem_type == BFLOAT16:  # no NumPy dtype: its bits, which the runner takes as they are
            feeds[vi.name] = ort_provider.TypedArray(BFLOAT16, _bfloat16_bits(rng, shape))
            continue
        dtype = ONNX_NUMPY.get(tt.elem_type)
        if dtype is None:
            raise InputError(f"input {vi.name}: dmltile cannot make values of element type {tt.elem_type}")
        if vi.name in given:
            feeds[vi.name] = _given(vi.name, given[vi.name], np.dtype(dtype), shape)
        elif vi.name in _repeats_names(model):
            feeds[vi.name] = np.ones(shape, np.int64)
        else:
            feeds[vi.name] = _random(rng, np.dtype(dtype), shape)
    return feeds, free


BFLOAT16 = 16  # TensorProto.BFLOAT16


def _bfloat16_bits(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """bfloat16 values as their 16 bits: the upper half of float32 normal values."""
    floats = rng.standard_normal(shape).astype(np.float32)
    return (floats.view(np.uint32) >> 16).astype(np.uint16)


def _given(name: str, values: list[int], dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """The caller's values for a graph input, in its type and shape; InputError when they do not fit."""
    if int(np.prod(shape)) != len(values):
        raise InputError(
            f"{name} has shape {list(shape)} ({int(np.prod(shape))} values); {len(values)} given"
        )
    if dtype.kind not in "iub":
        raise InputError(f"{name} is {dtype}: values are given for integer and bool inputs only")
    return np.asarray(values).astype(dtype).reshape(shape)


ONNX_NUMPY = ort_provider.ONNX_TO_NUMPY


def _repeats_names(model: Any) -> set[str]:
    return {n.input[1] for n in model.graph.node if n.op_type == "Tile" and len(n.input) == 2}


def _repeats_inputs(model: Any, repeats: dict[str, list[int]]) -> dict[str, list[int]]:
    out = {}
    for node in model.graph.node:
        if node.op_type == "Tile" and len(node.input) == 2:
            for key in (node.name, node.input[1]):
                if key in repeats:
                    out[node.input[1]] = repeats[key]
    return out


def _shape(name: str, tt: Any, free: dict[str, int], shapes: dict[str, list[int]]) -> tuple[int, ...]:
    if name in shapes:
        for d, n in zip(tt.shape.dim, shapes[name], strict=False):
            if d.dim_param:
                free.setdefault(d.dim_param, int(n))
        return tuple(int(n) for n in shapes[name])
    out = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            out.append(int(d.dim_value))
        elif d.dim_param in free:
            out.append(int(free[d.dim_param]))
        else:
            what = f"--dim {d.dim_param}=N" if d.dim_param else f"--input {name}=..."
            raise InputError(f"input {name} has a dimension of unknown size: give {what} to run it")
    return tuple(out)


def _random(rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    if dtype.kind == "O":
        return np.array([f"s{i}" for i in range(int(np.prod(shape)))], dtype=object).reshape(shape)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "fc":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(int(info.min), -100), min(int(info.max), 100), shape, endpoint=True).astype(dtype)
