"""Tile layers of an OpenVINO IR (``model.xml``) for check_model, read with the ``openvino`` extra.

OpenVINO has no onnxruntime execution provider, so the provider rules (DML5xx) do not apply: a
layer's verdict is dmltile's lowering of OpenVINO Tile-1 onto DirectML at the feature level.
``dispatch-per-value`` marks repeats computed at run time or dynamic dimensions (give them with
``inputs``/``repeats``); ``cpu-fallback`` a layer DirectML cannot express (string elements).
Never import onnxruntime here: in one process with it, OpenVINO's CPU plugin crashed.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..errors import FrameworkError, InputError
from .framework import dtype_name
from .lowering import lower
from .node_report import CPU_FALLBACK, DISPATCH, TileNode, TileNodeReport, settle, symbolic_output

INSTALL = "pip install 'dmltile[openvino]'"


def _openvino():
    try:
        import openvino as ov
    except ImportError:
        raise InputError(f"reading an OpenVINO IR (.xml) needs the openvino package: {INSTALL}") from None
    return ov


def _dims(pshape) -> list | None:
    if pshape.rank.is_dynamic:
        return None
    return [d.get_length() if d.is_static else "?" for d in pshape]


def _dtype(element_type) -> str:
    name = element_type.get_type_name()
    if name == "bf16":
        return "bfloat16"
    if name == "string":
        return "string"
    return dtype_name(element_type.to_dtype())


def _read_ir(path: Any, dims: dict | None, inputs: dict | None):
    """The IR as an ov.Model, reshaped to ``inputs``; InputError when it cannot be read or a name is wrong."""
    ov = _openvino()
    name = os.fspath(path)
    if not os.path.isfile(name):
        raise InputError(f"{name}: no such file")
    if dims:
        raise InputError(
            "--dim names a symbolic dimension of an ONNX model; for an OpenVINO IR give --input NAME=SHAPE"
        )
    try:
        model = ov.Core().read_model(name)
    except Exception as e:
        raise InputError(f"{name}: not a readable OpenVINO IR ({type(e).__name__}: {str(e)[:160]})") from None
    if inputs:
        params = {p.get_friendly_name(): p for p in model.get_parameters()}
        unknown = [k for k in inputs if k not in params]
        if unknown:
            raise InputError(
                f"--input {unknown[0]}: the IR has no Parameter of that name; it has {', '.join(params)}"
            )
        model.reshape({params[k].output(0): ov.PartialShape(v) for k, v in inputs.items()})
    return model


def _repeat_values(op, rep: TileNodeReport, given: dict) -> np.ndarray | None:
    """The layer's repeats, from the caller (taken out of ``given``) or a Constant; None when computed
    or fed at run time. Says where they come from in ``rep.repeats_source``."""
    layer, source = rep.name, op.input_value(1).get_node()
    kind = source.get_type_name()
    if layer in given:
        values = np.asarray(given.pop(layer), dtype=np.int64)
        rep.repeats_source = f"values given (--repeats {layer})"
        rep.supplied.append(f"repeats {values.tolist()} (--repeats {layer})")
        return values
    if kind == "Constant":
        rep.repeats_source = f"Constant '{source.get_friendly_name()}'"
        return np.asarray(source.get_data())
    rep.repeats_source = (
        f"Parameter '{source.get_friendly_name()}', fed at run time"
        if kind == "Parameter"
        else f"computed at run time by {kind} '{source.get_friendly_name()}'"
    )
    return None


def _lower_values(node: TileNode, shape: list, values: np.ndarray) -> None:
    """Repeats, steps and output shape from dmltile's lowering of OpenVINO Tile-1 (dynamic dims as 1).
    FrameworkError when OpenVINO's rules reject the values."""
    rep = node.report
    known = [d if isinstance(d, int) else 1 for d in shape]
    plan = lower("openvino", known, values, node.dtype)
    ft = plan.framework_tile
    rep.repeats, rep.steps = [int(r) for r in plan.repeats], list(ft.steps)
    if known != shape:
        promoted = [1] * (len(ft.shape) - len(shape)) + list(shape)
        rep.output_shape = symbolic_output(promoted, list(ft.effective_repeats))
    else:
        rep.output_shape = list(plan.output_shape)
        node.shape = tuple(ft.shape)
    node.reps = tuple(ft.effective_repeats)


def _run_time_reason(rep: TileNodeReport, values_known: bool) -> str | None:
    """Why DirectML must compile the layer per value at run time; None when everything is known."""
    shape = rep.input_shape
    dynamic = [i for i, d in enumerate(shape or []) if not isinstance(d, int)]
    if values_known and shape is not None and not dynamic:
        return None
    why = [] if values_known else [f"repeats is not constant ({rep.repeats_source})"]
    why += [f"input dims {dynamic} of {shape} are dynamic"] if dynamic else []
    why += ["the input's rank is dynamic"] if shape is None else []
    return (
        "; ".join(why) + ": DirectML's Tile takes Sizes and Repeats in its descriptor, so the operator is "
        "compiled per value at run time; "
        + ("--input NAME=SHAPE " if values_known else "--repeats LAYER=... ")
        + "gives the exact descriptor"
    )


STRING_REASON = "string elements have no DML_TENSOR_DATA_TYPE; DirectML cannot tile them"


def _analyse_layer(op, given: dict) -> TileNode:
    """The level-independent facts and verdict of one Tile layer."""
    shape = _dims(op.input(0).get_partial_shape())
    dtype = _dtype(op.input(0).get_element_type())
    rep = TileNodeReport(op.get_friendly_name(), None, shape, dtype, None, framework="openvino")
    node = TileNode(rep, dtype=dtype)
    values = _repeat_values(op, rep, given)
    if values is not None and shape is not None:
        try:
            _lower_values(node, shape, values)
        except FrameworkError as e:
            return node.reject(str(e))
    type_verdict = (CPU_FALLBACK, STRING_REASON) if dtype == "string" else None
    if settle(node, type_verdict, _run_time_reason(rep, values is not None)) == DISPATCH:
        rep.compiled = "once, when the model is compiled"
    return node


def analyse_ir(path: Any, dims: dict | None, inputs: dict | None, repeats: dict | None) -> list[TileNode]:
    """The level-independent facts of every Tile layer of the IR at ``path``."""
    model = _read_ir(path, dims, inputs)
    given = dict(repeats or {})
    nodes = [_analyse_layer(op, given) for op in model.get_ordered_ops() if op.get_type_name() == "Tile"]
    if given:
        raise InputError(f"--repeats {next(iter(given))}: the IR has no Tile layer of that name")
    return nodes
