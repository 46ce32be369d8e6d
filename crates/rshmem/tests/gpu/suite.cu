// Kernels of the GPU test suite (tests/gpu/suite.rs). Each checks what it can on the
// device and the host checks the rest.
#include "rshmem_device.cuh"

typedef unsigned long long u64;

__device__ __forceinline__ u64 gtid() { return blockIdx.x * (u64)blockDim.x + threadIdx.x; }

// Bulk put/get at a scope: 0 thread, 1 warp, 2 block; only block 0 takes part.
extern "C" __global__ void put_scope(u64* dst, const u64* src, u64 n, int scope, int pe) {
    if (blockIdx.x != 0) return;
    if (scope == 0) { if (threadIdx.x == 0) { rshmem_putmem(dst, src, n * 8, pe); rshmem_quiet(); } }
    else if (scope == 1) { if (threadIdx.x < 32) { rshmem_putmem_warp(dst, src, n * 8, pe); if (threadIdx.x == 0) rshmem_quiet(); } }
    else { rshmem_putmem_block(dst, src, n * 8, pe); if (threadIdx.x == 0) rshmem_quiet(); }
}
extern "C" __global__ void get_scope(u64* dst, const u64* src, u64 n, int scope, int pe) {
    if (blockIdx.x != 0) return;
    if (scope == 0) { if (threadIdx.x == 0) rshmem_getmem(dst, src, n * 8, pe); }
    else if (scope == 1) { if (threadIdx.x < 32) rshmem_getmem_warp(dst, src, n * 8, pe); }
    else rshmem_getmem_block(dst, src, n * 8, pe);
}
// Unaligned byte copies (odd offsets) through the typed char forms.
extern "C" __global__ void put_bytes(char* dst, const char* src, u64 n, int pe) {
    if (blockIdx.x == 0) rshmem_char_put_block(dst, src, n, pe);
}
// Typed nbi forms for a few types, then quiet.
extern "C" __global__ void put_typed(float* f, double* d, short* s, const float* fs, const double* ds, const short* ss, u64 n, int pe) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        rshmem_float_put_nbi(f, fs, n, pe);
        rshmem_double_put_nbi(d, ds, n, pe);
        rshmem_short_put_nbi(s, ss, n, pe);
        rshmem_quiet();
    }
}
// p from every thread, g back.
extern "C" __global__ void p_many(int* dst, int n, int base, int pe) {
    u64 i = gtid();
    if (i < (u64)n) rshmem_int_p(dst + i, base + (int)i, pe);
}
extern "C" __global__ void g_many(int* out, const int* src, int n, int pe) {
    u64 i = gtid();
    if (i < (u64)n) out[i] = rshmem_int_g(src + i, pe);
}
// Strided: dst[3i] = src[2i] for i < n.
extern "C" __global__ void iput_iget(long long* dst, const long long* src, long long* back, int n, int pe) {
    if (gtid() != 0) return;
    rshmem_int64_iput(dst, src, 3, 2, n, pe);
    rshmem_quiet();
    rshmem_int64_iget(back, dst, 1, 3, n, pe);
}
// Every thread takes a ticket from the counter on `pe`.
extern "C" __global__ void amo_tickets(u64* ctr, u64* tickets, u64 n, int pe) {
    u64 i = gtid();
    if (i < n) tickets[i] = rshmem_uint64_atomic_fetch_add(ctr, 1ull, pe);
}
// Bitwise and the rest of the set on one PE's words; results land in out[].
extern "C" __global__ void amo_mix(u64* words, int* iw, float* fw, u64* out, int pe) {
    u64 i = gtid();
    if (i < 64) rshmem_uint64_atomic_or(&words[0], 1ull << i, pe);
    if (i < 64) rshmem_uint64_atomic_xor(&words[1], 1ull << i, pe);
    if (i < 64) rshmem_uint64_atomic_and(&words[2], ~(1ull << i) | (i % 2 ? 0ull : (1ull << i)), pe);
    if (i < 1000) rshmem_int_atomic_add(&iw[0], 3, pe);
    if (i < 1000) rshmem_int_atomic_inc(&iw[1], pe);
    if (i == 0) {
        out[0] = (u64)rshmem_int_atomic_compare_swap(&iw[2], 0, 77, pe);   // 0, iw[2]=77
        out[1] = (u64)rshmem_int_atomic_compare_swap(&iw[2], 0, 99, pe);   // 77, unchanged
        out[2] = (u64)rshmem_int_atomic_swap(&iw[3], 5, pe);               // 0
        rshmem_float_atomic_set(&fw[0], 2.5f, pe);
        float f = rshmem_float_atomic_fetch(&fw[0], pe);
        out[3] = (u64)(f * 10.0f);                                          // 25
        out[4] = (u64)rshmem_long_atomic_fetch_inc((long*)&words[3], pe);  // 0
        out[5] = rshmem_uint64_atomic_fetch(&words[3], pe);                 // 1
    }
}
// put_signal rounds: round r writes slot r (len words of value r) and sets the signal to r.
extern "C" __global__ void signal_send(u64* data, u64* sig, u64* src, int len, int rounds, int scope, int pe) {
    if (blockIdx.x != 0) return;
    for (int r = 1; r <= rounds; r++) {
        u64* s = src + (u64)r * len;
        for (int k = threadIdx.x; k < len; k += blockDim.x) s[k] = ((u64)r << 32) | (u64)k;
        __syncthreads();
        u64* d = data + (u64)r * len;
        if (scope == 0) { if (threadIdx.x == 0) rshmem_putmem_signal(d, s, len * 8, sig, (u64)r, RSHMEM_SIGNAL_SET, pe); }
        else if (scope == 1) { if (threadIdx.x < 32) rshmem_putmem_signal_warp(d, s, len * 8, sig, (u64)r, RSHMEM_SIGNAL_SET, pe); }
        else rshmem_putmem_signal_block(d, s, len * 8, sig, (u64)r, RSHMEM_SIGNAL_SET, pe);
        __syncthreads();
    }
}
// The receiver: for each round, wait for the signal, then check the round's slot.
extern "C" __global__ void signal_recv(u64* data, u64* sig, int len, int rounds, u64* errors) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    u64 bad = 0;
    for (int r = 1; r <= rounds; r++) {
        rshmem_signal_wait_until(sig, RSHMEM_CMP_GE, (u64)r);
        u64* d = data + (u64)r * len;
        for (int k = 0; k < len; k++) if (((volatile u64*)d)[k] != (((u64)r << 32) | (u64)k)) bad++;
    }
    errors[0] = bad;
    errors[1] = rshmem_signal_fetch(sig);
}
// signal_op ADD from every thread of the grid.
extern "C" __global__ void signal_add(u64* sig, int pe) { rshmem_signal_op(sig, 1ull, RSHMEM_SIGNAL_ADD, pe); }
// Waits: ivars[k] = k+1 set by a peer; this PE waits with each form and records outcomes.
extern "C" __global__ void set_ivars(long long* ivars, int n, int pe) {
    u64 i = gtid();
    if (i < (u64)n) rshmem_longlong_p(ivars + i, (long long)i + 1, pe);
}
extern "C" __global__ void wait_forms(long long* ivars, int n, long long* vals, u64* out) {
    if (gtid() != 0) return;
    rshmem_longlong_wait_until(&ivars[n - 1], RSHMEM_CMP_EQ, (long long)n);
    rshmem_longlong_wait_until_all(ivars, n, 0, RSHMEM_CMP_GE, 1);
    out[0] = rshmem_longlong_wait_until_any(ivars, n, 0, RSHMEM_CMP_GT, (long long)n - 1);        // index n-1
    rshmem_size_t idx[64];
    out[1] = rshmem_longlong_wait_until_some(ivars, n < 64 ? n : 64, idx, 0, RSHMEM_CMP_LE, 2);    // 2 (indices 0,1)
    out[2] = rshmem_longlong_test(&ivars[0], RSHMEM_CMP_NE, 1);                                    // 0
    for (int i = 0; i < n; i++) vals[i] = (long long)i + 1;
    rshmem_longlong_wait_until_all_vector(ivars, n, 0, RSHMEM_CMP_EQ, vals);
    out[3] = rshmem_longlong_test_all_vector(ivars, n, 0, RSHMEM_CMP_EQ, vals);                    // 1
    int status[4] = {1, 1, 0, 1};
    out[4] = rshmem_longlong_test_any(ivars, 4, status, RSHMEM_CMP_GE, 1);                          // 2
    out[5] = idx[0] + idx[1];                                                                       // 1
}
// Device barrier: each round every PE adds to PE 0's counter, barriers, and checks it.
extern "C" __global__ void barrier_rounds(u64* ctr, int rounds, u64* errors) {
    if (gtid() != 0) return;
    int n = rshmem_n_pes();
    u64 bad = 0;
    for (int r = 1; r <= rounds; r++) {
        rshmem_uint64_atomic_add(ctr, 1ull, 0);
        rshmem_barrier_all();
        if (rshmem_uint64_atomic_fetch(ctr, 0) < (u64)r * n) bad++;
        rshmem_barrier_all();
    }
    errors[0] = bad;
}
// Block-scope barrier across PEs.
extern "C" __global__ void barrier_block(u64* ctr, int rounds, u64* errors) {
    if (blockIdx.x != 0) return;
    int n = rshmem_n_pes();
    u64 bad = 0;
    for (int r = 1; r <= rounds; r++) {
        if (threadIdx.x == 0) rshmem_uint64_atomic_add(ctr, 1ull, 0);
        rshmemx_barrier_all_block();
        if (threadIdx.x == 0 && rshmem_uint64_atomic_fetch(ctr, 0) < (u64)r * n) bad++;
        rshmemx_barrier_all_block();
    }
    if (threadIdx.x == 0) errors[0] = bad;
}
// Team queries and a team barrier on a split team.
extern "C" __global__ void team_info(int team, int* out) {
    if (gtid() != 0) return;
    out[0] = rshmem_team_my_pe(team);
    out[1] = rshmem_team_n_pes(team);
    out[2] = rshmem_team_translate_pe(team, 0, RSHMEM_TEAM_WORLD);
    if (out[0] >= 0) rshmem_barrier(team);
    out[3] = rshmem_my_pe();
    out[4] = rshmem_n_pes();
    out[5] = rshmem_ptr(out, rshmem_my_pe()) != 0;  // out is not symmetric: 0 unless in heap
}
// Out-of-range PE: traps with a message when device checks are on.
extern "C" __global__ void bad_pe(int* dst) { if (gtid() == 0) rshmem_int_p(dst, 1, 1000); }
