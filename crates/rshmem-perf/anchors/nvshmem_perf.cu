/*
 * nvshmem_perf.cu: the NVSHMEM anchor of rshmem-perf's GPU suite.
 *
 * Our own program, written for rshmem from NVSHMEM's documented API (no code of NVSHMEM
 * or of its perftests). rshmem-perf compiles it with nvcc (-rdc=true, NVSHMEM's host and
 * device libraries, Open MPI's flags) and starts it with mpirun -np N; NVSHMEM is
 * initialized with a unique id broadcast over MPI.
 *
 * It reads the plan, runs every case with the kernels and timing of rshmem's GPU PEs
 * (crates/rshmem-perf/src/gpu/perf.cu and pe.rs) through NVSHMEM's calls, and prints one
 * protocol line per case from PE 0 (gpu_anchor.h). Timing: a barrier, the warm-up, then
 * REPS times { MPI barrier; ITERS iterations enqueued on one stream between two CUDA
 * events }; per-operation time = elapsed / ITERS. Point-to-point cases run on pairs
 * (PE i < N/2 drives PE i + N/2).
 *
 * With several processes per GPU and no MPS ("limited MPG"), NVSHMEM runs no collectives
 * (it ends the job when one is called): the device barrier and on-stream cases are then
 * SKIPped, unless RSHMEM_PERF_NVSHMEM_MPG_COLL=1 (say, with MPS running).
 */
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdint.h>
#include "gpu_anchor.h"

static const char *WHO = "nvshmem_perf";
static int g_rank = 0;
#define CK(x) ANCHOR_CK(WHO, g_rank, x)

typedef uint64_t u64;

__device__ __forceinline__ void part(u64 bytes, u64 u, u64 units, u64 *start, u64 *len) {
    u64 piece = ((bytes + units - 1) / units + 15) & ~(u64)15;
    u64 s = u * piece;
    *start = s;
    *len = s >= bytes ? 0 : (bytes - s < piece ? bytes - s : piece);
}

/* scope 0: every thread, 1: every warp, 2: every block moves its part; dir 0 put, 1 get. */
__global__ void __launch_bounds__(1024) perf_bw(char *dst, const char *src, u64 bytes, int scope, int dir, int pe) {
    u64 unit, units;
    if (scope == 0) {
        unit = blockIdx.x * (u64)blockDim.x + threadIdx.x;
        units = gridDim.x * (u64)blockDim.x;
    } else if (scope == 1) {
        u64 warps = (blockDim.x + 31) / 32;
        unit = blockIdx.x * warps + threadIdx.x / 32;
        units = gridDim.x * warps;
    } else {
        unit = blockIdx.x;
        units = gridDim.x;
    }
    u64 start, len;
    part(bytes, unit, units, &start, &len);
    if (len > 0) {
        if (dir == 0) {
            if (scope == 0) nvshmem_putmem_nbi(dst + start, src + start, len, pe);
            else if (scope == 1) nvshmemx_putmem_nbi_warp(dst + start, src + start, len, pe);
            else nvshmemx_putmem_nbi_block(dst + start, src + start, len, pe);
        } else {
            if (scope == 0) nvshmem_getmem_nbi(dst + start, src + start, len, pe);
            else if (scope == 1) nvshmemx_getmem_nbi_warp(dst + start, src + start, len, pe);
            else nvshmemx_getmem_nbi_block(dst + start, src + start, len, pe);
        }
    }
    nvshmem_quiet();
}

/* kind 0: putmem + quiet, 1: getmem, 2: p + quiet, 3: g, 4: fetch_add (dependent). */
__global__ void perf_lat(char *dst, const char *src, u64 bytes, int kind, int iters, u64 mask, u64 seq0, u64 *out, int pe) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    u64 acc = 0;
    for (int i = 0; i < iters; i++) {
        u64 off = acc & mask;
        switch (kind) {
            case 0: nvshmem_putmem(dst + off, src, bytes, pe); nvshmem_quiet(); break;
            case 1: nvshmem_getmem(dst + off, src, bytes, pe); break;
            case 2: nvshmem_uint64_p((u64 *)(dst + off), seq0 + (u64)i + 1, pe); nvshmem_quiet(); break;
            case 3: acc += nvshmem_uint64_g((const u64 *)(src + off), pe); break;
            case 4: acc += nvshmem_uint64_atomic_fetch_add((u64 *)(dst + off), (u64)1, pe); break;
        }
    }
    out[0] += acc;
}

__global__ void perf_sigpp(char *data, const char *src, u64 bytes, u64 *sig, u64 seq0, int iters, int initiator, int pe) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (int i = 0; i < iters; i++) {
        u64 seq = seq0 + (u64)i + 1;
        if (initiator) {
            nvshmem_putmem_signal(data, src, bytes, sig, seq, NVSHMEM_SIGNAL_SET, pe);
            nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, seq);
        } else {
            nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, seq);
            nvshmem_putmem_signal(data, src, bytes, sig, seq, NVSHMEM_SIGNAL_SET, pe);
        }
    }
}

__global__ void perf_barrier(int iters) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (int i = 0; i < iters; i++) nvshmem_barrier_all();
}

enum kind { K_BW, K_LAT, K_SIGPP, K_DBARRIER, K_COLL };
enum coll { C_BARRIER, C_BROADCAST, C_FCOLLECT, C_ALLTOALL, C_REDUCE, C_REDUCE_SCATTER };

static const struct opdef {
    const char *name;
    int kind;
    int grid;  /* K_BW: one block per SM (else one block) */
    int scope; /* K_BW: 0 thread, 1 warp, 2 block */
    int dir;   /* K_BW: 0 put, 1 get */
    int sub;   /* K_LAT: perf_lat kind; K_COLL: enum coll */
    int pairs;
} OPS[] = {
    {"put_bw", K_BW, 1, 2, 0, 0, 1},
    {"get_bw", K_BW, 1, 2, 1, 0, 1},
    {"put_bw_block", K_BW, 0, 2, 0, 0, 1},
    {"get_bw_block", K_BW, 0, 2, 1, 0, 1},
    {"put_bw_warp", K_BW, 0, 1, 0, 0, 1},
    {"get_bw_warp", K_BW, 0, 1, 1, 0, 1},
    {"put_bw_thread", K_BW, 0, 0, 0, 0, 1},
    {"get_bw_thread", K_BW, 0, 0, 1, 0, 1},
    {"put_lat", K_LAT, 0, 0, 0, 0, 1},
    {"get_lat", K_LAT, 0, 0, 0, 1, 1},
    {"p", K_LAT, 0, 0, 0, 2, 1},
    {"g", K_LAT, 0, 0, 0, 3, 1},
    {"fetch_add", K_LAT, 0, 0, 0, 4, 1},
    {"signal_pingpong", K_SIGPP, 0, 0, 0, 0, 1},
    {"barrier", K_DBARRIER, 0, 0, 0, 0, 0},
    {"barrier_on_stream", K_COLL, 0, 0, 0, C_BARRIER, 0},
    {"broadcast_on_stream", K_COLL, 0, 0, 0, C_BROADCAST, 0},
    {"fcollect_on_stream", K_COLL, 0, 0, 0, C_FCOLLECT, 0},
    {"alltoall_on_stream", K_COLL, 0, 0, 0, C_ALLTOALL, 0},
    {"reduce_on_stream", K_COLL, 0, 0, 0, C_REDUCE, 0},
    {"reduce_scatter_on_stream", K_COLL, 0, 0, 0, C_REDUCE_SCATTER, 0},
};

struct env {
    int me, n, sms;
    cudaStream_t st;
    cudaEvent_t a, b;
};

/* Enqueues k iterations of case c on the stream. */
static void body(const struct env *E, const struct opdef *o, const struct plan_case *c, long k, char *src, char *dst,
                 u64 *word, int partner, int initiator, u64 *seq) {
    size_t nel = c->bytes / 8;
    long i;
    switch (o->kind) {
        case K_BW:
            for (i = 0; i < k; i++)
                perf_bw<<<o->grid ? E->sms : 1, 1024, 0, E->st>>>(dst, src, (u64)c->bytes, o->scope, o->dir, partner);
            break;
        case K_LAT:
            perf_lat<<<1, 1, 0, E->st>>>(dst, src, (u64)c->bytes, o->sub, (int)k, 0, *seq, word, partner);
            *seq += (u64)k;
            break;
        case K_SIGPP:
            perf_sigpp<<<1, 1, 0, E->st>>>(dst, src, (u64)c->bytes, word, *seq, (int)k, initiator, partner);
            *seq += (u64)k;
            break;
        case K_DBARRIER:
            perf_barrier<<<1, 1, 0, E->st>>>((int)k);
            break;
        case K_COLL:
            for (i = 0; i < k; i++) {
                int64_t *d = (int64_t *)dst;
                const int64_t *s = (const int64_t *)src;
                switch (o->sub) {
                    case C_BARRIER: nvshmemx_barrier_all_on_stream(E->st); break;
                    case C_BROADCAST: nvshmemx_int64_broadcast_on_stream(NVSHMEM_TEAM_WORLD, d, s, nel, 0, E->st); break;
                    case C_FCOLLECT: nvshmemx_int64_fcollect_on_stream(NVSHMEM_TEAM_WORLD, d, s, nel, E->st); break;
                    case C_ALLTOALL: nvshmemx_int64_alltoall_on_stream(NVSHMEM_TEAM_WORLD, d, s, nel, E->st); break;
                    case C_REDUCE: nvshmemx_int64_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, d, s, nel, E->st); break;
                    case C_REDUCE_SCATTER: nvshmemx_int64_sum_reducescatter_on_stream(NVSHMEM_TEAM_WORLD, d, s, nel, E->st); break;
                }
            }
            break;
    }
    CK(cudaGetLastError());
}

static void run_case(const struct env *E, const struct opdef *o, const struct plan_case *c, double *samples) {
    int half = E->n / 2, partner = -1, initiator = 0, runs;
    size_t src_bytes = c->bytes < 8 ? 8 : c->bytes, dst_bytes = src_bytes;
    char *src, *dst;
    u64 *word, seq = 0;
    long r;
    if (E->me < half) {
        partner = E->me + half;
        initiator = 1;
    } else if (E->me < 2 * half) {
        partner = E->me - half;
    }
    if (o->kind == K_COLL) {
        size_t n = (size_t)E->n;
        if (o->sub == C_FCOLLECT) dst_bytes = n * c->bytes;
        if (o->sub == C_ALLTOALL) src_bytes = dst_bytes = n * c->bytes;
        if (o->sub == C_REDUCE_SCATTER) src_bytes = n * c->bytes;
        if (src_bytes < 8) src_bytes = 8;
        if (dst_bytes < 8) dst_bytes = 8;
    }
    src = (char *)nvshmem_malloc(src_bytes);
    dst = (char *)nvshmem_malloc(dst_bytes);
    word = (u64 *)nvshmem_malloc(sizeof(u64));
    if (!src || !dst || !word) anchor_die(WHO, g_rank, "nvshmem_malloc failed (NVSHMEM_SYMMETRIC_SIZE too small?)");
    CK(cudaMemset(src, 0x5a, src_bytes));
    CK(cudaMemset(dst, 0, dst_bytes));
    CK(cudaMemset(word, 0, sizeof(u64)));
    CK(cudaDeviceSynchronize());
    if (o->kind == K_BW || o->kind == K_LAT) runs = initiator;
    else if (o->kind == K_SIGPP) runs = partner >= 0;
    else runs = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (runs && c->warmup > 0) {
        body(E, o, c, c->warmup, src, dst, word, partner, initiator, &seq);
        CK(cudaStreamSynchronize(E->st));
    }
    for (r = 0; r < c->reps; r++) {
        float ms = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        if (!runs) {
            samples[r] = 0;
            continue;
        }
        CK(cudaEventRecord(E->a, E->st));
        body(E, o, c, c->iters, src, dst, word, partner, initiator, &seq);
        CK(cudaEventRecord(E->b, E->st));
        CK(cudaEventSynchronize(E->b));
        CK(cudaEventElapsedTime(&ms, E->a, E->b));
        samples[r] = (double)ms * 1e3 / (double)c->iters;
        if (o->kind == K_SIGPP) samples[r] /= 2.0; /* half a round trip */
    }
    CK(cudaStreamSynchronize(E->st));
    MPI_Barrier(MPI_COMM_WORLD);
    nvshmem_free(word);
    nvshmem_free(dst);
    nvshmem_free(src);
}

int main(int argc, char **argv) {
    int nranks, ndev = 0, local, mpg, allow_coll;
    struct env E;
    struct plan_case *cases;
    size_t n_cases, k;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 2) anchor_die(WHO, g_rank, "usage: nvshmem_perf PLAN_FILE");
    CK(cudaGetDeviceCount(&ndev));
    if (ndev < 1) anchor_die(WHO, g_rank, "no GPU");
    CK(cudaSetDevice(g_rank % ndev));
    local = anchor_local_ranks();
    mpg = local > ndev;
    allow_coll = !mpg || (getenv("RSHMEM_PERF_NVSHMEM_MPG_COLL") && strcmp(getenv("RSHMEM_PERF_NVSHMEM_MPG_COLL"), "1") == 0);

    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (g_rank == 0) nvshmemx_get_uniqueid(&id);
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_set_attr_uniqueid_args(g_rank, nranks, &id, &attr);
    if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0) anchor_die(WHO, g_rank, "nvshmemx_init_attr failed");
    E.me = nvshmem_my_pe();
    E.n = nvshmem_n_pes();
    CK(cudaDeviceGetAttribute(&E.sms, cudaDevAttrMultiProcessorCount, g_rank % ndev));
    CK(cudaStreamCreateWithFlags(&E.st, cudaStreamNonBlocking));
    CK(cudaEventCreate(&E.a));
    CK(cudaEventCreate(&E.b));
    n_cases = anchor_read_plan(WHO, g_rank, argv[1], &cases);

    if (E.me == 0) {
        int maj = 0, min = 0;
        char name[NVSHMEM_MAX_NAME_LEN];
        nvshmem_info_get_version(&maj, &min);
        nvshmem_info_get_name(name);
        printf("INFO NVSHMEM %d.%d (%s), %d PEs on %d GPU(s)%s\n", maj, min, name, E.n, ndev,
               mpg ? (allow_coll ? ", several PEs per GPU (collectives forced on)" : ", several PEs per GPU: no collectives (limited MPG)") : "");
        fflush(stdout);
    }
    for (k = 0; k < n_cases; k++) {
        const struct plan_case *c = &cases[k];
        const struct opdef *o = NULL;
        double *samples;
        size_t j;
        for (j = 0; j < sizeof OPS / sizeof OPS[0]; j++)
            if (strcmp(OPS[j].name, c->op) == 0) o = &OPS[j];
        if (!o) {
            if (E.me == 0) anchor_skip(c, "this anchor has no such operation");
            continue;
        }
        if ((o->kind == K_COLL || o->kind == K_DBARRIER) && !allow_coll) {
            if (E.me == 0) anchor_skip(c, "NVSHMEM runs no collectives with several PEs per GPU without MPS (limited MPG)");
            continue;
        }
        if (o->pairs && E.n < 2) anchor_die(WHO, g_rank, "point-to-point cases need at least 2 PEs");
        samples = (double *)malloc((size_t)c->reps * sizeof *samples);
        if (!samples) anchor_die(WHO, g_rank, "out of memory");
        run_case(&E, o, c, samples);
        if (E.me == 0) anchor_result(c, samples);
        free(samples);
    }
    free(cases);
    MPI_Barrier(MPI_COMM_WORLD);
    nvshmem_finalize();
    MPI_Finalize();
    return 0;
}
