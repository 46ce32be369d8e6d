/*
 * nccl_perf.cu: the NCCL anchor of rshmem-perf's GPU suite.
 *
 * Our own program, written for rshmem from NCCL's documented API (ncclGetUniqueId,
 * ncclCommInitRank, ncclAllReduce, ncclBroadcast, ncclAllGather, ncclReduceScatter,
 * ncclSend/ncclRecv in a group). rshmem-perf compiles it with nvcc against the NCCL
 * library found (the GPU host's wheel) and Open MPI's flags and starts it with mpirun -np N;
 * the NCCL unique id is broadcast over MPI.
 *
 * NCCL has collectives only: the on-stream collective cases of the plan run here, timed
 * like rshmem's (a barrier, the warm-up, then REPS times { MPI barrier; ITERS collectives
 * enqueued on one stream between two CUDA events }), with the same sizes: 64-bit integers,
 * sums; alltoall is one ncclSend and one ncclRecv per peer in a group. Every other case is
 * SKIPped with why. When NCCL refuses the job (NCCL before 2.30 refuses two ranks on one
 * GPU), every case is SKIPped with NCCL's message, and the program ends cleanly.
 */
#include <nccl.h>
#include <stdint.h>
#include "gpu_anchor.h"

static const char *WHO = "nccl_perf";
static int g_rank = 0;
#define CK(x) ANCHOR_CK(WHO, g_rank, x)

enum coll { C_BROADCAST, C_ALLGATHER, C_ALLTOALL, C_ALLREDUCE, C_REDUCE_SCATTER };

static const struct {
    const char *name;
    int coll;
} OPS[] = {
    {"broadcast_on_stream", C_BROADCAST},
    {"fcollect_on_stream", C_ALLGATHER},
    {"alltoall_on_stream", C_ALLTOALL},
    {"reduce_on_stream", C_ALLREDUCE},
    {"reduce_scatter_on_stream", C_REDUCE_SCATTER},
};

/* The GPU suite's other operations, with why NCCL has no counterpart. */
static const struct {
    const char *name;
    const char *reason;
} MISSING[] = {
    {"put_bw", "NCCL has no one-sided put"},
    {"get_bw", "NCCL has no one-sided get"},
    {"put_bw_block", "NCCL has no one-sided put"},
    {"get_bw_block", "NCCL has no one-sided get"},
    {"put_bw_warp", "NCCL has no one-sided put"},
    {"get_bw_warp", "NCCL has no one-sided get"},
    {"put_bw_thread", "NCCL has no one-sided put"},
    {"get_bw_thread", "NCCL has no one-sided get"},
    {"put_lat", "NCCL has no one-sided put"},
    {"get_lat", "NCCL has no one-sided get"},
    {"p", "NCCL has no one-sided put"},
    {"g", "NCCL has no one-sided get"},
    {"fetch_add", "NCCL has no atomics"},
    {"signal_pingpong", "NCCL has no put-with-signal"},
    {"barrier", "NCCL has no barrier"},
    {"barrier_on_stream", "NCCL has no barrier"},
};

static void nccl_check(ncclResult_t r, const char *what) {
    if (r != ncclSuccess) {
        char m[512];
        snprintf(m, sizeof m, "%s failed: %s", what, ncclGetErrorString(r));
        anchor_die(WHO, g_rank, m);
    }
}

static void enqueue(int coll, ncclComm_t comm, cudaStream_t st, int n, size_t nel, const int64_t *src, int64_t *dst) {
    int p;
    switch (coll) {
        case C_BROADCAST: nccl_check(ncclBroadcast(src, dst, nel, ncclInt64, 0, comm, st), "ncclBroadcast"); break;
        case C_ALLGATHER: nccl_check(ncclAllGather(src, dst, nel, ncclInt64, comm, st), "ncclAllGather"); break;
        case C_ALLREDUCE: nccl_check(ncclAllReduce(src, dst, nel, ncclInt64, ncclSum, comm, st), "ncclAllReduce"); break;
        case C_REDUCE_SCATTER:
            nccl_check(ncclReduceScatter(src, dst, nel, ncclInt64, ncclSum, comm, st), "ncclReduceScatter");
            break;
        case C_ALLTOALL:
            nccl_check(ncclGroupStart(), "ncclGroupStart");
            for (p = 0; p < n; p++) {
                nccl_check(ncclSend(src + (size_t)p * nel, nel, ncclInt64, p, comm, st), "ncclSend");
                nccl_check(ncclRecv(dst + (size_t)p * nel, nel, ncclInt64, p, comm, st), "ncclRecv");
            }
            nccl_check(ncclGroupEnd(), "ncclGroupEnd");
            break;
    }
}

int main(int argc, char **argv) {
    int nranks, ndev = 0, version = 0, ok, all_ok;
    ncclUniqueId id;
    ncclComm_t comm = NULL;
    ncclResult_t init;
    cudaStream_t st;
    cudaEvent_t a, b;
    struct plan_case *cases;
    size_t n_cases, k;
    char why[600] = "";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 2) anchor_die(WHO, g_rank, "usage: nccl_perf PLAN_FILE");
    CK(cudaGetDeviceCount(&ndev));
    if (ndev < 1) anchor_die(WHO, g_rank, "no GPU");
    CK(cudaSetDevice(g_rank % ndev));
    n_cases = anchor_read_plan(WHO, g_rank, argv[1], &cases);
    ncclGetVersion(&version);
    if (g_rank == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    init = ncclCommInitRank(&comm, nranks, id, g_rank);
    ok = init == ncclSuccess;
    if (!ok) snprintf(why, sizeof why, "NCCL refused this job: %s: %s", ncclGetErrorString(init), ncclGetLastError(NULL));
    /* Every rank learns whether all could join; a refused job skips every case. */
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok && ok) snprintf(why, sizeof why, "NCCL refused this job on another rank");
    if (g_rank == 0 && !ok) {
        /* the reason goes on one line */
        char *c;
        for (c = why; *c; c++)
            if (*c == '\n' || *c == '\r') *c = ' ';
    }
    if (!all_ok && g_rank != 0) {
        /* rank 0 has the reason to print; say it here too */
        fprintf(stderr, "nccl_perf: rank %d: %s\n", g_rank, why);
    }
    if (g_rank == 0)
        printf("INFO NCCL %d.%d.%d, %d ranks on %d GPU(s)\n", version / 10000, (version / 100) % 100, version % 100, nranks, ndev);
    fflush(stdout);
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (k = 0; k < n_cases; k++) {
        const struct plan_case *c = &cases[k];
        int coll = -1;
        const char *reason = "this anchor has no such operation";
        size_t j, nel = c->bytes / 8, n = (size_t)nranks, src_n, dst_n;
        int64_t *src = NULL, *dst = NULL;
        double *samples;
        long r;
        for (j = 0; j < sizeof OPS / sizeof OPS[0]; j++)
            if (strcmp(OPS[j].name, c->op) == 0) coll = OPS[j].coll;
        for (j = 0; j < sizeof MISSING / sizeof MISSING[0]; j++)
            if (strcmp(MISSING[j].name, c->op) == 0) reason = MISSING[j].reason;
        if (coll < 0 || !all_ok) {
            if (g_rank == 0) anchor_skip(c, coll < 0 ? reason : why);
            continue;
        }
        src_n = (coll == C_ALLTOALL || coll == C_REDUCE_SCATTER) ? n * nel : nel;
        dst_n = (coll == C_ALLTOALL || coll == C_ALLGATHER) ? n * nel : nel;
        CK(cudaMalloc((void **)&src, (src_n ? src_n : 1) * sizeof(int64_t)));
        CK(cudaMalloc((void **)&dst, (dst_n ? dst_n : 1) * sizeof(int64_t)));
        CK(cudaMemset(src, 1, (src_n ? src_n : 1) * sizeof(int64_t)));
        CK(cudaMemset(dst, 0, (dst_n ? dst_n : 1) * sizeof(int64_t)));
        CK(cudaDeviceSynchronize());
        samples = (double *)malloc((size_t)c->reps * sizeof *samples);
        if (!samples) anchor_die(WHO, g_rank, "out of memory");
        MPI_Barrier(MPI_COMM_WORLD);
        if (c->warmup > 0) {
            for (r = 0; r < c->warmup; r++) enqueue(coll, comm, st, nranks, nel, src, dst);
            CK(cudaStreamSynchronize(st));
        }
        for (r = 0; r < c->reps; r++) {
            long i;
            float ms = 0;
            MPI_Barrier(MPI_COMM_WORLD);
            CK(cudaEventRecord(a, st));
            for (i = 0; i < c->iters; i++) enqueue(coll, comm, st, nranks, nel, src, dst);
            CK(cudaEventRecord(b, st));
            CK(cudaEventSynchronize(b));
            CK(cudaEventElapsedTime(&ms, a, b));
            samples[r] = (double)ms * 1e3 / (double)c->iters;
        }
        CK(cudaStreamSynchronize(st));
        MPI_Barrier(MPI_COMM_WORLD);
        if (g_rank == 0) anchor_result(c, samples);
        free(samples);
        CK(cudaFree(src));
        CK(cudaFree(dst));
    }
    free(cases);
    if (ok) ncclCommDestroy(comm);
    MPI_Finalize();
    return 0;
}
