// The runtime's on-stream collective kernels (a separate module: it is large, and only
// loaded when a program uses an on-stream collective). Each is a cooperative grid working
// on one collective; `seq` is the number the host gave the call on its team at enqueue
// time, `proto` the protocol the host's decision tree chose (RSHMEMX_PROTO_*).
#include "rshmem_device.cuh"
#include "rshmem_device_coll.cuh"

// Threads per block of these kernels (gpu::COLL_THREADS on the host, which a unit test
// keeps equal). The bound caps their registers so that a block always fits on a
// multiprocessor, whichever NVRTC compiles them (without it, CUDA 13.5's used 151 per
// thread for the reduction: no block of 512 fits, and the cooperative launch fails).
#define RSHMEMI_COLL_THREADS 512

extern "C" __global__ void __launch_bounds__(RSHMEMI_COLL_THREADS) rshmemi_stream_reduce(int team, rshmem_u64 dest, rshmem_u64 src, rshmem_u64 n, int dtype, int op, int kind, int proto, rshmem_u64 seq) {
    rshmemi_stream_entry();
    void* d = (void*)dest;
    const void* s = (const void*)src;
    switch (dtype) {
        case 0: rshmemi_stream_reduce_t<float>(team, d, s, n, op, kind, proto, seq); break;
        case 1: rshmemi_stream_reduce_t<double>(team, d, s, n, op, kind, proto, seq); break;
        case 2: rshmemi_stream_reduce_t<rshmem_half>(team, d, s, n, op, kind, proto, seq); break;
        case 3: rshmemi_stream_reduce_t<rshmem_bf16>(team, d, s, n, op, kind, proto, seq); break;
        case 4: rshmemi_stream_reduce_t<int>(team, d, s, n, op, kind, proto, seq); break;
        case 5: rshmemi_stream_reduce_t<long long>(team, d, s, n, op, kind, proto, seq); break;
        case 6: rshmemi_stream_reduce_t<unsigned int>(team, d, s, n, op, kind, proto, seq); break;
        case 7: rshmemi_stream_reduce_t<unsigned long long>(team, d, s, n, op, kind, proto, seq); break;
    }
}
// kind: 0 broadcast, 1 fcollect, 2 alltoall; bytes per pair of PEs.
extern "C" __global__ void __launch_bounds__(RSHMEMI_COLL_THREADS) rshmemi_stream_move(int team, rshmem_u64 dest, rshmem_u64 src, rshmem_u64 bytes, int kind, int root, int proto, rshmem_u64 seq) {
    rshmemi_stream_entry();
    rshmemi_move<RSHMEMI_SCOPE_GRID>(team, (void*)dest, (const void*)src, bytes, kind, root, proto, seq);
}
