/* dmltile's one compiled kernel: a strided byte copy that writes with non-temporal stores.
 *
 * NumPy (through glibc's memmove) writes with ordinary stores until a single copy reaches the C
 * library's streaming threshold (192 MiB on the project's machines), so every destination line is
 * first read for ownership: a Tile whose output lives in memory then moves about 1.5x the bytes it
 * writes. This kernel copies the same strided views the planner gives np.copyto, but writes every
 * whole 64-byte line of a run with streaming stores (SSE2, baseline on x86-64). Elsewhere it falls
 * back to memcpy, which is still correct. It moves bytes only, so results are bit-exact.
 *
 * Built by hatch_build.py at install, loaded with ctypes by dmltile/execute/stream_kernel.py; when
 * it is absent the planner uses NumPy alone.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#include <emmintrin.h>
#define DMLTILE_STREAM 1
#else
#define DMLTILE_STREAM 0
#endif

#if defined(_WIN32)
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif

#define ABI 2      /* bump when a signature changes: the loader refuses other versions */
#define MAX_DIMS 32
#define LINE 64

EXPORT int dmltile_stream_abi(void) { return ABI; }

/* 1 when runs are written with non-temporal stores on this build, 0 when they are plain memcpy. */
EXPORT int dmltile_stream_enabled(void) { return DMLTILE_STREAM; }

/* Copy n bytes; the 64-byte lines fully inside [d, d + n) are written with streaming stores. */
static void copy_run(char *d, const char *s, int64_t n) {
#if DMLTILE_STREAM
    int64_t head = (int64_t)((LINE - ((uintptr_t)d & (LINE - 1))) & (LINE - 1));
    if (n >= head + LINE) {
        memcpy(d, s, (size_t)head);
        d += head, s += head, n -= head;
        for (; n >= LINE; n -= LINE, d += LINE, s += LINE) {
            __m128i a = _mm_loadu_si128((const __m128i *)s);
            __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
            __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
            _mm_stream_si128((__m128i *)d, a);
            _mm_stream_si128((__m128i *)(d + 16), b);
            _mm_stream_si128((__m128i *)(d + 32), c);
            _mm_stream_si128((__m128i *)(d + 48), e);
        }
    }
#endif
    memcpy(d, s, (size_t)n);
}

/* Fill n bytes with the width-byte element at elem repeated (16 % width == 0, n % width == 0); the
 * whole 64-byte lines are written with streaming stores. */
static void fill_run(char *d, const char *elem, int64_t width, int64_t n) {
    int64_t k = 0;
#if DMLTILE_STREAM
    int64_t head = (int64_t)((LINE - ((uintptr_t)d & (LINE - 1))) & (LINE - 1));
    if (n >= head + LINE) {
        unsigned char pattern[16];
        for (; k < head; k++) d[k] = elem[k % width];
        for (int i = 0; i < 16; i++) pattern[i] = (unsigned char)elem[(head + i) % width];
        __m128i p = _mm_loadu_si128((const __m128i *)pattern);
        for (; n - k >= LINE; k += LINE) {
            _mm_stream_si128((__m128i *)(d + k), p);
            _mm_stream_si128((__m128i *)(d + k + 16), p);
            _mm_stream_si128((__m128i *)(d + k + 32), p);
            _mm_stream_si128((__m128i *)(d + k + 48), p);
        }
    }
#endif
    for (; k + width <= n && k % width == 0; k += width) memcpy(d + k, elem, (size_t)width);
    for (; k < n; k++) d[k] = elem[k % width];
}

/* The copy np.copyto(dst_view, src_view) makes for views of ndim axes of width-byte elements, limited
 * to indices [begin, end) of the outermost axis (so two threads can share one copy). dims holds
 * shape, dst strides and src strides (bytes, any sign, 0 for broadcast), ndim values each. The
 * innermost axis becomes one run when it is contiguous in both (a copy) or contiguous in dst and
 * broadcast in src (a fill). Returns 0, or -1 for arguments out of range. */
EXPORT int dmltile_stream_copy(char *dst, const char *src, int ndim, const int64_t *dims, int64_t width,
                               int64_t begin, int64_t end) {
    if (ndim < 0 || ndim > MAX_DIMS || width <= 0) return -1;
    int64_t shape[MAX_DIMS + 1], index[MAX_DIMS + 1] = {0};
    const int64_t *dst_strides = dims + ndim, *src_strides = dims + 2 * ndim;
    for (int i = 0; i < ndim; i++) shape[i] = dims[i];
    if (ndim > 0) {
        if (begin < 0 || end > shape[0] || begin > end) return -1;
        dst += begin * dst_strides[0], src += begin * src_strides[0];
        shape[0] = end - begin;
    }
    for (int i = 0; i < ndim; i++)
        if (shape[i] <= 0) return 0;
    int outer = ndim, fill = 0;
    int64_t run = width;
    if (ndim > 0 && dst_strides[ndim - 1] == width) {
        if (src_strides[ndim - 1] == width) {
            outer = ndim - 1, run = shape[ndim - 1] * width;
        } else if (src_strides[ndim - 1] == 0 && width <= 16 && 16 % width == 0) {
            outer = ndim - 1, run = shape[ndim - 1] * width, fill = 1;
        }
    }
    char *d = dst;
    const char *s = src;
    for (;;) {
        if (fill)
            fill_run(d, s, width, run);
        else
            copy_run(d, s, run);
        int k = outer - 1;
        for (; k >= 0; k--) {
            d += dst_strides[k], s += src_strides[k];
            if (++index[k] < shape[k]) break;
            d -= shape[k] * dst_strides[k], s -= shape[k] * src_strides[k];
            index[k] = 0;
        }
        if (k < 0) break;
    }
#if DMLTILE_STREAM
    _mm_sfence(); /* streaming stores are weakly ordered: make them visible before returning */
#endif
    return 0;
}
