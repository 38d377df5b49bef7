/* The version resource of a DLL on disk ("1.15.4.0"), shared by dmltile's runners (runner.c and
 * ort_runner.c): both report which DirectML.dll they loaded. "unknown" when the file has none.
 * Link with -lversion. */
#ifndef DMLTILE_FILE_VERSION_H
#define DMLTILE_FILE_VERSION_H
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>

static void file_version(const char *path, char *out, size_t n) {
    DWORD dummy = 0, size = GetFileVersionInfoSizeA(path, &dummy);
    snprintf(out, n, "unknown");
    if (!size) return;
    void *buf = malloc(size);
    VS_FIXEDFILEINFO *fi = NULL;
    UINT len = 0;
    if (buf && GetFileVersionInfoA(path, 0, size, buf) && VerQueryValueA(buf, "\\", (void **)&fi, &len) && fi)
        snprintf(out, n, "%lu.%lu.%lu.%lu", (unsigned long)HIWORD(fi->dwFileVersionMS),
                 (unsigned long)LOWORD(fi->dwFileVersionMS), (unsigned long)HIWORD(fi->dwFileVersionLS),
                 (unsigned long)LOWORD(fi->dwFileVersionLS));
    free(buf);
}

#endif
