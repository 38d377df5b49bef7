"""Running a DxDispatch model's Tile dispatches on the NumPy backend: what its print should show.

Follows microsoft/DirectML at a9614e82: ``DxDispatch/src/model/JsonParsers.cpp``
``ParseModelBufferDesc`` (initializers: arrays, ``{"valueCount", "value"}``,
``{"valueCount", "valueStart", "valueDelta"}`` accumulated in the element type; ``sizeInBytes``
defaulting to the initial values' bytes rounded up to 4; ``initialValuesOffsetInBytes``),
``ParseFloatingPointNumber`` / ``ParseFloat16`` (numbers or "nan"/"inf"/"-inf"; FLOAT16 via float);
``DxDispatch/src/dxdispatch/Executor.cpp`` (commands in order, buffers persisting between them;
print shows the initial-value element count in the initial-value data type; DML bindings use
``name`` and ``elementOffset``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core.enums import DataType
from ..errors import DmlTileError
from ..execute.compile import compile as compile_tile
from ..validate.dxdispatch import read_model
from ..validate.dxdispatch_models import from_dxdispatch

MAX_SIMULATED_VALUES = 1 << 26


def _float_value(v: Any, dt: np.dtype) -> Any:
    if isinstance(v, str) and v.lower() in ("nan", "inf", "-inf"):
        return dt.type(float(v.lower()))
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise DmlTileError(f"initial value {v!r} is not a number or 'nan', 'inf', '-inf'")
    return dt.type(np.float32(v)) if dt.itemsize == 2 else dt.type(v)  # FLOAT16 is parsed via float


def resource_values(resource: Mapping) -> np.ndarray:
    """The initial elements of a DxDispatch buffer resource (array, constant or sequence initializer)."""
    try:
        dt = DataType.parse(resource.get("initialValuesDataType")).numpy_dtype
    except ValueError:
        dt = None
    if dt is None:
        raise DmlTileError(
            f"initialValuesDataType {resource.get('initialValuesDataType')!r} is not supported here"
        )
    init = resource.get("initialValues")
    if isinstance(init, list):
        if dt.kind == "f":
            return np.array([_float_value(v, dt) for v in init], dtype=dt)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in init):
            raise DmlTileError("initialValues of an integer type must be JSON integers")
        return np.array(init, dtype=dt)
    if isinstance(init, dict) and "valueCount" in init:
        count = int(init["valueCount"])
        if count > MAX_SIMULATED_VALUES:
            raise DmlTileError(f"valueCount {count} is too large to simulate")
        conv = (lambda v: _float_value(v, dt)) if dt.kind == "f" else dt.type
        if "value" in init:
            return np.full(count, conv(init["value"]), dtype=dt)
        if "valueStart" in init:
            steps = np.full(count, conv(init.get("valueDelta", 0)), dtype=dt)
            if count:
                steps[0] = conv(init["valueStart"])
            with np.errstate(over="ignore"):
                return np.add.accumulate(steps, dtype=dt)
    raise DmlTileError(f"initialValues {str(init)[:60]} is not an array, constant or sequence initializer")


def resource_buffer(resource: Mapping) -> np.ndarray:
    """The resource's whole buffer as bytes: its initial values, then zeros up to ``sizeInBytes``."""
    raw = resource_values(resource).view(np.uint8)
    size = int(resource.get("sizeInBytes", (raw.size + 3) & ~3))
    offset = int(resource.get("initialValuesOffsetInBytes", 0))
    if raw.size + offset > size:
        raise DmlTileError(
            f"sizeInBytes {size} is too small for {raw.size} bytes of initial values at offset {offset}"
        )
    buf = np.zeros(size, dtype=np.uint8)
    buf[offset : offset + raw.size] = raw
    return buf


def printed_values(resource: Mapping, buf: np.ndarray) -> np.ndarray:
    """The elements DxDispatch's ``print`` shows for a resource holding ``buf``: as many as the
    initial values, in the initial-value data type."""
    dt = resource_values(resource).dtype
    count = resource_values(resource).size
    return buf[: count * dt.itemsize].view(dt).copy()


def expected_outputs(model: Any) -> dict[str, np.ndarray]:
    """Run a DxDispatch model's Tile dispatches on the NumPy backend and return, for each resource
    a ``print`` or ``writeFile`` command names, the elements ``print`` would show.

    Follows the model: resources initialised as DxDispatch initialises them, commands in order,
    buffers persisting between dispatches. Bindings by name (with ``elementOffset``) only.
    """
    model = read_model(model)
    resources = model.get("resources", {})
    buffers = {name: resource_buffer(res) for name, res in resources.items()}
    imported = from_dxdispatch(model)
    shown: dict[str, np.ndarray] = {}
    for i, cmd in enumerate(model.get("commands", [])):
        kind = str(cmd.get("type", "")).lower()
        if kind == "dispatch":
            name = cmd.get("dispatchable")
            if name not in imported:
                raise DmlTileError(
                    f"command {i} dispatches {name!r}, which is not a readable Tile dispatchable"
                )
            op = compile_tile(imported[name])
            views = [
                _bound(buffers, resources, cmd.get("bindings", {}), point, elem)
                for point, elem in (
                    ("InputTensor", op.desc.input.data_type.element_size),
                    ("OutputTensor", op.desc.output.data_type.element_size),
                )
            ]
            op.run_buffers(views[0], views[1])
        elif kind in ("print", "writefile"):
            name = cmd.get("resource")
            if name not in buffers:
                raise DmlTileError(f"command {i} names resource {name!r}, which the model does not define")
            shown[name] = printed_values(resources[name], buffers[name])
    return shown


def _bound(buffers: dict, resources: Mapping, bindings: Mapping, point: str, element_size: int) -> np.ndarray:
    source = bindings.get(point)
    if isinstance(source, list) and len(source) == 1:
        source = source[0]
    name, offset = (
        (source, 0)
        if isinstance(source, str)
        else (
            (source.get("name"), int(source.get("elementOffset", 0)))
            if isinstance(source, dict)
            else (None, 0)
        )
    )
    if name not in buffers:
        raise DmlTileError(f"binding {point} names resource {source!r}, which the model does not define")
    return buffers[name][offset * element_size :]
