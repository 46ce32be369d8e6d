/* The C test of the C host API for GPU PEs (issue 19): C11 host code (gcc) over kernels built
 * by nvcc -rdc=true (c_kernels.cu) and the device library, run with 2 PEs under rshmemrun.
 * GPU heap, a kernel with device puts and a signal, on-stream collectives on a user stream,
 * a CUDA graph of on-stream calls, collective launch of a kernel defined in another file. */
#include <cuda_runtime_api.h>
#include <rshmemx_cuda.h>
#include <string.h>

#include "gpu_check.h"

int c_launch_put_signal(int *dst, const int *src, unsigned long *sig, int n, int peer, int blocks, cudaStream_t s);
int c_launch_fill(int *p, int n, int base, cudaStream_t s);
const void *c_grid_count_kernel(void);

static char msg[256];

static int count_wrong(const int *got, int n, int base) {
    int bad = 0;
    for (int i = 0; i < n; i++) bad += got[i] != base + i;
    return bad;
}

int main(void) {
    gc_program = "c_host";
    rshmemx_cuda_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes(), peer = (me + 1) % npes, from = (me + npes - 1) % npes;
    const int n = 8192, blocks = 4;
    int *dst = (int *)rshmemx_cuda_malloc(n * sizeof(int));
    int *src = (int *)rshmemx_cuda_malloc(n * sizeof(int));
    uint64_t *sig = (uint64_t *)rshmemx_cuda_calloc(2, sizeof(uint64_t));
    int *host = (int *)malloc(n * npes * sizeof(int));
    cudaStream_t s;
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    gc_verdict("gpu_heap", dst && src && sig && rshmemx_cuda_device() >= 0, "");

    /* Device puts with a signal, one per block; the receiver's kernel waits for all. */
    CUDA_OK((cudaError_t)c_launch_fill(src, n, me * 100000, s));
    gc_stream_wait(s, 60, "fill");
    shmem_barrier_all();
    CUDA_OK((cudaError_t)c_launch_put_signal(dst, src, sig, n, peer, blocks, s));
    gc_stream_wait(s, 60, "device put_signal");
    CUDA_OK(cudaMemcpy(host, dst, n * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = count_wrong(host, n, from * 100000);
    snprintf(msg, sizeof msg, "%d of %d elements wrong", bad, n);
    gc_verdict("device_put_signal", bad == 0, msg);
    shmem_barrier_all();

    /* On-stream collectives on the user stream. */
    int *coll = (int *)rshmemx_cuda_malloc(n * npes * sizeof(int));
    int rc = rshmemx_int_sum_reduce_on_stream(SHMEM_TEAM_WORLD, dst, src, n, s);
    gc_stream_wait(s, 60, "int_sum_reduce_on_stream");
    CUDA_OK(cudaMemcpy(host, dst, n * sizeof(int), cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int p = 0; p < npes; p++) want += p * 100000 + i;
        bad += host[i] != want;
    }
    snprintf(msg, sizeof msg, "rc %d, %d wrong", rc, bad);
    gc_verdict("int_sum_reduce_on_stream", rc == 0 && bad == 0, msg);

    rc = rshmemx_int_fcollect_on_stream(SHMEM_TEAM_WORLD, coll, src, n, s);
    gc_stream_wait(s, 60, "int_fcollect_on_stream");
    CUDA_OK(cudaMemcpy(host, coll, n * npes * sizeof(int), cudaMemcpyDeviceToHost));
    bad = 0;
    for (int p = 0; p < npes; p++) bad += count_wrong(host + p * n, n, p * 100000);
    snprintf(msg, sizeof msg, "rc %d, %d wrong", rc, bad);
    gc_verdict("int_fcollect_on_stream", rc == 0 && bad == 0, msg);

    rc = rshmemx_broadcastmem_on_stream(SHMEM_TEAM_WORLD, dst, src, n * sizeof(int), 0, s);
    gc_stream_wait(s, 60, "broadcastmem_on_stream");
    CUDA_OK(cudaMemcpy(host, dst, n * sizeof(int), cudaMemcpyDeviceToHost));
    bad = count_wrong(host, n, 0);
    snprintf(msg, sizeof msg, "rc %d, %d wrong", rc, bad);
    gc_verdict("broadcastmem_on_stream", rc == 0 && bad == 0, msg);

    rc = rshmemx_uint64_xor_reduce_on_stream(SHMEM_TEAM_WORLD, sig + 1, sig, 1, s);
    gc_stream_wait(s, 60, "uint64_xor_reduce_on_stream");
    gc_verdict("uint64_xor_reduce_on_stream", rc == 0, "");

    /* A graph of on-stream calls: barrier, put with a signal, wait, reduce; replayed twice. */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_OK(cudaMemset(sig, 0, 2 * sizeof(uint64_t)));
    shmem_barrier_all();
    CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    rshmemx_barrier_all_on_stream(s);
    rshmemx_putmem_signal_on_stream(dst, src, n * sizeof(int), sig, 1, SHMEM_SIGNAL_ADD, peer, s);
    rshmemx_quiet_on_stream(s);
    rshmemx_int_max_reduce_on_stream(SHMEM_TEAM_WORLD, coll, src, n, s);
    rshmemx_barrier_all_on_stream(s);
    CUDA_OK(cudaStreamEndCapture(s, &graph));
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    int graph_bad = 0;
    for (int r = 1; r <= 2; r++) {
        CUDA_OK(cudaGraphLaunch(exec, s));
        rshmemx_signal_wait_until_on_stream(sig, SHMEM_CMP_GE, (uint64_t)r, s);
        gc_stream_wait(s, 60, "graph replay");
        CUDA_OK(cudaMemcpy(host, dst, n * sizeof(int), cudaMemcpyDeviceToHost));
        graph_bad += count_wrong(host, n, from * 100000);
        CUDA_OK(cudaMemcpy(host, coll, n * sizeof(int), cudaMemcpyDeviceToHost));
        graph_bad += count_wrong(host, n, (npes - 1) * 100000);
        shmem_barrier_all();
    }
    uint64_t sig_host = 0;
    CUDA_OK(cudaMemcpy(&sig_host, sig, sizeof sig_host, cudaMemcpyDeviceToHost));
    snprintf(msg, sizeof msg, "%d wrong, signal %llu after 2 replays", graph_bad, (unsigned long long)sig_host);
    gc_verdict("graph_of_on_stream_calls", graph_bad == 0 && sig_host == 2, msg);
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));

    /* Collective launch of a kernel defined in c_kernels.cu. */
    int grid = 0;
    rshmemx_dim3 block = {64, 1, 1};
    rc = rshmemx_collective_launch_query_gridsize(c_grid_count_kernel(), block, NULL, 0, &grid);
    int *counter = (int *)rshmemx_cuda_calloc(2, sizeof(int));
    int *total = counter + 1;
    rshmemx_dim3 g = {(unsigned)(grid < 8 ? grid : 8), 1, 1};
    void *args[] = {&counter, &total};
    int rc2 = rshmemx_collective_launch(c_grid_count_kernel(), g, block, args, 0, s);
    gc_stream_wait(s, 60, "collective launch");
    int counts[2];
    CUDA_OK(cudaMemcpy(counts, counter, sizeof counts, cudaMemcpyDeviceToHost));
    snprintf(msg, sizeof msg, "rc %d/%d grid %d counter %d total %d", rc, rc2, grid, counts[0], counts[1]);
    gc_verdict("collective_launch", rc == 0 && rc2 == 0 && grid > 0 && counts[0] == (int)g.x && counts[1] == (int)g.x * npes, msg);

    CUDA_OK(cudaStreamDestroy(s));
    free(host);
    shmem_barrier_all();
    int failed = gc_summary();
    shmem_finalize();
    return failed;
}
