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
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

import numpy as np

from .enums import DataType, OperatorType
from .errors import DescriptorError, DmlTileError
from .operator import OperatorDesc
from .report import Issue
from .tensor import BufferTensorDesc

INPUT_RESOURCE, OUTPUT_RESOURCE, DISPATCHABLE = "input", "output", "tile"
MAX_INLINE_VALUES = 1 << 22  # a JSON array of more numbers than this is no longer a usable model file
DXDISPATCH_KEYS = ("dmlCompileType", "executionFlags", "bindings")  # dispatchable keys beside the desc


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
    return sum((s - 1) * st for s, st in zip(t.sizes, t.effective_strides)) + 1


def _numpy_dtype(t: BufferTensorDesc, role: str) -> np.dtype:
    dt = t.data_type.numpy_dtype
    if dt is None:
        raise DmlTileError(f"{role}.DataType is {t.data_type.c_name}: DxDispatch resources have no initial values of "
                           "that type; use an 8-bit or wider type")
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


def _strided_view(buf: np.ndarray, t: BufferTensorDesc) -> np.ndarray:
    return np.lib.stride_tricks.as_strided(buf, shape=t.sizes, strides=tuple(s * buf.itemsize for s in t.effective_strides))


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}")


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
        raise DmlTileError(f"InputTensor.TotalTensorSizeInBytes is {t.total_tensor_size_in_bytes}: {count} values are "
                           f"too many to write into a JSON model (at most {MAX_INLINE_VALUES})")
    if count < addressed_element_count(t):
        raise DmlTileError(f"InputTensor.TotalTensorSizeInBytes {t.total_tensor_size_in_bytes} is smaller than the "
                           "elements its Sizes and Strides address; fix the descriptor first (dmltile validate)")
    if input is None:
        return default_values(dt, count, seed)
    x = np.asarray(input) if isinstance(input, np.ndarray) else np.asarray(input, dtype=dt)
    if x.dtype != dt:
        raise DmlTileError(f"input has dtype {x.dtype}, but InputTensor.DataType {t.data_type.name} is {dt}")
    if x.shape == tuple(t.sizes):
        buf = np.zeros(count, dtype=dt)
        view = _strided_view(buf, t)
        view[...] = x
        differs = np.argwhere(_bits(view) != _bits(x))
        if differs.size:
            index = tuple(int(i) for i in differs[0])
            raise DmlTileError(f"input element {list(index)} shares its buffer element with another index under "
                               f"InputTensor.Strides {list(t.effective_strides)}, but holds a different value; "
                               "a broadcast input must repeat its values along stride-0 axes")
        return buf
    if x.ndim == 1 and x.size == count:
        return x.copy()
    raise DmlTileError(f"input has shape {x.shape}; expected InputTensor.Sizes {list(t.sizes)} "
                       f"or the whole buffer as {count} values")


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


def to_dxdispatch(source: Any, input: Any = None, seed: int | None = None, print_output: bool = True,
                  write_file: str | None = None, verbose_print: bool = False) -> dict:
    """A complete DxDispatch model (a dict) that runs the descriptor exactly as written.

    Resources ``input`` (the whole input buffer, see ``input_buffer``) and ``output``
    (``TotalTensorSizeInBytes`` long, zeros for every element the output desc addresses, so that
    ``print`` shows them all); dispatchable ``tile``; a dispatch binding ``InputTensor`` and
    ``OutputTensor``; then ``print`` of the output (``verbose_print``: with each element's bits)
    and/or ``writeFile`` to ``write_file``
    (``.npy``, ``.dat`` or ``.bin``; resolved by DxDispatch against its output path).
    """
    from .document import load

    desc = load(source)
    values = input_buffer(desc, input, seed)
    t_in, t_out = desc.input, desc.output
    _numpy_dtype(t_out, "OutputTensor")
    shown = addressed_element_count(t_out)
    if shown > buffer_element_count(t_out) or shown == 0:
        raise DmlTileError(f"OutputTensor.TotalTensorSizeInBytes {t_out.total_tensor_size_in_bytes} does not hold the "
                           "elements its Sizes and Strides address; fix the descriptor first (dmltile validate)")
    commands: list[dict] = [{"type": "dispatch", "dispatchable": DISPATCHABLE,
                             "bindings": {"InputTensor": INPUT_RESOURCE, "OutputTensor": OUTPUT_RESOURCE}}]
    if print_output:
        commands.append({"type": "print", "resource": OUTPUT_RESOURCE, **({"verbose": True} if verbose_print else {})})
    if write_file:
        commands.append({"type": "writeFile", "resource": OUTPUT_RESOURCE, "targetPath": str(write_file)})
    return {
        "resources": {
            INPUT_RESOURCE: {"initialValuesDataType": t_in.data_type.name, "initialValues": json_values(values),
                             "sizeInBytes": t_in.total_tensor_size_in_bytes},
            OUTPUT_RESOURCE: {"initialValuesDataType": t_out.data_type.name,
                              "initialValues": {"valueCount": shown, "value": 0},
                              "sizeInBytes": t_out.total_tensor_size_in_bytes},
        },
        "dispatchables": {DISPATCHABLE: {"type": OperatorType.TILE.c_name, "desc": dxdispatch_desc(desc)}},
        "commands": commands,
    }


def dumps(model: Any, indent: int = 4) -> str:
    """JSON text laid out like DxDispatch's example models: objects indented, arrays of numbers on one line."""

    def render(value: Any, depth: int) -> str:
        pad, inner = " " * (indent * depth), " " * (indent * (depth + 1))
        if isinstance(value, dict):
            flat = "{ " + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in value.items()) + " }"
            if not value or (len(flat) <= 72 and not any(isinstance(v, (dict, list)) for v in value.values())):
                return flat if value else "{}"
            items = [f"{inner}{json.dumps(k)}: {render(v, depth + 1)}" for k, v in value.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
            return "[\n" + ",\n".join(inner + render(v, depth + 1) for v in value) + "\n" + pad + "]"
        if isinstance(value, list):
            return "[" + ", ".join(json.dumps(v) for v in value) + "]"
        return json.dumps(value)

    return render(model, 0) + "\n"


# --------------------------------------------------------------------------------------------
# Reading resources back (what DxDispatch would upload) and running the model on NumPy
# --------------------------------------------------------------------------------------------


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
        raise DmlTileError(f"initialValuesDataType {resource.get('initialValuesDataType')!r} is not supported here")
    init = resource.get("initialValues")
    if isinstance(init, list):
        if dt.kind == "f":
            return np.array([_float_value(v, dt) for v in init], dtype=dt)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in init):
            raise DmlTileError("initialValues of an integer type must be JSON integers")
        return np.array(init, dtype=dt)
    if isinstance(init, dict) and "valueCount" in init:
        count = int(init["valueCount"])
        if count > MAX_INLINE_VALUES * 16:
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
        raise DmlTileError(f"sizeInBytes {size} is too small for {raw.size} bytes of initial values at offset {offset}")
    buf = np.zeros(size, dtype=np.uint8)
    buf[offset:offset + raw.size] = raw
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
    from .compiled import compile as compile_tile

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
                raise DmlTileError(f"command {i} dispatches {name!r}, which is not a readable Tile dispatchable")
            op = compile_tile(imported[name])
            views = [_bound(buffers, resources, cmd.get("bindings", {}), point, elem)
                     for point, elem in (("InputTensor", op.desc.input.data_type.element_size),
                                         ("OutputTensor", op.desc.output.data_type.element_size))]
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
    name, offset = (source, 0) if isinstance(source, str) else (
        (source.get("name"), int(source.get("elementOffset", 0))) if isinstance(source, dict) else (None, 0))
    if name not in buffers:
        raise DmlTileError(f"binding {point} names resource {source!r}, which the model does not define")
    return buffers[name][offset * element_size:]


# --------------------------------------------------------------------------------------------
# Import
# --------------------------------------------------------------------------------------------

_JSONC_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.S)


def strip_jsonc(text: str) -> str:
    """Remove ``//`` and ``/* */`` comments and trailing commas outside strings (DxDispatch's
    parser accepts both: rapidjson kParseCommentsFlag | kParseTrailingCommasFlag)."""

    def keep(m: re.Match) -> str:
        token = m.group(0)
        return token if token.startswith('"') else ("\n" * token.count("\n") if token.startswith("/") else "")

    # Repeat the comma removal: a comment between a comma and the bracket hides it on the first pass.
    return _JSONC_TOKEN.sub(keep, _JSONC_TOKEN.sub(keep, text))


def is_model(data: Any) -> bool:
    """A DxDispatch model: an object with ``dispatchables`` (and usually resources and commands)."""
    return isinstance(data, dict) and "dispatchables" in data and not ({"Type", "Desc", "InputTensor"} & data.keys())


def is_dispatchable(data: Any) -> bool:
    """A DxDispatch-style dispatchable: lowercase ``type``/``desc`` keys, not our ``Type``/``Desc``."""
    return isinstance(data, dict) and bool({"type", "desc"} & data.keys()) and not ({"Type", "Desc"} & data.keys())


def looks_like_dxdispatch(data: Any) -> bool:
    """Whether ``data`` is a DxDispatch model or dispatchable rather than a canonical document."""
    return is_model(data) or is_dispatchable(data)


def read_model(source: Any) -> dict:
    """A DxDispatch model (or one dispatchable) from a dict, JSON text or a path; comments and
    trailing commas are accepted as DxDispatch accepts them. A lone dispatchable is wrapped as
    a model with that one dispatchable, named ``tile``."""
    from .document import NotJson, read_source

    data = read_source(source)
    if isinstance(data, NotJson):
        raise DescriptorError([Issue(code="DML001", path="", message=f"the model is not JSON: {data.reason}")],
                              context="cannot read the DxDispatch model")
    if is_dispatchable(data):
        return {"dispatchables": {DISPATCHABLE: data}}
    if not is_model(data) or not isinstance(data["dispatchables"], dict):
        raise DescriptorError([Issue(code="DML001", path="dispatchables",
                                     message="not a DxDispatch model: expected an object with a \"dispatchables\" object",
                                     hint='write {"resources": {...}, "dispatchables": {"tile": {"type": '
                                          '"DML_OPERATOR_TILE", "desc": {...}}}, "commands": [...]}')],
                              context="cannot read the DxDispatch model")
    return data


def parse_jsonc_model(text: str | bytes) -> Any:
    """JSON with comments/trailing commas, parsed only if it then is a DxDispatch model; else None."""
    try:
        data = json.loads(strip_jsonc(text.decode("utf-8") if isinstance(text, bytes) else text))
    except (ValueError, RecursionError):
        return None
    return data if looks_like_dxdispatch(data) else None


def _operator_name(raw: Mapping) -> Any:
    return raw.get("type", raw.get("Type"))


def _canonical_tensor(tensor: Any) -> Any:
    if not isinstance(tensor, dict):
        return tensor
    tensor = dict(tensor)
    buffer = dict(tensor["Desc"]) if isinstance(tensor.get("Desc"), dict) else {k: v for k, v in tensor.items() if k != "Type"}
    if buffer.get("TotalTensorSizeInBytes") == 0:  # DxDispatch: 0 means "compute it"
        del buffer["TotalTensorSizeInBytes"]
    if buffer.get("Strides") == []:  # DxDispatch: an empty array means packed
        buffer["Strides"] = None
    if buffer.get("Flags") == []:
        buffer["Flags"] = "DML_TENSOR_FLAG_NONE"
    out = {"Desc": buffer}
    if "Type" in tensor:
        out["Type"] = tensor["Type"]
    return out


def canonical_document(dispatchable: Mapping) -> dict:
    """A DxDispatch Tile dispatchable as dmltile's canonical document (a dict, not yet validated):
    ``type``/``desc`` become ``Type``/``Desc``, inline fields move into ``Desc``, and DxDispatch's
    defaults apply (``Strides: []`` = null, ``TotalTensorSizeInBytes: 0`` = computed, flag lists)."""
    raw = dict(dispatchable)
    if "desc" in raw or "Desc" in raw:
        desc = raw.get("desc", raw.get("Desc"))
    else:
        desc = {k: v for k, v in raw.items() if k not in ("type", "Type", *DXDISPATCH_KEYS)}
    if isinstance(desc, dict):
        desc = dict(desc)
        for name in ("InputTensor", "OutputTensor"):
            if name in desc:
                desc[name] = _canonical_tensor(desc[name])
    return {"Type": _operator_name(raw), "Desc": desc}


def _is_tile(dispatchable: Any) -> bool:
    try:
        return OperatorType.parse(_operator_name(dispatchable)) == OperatorType.TILE
    except ValueError:
        return False


class DxDispatchModel(dict):
    """``{dispatchable name: OperatorDesc}`` for the Tile dispatchables that parse, plus every
    dispatchable that is not there and why: ``invalid`` (Tile, with the structural issues that
    stop it) and ``not_covered`` (other operators, HLSL, ONNX: name -> type)."""

    def __init__(self) -> None:
        super().__init__()
        self.invalid: dict[str, list[Issue]] = {}
        self.not_covered: dict[str, str] = {}
        self.warnings: dict[str, list[Issue]] = {}  # what DxDispatch would reject but dmltile defaults
        self.order: list[str] = []

    def __repr__(self) -> str:
        return (f"DxDispatchModel(tile={list(self)}, invalid={list(self.invalid)}, "
                f"not_covered={self.not_covered})")

    @property
    def tile_names(self) -> list[str]:
        """Every Tile dispatchable, parsed or not, in model order."""
        return [n for n in self.order if n in self or n in self.invalid]

    def reports(self, feature_level: Any = "6.4") -> dict[str, Any]:
        """name -> ValidationReport for every Tile dispatchable (invalid ones carry their issues)."""
        from .report import ValidationReport
        from .validation import parse_feature_level, validate

        out = {}
        for name in self.tile_names:
            if name in self:
                report = validate(self[name], feature_level)
            else:
                report = ValidationReport(valid=False, feature_level=parse_feature_level(feature_level),
                                          issues=self.invalid[name])
            out[name] = report.model_copy(update={"issues": report.issues + self.warnings.get(name, [])})
        return out


def _repeats_count_warning(raw: Mapping) -> list[Issue]:
    desc = raw.get("desc", raw.get("Desc", raw))
    if isinstance(desc, dict) and "RepeatsCount" not in desc:
        return [Issue(code="DML002", path="Desc.RepeatsCount", severity="warning",
                      message="RepeatsCount is missing: dmltile takes len(Repeats), but DxDispatch's parser requires it "
                              "(\"Field 'RepeatsCount' is required.\")",
                      hint="add \"RepeatsCount\" equal to the number of Repeats")]
    return []


def from_dxdispatch(source: Any) -> DxDispatchModel:
    """Read a DxDispatch model (dict, JSON text or path; or one ``{"type", "desc"}`` dispatchable).

    Returns ``{name: OperatorDesc}`` for its Tile dispatchables; a Tile dispatchable that cannot be
    parsed is in ``.invalid`` with its issues, any other dispatchable in ``.not_covered``. Nothing
    is dropped. Bad content never raises; a source that is not a DxDispatch model raises
    DescriptorError, an unreadable file InputError.
    """
    from .document import parse

    model = read_model(source)
    result = DxDispatchModel()
    for name, raw in model["dispatchables"].items():
        result.order.append(name)
        if not isinstance(raw, dict):
            result.invalid[name] = [Issue(code="DML001", path="", message=f"dispatchable {name!r} is not a JSON object")]
            continue
        if not _is_tile(raw):
            result.not_covered[name] = str(_operator_name(raw))
            continue
        desc, issues = parse(canonical_document(raw))
        if warnings := _repeats_count_warning(raw):
            result.warnings[name] = warnings
        if desc is None:
            result.invalid[name] = issues
        else:
            result[name] = desc
    return result


def single_tile_document(data: Any) -> tuple[Any, list[Issue]]:
    """For ``document.parse``: the canonical document of the one Tile dispatchable in a DxDispatch
    model or dispatchable, or issues explaining why there is not exactly one."""
    try:
        model = read_model(data)
    except DescriptorError as e:
        return None, e.issues
    dispatchables = model["dispatchables"]
    tiles = [n for n, d in dispatchables.items() if isinstance(d, dict) and _is_tile(d)]
    others = {n: str(_operator_name(d)) if isinstance(d, dict) else "?" for n, d in dispatchables.items() if n not in tiles}
    if len(tiles) == 1:
        return canonical_document(dispatchables[tiles[0]]), []
    if not tiles:
        found = ", ".join(f"{n!r} ({op})" for n, op in others.items()) or "none"
        return None, [Issue(code="DML207", path="dispatchables",
                            message=f"the DxDispatch model has no DML_OPERATOR_TILE dispatchable (found: {found}); "
                                    "dmltile covers Tile only",
                            hint='add a dispatchable {"type": "DML_OPERATOR_TILE", "desc": {...}}')]
    return None, [Issue(code="DML001", path="dispatchables",
                        message=f"the DxDispatch model has {len(tiles)} Tile dispatchables ({', '.join(map(repr, tiles))}); "
                                "a single descriptor is needed here",
                        hint="pick one with dmltile.from_dxdispatch(path)[name], or check them all with `dmltile validate`")]
