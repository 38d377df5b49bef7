"""dmltile: validate, execute, lower and explain DirectML's Tile operator descriptors.

This module is the public API. The code lives in one folder per layer, each importing only from
the layers below it: core -> validate -> execute -> lower -> interop -> teach -> cli. The functions
``validate``, ``execute`` and ``lower`` share their names with the layer packages; the names here
are the functions (reach a layer's modules with ``from dmltile.execute import limits``).
"""

from .core.enums import DataType, FeatureLevel, OperatorType, TensorFlags, TensorType
from .core.operator import OperatorDesc, TileOperatorDesc
from .core.shape import input_index, tile_output_sizes
from .core.tensor import BufferTensorDesc, TensorDesc, calc_buffer_tensor_size
from .errors import (
    ArgumentError,
    DescriptorError,
    DmlTileError,
    FrameworkError,
    InputError,
    LoweringError,
    OutputTooLargeError,
    UnsupportedError,
)
from .execute.compare import BackendComparison, compare_backends
from .execute.compile import CompiledTile, compile, execute
from .execute.doctor import doctor_report
from .execute.ort_backend import backend_info
from .interop.dxdispatch_export import to_dxdispatch
from .lower.lowering import LoweringPlan, lower
from .lower.model_check import STATUSES, TileNodeReport, check_model, check_model_levels
from .teach.explain import Explanation, explain, map_index
from .validate.api import accepted_levels, check, min_feature_level, validate
from .validate.build import tile_desc
from .validate.document import load, parse
from .validate.dxdispatch_models import DxDispatchModel, from_dxdispatch
from .validate.fixes import apply_fix
from .validate.levels import DEFAULT_FEATURE_LEVEL, known_levels, parse_feature_level, tile_support
from .validate.report import Edit, Issue, ValidationReport
from .validate.rules import RULES

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_FEATURE_LEVEL",
    "RULES",
    "apply_fix",
    "ArgumentError",
    "BackendComparison",
    "BufferTensorDesc",
    "CompiledTile",
    "DataType",
    "DescriptorError",
    "DmlTileError",
    "DxDispatchModel",
    "Edit",
    "Explanation",
    "FeatureLevel",
    "FrameworkError",
    "InputError",
    "Issue",
    "LoweringError",
    "LoweringPlan",
    "OperatorDesc",
    "OperatorType",
    "OutputTooLargeError",
    "STATUSES",
    "TensorDesc",
    "TensorFlags",
    "TensorType",
    "TileNodeReport",
    "TileOperatorDesc",
    "UnsupportedError",
    "ValidationReport",
    "__version__",
    "accepted_levels",
    "backend_info",
    "calc_buffer_tensor_size",
    "check",
    "check_model",
    "check_model_levels",
    "compare_backends",
    "compile",
    "doctor_report",
    "execute",
    "explain",
    "from_dxdispatch",
    "input_index",
    "known_levels",
    "load",
    "lower",
    "map_index",
    "min_feature_level",
    "parse",
    "parse_feature_level",
    "tile_desc",
    "tile_output_sizes",
    "tile_support",
    "to_dxdispatch",
    "validate",
]
