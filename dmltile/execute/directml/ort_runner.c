/* dmltile's onnxruntime-directml runner: runs ONNX models on onnxruntime's real DirectML execution
 * provider and says which provider ran each node.
 *
 * It LoadLibrary's onnxruntime.dll out of an onnxruntime-directml Windows wheel (DirectML.dll and
 * onnxruntime_providers_shared.dll beside it) and drives it through the C API's function table
 * (OrtGetApiBase()->GetApi(13)); the wheels carry no headers, so the few slots used are declared
 * below by index. Builds with mingw-w64 and runs natively on Windows or under Wine + Xvfb on Linux
 * (setup.sh):
 *     x86_64-w64-mingw32-gcc -O2 -o ort_runner.exe ort_runner.c -lversion
 *
 * Usage: ort_runner.exe --dll PATH\onnxruntime.dll [--info]
 *
 * Protocol (UTF-8, one JSON object per line on stdin and stdout):
 *   out, first line: {"kind": "info", "ort_version": "1.24.4", "directml": "1.15.4.0", "dml_ok": true, ...}
 *   in, per model:   {"id": "...", "model": "hex of the serialized ModelProto",
 *                     "fusion": true,               (false: ep.dml.disable_graph_fusion=1, nodes keep their names)
 *                     "cpu_fallback": true,         (false: session.disable_cpu_ep_fallback=1)
 *                     "free_dims": {"batch": 8},    (AddFreeDimensionOverrideByName)
 *                     "dml": true,                  (false: the CPU provider alone, as a reference)
 *                     "inputs": [{"name": "x", "type": 1, "shape": [2, 3], "data": "hex"}
 *                                | {"name": "s", "type": 8, "shape": [2], "strings": ["hex", ...]}],
 *                     "outputs": ["y"]}             (none: the session is created, not run)
 *     `type` is ONNXTensorElementDataType (the TensorProto.DataType numbers).
 *   out, per model:  {"id": "...", "stage": "done" | "CreateSession" | "Run" | ..., "error": "...",
 *                     "log": [{"severity": 0, "message": "Node placements ..."}, ...],
 *                     "profile": [the profiler's JSON events],
 *                     "outputs": [{"name": "y", "type": 1, "shape": [4, 6], "data": "hex"}]}
 *     The log holds the placement messages of the verbose log and every warning or error.
 *   A crash prints {"id": ..., "crash": "0xC0000005"} and exits 5.
 */
#include <windows.h>
#include <fcntl.h>
#include <io.h>
#include <stdint.h>
#include "json_lines.h"
#include "file_version.h"

/* ------------------------------------------------------------------------------------------------ */
/* the C API table: slot numbers of struct OrtApi. The order is the declaration order of OrtApi in
   include/onnxruntime/core/session/onnxruntime_c_api.h (equally the ort_api_1_to_N initializer in
   onnxruntime/core/session/onnxruntime_c_api.cc, whose static_asserts pin ReleaseCustomOpDomain at
   101, ReleaseModelMetadata at 118, AddFreeDimensionOverrideByName at 124). Slots never move once a
   version has shipped, so an older API version works with every newer onnxruntime.dll. */
#define ORT_API_VERSION_USED 13
enum {
    ORT_GET_ERROR_MESSAGE = 2,
    ORT_CREATE_ENV_WITH_CUSTOM_LOGGER = 4,
    ORT_CREATE_SESSION_FROM_ARRAY = 8,
    ORT_RUN = 9,
    ORT_CREATE_SESSION_OPTIONS = 10,
    ORT_SET_SESSION_EXECUTION_MODE = 13,
    ORT_ENABLE_PROFILING = 14,
    ORT_DISABLE_MEM_PATTERN = 17,
    ORT_CREATE_TENSOR_AS_ORT_VALUE = 48,
    ORT_CREATE_TENSOR_WITH_DATA_AS_ORT_VALUE = 49,
    ORT_GET_TENSOR_MUTABLE_DATA = 51,
    ORT_FILL_STRING_TENSOR = 52,
    ORT_GET_STRING_TENSOR_DATA_LENGTH = 53,
    ORT_GET_STRING_TENSOR_CONTENT = 54,
    ORT_GET_TENSOR_ELEMENT_TYPE = 60,
    ORT_GET_DIMENSIONS_COUNT = 61,
    ORT_GET_DIMENSIONS = 62,
    ORT_GET_TENSOR_SHAPE_ELEMENT_COUNT = 64,
    ORT_GET_TENSOR_TYPE_AND_SHAPE = 65,
    ORT_CREATE_CPU_MEMORY_INFO = 69,
    ORT_ALLOCATOR_FREE = 76,
    ORT_GET_ALLOCATOR_WITH_DEFAULT_OPTIONS = 78,
    ORT_RELEASE_STATUS = 93,
    ORT_RELEASE_MEMORY_INFO = 94,
    ORT_RELEASE_SESSION = 95,
    ORT_RELEASE_VALUE = 96,
    ORT_RELEASE_TENSOR_TYPE_AND_SHAPE_INFO = 99,
    ORT_RELEASE_SESSION_OPTIONS = 100,
    ORT_SESSION_END_PROFILING = 110,
    ORT_ADD_FREE_DIMENSION_OVERRIDE_BY_NAME = 124,
    ORT_ADD_SESSION_CONFIG_ENTRY = 130,
};
enum { ORT_LOGGING_LEVEL_VERBOSE = 0, ORT_LOGGING_LEVEL_WARNING = 2 };
enum { ORT_SEQUENTIAL = 0 };
enum { ORT_ARENA_ALLOCATOR = 1, ORT_MEM_TYPE_DEFAULT = 0 };
enum { ONNX_STRING = 8 };

typedef void *Status; /* OrtStatus*: NULL is success */
typedef struct {
    const void *(WINAPI *GetApi)(uint32_t version);
    const char *(WINAPI *GetVersionString)(void);
} OrtApiBase;
typedef void(WINAPI *LoggingFunction)(void *param, int severity, const char *category, const char *logid,
                                      const char *code_location, const char *message);

static void *const *g_api;
#define API(slot, type) ((type)g_api[slot])
typedef Status(WINAPI *Fn1)(void *);
typedef Status(WINAPI *Fn2)(void *, void *);
typedef void(WINAPI *ReleaseFn)(void *);

/* ------------------------------------------------------------------------------------------------ */
/* the log: placement messages and warnings of the current model, as JSON array items */

static char *g_log;
static size_t g_log_len, g_log_cap;
static char g_case_id[256];
static CRITICAL_SECTION g_log_lock; /* onnxruntime may log from its own threads */

static void log_append(const char *s, size_t n) {
    if (g_log_len + n + 1 > g_log_cap) {
        g_log_cap = (g_log_len + n + 1) * 2;
        g_log = realloc(g_log, g_log_cap);
        if (!g_log) exit(6);
    }
    memcpy(g_log + g_log_len, s, n);
    g_log_len += n;
    g_log[g_log_len] = 0;
}
static void log_json_string(const char *s) {
    char esc[8];
    log_append("\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { esc[0] = '\\'; esc[1] = (char)c; log_append(esc, 2); }
        else if (c < 0x20) { snprintf(esc, sizeof esc, "\\u%04x", c); log_append(esc, 6); }
        else log_append((const char *)&c, 1);
    }
    log_append("\"", 1);
}
static void WINAPI on_log(void *param, int severity, const char *category, const char *logid,
                          const char *code_location, const char *message) {
    if (!message) return;
    int placement = strstr(message, "placed on [") || strstr(message, "Node placements");
    if (!placement && severity < ORT_LOGGING_LEVEL_WARNING) return;
    char head[48];
    EnterCriticalSection(&g_log_lock);
    snprintf(head, sizeof head, "%s{\"severity\": %d, \"message\": ", g_log_len ? ", " : "", severity);
    log_append(head, strlen(head));
    log_json_string(message);
    log_append("}", 1);
    LeaveCriticalSection(&g_log_lock);
}

/* ------------------------------------------------------------------------------------------------ */

static LONG WINAPI on_crash(EXCEPTION_POINTERS *e) {
    printf("\n{\"id\": ");
    put_json_string(g_case_id);
    printf(", \"crash\": \"0x%08lX\"}\n", (unsigned long)e->ExceptionRecord->ExceptionCode);
    fflush(stdout);
    ExitProcess(5);
    return EXCEPTION_EXECUTE_HANDLER;
}

static void *g_env;
static void *g_cpu_memory;
static void *g_allocator;
typedef Status(WINAPI *AppendDml)(void *options, int device_id);
static AppendDml g_append_dml;

/* the status's message (copied into `out`) and the status released; returns 1 when it was an error */
static int failed(Status st, char *out, size_t n) {
    if (!st) return 0;
    snprintf(out, n, "%s", API(ORT_GET_ERROR_MESSAGE, const char *(WINAPI *)(Status))(st));
    API(ORT_RELEASE_STATUS, ReleaseFn)(st);
    return 1;
}

static size_t element_size(unsigned type) {
    /* ONNXTensorElementDataType: float uint8 int8 uint16 int16 int32 int64 string bool float16 double
       uint32 uint64 complex64 complex128 bfloat16, then the 8-bit floats */
    static const size_t sizes[] = {0, 4, 1, 1, 2, 2, 4, 8, 0, 1, 2, 8, 4, 8, 8, 16, 2, 1, 1, 1, 1};
    return type < sizeof sizes / sizeof sizes[0] ? sizes[type] : 0;
}

typedef struct {
    void *session, *options;
    void *inputs[64], *outputs[64];
    const char *input_names[64], *output_names[64];
    size_t n_inputs, n_outputs;
    char error[2048];
    const char *stage;
    char *profile;
} Case;

static const char *set_options(Case *c, const JValue *req, wchar_t *profile_prefix) {
    char *err = c->error;
    size_t n = sizeof c->error;
    if (failed(API(ORT_CREATE_SESSION_OPTIONS, Status(WINAPI *)(void **))(&c->options), err, n))
        return "CreateSessionOptions";
    /* the DirectML EP supports neither memory patterns nor parallel execution */
    if (failed(API(ORT_DISABLE_MEM_PATTERN, Fn1)(c->options), err, n)) return "DisableMemPattern";
    if (failed(API(ORT_SET_SESSION_EXECUTION_MODE, Status(WINAPI *)(void *, int))(c->options, ORT_SEQUENTIAL), err, n))
        return "SetSessionExecutionMode";
    typedef Status(WINAPI * ConfigFn)(void *, const char *, const char *);
    const JValue *fusion = jget(req, "fusion");
    if (fusion && fusion->type == J_BOOL && !fusion->boolean &&
        failed(API(ORT_ADD_SESSION_CONFIG_ENTRY, ConfigFn)(c->options, "ep.dml.disable_graph_fusion", "1"), err, n))
        return "AddSessionConfigEntry(ep.dml.disable_graph_fusion)";
    const JValue *fallback = jget(req, "cpu_fallback");
    if (fallback && fallback->type == J_BOOL && !fallback->boolean &&
        failed(API(ORT_ADD_SESSION_CONFIG_ENTRY, ConfigFn)(c->options, "session.disable_cpu_ep_fallback", "1"), err, n))
        return "AddSessionConfigEntry(session.disable_cpu_ep_fallback)";
    const JValue *dims = jget(req, "free_dims");
    for (size_t i = 0; dims && dims->type == J_OBJ && i < dims->count; i++) {
        typedef Status(WINAPI * DimFn)(void *, const char *, int64_t);
        if (failed(API(ORT_ADD_FREE_DIMENSION_OVERRIDE_BY_NAME, DimFn)(c->options, dims->keys[i],
                                                                      (int64_t)dims->items[i].number), err, n))
            return "AddFreeDimensionOverrideByName";
    }
    if (failed(API(ORT_ENABLE_PROFILING, Status(WINAPI *)(void *, const wchar_t *))(c->options, profile_prefix), err, n))
        return "EnableProfiling";
    const JValue *dml = jget(req, "dml");
    if (!(dml && dml->type == J_BOOL && !dml->boolean) && failed(g_append_dml(c->options, 0), err, n))
        return "OrtSessionOptionsAppendExecutionProvider_DML";
    return NULL;
}

static const char *make_inputs(Case *c, const JValue *list) {
    typedef Status(WINAPI * WithData)(void *, void *, size_t, const int64_t *, size_t, int, void **);
    typedef Status(WINAPI * Alloc)(void *, const int64_t *, size_t, int, void **);
    static char one_byte; /* a non-null data pointer for empty tensors */
    for (size_t i = 0; list && list->type == J_ARR && i < list->count && i < 64; i++) {
        const JValue *in = &list->items[i];
        const JValue *name = jget(in, "name"), *shape = jget(in, "shape");
        unsigned type = (unsigned)jnum(in, "type", 0);
        int64_t dims[64];
        size_t rank = shape && shape->type == J_ARR ? shape->count : 0, count = 1;
        if (!name || name->type != J_STR || rank > 64) return "input: name or shape";
        for (size_t k = 0; k < rank; k++) count *= (size_t)(dims[k] = (int64_t)shape->items[k].number);
        c->input_names[c->n_inputs] = name->str;
        void **value = &c->inputs[c->n_inputs++];
        if (type == ONNX_STRING) {
            const JValue *strs = jget(in, "strings");
            if (!strs || strs->type != J_ARR || strs->count != count) return "input: strings";
            const char **ptrs = track(malloc((count ? count : 1) * sizeof *ptrs));
            for (size_t k = 0; k < count; k++) {
                long long len = unhex(strs->items[k].str, strs->items[k].len);
                if (len < 0) return "input: strings are hex";
                strs->items[k].str[len] = 0;
                ptrs[k] = strs->items[k].str;
            }
            if (failed(API(ORT_CREATE_TENSOR_AS_ORT_VALUE, Alloc)(g_allocator, dims, rank, (int)type, value),
                       c->error, sizeof c->error) ||
                failed(API(ORT_FILL_STRING_TENSOR, Status(WINAPI *)(void *, const char *const *, size_t))(
                           *value, ptrs, count), c->error, sizeof c->error))
                return "CreateTensorAsOrtValue(string)";
            continue;
        }
        const JValue *data = jget(in, "data");
        long long len = data && data->type == J_STR ? unhex(data->str, data->len) : -1;
        if (len < 0 || (size_t)len != count * element_size(type)) return "input: data is hex of shape x element size";
        void *p = len ? (void *)data->str : (void *)&one_byte;
        if (failed(API(ORT_CREATE_TENSOR_WITH_DATA_AS_ORT_VALUE, WithData)(g_cpu_memory, p, (size_t)len, dims, rank,
                                                                           (int)type, value), c->error, sizeof c->error))
            return "CreateTensorWithDataAsOrtValue";
    }
    return NULL;
}

static void put_output(const char *name, void *value) {
    void *info = NULL;
    int type = 0;
    size_t rank = 0, count = 0;
    int64_t dims[64];
    char err[512];
    if (failed(API(ORT_GET_TENSOR_TYPE_AND_SHAPE, Fn2)(value, &info), err, sizeof err)) {
        printf("{\"name\": ");
        put_json_string(name);
        printf(", \"error\": ");
        put_json_string(err);
        printf("}");
        return;
    }
    API(ORT_GET_TENSOR_ELEMENT_TYPE, Status(WINAPI *)(void *, int *))(info, &type);
    API(ORT_GET_DIMENSIONS_COUNT, Status(WINAPI *)(void *, size_t *))(info, &rank);
    if (rank > 64) rank = 64;
    API(ORT_GET_DIMENSIONS, Status(WINAPI *)(void *, int64_t *, size_t))(info, dims, rank);
    API(ORT_GET_TENSOR_SHAPE_ELEMENT_COUNT, Status(WINAPI *)(void *, size_t *))(info, &count);
    API(ORT_RELEASE_TENSOR_TYPE_AND_SHAPE_INFO, ReleaseFn)(info);
    printf("{\"name\": ");
    put_json_string(name);
    printf(", \"type\": %d, \"shape\": [", type);
    for (size_t k = 0; k < rank; k++) printf("%s%lld", k ? ", " : "", (long long)dims[k]);
    printf("]");
    if (type == ONNX_STRING) {
        size_t total = 0;
        API(ORT_GET_STRING_TENSOR_DATA_LENGTH, Status(WINAPI *)(void *, size_t *))(value, &total);
        char *text = malloc(total + 1);
        size_t *offsets = malloc((count + 1) * sizeof *offsets);
        typedef Status(WINAPI * Content)(void *, void *, size_t, size_t *, size_t);
        if (text && offsets && !API(ORT_GET_STRING_TENSOR_CONTENT, Content)(value, text, total, offsets, count)) {
            offsets[count] = total;
            printf(", \"strings\": [");
            for (size_t k = 0; k < count; k++) {
                printf("%s", k ? ", " : "");
                put_hex((unsigned char *)text + offsets[k], offsets[k + 1] - offsets[k]);
            }
            printf("]");
        }
        free(text);
        free(offsets);
    } else {
        void *data = NULL;
        API(ORT_GET_TENSOR_MUTABLE_DATA, Fn2)(value, &data);
        printf(", \"data\": ");
        put_hex(data ? (unsigned char *)data : (unsigned char *)"", data ? count * element_size((unsigned)type) : 0);
    }
    printf("}");
}

/* the profiler's file, read whole (a JSON array of trace events), then removed */
static char *read_profile(Case *c) {
    char *path = NULL;
    if (failed(API(ORT_SESSION_END_PROFILING, Status(WINAPI *)(void *, void *, char **))(c->session, g_allocator, &path),
               c->error, sizeof c->error) || !path)
        return NULL;
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    if (f) {
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        text = malloc((size_t)n + 1);
        if (text && fread(text, 1, (size_t)n, f) == (size_t)n) {
            text[n] = 0;
            for (char *q = text; *q; q++) /* one answer is one line: JSON allows spaces for its line breaks */
                if (*q == '\n' || *q == '\r') *q = ' ';
        } else {
            free(text);
            text = NULL;
        }
        fclose(f);
        DeleteFileA(path);
    }
    API(ORT_ALLOCATOR_FREE, Status(WINAPI *)(void *, void *))(g_allocator, path);
    return text;
}

static void run_model(const JValue *req, wchar_t *profile_prefix) {
    Case c;
    memset(&c, 0, sizeof c);
    c.stage = "done";
    const JValue *model = jget(req, "model");
    long long model_len = model && model->type == J_STR ? unhex(model->str, model->len) : -1;
    const JValue *outs = jget(req, "outputs");
    const char *stage = model_len < 0 ? "request: model is hex" : set_options(&c, req, profile_prefix);
    typedef Status(WINAPI * FromArray)(void *, const void *, size_t, void *, void **);
    if (!stage && failed(API(ORT_CREATE_SESSION_FROM_ARRAY, FromArray)(g_env, model->str, (size_t)model_len, c.options,
                                                                      &c.session), c.error, sizeof c.error))
        stage = "CreateSession";
    if (!stage) stage = make_inputs(&c, jget(req, "inputs"));
    for (size_t i = 0; !stage && outs && outs->type == J_ARR && i < outs->count && i < 64; i++)
        c.output_names[c.n_outputs++] = outs->items[i].str;
    typedef Status(WINAPI * RunFn)(void *, void *, const char *const *, void *const *, size_t, const char *const *,
                                   size_t, void **);
    if (!stage && c.n_outputs &&
        failed(API(ORT_RUN, RunFn)(c.session, NULL, c.input_names, c.inputs, c.n_inputs, c.output_names, c.n_outputs,
                                   c.outputs), c.error, sizeof c.error))
        stage = "Run";
    char *profile = c.session ? read_profile(&c) : NULL;
    printf("{\"id\": ");
    put_json_string(g_case_id);
    printf(", \"stage\": ");
    put_json_string(stage ? stage : "done");
    if (stage) {
        printf(", \"error\": ");
        put_json_string(c.error);
    }
    printf(", \"log\": [%s]", g_log_len ? g_log : "");
    if (profile) printf(", \"profile\": %s", profile);
    if (!stage && c.n_outputs) {
        printf(", \"outputs\": [");
        for (size_t i = 0; i < c.n_outputs; i++) {
            if (i) printf(", ");
            put_output(c.output_names[i], c.outputs[i]);
        }
        printf("]");
    }
    printf("}\n");
    fflush(stdout);
    free(profile);
    for (size_t i = 0; i < 64; i++) {
        if (c.inputs[i]) API(ORT_RELEASE_VALUE, ReleaseFn)(c.inputs[i]);
        if (c.outputs[i]) API(ORT_RELEASE_VALUE, ReleaseFn)(c.outputs[i]);
    }
    if (c.session) API(ORT_RELEASE_SESSION, ReleaseFn)(c.session);
    if (c.options) API(ORT_RELEASE_SESSION_OPTIONS, ReleaseFn)(c.options);
}

static void fatal(const char *stage, const char *detail) {
    printf("{\"kind\": \"fatal\", \"stage\": ");
    put_json_string(stage);
    printf(", \"error\": ");
    put_json_string(detail);
    printf("}\n");
    fflush(stdout);
    exit(3);
}

/* does the DirectML EP start on this machine? (appending it creates its DirectML device) */
static void put_info(const char *dll, const OrtApiBase *base) {
    void *options = NULL;
    char err[1024] = "";
    int ok = !failed(API(ORT_CREATE_SESSION_OPTIONS, Status(WINAPI *)(void **))(&options), err, sizeof err) &&
             !failed(g_append_dml(options, 0), err, sizeof err);
    if (options) API(ORT_RELEASE_SESSION_OPTIONS, ReleaseFn)(options);
    char dml_path[MAX_PATH] = "", dml_version[64] = "unknown";
    HMODULE dml = GetModuleHandleA("DirectML.dll");
    if (dml && GetModuleFileNameA(dml, dml_path, sizeof dml_path)) file_version(dml_path, dml_version, sizeof dml_version);
    printf("{\"kind\": \"info\", \"dll\": ");
    put_json_string(dll);
    printf(", \"ort_version\": ");
    put_json_string(base->GetVersionString());
    printf(", \"api_version\": %d, \"directml\": ", ORT_API_VERSION_USED);
    put_json_string(dml_version);
    printf(", \"directml_path\": ");
    put_json_string(dml_path);
    printf(", \"dml_ok\": %s", ok ? "true" : "false");
    if (!ok) {
        printf(", \"error\": ");
        put_json_string(err);
    }
    printf("}\n");
    fflush(stdout);
}

int main(int argc, char **argv) {
    const char *dll = NULL;
    int info_only = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dll") && i + 1 < argc) dll = argv[++i];
        else if (!strcmp(argv[i], "--info")) info_only = 1;
        else dll = NULL, i = argc;
    }
    if (!dll) {
        fprintf(stderr, "usage: ort_runner.exe --dll PATH\\onnxruntime.dll [--info]\n");
        return 2;
    }
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stdin), _O_BINARY);
    SetUnhandledExceptionFilter(on_crash);
    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
    strcpy(g_case_id, "(start-up)");
    InitializeCriticalSection(&g_log_lock);

    /* DirectML.dll and onnxruntime_providers_shared.dll are found beside onnxruntime.dll */
    char dir[MAX_PATH];
    snprintf(dir, sizeof dir, "%s", dll);
    char *slash = strrchr(dir, '\\'), *fwd = strrchr(dir, '/');
    if (fwd && (!slash || fwd > slash)) slash = fwd;
    if (slash) *slash = 0;
    SetDllDirectoryA(dir);
    HMODULE h = LoadLibraryExA(dll, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
    char why[64];
    snprintf(why, sizeof why, "Win32 error %lu", (unsigned long)GetLastError());
    if (!h) fatal("LoadLibrary", why);
    typedef const OrtApiBase *(WINAPI * GetBase)(void);
    GetBase get_base = (GetBase)(void *)GetProcAddress(h, "OrtGetApiBase");
    g_append_dml = (AppendDml)(void *)GetProcAddress(h, "OrtSessionOptionsAppendExecutionProvider_DML");
    if (!get_base || !g_append_dml) fatal("GetProcAddress", "OrtGetApiBase or OrtSessionOptionsAppendExecutionProvider_DML");
    const OrtApiBase *base = get_base();
    g_api = base->GetApi(ORT_API_VERSION_USED);
    if (!g_api) fatal("GetApi", "API version 13 not offered");
    char err[1024];
    typedef Status(WINAPI * EnvFn)(LoggingFunction, void *, int, const char *, void **);
    if (failed(API(ORT_CREATE_ENV_WITH_CUSTOM_LOGGER, EnvFn)(on_log, NULL, ORT_LOGGING_LEVEL_VERBOSE, "dmltile", &g_env),
               err, sizeof err))
        fatal("CreateEnvWithCustomLogger", err);
    if (failed(API(ORT_CREATE_CPU_MEMORY_INFO, Status(WINAPI *)(int, int, void **))(ORT_ARENA_ALLOCATOR,
                                                                                   ORT_MEM_TYPE_DEFAULT, &g_cpu_memory),
               err, sizeof err) ||
        failed(API(ORT_GET_ALLOCATOR_WITH_DEFAULT_OPTIONS, Status(WINAPI *)(void **))(&g_allocator), err, sizeof err))
        fatal("CreateCpuMemoryInfo", err);
    put_info(dll, base);
    if (info_only) return 0;

    wchar_t profile_prefix[MAX_PATH];
    GetTempPathW(MAX_PATH - 32, profile_prefix);
    wcscat(profile_prefix, L"dmltile_ort_profile");
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
                if (!line) fatal("realloc", "out of memory");
            }
        }
        char *p = line;
        JValue req;
        if (n && (skip_ws(&p), *p)) {
            g_log_len = 0;
            g_case_id[0] = 0;
            if (!parse_value(&p, &req, 0) || req.type != J_OBJ) {
                printf("{\"id\": null, \"stage\": \"request\", \"error\": \"not a JSON object\"}\n");
            } else {
                const JValue *id = jget(&req, "id");
                if (id && id->type == J_STR) snprintf(g_case_id, sizeof g_case_id, "%s", id->str);
                run_model(&req, profile_prefix);
            }
            fflush(stdout);
            free_tracked();
        }
        if (eof) break;
    }
    /* the process ends without releasing the environment: onnxruntime's teardown under Wine adds nothing */
    fflush(stdout);
    ExitProcess(0);
}
