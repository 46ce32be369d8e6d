// The runtime's on-stream collective kernels (a separate module: it is large, and only
// loaded when a program uses an on-stream collective).
#include "rshmem_device.cuh"
#include "rshmem_device_coll.cuh"

// On-stream collectives: a cooperative grid works on one collective.
extern "C" __global__ void rshmemi_stream_reduce(int team, rshmem_u64 dest, rshmem_u64 src, rshmem_u64 n, int dtype, int op, int kind) {
    void* d = (void*)dest;
    const void* s = (const void*)src;
    switch (dtype) {
        case 0: rshmemi_stream_reduce_t<float>(team, d, s, n, op, kind, false); break;
        case 1: rshmemi_stream_reduce_t<double>(team, d, s, n, op, kind, false); break;
        case 2: rshmemi_stream_reduce_t<rshmem_half>(team, d, s, n, op, kind, false); break;
        case 3: rshmemi_stream_reduce_t<rshmem_bf16>(team, d, s, n, op, kind, false); break;
        case 4: rshmemi_stream_reduce_bits<int>(team, d, s, n, op, kind); break;
        case 5: rshmemi_stream_reduce_bits<long long>(team, d, s, n, op, kind); break;
        case 6: rshmemi_stream_reduce_bits<unsigned int>(team, d, s, n, op, kind); break;
        case 7: rshmemi_stream_reduce_bits<unsigned long long>(team, d, s, n, op, kind); break;
    }
}
extern "C" __global__ void rshmemi_stream_broadcast(int team, rshmem_u64 dest, rshmem_u64 src, rshmem_u64 bytes, int root) {
    rshmem_broadcastmem_grid(team, (void*)dest, (const void*)src, bytes, root);
}
extern "C" __global__ void rshmemi_stream_fcollect(int team, rshmem_u64 dest, rshmem_u64 src, rshmem_u64 bytes) {
    rshmem_fcollectmem_grid(team, (void*)dest, (const void*)src, bytes);
}
extern "C" __global__ void rshmemi_stream_alltoall(int team, rshmem_u64 dest, rshmem_u64 src, rshmem_u64 bytes) {
    rshmem_alltoallmem_grid(team, (void*)dest, (const void*)src, bytes);
}
