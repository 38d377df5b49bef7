/* A stand-in Cabinet.dll for the DirectML runner: the Windows Compression API's decompressor, serving
 * shader blobs that the set-up decoded beforehand.
 *
 * DirectML 1.7 and older keep their compiled shaders compressed inside DirectML.dll and unpack one blob
 * per operator compile through Cabinet.dll's Compression API, imported by ordinal (40 CreateDecompressor,
 * 43 Decompress, 45 CloseDecompressor): MSZIP (algorithm 2) up to DirectML 1.4, LZMS (5) from 1.5.
 * Wine 8's cabinet.dll has no Compression API, so those DLLs abort at CompileOperator. This DLL answers
 * instead. It decodes nothing itself: shader_blobs.py found every compressed blob in the DLL image at
 * set-up and wrote each one's decoded bytes to <this DLL's folder>\shader-blobs\<key>.bin, where the key
 * is the CRC-32 and Adler-32 of the compressed bytes (zlib's definitions) and their length. Decompress
 * looks the blob up by that key and copies it out.
 *
 * Loaded only by the runner: it sits next to runner.exe as cabinet.dll, and the runner's environment sets
 * WINEDLLOVERRIDES=cabinet=n,b (without it Wine prefers its builtin cabinet even next to the exe).
 *
 * Build: x86_64-w64-mingw32-gcc -shared -O2 -s -o cabinet.dll cabinet_shim.c cabinet_shim.def
 */
#include <windows.h>
#include <stdio.h>

#define COMPRESS_ALGORITHM_MSZIP 2
#define COMPRESS_ALGORITHM_LZMS 5
#define COMPRESS_RAW (1u << 29)
#ifndef ERROR_BAD_COMPRESSION_BUFFER
#define ERROR_BAD_COMPRESSION_BUFFER 605L
#endif

static HMODULE g_self;
static const void *g_last_data; /* the answer of the last lookup: Decompress is asked twice per blob */
static SIZE_T g_last_size;
static HANDLE g_last_file = INVALID_HANDLE_VALUE;
static LARGE_INTEGER g_last_length;

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved) {
    if (reason == DLL_PROCESS_ATTACH) g_self = instance;
    if (reason == DLL_PROCESS_DETACH && g_last_file != INVALID_HANDLE_VALUE) CloseHandle(g_last_file);
    return TRUE;
}

static unsigned crc32(const unsigned char *p, SIZE_T n) {
    unsigned c = 0xFFFFFFFFu;
    for (SIZE_T i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

static unsigned adler32(const unsigned char *p, SIZE_T n) {
    unsigned a = 1, b = 0;
    for (SIZE_T i = 0; i < n; i++) {
        a = (a + p[i]) % 65521u;
        b = (b + a) % 65521u;
    }
    return (b << 16) | a;
}

/* Opens shader-blobs\<key>.bin next to this DLL; remembers it for the second call on the same blob. */
static BOOL open_blob(const void *data, SIZE_T size) {
    if (data == g_last_data && size == g_last_size && g_last_file != INVALID_HANDLE_VALUE) return TRUE;
    if (g_last_file != INVALID_HANDLE_VALUE) CloseHandle(g_last_file);
    g_last_file = INVALID_HANDLE_VALUE;
    char path[MAX_PATH + 64];
    DWORD n = GetModuleFileNameA(g_self, path, MAX_PATH);
    while (n > 0 && path[n - 1] != '\\' && path[n - 1] != '/') n--;
    snprintf(path + n, sizeof path - n, "shader-blobs\\%08x%08x-%llu.bin", crc32(data, size), adler32(data, size),
             (unsigned long long)size);
    g_last_file = CreateFileA(path, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING, 0, NULL);
    if (g_last_file == INVALID_HANDLE_VALUE || !GetFileSizeEx(g_last_file, &g_last_length)) {
        fprintf(stderr, "cabinet shim: no decoded blob %s (run the DirectML set-up again)\n", path);
        return FALSE;
    }
    g_last_data = data;
    g_last_size = size;
    return TRUE;
}

BOOL WINAPI CreateDecompressor(DWORD algorithm, void *allocation_routines, HANDLE *handle) {
    DWORD a = algorithm & ~COMPRESS_RAW;
    if (!handle || (a != COMPRESS_ALGORITHM_MSZIP && a != COMPRESS_ALGORITHM_LZMS)) {
        SetLastError(ERROR_NOT_SUPPORTED);
        return FALSE;
    }
    *handle = (HANDLE)(ULONG_PTR)(0x5348494D0000ULL | a); /* any non-null value: no state is kept per handle */
    return TRUE;
}

/* Without a buffer large enough: FALSE, ERROR_INSUFFICIENT_BUFFER and the needed size, as Windows does. */
BOOL WINAPI Decompress(HANDLE handle, const void *data, SIZE_T size, void *out, SIZE_T out_size, SIZE_T *out_len) {
    if (!handle || !data) {
        SetLastError(ERROR_INVALID_HANDLE);
        return FALSE;
    }
    if (!open_blob(data, size)) {
        SetLastError(ERROR_BAD_COMPRESSION_BUFFER);
        return FALSE;
    }
    SIZE_T need = (SIZE_T)g_last_length.QuadPart;
    if (out_len) *out_len = need;
    if (!out || out_size < need) {
        SetLastError(ERROR_INSUFFICIENT_BUFFER);
        return FALSE;
    }
    LARGE_INTEGER zero = {0};
    DWORD got = 0;
    if (!SetFilePointerEx(g_last_file, zero, NULL, FILE_BEGIN) || !ReadFile(g_last_file, out, (DWORD)need, &got, NULL)
        || got != need) {
        SetLastError(ERROR_READ_FAULT);
        return FALSE;
    }
    return TRUE;
}

BOOL WINAPI CloseDecompressor(HANDLE handle) { return handle != NULL; }
