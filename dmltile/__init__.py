"""dmltile: validate, execute, lower and explain DirectML's Tile operator descriptors.

This module is the public API. The code lives in one folder per layer, each importing only from
the layers below it: core -> validate -> execute -> lower -> interop -> teach -> cli. The functions
``validate``, ``execute`` and ``lower`` share their names with the layer packages; the names here
are the functions (reach a layer's modules with ``from dmltile.execute import limits``).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as they are, for type checkers; at run time each is imported on first use
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

# Where each public name lives. Importing dmltile imports none of them: a name is imported when it
# is first used, so the command line, which imports dmltile's modules directly, starts without
# NumPy's or the planner's import cost for a command that does not need them.
_WHERE = {
    "DataType": ".core.enums",
    "FeatureLevel": ".core.enums",
    "OperatorType": ".core.enums",
    "TensorFlags": ".core.enums",
    "TensorType": ".core.enums",
    "OperatorDesc": ".core.operator",
    "TileOperatorDesc": ".core.operator",
    "input_index": ".core.shape",
    "tile_output_sizes": ".core.shape",
    "BufferTensorDesc": ".core.tensor",
    "TensorDesc": ".core.tensor",
    "calc_buffer_tensor_size": ".core.tensor",
    "ArgumentError": ".errors",
    "DescriptorError": ".errors",
    "DmlTileError": ".errors",
    "FrameworkError": ".errors",
    "InputError": ".errors",
    "LoweringError": ".errors",
    "OutputTooLargeError": ".errors",
    "UnsupportedError": ".errors",
    "BackendComparison": ".execute.compare",
    "compare_backends": ".execute.compare",
    "CompiledTile": ".execute.compile",
    "compile": ".execute.compile",
    "execute": ".execute.compile",
    "doctor_report": ".execute.doctor",
    "backend_info": ".execute.ort_backend",
    "to_dxdispatch": ".interop.dxdispatch_export",
    "LoweringPlan": ".lower.lowering",
    "lower": ".lower.lowering",
    "STATUSES": ".lower.model_check",
    "TileNodeReport": ".lower.model_check",
    "check_model": ".lower.model_check",
    "check_model_levels": ".lower.model_check",
    "Explanation": ".teach.explain",
    "explain": ".teach.explain",
    "map_index": ".teach.explain",
    "accepted_levels": ".validate.api",
    "check": ".validate.api",
    "min_feature_level": ".validate.api",
    "validate": ".validate.api",
    "tile_desc": ".validate.build",
    "load": ".validate.document",
    "parse": ".validate.document",
    "DxDispatchModel": ".validate.dxdispatch_models",
    "from_dxdispatch": ".validate.dxdispatch_models",
    "apply_fix": ".validate.fixes",
    "DEFAULT_FEATURE_LEVEL": ".validate.levels",
    "known_levels": ".validate.levels",
    "parse_feature_level": ".validate.levels",
    "tile_support": ".validate.levels",
    "Edit": ".validate.report",
    "Issue": ".validate.report",
    "ValidationReport": ".validate.report",
    "RULES": ".validate.rules",
}

# The layer packages named like the API's functions (validate, execute, lower) are loaded now (they
# are empty): importing one of their modules later would otherwise put the package where the
# function belongs, as Python sets a package's attribute when it first imports a subpackage.
for _layer in ("validate", "execute", "lower"):
    __import__(f"{__name__}.{_layer}")
    del globals()[_layer]
del _layer


def __getattr__(name: str) -> Any:
    """A public name, imported on first use (with the displays registered)."""
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    # How descriptors, reports and explanations look in a REPL, in rich and in a notebook: the teach
    # layer registers it when imported, as the API has always given it (the CLI uses no public name).
    importlib.import_module(".teach", __name__)
    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})


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
