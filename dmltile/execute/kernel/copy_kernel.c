/* dmltile's one compiled piece: the strided byte copies of a Tile plan, in C.
 *
 * The NumPy backend plans a Tile as a few copies between strided views (copy_plan.py) and runs each
 * with np.copyto. Two things NumPy cannot do are done here:
 *
 * - Streaming stores. NumPy (through glibc's memmove) writes with ordinary stores until a single
 *   copy reaches the C library's streaming threshold (192 MiB on the project's machines), so every
 *   destination line is first read for ownership: a Tile whose output lives in memory moves about
 *   1.5x the bytes it writes. A step marked "stream" writes its whole 64-byte lines with
 *   non-temporal stores (SSE2, baseline on x86-64; elsewhere plain stores, still correct).
 * - One call for a whole plan. Each np.copyto costs about a microsecond before it copies a byte;
 *   dmltile_run runs every step of a plan in one call, sharing the steps marked for two threads
 *   with a worker thread of its own (POSIX builds), which Python never has to wake.
 *
 * It only moves bytes, so results are bit-exact. Built by hatch_build.py when dmltile is installed,
 * loaded with ctypes by dmltile/execute/copy_kernel.py; without it the planner uses NumPy alone.
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
#if defined(_MSC_VER)
#define NOINLINE __declspec(noinline)
#else
#define NOINLINE __attribute__((noinline))
#endif

#define ABI 13 /* bump when a signature or the step encoding changes: the loader refuses others */
#define MAX_DIMS 32
#define LINE 64
#define STEP_HEADER 10

EXPORT int dmltile_kernel_abi(void) { return ABI; }

/* 1 when stream steps use non-temporal stores on this build, 0 when they are plain copies. */
EXPORT int dmltile_kernel_streams(void) { return DMLTILE_STREAM; }

/* An empty statement the compiler must keep, in loops that copy a few axes' values: GCC otherwise
 * turns them into inline rep movsq / rep stosq, whose start-ups cost 33 ns of every copy (an empty
 * one took 46 ns, 13 without them). */
#if defined(__GNUC__)
#define KEEP_LOOP() __asm__ volatile("")
#else
#define KEEP_LOOP() ((void)0)
#endif

static int64_t to_line(const char *d) { return (int64_t)((LINE - ((uintptr_t)d & (LINE - 1))) & (LINE - 1)); }

#if DMLTILE_STREAM
/* One 64-byte line from s to the line-aligned d: with streaming stores, or ordinary aligned ones. */
static void put_line(char *d, const char *s, int stream) {
    __m128i a = _mm_loadu_si128((const __m128i *)s);
    __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
    __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
    if (stream) {
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    } else {
        _mm_store_si128((__m128i *)d, a);
        _mm_store_si128((__m128i *)(d + 16), b);
        _mm_store_si128((__m128i *)(d + 32), c);
        _mm_store_si128((__m128i *)(d + 48), e);
    }
}
#endif

/* Copy n bytes; the 64-byte lines fully inside [d, d + n) are written with streaming stores. */
static void stream_run(char *d, const char *s, int64_t n) {
#if DMLTILE_STREAM
    int64_t head = to_line(d);
    if (n >= head + LINE) {
        memcpy(d, s, (size_t)head);
        d += head, s += head, n -= head;
        for (; n >= LINE; n -= LINE, d += LINE, s += LINE) put_line(d, s, 1);
    }
#endif
    memcpy(d, s, (size_t)n);
}

/* Whether this CPU's rep movsb, which glibc's memcpy uses from 2112 bytes up to L2's size, is slow
 * for a destination 1-31 bytes (mod 64) past the source: about 10x on the AMD machines where it was
 * found, 1.1-1.3x on a later EPYC, where memcpy then beat the store loop below (2x for runs written
 * past L2, 1.2x within it). Calibration measures it and says so through dmltile_movsb_cliff; until
 * then the kernel assumes the slow case, as the side that can never be 10x off. */
static int movsb_cliff = 1;

/* Sets whether rep movsb has the slow case (on >= 0) and returns whether the kernel assumes it. */
EXPORT int dmltile_movsb_cliff(int on) {
    if (on >= 0) movsb_cliff = on != 0;
    return movsb_cliff;
}

/* Whether a memmove between these addresses falls on the slow rep-movsb case that copy_steps.py's
 * misaligned alternatives avoid, on a CPU that has it. */
static int rep_movsb_slow(const char *d, const char *s) {
    int64_t k = (int64_t)(((uintptr_t)d - (uintptr_t)s) & 63);
    return movsb_cliff && 0 < k && k < 32;
}

/* Copy n bytes with ordinary 16-byte stores. glibc's memcpy moves 2112 bytes up to L2's size with
 * rep movsb, which on some CPUs runs about 10x slower when the destination sits 8-24 bytes (mod 64)
 * past the source; on those (movsb_cliff) runs that meet that case take this loop instead. */
static void plain_run(char *d, const char *s, int64_t n) {
#if DMLTILE_STREAM
    if (n >= 2 * LINE) {
        /* Stores that straddle two lines cost two: one unaligned line first, then from the next line
         * boundary on whole aligned lines (the overlap writes the same bytes twice). */
        int64_t head = to_line(d);
        memcpy(d, s, LINE);
        d += head, s += head, n -= head;
        for (; n >= LINE; n -= LINE, d += LINE, s += LINE) put_line(d, s, 0);
    }
#endif
    memcpy(d, s, (size_t)n);
}

#if DMLTILE_STREAM
/* The width-byte element at elem (2, 4, 8 or 16 bytes) repeated over 16 bytes, without a division per
 * byte: a fill of 176 bytes took 40 ns building its pattern with one. */
static __m128i splat(const char *elem, int64_t width) {
    uint16_t h;
    uint32_t w;
    int64_t q;
    switch (width) {
    case 2: memcpy(&h, elem, 2); return _mm_set1_epi16((short)h);
    case 4: memcpy(&w, elem, 4); return _mm_set1_epi32((int)w);
    case 8: memcpy(&q, elem, 8); return _mm_set1_epi64x(q);
    default: return _mm_loadu_si128((const __m128i *)elem);
    }
}

/* n bytes (a whole number of elements) of the pattern p, a width-byte element repeated, where width
 * divides 16 and n: 16-byte stores, and the tail as one more store that ends at d + n (it overlaps
 * the last one, at an offset that is a whole number of elements, so it writes the same bytes). */
static inline void put_pattern(char *d, __m128i p, int64_t n) {
    if (n >= 16 && n <= 64) { /* up to four stores, no loop: rows of 48 bytes took 0.84 ns, not 1.9 */
        _mm_storeu_si128((__m128i *)d, p);
        _mm_storeu_si128((__m128i *)(d + n - 16), p);
        if (n > 32) {
            _mm_storeu_si128((__m128i *)(d + 16), p);
            _mm_storeu_si128((__m128i *)(d + n - 32), p);
        }
        return;
    }
    if (n >= 16) {
        int64_t k = 0;
        for (; k + 16 <= n; k += 16) _mm_storeu_si128((__m128i *)(d + k), p);
        if (k < n) _mm_storeu_si128((__m128i *)(d + n - 16), p);
        return;
    }
    if (n >= 8) {
        _mm_storel_epi64((__m128i *)d, p);
        _mm_storel_epi64((__m128i *)(d + n - 8), p);
        return;
    }
    uint32_t v = (uint32_t)_mm_cvtsi128_si32(p);
    uint16_t h = (uint16_t)v;
    if (n >= 4) {
        memcpy(d, &v, 4), memcpy(d + n - 4, &v, 4);
    } else if (n >= 2) {
        memcpy(d, &h, 2), memcpy(d + n - 2, &h, 2);
    } else if (n == 1) {
        *d = (char)v;
    }
}
#endif

/* The same fill with ordinary stores: constant-size moves the compiler turns into single stores (or
 * a memset), so a short run (a row of one int8 repeated 3 times, of two int64 repeated 4000 times)
 * costs a few instructions, not a pattern built byte by byte. */
#define FILL(type)                                                                                   \
    do {                                                                                             \
        type v;                                                                                      \
        memcpy(&v, elem, sizeof v);                                                                  \
        for (int64_t k = 0; k < n; k += (int64_t)sizeof v) memcpy(d + k, &v, sizeof v);              \
    } while (0);                                                                                     \
    return
static void fill_plain(char *d, const char *elem, int64_t width, int64_t n) {
#if DMLTILE_STREAM
    if (width > 1 && n >= 64) {
        /* Long fills as 16-byte stores of the pattern: a loop of 2- or 4-byte stores writes a 1.5 MiB
         * inner repeat of one int16 at a quarter of the rate a memset reaches. */
        put_pattern(d, splat(elem, width), n);
        return;
    }
#endif
    switch (width) {
    case 1: memset(d, *elem, (size_t)n); return;
    case 2: FILL(uint16_t);
    case 4: FILL(uint32_t);
    case 8: FILL(uint64_t);
    case 16: /* a 16-byte element (two int64, eight int16): a constant-size move each */
        for (int64_t k = 0; k < n; k += 16) memcpy(d + k, elem, 16);
        return;
    default:
        for (int64_t k = 0; k < n; k += width) memcpy(d + k, elem, (size_t)width);
    }
}
#undef FILL

/* Fill n bytes with the width-byte element at elem repeated (16 % width == 0, n % width == 0); with
 * stream, whole 64-byte lines are written with streaming stores. */
static void fill_run(char *d, const char *elem, int64_t width, int64_t n, int stream) {
    if (!stream) {
        fill_plain(d, elem, width, n);
        return;
    }
    int64_t k = 0;
#if DMLTILE_STREAM
    int64_t head = stream ? to_line(d) : 0;
    if (n >= head + 32) {
        unsigned char pattern[16];
        for (; k < head; k++) d[k] = elem[k % width];
        for (int i = 0; i < 16; i++) pattern[i] = (unsigned char)elem[(head + i) % width];
        __m128i p = _mm_loadu_si128((const __m128i *)pattern);
        if (stream) {
            for (; n - k >= LINE; k += LINE) {
                _mm_stream_si128((__m128i *)(d + k), p);
                _mm_stream_si128((__m128i *)(d + k + 16), p);
                _mm_stream_si128((__m128i *)(d + k + 32), p);
                _mm_stream_si128((__m128i *)(d + k + 48), p);
            }
        } else {
            for (; n - k >= 16; k += 16) _mm_storeu_si128((__m128i *)(d + k), p);
        }
    }
#else
    (void)stream;
#endif
    for (; k < n; k++) d[k] = elem[k % width];
}

/* Short runs that follow one another in the destination (a row of int16 each repeated 5 times, every
 * other int16 of a padded row gathered together) as byte shuffles (SSSE3's pshufb): each 16 bytes of
 * output is one or two 16-byte loads of the source, shuffled and combined, where the runs one by one
 * cost a store or two each (4256 int16 two elements apart: 0.32 against 1.17 us). The output
 * byte j of a sequence of runs comes from source byte (j / run) * s_step + (j % run) (j % run % unit
 * for a fill of a unit-byte element), a pattern that repeats every lcm(16, run) output bytes: its
 * masks are worked out once per copy. The same goes for rows of a few such runs back to back (items
 * of inner runs: a row of 5 bytes written 3 times), the pattern repeating every lcm(16, row) bytes;
 * rows of an odd 15 bytes take 15 vectors to repeat. Built only by compilers that can target SSSE3 in
 * one function and ask the CPU whether it has it (GCC, Clang); elsewhere the runs are copied one by
 * one. */
#if DMLTILE_STREAM && defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <tmmintrin.h>
#define DMLTILE_SHUFFLE 1
#else
#define DMLTILE_SHUFFLE 0
#endif

#define SHUFFLE_PERIOD 32 /* at most this many output vectors before the pattern repeats */
/* and at least this many periods in a copy: its masks are worked out per copy, at a cost that grows with
 * the period (rows of 5 bytes written 3 times, 15 vectors a period: 960 bytes of them took 1.64 us
 * shuffled against 1.36 moved; about even at 16 periods, as for rows of 21 bytes and of 12) */
#define SHUFFLE_MIN_PERIODS 16
typedef struct {
    int vectors;            /* output vectors per period; 0 when the runs are not shuffled */
    int64_t per, advance;   /* runs, and source bytes, per period */
    int64_t reach;          /* source bytes a period's loads span, from its first run's source */
    int64_t read;           /* source bytes an item reads, from its first (no load may pass them) */
    int64_t at[SHUFFLE_PERIOD];   /* each output vector's first load, from the period's first run */
    int two[SHUFFLE_PERIOD];      /* whether it needs a second load, 16 bytes on */
    _Alignas(16) unsigned char mask[SHUFFLE_PERIOD][2][16];
} shuffle_t;

#if DMLTILE_SHUFFLE
/* How many whole periods of p's shuffles count items s_step apart can take without a load past the
 * last source byte they read. */
static int64_t shuffle_periods(const shuffle_t *p, int64_t count, int64_t s_step) {
    /* last: where the last period whose loads stay within the items' bytes may start */
    int64_t periods = count / p->per, last = (count - 1) * s_step + p->read - p->reach;
    if (last < 0) return 0;
    return p->advance > 0 && last / p->advance + 1 < periods ? last / p->advance + 1 : periods;
}
#endif

/* The period and masks for count items, s_step apart in the source and joined in the destination,
 * each inner runs of run bytes (s_inner apart in the source, joined too; inner is 1 for items of a
 * run each); vectors stays 0 when shuffles would not pay or cannot be used. */
static void plan_shuffle(shuffle_t *p, int64_t count, int64_t s_step, int64_t run, int fill, int64_t unit,
                         int64_t inner, int64_t s_inner) {
    p->vectors = 0;
#if DMLTILE_SHUFFLE
    /* Every 16 output bytes span two runs or more: runs 32 bytes apart or more need more loads. */
    int64_t apart = inner > 1 ? s_inner : s_step, item = inner * run;
    if (run >= 16 || apart < 0 || apart >= 32 || s_step < 0) return;
    if (!fill && apart == run && (inner == 1 || s_step == item)) return; /* one plain copy */
    int64_t low = item & -item;
    int vectors = (int)(item / (low < 16 ? low : 16)); /* lcm(16, item) / 16 */
    /* Periods of more than 8 vectors pay only for runs under 8 bytes: runs of an odd 9-15 bytes one
     * after another were slower shuffled than moved, two moves a run (1.8 MB of 9-byte runs: 71
     * against 61 us; 45 KB of rows of two 15-byte runs: 4.1 against 3.5), rows of 5-byte runs written
     * 3 times (15 vectors a period) twice as fast shuffled (300 KB: 11.6 against 20.1 us), rows of 3
     * bytes written 7 times (21 vectors) 2.5x (63000 bytes: 3.8 against 9.4 us). */
    if (vectors > (run < 8 ? SHUFFLE_PERIOD : SHUFFLE_PERIOD / 4)) return;
    if (count * item < SHUFFLE_MIN_PERIODS * 16 * vectors || !__builtin_cpu_supports("ssse3")) return;
    int64_t r = 0, reach = 0, at = 0, item_at = 0, c = 0; /* at: the source of run r, c-th of its item */
    int t = 0, length = (int)run, mod = fill ? (int)unit - 1 : 31;
    for (int o = 0; o < vectors; o++) {
        int64_t src[16], lo = INT64_MAX, hi = 0;
        for (int b = 0; b < 16; b++) {
            src[b] = at + (t & mod); /* a fill's unit divides 16 */
            lo = src[b] < lo ? src[b] : lo, hi = src[b] > hi ? src[b] : hi;
            if (++t < length) continue;
            t = 0, r++;
            if (++c == inner) c = 0, item_at += s_step, at = item_at;
            else at += s_inner;
        }
        if (hi - lo >= 32) return;
        p->at[o] = lo, p->two[o] = hi - lo >= 16;
        /* pshufb takes a byte's index from its low 4 bits and zeroes it when bit 7 is set: an offset
         * under 32 from lo goes in the first load's mask when its bit 4 is clear, else the second's. */
        unsigned char rel[16];
        for (int b = 0; b < 16; b++) rel[b] = (unsigned char)(src[b] - lo);
        __m128i off = _mm_loadu_si128((const __m128i *)rel), bit4 = _mm_and_si128(off, _mm_set1_epi8(16));
        _mm_store_si128((__m128i *)p->mask[o][0], _mm_or_si128(off, _mm_slli_epi16(bit4, 3)));
        bit4 = _mm_xor_si128(bit4, _mm_set1_epi8(16));
        _mm_store_si128((__m128i *)p->mask[o][1], _mm_or_si128(off, _mm_slli_epi16(bit4, 3)));
        reach = lo + 16 * (1 + p->two[o]) > reach ? lo + 16 * (1 + p->two[o]) : reach;
    }
    p->per = r / inner, p->advance = r / inner * s_step, p->reach = reach;
    p->read = (inner - 1) * s_inner + (fill ? unit : run);
    /* As many periods must keep their loads within the source, or the items are left to be moved one
     * by one: rows of fills broadcast to 6 items, each period's loads 8 bytes past the row, took 7.3
     * us that way against 4.6 moved (43 KiB). */
    if (shuffle_periods(p, count, s_step) < SHUFFLE_MIN_PERIODS) return;
    p->vectors = vectors;
#else
    (void)count, (void)s_step, (void)run, (void)fill, (void)unit, (void)inner, (void)s_inner;
#endif
}

#if DMLTILE_SHUFFLE
/* The first items of count (as planned by plan_shuffle) as whole periods of shuffles, whose loads stay
 * within the bytes the items read; returns how many items it wrote. Each output vector of the period
 * is written for a block of periods in a loop of its own, its mask in a register: one loop over the
 * vectors of each period ran at 1.2 ns a vector, these at 0.4 (a block's destination, at most 8 KiB,
 * stays in L1 between the passes). It starts on a line, so its loops sit where they do whatever code
 * comes before it: a change elsewhere in the file moved its loop of one load across a 64-byte
 * boundary, and 48000 bytes of rows took 2.4 us instead of 2.1. */
#define SHUFFLE_BLOCK 8192 /* output bytes of a block of periods, at most */
__attribute__((target("ssse3"), aligned(64))) static int64_t shuffle_runs(char *d, const char *s, int64_t count,
                                                                          int64_t s_step, const shuffle_t *p) {
    int64_t periods = shuffle_periods(p, count, s_step);
    int64_t advance = p->advance, span = 16 * p->vectors;
    int64_t block = SHUFFLE_BLOCK / (16 * (p->vectors > 8 ? p->vectors : 8)); /* periods */
    for (int64_t k = 0; k < periods; k += block) {
        int64_t n = periods - k < block ? periods - k : block;
        for (int o = 0; o < p->vectors; o++) {
            const char *a = s + k * advance + p->at[o];
            char *w = d + k * span + 16 * o;
            __m128i first = _mm_load_si128((const __m128i *)p->mask[o][0]);
            if (!p->two[o]) {
                for (int64_t i = 0; i < n; i++, a += advance, w += span)
                    _mm_storeu_si128((__m128i *)w, _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)a), first));
                continue;
            }
            __m128i second = _mm_load_si128((const __m128i *)p->mask[o][1]);
            for (int64_t i = 0; i < n; i++, a += advance, w += span) {
                __m128i lo = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)a), first);
                __m128i hi = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(a + 16)), second);
                _mm_storeu_si128((__m128i *)w, _mm_or_si128(lo, hi));
            }
        }
    }
    return periods * p->per;
}
#endif

/* memcpy of a size known only at run time, kept out of line: where the compiler can bound the size
 * (below 2049 bytes, say) it may expand it inline as a loop of 8-byte moves, 4x slower than the C
 * library's copy for rows of a few hundred bytes (measured with gcc 12 -O2). */
static NOINLINE void copy_bytes(char *d, const char *s, int64_t n) { memcpy(d, s, (size_t)n); }

/* Runs of 65 to MEDIUM_MAX bytes as 32-byte moves (AVX), the last one overlapping the one before it
 * where the run is not a multiple of 32: a call of memcpy per run took 1.3-3x as long for runs of up
 * to 160 bytes within L2 (1.05-1.75x for 3 MiB of them), 1.1-2x for 176-400 bytes within L2, 1.0-1.3x
 * for 500 (measured on the EPYC VM). Built where the shuffles are; used where the CPU has AVX,
 * memcpy elsewhere. */
#define MEDIUM_MAX 511
/* Runs of MEDIUM_MAX + 1 to LONG_MAX bytes too, where calibration found that faster than memcpy (see
 * long_runs); until told, memcpy. */
#define LONG_MAX 8192
static int long_avx = 0;

/* Sets whether such runs take long_runs (on >= 0) and returns whether they do. */
EXPORT int dmltile_long_avx(int on) {
    if (on >= 0) long_avx = on != 0;
    return long_avx;
}

/* Whether runs past LONG_MAX bytes are moved with rep movsb itself rather than a call of memcpy. On AMD
 * CPUs glibc's memcpy takes rep movsb only up to L2's size and a loop of vector stores past it, which
 * on a Zen 5 EPYC took 1.1-2.1x as long as rep movsb for runs of 1.8-2 MiB written into 38-256 MiB.
 * Calibration measures both ways and says which through dmltile_big_movsb; until then memcpy. */
static int big_movsb = 0;

/* Sets whether such runs take rep movsb (on >= 0) and returns whether they do. */
EXPORT int dmltile_big_movsb(int on) {
    if (on >= 0) big_movsb = on != 0;
    return big_movsb;
}

/* memcpy, or rep movsb for runs past LONG_MAX where big_movsb says so. */
static void big_run(char *d, const char *s, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (big_movsb && n > LONG_MAX) {
        __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
        return;
    }
#endif
    memcpy(d, s, (size_t)n);
}

#if DMLTILE_SHUFFLE
#include <immintrin.h>
__attribute__((target("avx"))) static void medium_runs(char *d, const char *s, int64_t count, int64_t d_step,
                                                       int64_t s_step, int64_t run) {
    for (int64_t j = 0; j < count; j++, d += d_step, s += s_step) {
        for (int64_t k = 0; k + 32 < run; k += 32)
            _mm256_storeu_si256((__m256i *)(d + k), _mm256_loadu_si256((const __m256i *)(s + k)));
        _mm256_storeu_si256((__m256i *)(d + run - 32), _mm256_loadu_si256((const __m256i *)(s + run - 32)));
    }
}

/* Runs of MEDIUM_MAX + 1 to LONG_MAX bytes as 32-byte moves too, the stores aligned to 32 bytes and
 * four to a turn, the first and last 32 bytes moved apart (overlapping the aligned ones). On an EPYC
 * of the Zen 5 family a call of memcpy per run (glibc's vector loop to 2 KiB, rep movsb past it) took
 * 1.3-1.9x as long for runs of 960-4096 bytes written past L2, as long within it; 16 KiB runs were
 * faster with memcpy. Where the CPU has AVX and calibration measured it faster (long_avx). */
__attribute__((target("avx"))) static void long_runs(char *d, const char *s, int64_t count, int64_t d_step,
                                                     int64_t s_step, int64_t run) {
    for (int64_t j = 0; j < count; j++, d += d_step, s += s_step) {
        __m256i head = _mm256_loadu_si256((const __m256i *)s);
        __m256i tail = _mm256_loadu_si256((const __m256i *)(s + run - 32));
        int64_t k = (int64_t)((32 - ((uintptr_t)d & 31)) & 31);
        for (; k + 128 < run; k += 128) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(s + k));
            __m256i b = _mm256_loadu_si256((const __m256i *)(s + k + 32));
            __m256i c = _mm256_loadu_si256((const __m256i *)(s + k + 64));
            __m256i e = _mm256_loadu_si256((const __m256i *)(s + k + 96));
            _mm256_store_si256((__m256i *)(d + k), a);
            _mm256_store_si256((__m256i *)(d + k + 32), b);
            _mm256_store_si256((__m256i *)(d + k + 64), c);
            _mm256_store_si256((__m256i *)(d + k + 96), e);
        }
        for (; k + 32 < run; k += 32)
            _mm256_store_si256((__m256i *)(d + k), _mm256_loadu_si256((const __m256i *)(s + k)));
        _mm256_storeu_si256((__m256i *)d, head);
        _mm256_storeu_si256((__m256i *)(d + run - 32), tail);
    }
}
#endif

/* count runs of run bytes, the j-th from s + j * s_step to d + j * d_step (a fill of the width-byte
 * element at s + j * s_step when fill is set). Small runs get constant-size copies the compiler
 * turns into single moves. */
#define EACH(body)                                                                                   \
    for (int64_t j = 0; j < count; j++, d += d_step, s += s_step) body;                              \
    return
static void runs(char *d, const char *s, int64_t count, int64_t d_step, int64_t s_step, int64_t run,
                 int fill, int64_t width, int stream, const shuffle_t *shuffle) {
#if DMLTILE_SHUFFLE
    if (shuffle->vectors && d_step == run) { /* whole periods as shuffles, the rest below */
        int64_t done = shuffle_runs(d, s, count, s_step, shuffle);
        d += done * d_step, s += done * s_step, count -= done;
    }
#else
    (void)shuffle;
#endif
    if (fill) {
#if DMLTILE_STREAM
        /* Fills with ordinary stores of rows up to a few lines (two int64 repeated 4 times, a row of
         * 10 int16): the element splatted once per row and stored 16 bytes at a time, not the generic
         * fill's calls and loops of element-size stores (2.9 against about 1 ns for 64 bytes). */
        if (!stream && run <= 4 * LINE) {
            switch (width) {
            /* each width a loop of its own: with the width a constant, splat's switch goes away */
            case 1: EACH(put_pattern(d, _mm_set1_epi8(*s), run));
            case 2: EACH(put_pattern(d, splat(s, 2), run));
            case 4: EACH(put_pattern(d, splat(s, 4), run));
            case 8: EACH(put_pattern(d, splat(s, 8), run));
            case 16: EACH(put_pattern(d, splat(s, 16), run));
            }
        }
#endif
        EACH(fill_run(d, s, width, run, stream));
    }
    if (stream && run >= 2 * LINE) {
        EACH(stream_run(d, s, run));
    }
#if DMLTILE_STREAM
    if ((run == 4 || run == 8) && d_step == run) {
        /* Single int32 or int64 gathered from runs too far apart to shuffle (a padded row's elements
         * 20 bytes apart): 16 bytes of them put together in a register and stored at once, since the
         * stores, one per element, bound the loop (7752 int32: 1.4 against 2.1 us). */
        int64_t k = 0, per = 16 / run;
        for (; k + per <= count; k += per, d += 16, s += per * s_step) {
            __m128i v;
            if (run == 8) {
                __m128i lo = _mm_loadl_epi64((const __m128i *)s);
                v = _mm_unpacklo_epi64(lo, _mm_loadl_epi64((const __m128i *)(s + s_step)));
            } else {
                int32_t a, b, e, f;
                memcpy(&a, s, 4), memcpy(&b, s + s_step, 4);
                memcpy(&e, s + 2 * s_step, 4), memcpy(&f, s + 3 * s_step, 4);
                __m128i lo = _mm_unpacklo_epi32(_mm_cvtsi32_si128(a), _mm_cvtsi32_si128(b));
                v = _mm_unpacklo_epi64(lo, _mm_unpacklo_epi32(_mm_cvtsi32_si128(e), _mm_cvtsi32_si128(f)));
            }
            _mm_storeu_si128((__m128i *)d, v);
        }
        count -= k;
    }
#endif
#if DMLTILE_SHUFFLE
    if (run > MEDIUM_MAX && run <= LONG_MAX && long_avx && __builtin_cpu_supports("avx")) {
        long_runs(d, s, count, d_step, s_step, run);
        return;
    }
#endif
    if (run > 2048) {
        EACH(if (rep_movsb_slow(d, s)) plain_run(d, s, run); else big_run(d, s, run));
    }
    switch (run) {
    case 1: EACH(*d = *s);
    case 2: EACH(memcpy(d, s, 2));
    case 4: EACH(memcpy(d, s, 4));
    case 8: EACH(memcpy(d, s, 8));
    case 16: EACH(memcpy(d, s, 16));
    case 32: EACH(memcpy(d, s, 32));
    case 64: EACH(memcpy(d, s, 64));
    case 128: EACH(memcpy(d, s, 128));
    case 256: EACH(memcpy(d, s, 256));
    }
    /* Other short runs (rows of 3, 6, 12 or 24 bytes, an opaque element each) as two constant-size
     * moves that overlap in the middle: a call of memcpy with a variable size costs several times
     * more than the bytes. The overlap writes the same bytes twice, so the result is the same. */
    if (run < 4) {
        EACH((memcpy(d, s, 2), d[run - 1] = s[run - 1]));
    }
    if (run < 8) {
        EACH((memcpy(d, s, 4), memcpy(d + run - 4, s + run - 4, 4)));
    }
    if (run < 16) {
        EACH((memcpy(d, s, 8), memcpy(d + run - 8, s + run - 8, 8)));
    }
    if (run < 32) {
        EACH((memcpy(d, s, 16), memcpy(d + run - 16, s + run - 16, 16)));
    }
    if (run < 64) {
        EACH((memcpy(d, s, 32), memcpy(d + run - 32, s + run - 32, 32)));
    }
#if DMLTILE_SHUFFLE
    if (run <= MEDIUM_MAX && __builtin_cpu_supports("avx")) {
        medium_runs(d, s, count, d_step, s_step, run);
        return;
    }
#endif
    EACH(copy_bytes(d, s, run));
}

#undef EACH

/* A run of FEW_MIN to FEW_MAX bytes as two moves that overlap in the middle (see runs). */
#define FEW_MIN 8
#define FEW_MAX 64
#define FEW_COUNT 4 /* at most this many of them in the tight loop */
static inline void short_run(char *d, const char *s, int64_t n) {
    if (n < 16) {
        memcpy(d, s, 8), memcpy(d + n - 8, s + n - 8, 8);
    } else if (n <= 32) {
        memcpy(d, s, 16), memcpy(d + n - 16, s + n - 16, 16);
    } else {
        memcpy(d, s, 32), memcpy(d + n - 32, s + n - 32, 32);
    }
}

/* A gather: count chunks of chunk bytes, d_step apart; chunk j is source chunk index[j]. */
#define GATHER(size)                                                                                 \
    for (int64_t j = 0; j < count; j++, d += d_step) memcpy(d, src + index[j] * (size), (size_t)(size)); \
    return
static void gather(char *d, const char *src, int64_t count, int64_t d_step, int64_t chunk, const int64_t *index) {
    switch (chunk) {
    case 64: GATHER(64);
    case 128: GATHER(128);
    case 256: GATHER(256);
    default: GATHER(chunk);
    }
}
#undef GATHER

/* How the kernel loops over a copy of ndim axes (shape and byte strides, which it may reorder): the
 * innermost axis becomes one run when it is contiguous in both (a copy) or contiguous in dst and
 * broadcast in src (a fill); a short run repeated back to back along the next axis is a fill of the
 * whole row with the run as its element; the axis just outside the runs is a tight loop, the rest an
 * odometer. A tight loop of a few runs under many odometer steps (a row of 10 bytes repeated twice, 980
 * times) pays a step per couple of runs: the largest outer axis whose destination span stays within
 * SWAP_SPAN (then its lines stay in cache between the passes) is looped over instead, when either the
 * runs are a vector at most (SWAP_RUN) or the whole step writes swap_step bytes at most. Passes
 * over lines not yet in cache fetch them in strides, slowly, and where that starts to cost is the
 * machine's: on a Zen 4 EPYC, swapped, runs of 72 bytes into a 64 MiB output took 2x as long as
 * unswapped, of 256 bytes 2.5x, into 1 MiB each 1.3-4x less; on a Zen 5 EPYC runs of 128 bytes
 * into 16 MiB took 0.6x as long swapped, into 32 MiB 0.9x, into 64 MiB as long. Calibration measures
 * it and sets swap_step through dmltile_swap_step; until then 1 MiB. (A step's lines are taken to be in
 * cache when it is small: plans write large outputs in large steps.) A loop of up to SWAP_MAX runs is
 * swapped, of up to SWAP_WIDE when its runs are moved inline (FEW_MAX bytes at most) and not gathered
 * 16 bytes at a time (joined int32 or int64, see runs): 1356 runs of 32 bytes in 226 steps of 6 took
 * 2.0 us, as one loop 0.8; 1784 int64 gathered in 223 steps of 8 took 2.4 us, swapped 4.1; 3060 runs of
 * 70 bytes (memcpy's) swapped out of steps of 5 were priced under a gather and took 1.1x as long.
 * pricing.py's kernel_loops mirrors this; the tests hold the two equal through dmltile_loops. */
#define SWAP_MAX 4
#define SWAP_WIDE 8
#define SWAP_RUN 16
#define SWAP_SPAN (256 << 10)
static int64_t swap_step = 1 << 20;

/* Sets the largest step (bytes written) in which a short loop of runs longer than SWAP_RUN is swapped
 * (bytes >= 0) and returns it. */
EXPORT int64_t dmltile_swap_step(int64_t bytes) {
    if (bytes >= 0) swap_step = bytes;
    return swap_step;
}

typedef struct {
    int outer, loop, fill, joined; /* joined: each item starts where the one before it ends */
    int64_t run, unit;
    int64_t inner, s_inner; /* the tight loop's items: runs (inner 1), or rows of inner runs s_inner apart */
} loops_t;

/* The shuffles of a copy's tight loop as plan_loops sets it up (the axes as it leaves them): none unless
 * each item of the loop starts where the one before it ends. */
static void loop_shuffle(shuffle_t *p, const loops_t *l, const int64_t *shape, const int64_t *d_str,
                         const int64_t *s_str) {
    int joined = l->loop >= 0 && d_str[l->loop] == l->run * l->inner;
    plan_shuffle(p, joined ? shape[l->loop] : 0, l->loop >= 0 ? s_str[l->loop] : 0, l->run, l->fill, l->unit,
                 l->inner, l->s_inner);
}

/* Whether the tight loop of l (joined runs under 16 bytes, too few to shuffle on their own) makes rows
 * back to back in the destination that can be shuffled as items of the loop outside it. Run by run
 * (swapped to loop over the rows), 4000 rows of 3 bytes each written 4 times took 5.9-10 us a Tile,
 * shuffled 2.2-3.4; 20000 rows of 5 bytes written 3 times 18-23 us, shuffled 8.5-11 (the EPYC VM). */
static int rows_shuffled(const loops_t *l, const int64_t *shape, const int64_t *d_str, const int64_t *s_str,
                         shuffle_t *p) { /* 1: they can; 0: they cannot, p the tight loop's own; -1: not such rows */
    int k = l->loop;
    if (k < 1 || l->run >= 16 || d_str[k] != l->run || d_str[k - 1] != shape[k] * l->run) return -1;
    plan_shuffle(p, shape[k], s_str[k], l->run, l->fill, l->unit, 1, 0);
    if (p->vectors) return 0;
    plan_shuffle(p, shape[k - 1], s_str[k - 1], l->run, l->fill, l->unit, shape[k], s_str[k]);
    return p->vectors > 0;
}

static loops_t plan_loops(int ndim, int64_t *shape, int64_t *d_str, int64_t *s_str, int64_t width,
                          int64_t whole, shuffle_t *shuffle) {
    loops_t l = {ndim, ndim - 1, 0, 0, width, width, 1, 0};
    if (ndim > 0 && d_str[ndim - 1] == width) {
        if (s_str[ndim - 1] == width) {
            l.outer = ndim - 1, l.run = shape[ndim - 1] * width;
        } else if (s_str[ndim - 1] == 0 && width <= 16 && 16 % width == 0) {
            l.outer = ndim - 1, l.run = shape[ndim - 1] * width, l.fill = 1;
        }
    }
    int o = l.outer;
    if (!l.fill && o > 0 && s_str[o - 1] == 0 && d_str[o - 1] == l.run && l.run <= 16 && 16 % l.run == 0) {
        l.unit = l.run, l.run *= shape[o - 1], l.outer = --o, l.fill = 1;
    }
    l.loop = o - 1; /* the tight loop's axis, -1 for a single run */
    int rows = rows_shuffled(&l, shape, d_str, s_str, shuffle);
    if (rows > 0) {
        l.inner = shape[l.loop], l.s_inner = s_str[l.loop], l.loop--;
        l.joined = 1;
        return l;
    }
    int gathered = l.loop >= 0 && d_str[l.loop] == l.run && (l.run == 4 || l.run == 8);
    int most = l.run <= FEW_MAX && !gathered ? SWAP_WIDE : SWAP_MAX;
    if (l.loop >= 1 && shape[l.loop] <= most && (l.run <= SWAP_RUN || whole <= swap_step)) {
        int k = -1;
        for (int i = 0; i < l.loop; i++) {
            int64_t span = (d_str[i] < 0 ? -d_str[i] : d_str[i]) * shape[i];
            if (span <= SWAP_SPAN && (k < 0 || shape[i] > shape[k])) k = i;
        }
        if (k >= 0 && shape[k] >= 4 * shape[l.loop]) {
            int64_t t;
            t = shape[k], shape[k] = shape[l.loop], shape[l.loop] = t;
            t = d_str[k], d_str[k] = d_str[l.loop], d_str[l.loop] = t;
            t = s_str[k], s_str[k] = s_str[l.loop], s_str[l.loop] = t;
            rows = -1; /* its own shuffles, planned below */
        }
    }
    l.joined = l.loop < 0 || shape[l.loop] == 1 || d_str[l.loop] == l.run;
    if (rows < 0) loop_shuffle(shuffle, &l, shape, d_str, s_str);
    return l;
}

/* The bytes a whole copy of ndim axes (dims: its shape first) writes: what plan_loops is told of a
 * piece's step. */
static int64_t copy_bytes_of(int ndim, const int64_t *dims, int64_t width) {
    int64_t n = width;
    for (int i = 0; i < ndim; i++) n *= dims[i];
    return n;
}

/* Streaming short runs. A run of a few lines gains few whole lines of its own: streamed one by one,
 * the partial lines at its ends are written with ordinary stores, read for ownership (a run of 804
 * bytes: 2 lines in 13). But runs that follow one another in the destination (a row of 4 int32
 * repeated twice, 4.5 million times) make whole lines together. They are written with ordinary stores
 * into a small buffer that keeps the destination's alignment, and the buffer's whole lines go out
 * with streaming stores: 140 MiB of such rows took 11.4 ms this way and 18.5 ms with ordinary stores,
 * one thread. Runs shorter than BOUNCE_RUN go through the buffer when they follow one another
 * (pricing.py's BOUNCE_RUN is the same bound). The buffer holds 4 KiB, a few such runs at a time, and
 * stays in L1: rows of 1274 bytes repeated 8 times (90 MiB, two threads) took 2.49 ms streamed run by
 * run and 2.18 through it. */
#define BOUNCE 4096
#define BOUNCE_RUN BOUNCE
typedef struct {
    char *base;  /* the line-aligned destination address of buf[0]; NULL when the buffer is empty */
    int64_t lo, n; /* buf[lo, n) holds bytes for base + [lo, n) */
    _Alignas(64) char buf[BOUNCE + 2 * LINE];
} bounce_t;

/* Write the buffer out: its whole lines streamed, the partial ones at its ends with ordinary stores;
 * unless all, a partial last line stays in the buffer (moved to its start) for the runs that follow. */
static void bounce_flush(bounce_t *b, int all) {
    int64_t first = (b->lo + LINE - 1) & ~(int64_t)(LINE - 1), last = b->n & ~(int64_t)(LINE - 1);
    if (first > last) { /* all within one line */
        if (all) memcpy(b->base + b->lo, b->buf + b->lo, (size_t)(b->n - b->lo)), b->base = NULL;
        return;
    }
    memcpy(b->base + b->lo, b->buf + b->lo, (size_t)(first - b->lo));
#if DMLTILE_STREAM
    for (int64_t k = first; k < last; k += LINE) put_line(b->base + k, b->buf + k, 1);
#else
    memcpy(b->base + first, b->buf + first, (size_t)(last - first));
#endif
    if (all) {
        memcpy(b->base + last, b->buf + last, (size_t)(b->n - last));
        b->base = NULL;
        return;
    }
    memcpy(b->buf, b->buf + last, (size_t)(b->n - last));
    b->base += last, b->n -= last, b->lo = 0;
}

#if DMLTILE_STREAM
/* Runs from this length on that line_runs copies; shorter ones (a line or two) gain little to stream
 * straight and pay its moves per run (runs of 72 bytes: 0.094 against 0.084 ns/B through the buffer).
 * pricing.py's LINE_RUN_MIN is the same bound. */
#define LINE_RUN_MIN (2 * LINE)

/* n bytes, at most a line, as one or two constant-size moves (that overlap in the middle), not a call of
 * memcpy with a variable size */
static inline void line_part(char *d, const char *s, int64_t n) {
    if (n >= 8) {
        short_run(d, s, n);
    } else if (n >= 4) {
        memcpy(d, s, 4), memcpy(d + n - 4, s + n - 4, 4);
    } else if (n > 0) {
        d[0] = s[0], d[n / 2] = s[n / 2], d[n - 1] = s[n - 1];
    }
}

/* count runs of run bytes (LINE_RUN_MIN or more) that follow one another from d on, copies (not fills
 * or shuffles): each run's whole lines streamed straight from the source, and only the line where two
 * runs meet put together in the buffer (its first line; b->base that line's address). Copied whole
 * through the buffer, most lengths of 136-1228 bytes took 0.07-0.09 ns/B on one thread where long runs
 * stream at 0.037: the moves into the buffer, its stores queued behind the streaming ones, did not
 * overlap them. This way runs of 200-4000 bytes took 0.039-0.046 and of 136 bytes 0.052-0.066 (64 MiB,
 * the EPYC VM); with a call of memcpy per part and each line written out as soon as it was whole,
 * 0.057-0.06 at 265 bytes. */
static void line_runs(bounce_t *b, char *d, const char *s, int64_t count, int64_t s_step, int64_t run) {
    if (b->base && d != b->base + b->n) bounce_flush(b, 1);
    for (int64_t j = 0; j < count; j++, s += s_step) {
        const char *p = s;
        int64_t left = run;
        int whole = 0;
        if (!b->base && (((uintptr_t)d & (LINE - 1)) || left < LINE)) {
            int64_t off = (int64_t)((uintptr_t)d & (LINE - 1));
            b->base = d - off, b->lo = b->n = off;
        }
        if (b->base) { /* the line begun: fill it */
            int64_t k = LINE - b->n < left ? LINE - b->n : left;
            line_part(b->buf + b->n, p, k);
            b->n += k, p += k, left -= k, d += k;
            if (b->n < LINE) continue;
            whole = 1;
        }
        for (; left >= LINE; left -= LINE, p += LINE, d += LINE) put_line(d, p, 1);
        if (whole) {
            /* written after the run's own lines: read back at once, its loads would wait for the
             * moves into it still in flight */
            if (b->lo) memcpy(b->base + b->lo, b->buf + b->lo, (size_t)(LINE - b->lo));
            else put_line(b->base, b->buf, 1);
            b->base = NULL;
        }
        if (left) {
            line_part(b->buf, p, left);
            b->base = d, b->lo = 0, b->n = left, d += left;
        }
    }
}
#endif

/* count items of a tight loop as plan_loops set it up (l), d_step and s_step apart: runs, or rows of
 * runs whose whole periods are shuffled (the rest run by run). */
static void items(char *d, const char *s, int64_t count, int64_t d_step, int64_t s_step, const loops_t *l,
                  int stream, const shuffle_t *shuffle) {
    if (l->inner == 1) {
        runs(d, s, count, d_step, s_step, l->run, l->fill, l->unit, stream, shuffle);
        return;
    }
    int64_t done = 0;
#if DMLTILE_SHUFFLE
    if (shuffle->vectors)
        done = shuffle_runs(d, s, count, s_step, shuffle);
#endif
    shuffle_t none;
    none.vectors = 0;
    for (int64_t j = done; j < count; j++)
        runs(d + j * d_step, s + j * s_step, l->inner, l->run, l->s_inner, l->run, l->fill, l->unit, stream, &none);
}

/* count items of l (under BOUNCE_RUN bytes) that follow one another from d on, through the buffer. */
static void bounce_runs(bounce_t *b, char *d, const char *s, int64_t count, int64_t s_step, const loops_t *l,
                        const shuffle_t *shuffle, int few) {
    int64_t item = l->run * l->inner; /* bytes */
    if (b->base && d != b->base + b->n) bounce_flush(b, 1);
    if (!b->base) {
        int64_t off = (int64_t)((uintptr_t)d & (LINE - 1));
        b->base = d - off, b->lo = b->n = off;
    }
    while (count > 0) {
        int64_t k = (BOUNCE + LINE - b->n) / item;
        if (k <= 0) {
            bounce_flush(b, 0);
            continue;
        }
        if (k > count) k = count;
        if (few) {
            for (int64_t j = 0; j < k; j++) short_run(b->buf + b->n + j * item, s + j * s_step, item);
        } else if (item > 2048 && !l->fill) {
            /* memcpy moves these with rep movsb, which into this buffer ran at a fraction of the rate
             * (rows of 2208 bytes, 191 MiB, one thread: 24.2 ms, and 10.2 with plain_run's loop) */
            for (int64_t j = 0; j < k; j++) plain_run(b->buf + b->n + j * item, s + j * s_step, item);
        } else {
            items(b->buf + b->n, s, k, item, s_step, l, 0, shuffle);
        }
        b->n += k * item, s += k * s_step, count -= k;
    }
}

/* The copy np.copyto(dst_view, src_view) makes for views of ndim axes of width-byte elements, limited
 * to indices [begin, end) of the outermost axis (so two threads can share one copy). The strides
 * are in bytes, any sign, 0 for broadcast; the loops are plan_loops'. Returns 0, or -1 for arguments
 * out of range. */
static int copy_view(char *d, const char *s, int ndim, const int64_t *dims, const int64_t *dst_strides,
                     const int64_t *src_strides, int64_t width, int64_t begin, int64_t end, int stream,
                     int64_t whole) {
    if (ndim < 0 || ndim > MAX_DIMS || width <= 0) return -1;
    int64_t shape[MAX_DIMS], d_str[MAX_DIMS], s_str[MAX_DIMS], index[MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        shape[i] = dims[i], d_str[i] = dst_strides[i], s_str[i] = src_strides[i], index[i] = 0;
        KEEP_LOOP();
    }
    if (ndim > 0) {
        if (begin < 0 || end > shape[0] || begin > end) return -1;
        d += begin * d_str[0], s += begin * s_str[0];
        shape[0] = end - begin;
    }
    for (int i = 0; i < ndim; i++)
        if (shape[i] <= 0) return 0;
    shuffle_t shuffle;
    loops_t l = plan_loops(ndim, shape, d_str, s_str, width, whole, &shuffle);
    int loop = l.loop;
    int64_t count = loop >= 0 ? shape[loop] : 1;
    int64_t d_step = loop >= 0 ? d_str[loop] : 0, s_step = loop >= 0 ? s_str[loop] : 0;
    bounce_t bounce;
    int bounced = stream && l.run * l.inner < BOUNCE_RUN && l.joined;
    bounce.base = NULL;
#if DMLTILE_STREAM
    int lined = bounced && !l.fill && !shuffle.vectors && l.run >= LINE_RUN_MIN;
#else
    int lined = 0;
#endif
    /* A tight loop of a few short runs under many odometer steps (rows of 56 bytes written twice, half
     * a million times) paid runs()' call and dispatch per step, more than its moves (53 MiB: 3.9 ms,
     * 2.9 copied here). pricing.py's FEW_RUNS and FEW_COUNT hold the same bounds. Streamed, such runs
     * are moved into the buffer the same way (64 MiB of those rows, one thread: 6.1 ms through
     * items(), 4.2 so; two threads 3.1 and 2.1). */
    int few_runs = !l.fill && !shuffle.vectors && count <= FEW_COUNT && l.run >= FEW_MIN && l.run <= FEW_MAX;
    int few = !bounced && few_runs, bounced_few = bounced && l.inner == 1 && few_runs;
    for (;;) {
        if (few) {
            for (int64_t j = 0; j < count; j++) short_run(d + j * d_step, s + j * s_step, l.run);
        } else if (lined) {
#if DMLTILE_STREAM
            line_runs(&bounce, d, s, count, s_step, l.run);
#endif
        } else if (bounced)
            bounce_runs(&bounce, d, s, count, s_step, &l, &shuffle, bounced_few);
        else
            items(d, s, count, d_step, s_step, &l, stream, &shuffle);
        int k = loop - 1;
        for (; k >= 0; k--) {
            d += d_str[k], s += s_str[k];
            if (++index[k] < shape[k]) break;
            d -= shape[k] * d_str[k], s -= shape[k] * s_str[k];
            index[k] = 0;
        }
        if (k < 0) break;
    }
    if (bounced && bounce.base) bounce_flush(&bounce, 1);
    return 0;
}

/* The loops copy_view runs for a copy of ndim axes (dims: shape, dst strides, src strides): out[0] the
 * bytes per run, out[1] the runs, out[2] the odometer steps, out[3] 1 when the runs are fills, out[4]
 * 1 when each run of a tight loop starts where the one before it ends, out[5] the output vectors of
 * a period of shuffles when the runs are shuffled (0 when not: see plan_shuffle). For
 * the tests, which hold pricing.py's mirror of plan_loops to it. Returns -1 for bad arguments. */
EXPORT int dmltile_loops(int ndim, const int64_t *dims, int64_t width, int64_t *out) {
    if (ndim < 0 || ndim > MAX_DIMS || width <= 0) return -1;
    int64_t shape[MAX_DIMS], d_str[MAX_DIMS], s_str[MAX_DIMS];
    for (int i = 0; i < ndim; i++) shape[i] = dims[i], d_str[i] = dims[ndim + i], s_str[i] = dims[2 * ndim + i];
    shuffle_t shuffle; /* as copy_view plans it for the whole copy */
    loops_t l = plan_loops(ndim, shape, d_str, s_str, width, copy_bytes_of(ndim, dims, width), &shuffle);
    int64_t runs = 1;
    for (int i = 0; i < l.outer; i++) runs *= shape[i];
    out[0] = l.run, out[1] = runs, out[2] = runs / (l.loop >= 0 ? shape[l.loop] * l.inner : 1), out[3] = l.fill;
    out[4] = l.joined;
    out[5] = shuffle.vectors;
    return 0;
}

static void fence(void) {
#if DMLTILE_STREAM
    _mm_sfence(); /* streaming stores are weakly ordered: make them visible before returning */
#endif
}

/* One copy, the part of it at outer indices [begin, end): dims holds shape, dst strides and src
 * strides, ndim values each; with stream, whole lines are written with streaming stores. Two threads
 * share a copy by calling this on disjoint ranges (ctypes lets go of Python's lock for the call, which
 * np.copyto does only for copies of more than 500 elements). Returns 0, or -1 for arguments out of
 * range. */
EXPORT int dmltile_copy(char *dst, const char *src, int ndim, const int64_t *dims, int64_t width, int64_t begin,
                        int64_t end, int stream) {
    int code = copy_view(dst, src, ndim, dims, dims + ndim, dims + 2 * ndim, width, begin, end, stream != 0,
                         copy_bytes_of(ndim, dims, width));
    if (stream) fence();
    return code;
}

/* The part of a copy at [begin, end) of the index space of its m outer axes taken as one (row-major):
 * the outermost index at a time, the rest of the range on the axes inside it. */
static int copy_range(char *d, const char *s, int ndim, const int64_t *shape, const int64_t *d_str,
                      const int64_t *s_str, int64_t width, int64_t begin, int64_t end, int stream, int m,
                      int64_t whole) {
    if (m <= 1 || ndim < 2) return copy_view(d, s, ndim, shape, d_str, s_str, width, begin, end, stream, whole);
    if (begin < 0 || begin > end) return -1;
    if (begin == end) return 0;
    int64_t inner = 1;
    for (int i = 1; i < m && i < ndim; i++) inner *= shape[i];
    if (inner <= 0 || end > shape[0] * inner) return -1;
    for (int64_t i = begin / inner; i * inner < end; i++) {
        int64_t lo = begin > i * inner ? begin - i * inner : 0;
        int64_t hi = end < (i + 1) * inner ? end - i * inner : inner;
        if (copy_range(d + i * d_str[0], s + i * s_str[0], ndim - 1, shape + 1, d_str + 1, s_str + 1, width, lo,
                       hi, stream, m - 1, whole))
            return -1;
    }
    return 0;
}

/* Where two threads cut a step: past its first `lead` axes, along the fewest axes (m) whose sizes
 * multiply to its pieces or more, each piece then written once for every index of the lead axes.
 * Cut along the outermost axis alone, 3 blocks of 37 MiB make 3 pieces, and the thread that takes two
 * of them copies two thirds of the step (that 111 MiB Tile: 36 against 25 ns per KiB).
 *
 * The lead axes are the outer axes that repeat the source (source stride 0) of a streamed step, when
 * the data after them give every piece LEAD_PIECE_MIN bytes or more. Cut along a repeat, both threads
 * read the whole source, each from memory or the other core's cache where it is not in one they share.
 * Medians in the same spells of the host's faster memory rate: six copies of a 12 MiB input that is in
 * memory took 2.2 ms cut along the copies, 1.8 cut along the input; a fan-out of a 12 MiB block the
 * calling thread had just written, onto six copies, 3.7 and 3.0. Not with ordinary stores: seven
 * copies of 3 MiB into 21 MiB took 0.69 ms cut along the copies, 0.91 along the source. A piece's
 * part of each copy is kept long, so the call per part costs little beside its bytes. */
#define LEAD_PIECE_MIN (64 << 10)

typedef struct {
    int lead, m;
} cut_t;

static cut_t shared_cut(const int64_t *h) {
    int ndim = (int)h[5], lead = 0, m = 1;
    const int64_t *shape = h + STEP_HEADER, *s_str = shape + 2 * ndim;
    if (h[0] == 1 || ndim < 1) return (cut_t){0, 1};
    while (h[7] && lead < ndim - 1 && s_str[lead] == 0) lead++;
    if (lead && (s_str[lead] == 0 || copy_bytes_of(ndim - lead, shape + lead, h[6]) / h[9] < LEAD_PIECE_MIN))
        lead = 0;
    for (int64_t count = shape[lead]; count < h[9] && lead + m < ndim; m++) count *= shape[lead + m];
    return (cut_t){lead, m};
}

/* shared_cut of a copy (dims as for dmltile_copy) shared in `pieces`: out receives lead and m. */
EXPORT int dmltile_cut(int ndim, const int64_t *dims, int64_t width, int stream, int64_t pieces, int64_t *out) {
    int64_t h[STEP_HEADER + 3 * MAX_DIMS] = {0};
    if (ndim < 1 || ndim > MAX_DIMS || pieces < 2) return -1;
    h[5] = ndim, h[6] = width, h[7] = stream != 0, h[9] = pieces;
    memcpy(h + STEP_HEADER, dims, 3 * (size_t)ndim * sizeof *dims);
    cut_t cut = shared_cut(h);
    out[0] = cut.lead, out[1] = cut.m;
    return 0;
}

/* How many indices the axes a step is cut along have together: what two threads share. */
static int64_t step_count(const int64_t *h, cut_t cut) {
    int64_t count = 1;
    for (int i = cut.lead; i < cut.lead + cut.m && i < h[5]; i++) count *= h[STEP_HEADER + i];
    return count;
}

/* The part [begin, end) of a copy's cut axes, for every index of its lead axes in turn. */
static int copy_lead(char *d, const char *s, int ndim, const int64_t *shape, const int64_t *d_str,
                     const int64_t *s_str, int64_t width, int64_t begin, int64_t end, int stream, cut_t cut,
                     int64_t whole) {
    if (cut.lead == 0) return copy_range(d, s, ndim, shape, d_str, s_str, width, begin, end, stream, cut.m, whole);
    cut.lead--;
    for (int64_t i = 0; i < shape[0]; i++)
        if (copy_lead(d + i * d_str[0], s + i * s_str[0], ndim - 1, shape + 1, d_str + 1, s_str + 1, width, begin,
                      end, stream, cut, whole))
            return -1;
    return 0;
}

/* One step of a program (its header h, see run_plan), the part at [begin, end) of its cut axes. */
static int run_step(char *const *bases, const int64_t *h, int64_t begin, int64_t end, cut_t cut) {
    int ndim = (int)h[5];
    char *d = bases[h[1]] + h[2];
    const char *s = bases[h[3]] + h[4];
    const int64_t *shape = h + STEP_HEADER;
    if (h[0] == 1) {
        const int64_t *index = (const int64_t *)(uintptr_t)h[8];
        gather(d + begin * shape[1], s, end - begin, shape[1], h[6], index + begin);
        return 0;
    }
    return copy_lead(d, s, ndim, shape, shape + ndim, shape + 2 * ndim, h[6], begin, end, (int)h[7], cut,
                     copy_bytes_of(ndim, shape, h[6]));
}

/* Two threads sharing a step. A step marked with pieces is cut along some of its axes (shared_cut);
 * the calling thread takes pieces from the front, the kernel's worker thread from the back, until
 * they meet.
 *
 * The worker is a thread of this library, not of Python: on the project's VM a Python worker took
 * 20-100 us to wake and then had to take Python's lock between pieces, while the same split with a
 * thread already running halves a copy into 4-12 MiB (measured in C: 184 against 81 us into 4 MiB).
 * So after each shared step the worker keeps looking for the next one for SPIN_NS (it spins, as
 * OpenMP's and onnxruntime's pools do by default) and then sleeps until it is woken. A step never
 * waits for the worker: a worker that is asleep, busy with another caller's step, or could not be
 * started leaves the pieces to the calling thread. */
#if !defined(_WIN32) && !defined(__STDC_NO_ATOMICS__) && (defined(__unix__) || defined(__APPLE__))
#define DMLTILE_WORKER 1
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#define SPIN_NS 100000 /* how long the worker looks for a next step before it sleeps */

typedef struct {
    char *const *bases;
    const int64_t *step;
    int64_t count, pieces;
    cut_t cut; /* the axes cut into pieces (shared_cut) */
    _Atomic uint64_t ends; /* (next piece from the front) << 32 | (one past the next from the back) */
    _Atomic int failed;
    _Atomic int left; /* set by the worker when it is done with this step and never touches it again */
} share_t;

static pthread_mutex_t share_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t share_wake = PTHREAD_COND_INITIALIZER;
static _Atomic(share_t *) posted; /* the step offered to the worker, NULL when none */
static _Atomic int asleep;        /* whether the worker waits on share_wake */
static int worker_state;          /* 0 not started, 1 running, -1 could not start (under share_lock) */

static void pause_once(void) {
#if DMLTILE_STREAM
    _mm_pause();
#endif
}

static int64_t take(share_t *job, int front) {
    uint64_t ends = atomic_load(&job->ends);
    for (;;) {
        uint64_t f = ends >> 32, b = ends & 0xffffffffu;
        if (f >= b) return -1;
        uint64_t next = front ? ((f + 1) << 32) | b : (f << 32) | (b - 1);
        if (atomic_compare_exchange_weak(&job->ends, &ends, next)) return (int64_t)(front ? f : b - 1);
    }
}

static _Atomic int64_t worker_pieces; /* pieces the worker ran since the library was loaded */

static void drain(share_t *job, int front) {
    int64_t k;
    while ((k = take(job, front)) >= 0) {
        /* piece k of count indices cut as evenly as count * k / pieces would, without its overflow */
        int64_t q = job->count / job->pieces, r = job->count % job->pieces;
        int64_t a = k * q + (k < r ? k : r), b = a + q + (k < r);
        if (run_step(job->bases, job->step, a, b, job->cut)) atomic_store(&job->failed, 1);
        if (!front) atomic_fetch_add(&worker_pieces, 1);
    }
    if (job->step[7]) fence(); /* the other thread reads these lines only after this thread is done */
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static share_t *claim(void) {
    share_t *job = atomic_load(&posted);
    return job && atomic_compare_exchange_strong(&posted, &job, NULL) ? job : NULL;
}

/* The next posted step: looked for in a spin for SPIN_NS, then waited for asleep. */
static share_t *next_step(void) {
    share_t *job;
    for (int64_t until = now_ns() + SPIN_NS;;) {
        for (int i = 0; i < 256; i++, pause_once())
            if ((job = claim()) != NULL) return job;
        if (now_ns() > until) break;
    }
    pthread_mutex_lock(&share_lock);
    atomic_store(&asleep, 1); /* then look again: a step posted before this store is seen below */
    while ((job = claim()) == NULL) pthread_cond_wait(&share_wake, &share_lock);
    atomic_store(&asleep, 0);
    pthread_mutex_unlock(&share_lock);
    return job;
}

static void *worker(void *unused) {
    (void)unused;
    for (;;) {
        share_t *job = next_step();
        drain(job, 0);
        atomic_store(&job->left, 1);
    }
    return NULL;
}

/* A forked child has no worker (only the forking thread survives): it starts its own. */
static void forked(void) {
    pthread_mutex_init(&share_lock, NULL);
    pthread_cond_init(&share_wake, NULL);
    atomic_store(&posted, NULL);
    atomic_store(&asleep, 0);
    worker_state = 0;
}

static int worker_running(void) {
    pthread_mutex_lock(&share_lock);
    if (worker_state == 0) {
        pthread_attr_t attr;
        pthread_t thread;
        worker_state = -1;
        if (pthread_attr_init(&attr) == 0) {
            pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
            if (pthread_create(&thread, &attr, worker, NULL) == 0) worker_state = 1;
            pthread_attr_destroy(&attr);
        }
        static int registered;
        if (!registered) registered = pthread_atfork(NULL, NULL, forked) == 0;
    }
    int running = worker_state == 1;
    pthread_mutex_unlock(&share_lock);
    return running;
}

static int shared_step(char *const *bases, const int64_t *h, int64_t count, int64_t pieces, cut_t cut) {
    if (pieces > count) pieces = count;
    if (pieces > 0xffffffff) pieces = 0xffffffff;
    share_t job = {bases, h, count, pieces, cut, (uint64_t)pieces, 0, 0};
    share_t *none = NULL;
    int offered = worker_running() && atomic_compare_exchange_strong(&posted, &none, &job);
    if (offered && atomic_load(&asleep)) {
        pthread_mutex_lock(&share_lock);
        pthread_cond_signal(&share_wake);
        pthread_mutex_unlock(&share_lock);
    }
    drain(&job, 1);
    share_t *mine = &job;
    if (offered && !atomic_compare_exchange_strong(&posted, &mine, NULL)) {
        /* the worker took the step: wait for its last piece (a piece at most) */
        while (!atomic_load(&job.left)) pause_once();
    }
    return atomic_load(&job.failed);
}

/* How many pieces the worker has run: the tests' evidence that it takes part. */
EXPORT int64_t dmltile_worker_pieces(void) { return atomic_load(&worker_pieces); }
#else
#define DMLTILE_WORKER 0
static int shared_step(char *const *bases, const int64_t *h, int64_t count, int64_t pieces, cut_t cut) {
    (void)pieces;
    return run_step(bases, h, 0, count, cut);
}
EXPORT int64_t dmltile_worker_pieces(void) { return 0; }
#endif

/* 1 when shared steps run on two threads (the kernel's worker), 0 when the calling thread runs them. */
EXPORT int dmltile_kernel_workers(void) { return DMLTILE_WORKER; }

/* A whole plan in one call, its steps in order. bases[b] is the start of buffer b (the input, the
 * output, the temporaries). A step is STEP_HEADER values, then shape, dst strides, src strides:
 *   kind (0 copy, 1 gather), dst buffer, dst offset, src buffer, src offset, ndim, width, stream,
 *   index address (a gather: shape[0] destination chunks of width bytes, dst stride apart; chunk j
 *   is source chunk index[j]), pieces (0: the calling thread runs the step; else it is cut into that
 *   many pieces along its outer axis, which the calling thread and the kernel's worker take in turn).
 * Returns 0, or the 1-based number of the first step refused. */
static int run_plan(char *const *bases, const int64_t *program, int64_t steps) {
    int streamed = 0;
    for (int64_t i = 0; i < steps; i++) {
        const int64_t *h = program;
        int ndim = (int)h[5];
        if (ndim < 0 || ndim > MAX_DIMS || (h[0] == 1 && ndim != 1)) return (int)i + 1;
        program += STEP_HEADER + 3 * (int64_t)ndim;
        cut_t cut = h[9] > 1 ? shared_cut(h) : (cut_t){0, 1};
        int64_t count = step_count(h, cut);
        int failed = h[9] > 1 && count > 1 ? shared_step(bases, h, count, h[9], cut)
                                           : run_step(bases, h, 0, count, cut);
        if (failed) return (int)i + 1;
        streamed |= (int)h[7];
    }
    if (streamed) fence();
    return 0;
}

/* run_plan, its three arguments in one array: the bases' address, the program's address, the number
 * of steps. ctypes passes one array in about 140 ns and three converted arguments in 335, while the
 * kernel copies a small Tile in a few hundred. */
EXPORT int dmltile_run(const int64_t *call) {
    return run_plan((char *const *)(uintptr_t)call[0], (const int64_t *)(uintptr_t)call[1], call[2]);
}
