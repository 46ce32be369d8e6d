/*
 * oshmem_perf.c: the anchor side of rshmem-perf, for OpenSHMEM libraries.
 *
 * Written for rshmem from the OpenSHMEM 1.4 specification's API; no code is taken from
 * any benchmark suite. rshmem-perf compiles it at run time with Open MPI's oshcc (the
 * `oshmem` column) and with rshmem's own oshcc against its C ABI, libshmem (the
 * `libshmem` column), and starts it with the matching oshrun. It keeps to the OpenSHMEM
 * 1.4 API so that it builds unchanged with both; only its INFO line asks which
 * implementation it is.
 *
 * It reads the plan file that rshmem-perf writes (one case per line,
 * "case OP BYTES ITERS WARMUP REPS"; '#' starts a comment), runs every case the way
 * rshmem's PEs do (crates/rshmem-perf/src/pe.rs), and prints from PE 0 one line per case:
 *
 *   INFO binding PE P cpus LIST   (every PE: Cpus_allowed_list of /proc/self/status)
 *   RESULT op=OP bytes=B iters=I reps=R median_us=M min_us=MIN max_us=MAX
 *   SKIP op=OP bytes=B reason=WHY
 *
 * Timing, identical on both sides: a barrier, WARMUP untimed iterations, then REPS times
 * { barrier; ITERS iterations timed with CLOCK_MONOTONIC }. The per-operation time of a
 * repetition is its elapsed time over ITERS; PE 0 reports the median, minimum and
 * maximum over the repetitions. A final barrier ends the case.
 *
 * Point-to-point cases run on N/2 pairs at once: PE i (i < N/2) drives PE i + N/2;
 * PE 0's pair is reported. Collective cases involve every PE (active set: all PEs) and
 * alternate between two pSync arrays. What BYTES means per operation: the message for
 * RMA, broadcast and signal_pingpong; what each PE contributes for fcollect; what each
 * pair exchanges for alltoall; the reduced array (of long, summed) for reduce.
 *
 * OpenSHMEM 1.4 has no put-with-signal: signal_pingpong uses its idiom, putmem + fence +
 * p of the flag. It has no reduce-scatter either: those cases are SKIPped.
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum op_kind {
    OP_PUT, OP_PUT_NBI, OP_GET, OP_GET_NBI, OP_P, OP_G, OP_PINGPONG, OP_SIGNAL_PINGPONG,
    OP_FETCH_ADD, OP_ADD, OP_COMPARE_SWAP, OP_FETCH, OP_ADD_RATE, OP_INC_RATE, OP_SET_RATE, OP_PUT_NBI_RATE,
    OP_BARRIER, OP_BROADCAST, OP_FCOLLECT, OP_ALLTOALL, OP_REDUCE, OP_UNKNOWN
};

static const struct {
    const char *name;
    enum op_kind kind;
    int pairs; /* 1: point to point, 0: every PE */
} OPS[] = {
    {"put", OP_PUT, 1},         {"put_nbi", OP_PUT_NBI, 1}, {"get", OP_GET, 1}, {"get_nbi", OP_GET_NBI, 1},
    {"p", OP_P, 1},             {"g", OP_G, 1},             {"pingpong", OP_PINGPONG, 1},
    {"signal_pingpong", OP_SIGNAL_PINGPONG, 1},
    {"fetch_add", OP_FETCH_ADD, 1}, {"add", OP_ADD, 1}, {"compare_swap", OP_COMPARE_SWAP, 1},
    {"fetch", OP_FETCH, 1},     {"add_rate", OP_ADD_RATE, 1}, {"inc_rate", OP_INC_RATE, 1},
    {"set_rate", OP_SET_RATE, 1}, {"put_nbi_rate", OP_PUT_NBI_RATE, 1},
    {"barrier", OP_BARRIER, 0}, {"broadcast", OP_BROADCAST, 0}, {"fcollect", OP_FCOLLECT, 0},
    {"alltoall", OP_ALLTOALL, 0}, {"reduce", OP_REDUCE, 0},
};

/* Operations of rshmem-perf that OpenSHMEM 1.4 lacks, with why. */
static const struct {
    const char *name;
    const char *reason;
} MISSING[] = {
    {"reduce_scatter", "OpenSHMEM 1.4 has no reduce-scatter"},
};

#define SYNC_SIZE 64 /* longs: more than any of the SHMEM_*_SYNC_SIZE */

enum role { INITIATOR, TARGET, IDLE };

struct plan_case {
    char op[64];
    size_t bytes;
    long iters, warmup, reps;
};

/* Everything one case needs while it runs. */
struct state {
    enum op_kind kind;
    size_t bytes;
    enum role role;
    int partner;
    unsigned char *sym;   /* symmetric buffer */
    unsigned char *local; /* private buffer */
    long *word;           /* symmetric word */
    long seq;             /* last value sent (p, pingpong) */
    volatile long sink;   /* keeps g results alive */
    unsigned char *dst;   /* symmetric destination (collectives) */
    long *psync[2];       /* alternating pSync arrays */
    long *pwrk;           /* reduction work array */
    int flip;
    int n;
};

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static unsigned char pattern(size_t i) { return (unsigned char)((i * 131u) % 251u + 1u); }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(const char *msg) {
    fprintf(stderr, "oshmem_perf: PE %d: %s\n", shmem_my_pe(), msg);
    shmem_global_exit(1);
    exit(1);
}

/* Runs k iterations of the case on this PE. */
static void body(struct state *s, long k) {
    long i;
    switch (s->kind) {
    case OP_PUT:
        if (s->role == INITIATOR)
            for (i = 0; i < k; i++) {
                shmem_putmem(s->sym, s->local, s->bytes, s->partner);
                shmem_quiet();
            }
        break;
    case OP_PUT_NBI:
    case OP_PUT_NBI_RATE:
        if (s->role == INITIATOR) {
            for (i = 0; i < k; i++) shmem_putmem_nbi(s->sym, s->local, s->bytes, s->partner);
            shmem_quiet();
        }
        break;
    case OP_GET:
        if (s->role == INITIATOR)
            for (i = 0; i < k; i++) shmem_getmem(s->local, s->sym, s->bytes, s->partner);
        break;
    case OP_GET_NBI:
        if (s->role == INITIATOR) {
            for (i = 0; i < k; i++) shmem_getmem_nbi(s->local, s->sym, s->bytes, s->partner);
            shmem_quiet();
        }
        break;
    case OP_P:
        if (s->role == INITIATOR)
            for (i = 0; i < k; i++) {
                s->seq++;
                shmem_long_p(s->word, s->seq, s->partner);
                shmem_quiet();
            }
        break;
    case OP_G:
        if (s->role == INITIATOR)
            for (i = 0; i < k; i++) s->sink = shmem_long_g(s->word, s->partner);
        break;
    case OP_PINGPONG:
        if (s->role == INITIATOR)
            for (i = 0; i < k; i++) {
                s->seq++;
                shmem_long_p(s->word, s->seq, s->partner);
                shmem_long_wait_until(s->word, SHMEM_CMP_GE, s->seq);
            }
        else if (s->role == TARGET)
            for (i = 0; i < k; i++) {
                s->seq++;
                shmem_long_wait_until(s->word, SHMEM_CMP_GE, s->seq);
                shmem_long_p(s->word, s->seq, s->partner);
            }
        break;
    case OP_SIGNAL_PINGPONG:
        if (s->role == INITIATOR)
            for (i = 0; i < k; i++) {
                s->seq++;
                shmem_putmem(s->sym, s->local, s->bytes, s->partner);
                shmem_fence();
                shmem_long_p(s->word, s->seq, s->partner);
                shmem_long_wait_until(s->word, SHMEM_CMP_GE, s->seq);
            }
        else if (s->role == TARGET)
            for (i = 0; i < k; i++) {
                s->seq++;
                shmem_long_wait_until(s->word, SHMEM_CMP_GE, s->seq);
                shmem_putmem(s->sym, s->local, s->bytes, s->partner);
                shmem_fence();
                shmem_long_p(s->word, s->seq, s->partner);
            }
        break;
    case OP_FETCH_ADD:
        if (s->role == INITIATOR)
            for (i = 0; i < k; i++) s->sink = shmem_long_atomic_fetch_add(s->word, 1, s->partner);
        break;
    case OP_ADD:
        if (s->role == INITIATOR)
            for (i = 0; i < k; i++) {
                shmem_long_atomic_add(s->word, 1, s->partner);
                shmem_quiet();
            }
        break;
    case OP_COMPARE_SWAP:
        if (s->role == INITIATOR)
            for (i = 0; i < k; i++) {
                s->sink = shmem_long_atomic_compare_swap(s->word, s->seq, s->seq + 1, s->partner);
                s->seq++;
            }
        break;
    case OP_FETCH:
        if (s->role == INITIATOR)
            for (i = 0; i < k; i++) s->sink = shmem_long_atomic_fetch(s->word, s->partner);
        break;
    case OP_ADD_RATE:
        if (s->role == INITIATOR) {
            for (i = 0; i < k; i++) shmem_long_atomic_add(s->word, 1, s->partner);
            shmem_quiet();
        }
        break;
    case OP_INC_RATE:
        if (s->role == INITIATOR) {
            for (i = 0; i < k; i++) shmem_long_atomic_inc(s->word, s->partner);
            shmem_quiet();
        }
        break;
    case OP_SET_RATE:
        if (s->role == INITIATOR) {
            for (i = 0; i < k; i++) shmem_long_atomic_set(s->word, ++s->seq, s->partner);
            shmem_quiet();
        }
        break;
    case OP_BARRIER:
        for (i = 0; i < k; i++) shmem_barrier_all();
        break;
    case OP_BROADCAST:
        for (i = 0; i < k; i++) {
            s->flip ^= 1;
            shmem_broadcast64(s->dst, s->sym, s->bytes / 8, 0, 0, 0, s->n, s->psync[s->flip]);
        }
        break;
    case OP_FCOLLECT:
        for (i = 0; i < k; i++) {
            s->flip ^= 1;
            shmem_fcollect64(s->dst, s->sym, s->bytes / 8, 0, 0, s->n, s->psync[s->flip]);
        }
        break;
    case OP_ALLTOALL:
        for (i = 0; i < k; i++) {
            s->flip ^= 1;
            shmem_alltoall64(s->dst, s->sym, s->bytes / 8, 0, 0, s->n, s->psync[s->flip]);
        }
        break;
    case OP_REDUCE:
        for (i = 0; i < k; i++) {
            s->flip ^= 1;
            shmem_long_sum_to_all((long *)s->dst, (const long *)s->sym, (int)(s->bytes / 8), 0, 0, s->n, s->pwrk,
                                  s->psync[s->flip]);
        }
        break;
    case OP_UNKNOWN:
        break;
    }
}

/* Runs one case; fills samples[0..reps) with per-operation microseconds. */
static void run_case(const struct plan_case *c, enum op_kind kind, int pairs, double *samples) {
    int me = shmem_my_pe(), n = shmem_n_pes(), half = n / 2;
    struct state s;
    size_t i;
    long r;
    memset(&s, 0, sizeof s);
    s.kind = kind;
    s.bytes = c->bytes;
    if (pairs && n < 2) die("point-to-point cases need at least 2 PEs");
    if (me < half) {
        s.role = INITIATOR;
        s.partner = me + half;
    } else if (me < 2 * half) {
        s.role = TARGET;
        s.partner = me - half;
    } else {
        s.role = IDLE;
        s.partner = -1;
    }
    if (kind == OP_PUT || kind == OP_PUT_NBI || kind == OP_PUT_NBI_RATE || kind == OP_GET || kind == OP_GET_NBI) {
        s.sym = shmem_malloc(c->bytes);
        s.local = malloc(c->bytes);
        if (!s.sym || !s.local) die("out of symmetric memory (SMA_SYMMETRIC_SIZE too small?)");
        memset(s.sym, 0, c->bytes);
        for (i = 0; i < c->bytes; i++) s.local[i] = (kind == OP_GET || kind == OP_GET_NBI) ? 0 : pattern(i);
        if (kind == OP_GET || kind == OP_GET_NBI)
            for (i = 0; i < c->bytes; i++) s.sym[i] = pattern(i);
    } else if (kind == OP_SIGNAL_PINGPONG) {
        s.sym = shmem_malloc(c->bytes);
        s.word = shmem_malloc(sizeof(long));
        s.local = malloc(c->bytes);
        if (!s.sym || !s.word || !s.local) die("out of symmetric memory (SMA_SYMMETRIC_SIZE too small?)");
        memset(s.sym, 0, c->bytes);
        for (i = 0; i < c->bytes; i++) s.local[i] = pattern(i);
        *s.word = 0;
    } else if (kind == OP_P || kind == OP_G || kind == OP_PINGPONG || kind == OP_FETCH_ADD || kind == OP_ADD ||
               kind == OP_COMPARE_SWAP || kind == OP_FETCH || kind == OP_ADD_RATE || kind == OP_INC_RATE || kind == OP_SET_RATE) {
        s.word = shmem_malloc(sizeof(long));
        if (!s.word) die("out of memory");
        *s.word = (kind == OP_G || kind == OP_FETCH) ? 0x5eed0000L + me : 0;
    } else if (kind == OP_BROADCAST || kind == OP_FCOLLECT || kind == OP_ALLTOALL || kind == OP_REDUCE) {
        size_t src_bytes = (kind == OP_ALLTOALL) ? (size_t)n * c->bytes : c->bytes;
        size_t dst_bytes = (kind == OP_FCOLLECT || kind == OP_ALLTOALL) ? (size_t)n * c->bytes : c->bytes;
        int j;
        if (c->bytes % 8) die("collective sizes must be multiples of 8 bytes");
        s.sym = shmem_malloc(src_bytes);
        s.dst = shmem_malloc(dst_bytes);
        if (!s.sym || !s.dst) die("out of symmetric memory (SMA_SYMMETRIC_SIZE too small?)");
        if (kind == OP_REDUCE) /* small values: the sums stay far from overflow */
            for (i = 0; i < c->bytes / 8; i++) ((long *)s.sym)[i] = (long)(me + 1) * (long)(i + 1);
        else
            for (i = 0; i < src_bytes; i++) s.sym[i] = pattern(i + (size_t)me);
        memset(s.dst, 0, dst_bytes);
        if (kind == OP_REDUCE) {
            size_t nwrk = c->bytes / 8 / 2 + 1;
            if (nwrk < SHMEM_REDUCE_MIN_WRKDATA_SIZE) nwrk = SHMEM_REDUCE_MIN_WRKDATA_SIZE;
            s.pwrk = shmem_malloc(nwrk * sizeof(long));
            if (!s.pwrk) die("out of symmetric memory (SMA_SYMMETRIC_SIZE too small?)");
        }
        for (j = 0; j < 2; j++) {
            s.psync[j] = shmem_malloc(SYNC_SIZE * sizeof(long));
            if (!s.psync[j]) die("out of memory");
            for (i = 0; i < SYNC_SIZE; i++) s.psync[j][i] = SHMEM_SYNC_VALUE;
        }
    }
    s.n = n;
    shmem_barrier_all();
    if (c->warmup > 0) body(&s, c->warmup);
    for (r = 0; r < c->reps; r++) {
        double t0;
        shmem_barrier_all();
        t0 = now_us();
        body(&s, c->iters);
        samples[r] = (now_us() - t0) / (double)c->iters;
        if (kind == OP_PINGPONG || kind == OP_SIGNAL_PINGPONG) samples[r] /= 2.0; /* half a round trip */
    }
    shmem_barrier_all();
    if (s.sym) shmem_free(s.sym);
    if (s.word) shmem_free(s.word);
    if (s.dst) shmem_free(s.dst);
    if (s.pwrk) shmem_free(s.pwrk);
    if (s.psync[0]) shmem_free(s.psync[0]);
    if (s.psync[1]) shmem_free(s.psync[1]);
    free(s.local);
}

/* Prints this PE's INFO binding line: the CPUs it may run on. */
static void print_binding(int me) {
    char line[4096], cpus[4096] = "unknown";
    FILE *st = fopen("/proc/self/status", "r");
    if (st) {
        while (fgets(line, sizeof line, st))
            if (strncmp(line, "Cpus_allowed_list:", 18) == 0 && sscanf(line + 18, " %4095s", cpus) == 1) break;
        fclose(st);
    }
    printf("INFO binding PE %d cpus %s\n", me, cpus);
    fflush(stdout);
}

/* Prints the INFO line that says which implementation this is. */
static void print_implementation(void) {
#ifdef OSHMEM_MAJOR_VERSION
    printf("INFO Open MPI OpenSHMEM %d.%d.%d (OpenSHMEM %d.%d API)\n", OSHMEM_MAJOR_VERSION, OSHMEM_MINOR_VERSION,
           OSHMEM_RELEASE_VERSION, SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
#else
    char name[SHMEM_MAX_NAME_LEN];
    int major = 0, minor = 0;
    shmem_info_get_name(name);
    shmem_info_get_version(&major, &minor);
    printf("INFO %s (OpenSHMEM %d.%d API)\n", name, major, minor);
#endif
    fflush(stdout);
}

int main(int argc, char **argv) {
    FILE *f;
    char line[512];
    struct plan_case *cases = NULL;
    size_t n_cases = 0, cap = 0, k;
    int me;

    shmem_init();
    me = shmem_my_pe();
    if (argc != 2) die("usage: oshmem_perf PLAN_FILE");
    f = fopen(argv[1], "r");
    if (!f) die("cannot open the plan file");
    while (fgets(line, sizeof line, f)) {
        struct plan_case c;
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || *p == '\0') continue;
        if (sscanf(p, "case %63s %zu %ld %ld %ld", c.op, &c.bytes, &c.iters, &c.warmup, &c.reps) != 5 || c.iters < 1 ||
            c.reps < 1 || c.warmup < 0)
            die("malformed plan line");
        if (n_cases == cap) {
            cap = cap ? 2 * cap : 64;
            cases = realloc(cases, cap * sizeof *cases);
            if (!cases) die("out of memory");
        }
        cases[n_cases++] = c;
    }
    fclose(f);

    if (me == 0) print_implementation();
    print_binding(me);
    for (k = 0; k < n_cases; k++) {
        const struct plan_case *c = &cases[k];
        enum op_kind kind = OP_UNKNOWN;
        int pairs = 0;
        size_t j;
        double *samples;
        for (j = 0; j < sizeof OPS / sizeof OPS[0]; j++)
            if (strcmp(OPS[j].name, c->op) == 0) {
                kind = OPS[j].kind;
                pairs = OPS[j].pairs;
            }
        if (kind == OP_UNKNOWN) {
            const char *reason = "this anchor has no such operation";
            for (j = 0; j < sizeof MISSING / sizeof MISSING[0]; j++)
                if (strcmp(MISSING[j].name, c->op) == 0) reason = MISSING[j].reason;
            if (me == 0) printf("SKIP op=%s bytes=%zu reason=%s\n", c->op, c->bytes, reason);
            fflush(stdout);
            continue;
        }
        samples = malloc((size_t)c->reps * sizeof *samples);
        if (!samples) die("out of memory");
        run_case(c, kind, pairs, samples);
        if (me == 0) {
            double median;
            long m = c->reps / 2;
            qsort(samples, (size_t)c->reps, sizeof *samples, cmp_double);
            median = (c->reps % 2) ? samples[m] : (samples[m - 1] + samples[m]) / 2.0;
            printf("RESULT op=%s bytes=%zu iters=%ld reps=%ld median_us=%.6f min_us=%.6f max_us=%.6f\n", c->op, c->bytes, c->iters,
                   c->reps, median, samples[0], samples[c->reps - 1]);
            fflush(stdout);
        }
        free(samples);
    }
    free(cases);
    shmem_finalize();
    return 0;
}
