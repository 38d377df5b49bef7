"""DxDispatch interop: write a Tile descriptor as a DxDispatch model, read the Tile dispatchables of one.

DxDispatch (microsoft/DirectML, ``DxDispatch/``) runs DirectML operators described in JSON on a
DirectX 12 device. The format followed here was read from the repository at a9614e82 (2025-07-21):

* ``DxDispatch/doc/Guide.md`` and ``DxDispatch/models/dml_reduce.json``,
  ``dml_element_wise_identity.json``, ``dml_slice.json``: the layout (``resources`` /
  ``dispatchables`` / ``commands``), lowercase ``"type"``/``"desc"``, bindings named by the desc's
  tensor fields, ``print``.
* ``DxDispatch/src/model/JsonParsers.cpp``:
  ``ParseModel`` reads with comments and trailing commas allowed; ``ParseDmlTensorDesc`` /
  ``ParseDmlBufferTensorDesc`` default ``Type`` BUFFER, ``Flags`` NONE, ``DimensionCount`` len(Sizes),
  ``Strides`` missing or ``[]`` = packed (``null`` is rejected: "Expected an array."),
  ``TotalTensorSizeInBytes`` missing or 0 = DMLCalcBufferTensorSize, ``GuaranteedBaseOffsetAlignment`` 0;
  ``ParseFlags`` takes a string or an array of strings; ``ParseFloatingPointNumber`` takes numbers
  or "nan"/"inf"/"-inf" (FLOAT16 via float); integer types need JSON integers;
  ``ParseModelBufferDesc``: ``sizeInBytes`` defaults to the initial values' bytes rounded up to 4,
  initializers are arrays, ``{"valueCount", "value"}`` or ``{"valueCount", "valueStart", "valueDelta"}``
  (accumulated in the element type); ``ParseModelDmlDispatchableDesc`` reads ``Desc``/``desc``
  (or the fields inline); command ``writeFile`` takes ``targetPath`` and optional ``dimensions``.
* ``DxDispatch/src/model/JsonParsersGenerated.cpp`` (``ParseDmlTileOperatorDesc``): ``InputTensor``,
  ``OutputTensor``, ``RepeatsCount`` and ``Repeats`` are all required; the type is
  ``"DML_OPERATOR_TILE"`` or ``"TILE"``.
* ``DxDispatch/src/dxdispatch/Executor.cpp`` (``BufferDataView``, ``PrintCommand``): print shows the
  resource's initial-value element count in its initial-value data type; see ``dxdispatch_print``.

Conventions of the exported model: resource ``input`` holds every element of the input's
``TotalTensorSizeInBytes`` buffer (so a strided or padded input reads the intended elements),
resource ``output`` is ``TotalTensorSizeInBytes`` long and initialised with as many zeros as the
output desc addresses (so ``print`` shows exactly those), dispatchable ``tile`` holds the whole
descriptor, then one dispatch and one print (and optionally a ``writeFile``).

Reading a model belongs to the validate layer, because a DxDispatch file is one more way in for
a descriptor to judge (``from_dxdispatch`` is re-exported here); running a model's Tile dispatches
on NumPy is ``dxdispatch_run``'s job, reading DxDispatch's printed output ``dxdispatch_print``'s.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from ..core.enums import TILE
from ..core.operator import OperatorDesc
from ..core.tensor import BufferTensorDesc, last_element_index
from ..errors import DmlTileError
from ..execute.buffers import pack_tensor
from ..validate.document import load
from ..validate.dxdispatch import DISPATCHABLE, canonical_document, read_model, single_tile_document
from ..validate.dxdispatch_models import DxDispatchModel, from_dxdispatch
from ..validate.source import looks_like_dxdispatch, parse_jsonc_model, strip_jsonc
from .dxdispatch_run import expected_outputs, resource_buffer, resource_values

__all__ = [
    "DISPATCHABLE",
    "INPUT_RESOURCE",
    "OUTPUT_RESOURCE",
    "DxDispatchModel",
    "addressed_element_count",
    "buffer_element_count",
    "canonical_document",
    "default_values",
    "dumps",
    "dxdispatch_desc",
    "expected_outputs",
    "from_dxdispatch",
    "input_buffer",
    "json_number",
    "json_values",
    "looks_like_dxdispatch",
    "parse_jsonc_model",
    "read_model",
    "resource_buffer",
    "resource_values",
    "single_tile_document",
    "strip_jsonc",
    "to_dxdispatch",
]

INPUT_RESOURCE, OUTPUT_RESOURCE = "input", "output"
MAX_INLINE_VALUES = 1 << 22  # a JSON array of more numbers than this is no longer a usable model file


# --------------------------------------------------------------------------------------------
# Export
# --------------------------------------------------------------------------------------------


def buffer_element_count(t: BufferTensorDesc) -> int:
    """Whole elements in the tensor's ``TotalTensorSizeInBytes`` buffer."""
    return t.total_tensor_size_in_bytes // t.data_type.element_size


def addressed_element_count(t: BufferTensorDesc) -> int:
    """Elements from the buffer's start to the last one the desc addresses (packed: the element count)."""
    if any(s == 0 for s in t.sizes):
        return 0
    return last_element_index(t.sizes, t.effective_strides) + 1


def _numpy_dtype(t: BufferTensorDesc, role: str) -> np.dtype:
    dt = t.data_type.numpy_dtype
    if dt is None:
        raise DmlTileError(
            f"{role}.DataType is {t.data_type.c_name}: DxDispatch resources have no initial values of "
            "that type; use an 8-bit or wider type"
        )
    return dt


def default_values(dtype: np.dtype, count: int, seed: int | None = None) -> np.ndarray:
    """Deterministic initial values: 1, 2, 3, ... (wrapping early enough to stay exact in ``dtype``),
    or, with ``seed``, NumPy ``default_rng(seed)`` values (floats in [-100, 100), integers over the
    whole range of the type)."""
    dtype = np.dtype(dtype)
    if seed is None:
        period = 100 if dtype.itemsize == 1 else (1000 if dtype.itemsize == 2 else max(count, 1))
        return ((np.arange(count, dtype=np.int64) % period) + 1).astype(dtype)
    rng = np.random.default_rng(seed)
    if dtype.kind == "f":
        return rng.uniform(-100, 100, count).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=count, dtype=dtype, endpoint=True)


def input_buffer(desc: OperatorDesc, input: Any = None, seed: int | None = None) -> np.ndarray:
    """Every element of the input's ``TotalTensorSizeInBytes`` buffer, as the exported model initialises it.

    ``input`` is an array of the input's Sizes (scattered to where its Strides put each element;
    the rest of the buffer is 0), or a 1-D array with one value per buffer element (taken as the
    raw buffer). Without ``input``: the deterministic ``default_values`` for every buffer element.
    """
    t = desc.input
    dt = _numpy_dtype(t, "InputTensor")
    count = buffer_element_count(t)
    if count > MAX_INLINE_VALUES:
        raise DmlTileError(
            f"InputTensor.TotalTensorSizeInBytes is {t.total_tensor_size_in_bytes}: {count} values are "
            f"too many to write into a JSON model (at most {MAX_INLINE_VALUES})"
        )
    if count < addressed_element_count(t):
        raise DmlTileError(
            f"InputTensor.TotalTensorSizeInBytes {t.total_tensor_size_in_bytes} is smaller than the "
            "elements its Sizes and Strides address; fix the descriptor first (dmltile validate)"
        )
    if input is None:
        return default_values(dt, count, seed)
    x = np.asarray(input) if isinstance(input, np.ndarray) else np.asarray(input, dtype=dt)
    if x.dtype != dt:
        raise DmlTileError(f"input has dtype {x.dtype}, but InputTensor.DataType {t.data_type.name} is {dt}")
    if x.shape == tuple(t.sizes):
        return pack_tensor(t, x)[: count * dt.itemsize].view(dt)
    if x.ndim == 1 and x.size == count:
        return x.copy()
    raise DmlTileError(
        f"input has shape {x.shape}; expected InputTensor.Sizes {list(t.sizes)} "
        f"or the whole buffer as {count} values"
    )


def json_number(value: Any, dtype: np.dtype) -> Any:
    """One value as DxDispatch reads it back bit-exactly: integers as JSON integers, floats as
    the exact decimal of their double (float16/float32 are exact in a double; the parser reads
    doubles at full precision and narrows), NaN/inf as "nan"/"inf"/"-inf"."""
    if np.dtype(dtype).kind != "f":
        return int(value)
    v = float(value)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v.is_integer() and abs(v) < 2**53 and math.copysign(1.0, v) > 0:
        return int(v)
    return v


def json_values(values: np.ndarray) -> list:
    """A flat array as a JSON list that DxDispatch parses back to the same bits (NaN payloads become
    the canonical quiet NaN: JSON has no way to write them)."""
    flat = np.asarray(values).reshape(-1)
    if flat.dtype.kind != "f":
        return flat.tolist()
    return [json_number(v, flat.dtype) for v in flat.tolist()]


def dxdispatch_desc(desc: OperatorDesc) -> dict:
    """The DML_TILE_OPERATOR_DESC with every field written, in the spelling DxDispatch parses:
    canonical C names, except that packed ``Strides`` are ``[]`` (DxDispatch rejects null)."""
    out = desc.to_dict()["Desc"]
    for name in ("InputTensor", "OutputTensor"):
        buffer = out[name]["Desc"]
        if buffer["Strides"] is None:
            buffer["Strides"] = []
    return out


def to_dxdispatch(
    source: Any,
    input: Any = None,
    seed: int | None = None,
    print_output: bool = True,
    write_file: str | None = None,
    verbose_print: bool = False,
) -> dict:
    """A complete DxDispatch model (a dict) that runs the descriptor exactly as written.

    Resources ``input`` (the whole input buffer, see ``input_buffer``) and ``output``
    (``TotalTensorSizeInBytes`` long, zeros for every element the output desc addresses, so that
    ``print`` shows them all); dispatchable ``tile``; a dispatch binding ``InputTensor`` and
    ``OutputTensor``; then ``print`` of the output (``verbose_print``: with each element's bits)
    and/or ``writeFile`` to ``write_file``
    (``.npy``, ``.dat`` or ``.bin``; resolved by DxDispatch against its output path).
    """
    desc = load(source)
    values = input_buffer(desc, input, seed)
    t_in, t_out = desc.input, desc.output
    _numpy_dtype(t_out, "OutputTensor")
    shown = addressed_element_count(t_out)
    if shown > buffer_element_count(t_out) or shown == 0:
        raise DmlTileError(
            f"OutputTensor.TotalTensorSizeInBytes {t_out.total_tensor_size_in_bytes} does not hold the "
            "elements its Sizes and Strides address; fix the descriptor first (dmltile validate)"
        )
    commands: list[dict] = [
        {
            "type": "dispatch",
            "dispatchable": DISPATCHABLE,
            "bindings": {"InputTensor": INPUT_RESOURCE, "OutputTensor": OUTPUT_RESOURCE},
        }
    ]
    if print_output:
        commands.append(
            {"type": "print", "resource": OUTPUT_RESOURCE, **({"verbose": True} if verbose_print else {})}
        )
    if write_file:
        commands.append({"type": "writeFile", "resource": OUTPUT_RESOURCE, "targetPath": str(write_file)})
    return {
        "resources": {
            INPUT_RESOURCE: {
                "initialValuesDataType": t_in.data_type.name,
                "initialValues": json_values(values),
                "sizeInBytes": t_in.total_tensor_size_in_bytes,
            },
            OUTPUT_RESOURCE: {
                "initialValuesDataType": t_out.data_type.name,
                "initialValues": {"valueCount": shown, "value": 0},
                "sizeInBytes": t_out.total_tensor_size_in_bytes,
            },
        },
        "dispatchables": {DISPATCHABLE: {"type": TILE.c_name, "desc": dxdispatch_desc(desc)}},
        "commands": commands,
    }


def dumps(model: Any, indent: int = 4) -> str:
    """JSON text laid out like DxDispatch's example models: objects indented, arrays of numbers on one line."""

    def render(value: Any, depth: int) -> str:
        pad, inner = " " * (indent * depth), " " * (indent * (depth + 1))
        if isinstance(value, dict):
            flat = "{ " + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in value.items()) + " }"
            if not value or (
                len(flat) <= 72 and not any(isinstance(v, (dict, list)) for v in value.values())
            ):
                return flat if value else "{}"
            items = [f"{inner}{json.dumps(k)}: {render(v, depth + 1)}" for k, v in value.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
            return "[\n" + ",\n".join(inner + render(v, depth + 1) for v in value) + "\n" + pad + "]"
        if isinstance(value, list):
            return "[" + ", ".join(json.dumps(v) for v in value) + "]"
        return json.dumps(value)

    return render(model, 0) + "\n"
