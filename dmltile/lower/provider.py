"""What onnxruntime's DirectML execution provider does with an ONNX Tile node.

Facts from the provider's source (microsoft/onnxruntime, onnxruntime/core/providers/dml/); each
is a rule in the one rule table (DML501-DML507, ``validate/rules.py``, with file and revision):
* Tile is registered for ai.onnx opsets 7 and 13, for the types of ``AllScalars`` (8/16/32/64-bit
  integers, float16/32/64, bool), with ``repeats`` a required constant CPU input (DML501, DML502).
* The fused DirectML graph takes a node only when that CPU input is an initializer and the node's
  shapes are static and non-empty (DML504, DML505); otherwise the kernel is created at the first
  run and re-created for any run whose shapes or repeats differ from the first run's.
* The device is created at DML_FEATURE_LEVEL_5_0 or newer (DML506); every tensor type is checked
  against what the device reports (DML503).
* The DirectML Tile it builds drops every size-1 output dimension (keeping one) and describes bool
  as UINT8; DirectML tensors take at most 8 dimensions (DML507).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.enums import DataType, FeatureLevel
from ..core.operator import OperatorDesc
from ..core.shape import tile_output_sizes
from ..validate.api import validate
from ..validate.levels import known_levels
from ..validate.report import Issue

PROVIDER = "onnxruntime's DirectML EP"
MIN_LEVEL = FeatureLevel.parse("5.0")  # DMLCreateDevice1(..., DML_FEATURE_LEVEL_5_0, ...)
MIN_OPSET = 7  # REG_INFO(7, Tile) and REG_INFO(13, Tile)
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

PER_VALUE_COST = (
    "each such compile is a CreateOperator + CompileOperator + operator initialization on the CPU "
    "and GPU (typically far slower than the copy itself), repeats are read on the CPU (a GPU-to-CPU "
    "copy and wait when a GPU node computed them), and the node runs as its own dispatch between "
    "fused partitions"
)


def first_directml(level: FeatureLevel | None) -> str | None:
    """The first DirectML release that has ``level``."""
    return DIRECTML_VERSIONS.get(level.dotted) if level is not None else None


def below_min_level() -> str:
    """DML506 as one sentence, for a level below the provider's minimum."""
    return (
        f"below {MIN_LEVEL.c_name} {PROVIDER} does not start: it creates its DirectML device at "
        f"{MIN_LEVEL.c_name} or newer (DirectML {first_directml(MIN_LEVEL)} or newer), so session creation "
        "fails and onnxruntime's Python InferenceSession retries the whole model on CPUExecutionProvider "
        "(DML506)"
    )


@dataclass
class ProviderPlan:
    """The DirectML Tile the provider builds for one node at one level, or why it cannot."""

    descriptor: OperatorDesc | None
    reason: str | None
    steps: list[str] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)


def squeeze(shape: tuple[int, ...], repeats: tuple[int, ...]) -> tuple[list[int], list[int], list[int]]:
    """(input sizes, repeats, dropped axes) after the provider drops size-1 output dimensions."""
    out = tile_output_sizes(shape, repeats)
    dropped = [i for i, o in enumerate(out) if o == 1]
    if len(dropped) == len(out):  # all ones: one is kept
        dropped = dropped[:-1]
    kept = [i for i in range(len(out)) if i not in dropped]
    return [shape[i] for i in kept], [repeats[i] for i in kept], dropped


def provider_plan(
    shape: tuple[int, ...], repeats: tuple[int, ...], dtype: str, level: FeatureLevel
) -> ProviderPlan:
    """The descriptor the provider passes to DirectML for a non-empty Tile, validated at ``level``."""
    data_type = DML_TYPES[dtype]
    sizes, reps, dropped = squeeze(shape, repeats)
    steps = []
    if dropped:
        steps.append(
            f"{PROVIDER} removes the size-1 output dimensions {dropped} (DmlOperatorTile.cpp): "
            f"input Sizes {sizes}, Repeats {reps} (DML507)."
        )
    if dtype == "bool":
        steps.append(f"{PROVIDER} describes bool elements as UINT8 (DmlCommon.cpp, DML507).")
    if len(sizes) > MAX_RANK:
        return ProviderPlan(
            None,
            f"{len(sizes)} dimensions remain after dropping size-1 output dimensions; DirectML tensors take at "
            f"most {MAX_RANK}, so {PROVIDER} fails creating the operator (TensorDesc: rank <= "
            "MaximumDimensionCount) and the session (or the run) fails; onnxruntime's Python InferenceSession "
            "then retries the whole model on CPUExecutionProvider (DML507)",
            steps,
        )
    doc = {
        "InputTensor": {"DataType": data_type.name, "Sizes": sizes},
        "OutputTensor": {"DataType": data_type.name, "Sizes": list(tile_output_sizes(sizes, reps))},
        "Repeats": reps,
    }
    report = validate(doc, level)
    errors = report.errors
    if data_type == DataType.FLOAT64 and all(i.code == "DML302" for i in errors):
        # dmltile's Tile table has no FLOAT64 row, yet real DirectML (1.9.1, 1.15.4) creates FLOAT64 Tile
        # operators (DESIGN §4: what DirectML does decides), and the Tile page's 5.0 row lists FLOAT64.
        steps.append(
            "FLOAT64: dmltile's Tile table lists no FLOAT64, but DirectML itself creates FLOAT64 Tile operators "
            "(DirectML 1.9.1 and 1.15.4, measured; the Tile page lists FLOAT64 from DML_FEATURE_LEVEL_5_0)."
        )
        errors = []
    if errors:
        reason = (
            f"DirectML at {level.c_name} rejects the descriptor {PROVIDER} builds ("
            + "; ".join(f"{i.code} {i.path}: {i.message}" for i in errors)
            + "), so creating the operator fails"
        )
        return ProviderPlan(None, reason, steps)
    desc = OperatorDesc.model_validate(doc)
    steps.append(
        f"DirectML Tile at {level.c_name}: {data_type.name} input Sizes {sizes}, Repeats {reps}, "
        f"output Sizes {list(desc.output.sizes)}."
    )
    return ProviderPlan(desc, None, steps, [i for i in report.issues if i.severity == "warning"])


def provider_min_level(shape: tuple[int, ...], repeats: tuple[int, ...], dtype: str) -> FeatureLevel | None:
    """The lowest known level at which the provider starts and DirectML takes its descriptor."""
    for level in known_levels():
        if level >= MIN_LEVEL and provider_plan(shape, repeats, dtype, level).descriptor is not None:
            return level
    return None
