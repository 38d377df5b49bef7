"""dmltile: validate, execute, lower and explain DirectML's Tile operator descriptors."""

from .enums import DataType, FeatureLevel, OperatorType, TensorFlags, TensorType
from .errors import DescriptorError, DmlTileError, FrameworkError, LoweringError, UnsupportedError
from .operator import OperatorDesc, TileOperatorDesc, tile_desc
from .shape import input_index, tile_output_sizes
from .tensor import BufferTensorDesc, TensorDesc, calc_buffer_tensor_size

__version__ = "0.1.0"
from .document import InputError, load, parse
from .feature_levels import known_levels, tile_support
from .report import Issue, ValidationReport
from .rules import RULES
from .validation import accepted_levels, check, min_feature_level, parse_feature_level, validate
from .compiled import CompiledTile, compile, execute
from .compare import BackendComparison, compare_backends
from .executors.limits import OutputTooLargeError
from .executors.ort import backend_info
from .lowering import LoweringPlan, lower
from .lowering.model import TileNodeReport, check_model
from .dxdispatch import DxDispatchModel, from_dxdispatch, to_dxdispatch
from .explain import map_index  # dmltile.explain stays the module: from dmltile.explain import explain
from .doctor import doctor_report
