"""The models whose placement on onnxruntime's real DirectML provider is recorded in golden_placement/.

Each case is one model built with onnx.helper (so the golden files need no model bytes), the inputs
it runs on, the symbolic sizes fixed at session creation (``free_dims``), and the concrete values
``check_model`` is given for the same run (``check``). Built deterministically: the recorder and
the offline test rebuild the same models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

vi = helper.make_tensor_value_info
GOLDEN = "golden_placement"


@dataclass
class PlacementCase:
    id: str
    kind: str  # the group in the agreement table
    model: Any
    inputs: dict[str, np.ndarray]
    free_dims: dict[str, int] = field(default_factory=dict)
    check: dict[str, Any] = field(default_factory=dict)  # dims / inputs / repeats for check_model


def _model(nodes, inputs, initializers=(), opset=13, ir_version=8, elem=TensorProto.FLOAT):
    """The graph's one output is the last node's output."""
    graph = helper.make_graph(nodes, "g", inputs, [vi(nodes[-1].output[0], elem, None)], list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    return model


def _values(elem: int, shape: tuple[int, ...], seed: int) -> np.ndarray | None:
    """Input values of an ONNX element type (None where NumPy has no plain dtype for it)."""
    rng = np.random.default_rng(seed)
    if elem == TensorProto.STRING:
        return np.array([f"s{i}" for i in range(int(np.prod(shape)))], dtype=object).reshape(shape)
    if elem > TensorProto.COMPLEX128:  # bfloat16, the 8-, 6-, 4- and 2-bit types
        return None
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem))
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "fc":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True).astype(dtype)


def tile_case(
    case_id: str,
    kind: str,
    elem: int,
    shape: list,
    repeats: list[int],
    source: str = "initializer",
    opset: int = 13,
    actual: tuple[int, ...] | None = None,
    free_dims: dict[str, int] | None = None,
) -> PlacementCase:
    """One Tile node ``t`` with input ``x`` and repeats from ``source``: initializer, constant-node,
    runtime (a graph input) or default (an initializer that is also a graph input)."""
    reps = numpy_helper.from_array(np.array(repeats, np.int64), "r")
    x_shape = tuple(actual if actual is not None else shape)
    inputs: dict[str, np.ndarray] = {}
    x = _values(elem, x_shape, seed=len(case_id))
    if x is not None:
        inputs["x"] = x
    graph_inputs = [vi("x", elem, shape)]
    nodes = [helper.make_node("Tile", ["x", "r"], ["y"], name="t")]
    initializers = []
    if source == "initializer":
        initializers.append(reps)
    elif source == "constant-node":
        nodes.insert(0, helper.make_node("Constant", [], ["r"], value=reps, name="repeats"))
    elif source in ("runtime", "default"):
        graph_inputs.append(vi("r", TensorProto.INT64, [len(repeats)]))
        if source == "default":
            initializers.append(reps)
        else:
            inputs["r"] = np.array(repeats, np.int64)
    ir_version = 8 if elem <= TensorProto.BFLOAT16 else 10
    model = _model(nodes, graph_inputs, initializers, opset, ir_version, elem)
    check: dict[str, Any] = {"dims": dict(free_dims or {})}
    if source == "runtime":  # check is told the values the run feeds, as `check --observe` does
        check["repeats"] = {"t": list(repeats)}
    return PlacementCase(case_id, kind, model, inputs, dict(free_dims or {}), check)


def onnx_conformance_cases() -> list[PlacementCase]:
    """ONNX's own Tile test cases (onnx.backend.test.case.node.tile, the models of
    onnx/backend/test/data/node/test_tile*), as shipped: repeats a graph input fed at run time; and
    with repeats an initializer."""
    from onnx.backend.test.case.node import tile as tile_cases

    captured = []
    saved = tile_cases.expect
    tile_cases.expect = lambda node, inputs, outputs, name, **kw: captured.append((name, node, inputs))
    try:
        np.random.seed(0)
        for attr in sorted(vars(tile_cases.Tile)):
            if attr.startswith("export"):
                getattr(tile_cases.Tile, attr)()
    finally:
        tile_cases.expect = saved
    cases = []
    for name, node, (x, repeats) in captured:
        node = onnx.NodeProto.FromString(node.SerializeToString())
        node.name = "t"
        graph_inputs = [
            vi(n, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape))
            for n, a in zip(node.input, (x, repeats), strict=True)
        ]
        shipped = _model([node], graph_inputs)
        feeds = {node.input[0]: x, node.input[1]: repeats}
        check = {"repeats": {"t": [int(r) for r in repeats]}}  # the values the run feeds
        cases.append(PlacementCase(f"onnx/{name}", "onnx", shipped, feeds, check=check))
        const = _model(
            [node], graph_inputs[:1], [numpy_helper.from_array(repeats.astype(np.int64), node.input[1])]
        )
        cases.append(PlacementCase(f"onnx/{name}+initializer", "onnx", const, {node.input[0]: x}))
    return cases


def generated_cases() -> list[PlacementCase]:
    """Every ONNX element type, ranks 0-9, every repeats source, zeros, symbolic dims, opsets."""
    cases = []
    for name, elem in TensorProto.DataType.items():
        if elem != TensorProto.UNDEFINED:
            cases.append(tile_case(f"type/{name.lower()}", "type", elem, [2, 3], [2, 2]))
    for rank in range(10):
        shape, repeats = [2] * rank, [1] * rank
        if rank:
            repeats[-1] = 2
        cases.append(tile_case(f"rank/{rank}", "rank", TensorProto.FLOAT, shape, repeats))
    # rank 9 where one output dim is 1: the provider's squeeze leaves 8 dims
    cases.append(
        tile_case("rank/9-one-size-1", "rank", TensorProto.FLOAT, [2, 2, 2, 1, 2, 2, 2, 2, 2], [1] * 8 + [2])
    )
    cases.append(
        tile_case("rank/10-two-size-1", "rank", TensorProto.FLOAT, [2, 1, 2, 2, 1, 2, 2, 2, 2, 2], [1] * 10)
    )
    for source in ("initializer", "constant-node", "runtime", "default"):
        cases.append(tile_case(f"repeats/{source}", "repeats", TensorProto.FLOAT, [2, 3], [3, 2], source))
        cases.append(
            tile_case(f"repeats/{source}-int64", "repeats", TensorProto.INT64, [2, 3], [1, 2], source)
        )
    cases.append(tile_case("zeros/repeat-0", "zeros", TensorProto.FLOAT, [2, 3], [2, 0]))
    cases.append(tile_case("zeros/input-dim-0", "zeros", TensorProto.FLOAT, [0, 3], [2, 2]))
    cases.append(tile_case("zeros/repeat-0-runtime", "zeros", TensorProto.FLOAT, [2, 3], [0, 2], "runtime"))
    cases.append(tile_case("zeros/all-ones", "zeros", TensorProto.FLOAT, [1, 1], [1, 1]))
    cases.append(
        tile_case("symbolic/unresolved", "symbolic", TensorProto.FLOAT, ["batch", 3], [2, 1], actual=(4, 3))
    )
    cases.append(
        tile_case(
            "symbolic/resolved",
            "symbolic",
            TensorProto.FLOAT,
            ["batch", 3],
            [2, 1],
            actual=(4, 3),
            free_dims={"batch": 4},
        )
    )
    cases.append(
        tile_case(
            "symbolic/resolved-int64",
            "symbolic",
            TensorProto.INT64,
            ["n", "m"],
            [1, 3],
            actual=(2, 5),
            free_dims={"n": 2, "m": 5},
        )
    )
    for opset in (1, 6, 7, 12, 13):
        if opset == 1:  # Tile-1: input, tiles, axis
            x = vi("x", TensorProto.FLOAT, [2, 3])
            tiles = numpy_helper.from_array(np.array(2, np.int64), "tiles")
            axis = numpy_helper.from_array(np.array(1, np.int64), "axis")
            node = helper.make_node("Tile", ["x", "tiles", "axis"], ["y"], name="t")
            model = _model([node], [x], [tiles, axis], opset=1, ir_version=3)
            cases.append(
                PlacementCase("opset/1", "opset", model, {"x": _values(TensorProto.FLOAT, (2, 3), 1)})
            )
            continue
        cases.append(tile_case(f"opset/{opset}", "opset", TensorProto.FLOAT, [2, 3], [2, 2], opset=opset))
    return cases


def _i64(name: str, values: list[int]):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def _shape_tile(case_id: str, kind: str, nodes: list, inputs: list, inits: list, feeds: dict, **kw: Any):
    """A Tile ``t`` of ``x`` whose repeats ``r`` the ``nodes`` compute (onnxruntime may fold them)."""
    model = _model([*nodes, helper.make_node("Tile", ["x", "r"], ["y"], name="t")], inputs, inits)
    return PlacementCase(case_id, kind, model, feeds, **kw)


def folding_cases() -> list[PlacementCase]:
    """Repeats computed from shapes and initializers, which onnxruntime folds before partitioning when
    every shape is known at session creation; the same with symbolic dims, named (fixed by name) and
    unnamed (no name to fix them by); a Tile input with an unnamed dim."""
    x = vi("x", TensorProto.FLOAT, [2, 3])
    fx = {"x": _values(TensorProto.FLOAT, (2, 3), 7)}
    shape = helper.make_node("Shape", ["x"], ["s"])
    cases = [
        _shape_tile("fold/shape", "folding", [helper.make_node("Shape", ["x"], ["r"])], [x], [], fx),
        _shape_tile(
            "fold/shape-gather", "folding", [shape, helper.make_node("Gather", ["s", "i"], ["r"])], [x],
            [_i64("i", [1, 0])], fx,
        ),
        _shape_tile(
            "fold/shape-slice-concat", "folding",
            [
                shape,
                helper.make_node("Slice", ["s", "st", "en"], ["a"]),
                helper.make_node("Concat", ["one", "a"], ["r"], axis=0),
            ],
            [x], [_i64("st", [1]), _i64("en", [2]), _i64("one", [2])], fx,
        ),
        _shape_tile(
            "fold/add-initializers", "folding", [helper.make_node("Add", ["a", "b"], ["r"])], [x],
            [_i64("a", [1, 1]), _i64("b", [1, 2])], fx,
        ),
    ]  # fmt: skip
    z_named, z_unnamed = vi("z", TensorProto.FLOAT, ["m", "k"]), vi("z", TensorProto.FLOAT, [None, None])
    fz = {**fx, "z": _values(TensorProto.FLOAT, (2, 3), 8)}
    of_z = [helper.make_node("Shape", ["z"], ["r"])]
    cases.append(
        _shape_tile(
            "fold/shape-of-named-dims-fixed", "folding", of_z, [x, z_named], [], fz,
            free_dims={"m": 2, "k": 3}, check={"dims": {"m": 2, "k": 3}},
        )
    )  # fmt: skip
    cases.append(
        _shape_tile(
            "fold/shape-of-unnamed-dims",
            "folding",
            of_z,
            [x, z_unnamed],
            [],
            fz,
            check={"inputs": {"z": [2, 3]}},
        )
    )
    unnamed = tile_case("symbolic/unnamed", "symbolic", TensorProto.FLOAT, [None, 3], [2, 2], actual=(3, 3))
    unnamed.check["inputs"] = {"x": [3, 3]}
    cases.append(unnamed)
    return cases


def model_kind_cases() -> list[PlacementCase]:
    """A Tile among other nodes (Add, Relu, Cast), and models of IR versions around the wheels' maxima."""
    x = vi("x", TensorProto.FLOAT, [2, 3])
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Add", ["a", "x"], ["b"]),
        helper.make_node("Tile", ["b", "r"], ["c"], name="t"),
        helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT16),
    ]
    model = _model(nodes, [x], [_i64("r", [2, 2])], elem=TensorProto.FLOAT16)
    # small whole numbers: the float16 Cast is exact on every provider, so outputs compare bit for bit
    x_values = np.arange(-2, 4, dtype=np.float32).reshape(2, 3)
    cases = [PlacementCase("mixed/relu-add-tile-cast", "mixed", model, {"x": x_values})]
    for ir in (10, 11, 13, 14):
        case = tile_case(f"ir/{ir}", "ir", TensorProto.FLOAT, [2, 3], [2, 2])
        case.model.ir_version = ir
        cases.append(case)
    return cases


def all_cases() -> list[PlacementCase]:
    """The recorded set: ONNX's own cases, then the generated ones."""
    return onnx_conformance_cases() + generated_cases() + folding_cases() + model_kind_cases()
