// Experiment (not a test): host time per call of stream-ordered calls, with no GPU work in
// between (the GPU keeps up; the host's enqueue cost is what is timed). 2 PEs; PE 0 times.
#include <rshmem_device.cuh>
#include <rshmemx_cuda.h>
#include <chrono>
#include <cstdio>
__global__ void empty() {}
static double now_us() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main() {
    rshmemx_cuda_init();
    int me = shmem_my_pe(), peer = 1 - me;
    char* sym = (char*)rshmemx_cuda_malloc(1 << 20);
    char* loc; cudaMalloc(&loc, 1 << 20);
    long long* red = (long long*)rshmemx_cuda_malloc(4096);
    cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    char* remote = (char*)rshmemx_ptr(sym, peer);
    const int N = 2000;
    shmem_barrier_all();
    if (me == 0) {
        for (int round = 0; round < 2; round++) {
            double t0 = now_us();
            for (int i = 0; i < N; i++) rshmemx_putmem_on_stream(sym, loc, 8, peer, s);
            double t1 = now_us(); cudaStreamSynchronize(s); double t2 = now_us();
            for (int i = 0; i < N; i++) cudaMemcpyAsync(remote, loc, 8, cudaMemcpyDeviceToDevice, s);
            double t3 = now_us(); cudaStreamSynchronize(s); double t4 = now_us();
            for (int i = 0; i < N; i++) empty<<<1, 1, 0, s>>>();
            double t5 = now_us(); cudaStreamSynchronize(s); double t6 = now_us();
            for (int i = 0; i < N; i++) rshmemx_quiet_on_stream(s);
            double t7 = now_us(); cudaStreamSynchronize(s); double t8 = now_us();
            int q = 0; cudaPointerAttributes a;
            for (int i = 0; i < N; i++) q += cudaPointerGetAttributes(&a, loc) == cudaSuccess;
            double t9 = now_us();
            printf("round %d host us/call: putmem_on_stream %.2f (gpu drain %.2f)  cudaMemcpyAsync %.2f (%.2f)  empty launch %.2f (%.2f)  quiet_on_stream %.2f (%.2f)  cudaPointerGetAttributes %.2f\n",
                   round, (t1 - t0) / N, (t2 - t1) / N, (t3 - t2) / N, (t4 - t3) / N, (t5 - t4) / N, (t6 - t5) / N, (t7 - t6) / N, (t8 - t7) / N, (t9 - t8) / N);
        }
    }
    shmem_barrier_all();
    // A collective on a stream: every PE calls it.
    for (int round = 0; round < 2; round++) {
        double t0 = now_us();
        for (int i = 0; i < 200; i++) rshmemx_longlong_sum_reduce_on_stream(SHMEM_TEAM_WORLD, red, red + 8, 1, s);
        double t1 = now_us(); cudaStreamSynchronize(s); double t2 = now_us();
        if (me == 0) printf("round %d longlong_sum_reduce_on_stream 8 B (2 PEs): host %.2f us/call, then %.2f us/call to drain\n", round, (t1 - t0) / 200, (t2 - t1) / 200);
    }
    printf("PE %d cuda: %s\n", me, cudaGetErrorString(cudaDeviceSynchronize()));
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
