"""onnxruntime's DirectML execution provider (DML5xx): what it does with an ONNX Tile node.

These rules do not judge a descriptor but a node of a model, from plain facts about it
(``NodeFacts``: its opset, element type, whether repeats is an initializer, whether its shapes are
static, its shape and repeats, the device's feature level). ``dmltile check`` (``lower/``) reads
those facts from the model and applies every rule here; each finding says what the provider does
in its rule's words (``Rule.words``), filled with the values found, as the descriptor rules' issues
are. Where the model tells more than the node's facts (the caller's values, dimensions it leaves
without a name), ``dmltile check`` renders the rule's words for that case itself (``finding``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ...core.enums import DataType, FeatureLevel
from ...core.shape import tile_output_sizes
from .citations import PROVIDER_SOURCES
from .registry import RULES, Example, Words, rule, rules_of

PROVIDER = "onnxruntime's DirectML EP"
MIN_LEVEL = FeatureLevel.parse("5.0")  # DMLCreateDevice1(..., DML_FEATURE_LEVEL_5_0, ...)
# The provider's Tile starts where ONNX Tile-6 does: its source registers Tile at opsets 7 and 13, yet the
# real provider was seen taking (and fusing) the Tile of a model importing opset 6 (OBSERVED).
MIN_OPSET = 6  # ONNX Tile-1 (tiles and axis inputs) before opset 6
MAX_RANK = 8  # MaximumDimensionCount = DML_TENSOR_DIMENSION_COUNT_MAX1

# The element type the provider gives DirectML, per ONNX type in NumPy terms (GetDmlDataTypeFromMlDataType).
DML_TYPES = {
    "float32": DataType.FLOAT32,
    "float16": DataType.FLOAT16,
    "float64": DataType.FLOAT64,
    "int8": DataType.INT8,
    "int16": DataType.INT16,
    "int32": DataType.INT32,
    "int64": DataType.INT64,
    "uint8": DataType.UINT8,
    "uint16": DataType.UINT16,
    "uint32": DataType.UINT32,
    "uint64": DataType.UINT64,
    "bool": DataType.UINT8,
}
# Types onnxruntime's CPU EP tiles but the DirectML EP does not register (CPU Tile-6/-13 kernels).
CPU_ONLY_TYPES = ("string",)
# Types no onnxruntime EP tiles: no bfloat16 Tile kernel, no complex tensors at all.
NO_EP_TYPES = ("bfloat16", "complex64", "complex128")
# Types whose support DirectML reports per device (CheckFeatureSupport); the ones that vary between GPUs.
DEVICE_DEPENDENT = {"float64": "FLOAT64", "int64": "INT64", "uint64": "UINT64", "float16": "FLOAT16"}

# Where the real provider was asked instead of its source read; it wins where the two disagree.
OBSERVED = (
    "observed: the onnxruntime-directml 1.20.1 and 1.24.4 Windows wheels (onnxruntime.dll with "
    "DmlExecutionProvider) run under Wine + lavapipe, placement read from the verbose log and the profiler "
    "(tests/lower/golden_placement)"
)

Status = Literal["invalid", "cpu-fallback", "dispatch-per-value", "warning", "rewritten"]


@dataclass(frozen=True)
class NodeFacts:
    """What the provider's rules need to know of one ONNX Tile node: plain values, no ONNX objects.

    ``element_type`` is the ONNX type in NumPy terms ("float32", "bool", "string", "bfloat16");
    ``input_shape`` holds ints, or names for symbolic dimensions (None: the rank is unknown);
    ``repeats`` is None when not known before run time."""

    opset: int | None = None
    element_type: str | None = None
    input_shape: tuple[int | str, ...] | None = None
    repeats: tuple[int, ...] | None = None
    repeats_initializer: bool = True
    feature_level: FeatureLevel | None = None
    ir_version: int | None = None  # the model's (ModelProto.ir_version)
    name: str = "NAME"  # the node's name, as ``dmltile check`` shows it and ``--repeats`` takes it
    repeats_source: str = "fed at run time"  # where repeats come from, when not an initializer
    repeats_default: bool = False  # an initializer of a graph input: only a default callers may replace

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NodeFacts:
        """Facts from JSON-like data (an example's ``node``)."""
        level = data.get("feature_level")
        return cls(
            opset=data.get("opset"),
            element_type=data.get("element_type"),
            input_shape=tuple(data["input_shape"]) if data.get("input_shape") is not None else None,
            repeats=tuple(data["repeats"]) if data.get("repeats") is not None else None,
            repeats_initializer=data.get("repeats_initializer", True),
            feature_level=FeatureLevel.parse(level) if level is not None else None,
            ir_version=data.get("ir_version"),
        )

    @property
    def static_shape(self) -> tuple[int, ...] | None:
        """The input shape when every dimension is known before run time."""
        shape = self.input_shape
        if shape is None or not all(isinstance(d, int) for d in shape):
            return None
        return tuple(int(d) for d in shape)


@dataclass(frozen=True)
class Finding:
    """One provider rule applied to a node: its code, what becomes of the node, why, and what to do."""

    code: str
    status: Status
    message: str
    hint: str = ""

    @property
    def said(self) -> str:
        """The finding as one clause of a node's report: message, hint, code."""
        return self.message + (f"; {self.hint}" if self.hint else "") + f" ({self.code})"


def finding(code: str, status: Status, case: str = "", **values: Any) -> Finding:
    """The Finding of provider rule ``code``: the rule's words for ``case`` rendered with the values
    found (by its check, or by ``dmltile check`` where the model tells more than the node's facts)."""
    return Finding(code, status, *RULES[code].words[case].render(**values))


def squeeze(shape: tuple[int, ...], repeats: tuple[int, ...]) -> tuple[list[int], list[int], list[int]]:
    """(input sizes, repeats, dropped axes) after the provider drops size-1 output dimensions.

    A scalar (rank 0) is described as one dimension of size 1 repeated once: DirectML tensors have
    at least one dimension, and the real provider runs a rank-0 Tile on DirectML."""
    out = tile_output_sizes(shape, repeats)
    dropped = [i for i, o in enumerate(out) if o == 1]
    if len(dropped) == len(out):  # all ones: one is kept
        dropped = dropped[:-1]
    kept = [i for i in range(len(out)) if i not in dropped]
    if not kept:
        return [1], [1], []
    return [shape[i] for i in kept], [repeats[i] for i in kept], dropped


def _example(**facts: Any) -> Example:
    node = {"opset": 13, "element_type": "float32", "input_shape": [2, 3], "repeats": [2, 2]}
    return Example(node={**node, **facts})


@rule(
    "DML501",
    "no onnxruntime execution provider implements ONNX Tile-1 (a model importing opsets 1-5); the DirectML "
    "EP takes Tile-6 and Tile-13, from opset 6 on, into its fused graph",
    PROVIDER_SOURCES["registration"] + "; " + OBSERVED + ": a Tile of a model importing opset 6, 7, 12 or 13 "
    "is placed on DmlExecutionProvider inside DmlFusedNode_0_0, and an opset-1 model fails to load",
    "provider",
    severity="warning",
    why="Tile-1 took its repeats as two inputs (tiles, axis) and no EP has a kernel for it, so such a model "
    "does not load. The EP's source registers Tile at opsets 7 and 13 only, which reads as if an opset-6 "
    "Tile stayed on the CPU, but the real provider (1.20.1 and 1.24.4) fuses it like any later one; the "
    "observation wins, so no valid opset keeps Tile off the GPU.",
    example=_example(opset=5),
    words=Words(
        f"ONNX Tile-1 (opsets 1-{MIN_OPSET - 1}): no onnxruntime execution provider implements it (the CPU "
        f"EP's Tile and {PROVIDER}'s start at opset {MIN_OPSET})",
        f"convert the model to opset {MIN_OPSET} or later",
    ),
)
def check_opset(facts: NodeFacts) -> Iterator[Finding]:
    if facts.opset is not None and facts.opset < MIN_OPSET:
        yield finding("DML501", "invalid")


@rule(
    "DML502",
    "the DirectML EP takes Tile for uint8/16/32/64, int8/16/32/64, float16/32/64 and bool only; "
    "string Tile is left to the CPU EP, and no EP implements bfloat16 or complex Tile",
    PROVIDER_SOURCES["registration"] + "; " + PROVIDER_SOURCES["types"],
    "provider",
    severity="warning",
    why="The DirectML EP registered Tile for every numeric type and bool (DirectML has no string "
    "tensors), so a string Tile runs on the CPU; the CPU EP has no bfloat16 Tile kernel and "
    "onnxruntime no complex tensors, so those run nowhere.",
    example=_example(element_type="string"),
    words={
        "no-ep": Words(
            "no onnxruntime execution provider tiles {dtype}: the CPU EP has no bfloat16 Tile kernel and "
            f"onnxruntime has no complex tensors, and {PROVIDER} registers neither"
        ),
        "cpu": Words(
            f"{PROVIDER} registers Tile for numeric and bool types only; a {{dtype}} Tile runs on "
            "CPUExecutionProvider, with copies between GPU and CPU around it"
        ),
    },
)
def check_element_type(facts: NodeFacts) -> Iterator[Finding]:
    if facts.element_type in NO_EP_TYPES:
        yield finding("DML502", "invalid", "no-ep", dtype=facts.element_type)
    elif facts.element_type in CPU_ONLY_TYPES:
        yield finding("DML502", "cpu-fallback", "cpu", dtype=facts.element_type)


@rule(
    "DML503",
    "the DirectML EP leaves to the CPU any node whose tensor type the device does not report in "
    "CheckFeatureSupport(DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT) (supportedDeviceDataTypeMask); "
    "float64, 64-bit integer and float16 support vary between GPUs",
    PROVIDER_SOURCES["partitioner"] + "; " + PROVIDER_SOURCES["types"],
    "provider",
    severity="warning",
    why="Whether a GPU computes with float64, 64-bit integers or float16 is the driver's to say; the "
    "EP asks the device and keeps such a node on the GPU only if the device says yes, so the same "
    "model runs on the GPU on one machine and on the CPU on another.",
    example=_example(element_type="float64"),
    words=Words(
        f"{{type}}: {PROVIDER} keeps the node on the GPU only if the device reports {{type}} in "
        "CheckFeatureSupport(DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT); otherwise it runs on CPUExecutionProvider"
    ),
)
def check_device_type(facts: NodeFacts) -> Iterator[Finding]:
    name = DEVICE_DEPENDENT.get(facts.element_type or "")
    if name:
        yield finding("DML503", "warning", type=name)


@rule(
    "DML504",
    "Tile's repeats is a required constant CPU input: when it is not an initializer the node stays out "
    "of the fused DirectML graph and its operator is compiled at the first run, and again for every "
    "run whose repeats differ from the first run's",
    PROVIDER_SOURCES["registration"]
    + "; "
    + PROVIDER_SOURCES["partitioner"]
    + "; "
    + PROVIDER_SOURCES["kernel"],
    "provider",
    severity="warning",
    why="A DirectML Tile has its repeats baked into the compiled operator, so the EP must read them "
    "on the CPU before compiling. Only an initializer is known when the session is created; repeats "
    "computed or fed at run time mean compiling at the first run, and again whenever they change.",
    example=_example(repeats=None, repeats_initializer=False),
    words={
        case: Words(
            what + " not constant ({source}) but a required constant CPU input",
            "--repeats {name}=... gives the exact descriptor; an initializer would fuse it" + default,
        )
        for case, what, default in (
            ("", "repeats is", ""),
            ("tile-1", "tiles and axis are", ""),
            (
                "default",
                "repeats is",
                "; the provider's partitioner finds names with GetInitializedTensor, which may see this "
                "default and fuse the node with it: feed other values only if you have checked that on "
                "your version",
            ),
        )
    }
    | {
        # ``dmltile check --repeats`` gave the values: the descriptor is exact, the node still per value
        "given": Words(
            "repeats come from the model at run time ({source}); this is the descriptor "
            f"{PROVIDER} compiles for the values given. It keeps the node out of the fused graph and "
            "compiles it at the first run, and again for any run whose repeats differ",
            "an initializer would fuse it",
        )
    },
)
def check_constant_repeats(facts: NodeFacts) -> Iterator[Finding]:
    if not facts.repeats_initializer:
        tile_1 = facts.opset is not None and facts.opset < MIN_OPSET
        case = "tile-1" if tile_1 else "default" if facts.repeats_default else ""
        yield finding("DML504", "dispatch-per-value", case, source=facts.repeats_source, name=facts.name)


@rule(
    "DML505",
    "only a node with static, non-empty input and output shapes joins the fused DirectML graph; with "
    "symbolic dimensions the operator is compiled at the first run, and again for every run whose "
    "input shape differs from the first run's",
    PROVIDER_SOURCES["partitioner"] + "; " + PROVIDER_SOURCES["kernel"],
    "provider",
    severity="warning",
    why="A DirectML operator is compiled for exact sizes. A symbolic dimension (a batch size, say) is "
    "known only when a run brings data, so the node cannot join the graph compiled at session "
    "creation and is compiled per run shape instead.",
    example=_example(input_shape=["batch", 3]),
    words={
        "rank": Words("the input's rank is unknown (shape inference found none)"),
        "symbolic": Words(
            "input dims {dims} are symbolic, known only at run time",
            "--dim NAME=VALUE (onnxruntime: SessionOptions.add_free_dimension_override_by_name) gives the "
            "exact descriptor and a fused node",
        ),
        "unnamed": Words(
            "input dims {dims} are symbolic, known only at run time",
            "--input NAME=SIZES gives the exact descriptor; a dimension without a name stays per value in "
            "onnxruntime, which fixes symbolic dimensions only by name (name it to fuse the node)",
        ),
        # ``dmltile check --dim/--input`` gave the sizes: what onnxruntime itself knows of them
        "given-unnamed": Words(
            "the sizes given fill dimensions of {inputs} that the model leaves without a name: onnxruntime "
            "can fix a symbolic dimension only by its name (SessionOptions.add_free_dimension_override_by_name), "
            "so it learns these at run time",
            "name the dimensions (dim_param) and fix them by name to fuse the node",
        ),
        "given": Words(
            "sizes from the values given (the input's, or the shapes its repeats are folded from); fused as "
            "shown when onnxruntime knows the same sizes (SessionOptions.add_free_dimension_override_by_name), "
            "otherwise compiled at the first run"
        ),
    },
)
def check_static_shape(facts: NodeFacts) -> Iterator[Finding]:
    if facts.input_shape is None:
        yield finding("DML505", "dispatch-per-value", "rank")
    elif facts.static_shape is None:
        dims = [d for d in facts.input_shape if not isinstance(d, int)]
        yield finding("DML505", "dispatch-per-value", "unnamed" if "?" in dims else "symbolic", dims=dims)


@rule(
    "DML506",
    "the DirectML EP creates its DirectML device at DML_FEATURE_LEVEL_5_0 or newer (DirectML 1.8 or newer); "
    "below that the provider does not start and onnxruntime's Python InferenceSession retries the whole "
    "model on the CPU EP (an application passing its own IDMLDevice chooses that device's level)",
    PROVIDER_SOURCES["device"],
    "provider",
    severity="warning",
    why="The EP asks DirectML for a device of at least feature level 5.0; an older DirectML.dll "
    "cannot make one, the EP fails to start, and the whole model (not just the Tile) falls back to "
    "the CPU.",
    example=_example(feature_level="4.1"),
    words=Words(
        f"below {MIN_LEVEL.c_name} {PROVIDER} does not start: it creates its DirectML device at "
        f"{MIN_LEVEL.c_name} or newer (DirectML {{version}} or newer), so session creation fails and "
        "onnxruntime's Python InferenceSession retries the whole model on CPUExecutionProvider"
    ),
)
def check_device_level(facts: NodeFacts) -> Iterator[Finding]:
    if facts.feature_level is not None and facts.feature_level < MIN_LEVEL:
        yield finding("DML506", "cpu-fallback", version=first_directml(MIN_LEVEL))


@rule(
    "DML507",
    "the DirectML EP describes a Tile to DirectML with every size-1 output dimension removed (one kept "
    "when all are 1, a scalar as one dimension of size 1) and bool elements as UINT8; the node's own "
    "rank must be at most 8, or creating the session fails, however many size-1 dimensions it has",
    PROVIDER_SOURCES["tile"]
    + "; "
    + PROVIDER_SOURCES["rank"]
    + "; "
    + PROVIDER_SOURCES["types"]
    + "; "
    + OBSERVED
    + ": a rank-0 Tile is placed on DmlExecutionProvider inside DmlFusedNode_0_0; a rank-9 Tile, and a "
    "rank-9 or rank-10 one that would have 8 dimensions left after squeezing, fail session creation "
    "(E_INVALIDARG, MLOperatorAuthorImpl.cpp) and run on CPUExecutionProvider",
    "provider",
    severity="warning",
    why="The descriptor DirectML gets is not the ONNX node's shape: size-1 output dimensions are "
    "dropped and bool is described as UINT8, so what DirectML validates is that rewritten Tile. "
    "DirectML tensors have at most 8 dimensions, and the provider checks the node's own tensors "
    "before it squeezes them: its source reads as if only the squeezed rank counted, but the real "
    "provider rejects every Tile of rank 9 or more, so the observation is the rule.",
    example=_example(input_shape=[2] * 9, repeats=[1] * 9),
    words={
        "rank": Words(
            f"the node has {{rank:dimension}}; DirectML tensors take at most {MAX_RANK}, and {PROVIDER} "
            "rejects it before dropping size-1 output dimensions (observed: creating the session fails "
            "with E_INVALIDARG); onnxruntime's Python InferenceSession then retries the whole model on "
            "CPUExecutionProvider"
        ),
        "squeezed": Words(
            f"{PROVIDER} removes the size-1 output dimensions {{dropped}} (DmlOperatorTile.cpp): input "
            "Sizes {sizes}, Repeats {repeats}"
        ),
        "scalar": Words(
            f"{PROVIDER} gives the scalar one dimension (DmlOperatorTile.cpp): input Sizes {{sizes}}, "
            "Repeats {repeats}"
        ),
        "bool": Words(f"{PROVIDER} describes bool elements as UINT8, as its DmlCommon.cpp maps them"),
        # the descriptor built from the rewrite, judged at the device's level
        "rejected": Words(
            f"DirectML at {{level}} rejects the descriptor {PROVIDER} builds ({{errors}}), so creating the "
            "operator fails"
        ),
    },
)
def check_squeezed(facts: NodeFacts) -> Iterator[Finding]:
    shape = facts.static_shape
    if shape is not None and len(shape) > MAX_RANK:
        yield finding("DML507", "cpu-fallback", "rank", rank=len(shape))
        return
    if shape is not None and facts.repeats is not None:
        sizes, reps, dropped = squeeze(shape, facts.repeats)
        if dropped or not shape:
            case = "squeezed" if shape else "scalar"
            yield finding("DML507", "rewritten", case, dropped=dropped, sizes=sizes, repeats=reps)
    if facts.element_type == "bool":
        yield finding("DML507", "rewritten", "bool")


# The first DirectML release with each feature level (learn.microsoft.com/windows/ai/directml/
# dml-version-history, version table; 1.2.0 and 1.3.0, the 2.1 releases, were not widely available).
DIRECTML_VERSIONS = {
    "1.0": "1.0.0",
    "2.0": "1.1.0",
    "2.1": "1.4.0",
    "3.0": "1.4.0",
    "3.1": "1.5.0",
    "4.0": "1.6.0",
    "4.1": "1.7.0",
    "5.0": "1.8.0",
    "5.1": "1.9.0",
    "5.2": "1.10.0",
    "6.0": "1.11.0",
    "6.1": "1.12.0",
    "6.2": "1.13.0",
    "6.3": "1.15.0",
    "6.4": "1.15.0",
}


def first_directml(level: FeatureLevel | None) -> str | None:
    """The first DirectML release that has ``level``."""
    return DIRECTML_VERSIONS.get(level.dotted) if level is not None else None


def below_min_level() -> str:
    """DML506 as one clause, for a level below the provider's minimum."""
    return next(check_device_level(NodeFacts(feature_level=FeatureLevel.parse("1.0")))).said


def provider_findings(facts: NodeFacts) -> list[Finding]:
    """Every provider rule applied to one node, in code order."""
    return [f for r in rules_of("provider") if r.check for f in r.check(facts)]


def registration_verdict(opset: int | None, element_type: str | None) -> Finding | None:
    """Whether the provider registered a Tile kernel for this opset and element type (DML501,
    DML502): the finding that keeps the node from it, one that no EP runs before one the CPU does."""
    facts = NodeFacts(opset=opset, element_type=element_type)
    found = [*check_opset(facts), *check_element_type(facts)]
    return min(found, key=lambda f: (f.status != "invalid", f.code), default=None)
