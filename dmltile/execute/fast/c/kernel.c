/* dmltile's copy kernel: a Tile as a strided gather plus doubling copies (docs/planner.md).

A recipe is a list of axes, outermost first, each with a size and a byte stride in the output and
in the input, over runs of `run` bytes that are contiguous in both. An axis whose input stride is 0
repeats what is below it; when the block below it is one contiguous span of the output, the kernel
fills the first block and copies it forward, doubling the span it copies up to REPLICATE_MAX bytes,
then copying that span again and again (it stays in the nearest caches). Every other axis is a loop.

With two threads the output is cut into chunks taken from a shared counter: the calling thread
starts at once and never waits for a worker that has not started, so a busy second core costs at
most the chunk the worker holds. The worker is a thread of the kernel's own (POSIX builds).

Python reads every figure the planner needs from dmltile_fast_table(); nothing here is copied there.
*/
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#ifndef _WIN32
#include <pthread.h>
#define HAVE_WORKER 1
#define EXPORT __attribute__((visibility("default")))
#else
#define HAVE_WORKER 0
#define EXPORT __declspec(dllexport)
#endif

#ifndef SOURCE_DIGEST
#define SOURCE_DIGEST "" /* the build hook passes the digest of this file, so a stale build is seen */
#endif

#define MAX_DIMS 32
/* Outputs from this size are shared with the worker: below it, waking the worker costs more than
   the half of the copy it could take (bench case "two threads, 1 MiB"). */
#define TWO_THREAD_MIN 524288 /* 512 KiB */
/* Chunks of about this many output bytes, at most MAX_CHUNKS: small enough that a worker held up
   by a busy core delays the caller by little ("busy second core"), large enough that the counter's
   round trips between the cores are not felt. */
#define CHUNK_BYTES (128 << 10)
#define MAX_CHUNKS 256
/* Doubling stops at this span, which is then copied again and again from the nearest caches (sweep
   class "large outputs, small repeated blocks"); a block up to this size is read back while it is
   still there, so a streamed recipe writes it with ordinary stores. */
#define REPLICATE_MAX (8 << 10)

typedef struct {
    int64_t size, dst, src, replicate;
} axis_t;

typedef struct {
    int ndim, stream; /* stream: write with streaming stores, bypassing the caches */
    int64_t run;
    axis_t ax[MAX_DIMS];
    char *dst;
    const char *src;
    int split;                  /* chunks cut the axes up to this one, flattened */
    int64_t units, chunks, next; /* units of that flattened range, chunks of them, next chunk free */
} job_t;

/* Copy n bytes; short runs by a pair of fixed-size moves that may overlap (no call). */
static inline void move(char *d, const char *s, int64_t n) {
    if (n > 16) {
        memcpy(d, s, (size_t)n);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n >= 2) {
        uint16_t a, b;
        memcpy(&a, s, 2);
        memcpy(&b, s + n - 2, 2);
        memcpy(d, &a, 2);
        memcpy(d + n - 2, &b, 2);
    } else if (n == 1) {
        *d = *s;
    }
}

/* Copy n bytes with streaming stores where the CPU has them: the output's lines are written without
   being read first (outputs larger than the last-level cache, bench class "large outputs"). */
static void stream_move(char *d, const char *s, int64_t n) {
#if defined(__SSE2__)
    if (n >= 64) {
        int64_t head = (int64_t)(-(uintptr_t)d & 15);
        move(d, s, head);
        d += head, s += head, n -= head;
        for (; n >= 64; d += 64, s += 64, n -= 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)s), b = _mm_loadu_si128((const __m128i *)(s + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(s + 32)), e = _mm_loadu_si128((const __m128i *)(s + 48));
            _mm_stream_si128((__m128i *)d, a);
            _mm_stream_si128((__m128i *)(d + 16), b);
            _mm_stream_si128((__m128i *)(d + 32), c);
            _mm_stream_si128((__m128i *)(d + 48), e);
        }
    }
#endif
    move(d, s, n);
}

static void fence(void) {
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

/* d holds one block of `block` bytes; make it `count` blocks back to back. */
static void replicate(char *d, int64_t block, int64_t count, int stream) {
    int64_t have = block, total = block * count;
    while (have < total && have < REPLICATE_MAX) { /* read back at once: ordinary stores */
        int64_t n = total - have < have ? total - have : have;
        move(d + have, d, n);
        have += n;
    }
    int64_t span = have;
    while (have < total) {
        int64_t n = total - have < span ? total - have : span;
        if (stream) stream_move(d + have, d, n);
        else move(d + have, d, n);
        have += n;
    }
}

static void fill_range(const job_t *j, int a, int64_t lo, int64_t hi, char *dst, const char *src, int stream);

static inline void fill(const job_t *j, int a, char *dst, const char *src, int stream) {
    fill_range(j, a, 0, j->ax[a].size, dst, src, stream);
}

/* Indices [lo, hi) of axis a, for the output block at dst and the input block at src; `stream`:
   with streaming stores, except for the blocks that are read back (REPLICATE_MAX). */
static void fill_range(const job_t *j, int a, int64_t lo, int64_t hi, char *dst, const char *src, int stream) {
    if (lo >= hi) return;
    const axis_t *x = &j->ax[a];
    char *d = dst + lo * x->dst;
    const char *s = src + lo * x->src;
    int64_t i, run = j->run;
    if (x->replicate) {
        int first = stream && x->dst > REPLICATE_MAX;
        if (a == j->ndim - 1) {
            if (first) stream_move(d, s, run);
            else move(d, s, run);
        } else {
            fill(j, a + 1, d, s, first);
        }
        replicate(d, x->dst, hi - lo, stream);
    } else if (a == j->ndim - 1) { /* the innermost axis: runs */
        if (stream) {
            for (i = lo; i < hi; i++, d += x->dst, s += x->src) stream_move(d, s, run);
        } else {
            for (i = lo; i < hi; i++, d += x->dst, s += x->src) move(d, s, run);
        }
    } else {
        for (i = lo; i < hi; i++, d += x->dst, s += x->src) fill(j, a + 1, d, s, stream);
    }
}

/* Chunk c: its share of the units, each a range of the split axis under one index of the axes
   before it (those are looped, so every chunk is independent of the others). */
static void run_chunk(const job_t *j, int64_t c) {
    int64_t u = j->units * c / j->chunks, end = j->units * (c + 1) / j->chunks;
    int64_t n = j->ax[j->split].size;
    while (u < end) {
        int64_t prefix = u / n, i = u % n, hi = i + (end - u) < n ? i + (end - u) : n;
        char *d = j->dst;
        const char *s = j->src;
        for (int a = j->split - 1; a >= 0; a--) {
            int64_t k = prefix % j->ax[a].size;
            prefix /= j->ax[a].size;
            d += k * j->ax[a].dst;
            s += k * j->ax[a].src;
        }
        fill_range(j, j->split, i, hi, d, s, j->stream);
        u += hi - i;
    }
}

static void drain(job_t *j) {
    int64_t c;
    while ((c = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->chunks) run_chunk(j, c);
}

static int64_t worker_chunks; /* chunks the worker ran, for the tests */

#if HAVE_WORKER
static pthread_mutex_t owner = PTHREAD_MUTEX_INITIALIZER; /* one two-thread job at a time */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER, idle = PTHREAD_COND_INITIALIZER;
static job_t *posted;
static int64_t generation, inside, started;

static void *worker(void *unused) {
    int64_t seen = 0;
    (void)unused;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (posted == NULL || seen == generation) pthread_cond_wait(&wake, &lock);
        seen = generation;
        job_t *j = posted;
        inside = 1;
        pthread_mutex_unlock(&lock);
        int64_t c, mine = 0;
        while ((c = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->chunks) {
            run_chunk(j, c);
            mine++;
        }
        fence();
        __atomic_fetch_add(&worker_chunks, mine, __ATOMIC_RELAXED);
        pthread_mutex_lock(&lock);
        inside = 0;
        pthread_cond_signal(&idle);
    }
    return NULL;
}

static void after_fork(void) { /* the child has no worker: the next two-thread job starts one */
    pthread_mutex_init(&owner, NULL);
    pthread_mutex_init(&lock, NULL);
    pthread_cond_init(&wake, NULL);
    pthread_cond_init(&idle, NULL);
    posted = NULL;
    inside = started = 0;
}

static int share(job_t *j) {
    if (pthread_mutex_trylock(&owner)) return 0; /* another thread's job holds the worker */
    pthread_mutex_lock(&lock);
    if (!started) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        started = pthread_create(&t, &attr, worker, NULL) == 0;
        pthread_attr_destroy(&attr);
        if (started) pthread_atfork(NULL, NULL, after_fork);
    }
    if (!started) {
        pthread_mutex_unlock(&lock);
        pthread_mutex_unlock(&owner);
        return 0;
    }
    posted = j;
    generation++;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
    drain(j);
    pthread_mutex_lock(&lock);
    posted = NULL; /* a worker that has not started by now never sees this job */
    while (inside) pthread_cond_wait(&idle, &lock);
    pthread_mutex_unlock(&lock);
    pthread_mutex_unlock(&owner);
    return 1;
}
#else
static int share(job_t *j) {
    (void)j;
    return 0;
}
#endif

/* A recipe: ndim, run, threads, stream, then size, dst stride, src stride, replicate for each axis. */
EXPORT int dmltile_fast_run(const int64_t *recipe, char *dst, const char *src) {
    job_t j;
    int64_t total = recipe[1];
    j.ndim = (int)recipe[0];
    j.run = recipe[1];
    j.stream = recipe[3] != 0;
    if (j.ndim < 0 || j.ndim > MAX_DIMS || j.run < 0) return 1;
    for (int a = 0; a < j.ndim; a++) {
        const int64_t *r = recipe + 4 + 4 * a;
        j.ax[a] = (axis_t){r[0], r[1], r[2], r[3]};
        if (r[0] < 0) return 1;
        total *= r[0];
    }
    if (total == 0) return 0;
    if (j.ndim == 0) {
        move(dst, src, j.run);
        return 0;
    }
    j.dst = dst;
    j.src = src;
    if (recipe[2] > 1 && HAVE_WORKER) {
        int64_t want = total / CHUNK_BYTES;
        want = want < 2 ? 2 : want > MAX_CHUNKS ? MAX_CHUNKS : want;
        j.units = 1;
        for (j.split = 0; j.split < j.ndim; j.split++) {
            j.units *= j.ax[j.split].size;
            if (j.units >= want) break;
        }
        if (j.split == j.ndim) j.split = j.ndim - 1;
        j.chunks = j.units < want ? j.units : want;
        j.next = 0;
        if (j.chunks > 1 && share(&j)) return 0;
    }
    fill(&j, 0, dst, src, j.stream);
    fence();
    return 0;
}

/* The figures the planner reads, by name: "name=value" pairs separated by spaces. */
EXPORT const char *dmltile_fast_table(void) {
#define STR2(x) #x
#define STR(x) STR2(x)
    return "max_dims=" STR(MAX_DIMS) " two_thread_min=" STR(TWO_THREAD_MIN) " worker=" STR(HAVE_WORKER)
           " digest=" SOURCE_DIGEST;
}

EXPORT int64_t dmltile_fast_worker_chunks(void) { return __atomic_load_n(&worker_chunks, __ATOMIC_RELAXED); }
