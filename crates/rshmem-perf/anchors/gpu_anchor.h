/*
 * gpu_anchor.h: what rshmem-perf's GPU anchors (nvshmem_perf.cu, nccl_perf.cu) share:
 * reading the plan file, summarizing repetitions, printing protocol lines. Our own code
 * (rshmem-perf), written for rshmem from the plan format of crates/rshmem-perf/src/plan.rs
 * and the line protocol of crates/rshmem-perf/src/protocol.rs.
 *
 * Plan: one case per line, "case OP BYTES ITERS WARMUP REPS"; '#' starts a comment.
 * Lines, printed by PE 0 only, one per case in plan order:
 *   RESULT op=OP bytes=B iters=I reps=R median_us=M min_us=MIN max_us=MAX
 *   SKIP op=OP bytes=B reason=WHY
 */
#ifndef RSHMEM_PERF_GPU_ANCHOR_H
#define RSHMEM_PERF_GPU_ANCHOR_H

#include <cuda_runtime.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct plan_case {
    char op[64];
    size_t bytes;
    long iters, warmup, reps;
};

static void anchor_die(const char *who, int rank, const char *msg) {
    fprintf(stderr, "%s: rank %d: %s\n", who, rank, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define ANCHOR_CK(who, rank, x)                                                                  \
    do {                                                                                         \
        cudaError_t e_ = (x);                                                                    \
        if (e_ != cudaSuccess) {                                                                 \
            char m_[512];                                                                        \
            snprintf(m_, sizeof m_, "%s failed: %s (line %d)", #x, cudaGetErrorString(e_), __LINE__); \
            anchor_die(who, rank, m_);                                                           \
        }                                                                                        \
    } while (0)

/* Reads the plan; returns the number of cases (the array in *out, malloc'ed). */
static size_t anchor_read_plan(const char *who, int rank, const char *path, struct plan_case **out) {
    FILE *f = fopen(path, "r");
    char line[512];
    size_t n = 0, cap = 0;
    struct plan_case *cases = NULL;
    if (!f) anchor_die(who, rank, "cannot open the plan file");
    while (fgets(line, sizeof line, f)) {
        struct plan_case c;
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || *p == '\0') continue;
        if (sscanf(p, "case %63s %zu %ld %ld %ld", c.op, &c.bytes, &c.iters, &c.warmup, &c.reps) != 5 || c.iters < 1 ||
            c.reps < 1 || c.warmup < 0)
            anchor_die(who, rank, "malformed plan line");
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            cases = (struct plan_case *)realloc(cases, cap * sizeof *cases);
            if (!cases) anchor_die(who, rank, "out of memory");
        }
        cases[n++] = c;
    }
    fclose(f);
    *out = cases;
    return n;
}

static int anchor_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Prints the RESULT line of a case from its per-operation microseconds (sorts them). */
static void anchor_result(const struct plan_case *c, double *samples) {
    long m = c->reps / 2;
    double median;
    qsort(samples, (size_t)c->reps, sizeof *samples, anchor_cmp_double);
    median = (c->reps % 2) ? samples[m] : (samples[m - 1] + samples[m]) / 2.0;
    printf("RESULT op=%s bytes=%zu iters=%ld reps=%ld median_us=%.6f min_us=%.6f max_us=%.6f\n", c->op, c->bytes, c->iters,
           c->reps, median, samples[0], samples[c->reps - 1]);
    fflush(stdout);
}

static void anchor_skip(const struct plan_case *c, const char *reason) {
    printf("SKIP op=%s bytes=%zu reason=%s\n", c->op, c->bytes, reason);
    fflush(stdout);
}

/* Number of ranks of this job on this host. */
static inline int anchor_local_ranks(void) {
    MPI_Comm node;
    int n = 1;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    return n;
}

#endif
