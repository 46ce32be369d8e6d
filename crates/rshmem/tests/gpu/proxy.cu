// Kernels of the GPU proxy check (tests/gpu/proxy.rs): device-initiated operations on
// peers reached through this PE's host proxy (RSHMEM_TRANSPORT=ucx).
#include "rshmem_device.cuh"

typedef unsigned long long u64;

__device__ __forceinline__ u64 gtid() { return blockIdx.x * (u64)blockDim.x + threadIdx.x; }

// Bulk put of `n` bytes: mode 0 blocking (thread), 1 nbi (thread), 2 block scope; then quiet.
extern "C" __global__ void px_put(char* dst, const char* src, u64 n, int mode, int pe) {
    if (mode == 2) {
        rshmem_putmem_block(dst, src, n, pe);
        if (threadIdx.x == 0) rshmem_quiet();
        return;
    }
    if (gtid() != 0) return;
    if (mode == 0) rshmem_putmem(dst, src, n, pe);
    else rshmem_putmem_nbi(dst, src, n, pe);
    rshmem_quiet();
}

// Bulk get of `n` bytes: mode 0 blocking (thread), 1 nbi + quiet (thread), 2 block scope.
extern "C" __global__ void px_get(char* dst, const char* src, u64 n, int mode, int pe) {
    if (mode == 2) {
        rshmem_getmem_block(dst, src, n, pe);
        return;
    }
    if (gtid() != 0) return;
    if (mode == 0) rshmem_getmem(dst, src, n, pe);
    else {
        rshmem_getmem_nbi(dst, src, n, pe);
        rshmem_quiet();
    }
}

// One p per thread, then each thread's quiet; then one g per thread into `back`.
extern "C" __global__ void px_p(int* dst, int n, int base, int pe) {
    u64 i = gtid();
    if (i < (u64)n) {
        rshmem_int_p(dst + i, base + (int)i, pe);
        rshmem_quiet();
    }
}
extern "C" __global__ void px_g(int* out, const int* src, int n, int pe) {
    u64 i = gtid();
    if (i < (u64)n) out[i] = rshmem_int_g(src + i, pe);
}

// Strided: dst[3i] = src[2i] for i < n, then read back dst[3i] into back[i].
extern "C" __global__ void px_strided(long long* dst, const long long* src, long long* back, int n, int pe) {
    if (gtid() != 0) return;
    rshmem_int64_iput(dst, src, 3, 2, n, pe);
    rshmem_quiet();
    rshmem_int64_iget(back, dst, 1, 3, n, pe);
}

// A fixed sequence of atomics on one u64 and one u32 word of `pe` (out: every result in order).
extern "C" __global__ void px_amo_sequence(u64* w, unsigned* w32, double* wd, u64* out, int pe) {
    if (gtid() != 0) return;
    int k = 0;
    out[k++] = rshmem_uint64_atomic_fetch(w, pe);
    out[k++] = rshmem_uint64_atomic_fetch_add(w, 5, pe);
    out[k++] = rshmem_uint64_atomic_swap(w, 77, pe);
    out[k++] = rshmem_uint64_atomic_compare_swap(w, 77, 99, pe);
    out[k++] = rshmem_uint64_atomic_compare_swap(w, 1, 2, pe);
    out[k++] = rshmem_uint64_atomic_fetch_or(w, 0x100, pe);
    out[k++] = rshmem_uint64_atomic_fetch_and(w, 0x1f0, pe);
    out[k++] = rshmem_uint64_atomic_fetch_xor(w, 0xff, pe);
    rshmem_uint64_atomic_set(w, 0x5555, pe);
    rshmem_uint64_atomic_inc(w, pe);
    out[k++] = rshmem_uint64_atomic_fetch(w, pe);
    out[k++] = rshmem_uint32_atomic_fetch_add(w32, 3, pe);
    out[k++] = rshmem_uint32_atomic_compare_swap(w32, 0xfffffffeu + 3u, 7u, pe);
    out[k++] = rshmem_int32_atomic_fetch_add((int*)w32, -10, pe);
    out[k++] = rshmem_uint32_atomic_fetch(w32, pe);
    double old = rshmem_double_atomic_swap(wd, 2.5, pe);
    out[k++] = (u64)(old * 1000.0);
    out[k++] = (u64)(rshmem_double_atomic_fetch(wd, pe) * 1000.0);
}

// Every thread takes `iters` tickets with fetch_inc on `pe`'s counter.
extern "C" __global__ void px_tickets(u64* ctr, u64* tickets, int iters, int pe) {
    u64 t = gtid();
    for (int i = 0; i < iters; i++) tickets[t * iters + i] = rshmem_uint64_atomic_fetch_inc(ctr, pe);
}

// Ring ping-pong with put_signal: each round sends `words` words to `right` with the round
// as signal (set), waits for the left PE's data of that round, checks it, acknowledges to
// the left PE, and waits for the right PE's acknowledgement. errors[0] counts bad words.
extern "C" __global__ void px_signal_ring(u64* data, const u64* src, u64* sig, u64* ack, u64* stage, u64 words, int rounds,
                                         int right, int left, u64* errors) {
    if (gtid() != 0) return;
    for (int r = 1; r <= rounds; r++) {
        for (u64 i = 0; i < words; i++) stage[i] = ((u64)rshmem_my_pe() << 48) | ((u64)r << 32) | i;
        rshmem_putmem_signal_nbi(data, stage, words * 8, sig, (u64)r, RSHMEM_SIGNAL_SET, right);
        rshmem_signal_wait_until(sig, RSHMEM_CMP_GE, (u64)r);
        for (u64 i = 0; i < words; i++)
            if (((volatile u64*)data)[i] != (((u64)left << 48) | ((u64)r << 32) | i)) errors[0]++;
        rshmem_signal_op(ack, 1, RSHMEM_SIGNAL_ADD, left);
        rshmem_uint64_wait_until(ack, RSHMEM_CMP_GE, (u64)r);
    }
    rshmem_quiet();
    (void)src;
}

// Device barriers through the proxy.
extern "C" __global__ void px_barrier(int times) {
    if (gtid() != 0) return;
    for (int i = 0; i < times; i++) rshmem_barrier_all();
}

// Latency: `iters` x (put of `n` bytes + quiet); bandwidth: `iters` nbi puts then one
// quiet (mode 1); g latency (mode 2). out[0] = nanoseconds.
extern "C" __global__ void px_time(char* dst, const char* src, u64 n, int iters, int mode, int pe, u64* out) {
    if (gtid() != 0) return;
    u64 t0 = rshmem_globaltimer();
    u64 acc = 0;
    for (int i = 0; i < iters; i++) {
        if (mode == 0) {
            rshmem_putmem_nbi(dst, src, n, pe);
            rshmem_quiet();
        } else if (mode == 1) {
            rshmem_putmem_nbi(dst, src, n, pe);
        } else {
            acc += rshmem_uint64_g((const u64*)src, pe);
        }
    }
    rshmem_quiet();
    out[0] = rshmem_globaltimer() - t0;
    out[1] = acc;
}
