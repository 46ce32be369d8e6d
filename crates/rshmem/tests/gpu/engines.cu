// Kernels of the engine check (tests/gpu/engines.rs): remote-engine and copy-engine puts,
// gets and atomics, batches, 2-D copies, prefetch, 32-bit signals, team PE mapping, the
// ordering of quiet and fence over mixed engines, and timings.
#include "rshmem_device.cuh"

typedef unsigned long long u64;

#define EN_SM 0
#define EN_CE 1
#define EN_REMOTE 2
#define EN_BATCH_REMOTE 3
#define EN_BATCH_CE 4

__device__ __forceinline__ unsigned char byte_pat(int pe, u64 i, u64 tag) {
    return (unsigned char)((i * 31) ^ ((u64)pe * 77) ^ (tag * 13));
}

// As `support::mix` on the host.
__device__ __forceinline__ u64 mix(u64 x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// Which threads take part at `scope` (0 thread: thread 0; 1 warp: warp 0; 2 block: all).
__device__ __forceinline__ bool in_scope(int scope) {
    return scope == 2 || (scope == 1 && threadIdx.x < 32) || (scope == 0 && threadIdx.x == 0);
}

// The engine's own quiet (qmode 0) or rshmem_quiet (qmode 1), by thread 0.
__device__ __forceinline__ void engine_quiet(int engine, int qmode, int pe) {
    __syncthreads();
    if (threadIdx.x != 0) return;
    if (qmode == 1) rshmem_quiet();
    else if (engine == EN_CE) rshmemx_ce_quiet();
    else if (engine == EN_REMOTE) rshmemx_remote_quiet(pe);
    else rshmem_quiet();
}

// Per engine and scope, a put (`get` = 0) or get of `n` bytes with `pe`.
#define EN_RMA(dir, scope_suffix)                                                             \
    if (engine == EN_CE) rshmemx_ce_##dir##mem_nbi##scope_suffix(dst, src, n, pe);             \
    else if (engine == EN_REMOTE) rshmemx_remote_##dir##mem_nbi##scope_suffix(dst, src, n, pe); \
    else rshmem_##dir##mem_nbi##scope_suffix(dst, src, n, pe);

// A put (`get` = 0) or get of `n` bytes with `pe` through `engine` at `scope`, then a quiet
// (see engine_quiet).
extern "C" __global__ void en_rma(char* dst, const char* src, u64 n, int engine, int scope, int qmode, int get, int pe) {
    if (in_scope(scope)) {
        if (!get) {
            if (scope == 0) { EN_RMA(put, ) }
            else if (scope == 1) { EN_RMA(put, _warp) }
            else { EN_RMA(put, _block) }
        } else {
            if (scope == 0) { EN_RMA(get, ) }
            else if (scope == 1) { EN_RMA(get, _warp) }
            else { EN_RMA(get, _block) }
        }
    }
    engine_quiet(engine, qmode, pe);
}

// A fixed sequence of remote-engine atomics on one u64 and one u32 word of `pe`.
extern "C" __global__ void en_remote_amo_sequence(u64* w, unsigned* w32, u64* out, int pe) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    int k = 0;
    out[k++] = rshmemx_remote_uint64_atomic_fetch(w, pe);
    out[k++] = rshmemx_remote_uint64_atomic_fetch_add(w, 5, pe);
    out[k++] = rshmemx_remote_uint64_atomic_swap(w, 77, pe);
    out[k++] = rshmemx_remote_uint64_atomic_compare_swap(w, 77, 99, pe);
    out[k++] = rshmemx_remote_uint64_atomic_compare_swap(w, 1, 2, pe);
    out[k++] = rshmemx_remote_uint64_atomic_fetch_or(w, 0x100, pe);
    out[k++] = rshmemx_remote_uint64_atomic_fetch_and(w, 0x1f0, pe);
    out[k++] = rshmemx_remote_uint64_atomic_fetch_xor(w, 0xff, pe);
    rshmemx_remote_uint64_atomic_set(w, 0x5555, pe);
    rshmemx_remote_uint64_atomic_inc(w, pe);
    rshmemx_remote_uint64_atomic_add(w, 10, pe);
    rshmemx_remote_uint64_atomic_or(w, 0x10000, pe);
    out[k++] = rshmemx_remote_uint64_atomic_fetch(w, pe);
    out[k++] = rshmemx_remote_uint32_atomic_fetch_add(w32, 3, pe);
    out[k++] = rshmemx_remote_uint32_atomic_compare_swap(w32, 0xfffffffeu + 3u, 7u, pe);
    out[k++] = (u64)(long long)rshmemx_remote_int32_atomic_fetch_add((int*)w32, -10, pe);
    out[k++] = rshmemx_remote_uint32_atomic_fetch(w32, pe);
    rshmemx_remote_quiet(pe);
}

// Every thread takes `iters` tickets with remote fetch_inc on `pe`'s counter.
extern "C" __global__ void en_remote_tickets(u64* ctr, u64* tickets, int iters, int pe) {
    u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    for (int i = 0; i < iters; i++) tickets[t * iters + i] = rshmemx_remote_uint64_atomic_fetch_inc(ctr, pe);
}

// The model check: every thread of the grid handles chunks t, t + threads, ...: chunk i
// covers [i * chunk, i * chunk + len_i) of `dst` on `pe` (len_i = chunk - mix(seed, i) % 97),
// sent in two pieces, each through an engine drawn from `mask` (bits EN_*). Batched pieces
// go into the thread's own batch (`entries + t * cap`, capacity `cap`). Then the thread's
// batch is submitted and rshmem_quiet completes everything.
extern "C" __global__ void en_mixed(char* dst, const char* src, u64 chunk, u64 nchunks, unsigned mask, u64 seed,
                                    rshmemx_batch_entry* entries, unsigned cap, int pe) {
    u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x, threads = (u64)gridDim.x * blockDim.x;
    rshmemx_batch b;
    rshmemx_batch_init(&b, entries + t * cap, cap);
    int engines[5];
    int ne = 0;
    for (int e = 0; e < 5; e++)
        if (mask & (1u << e)) engines[ne++] = e;
    for (u64 i = t; i < nchunks; i += threads) {
        u64 h = mix(seed * 1000003ull + i);
        u64 len = chunk - h % 97;
        u64 cut = (h >> 8) % (len + 1);
        u64 pieces[2][2] = {{0, cut}, {cut, len - cut}};
        for (int p = 0; p < 2; p++) {
            u64 off = i * chunk + pieces[p][0], n = pieces[p][1];
            int e = engines[(h >> (16 + 4 * p)) % ne];
            char* d = dst + off;
            const char* s = src + off;
            if (e == EN_SM) rshmem_putmem_nbi(d, s, n, pe);
            else if (e == EN_CE) rshmemx_ce_putmem_nbi(d, s, n, pe);
            else if (e == EN_REMOTE) rshmemx_remote_putmem_nbi(d, s, n, pe);
            else if (e == EN_BATCH_REMOTE) rshmemx_batch_putmem_nbi(&b, d, s, n, pe, RSHMEMX_ENGINE_REMOTE);
            else rshmemx_batch_putmem_nbi(&b, d, s, n, pe, RSHMEMX_ENGINE_CE);
        }
    }
    rshmemx_batch_submit(&b);
    rshmem_quiet();
}

// Fence across engines: block 0 (thread 0) sends `k` chunks of `chunk` bytes to `right`
// through `engine` (EN_*), each followed by rshmem_fence and an SM/implicit p of the chunk
// number to `flag`; block 1 waits for each flag from `left` and counts the bytes of that
// chunk that are not there yet (`bad[0]`), with tag `tag`.
extern "C" __global__ void en_fence(char* dst, const char* src, u64 chunk, int k, u64* flag, int engine, int right, int left,
                                    u64 tag, u64* bad) {
    if (blockIdx.x == 0) {
        if (threadIdx.x != 0) return;
        for (int i = 0; i < k; i++) {
            char* d = dst + (u64)i * chunk;
            const char* s = src + (u64)i * chunk;
            if (engine == EN_CE) rshmemx_ce_putmem_nbi(d, s, chunk, right);
            else if (engine == EN_REMOTE) rshmemx_remote_putmem_nbi(d, s, chunk, right);
            else rshmem_putmem_nbi(d, s, chunk, right);
            rshmem_fence();
            rshmem_uint64_p(flag, (u64)i + 1, right);
        }
        rshmem_quiet();
        return;
    }
    __shared__ u64 count;
    if (threadIdx.x == 0) count = 0;
    for (int i = 0; i < k; i++) {
        if (threadIdx.x == 0) rshmem_uint64_wait_until(flag, RSHMEM_CMP_GE, (u64)i + 1);
        __syncthreads();
        u64 c = 0;
        for (u64 j = threadIdx.x; j < chunk; j += blockDim.x) {
            u64 at = (u64)i * chunk + j;
            if (((volatile unsigned char*)dst)[at] != byte_pat(left, at, tag)) c++;
        }
        if (c) atomicAdd(&count, c);
        __syncthreads();
    }
    if (threadIdx.x == 0) bad[0] = count;
}

// 2-D put (get = 0) or get (get = 1) at `scope` (3: the copy engine, thread scope), then
// rshmem_quiet.
extern "C" __global__ void en_2d(char* dst, const char* src, u64 rows, u64 row_bytes, u64 dpitch, u64 spitch, int scope, int get, int pe) {
    if (scope == 3) {
        if (threadIdx.x == 0) {
            if (get) rshmemx_ce_get2d_nbi(dst, src, rows, row_bytes, dpitch, spitch, pe);
            else rshmemx_ce_put2d_nbi(dst, src, rows, row_bytes, dpitch, spitch, pe);
            rshmemx_ce_quiet();
        }
    } else if (in_scope(scope)) {
        if (!get) {
            if (scope == 0) rshmemx_put2d_nbi(dst, src, rows, row_bytes, dpitch, spitch, pe);
            else if (scope == 1) rshmemx_put2d_nbi_warp(dst, src, rows, row_bytes, dpitch, spitch, pe);
            else rshmemx_put2d_nbi_block(dst, src, rows, row_bytes, dpitch, spitch, pe);
        } else {
            if (scope == 0) rshmemx_get2d_nbi(dst, src, rows, row_bytes, dpitch, spitch, pe);
            else if (scope == 1) rshmemx_get2d_nbi_warp(dst, src, rows, row_bytes, dpitch, spitch, pe);
            else rshmemx_get2d_nbi_block(dst, src, rows, row_bytes, dpitch, spitch, pe);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) rshmem_quiet();
}

// L2 prefetch at `scope` of `n` bytes of `sym` on `pe` and of local `local`; then the
// block sums the bytes of both (out[0], out[1]).
extern "C" __global__ void en_prefetch(const unsigned char* sym, const unsigned char* local, u64 n, int scope, int pe, u64* out) {
    if (in_scope(scope)) {
        if (scope == 0) {
            rshmemx_prefetch_nbi(sym, n, pe);
            rshmemx_cmo_nbi(local, n);
        } else if (scope == 1) {
            rshmemx_prefetch_nbi_warp(sym, n, pe);
            rshmemx_cmo_nbi_warp(local, n);
        } else {
            rshmemx_prefetch_nbi_block(sym, n, pe);
            rshmemx_cmo_nbi_block(local, n);
        }
    }
    __syncthreads();
    const unsigned char* r = (const unsigned char*)rshmem_ptr(sym, pe);
    u64 a = 0, b = 0;
    for (u64 i = threadIdx.x; i < n; i += blockDim.x) {
        if (r) a += r[i];
        b += local[i];
    }
    atomicAdd(&out[0], a);
    atomicAdd(&out[1], b);
}

// 32-bit signals: every thread adds 1 to `sig` on `pe`; thread 0 of block 0 then sets
// `sig2` on `pe` to `set_to`.
extern "C" __global__ void en_sig32_send(unsigned* sig, unsigned* sig2, unsigned set_to, int pe) {
    rshmemx_signal32_op(sig, 1u, RSHMEM_SIGNAL_ADD, pe);
    __syncthreads();
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        rshmem_fence();
        rshmemx_signal32_op(sig2, set_to, RSHMEM_SIGNAL_SET, pe);
        rshmem_quiet();
    }
}
// Waits for sig2 == set_to, then for sig >= want; out[0..1] the values seen.
extern "C" __global__ void en_sig32_wait(unsigned* sig, unsigned* sig2, unsigned set_to, unsigned want, unsigned* out) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    out[1] = rshmemx_signal32_wait_until(sig2, RSHMEM_CMP_EQ, set_to);
    out[0] = rshmemx_signal32_wait_until(sig, RSHMEM_CMP_GE, want);
}

// Team PE mapping of `team`: out[i] = rshmemx_team_pe_mapping(team, i) and
// out[n + i] = rshmem_team_translate_pe(team, i, RSHMEM_TEAM_WORLD), for i in -1..n.
extern "C" __global__ void en_team_map(int team, int n, int* out) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    for (int i = -1; i <= n; i++) {
        out[i + 1] = rshmemx_team_pe_mapping(team, i);
        out[n + 3 + i] = rshmem_team_translate_pe(team, i, RSHMEM_TEAM_WORLD);
    }
}

// A batch of `count` puts of `n` bytes each (entry i: offset i * n), all through `engine`
// (RSHMEMX_ENGINE_*), submitted when full (capacity `cap`) and at the end; then the engine's
// quiet (qmode 0) or rshmem_quiet (qmode 1).
extern "C" __global__ void en_batch(char* dst, const char* src, u64 n, unsigned count, int engine, rshmemx_batch_entry* entries,
                                    unsigned cap, int qmode, int pe) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    rshmemx_batch b;
    rshmemx_batch_init(&b, entries, cap);
    for (unsigned i = 0; i < count; i++) rshmemx_batch_putmem_nbi(&b, dst + (u64)i * n, src + (u64)i * n, n, pe, engine);
    rshmemx_batch_submit(&b);
    if (qmode == 1) rshmem_quiet();
    else if (engine == RSHMEMX_ENGINE_CE) rshmemx_ce_quiet();
    else rshmemx_remote_quiet(pe);
}

// The same `count` puts one by one (one ring entry each), for the batch timing.
extern "C" __global__ void en_unbatched(char* dst, const char* src, u64 n, unsigned count, int engine, int pe) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    for (unsigned i = 0; i < count; i++) {
        if (engine == RSHMEMX_ENGINE_CE) rshmemx_ce_putmem_nbi(dst + (u64)i * n, src + (u64)i * n, n, pe);
        else rshmemx_remote_putmem_nbi(dst + (u64)i * n, src + (u64)i * n, n, pe);
    }
    rshmem_quiet();
}

// One put of `n` bytes per launch for the timings: SM (every block puts its slice with
// putmem_nbi_block, then quiets), CE or remote (thread 0 of block 0 posts, then the engine's
// quiet).
extern "C" __global__ void en_bench(char* dst, const char* src, u64 n, int engine, int pe) {
    if (engine == EN_SM) {
        u64 per = (n + gridDim.x - 1) / gridDim.x;
        per = (per + 15) & ~15ull;
        u64 off = per * blockIdx.x;
        if (off < n) rshmem_putmem_nbi_block(dst + off, src + off, off + per > n ? n - off : per, pe);
        __syncthreads();
        if (threadIdx.x == 0) rshmem_quiet();
        return;
    }
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    if (engine == EN_CE) {
        rshmemx_ce_putmem_nbi(dst, src, n, pe);
        rshmemx_ce_quiet();
    } else {
        rshmemx_remote_putmem_nbi(dst, src, n, pe);
        rshmemx_remote_quiet(pe);
    }
}

// `iters` empty quiets and fences (the cost the engines add to them when nothing is
// outstanding): out[0] quiet ns, out[1] fence ns, out[2] the bare memory fence they start
// with (rshmemi_fence_peers), for comparison.
extern "C" __global__ void en_quiet_cost(int iters, u64* out) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    u64 t0 = rshmem_globaltimer();
    for (int i = 0; i < iters; i++) rshmem_quiet();
    u64 t1 = rshmem_globaltimer();
    for (int i = 0; i < iters; i++) rshmem_fence();
    u64 t2 = rshmem_globaltimer();
    for (int i = 0; i < iters; i++) rshmemi_fence_peers();
    u64 t3 = rshmem_globaltimer();
    out[0] = t1 - t0;
    out[1] = t2 - t1;
    out[2] = t3 - t2;
}

// Misuse for the error check: a copy-engine put to `pe` (the driver picks an unmapped one).
extern "C" __global__ void en_misuse_ce(char* dst, const char* src, int pe) {
    if (threadIdx.x == 0 && blockIdx.x == 0) rshmemx_ce_putmem_nbi(dst, src, 64, pe);
}
// Misuse: a remote-engine put to `pe` (the driver picks one no remote transport reaches).
extern "C" __global__ void en_misuse_remote(char* dst, const char* src, int pe) {
    if (threadIdx.x == 0 && blockIdx.x == 0) rshmemx_remote_putmem_nbi(dst, src, 64, pe);
}

// The copy engine's point: a compute kernel beside a transfer. en_fma: every thread runs
// `iters` rounds of 4 independent FMA chains; t[0] / t[1] get the earliest start and the
// latest end over blocks (globaltimer ns).
extern "C" __global__ void en_fma(int iters, float* sink, u64* t) {
    if (threadIdx.x == 0) atomicMin(&t[0], rshmem_globaltimer());
    float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f, d = blockIdx.x * 1e-4f;
    for (int i = 0; i < iters; i++) {
        a = fmaf(a, 0.999f, 0.001f);
        b = fmaf(b, 0.998f, 0.002f);
        c = fmaf(c, 0.997f, 0.003f);
        d = fmaf(d, 0.996f, 0.004f);
    }
    if (a + b + c + d == 12345.0f) sink[0] = a;
    __syncthreads();
    if (threadIdx.x == 0) atomicMax(&t[1], rshmem_globaltimer());
}

// `reps` puts of `n` bytes to `pe`: SM (each block puts its slice `reps` times, then quiets)
// or CE (one thread posts `reps` copy-engine puts, then ce_quiet); t[0] / t[1] as in en_fma.
extern "C" __global__ void en_xfer(char* dst, const char* src, u64 n, int engine, int reps, int pe, u64* t) {
    if (threadIdx.x == 0) atomicMin(&t[0], rshmem_globaltimer());
    if (engine == EN_SM) {
        u64 per = ((n + gridDim.x - 1) / gridDim.x + 15) & ~15ull;
        u64 off = per * blockIdx.x;
        for (int r = 0; r < reps; r++)
            if (off < n) rshmem_putmem_nbi_block(dst + off, src + off, off + per > n ? n - off : per, pe);
        __syncthreads();
        if (threadIdx.x == 0) rshmem_quiet();
    } else if (threadIdx.x == 0 && blockIdx.x == 0) {
        for (int r = 0; r < reps; r++) rshmemx_ce_putmem_nbi(dst, src, n, pe);
        rshmemx_ce_quiet();
    }
    __syncthreads();
    if (threadIdx.x == 0) atomicMax(&t[1], rshmem_globaltimer());
}

// A relayed put (`get` = 0) or get of `n` bytes with `pe` through `relay` at `scope`, then
// rshmem_quiet (qmode 1) or the remote engine's quiet of the final PE (qmode 0).
extern "C" __global__ void en_relay(char* dst, const char* src, u64 n, int scope, int get, int qmode, int pe, int relay) {
    if (in_scope(scope)) {
        if (!get) {
            if (scope == 0) rshmemx_relay_putmem_nbi(dst, src, n, pe, relay);
            else if (scope == 1) rshmemx_relay_putmem_nbi_warp(dst, src, n, pe, relay);
            else rshmemx_relay_putmem_nbi_block(dst, src, n, pe, relay);
        } else {
            if (scope == 0) rshmemx_relay_getmem_nbi(dst, src, n, pe, relay);
            else if (scope == 1) rshmemx_relay_getmem_nbi_warp(dst, src, n, pe, relay);
            else rshmemx_relay_getmem_nbi_block(dst, src, n, pe, relay);
        }
    }
    engine_quiet(qmode == 1 ? EN_SM : EN_REMOTE, qmode, pe);
}

// Timing: one put of `n` bytes to `pe`, relayed through `relay` (relay >= 0) or through the
// remote engine straight (relay < 0), then the remote quiet of `pe`.
extern "C" __global__ void en_relay_bench(char* dst, const char* src, u64 n, int pe, int relay) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    if (relay >= 0) rshmemx_relay_putmem_nbi(dst, src, n, pe, relay);
    else rshmemx_remote_putmem_nbi(dst, src, n, pe);
    rshmemx_remote_quiet(pe);
}

// Misuse: a relay through the final PE itself.
extern "C" __global__ void en_misuse_relay(char* dst, const char* src, int pe) {
    if (threadIdx.x == 0 && blockIdx.x == 0) rshmemx_relay_putmem_nbi(dst, src, 64, pe, pe);
}
