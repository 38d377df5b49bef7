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
MAX_SIMULATED_BYTES = 1 << 31  # the most bytes of one resource the simulation allocates


def _whole(value: Any, what: str, low: int = 0, high: int | None = None) -> int:
    """A JSON integer in ``low..high``, or DmlTileError naming the field and the value."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise DmlTileError(f"{what} is {str(value)[:40]!r}, not a whole number")
    if value < low or (high is not None and value > high):
        limit = f"{low}..{high}" if high is not None else f"at least {low}"
        raise DmlTileError(f"{what} is {value}; it must be {limit}")
    return value


def _float_value(v: Any, dt: np.dtype) -> Any:
    if isinstance(v, str) and v.lower() in ("nan", "inf", "-inf"):
        return dt.type(float(v.lower()))
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise DmlTileError(f"initial value {str(v)[:40]!r} is not a number or 'nan', 'inf', '-inf'")
    try:
        with np.errstate(over="ignore"):  # like a C cast: too large for the type becomes inf
            return dt.type(np.float32(v)) if dt.itemsize == 2 else dt.type(v)  # FLOAT16 is parsed via float
    except OverflowError:  # an integer beyond float64
        return dt.type(np.inf if v > 0 else -np.inf)


def _int_value(v: Any, dt: np.dtype, what: str = "initial value") -> Any:
    info = np.iinfo(dt)
    if isinstance(v, bool) or not isinstance(v, int):
        raise DmlTileError(f"{what} {str(v)[:40]!r} of an integer type must be a JSON integer")
    if not info.min <= v <= info.max:
        raise DmlTileError(f"{what} {v} does not fit {dt.name} ({info.min}..{info.max})")
    return dt.type(v)


def _resource_type(resource: Any) -> np.dtype:
    if not isinstance(resource, Mapping):
        raise DmlTileError(f"a resource is {str(resource)[:40]!r}, not an object")
    try:
        dt = DataType.parse(resource.get("initialValuesDataType")).numpy_dtype
    except ValueError:
        dt = None
    if dt is None:
        raise DmlTileError(
            f"initialValuesDataType {str(resource.get('initialValuesDataType'))[:40]!r} is not supported here"
        )
    return dt


def _initial_count(resource: Mapping) -> int:
    """How many initial values the resource declares (checked, nothing allocated)."""
    init = resource.get("initialValues")
    if isinstance(init, list):
        if len(init) > MAX_SIMULATED_VALUES:
            raise DmlTileError(f"{len(init)} initialValues are too many to simulate")
        return len(init)
    if isinstance(init, Mapping) and "valueCount" in init and ("value" in init or "valueStart" in init):
        count = _whole(init["valueCount"], "initialValues.valueCount")
        if count > MAX_SIMULATED_VALUES:
            raise DmlTileError(
                f"valueCount {count} is too large to simulate (at most {MAX_SIMULATED_VALUES})"
            )
        return count
    raise DmlTileError(f"initialValues {str(init)[:60]} is not an array, constant or sequence initializer")


def _fill_values(resource: Mapping, dt: np.dtype, count: int, out: np.ndarray) -> None:
    """Write the resource's initial values into ``out`` (``count`` elements of ``dt``)."""
    init = resource["initialValues"]
    conv = (lambda v: _float_value(v, dt)) if dt.kind == "f" else (lambda v: _int_value(v, dt))
    if isinstance(init, list):
        out[...] = np.array([conv(v) for v in init], dtype=dt) if init else out
    elif "value" in init:
        out.fill(conv(init["value"]))
    elif count:
        steps = np.full(count, conv(init.get("valueDelta", 0)), dtype=dt)
        steps[0] = conv(init["valueStart"])
        with np.errstate(over="ignore"):
            np.add.accumulate(steps, dtype=dt, out=out)


def resource_values(resource: Mapping) -> np.ndarray:
    """The initial elements of a DxDispatch buffer resource (array, constant or sequence initializer)."""
    dt = _resource_type(resource)
    count = _initial_count(resource)
    values = np.zeros(count, dt)
    _fill_values(resource, dt, count, values)
    return values


def _layout(resource: Mapping) -> tuple[np.dtype, int, int, int]:
    """(dtype, initial value count, sizeInBytes, initialValuesOffsetInBytes), all checked."""
    dt = _resource_type(resource)
    count = _initial_count(resource)
    raw = count * dt.itemsize
    size = _whole(resource.get("sizeInBytes", (raw + 3) & ~3), "sizeInBytes")
    offset = _whole(resource.get("initialValuesOffsetInBytes", 0), "initialValuesOffsetInBytes")
    if raw + offset > size:
        raise DmlTileError(
            f"sizeInBytes {size} is too small for {raw} bytes of initial values at offset {offset}"
        )
    return dt, count, size, offset


def resource_buffer(resource: Mapping, need: int | None = None) -> np.ndarray:
    """The resource's buffer as bytes: its initial values, then zeros. Only the first ``need`` bytes
    (at least the initial values) are allocated when given, so a huge ``sizeInBytes`` that nothing
    reads costs nothing; without ``need``, the whole ``sizeInBytes``."""
    dt, count, size, offset = _layout(resource)
    raw = count * dt.itemsize
    alloc = size if need is None else min(size, max(need, raw + offset))
    if alloc > MAX_SIMULATED_BYTES:
        raise DmlTileError(
            f"a buffer of {alloc} bytes is too large to simulate (at most {MAX_SIMULATED_BYTES})"
        )
    buf = np.zeros(alloc, dtype=np.uint8)
    _fill_values(resource, dt, count, buf[offset : offset + raw].view(dt))
    return buf


def printed_values(resource: Mapping, buf: np.ndarray) -> np.ndarray:
    """The elements DxDispatch's ``print`` shows for a resource holding ``buf``: as many as the
    initial values, in the initial-value data type (a view into ``buf``)."""
    dt = _resource_type(resource)
    count = _initial_count(resource)
    return buf[: count * dt.itemsize].view(dt)


def expected_outputs(model: Any) -> dict[str, np.ndarray]:
    """Run a DxDispatch model's Tile dispatches on the NumPy backend and return, for each resource
    a ``print`` or ``writeFile`` command names, the elements ``print`` would show.

    Follows the model: resources initialised as DxDispatch initialises them, commands in order,
    buffers persisting between dispatches. Bindings by name (with ``elementOffset``) only. A model
    DxDispatch would reject (a field of the wrong type, a value out of range, a binding past its
    resource) raises DmlTileError naming the field; buffers are allocated only as far as the
    dispatches and prints read them.
    """
    model = read_model(model)
    resources = model.get("resources", {})
    if not isinstance(resources, Mapping):
        raise DmlTileError(f'"resources" is {str(resources)[:40]!r}; it must be an object of named buffers')
    commands = model.get("commands", [])
    if not isinstance(commands, list) or not all(isinstance(c, Mapping) for c in commands):
        raise DmlTileError('"commands" must be an array of objects')
    layouts = {name: _layout(res) for name, res in resources.items()}
    imported = from_dxdispatch(model)
    plans: list[tuple[int, Any, Any, Any]] = []  # (command index, op or None, resource name, bindings)
    need = {name: count * dt.itemsize + offset for name, (dt, count, _, offset) in layouts.items()}
    last_dispatch = -1
    for i, cmd in enumerate(commands):
        kind = str(cmd.get("type", "")).lower()
        if kind == "dispatch":
            name = cmd.get("dispatchable")
            if not isinstance(name, str) or name not in imported:
                raise DmlTileError(
                    f"command {i} dispatches {str(name)[:40]!r}, which is not a readable Tile dispatchable"
                )
            op = compile_tile(imported[name])
            bound = []
            for point, t in (("InputTensor", op.desc.input), ("OutputTensor", op.desc.output)):
                res, offset = _binding(resources, cmd.get("bindings", {}), point, i)
                start = offset * t.data_type.element_size
                end = start + t.total_tensor_size_in_bytes
                if end > layouts[res][2]:
                    raise DmlTileError(
                        f"command {i} binds {point} to resource {res!r} at elementOffset {offset}: the tensor's "
                        f"bytes {start}..{end} run past its sizeInBytes {layouts[res][2]}"
                    )
                need[res] = max(need[res], end)
                bound.append((res, start, end))
            plans.append((i, op, None, bound))
            last_dispatch = i
        elif kind in ("print", "writefile"):
            resource_name: Any = cmd.get("resource")
            if not isinstance(resource_name, str) or resource_name not in resources:
                raise DmlTileError(
                    f"command {i} names resource {str(resource_name)[:40]!r}, which the model does not define"
                )
            plans.append((i, None, resource_name, None))
    buffers: dict[str, np.ndarray] = {}

    def buffer(name: str) -> np.ndarray:
        if name not in buffers:
            buffers[name] = resource_buffer(resources[name], need[name])
        return buffers[name]

    shown: dict[str, np.ndarray] = {}
    for i, op, printed, bound in plans:
        if op is not None:
            (src, s0, s1), (dst, d0, d1) = bound
            op.run_buffers(buffer(src)[s0:s1], buffer(dst)[d0:d1])
        else:
            values = printed_values(resources[printed], buffer(printed))
            shown[printed] = values.copy() if i < last_dispatch else values  # a later dispatch may change it
    return shown


def _binding(resources: Mapping, bindings: Any, point: str, i: int) -> tuple[str, int]:
    """(resource name, elementOffset) a dispatch binds to ``point``; DmlTileError when it names none."""
    if not isinstance(bindings, Mapping):
        raise DmlTileError(f"command {i}: bindings is {str(bindings)[:40]!r}, not an object")
    source = bindings.get(point)
    name: Any
    if isinstance(source, list) and len(source) == 1:
        source = source[0]
    if isinstance(source, str):
        name, offset = source, 0
    elif isinstance(source, Mapping):
        name = source.get("name")
        offset = _whole(source.get("elementOffset", 0), f"command {i}: bindings.{point}.elementOffset")
    else:
        name, offset = None, 0
    if not isinstance(name, str) or name not in resources:
        raise DmlTileError(
            f"binding {point} names resource {str(source)[:60]!r}, which the model does not define"
        )
    return name, offset
