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
#include <sched.h>
#define HAVE_WORKER 1
#define relax() sched_yield()
#define EXPORT __attribute__((visibility("default")))
#else
#define HAVE_WORKER 0
#define relax() ((void)0)
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

/* A phase of a two-thread job: its chunks start only when every chunk of the phases before is done. */
typedef struct {
    int kind;                  /* FILL, SEED or COPY */
    int axis;                  /* FILL: the axis cut into ranges (ndim: whole runs); else the repeat */
    int64_t units, chunks, first, span; /* units of work, chunks, number of its first chunk, seed span */
} phase_t;
enum { FILL, SEED, COPY };

typedef struct {
    int ndim, stream; /* stream: write with streaming stores, bypassing the caches */
    int64_t run;
    axis_t ax[MAX_DIMS];
    char *dst;
    const char *src;
    phase_t phase[MAX_DIMS + 1];
    int phases;
    int64_t chunks, next, done; /* chunks of all phases, the next one free, those finished */
} job_t;

typedef struct {
    uint64_t lo, hi;
} pair_t; /* 16 bytes, moved as one vector where the CPU has them */

/* Copy n bytes; runs up to 64 bytes by fixed-size moves that may overlap (no call). */
static inline void move(char *d, const char *s, int64_t n) {
    if (n > 64) {
        memcpy(d, s, (size_t)n);
    } else if (n > 32) {
        pair_t a, b, c, e;
        memcpy(&a, s, 16), memcpy(&b, s + 16, 16), memcpy(&c, s + n - 32, 16), memcpy(&e, s + n - 16, 16);
        memcpy(d, &a, 16), memcpy(d + 16, &b, 16), memcpy(d + n - 32, &c, 16), memcpy(d + n - 16, &e, 16);
    } else if (n > 16) {
        pair_t a, b;
        memcpy(&a, s, 16), memcpy(&b, s + n - 16, 16);
        memcpy(d, &a, 16), memcpy(d + n - 16, &b, 16);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8), memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8), memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4), memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4), memcpy(d + n - 4, &b, 4);
    } else if (n >= 2) {
        uint16_t a, b;
        memcpy(&a, s, 2), memcpy(&b, s + n - 2, 2);
        memcpy(d, &a, 2), memcpy(d + n - 2, &b, 2);
    } else if (n == 1) {
        *d = *s;
    }
}

/* A loop of runs of one fixed size: the size known to the compiler, each run one load and store. */
#define RUNS(type)                                                     \
    for (; i < hi; i++, d += x->dst, s += x->src) {                   \
        type v;                                                        \
        memcpy(&v, s, sizeof v), memcpy(d, &v, sizeof v);              \
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

static inline void fill(const job_t *j, int a, char *dst, const char *src, int stream);

/* Streamed, a small repeated block is built in a buffer of the thread's own, doubled there up to
   REPLICATE_MAX bytes, and streamed out from it: every byte of the output is written once, without
   being read first (bench class "large outputs"). */
static void stream_repeats(const job_t *j, int a, char *d, const char *s, int64_t count) {
    char buffer[REPLICATE_MAX] __attribute__((aligned(64)));
    int64_t block = j->ax[a].dst, total = block * count, reach = REPLICATE_MAX / block;
    int64_t span = block * (reach > count ? count : reach), have, n;
    if (a == j->ndim - 1) move(buffer, s, j->run);
    else fill(j, a + 1, buffer, s, 0);
    for (have = block; have < span; have += n) {
        n = span - have < have ? span - have : have;
        move(buffer + have, buffer, n);
    }
    for (have = 0; have < total; have += n) {
        n = total - have < span ? total - have : span;
        stream_move(d + have, buffer, n);
    }
}

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
    if (x->replicate && stream && x->dst <= REPLICATE_MAX && (hi - lo) * x->dst >= REPLICATE_MAX) {
        stream_repeats(j, a, d, s, hi - lo);
    } else if (x->replicate) {
        int first = stream && x->dst > REPLICATE_MAX;
        if (a == j->ndim - 1) {
            if (first) stream_move(d, s, run);
            else move(d, s, run);
        } else {
            fill(j, a + 1, d, s, first);
        }
        replicate(d, x->dst, hi - lo, stream);
    } else if (a == j->ndim - 1) { /* the innermost axis: runs */
        i = lo;
        if (stream && run >= 64) {
            for (; i < hi; i++, d += x->dst, s += x->src) stream_move(d, s, run);
        } else if (run == 1) {
            RUNS(uint8_t)
        } else if (run == 2) {
            RUNS(uint16_t)
        } else if (run == 4) {
            RUNS(uint32_t)
        } else if (run == 8) {
            RUNS(uint64_t)
        } else if (run == 16) {
            RUNS(pair_t)
        } else {
            for (; i < hi; i++, d += x->dst, s += x->src) move(d, s, run);
        }
    } else {
        for (i = lo; i < hi; i++, d += x->dst, s += x->src) fill(j, a + 1, d, s, stream);
    }
}

/* Offsets of prefix index p over the looped axes before `limit` (replicated repeats stay at 0). */
static void at_prefix(const job_t *j, int limit, int64_t p, char **d, const char **s) {
    for (int a = limit - 1; a >= 0; a--) {
        if (j->ax[a].replicate) continue;
        *d += (p % j->ax[a].size) * j->ax[a].dst;
        *s += (p % j->ax[a].size) * j->ax[a].src;
        p /= j->ax[a].size;
    }
}

static int64_t prefixes(const job_t *j, int limit) {
    int64_t n = 1;
    for (int a = 0; a < limit; a++)
        if (!j->ax[a].replicate) n *= j->ax[a].size;
    return n;
}

/* Chunk c of phase f: FILL gathers its share of the first blocks (a range of the cut axis under one
   prefix, or whole runs), SEED doubles one first block of a repeat up to its span, COPY copies its
   share of the bytes after that span from the span (the output repeats with the span's period). */
static void run_chunk(const job_t *j, const phase_t *f, int64_t c) {
    int64_t u = f->units * (c - f->first) / f->chunks, end = f->units * (c - f->first + 1) / f->chunks;
    int64_t n = f->axis < j->ndim ? j->ax[f->axis].size : 1;
    int64_t block = f->axis < j->ndim ? j->ax[f->axis].dst : 0, length = n * block - f->span;
    while (u < end) {
        char *d = j->dst;
        const char *s = j->src;
        int64_t step;
        if (f->kind == FILL) {
            int64_t i = u % n, hi = i + (end - u) < n ? i + (end - u) : n;
            at_prefix(j, f->axis, u / n, &d, &s);
            if (f->axis == j->ndim) move(d, s, j->run);
            else fill_range(j, f->axis, i, hi, d, s, j->stream);
            step = hi - i;
        } else if (f->kind == SEED) {
            at_prefix(j, f->axis, u, &d, &s);
            for (int64_t have = block; have < f->span; have *= 2)
                move(d + have, d, f->span - have < have ? f->span - have : have);
            step = 1;
        } else {
            int64_t t = u % length, from = t % f->span;
            at_prefix(j, f->axis, u / length, &d, &s);
            step = end - u;
            if (step > f->span - from) step = f->span - from;
            if (step > length - t) step = length - t;
            if (j->stream) stream_move(d + f->span + t, d + from, step);
            else move(d + f->span + t, d + from, step);
        }
        u += step;
    }
}

/* Take chunks until none is left; a chunk waits for the phases before its own to be done (for at most
   the chunks the other thread holds). */
static int64_t drain(job_t *j) {
    int64_t c, mine = 0;
    while ((c = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->chunks) {
        const phase_t *f = j->phase;
        while (c >= f->first + f->chunks) f++;
        for (int spins = 0; __atomic_load_n(&j->done, __ATOMIC_ACQUIRE) < f->first; spins++)
            if (spins > 1000) relax();
        run_chunk(j, f, c);
        fence();
        __atomic_fetch_add(&j->done, 1, __ATOMIC_RELEASE);
        mine++;
    }
    return mine;
}

static int64_t clamp_chunks(int64_t bytes) {
    int64_t n = bytes / CHUNK_BYTES;
    return n < 1 ? 1 : n > MAX_CHUNKS ? MAX_CHUNKS : n;
}

static void add_phase(job_t *j, int kind, int axis, int64_t units, int64_t chunks, int64_t span) {
    if (units <= 0) return;
    phase_t *f = &j->phase[j->phases++];
    f->kind = kind, f->axis = axis, f->units = units, f->span = span;
    f->chunks = chunks < units ? chunks : units;
    f->first = j->chunks;
    j->chunks += f->chunks;
}

/* The phases of a two-thread job: the looped axes are cut (flattened, outermost first) until there
   are enough chunks; the replicated repeats above that cut are filled in first blocks only, then
   copied forward, the innermost repeat first. */
static void plan_phases(job_t *j, int64_t total) {
    int64_t units = 1, repeated = 1;
    int cut = j->ndim;
    j->phases = 0, j->chunks = 0, j->next = 0, j->done = 0;
    for (int a = 0; a < j->ndim; a++) {
        if (j->ax[a].replicate) {
            repeated *= j->ax[a].size;
            continue;
        }
        units *= j->ax[a].size;
        if (units >= clamp_chunks(total / repeated)) {
            cut = a;
            break;
        }
    }
    add_phase(j, FILL, cut, units, clamp_chunks(total / repeated), 0);
    for (int a = cut - 1; a >= 0; a--) {
        if (!j->ax[a].replicate) continue;
        int64_t block = j->ax[a].dst, count = j->ax[a].size, reach = REPLICATE_MAX / block;
        int64_t span = block * (reach < 1 ? 1 : reach > count ? count : reach), p = prefixes(j, a);
        if (span > block) add_phase(j, SEED, a, p, p, span);
        add_phase(j, COPY, a, p * (count * block - span), clamp_chunks(p * (count * block - span)), span);
    }
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
        __atomic_fetch_add(&worker_chunks, drain(j), __ATOMIC_RELAXED);
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
        plan_phases(&j, total);
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
