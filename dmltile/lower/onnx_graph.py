"""Reading an ONNX model for check_model: loading, the Tile nodes of every graph, and what each
value name is known to hold (type, shape, constant value, producer).

Initializers stay TensorProtos until a Tile node asks for one (weights are never converted), and
external data is read only for the values asked for.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from ..validate.source import file_size, open_regular, read_regular
from .framework import dtype_name

# ONNX TensorProto element types in NumPy terms (the rest keep their lower-cased ONNX name,
# which ONNX Tile's type constraint then rejects by name).
ONNX_TYPES = {
    "FLOAT": "float32",
    "DOUBLE": "float64",
    "FLOAT16": "float16",
    "BFLOAT16": "bfloat16",
    "BOOL": "bool",
    "STRING": "string",
    "INT8": "int8",
    "INT16": "int16",
    "INT32": "int32",
    "INT64": "int64",
    "UINT8": "uint8",
    "UINT16": "uint16",
    "UINT32": "uint32",
    "UINT64": "uint64",
    "COMPLEX64": "complex64",
    "COMPLEX128": "complex128",
}


def onnx_modules():
    """(onnx, onnx.numpy_helper), or InputError saying how to install them."""
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError:  # pragma: no cover - the onnx extra is installed by make test
        raise InputError("checking a model needs the onnx package: pip install 'dmltile[onnx]'") from None
    return onnx, numpy_helper


def type_name(elem_type: int) -> str:
    """An ONNX element type number in NumPy terms."""
    onnx, _ = onnx_modules()
    try:
        name = onnx.TensorProto.DataType.Name(elem_type)
    except ValueError:  # a number no ONNX type has (a hostile or corrupt model)
        return f"unknown ONNX type {elem_type}"
    return ONNX_TYPES.get(name, name.lower())


def text(value: Any) -> str:
    """A protobuf string field as str: names that are not valid UTF-8 come back as bytes."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    return str(value)


def _is_json_text(name: str) -> bool:
    """Whether the file starts like a JSON object or array (after blanks or a // comment)."""
    try:
        with open(name, "rb") as f:
            head = f.read(256).lstrip()
    except OSError:
        return False
    return head[:1] in (b"{", b"[") or head[:2] in (b"//", b"/*")


def read_model(path: Any):
    """(ModelProto as read, base directory for external data, None for a ModelProto). InputError if
    unreadable."""
    onnx, _ = onnx_modules()
    if isinstance(path, onnx.ModelProto):
        return path, None  # no folder: external data in it is refused, never resolved against the CWD
    try:
        name = os.fspath(path)
    except TypeError:
        raise InputError(
            f"check_model takes a path or an onnx.ModelProto, got {type(path).__name__}"
        ) from None
    data = read_regular(name, "ONNX model")
    try:
        model = onnx.load_model_from_string(data)
    except Exception as e:  # protobuf DecodeError and friends: the bytes are not a model
        if _is_json_text(name):
            raise InputError(
                f"{name} is JSON (a Tile descriptor or a DxDispatch model?), not an ONNX model: "
                f"check it with `dmltile validate {name}`"
            ) from None
        raise InputError(f"{name}: not a readable ONNX model ({type(e).__name__})") from None
    if not model.HasField("graph"):
        raise InputError(f"{name}: not a readable ONNX model (no graph)")
    return model, os.path.dirname(os.path.abspath(name))


def symbolic_dims(model) -> list[str]:
    """The dim_param names of the main graph's inputs, in order of appearance."""
    names: list[str] = []
    for vi in model.graph.input:
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            for d in vi.type.tensor_type.shape.dim:
                if d.dim_param and not d.HasField("dim_value") and d.dim_param not in names:
                    names.append(d.dim_param)
    return names


def with_values(model, dims: dict[str, int] | None = None, inputs: dict[str, list[int]] | None = None):
    """A copy of ``model`` whose graph inputs carry the given dim values and shapes.

    ``dims`` maps a symbolic dimension name (dim_param) to a size, as onnxruntime's
    ``SessionOptions.add_free_dimension_override_by_name`` does; ``inputs`` maps a graph input to
    its whole shape. InputError for a name the model does not have or a shape of the wrong rank.
    """
    onnx, _ = onnx_modules()
    if not dims and not inputs:
        return model
    known = symbolic_dims(model)
    unknown = [d for d in dims or {} if d not in known]
    if unknown:
        raise InputError(
            f"--dim {unknown[0]}: the model's inputs have no symbolic dimension of that name"
            + (f"; they have {', '.join(known)}" if known else "; they have none")
        )
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for name, shape in (inputs or {}).items():
        _set_input_shape(copy.graph, name, shape)
    if dims:
        _set_dims(copy.graph, dims)
    return copy


def _set_input_shape(graph, name: str, shape: list[int]) -> None:
    """Give the graph input ``name`` the whole ``shape``; InputError for a name that is no fed tensor
    input, or a shape of another rank."""
    by_name = {vi.name: vi for vi in graph.input}
    initializers = {i.name for i in graph.initializer}
    vi = by_name.get(name)
    if vi is None or name in initializers or not vi.type.HasField("tensor_type"):
        feeds = [n for n in by_name if n not in initializers]
        raise InputError(
            f"--input {name}: the model has no tensor input of that name; its inputs are {', '.join(feeds)}"
        )
    tt = vi.type.tensor_type
    if tt.HasField("shape") and len(tt.shape.dim) != len(shape):
        raise InputError(
            f"--input {name}={','.join(map(str, shape))}: {name} has rank {len(tt.shape.dim)}, "
            f"this shape has {len(shape)} dimensions"
        )
    tt.shape.Clear()
    for n in shape:
        tt.shape.dim.add().dim_value = int(n)


def _set_dims(graph, dims: dict[str, int]) -> None:
    """Replace every symbolic dimension named in ``dims`` by its size, wherever the graph declares it."""
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            for d in vi.type.tensor_type.shape.dim:
                if d.dim_param in dims:
                    d.dim_value = int(dims[d.dim_param])


def infer(model):
    """The model after onnx's shape inference with data propagation (shapes computed from Shape
    nodes are known too); the model unchanged when inference fails."""
    onnx, _ = onnx_modules()
    try:
        return onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:
        try:
            return onnx.shape_inference.infer_shapes(model)
        except Exception:
            return model  # inference is a help; nodes whose shapes stay unknown are reported as such


@dataclass
class Constant:
    """A value fixed in the model: an initializer or a Constant node's output."""

    source: str
    proto: Any = None  # TensorProto, converted on demand
    array: np.ndarray | None = None

    def value(self, base: str | None) -> np.ndarray:
        """The value as an ndarray (external data read from a file inside ``base``, the model's
        folder). InputError when it cannot be read: data missing, external data outside the folder
        or too large, or a ModelProto (no folder) with external data."""
        if self.array is None:
            _, numpy_helper = onnx_modules()
            proto = self.proto
            if proto.data_location == proto.EXTERNAL:
                proto = _with_external_data(proto, base, self.source)
            try:
                self.array = numpy_helper.to_array(proto)
            except Exception as e:  # missing or short data: numpy's reshape, onnx's own checks
                raise InputError(
                    f"{self.source} (dims {list(self.proto.dims)}) cannot be read: {str(e)[:160]}"
                ) from None
        return self.array

    def shape_and_type(self) -> tuple[list, str]:
        """Shape and NumPy-terms type, without reading the data."""
        if self.array is not None:
            return list(self.array.shape), dtype_name(self.array.dtype)
        return list(self.proto.dims), type_name(self.proto.data_type)


@dataclass
class Scope:
    """What a graph (and the graphs around it) knows about value names."""

    base: str | None = None
    types: dict[str, Any] = field(default_factory=dict)  # name -> TypeProto.Tensor
    constants: dict[str, Constant] = field(default_factory=dict)
    producers: dict[str, Any] = field(default_factory=dict)  # name -> NodeProto
    defaults: set[str] = field(default_factory=set)  # graph inputs whose initializer is only a default

    def child(self) -> Scope:
        """A scope for a subgraph: it sees the outer names until it shadows them."""
        return Scope(
            self.base, dict(self.types), dict(self.constants), dict(self.producers), set(self.defaults)
        )

    def read(self, graph) -> None:
        """Learn the names a graph defines."""
        for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
            if vi.type.HasField("tensor_type"):
                self.types[vi.name] = vi.type.tensor_type
        inputs = {vi.name for vi in graph.input}
        for name in inputs:  # a graph input shadows outer names, and callers may feed any value
            self.constants.pop(name, None)
        for init in graph.initializer:
            if init.name in inputs:  # an initializer that is also an input is only a default
                self.defaults.add(init.name)
            else:
                self.constants[init.name] = Constant(f"initializer '{text(init.name)}'", proto=init)
        for node in graph.node:
            for out in node.output:
                self.producers[out] = node
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and node.output:
                constant = _constant_node(node)
                if constant is not None:
                    self.constants[node.output[0]] = constant

    def shape_and_type(self, name: str) -> tuple[list | None, str | None]:
        """Dims (ints, symbolic names, "?" when unknown; None when the rank is unknown) and type of a value."""
        if name in self.constants:
            return self.constants[name].shape_and_type()
        tt = self.types.get(name)
        if tt is None:
            return None, None
        elem = type_name(tt.elem_type) if tt.elem_type else None
        if not tt.HasField("shape"):
            return None, elem
        return [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim], elem

    def runtime_source(self, name: str) -> str:
        """Where a non-constant value comes from, in words."""
        node = self.producers.get(name)
        if node is not None:
            return f"computed at run time by {text(node.op_type)} node '{text(node.name) or text(name)}'"
        if name in self.defaults:
            return f"graph input '{text(name)}', whose initializer is only a default that callers may replace"
        return f"graph input '{text(name)}', fed at run time"


MAX_EXTERNAL_BYTES = 1 << 20  # repeats are a handful of int64s; never read a big weight file for them


def _with_external_data(proto: Any, base: str | None, source: str) -> Any:
    """A copy of ``proto`` with its external data read in, from a regular file inside ``base`` only."""
    info = {e.key: e.value for e in proto.external_data}
    location = info.get("location", "")
    if base is None:
        raise InputError(
            f"{source} keeps its data in the external file {location!r}, but a ModelProto has no folder "
            "to find it in; pass the model's path, or load it with onnx.load (external data included)"
        )
    root = os.path.realpath(base)
    target = os.path.realpath(os.path.join(root, location))
    if not location or os.path.isabs(location) or os.path.commonpath([root, target]) != root:
        raise InputError(
            f"{source}: external data location {location!r} is outside the model's folder {root}; "
            "dmltile reads external data only from files inside it"
        )
    try:
        offset, length = int(info.get("offset", 0) or 0), info.get("length")
        length = int(length) if length not in (None, "") else None
    except ValueError:
        raise InputError(f"{source}: external data offset/length are not integers") from None
    with open_regular(target, "external data") as f:
        size = file_size(f)
        want = size - offset if length is None else length
        if offset < 0 or want < 0 or offset + want > size:
            raise InputError(
                f"{source}: external data [{offset}, +{want}) lies outside {location!r} ({size} bytes)"
            )
        if want > MAX_EXTERNAL_BYTES:
            raise InputError(
                f"{source}: {want} bytes of external data; repeats are read up to {MAX_EXTERNAL_BYTES}"
            )
        f.seek(offset)
        raw = f.read(want)
    copy = type(proto)()
    copy.CopyFrom(proto)
    del copy.external_data[:]
    copy.data_location = proto.DEFAULT
    copy.raw_data = raw
    return copy


def _constant_node(node) -> Constant | None:
    source = f"Constant node '{text(node.name) or text(node.output[0])}'"
    for a in node.attribute:
        if a.name == "value":
            return Constant(source, proto=a.t)
        if a.name == "value_int":
            return Constant(source, array=np.asarray(a.i, dtype=np.int64))
        if a.name == "value_ints":
            return Constant(source, array=np.asarray(list(a.ints), dtype=np.int64))
    return None


def tile_nodes(graph, scope: Scope, prefix: str = "") -> Iterator[tuple[str, Any, Scope]]:
    """(display name, node, scope) for every ai.onnx Tile node, subgraphs included."""
    onnx, _ = onnx_modules()
    scope.read(graph)
    for i, node in enumerate(graph.node):
        if node.op_type == "Tile" and node.domain in ("", "ai.onnx"):
            yield prefix + (text(node.name) or f"(node {i}: Tile)"), node, scope
        for a in node.attribute:
            for sub in [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs):
                yield from tile_nodes(
                    sub, scope.child(), f"{prefix}{text(node.name) or text(node.op_type)}/{text(a.name)}/"
                )
