// Kernels the host runtime itself launches: host AMOs on device memory and the
// stream-ordered signal, wait, quiet and barrier. Compiled once per architecture. Each
// starts with rshmemi_stream_entry: the host may launch any of them overlapped with the
// stream's previous kernel.
#include "rshmem_device.cuh"

// Atomic on a word of device memory (this PE's view of any local peer's heap).
// op: 0 fetch, 1 set, 2 swap, 3 compare_swap, 4 fetch_add, 5 fetch_and, 6 fetch_or, 7 fetch_xor
extern "C" __global__ void rshmemi_host_amo(rshmem_u64 addr, int width, int op, rshmem_u64 operand, rshmem_u64 compare, rshmem_u64* out) {
    rshmemi_stream_entry();
    rshmem_u64 old = 0;
    if (width == 8) {
        rshmem_u64* a = (rshmem_u64*)addr;
        switch (op) {
            case 0: old = atomicAdd_system(a, 0ull); break;
            case 1: case 2: old = atomicExch_system(a, operand); break;
            case 3: old = atomicCAS_system(a, compare, operand); break;
            case 4: old = atomicAdd_system(a, operand); break;
            case 5: old = atomicAnd_system(a, operand); break;
            case 6: old = atomicOr_system(a, operand); break;
            case 7: old = atomicXor_system(a, operand); break;
        }
    } else if (width == 4) {
        unsigned int* a = (unsigned int*)addr;
        unsigned int v = (unsigned int)operand, c = (unsigned int)compare;
        switch (op) {
            case 0: old = atomicAdd_system(a, 0u); break;
            case 1: case 2: old = atomicExch_system(a, v); break;
            case 3: old = atomicCAS_system(a, c, v); break;
            case 4: old = atomicAdd_system(a, v); break;
            case 5: old = atomicAnd_system(a, v); break;
            case 6: old = atomicOr_system(a, v); break;
            case 7: old = atomicXor_system(a, v); break;
        }
    } else {
        rshmemi_fail("host atomic on device memory", "width must be 4 or 8", rshmem_state.my_pe, addr, (rshmem_u64)width);
    }
    __threadfence_system();
    *out = old;
}

extern "C" __global__ void rshmemi_stream_signal(rshmem_u64* sig, rshmem_u64 value, int op, int pe) {
    rshmemi_stream_entry();
    rshmem_signal_op(sig, value, op, pe);
    __threadfence_system();
}

extern "C" __global__ void rshmemi_stream_wait(rshmem_u64* ivar, int cmp, rshmem_u64 value) {
    rshmemi_stream_entry();
    rshmem_uint64_wait_until(ivar, cmp, value);
}

extern "C" __global__ void rshmemi_stream_quiet() {
    rshmemi_stream_entry();
    rshmem_quiet();
}

// A copy of `n` bytes by the whole grid (the on-stream collectives of a team of one PE:
// a launch costs the host less than a cuMemcpyAsync does).
extern "C" __global__ void rshmemi_stream_copy(rshmem_u64 dst, rshmem_u64 src, rshmem_u64 n) {
    rshmemi_stream_entry();
    rshmemi_copy((void*)dst, (const void*)src, n, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x);
}

extern "C" __global__ void rshmemi_stream_barrier(int team) {
    rshmemi_stream_entry();
    rshmem_barrier(team);
}

