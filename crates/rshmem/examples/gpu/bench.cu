// Kernels of the GPU benchmark (examples/gpu_bench.rs); bench/nvshmem/nvshmem_bench.cu
// runs the same kernels through NVSHMEM.
#include "rshmem_device.cuh"

typedef unsigned long long u64;

// One transfer of `bytes`, split evenly over the grid; each block moves its chunk with a
// block-scope nbi put (get), then one thread per block quiets.
extern "C" __global__ void bw_put(char* dst, const char* src, u64 bytes, int pe) {
    u64 chunk = ((bytes + gridDim.x - 1) / gridDim.x + 15) & ~15ull;
    u64 start = blockIdx.x * chunk;
    if (start < bytes) {
        u64 len = bytes - start < chunk ? bytes - start : chunk;
        rshmem_putmem_nbi_block(dst + start, src + start, len, pe);
    }
    __syncthreads();
    if (threadIdx.x == 0) rshmem_quiet();
}
extern "C" __global__ void bw_get(char* dst, const char* src, u64 bytes, int pe) {
    u64 chunk = ((bytes + gridDim.x - 1) / gridDim.x + 15) & ~15ull;
    u64 start = blockIdx.x * chunk;
    if (start < bytes) {
        u64 len = bytes - start < chunk ? bytes - start : chunk;
        rshmem_getmem_nbi_block(dst + start, src + start, len, pe);
    }
    __syncthreads();
    if (threadIdx.x == 0) rshmem_quiet();
}
// Scalar p / g from every thread of the grid (one 8-byte word each).
extern "C" __global__ void bw_p(u64* dst, u64 n, int pe) {
    u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (i < n) rshmem_uint64_p(dst + i, i, pe);
}
extern "C" __global__ void bw_g(u64* out, const u64* src, u64 n, int pe) {
    u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (i < n) out[i] = rshmem_uint64_g(src + i, pe);
}
// Single-thread latency loops: `iters` dependent operations, result in out[0] so the
// compiler keeps them. kind: 0 put+quiet, 1 p+quiet, 2 g, 3 fetch_add.
extern "C" __global__ void lat(char* dst, const char* src, u64 bytes, int kind, int iters, u64 mask, u64* out, int pe) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    u64 acc = 0;
    for (int i = 0; i < iters; i++) {
        u64 off = acc & mask;
        switch (kind) {
            case 0: rshmem_putmem(dst + off, src, bytes, pe); rshmem_quiet(); break;
            case 1: rshmem_uint64_p((u64*)(dst + off), (u64)i, pe); rshmem_quiet(); break;
            case 2: acc += rshmem_uint64_g((const u64*)(src + off), pe); break;
            case 3: acc += rshmem_uint64_atomic_fetch_add((u64*)(dst + off), 1ull, pe); break;
        }
    }
    out[0] = acc;
}
