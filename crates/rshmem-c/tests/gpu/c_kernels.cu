// The kernels of the C test (c_host.c), built with nvcc -rdc=true and linked with the device
// library (librshmem_device.a: the program's one rshmem_state). C calls them through these
// extern "C" launchers.
#include <cooperative_groups.h>
#include <rshmem_device.cuh>

// Every block puts its slice of `n` ints to `peer` and adds 1 to the peer's signal; thread 0
// of block 0 then waits until every block of the peer's grid signalled.
__global__ void c_put_signal(int* dst, const int* src, unsigned long long* sig, int n, int peer) {
    int per = n / gridDim.x;
    rshmem_putmem_signal_nbi_block(dst + blockIdx.x * per, src + blockIdx.x * per, per * sizeof(int), sig, 1, RSHMEM_SIGNAL_ADD, peer);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        rshmem_quiet();
        rshmem_signal_wait_until(sig, RSHMEM_CMP_GE, gridDim.x);
    }
}

__global__ void c_fill(int* p, int n, int base) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = base + i;
}

// Grid-synchronizing: needs rshmemx_collective_launch.
__global__ void c_grid_count(int* counter, int* total) {
    if (threadIdx.x == 0) atomicAdd(counter, 1);
    cooperative_groups::this_grid().sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) *total = *(volatile int*)counter * rshmem_n_pes();
}

extern "C" int c_launch_put_signal(int* dst, const int* src, unsigned long* sig, int n, int peer, int blocks, cudaStream_t s) {
    c_put_signal<<<blocks, 256, 0, s>>>(dst, src, (unsigned long long*)sig, n, peer);
    return (int)cudaGetLastError();
}

extern "C" int c_launch_fill(int* p, int n, int base, cudaStream_t s) {
    c_fill<<<8, 256, 0, s>>>(p, n, base);
    return (int)cudaGetLastError();
}

extern "C" const void* c_grid_count_kernel(void) { return (const void*)c_grid_count; }
