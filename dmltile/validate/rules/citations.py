"""Where the rules come from: the pages, headers, sources and measurements they cite.

Each rule's ``source`` is built from these, so one page's address is written once.
"""

_API = "learn.microsoft.com/windows/win32/api/directml/"
TILE_PAGE = f"DML_TILE_OPERATOR_DESC ({_API}ns-directml-dml_tile_operator_desc)"
BUFFER_PAGE = f"DML_BUFFER_TENSOR_DESC ({_API}ns-directml-dml_buffer_tensor_desc)"
HELPERS_PAGE = (
    "DirectML helper functions, DMLCalcBufferTensorSize "
    "(learn.microsoft.com/windows/ai/directml/dml-helper-functions)"
)
# What the real DirectML.dll answered to CreateOperator (docs/directml-conformance.md, measured on
# DirectML 1.8.0, 1.9.1 and 1.15.4 through Wine; 1.5.1 and a 1.0 prerelease for creation only).
MEASURED = "CreateOperator of DirectML 1.0.2006 to 1.15.4 (docs/directml-conformance.md)"
DOCUMENT = "dmltile's descriptor document (README, 'A 30-second tour'; its JSON Schema: `dmltile schema`)"
DXDISPATCH = "DxDispatch's model parser (microsoft/DirectML, DxDispatch/src/model/JsonParsers.cpp)"

# onnxruntime's DirectML execution provider, by the file (and revision) each provider rule follows.
ORT_DML = "microsoft/onnxruntime, onnxruntime/core/providers/dml/"
ORT_EP = ORT_DML + "DmlExecutionProvider/src/"
PROVIDER_SOURCES = {
    "registration": ORT_EP
    + "Operators/OperatorRegistration.cpp (main: REG_INFO(7, Tile) and REG_INFO(13, Tile), "
    "supportedTypeListAllScalars, requiredConstantCpuInputs(1); SupportedTensorDataTypes::AllScalars = "
    "UInt8..UInt64, Int8..Int64, Float16, Float32, Float64, Bool; older revisions such as 9471b93 "
    "registered Tile-7 only)",
    "partitioner": ORT_EP
    + "GraphPartitioner.cpp @ 82b45a7 (GetRegistrationProperties: a node joins the fused DirectML graph "
    "only if every required constant CPU input is an initializer (GetInitializedTensor) and "
    "TryGetStaticInputShapes/TryGetStaticOutputShapes succeed without empty dimensions; "
    "DoesNodeContainSupportedDataTypes checks every tensor type against supportedDeviceDataTypeMask)",
    "kernel": ORT_EP
    + "MLOperatorAuthorImpl.cpp (main, stored revision 65f7d76: AbiOpKernel creates the kernel at session "
    "creation only when the constant CPU inputs and input shapes are known; otherwise at the first "
    "Compute, snapshotting them in m_constantInputTensorContentsOfKernel; a later run whose shapes or "
    "RequiredCpuInputChanged values differ from that snapshot creates a local kernel for that run only)",
    "device": ORT_DML
    + "dml_provider_factory.cc @ b1436eb (CreateDMLDevice: DMLCreateDevice1(..., DML_FEATURE_LEVEL_5_0, ...); "
    "DirectML 1.8.0 is the first with 5.0: learn.microsoft.com/windows/ai/directml/dml-version-history); "
    "the CPU retry: onnxruntime/python/onnxruntime_inference_collection.py (InferenceSession, "
    "enable_fallback=True: on an error creating the session it retries with CPUExecutionProvider; "
    "onnxruntime 1.32.0)",
    "types": ORT_EP
    + "DmlCommon.cpp @ a27ef39 (GetDmlDataTypeFromMlDataTypeNoThrow: Bool -> DML_TENSOR_DATA_TYPE_UINT8, "
    "String/Complex -> UNKNOWN; GetSupportedDeviceDataTypeMask: CheckFeatureSupport("
    "DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT) for every type up to INT64)",
    "tile": ORT_EP
    + "Operators/DmlOperatorTile.cpp @ 17ef3cb (removes every size-1 output dimension, keeping one, from "
    "input, output and repeats; TensorDesc(..., TensorAxis::DoNotCoerce, TensorAxis::W, RightAligned, 1, 0))",
    "rank": ORT_EP
    + "TensorDesc.cpp (ML_CHECK_VALID_ARGUMENT(rank <= MaximumDimensionCount)) and DmlCommon.h "
    "(MaximumDimensionCount = DML_TENSOR_DIMENSION_COUNT_MAX1, 8)",
}
