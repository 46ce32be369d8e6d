// Kernels of the GPU collectives test (examples/gpu_coll.rs): block scope runs on block 0,
// grid scope on every block of a cooperative launch.
#include "rshmem_device_coll.cuh"
typedef unsigned long long u64;

#define SCOPED(NAME, CALL)                                                                                  \
    extern "C" __global__ void NAME##_block(int team, u64 d, u64 s, u64 n) { if (blockIdx.x == 0) CALL##_block(team, d, s, n); } \
    extern "C" __global__ void NAME##_grid(int team, u64 d, u64 s, u64 n) { CALL##_grid(team, d, s, n); }

#define R(TN, T, OP)                                                                                        \
    extern "C" __global__ void red_##TN##_##OP##_block(int team, u64 d, u64 s, u64 n) { if (blockIdx.x == 0) rshmem_##TN##_##OP##_reduce_block(team, (T*)d, (const T*)s, n); } \
    extern "C" __global__ void red_##TN##_##OP##_grid(int team, u64 d, u64 s, u64 n) { rshmemx_##TN##_##OP##_reduce_grid(team, (T*)d, (const T*)s, n); } \
    extern "C" __global__ void rs_##TN##_##OP##_block(int team, u64 d, u64 s, u64 n) { if (blockIdx.x == 0) rshmem_##TN##_##OP##_reduce_scatter_block(team, (T*)d, (const T*)s, n); } \
    extern "C" __global__ void rs_##TN##_##OP##_grid(int team, u64 d, u64 s, u64 n) { rshmemx_##TN##_##OP##_reduce_scatter_grid(team, (T*)d, (const T*)s, n); }
R(float, float, sum) R(double, double, sum) R(int, int, max) R(int, int, xor) R(bfloat16, rshmem_bf16, sum) R(half, rshmem_half, max) R(longlong, long long, prod)

extern "C" __global__ void bcast_block(int team, u64 d, u64 s, u64 bytes, int root) { if (blockIdx.x == 0) rshmem_broadcastmem_block(team, (void*)d, (const void*)s, bytes, root); }
extern "C" __global__ void bcast_grid(int team, u64 d, u64 s, u64 bytes, int root) { rshmem_broadcastmem_grid(team, (void*)d, (const void*)s, bytes, root); }
extern "C" __global__ void fcollect_block(int team, u64 d, u64 s, u64 bytes) { if (blockIdx.x == 0) rshmem_fcollectmem_block(team, (void*)d, (const void*)s, bytes); }
extern "C" __global__ void fcollect_grid(int team, u64 d, u64 s, u64 bytes) { rshmem_fcollectmem_grid(team, (void*)d, (const void*)s, bytes); }
extern "C" __global__ void alltoall_block(int team, u64 d, u64 s, u64 bytes) { if (blockIdx.x == 0) rshmem_alltoallmem_block(team, (void*)d, (const void*)s, bytes); }
extern "C" __global__ void alltoall_grid(int team, u64 d, u64 s, u64 bytes) { rshmem_alltoallmem_grid(team, (void*)d, (const void*)s, bytes); }

// Back-to-back reductions in one kernel with changing inputs and no barrier between:
// round r reduces s + r (each PE adds its PE number + r); out[r] = the result.
extern "C" __global__ void back_to_back(int team, int* s, int* d, int* out, int rounds) {
    if (blockIdx.x != 0) return;
    for (int r = 0; r < rounds; r++) {
        if (threadIdx.x == 0) s[0] = rshmem_my_pe() + r;
        rshmem_int_sum_reduce_block(team, d, s, 1);
        if (threadIdx.x == 0) out[r] = d[0];
    }
}
