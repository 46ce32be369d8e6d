// Kernels of rshmem-perf's GPU suite (crates/rshmem-perf/src/gpu/pe.rs launches them;
// anchors/nvshmem_perf.cu runs the same kernels through NVSHMEM). Compiled at run time
// with NVRTC by rshmem::gpu; checked without a GPU by gpu_compile_check.
#include "rshmem_device.cuh"

typedef unsigned long long u64;

// Part `u` of `units` of a message of `bytes`, in 16-byte aligned pieces.
__device__ __forceinline__ void perf_part(u64 bytes, u64 u, u64 units, u64* start, u64* len) {
    u64 piece = ((bytes + units - 1) / units + 15) & ~15ull;
    u64 s = u * piece;
    *start = s;
    *len = s >= bytes ? 0 : (bytes - s < piece ? bytes - s : piece);
}

// One transfer of `bytes` between this PE and `pe`, split over the grid's units:
// scope 0: every thread, 1: every warp, 2: every block moves its part with one nbi call
// of that scope; dir 0 puts src (local) to dst (on pe), 1 gets src (on pe) into dst
// (local). Then every thread quiets.
extern "C" __global__ void __launch_bounds__(1024) perf_bw(char* dst, const char* src, u64 bytes, int scope, int dir, int pe) {
    u64 unit, units;
    if (scope == 0) {
        unit = blockIdx.x * (u64)blockDim.x + threadIdx.x;
        units = gridDim.x * (u64)blockDim.x;
    } else if (scope == 1) {
        u64 warps = (blockDim.x + 31) / 32;
        unit = blockIdx.x * warps + threadIdx.x / 32;
        units = gridDim.x * warps;
    } else {
        unit = blockIdx.x;
        units = gridDim.x;
    }
    u64 start, len;
    perf_part(bytes, unit, units, &start, &len);
    // `len` is the same for every thread of a unit, so scoped calls are made by all of it.
    if (len > 0) {
        if (dir == 0) {
            if (scope == 0) rshmem_putmem_nbi(dst + start, src + start, len, pe);
            else if (scope == 1) rshmem_putmem_nbi_warp(dst + start, src + start, len, pe);
            else rshmem_putmem_nbi_block(dst + start, src + start, len, pe);
        } else {
            if (scope == 0) rshmem_getmem_nbi(dst + start, src + start, len, pe);
            else if (scope == 1) rshmem_getmem_nbi_warp(dst + start, src + start, len, pe);
            else rshmem_getmem_nbi_block(dst + start, src + start, len, pe);
        }
    }
    rshmem_quiet();
}

// One thread runs `iters` operations back to back. kind 0: putmem + quiet, 1: getmem,
// 2: uint64 p (values seq0 + 1, seq0 + 2, ...) + quiet, 3: uint64 g, 4: uint64
// fetch_add of 1. g and fetch_add results feed the next address (mask is 0, which the
// compiler cannot know), so each waits for the last; their sum is added to out[0].
extern "C" __global__ void perf_lat(char* dst, const char* src, u64 bytes, int kind, int iters, u64 mask, u64 seq0, u64* out, int pe) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    u64 acc = 0;
    for (int i = 0; i < iters; i++) {
        u64 off = acc & mask;
        switch (kind) {
            case 0: rshmem_putmem(dst + off, src, bytes, pe); rshmem_quiet(); break;
            case 1: rshmem_getmem(dst + off, src, bytes, pe); break;
            case 2: rshmem_uint64_p((u64*)(dst + off), seq0 + (u64)i + 1, pe); rshmem_quiet(); break;
            case 3: acc += rshmem_uint64_g((const u64*)(src + off), pe); break;
            case 4: acc += rshmem_uint64_atomic_fetch_add((u64*)(dst + off), 1ull, pe); break;
        }
    }
    out[0] += acc;
}

// One thread per PE: `iters` rounds of a put_signal ping-pong with `pe`; the initiator
// sends first. Signal values continue from seq0.
extern "C" __global__ void perf_sigpp(char* data, const char* src, u64 bytes, u64* sig, u64 seq0, int iters, int initiator, int pe) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (int i = 0; i < iters; i++) {
        u64 seq = seq0 + (u64)i + 1;
        if (initiator) {
            rshmem_putmem_signal(data, src, bytes, sig, seq, RSHMEM_SIGNAL_SET, pe);
            rshmem_signal_wait_until(sig, RSHMEM_CMP_GE, seq);
        } else {
            rshmem_signal_wait_until(sig, RSHMEM_CMP_GE, seq);
            rshmem_putmem_signal(data, src, bytes, sig, seq, RSHMEM_SIGNAL_SET, pe);
        }
    }
}

// One thread per PE: `iters` device-side barriers over every PE.
extern "C" __global__ void perf_barrier(int iters) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (int i = 0; i < iters; i++) rshmem_barrier_all();
}

// Byte i of a message: (i + salt) * 131 mod 251 + 1 (never zero), as the host checks it.
extern "C" __global__ void perf_fill_bytes(unsigned char* p, u64 n, u64 salt) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += gridDim.x * (u64)blockDim.x)
        p[i] = (unsigned char)(((i + salt) * 131ull) % 251ull + 1ull);
}

// Element i of PE `pe`'s collective source: (pe + 1) * (i + 1).
extern "C" __global__ void perf_fill_words(long long* p, u64 n, long long pe) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += gridDim.x * (u64)blockDim.x)
        p[i] = (pe + 1) * (long long)(i + 1);
}
