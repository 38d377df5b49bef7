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
from .model_check import TileNodeReport, _Node, _symbolic_output

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


def analyse_ir(path: Any, dims: dict | None, inputs: dict | None, repeats: dict | None) -> list:
    """The level-independent facts of every Tile layer (``model_check._Node``s)."""
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
    given = dict(repeats or {})
    nodes = []
    for op in model.get_ordered_ops():
        if op.get_type_name() != "Tile":
            continue
        layer = op.get_friendly_name()
        shape = _dims(op.input(0).get_partial_shape())
        dtype = _dtype(op.input(0).get_element_type())
        source = op.input_value(1).get_node()
        rep = TileNodeReport(layer, None, shape, dtype, None, framework="openvino")
        node = _Node(rep, dtype=dtype)
        values = None
        if layer in given:
            values = np.asarray(given.pop(layer), dtype=np.int64)
            rep.repeats_source = f"values given (--repeats {layer})"
            rep.supplied.append(f"repeats {values.tolist()} (--repeats {layer})")
        elif source.get_type_name() == "Constant":
            values = np.asarray(source.get_data())
            rep.repeats_source = f"Constant '{source.get_friendly_name()}'"
        else:
            kind = source.get_type_name()
            rep.repeats_source = (
                f"Parameter '{source.get_friendly_name()}', fed at run time"
                if kind == "Parameter"
                else f"computed at run time by {kind} '{source.get_friendly_name()}'"
            )
        symbolic = shape is not None and any(not isinstance(d, int) for d in shape)
        if values is not None and shape is not None:
            try:
                plan = lower("openvino", [d if isinstance(d, int) else 1 for d in shape], values, dtype)
            except FrameworkError as e:
                rep.status, rep.reason = "invalid", str(e)
                nodes.append(node)
                continue
            ft = plan._node
            assert ft is not None  # lower() always keeps the framework's node
            rep.repeats, rep.steps = [int(r) for r in plan.repeats], list(ft.steps)
            promoted = [1] * (len(ft.shape) - len(shape)) + list(shape)
            rep.output_shape = (
                _symbolic_output(promoted, list(ft.effective_repeats))
                if symbolic
                else list(plan.output_shape)
            )
            node.reps = tuple(ft.effective_repeats)
            if not symbolic:
                node.shape = tuple(ft.shape)
        if dtype == "string":
            rep.status = "cpu-fallback"
            rep.reason = "string elements have no DML_TENSOR_DATA_TYPE; DirectML cannot tile them"
        elif rep.output_shape is not None and 0 in rep.output_shape:
            rep.status, rep.reason = (
                "empty",
                f"the output shape {rep.output_shape} has no elements, so nothing is dispatched",
            )
        elif values is None or shape is None or symbolic:
            node.per_value = True
            rep.status = "dispatch-per-value"
            why = [f"repeats is not constant ({rep.repeats_source})"] if values is None else []
            dynamic = [i for i, d in enumerate(shape or []) if d == "?"]
            why += [f"input dims {dynamic} of {shape} are dynamic"] if symbolic else []
            why += ["the input's rank is dynamic"] if shape is None else []
            rep.reason = (
                "; ".join(why)
                + ": DirectML's Tile takes Sizes and Repeats in its descriptor, so the operator is "
                "compiled per value at run time; "
                + ("--repeats LAYER=... " if values is None else "--input NAME=SHAPE ")
                + "gives the exact descriptor"
            )
        else:
            rep.status = "dispatch"
            rep.compiled = "once, when the model is compiled"
        nodes.append(node)
    if given:
        raise InputError(f"--repeats {next(iter(given))}: the IR has no Tile layer of that name")
    return nodes
