// Kernels of the GPU collectives test (tests/gpu/coll.rs).
// scope: 0 thread (thread 0 of block 0 calls), 1 warp (warp 1 of block 0), 2 block
// (block 0), 3 grid (every block of a cooperative launch). The host launches thread and
// warp scope with 64 threads, block scope with 256, grid scope with one 256-thread block
// per multiprocessor. proto: RSHMEMX_PROTO_* (0 auto).
#include "rshmem_device_coll.cuh"
typedef unsigned long long u64;

__device__ __forceinline__ bool in_scope(int scope) {
    if (scope == 3) return true;
    if (blockIdx.x != 0) return false;
    if (scope == 0) return threadIdx.x == 0;
    if (scope == 1) return threadIdx.x / 32 == 1;
    return true;
}

template <typename T>
__device__ void red_at(int scope, int team, T* d, const T* s, u64 n, int op, int kind, int proto) {
    rshmemi_op_rt o;
    o.code = op;
    if (!in_scope(scope)) return;
    switch (scope) {
        case 0: rshmemi_reduce<RSHMEMI_SCOPE_THREAD, T, rshmemi_op_rt>(team, d, s, n, kind, proto, 0, o); break;
        case 1: rshmemi_reduce<RSHMEMI_SCOPE_WARP, T, rshmemi_op_rt>(team, d, s, n, kind, proto, 0, o); break;
        case 2: rshmemi_reduce<RSHMEMI_SCOPE_BLOCK, T, rshmemi_op_rt>(team, d, s, n, kind, proto, 0, o); break;
        default: rshmemi_reduce<RSHMEMI_SCOPE_GRID, T, rshmemi_op_rt>(team, d, s, n, kind, proto, 0, o); break;
    }
}

// dtype: 0 float, 3 bf16, 4 int, 7 u64 (as the on-stream kernels' codes); kind 0 reduce, 1 reduce_scatter.
extern "C" __global__ void red(int scope, int team, u64 d, u64 s, u64 n, int dtype, int op, int kind, int proto) {
    switch (dtype) {
        case 0: red_at<float>(scope, team, (float*)d, (const float*)s, n, op, kind, proto); break;
        case 3: red_at<rshmem_bf16>(scope, team, (rshmem_bf16*)d, (const rshmem_bf16*)s, n, op, kind, proto); break;
        case 4: red_at<int>(scope, team, (int*)d, (const int*)s, n, op, kind, proto); break;
        case 7: red_at<unsigned long long>(scope, team, (unsigned long long*)d, (const unsigned long long*)s, n, op, kind, proto); break;
    }
}

// kind 0 broadcast, 1 fcollect, 2 alltoall; bytes per pair of PEs.
extern "C" __global__ void move(int scope, int team, u64 d, u64 s, u64 bytes, int kind, int root, int proto) {
    if (!in_scope(scope)) return;
    void* dd = (void*)d;
    const void* ss = (const void*)s;
    switch (scope) {
        case 0:
            if (kind == 0) rshmemx_broadcastmem_proto(team, dd, ss, bytes, root, proto);
            else if (kind == 1) rshmemx_fcollectmem_proto(team, dd, ss, bytes, proto);
            else rshmemx_alltoallmem_proto(team, dd, ss, bytes, proto);
            break;
        case 1:
            if (kind == 0) rshmemx_broadcastmem_proto_warp(team, dd, ss, bytes, root, proto);
            else if (kind == 1) rshmemx_fcollectmem_proto_warp(team, dd, ss, bytes, proto);
            else rshmemx_alltoallmem_proto_warp(team, dd, ss, bytes, proto);
            break;
        case 2:
            if (kind == 0) rshmemx_broadcastmem_proto_block(team, dd, ss, bytes, root, proto);
            else if (kind == 1) rshmemx_fcollectmem_proto_block(team, dd, ss, bytes, proto);
            else rshmemx_alltoallmem_proto_block(team, dd, ss, bytes, proto);
            break;
        default:
            if (kind == 0) rshmemx_broadcastmem_proto_grid(team, dd, ss, bytes, root, proto);
            else if (kind == 1) rshmemx_fcollectmem_proto_grid(team, dd, ss, bytes, proto);
            else rshmemx_alltoallmem_proto_grid(team, dd, ss, bytes, proto);
            break;
    }
}

// The NVSHMEM-style typed names at every scope (protocol from RSHMEM_GPU_COLL_PROTO / auto):
// float sum all-reduce of n elements, then an int broadcast of n elements from root 0.
extern "C" __global__ void typed(int scope, int team, float* d, const float* s, int* bd, const int* bs, u64 n) {
    if (!in_scope(scope)) return;
    switch (scope) {
        case 0: rshmem_float_sum_reduce(team, d, s, n); rshmem_int_broadcast(team, bd, bs, n, 0); break;
        case 1: rshmem_float_sum_reduce_warp(team, d, s, n); rshmem_int_broadcast_warp(team, bd, bs, n, 0); break;
        case 2: rshmem_float_sum_reduce_block(team, d, s, n); rshmem_int_broadcast_block(team, bd, bs, n, 0); break;
        default: rshmemx_float_sum_reduce_grid(team, d, s, n); rshmemx_int_broadcast_grid(team, bd, bs, n, 0); break;
    }
}

// Back-to-back all-reduces in one kernel, no barrier between, the source overwritten
// right after each call: round r reduces s[i] = pe * 1000 + r * 10 + i (i < n, n <= 64)
// and stores the result into out[r * n + i].
extern "C" __global__ void back_to_back(int scope, int team, int* s, int* d, int* out, int rounds, int n, int proto) {
    if (!in_scope(scope)) return;
    rshmemi_op_rt sum;
    sum.code = 0;
    unsigned lane = scope == 3 ? (unsigned)rshmemi_grid_rank() : scope == 2 ? rshmemi_block_rank() : scope == 1 ? rshmemi_lane() : 0;
    unsigned lanes = scope == 3 ? (unsigned)rshmemi_grid_size() : scope == 2 ? rshmemi_block_size() : scope == 1 ? 32 : 1;
    for (int r = 0; r < rounds; r++) {
        for (int i = lane; i < n; i += lanes) s[i] = rshmem_my_pe() * 1000 + r * 10 + i;
        if (scope == 3) rshmemi_grid_sync();
        else if (scope == 2) __syncthreads();
        else if (scope == 1) __syncwarp();
        switch (scope) {
            case 0: rshmemi_reduce<RSHMEMI_SCOPE_THREAD, int, rshmemi_op_rt>(team, d, s, n, 0, proto, 0, sum); break;
            case 1: rshmemi_reduce<RSHMEMI_SCOPE_WARP, int, rshmemi_op_rt>(team, d, s, n, 0, proto, 0, sum); break;
            case 2: rshmemi_reduce<RSHMEMI_SCOPE_BLOCK, int, rshmemi_op_rt>(team, d, s, n, 0, proto, 0, sum); break;
            default: rshmemi_reduce<RSHMEMI_SCOPE_GRID, int, rshmemi_op_rt>(team, d, s, n, 0, proto, 0, sum); break;
        }
        // dest is valid on return; the source is free (overwritten next round).
        if (scope == 3) rshmemi_grid_sync();
        else if (scope == 2) __syncthreads();
        else if (scope == 1) __syncwarp();
        for (int i = lane; i < n; i += lanes) out[r * n + i] = d[i];
        if (scope == 3) rshmemi_grid_sync();
        else if (scope == 2) __syncthreads();
        else if (scope == 1) __syncwarp();
    }
}

// Keeps a stream busy for `ns` nanoseconds (so another stream runs ahead on this PE).
extern "C" __global__ void delay(u64 ns) {
    u64 t0 = rshmem_globaltimer();
    while (rshmem_globaltimer() - t0 < ns) __nanosleep(1000);
}
