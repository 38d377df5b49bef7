/* The few DirectML declarations dmltile's runner needs, written from the public DirectML API
 * documentation (learn.microsoft.com/windows/ai/directml, "DirectML API reference").
 * No DirectML.h is needed: the runner loads DirectML.dll with LoadLibrary and calls its COM
 * interfaces through their vtables, by slot number.
 *
 * Vtable slots (each interface extends the one before it):
 *   IUnknown        0 QueryInterface, 1 AddRef, 2 Release
 *   IDMLObject      3 GetPrivateData, 4 SetPrivateData, 5 SetPrivateDataInterface, 6 SetName
 *   IDMLDevice      7 CheckFeatureSupport, 8 CreateOperator, 9 CompileOperator,
 *                   10 CreateOperatorInitializer, 11 CreateCommandRecorder, 12 CreateBindingTable,
 *                   13 Evict, 14 MakeResident, 15 GetDeviceRemovedReason, 16 GetParentDevice
 *   IDMLDeviceChild 7 GetDevice
 *   IDMLPageable    (no methods)
 *   IDMLDispatchable 8 GetBindingProperties (returns a struct by value)
 *   IDMLOperatorInitializer 9 Reset
 *   IDMLBindingTable 8 BindInputs, 9 BindOutputs, 10 BindTemporaryResource,
 *                    11 BindPersistentResource, 12 Reset
 *   IDMLCommandRecorder 8 RecordDispatch
 * A C++ member function that returns a struct by value takes, in the Microsoft x64 ABI, a hidden
 * pointer to the result right after `this` and returns that pointer: the typedefs below say so.
 */
#ifndef DMLTILE_DML_TYPES_H
#define DMLTILE_DML_TYPES_H

#include <windows.h>
#include <d3d12.h>

typedef UINT DMLT_TENSOR_DATA_TYPE; /* FLOAT32 1, FLOAT16 2, UINT32 3, UINT16 4, UINT8 5, INT32 6,
                                       INT16 7, INT8 8, FLOAT64 9, UINT64 10, INT64 11, UINT4 12, INT4 13 */
typedef UINT DMLT_TENSOR_TYPE;      /* INVALID 0, BUFFER 1 */
typedef UINT DMLT_TENSOR_FLAGS;     /* NONE 0, OWNED_BY_DML 1 */
#define DMLT_TENSOR_TYPE_BUFFER 1u
#define DMLT_TENSOR_FLAG_OWNED_BY_DML 1u
#define DMLT_OPERATOR_TILE 70u

typedef struct DMLT_BUFFER_TENSOR_DESC {
    DMLT_TENSOR_DATA_TYPE DataType;
    DMLT_TENSOR_FLAGS Flags;
    UINT DimensionCount;
    const UINT *Sizes;
    const UINT *Strides;        /* NULL: packed */
    UINT64 TotalTensorSizeInBytes;
    UINT GuaranteedBaseOffsetAlignment;
} DMLT_BUFFER_TENSOR_DESC;

typedef struct DMLT_TENSOR_DESC {
    DMLT_TENSOR_TYPE Type;
    const void *Desc;
} DMLT_TENSOR_DESC;

typedef struct DMLT_OPERATOR_DESC {
    UINT Type;
    const void *Desc;
} DMLT_OPERATOR_DESC;

typedef struct DMLT_TILE_OPERATOR_DESC {
    const DMLT_TENSOR_DESC *InputTensor;
    const DMLT_TENSOR_DESC *OutputTensor;
    UINT RepeatsCount;
    const UINT *Repeats;
} DMLT_TILE_OPERATOR_DESC;

/* IDMLDevice::CheckFeatureSupport */
#define DMLT_FEATURE_TENSOR_DATA_TYPE_SUPPORT 0u
#define DMLT_FEATURE_FEATURE_LEVELS 1u
typedef struct { DMLT_TENSOR_DATA_TYPE DataType; } DMLT_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT;
typedef struct { BOOL IsSupported; } DMLT_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT;
typedef struct { UINT RequestedFeatureLevelCount; const UINT *RequestedFeatureLevels; } DMLT_FEATURE_QUERY_FEATURE_LEVELS;
typedef struct { UINT MaxSupportedFeatureLevel; } DMLT_FEATURE_DATA_FEATURE_LEVELS;

/* binding */
typedef struct DMLT_BINDING_PROPERTIES {
    UINT RequiredDescriptorCount;
    UINT64 TemporaryResourceSize;
    UINT64 PersistentResourceSize;
} DMLT_BINDING_PROPERTIES;

typedef struct DMLT_BINDING_TABLE_DESC {
    void *Dispatchable;
    D3D12_CPU_DESCRIPTOR_HANDLE CPUDescriptorHandle;
    D3D12_GPU_DESCRIPTOR_HANDLE GPUDescriptorHandle;
    UINT SizeInDescriptors;
} DMLT_BINDING_TABLE_DESC;

#define DMLT_BINDING_TYPE_NONE 0u
#define DMLT_BINDING_TYPE_BUFFER 1u
#define DMLT_BINDING_TYPE_BUFFER_ARRAY 2u
typedef struct { UINT Type; const void *Desc; } DMLT_BINDING_DESC;
typedef struct { ID3D12Resource *Buffer; UINT64 Offset; UINT64 SizeInBytes; } DMLT_BUFFER_BINDING;
typedef struct { UINT BindingCount; const DMLT_BUFFER_BINDING *Bindings; } DMLT_BUFFER_ARRAY_BINDING;

/* interface identifiers (DirectML.h uuids) */
static const GUID DMLT_IID_IDMLDevice = {0x6dbd6437, 0x96fd, 0x423f, {0xa9, 0x8c, 0xae, 0x5e, 0x7c, 0x2a, 0x57, 0x3f}};
static const GUID DMLT_IID_IDMLOperator = {0x26caae7a, 0x3081, 0x4633, {0x95, 0x81, 0x22, 0x6f, 0xbe, 0x57, 0x69, 0x5d}};
static const GUID DMLT_IID_IDMLCompiledOperator = {0x6b15e56a, 0xbf5c, 0x4902, {0x92, 0xd8, 0xda, 0x3a, 0x65, 0x0a, 0xfe, 0xa4}};
static const GUID DMLT_IID_IDMLOperatorInitializer = {0x427c1113, 0x435c, 0x469c, {0x86, 0x76, 0x4d, 0x5d, 0xd0, 0x72, 0xf8, 0x13}};
static const GUID DMLT_IID_IDMLBindingTable = {0x29c687dc, 0xde74, 0x4e3b, {0xab, 0x00, 0x11, 0x68, 0xf2, 0xfc, 0x3c, 0xfc}};
static const GUID DMLT_IID_IDMLCommandRecorder = {0xe6857a76, 0x2e3e, 0x4fdd, {0xbf, 0xf4, 0x5d, 0x2b, 0xa1, 0x0f, 0xb4, 0x53}};

/* any COM object: its first member is the vtable */
typedef struct DmlObject { void **lpVtbl; } DmlObject;

enum {
    SLOT_RELEASE = 2,
    SLOT_DEVICE_CHECK_FEATURE_SUPPORT = 7,
    SLOT_DEVICE_CREATE_OPERATOR = 8,
    SLOT_DEVICE_COMPILE_OPERATOR = 9,
    SLOT_DEVICE_CREATE_OPERATOR_INITIALIZER = 10,
    SLOT_DEVICE_CREATE_COMMAND_RECORDER = 11,
    SLOT_DEVICE_CREATE_BINDING_TABLE = 12,
    SLOT_DEVICE_GET_DEVICE_REMOVED_REASON = 15,
    SLOT_DISPATCHABLE_GET_BINDING_PROPERTIES = 8,
    SLOT_TABLE_BIND_INPUTS = 8,
    SLOT_TABLE_BIND_OUTPUTS = 9,
    SLOT_TABLE_BIND_TEMPORARY = 10,
    SLOT_TABLE_BIND_PERSISTENT = 11,
    SLOT_TABLE_RESET = 12,
    SLOT_RECORDER_RECORD_DISPATCH = 8,
    /* D3D12 (IUnknown 0-2, ID3D12Object 3-6, ID3D12DeviceChild 7) */
    SLOT_D3D12_HEAP_GET_CPU_START = 9,
    SLOT_D3D12_HEAP_GET_GPU_START = 10,
    SLOT_D3D12_DEVICE_CHECK_FEATURE_SUPPORT = 13
};

typedef HRESULT(WINAPI *PFN_DMLT_CreateDevice)(ID3D12Device *, UINT flags, REFIID, void **);
typedef ULONG(STDMETHODCALLTYPE *PFN_DMLT_Release)(DmlObject *);
typedef HRESULT(STDMETHODCALLTYPE *PFN_DMLT_CheckFeatureSupport)(DmlObject *, UINT, UINT, const void *, UINT, void *);
typedef HRESULT(STDMETHODCALLTYPE *PFN_DMLT_CreateOperator)(DmlObject *, const DMLT_OPERATOR_DESC *, REFIID, void **);
typedef HRESULT(STDMETHODCALLTYPE *PFN_DMLT_CompileOperator)(DmlObject *, DmlObject *, UINT, REFIID, void **);
typedef HRESULT(STDMETHODCALLTYPE *PFN_DMLT_CreateOperatorInitializer)(DmlObject *, UINT, DmlObject *const *, REFIID,
                                                                        void **);
typedef HRESULT(STDMETHODCALLTYPE *PFN_DMLT_CreateCommandRecorder)(DmlObject *, REFIID, void **);
typedef HRESULT(STDMETHODCALLTYPE *PFN_DMLT_CreateBindingTable)(DmlObject *, const DMLT_BINDING_TABLE_DESC *, REFIID,
                                                                 void **);
typedef HRESULT(STDMETHODCALLTYPE *PFN_DMLT_GetDeviceRemovedReason)(DmlObject *);
typedef DMLT_BINDING_PROPERTIES *(STDMETHODCALLTYPE *PFN_DMLT_GetBindingProperties)(DmlObject *,
                                                                                     DMLT_BINDING_PROPERTIES *);
typedef void(STDMETHODCALLTYPE *PFN_DMLT_BindArray)(DmlObject *, UINT, const DMLT_BINDING_DESC *);
typedef void(STDMETHODCALLTYPE *PFN_DMLT_BindOne)(DmlObject *, const DMLT_BINDING_DESC *);
typedef HRESULT(STDMETHODCALLTYPE *PFN_DMLT_TableReset)(DmlObject *, const DMLT_BINDING_TABLE_DESC *);
typedef void(STDMETHODCALLTYPE *PFN_DMLT_RecordDispatch)(DmlObject *, ID3D12CommandList *, DmlObject *, DmlObject *);
typedef D3D12_CPU_DESCRIPTOR_HANDLE *(STDMETHODCALLTYPE *PFN_DMLT_HeapCpuStart)(ID3D12DescriptorHeap *,
                                                                                 D3D12_CPU_DESCRIPTOR_HANDLE *);
typedef D3D12_GPU_DESCRIPTOR_HANDLE *(STDMETHODCALLTYPE *PFN_DMLT_HeapGpuStart)(ID3D12DescriptorHeap *,
                                                                                 D3D12_GPU_DESCRIPTOR_HANDLE *);
typedef HRESULT(STDMETHODCALLTYPE *PFN_DMLT_D3D12CheckFeatureSupport)(ID3D12Device *, D3D12_FEATURE, void *, UINT);

/* METHOD(obj, slot, PFN)(obj, args...) calls vtable slot `slot` of `obj` with the signature PFN */
#define METHOD(obj, slot, PFN) ((PFN)(((DmlObject *)(obj))->lpVtbl[(slot)]))

#endif
