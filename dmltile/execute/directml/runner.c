/* dmltile's DirectML runner: runs DML_TILE_OPERATOR_DESCs through the real DirectML.dll.
 *
 * Builds for Windows with mingw-w64 or MSVC (C11) and runs natively there, or under Wine on Linux
 * (d3d12 = vkd3d over Mesa lavapipe; see setup.sh):
 *     x86_64-w64-mingw32-gcc -O2 -o runner.exe runner.c -ld3d12 -ldxgi -lversion
 *     cl /O2 runner.c d3d12.lib dxgi.lib version.lib dxguid.lib   (MSVC declares the IIDs in dxguid.lib)
 *     python -m ziglang cc -target x86_64-windows-gnu -O2 -o runner.exe runner.c -ld3d12 -ldxgi -lversion
 *
 * Usage: runner.exe [--dll PATH] [--warp] [--patch-options1 auto|always|never] [--info]
 *
 * Protocol (UTF-8, one JSON object per line on stdin and stdout):
 *   out, first line: {"kind": "info", "file_version": "1.15.4.0", "max_feature_level": "6.4", ...}
 *   in, per case:    {"id": "...", "OperatorType": 70,
 *                     "InputTensor":  {"Type": 1, "DataType": 1, "Flags": 0, "DimensionCount": 4,
 *                                      "Sizes": [...], "Strides": [...] | null,
 *                                      "TotalTensorSizeInBytes": 24, "GuaranteedBaseOffsetAlignment": 0},
 *                     "OutputTensor": {... the same ...}, "RepeatsCount": 4, "Repeats": [...],
 *                     "execute": false,
 *                     "input_buffer": "hex", "input_offset": 0, "input_size": 24,
 *                     "output_buffer": "hex", "output_offset": 0, "output_size": 216}
 *     `*_buffer` is the whole D3D12 buffer (its length is the resource size), `*_offset` and `*_size`
 *     the DML_BUFFER_BINDING inside it. Arrays shorter than their count are padded with zeros.
 *   out, per case:   {"id": "...", "create_hr": "0x00000000", "executed": true, "exec_hr": "0x00000000",
 *                     "exec_stage": "done", "output_buffer": "hex (the whole output resource)"}
 *   A crash prints {"id": ..., "crash": "0xC0000005"} and exits 5; a removed device exits 4 after its answer.
 */
#define COBJMACROS
#define INITGUID /* define the D3D12 and DXGI interface IDs here instead of linking dxguid */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <io.h>
#include <windows.h>
#include <d3d12.h>
#include <dxgi1_4.h>
#include "dml_types.h"
#include "json_lines.h"
#include "file_version.h"

#define MAX_DIMS 64

/* ------------------------------------------------------------------------------------------------ */
/* D3D12 + DirectML state */

static ID3D12Device *g_dev;
static DmlObject *g_dml;
static ID3D12CommandQueue *g_queue;
static ID3D12CommandAllocator *g_alloc;
static ID3D12GraphicsCommandList *g_list;
static ID3D12Fence *g_fence;
static UINT64 g_fence_value;
static char g_case_id[256];
static HRESULT g_create_hr = 1; /* 1: CreateOperator not called yet for this case */

static PFN_DMLT_D3D12CheckFeatureSupport g_original_cfs;
static int g_options1_patched;

/* vkd3d answers 0 for D3D12_OPTIONS1's wave lane counts; DirectML <= 1.5.1 divides by WaveLaneCountMin
   inside DMLCreateDevice. This replacement of ID3D12Device::CheckFeatureSupport reports 4 lanes instead. */
static HRESULT STDMETHODCALLTYPE options1_fixed_cfs(ID3D12Device *d, D3D12_FEATURE f, void *data, UINT size) {
    HRESULT hr = g_original_cfs(d, f, data, size);
    if (SUCCEEDED(hr) && f == D3D12_FEATURE_D3D12_OPTIONS1 && size >= sizeof(D3D12_FEATURE_DATA_D3D12_OPTIONS1)) {
        D3D12_FEATURE_DATA_D3D12_OPTIONS1 *o = data;
        if (o->WaveLaneCountMin == 0) {
            o->WaveLaneCountMin = 4;
            if (o->WaveLaneCountMax < 4) o->WaveLaneCountMax = 4;
            if (o->TotalLaneCount == 0) o->TotalLaneCount = 4;
            g_options1_patched = 1;
        }
    }
    return hr;
}
static void patch_check_feature_support(ID3D12Device *d) {
    void **vt = *(void ***)d;
    DWORD old;
    VirtualProtect(&vt[SLOT_D3D12_DEVICE_CHECK_FEATURE_SUPPORT], sizeof(void *), PAGE_EXECUTE_READWRITE, &old);
    g_original_cfs = (PFN_DMLT_D3D12CheckFeatureSupport)vt[SLOT_D3D12_DEVICE_CHECK_FEATURE_SUPPORT];
    vt[SLOT_D3D12_DEVICE_CHECK_FEATURE_SUPPORT] = (void *)options1_fixed_cfs;
    VirtualProtect(&vt[SLOT_D3D12_DEVICE_CHECK_FEATURE_SUPPORT], sizeof(void *), old, &old);
}

static LONG WINAPI on_crash(EXCEPTION_POINTERS *e) {
    printf("\n{\"id\": ");
    put_json_string(g_case_id);
    if (g_create_hr != 1) printf(", \"create_hr\": \"0x%08lX\"", (unsigned long)g_create_hr);
    printf(", \"crash\": \"0x%08lX\"}\n", (unsigned long)e->ExceptionRecord->ExceptionCode);
    fflush(stdout);
    ExitProcess(5);
    return EXCEPTION_EXECUTE_HANDLER;
}

static void release(void *obj) { if (obj) METHOD(obj, SLOT_RELEASE, PFN_DMLT_Release)((DmlObject *)obj); }

static ID3D12Resource *make_buffer(UINT64 size, D3D12_HEAP_TYPE heap, D3D12_RESOURCE_STATES state,
                                   D3D12_RESOURCE_FLAGS flags, HRESULT *hr) {
    D3D12_HEAP_PROPERTIES hp;
    D3D12_RESOURCE_DESC rd;
    ID3D12Resource *r = NULL;
    memset(&hp, 0, sizeof hp);
    memset(&rd, 0, sizeof rd);
    hp.Type = heap;
    rd.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER;
    rd.Width = size < 4 ? 4 : (size + 3) & ~3ull;
    rd.Height = 1;
    rd.DepthOrArraySize = 1;
    rd.MipLevels = 1;
    rd.SampleDesc.Count = 1;
    rd.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR;
    rd.Flags = flags;
    *hr = ID3D12Device_CreateCommittedResource(g_dev, &hp, D3D12_HEAP_FLAG_NONE, &rd, state, NULL,
                                               &IID_ID3D12Resource, (void **)&r);
    return SUCCEEDED(*hr) ? r : NULL;
}
static void uav_barrier(ID3D12Resource *r) {
    D3D12_RESOURCE_BARRIER b;
    memset(&b, 0, sizeof b);
    b.Type = D3D12_RESOURCE_BARRIER_TYPE_UAV;
    b.UAV.pResource = r;
    ID3D12GraphicsCommandList_ResourceBarrier(g_list, 1, &b);
}
static void transition(ID3D12Resource *r, D3D12_RESOURCE_STATES before, D3D12_RESOURCE_STATES after) {
    D3D12_RESOURCE_BARRIER b;
    memset(&b, 0, sizeof b);
    b.Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
    b.Transition.pResource = r;
    b.Transition.Subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES;
    b.Transition.StateBefore = before;
    b.Transition.StateAfter = after;
    ID3D12GraphicsCommandList_ResourceBarrier(g_list, 1, &b);
}
static HRESULT submit_and_wait(void) {
    HRESULT hr = ID3D12GraphicsCommandList_Close(g_list);
    if (FAILED(hr)) return hr;
    ID3D12CommandList *lists[1] = {(ID3D12CommandList *)g_list};
    ID3D12CommandQueue_ExecuteCommandLists(g_queue, 1, lists);
    hr = ID3D12CommandQueue_Signal(g_queue, g_fence, ++g_fence_value);
    if (FAILED(hr)) return hr;
    HANDLE ev = CreateEventA(NULL, FALSE, FALSE, NULL);
    hr = ID3D12Fence_SetEventOnCompletion(g_fence, g_fence_value, ev);
    DWORD w = SUCCEEDED(hr) ? WaitForSingleObject(ev, 120000) : WAIT_FAILED;
    CloseHandle(ev);
    if (FAILED(hr)) return hr;
    if (w != WAIT_OBJECT_0) return HRESULT_FROM_WIN32(ERROR_TIMEOUT);
    hr = ID3D12Device_GetDeviceRemovedReason(g_dev);
    if (FAILED(hr)) return hr;
    hr = ID3D12CommandAllocator_Reset(g_alloc);
    if (FAILED(hr)) return hr;
    return ID3D12GraphicsCommandList_Reset(g_list, g_alloc, NULL);
}

/* ------------------------------------------------------------------------------------------------ */
/* one case */

typedef struct {
    UINT sizes[MAX_DIMS], strides[MAX_DIMS];
    DMLT_BUFFER_TENSOR_DESC buffer;
    DMLT_TENSOR_DESC tensor;
} Tensor;

static int fill_uints(const JValue *arr, UINT count, UINT *out) {
    if (count > MAX_DIMS) return 0;
    memset(out, 0, MAX_DIMS * sizeof *out);
    if (!arr || arr->type != J_ARR) return 1;
    for (size_t i = 0; i < arr->count && i < MAX_DIMS; i++) out[i] = (UINT)arr->items[i].number;
    return 1;
}

static const char *read_tensor(const JValue *j, Tensor *t) {
    if (!j || j->type != J_OBJ) return "tensor missing";
    memset(t, 0, sizeof *t);
    t->buffer.DataType = (UINT)jnum(j, "DataType", 0);
    t->buffer.Flags = (UINT)jnum(j, "Flags", 0);
    t->buffer.DimensionCount = (UINT)jnum(j, "DimensionCount", 0);
    t->buffer.TotalTensorSizeInBytes = jnum(j, "TotalTensorSizeInBytes", 0);
    t->buffer.GuaranteedBaseOffsetAlignment = (UINT)jnum(j, "GuaranteedBaseOffsetAlignment", 0);
    if (!fill_uints(jget(j, "Sizes"), t->buffer.DimensionCount, t->sizes)) return "too many dimensions for the runner";
    t->buffer.Sizes = t->sizes;
    const JValue *st = jget(j, "Strides");
    if (st && st->type == J_ARR) {
        if (!fill_uints(st, t->buffer.DimensionCount, t->strides)) return "too many dimensions for the runner";
        t->buffer.Strides = t->strides;
    }
    t->tensor.Type = (UINT)jnum(j, "Type", DMLT_TENSOR_TYPE_BUFFER);
    t->tensor.Desc = &t->buffer;
    return NULL;
}

typedef struct {
    const char *stage;
    HRESULT hr;
    unsigned char *out;
    size_t out_len;
    int device_lost;
} ExecResult;

#define STEP(name, call) do { r->stage = (name); r->hr = (call); if (FAILED(r->hr)) goto cleanup; } while (0)

static void execute(DmlObject *op, const Tensor *in, const JValue *c, ExecResult *r) {
    DmlObject *compiled = NULL, *init = NULL, *recorder = NULL, *table = NULL;
    ID3D12DescriptorHeap *heap = NULL;
    ID3D12Resource *inbuf = NULL, *outbuf = NULL, *upload_in = NULL, *upload_out = NULL, *readback = NULL;
    ID3D12Resource *temp = NULL, *persist = NULL;
    HRESULT hr = S_OK;
    const JValue *jin = jget(c, "input_buffer"), *jout = jget(c, "output_buffer");
    long long in_len = (jin && jin->type == J_STR) ? unhex(jin->str, jin->len) : -1;
    long long out_len = (jout && jout->type == J_STR) ? unhex(jout->str, jout->len) : -1;
    UINT64 in_off = jnum(c, "input_offset", 0), in_size = jnum(c, "input_size", 0);
    UINT64 out_off = jnum(c, "output_offset", 0), out_size = jnum(c, "output_size", 0);
    int owned = (in->buffer.Flags & DMLT_TENSOR_FLAG_OWNED_BY_DML) != 0;
    r->stage = "buffers";
    r->hr = E_INVALIDARG;
    if (in_len < 1 || out_len < 1) goto cleanup;

    STEP("CompileOperator", METHOD(g_dml, SLOT_DEVICE_COMPILE_OPERATOR, PFN_DMLT_CompileOperator)(
                                g_dml, op, 0u, &DMLT_IID_IDMLCompiledOperator, (void **)&compiled));
    STEP("CreateOperatorInitializer",
         METHOD(g_dml, SLOT_DEVICE_CREATE_OPERATOR_INITIALIZER, PFN_DMLT_CreateOperatorInitializer)(
             g_dml, 1u, (DmlObject *const *)&compiled, &DMLT_IID_IDMLOperatorInitializer, (void **)&init));
    DMLT_BINDING_PROPERTIES pc, pi;
    METHOD(compiled, SLOT_DISPATCHABLE_GET_BINDING_PROPERTIES, PFN_DMLT_GetBindingProperties)(compiled, &pc);
    METHOD(init, SLOT_DISPATCHABLE_GET_BINDING_PROPERTIES, PFN_DMLT_GetBindingProperties)(init, &pi);
    UINT ndesc = pc.RequiredDescriptorCount > pi.RequiredDescriptorCount ? pc.RequiredDescriptorCount
                                                                          : pi.RequiredDescriptorCount;
    if (ndesc == 0) ndesc = 1;
    UINT64 temp_size = pc.TemporaryResourceSize > pi.TemporaryResourceSize ? pc.TemporaryResourceSize
                                                                            : pi.TemporaryResourceSize;
    D3D12_DESCRIPTOR_HEAP_DESC hd = {D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV, ndesc,
                                     D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE, 0};
    STEP("CreateDescriptorHeap", ID3D12Device_CreateDescriptorHeap(g_dev, &hd, &IID_ID3D12DescriptorHeap, (void **)&heap));

    r->stage = "CreateCommittedResource";
    inbuf = make_buffer((UINT64)in_len, D3D12_HEAP_TYPE_DEFAULT, D3D12_RESOURCE_STATE_COPY_DEST,
                        D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS, &hr);
    if (FAILED(r->hr = hr)) goto cleanup;
    outbuf = make_buffer((UINT64)out_len, D3D12_HEAP_TYPE_DEFAULT, D3D12_RESOURCE_STATE_COPY_DEST,
                         D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS, &hr);
    if (FAILED(r->hr = hr)) goto cleanup;
    upload_in = make_buffer((UINT64)in_len, D3D12_HEAP_TYPE_UPLOAD, D3D12_RESOURCE_STATE_GENERIC_READ,
                            D3D12_RESOURCE_FLAG_NONE, &hr);
    if (FAILED(r->hr = hr)) goto cleanup;
    upload_out = make_buffer((UINT64)out_len, D3D12_HEAP_TYPE_UPLOAD, D3D12_RESOURCE_STATE_GENERIC_READ,
                             D3D12_RESOURCE_FLAG_NONE, &hr);
    if (FAILED(r->hr = hr)) goto cleanup;
    readback = make_buffer((UINT64)out_len, D3D12_HEAP_TYPE_READBACK, D3D12_RESOURCE_STATE_COPY_DEST,
                           D3D12_RESOURCE_FLAG_NONE, &hr);
    if (FAILED(r->hr = hr)) goto cleanup;
    if (temp_size) {
        temp = make_buffer(temp_size, D3D12_HEAP_TYPE_DEFAULT, D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                           D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS, &hr);
        if (FAILED(r->hr = hr)) goto cleanup;
    }
    if (pc.PersistentResourceSize) {
        persist = make_buffer(pc.PersistentResourceSize, D3D12_HEAP_TYPE_DEFAULT, D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                              D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS, &hr);
        if (FAILED(r->hr = hr)) goto cleanup;
    }

    unsigned char *mapped = NULL;
    D3D12_RANGE nothing = {0, 0};
    STEP("Map(upload)", ID3D12Resource_Map(upload_in, 0, &nothing, (void **)&mapped));
    memcpy(mapped, jin->str, (size_t)in_len);
    ID3D12Resource_Unmap(upload_in, 0, NULL);
    STEP("Map(upload)", ID3D12Resource_Map(upload_out, 0, &nothing, (void **)&mapped));
    memcpy(mapped, jout->str, (size_t)out_len);
    ID3D12Resource_Unmap(upload_out, 0, NULL);
    ID3D12GraphicsCommandList_CopyBufferRegion(g_list, inbuf, 0, upload_in, 0, (UINT64)in_len);
    ID3D12GraphicsCommandList_CopyBufferRegion(g_list, outbuf, 0, upload_out, 0, (UINT64)out_len);
    transition(inbuf, D3D12_RESOURCE_STATE_COPY_DEST, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
    transition(outbuf, D3D12_RESOURCE_STATE_COPY_DEST, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);

    ID3D12DescriptorHeap *heaps[1] = {heap};
    ID3D12GraphicsCommandList_SetDescriptorHeaps(g_list, 1, heaps);
    STEP("CreateCommandRecorder", METHOD(g_dml, SLOT_DEVICE_CREATE_COMMAND_RECORDER, PFN_DMLT_CreateCommandRecorder)(
                                      g_dml, &DMLT_IID_IDMLCommandRecorder, (void **)&recorder));
    DMLT_BINDING_TABLE_DESC td;
    memset(&td, 0, sizeof td);
    td.Dispatchable = init;
    METHOD(heap, SLOT_D3D12_HEAP_GET_CPU_START, PFN_DMLT_HeapCpuStart)(heap, &td.CPUDescriptorHandle);
    METHOD(heap, SLOT_D3D12_HEAP_GET_GPU_START, PFN_DMLT_HeapGpuStart)(heap, &td.GPUDescriptorHandle);
    td.SizeInDescriptors = ndesc;
    STEP("CreateBindingTable", METHOD(g_dml, SLOT_DEVICE_CREATE_BINDING_TABLE, PFN_DMLT_CreateBindingTable)(
                                   g_dml, &td, &DMLT_IID_IDMLBindingTable, (void **)&table));
    DMLT_BUFFER_BINDING temp_b = {temp, 0, temp_size}, persist_b = {persist, 0, pc.PersistentResourceSize};
    DMLT_BUFFER_BINDING in_b = {inbuf, in_off, in_size}, out_b = {outbuf, out_off, out_size};
    DMLT_BINDING_DESC temp_d = {DMLT_BINDING_TYPE_BUFFER, &temp_b}, persist_d = {DMLT_BINDING_TYPE_BUFFER, &persist_b};
    DMLT_BINDING_DESC in_d = {DMLT_BINDING_TYPE_BUFFER, &in_b}, out_d = {DMLT_BINDING_TYPE_BUFFER, &out_b};
    DMLT_BINDING_DESC none_d = {DMLT_BINDING_TYPE_NONE, NULL};
    DMLT_BUFFER_ARRAY_BINDING owned_arr = {1, &in_b};
    DMLT_BINDING_DESC owned_d = {DMLT_BINDING_TYPE_BUFFER_ARRAY, &owned_arr};
    /* initialization: OWNED_BY_DML inputs are bound here, once; the persistent resource is its output */
    if (owned) METHOD(table, SLOT_TABLE_BIND_INPUTS, PFN_DMLT_BindArray)(table, 1u, &owned_d);
    if (temp && pi.TemporaryResourceSize) METHOD(table, SLOT_TABLE_BIND_TEMPORARY, PFN_DMLT_BindOne)(table, &temp_d);
    if (persist) METHOD(table, SLOT_TABLE_BIND_OUTPUTS, PFN_DMLT_BindArray)(table, 1u, &persist_d);
    METHOD(recorder, SLOT_RECORDER_RECORD_DISPATCH, PFN_DMLT_RecordDispatch)(recorder, (ID3D12CommandList *)g_list,
                                                                             init, table);
    uav_barrier(NULL);
    /* execution */
    td.Dispatchable = compiled;
    STEP("BindingTable::Reset", METHOD(table, SLOT_TABLE_RESET, PFN_DMLT_TableReset)(table, &td));
    METHOD(table, SLOT_TABLE_BIND_INPUTS, PFN_DMLT_BindArray)(table, 1u, owned ? &none_d : &in_d);
    METHOD(table, SLOT_TABLE_BIND_OUTPUTS, PFN_DMLT_BindArray)(table, 1u, &out_d);
    if (temp && pc.TemporaryResourceSize) METHOD(table, SLOT_TABLE_BIND_TEMPORARY, PFN_DMLT_BindOne)(table, &temp_d);
    if (persist) METHOD(table, SLOT_TABLE_BIND_PERSISTENT, PFN_DMLT_BindOne)(table, &persist_d);
    METHOD(recorder, SLOT_RECORDER_RECORD_DISPATCH, PFN_DMLT_RecordDispatch)(recorder, (ID3D12CommandList *)g_list,
                                                                             compiled, table);
    uav_barrier(NULL);
    transition(outbuf, D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_COPY_SOURCE);
    ID3D12GraphicsCommandList_CopyBufferRegion(g_list, readback, 0, outbuf, 0, (UINT64)out_len);
    r->stage = "ExecuteCommandLists";
    r->hr = submit_and_wait();
    if (FAILED(r->hr)) { r->device_lost = 1; goto cleanup; }
    STEP("DMLDevice::GetDeviceRemovedReason",
         METHOD(g_dml, SLOT_DEVICE_GET_DEVICE_REMOVED_REASON, PFN_DMLT_GetDeviceRemovedReason)(g_dml));
    D3D12_RANGE all = {0, (SIZE_T)out_len};
    STEP("Map(readback)", ID3D12Resource_Map(readback, 0, &all, (void **)&mapped));
    r->out = malloc((size_t)out_len);
    if (r->out) { memcpy(r->out, mapped, (size_t)out_len); r->out_len = (size_t)out_len; }
    ID3D12Resource_Unmap(readback, 0, &nothing);
    r->stage = "done";
    r->hr = S_OK;
cleanup:
    release(table);
    release(recorder);
    release(init);
    release(compiled);
    release(heap);
    release(inbuf);
    release(outbuf);
    release(upload_in);
    release(upload_out);
    release(readback);
    release(temp);
    release(persist);
    if (strcmp(r->stage, "done") && !r->device_lost) {
        /* a failure while recording leaves the list open: reset it for the next case */
        ID3D12GraphicsCommandList_Close(g_list);
        ID3D12CommandAllocator_Reset(g_alloc);
        ID3D12GraphicsCommandList_Reset(g_list, g_alloc, NULL);
    }
}

static int run_case(char *line) {
    JValue c;
    char *p = line;
    skip_ws(&p);
    if (!*p) return 0;
    g_case_id[0] = 0;
    g_create_hr = 1;
    if (!parse_value(&p, &c, 0) || c.type != J_OBJ) {
        printf("{\"id\": null, \"error\": \"not a JSON object\"}\n");
        return 0;
    }
    const JValue *id = jget(&c, "id");
    if (id && id->type == J_STR) {
        strncpy(g_case_id, id->str, sizeof g_case_id - 1);
        g_case_id[sizeof g_case_id - 1] = 0;
    }
    Tensor in, out;
    UINT repeats[MAX_DIMS];
    const char *err = read_tensor(jget(&c, "InputTensor"), &in);
    if (!err) err = read_tensor(jget(&c, "OutputTensor"), &out);
    UINT nrep = (UINT)jnum(&c, "RepeatsCount", 0);
    if (!err && !fill_uints(jget(&c, "Repeats"), nrep, repeats)) err = "too many repeats for the runner";
    if (err) {
        printf("{\"id\": ");
        put_json_string(g_case_id);
        printf(", \"error\": ");
        put_json_string(err);
        printf("}\n");
        fflush(stdout);
        return 0;
    }
    /* a device removed by an earlier case answers every call with DXGI_ERROR_DEVICE_REMOVED: stop
       without answering; the driver starts a fresh process at this case */
    if (FAILED(METHOD(g_dml, SLOT_DEVICE_GET_DEVICE_REMOVED_REASON, PFN_DMLT_GetDeviceRemovedReason)(g_dml)) ||
        FAILED(ID3D12Device_GetDeviceRemovedReason(g_dev)))
        return 1;
    DMLT_TILE_OPERATOR_DESC tile = {&in.tensor, &out.tensor, nrep, repeats};
    DMLT_OPERATOR_DESC od = {(UINT)jnum(&c, "OperatorType", DMLT_OPERATOR_TILE), &tile};
    DmlObject *op = NULL;
    HRESULT hr = METHOD(g_dml, SLOT_DEVICE_CREATE_OPERATOR, PFN_DMLT_CreateOperator)(g_dml, &od, &DMLT_IID_IDMLOperator,
                                                                                  (void **)&op);
    g_create_hr = hr;
    int lost = 0;
    ExecResult r;
    memset(&r, 0, sizeof r);
    int run = SUCCEEDED(hr) && jbool(&c, "execute");
    if (run) execute(op, &in, &c, &r);
    printf("{\"id\": ");
    put_json_string(g_case_id);
    printf(", \"create_hr\": \"0x%08lX\"", (unsigned long)hr);
    if (run) {
        printf(", \"executed\": %s, \"exec_stage\": ", r.out ? "true" : "false");
        put_json_string(r.stage);
        printf(", \"exec_hr\": \"0x%08lX\"", (unsigned long)r.hr);
        if (r.out) {
            printf(", \"output_buffer\": ");
            put_hex(r.out, r.out_len);
            free(r.out);
        }
        lost = r.device_lost || FAILED(ID3D12Device_GetDeviceRemovedReason(g_dev)) ||
               FAILED(METHOD(g_dml, SLOT_DEVICE_GET_DEVICE_REMOVED_REASON, PFN_DMLT_GetDeviceRemovedReason)(g_dml));
        if (lost) printf(", \"device_removed\": true");
    }
    release(op);
    printf("}\n");
    fflush(stdout);
    return lost;
}

/* ------------------------------------------------------------------------------------------------ */

static void fatal(const char *stage, HRESULT hr) {
    printf("{\"kind\": \"fatal\", \"stage\": ");
    put_json_string(stage);
    printf(", \"hr\": \"0x%08lX\"}\n", (unsigned long)hr);
    fflush(stdout);
    exit(3);
}

int main(int argc, char **argv) {
    const char *dll = "DirectML.dll";
    const char *patch = "auto";
    int info_only = 0, warp = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dll") && i + 1 < argc) dll = argv[++i];
        else if (!strcmp(argv[i], "--patch-options1") && i + 1 < argc) patch = argv[++i];
        else if (!strcmp(argv[i], "--info")) info_only = 1;
        else if (!strcmp(argv[i], "--warp")) warp = 1;
        else {
            fprintf(stderr, "usage: runner.exe [--dll PATH] [--warp] [--patch-options1 auto|always|never] [--info]\n");
            return 2;
        }
    }
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stdin), _O_BINARY);
    SetUnhandledExceptionFilter(on_crash);
    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
    strcpy(g_case_id, "(start-up)");

    char version[64];
    file_version(dll, version, sizeof version);
    HMODULE h = LoadLibraryA(dll);
    if (!h) fatal("LoadLibrary", HRESULT_FROM_WIN32(GetLastError()));
    PFN_DMLT_CreateDevice create = (PFN_DMLT_CreateDevice)(void *)GetProcAddress(h, "DMLCreateDevice");
    if (!create) fatal("GetProcAddress(DMLCreateDevice)", HRESULT_FROM_WIN32(GetLastError()));

    IDXGIFactory4 *factory = NULL;
    IDXGIAdapter1 *adapter = NULL;
    char adapter_name[256] = "unknown";
    HRESULT hr = CreateDXGIFactory1(&IID_IDXGIFactory4, (void **)&factory);
    if (SUCCEEDED(hr)) {
        if (warp) hr = IDXGIFactory4_EnumWarpAdapter(factory, &IID_IDXGIAdapter1, (void **)&adapter);
        else hr = IDXGIFactory4_EnumAdapters1(factory, 0, &adapter);
        if (SUCCEEDED(hr) && adapter) {
            DXGI_ADAPTER_DESC1 ad;
            if (SUCCEEDED(IDXGIAdapter1_GetDesc1(adapter, &ad)))
                WideCharToMultiByte(CP_UTF8, 0, ad.Description, -1, adapter_name, sizeof adapter_name, NULL, NULL);
        }
    }
    hr = D3D12CreateDevice((IUnknown *)adapter, D3D_FEATURE_LEVEL_11_0, &IID_ID3D12Device, (void **)&g_dev);
    if (FAILED(hr)) fatal("D3D12CreateDevice", hr);

    /* the patch is needed by DirectML < 1.8 (1.5.1 and the 1.0 prerelease divide by WaveLaneCountMin) */
    int major = 0, minor = 0;
    sscanf(version, "%d.%d", &major, &minor);
    int want_patch = !strcmp(patch, "always") || (!strcmp(patch, "auto") && (major == 1 && minor < 8));
    if (want_patch) patch_check_feature_support(g_dev);
    strcpy(g_case_id, "(DMLCreateDevice)");
    hr = create(g_dev, 0, &DMLT_IID_IDMLDevice, (void **)&g_dml);
    if (FAILED(hr)) fatal("DMLCreateDevice", hr);

    static const UINT levels[] = {0x1000, 0x2000, 0x2100, 0x3000, 0x3100, 0x4000, 0x4100, 0x5000,
                                  0x5100, 0x5200, 0x6000, 0x6100, 0x6200, 0x6300, 0x6400};
    UINT max_level = 0;
    for (int k = (int)(sizeof levels / sizeof levels[0]); k > 0; k--) {
        /* older DLLs may refuse levels they do not know: ask with the known prefix, longest first */
        DMLT_FEATURE_QUERY_FEATURE_LEVELS q = {(UINT)k, levels};
        DMLT_FEATURE_DATA_FEATURE_LEVELS d = {0};
        hr = METHOD(g_dml, SLOT_DEVICE_CHECK_FEATURE_SUPPORT, PFN_DMLT_CheckFeatureSupport)(
            g_dml, DMLT_FEATURE_FEATURE_LEVELS, (UINT)sizeof q, &q, (UINT)sizeof d, &d);
        if (SUCCEEDED(hr)) { max_level = d.MaxSupportedFeatureLevel; break; }
    }
    printf("{\"kind\": \"info\", \"dll\": ");
    put_json_string(dll);
    printf(", \"file_version\": \"%s\", \"max_feature_level\": \"%x.%x\", \"max_feature_level_hex\": \"0x%04X\"",
           version, (max_level >> 12) & 0xf, (max_level >> 8) & 0xf, max_level);
    printf(", \"adapter\": ");
    put_json_string(adapter_name);
    printf(", \"options1_patched\": %s, \"data_type_support\": {", g_options1_patched ? "true" : "false");
    for (UINT t = 1; t <= 13; t++) {
        DMLT_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT q = {t};
        DMLT_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT d = {0};
        hr = METHOD(g_dml, SLOT_DEVICE_CHECK_FEATURE_SUPPORT, PFN_DMLT_CheckFeatureSupport)(
            g_dml, DMLT_FEATURE_TENSOR_DATA_TYPE_SUPPORT, (UINT)sizeof q, &q, (UINT)sizeof d, &d);
        printf("%s\"%u\": %s", t > 1 ? ", " : "", t, FAILED(hr) ? "null" : d.IsSupported ? "true" : "false");
    }
    printf("}}\n");
    fflush(stdout);
    if (info_only) return 0;

    D3D12_COMMAND_QUEUE_DESC qd = {D3D12_COMMAND_LIST_TYPE_DIRECT, 0, D3D12_COMMAND_QUEUE_FLAG_NONE, 0};
    if (FAILED(hr = ID3D12Device_CreateCommandQueue(g_dev, &qd, &IID_ID3D12CommandQueue, (void **)&g_queue)))
        fatal("CreateCommandQueue", hr);
    if (FAILED(hr = ID3D12Device_CreateCommandAllocator(g_dev, D3D12_COMMAND_LIST_TYPE_DIRECT,
                                                        &IID_ID3D12CommandAllocator, (void **)&g_alloc)))
        fatal("CreateCommandAllocator", hr);
    if (FAILED(hr = ID3D12Device_CreateCommandList(g_dev, 0, D3D12_COMMAND_LIST_TYPE_DIRECT, g_alloc, NULL,
                                                   &IID_ID3D12GraphicsCommandList, (void **)&g_list)))
        fatal("CreateCommandList", hr);
    if (FAILED(hr = ID3D12Device_CreateFence(g_dev, 0, D3D12_FENCE_FLAG_NONE, &IID_ID3D12Fence, (void **)&g_fence)))
        fatal("CreateFence", hr);

    size_t cap = 1 << 16;
    char *line = malloc(cap);
    for (;;) {
        size_t n = 0;
        int eof = 0;
        for (;;) {
            if (!fgets(line + n, (int)(cap - n), stdin)) { eof = 1; break; }
            n += strlen(line + n);
            if (n && line[n - 1] == '\n') break;
            if (n + 1 >= cap) {
                cap *= 2;
                line = realloc(line, cap);
                if (!line) fatal("realloc", E_OUTOFMEMORY);
            }
        }
        if (n) {
            int lost = run_case(line);
            free_tracked();
            if (lost) return 4;
        }
        if (eof) break;
    }
    return 0;
}
