// rshmem MoE device functions: expert-parallel token dispatch and combine, in the style
// of low-latency MoE kernels (one atomic per expert). Dispatch per row at warp scope
// (rshmemx_moe_dispatch_warp) or per batch of rows at block scope (rshmemx_moe_dispatch_block,
// what the library's kernel uses); combine's send a warp per row (rshmemx_moe_combine_warp).
//
// Layout (all in the symmetric heap; L = local experts per PE, C = capacity per expert):
//   recv_x      u16[L][C][H]   received tokens (bf16 bits), slot order = arrival order;
//               with FP8 dispatch u8[L][C][H] e4m3 values and recv_s f32[L][C][H/128]
//               scales instead (the sender quantizes each 128 values with one scale)
//   recv_meta   int[L][C][4]   (source PE, source token, k, router weight bits)
//   counters    int[L]         slot counters; senders reserve slots with fetch_add
//   expert_done u64[L]         each source adds (1 << 32) | tokens it sent to the expert
//   slot_of     int[T][K]      on the source PE: the slot each (token, k) got at its expert
//   comb_recv   u16[T][K][H]   on the source PE: expert outputs, per (token, k) (push combine)
//   comb_done   u64            each expert PE adds 1 per combine once its outputs are ready
//   pull_done   u64            each PE adds 1 per pull combine once it read every peer's outputs
//
// Protocol (the Rust CPU path in src/moe follows it step by step):
//   dispatch: per (token, k): one thread reserves slot = fetch_add(counters[le], 1) on the
//   expert's PE and puts the metadata; the warp (or the block, for its batch) puts the row. After every
//   put of the grid (kernel boundary + system fence), one atomic per expert publishes the
//   count. The receiver waits until all n_pes sources have reported for each local
//   expert, takes the count, and resets counter and report word for the next round.
//   combine, push (peers reached through the proxy): per received row, the warp puts the
//   expert's output to the source PE's comb_recv[token][k]; after all puts each PE adds 1
//   to every PE's comb_done; a source waits until comb_done reaches round * n_pes and
//   reduces sum_k w[t][k] * out[t][k] in f32 (no fused multiply-add, k ascending),
//   rounding to bf16 once.
//   combine, pull (every PE's heap mapped): each expert PE adds 1 to every PE's comb_done
//   once its outputs are written; a source waits as above and reduces straight from the
//   experts' output rows (row slot_of[t][k] of expert e on PE e / L), so the outputs cross
//   once and are never staged; then it adds 1 to every PE's pull_done, and no PE returns
//   before pull_done reaches round * n_pes (its outputs may change after that).
#ifndef RSHMEM_MOE_CUH
#define RSHMEM_MOE_CUH

#include "rshmem_device.cuh"

typedef unsigned short rshmem_bf16_bits;

// status[] words written by the kernels (read by the host after each phase).
#define RSHMEM_MOE_STATUS_OVERFLOW 0     // rows that found their expert's buffer full
#define RSHMEM_MOE_STATUS_BAD_EXPERT 1   // expert ids outside -1..n_experts-1
#define RSHMEM_MOE_STATUS_MISMATCH 2     // slot counter differs from the published count

__device__ __forceinline__ float rshmemx_bf16_to_float(rshmem_bf16_bits b) { return __uint_as_float(((unsigned)b) << 16); }

// Round to nearest even; NaN stays a quiet NaN.
__device__ __forceinline__ rshmem_bf16_bits rshmemx_float_to_bf16(float f) {
    unsigned u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (rshmem_bf16_bits)0x7fc0;
    u += 0x7fffu + ((u >> 16) & 1u);
    return (rshmem_bf16_bits)(u >> 16);
}

struct rshmemx_moe_layout {
    int hidden;          // H (bf16 values per token)
    int top_k;           // K
    int n_experts;
    int local_experts;   // L
    int capacity;        // C
};

// FP8 e4m3 (OCP "FN": bias 7, no infinities, max 448) from f32: round to nearest even,
// saturating to +-448; NaN becomes 0x7f. Integer steps only, so the host matches it.
__device__ __forceinline__ unsigned char rshmemx_float_to_e4m3(float f) {
    unsigned u = __float_as_uint(f);
    unsigned char sign = (u >> 24) & 0x80u;
    unsigned a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return 0x7f;
    float af = __uint_as_float(a);
    if (af > 448.0f) return sign | 0x7e;
    if (af < 0.015625f) return sign | (unsigned char)__float2int_rn(af * 512.0f);  // subnormals; 8 is 2^-6
    int e = (int)(a >> 23) - 127;
    unsigned m = a & 0x7fffffu, r = m >> 20, rem = m & 0xfffffu;
    if (rem > 0x80000u || (rem == 0x80000u && (r & 1u))) r++;
    if (r == 8) { r = 0; e++; }
    unsigned code = ((unsigned)(e + 7) << 3) | r;
    if (code > 0x7eu) code = 0x7e;
    return sign | (unsigned char)code;
}

__device__ __forceinline__ float rshmemx_e4m3_to_float(unsigned char c) {
    unsigned ex = (c >> 3) & 15u, m = c & 7u;
    float v;
    if (ex == 0) v = (float)m * 0.001953125f;
    else if (ex == 15 && m == 7) v = __uint_as_float(0x7fc00000u);
    else v = __uint_as_float(((ex + 120u) << 23) | (m << 20));
    return (c & 0x80u) ? -v : v;
}

// Four values to e4m3, packed little-endian (v[0] in the low byte): the same bytes as
// rshmemx_float_to_e4m3 on each. From sm_89 on, the GPU's conversion instruction
// (round to nearest even, saturating to +-448, as that function does) does two at a time;
// only its NaN may differ in sign, so a NaN becomes 0x7f here as there.
__device__ __forceinline__ unsigned rshmemx_e4m3x4(const float* v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    unsigned short lo, hi;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(lo) : "f"(v[1]), "f"(v[0]));
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(hi) : "f"(v[3]), "f"(v[2]));
    unsigned r = (unsigned)lo | ((unsigned)hi << 16);
#pragma unroll
    for (int i = 0; i < 4; i++)
        if (v[i] != v[i]) r = (r & ~(0xffu << (8 * i))) | (0x7fu << (8 * i));
    return r;
#else
    return (unsigned)rshmemx_float_to_e4m3(v[0]) | ((unsigned)rshmemx_float_to_e4m3(v[1]) << 8) |
           ((unsigned)rshmemx_float_to_e4m3(v[2]) << 16) | ((unsigned)rshmemx_float_to_e4m3(v[3]) << 24);
#endif
}

// One warp quantizes one group of 128 bf16 values (4 per lane): scale = amax / 448, the
// values become e4m3(x * (448 / amax)); an all-zero group gets scale 0 and zeros.
__device__ __forceinline__ void rshmemx_moe_quantize_group_warp(const rshmem_bf16_bits* x, unsigned char* q, float* scale) {
    const unsigned lane = threadIdx.x & 31u;
    float v[4];
    float amax = 0.0f;
    for (int i = 0; i < 4; i++) {
        v[i] = rshmemx_bf16_to_float(x[lane * 4 + i]);
        amax = fmaxf(amax, fabsf(v[i]));
    }
    for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    const float inv = amax > 0.0f ? __fdiv_rn(448.0f, amax) : 0.0f;
    for (int i = 0; i < 4; i++) q[lane * 4 + i] = rshmemx_float_to_e4m3(__fmul_rn(v[i], inv));
    if (lane == 0) *scale = amax > 0.0f ? __fdiv_rn(amax, 448.0f) : 0.0f;
    __syncwarp();
}

// Reserves token t's k-th choice a slot at its expert and writes the row's metadata there
// (thread scope): returns the row (le * C + slot) and sets *dst to the expert's PE, or -1 for
// an id of -1, an id out of range or a full expert (the last two counted in `status`). With
// `slot_of` (may be null), records the slot in slot_of[t][k].
__device__ __forceinline__ long long rshmemx_moe_reserve_row(const rshmemx_moe_layout& l, const int* topk_idx, const float* topk_w, int t, int k,
                                                             int* recv_meta, int* counters, int* sent, int* status, int* slot_of, int* dst) {
    const long long tk = (long long)t * l.top_k + k;
    const int e = topk_idx[tk];
    if (e < 0) return -1;
    if (e >= l.n_experts) {
        atomicAdd(&status[RSHMEM_MOE_STATUS_BAD_EXPERT], 1);
        return -1;
    }
    *dst = e / l.local_experts;
    const int le = e % l.local_experts;
    const int slot = rshmem_int_atomic_fetch_add(&counters[le], 1, *dst);
    atomicAdd(&sent[e], 1);
    if (slot >= l.capacity) {
        atomicAdd(&status[RSHMEM_MOE_STATUS_OVERFLOW], 1);
        return -1;
    }
    if (slot_of) slot_of[tk] = slot;
    const long long row = (long long)le * l.capacity + slot;
    int* m = recv_meta + row * 4;
    rshmem_int_p(m + 0, rshmem_my_pe(), *dst);
    rshmem_int_p(m + 1, t, *dst);
    rshmem_int_p(m + 2, k, *dst);
    rshmem_int_p(m + 3, __float_as_int(topk_w[tk]), *dst);
    return row;
}

// Dispatch of token t's k-th choice by one warp (every lane calls it with the same
// arguments). The token is `row_bytes` at `rows + t * row_bytes` (bf16, or e4m3 values),
// plus `scale_bytes` at `scales + t * scale_bytes` (e4m3 scales; 0 for bf16). Returns
// without communication for an id of -1. With `slot_of` (may be null), records the slot the
// row got at its expert in slot_of[t][k] (what a pull combine reads from).
__device__ __forceinline__ void rshmemx_moe_dispatch_warp(const rshmemx_moe_layout& l, const char* rows, int row_bytes, const char* scales,
                                                          int scale_bytes, const int* topk_idx, const float* topk_w, int t, int k,
                                                          char* recv_rows, char* recv_scales, int* recv_meta, int* counters, int* sent,
                                                          int* status, int* slot_of) {
    const unsigned lane = threadIdx.x & 31u;
    long long row = -1;
    int dst = 0;
    if (lane == 0) row = rshmemx_moe_reserve_row(l, topk_idx, topk_w, t, k, recv_meta, counters, sent, status, slot_of, &dst);
    row = __shfl_sync(0xffffffffu, row, 0);
    dst = __shfl_sync(0xffffffffu, dst, 0);
    if (row < 0) return;
    rshmem_putmem_nbi_warp(recv_rows + row * row_bytes, rows + (long long)t * row_bytes, (rshmem_size_t)row_bytes, dst);
    if (scale_bytes > 0)
        rshmem_putmem_nbi_warp(recv_scales + row * scale_bytes, scales + (long long)t * scale_bytes, (rshmem_size_t)scale_bytes, dst);
    __syncwarp();
}

// Most rows a block lists at once (rshmemx_moe_dispatch_block).
#define RSHMEM_MOE_BLOCK_PAIRS 64

// A block's list of rows to copy (in shared memory): row j goes from `src[j]` here to
// `sym[j]` on PE `pe[j]`, whose mapping here is `mapped[j]` (null: reached through the proxy).
struct rshmemx_moe_rows {
    const char* src[RSHMEM_MOE_BLOCK_PAIRS];
    char* sym[RSHMEM_MOE_BLOCK_PAIRS];
    char* mapped[RSHMEM_MOE_BLOCK_PAIRS];
    int pe[RSHMEM_MOE_BLOCK_PAIRS];
    int live;    // rows listed
    int direct;  // every listed row mapped
};

// Starts an empty list (block scope; a __syncthreads() must follow before rows are added).
__device__ __forceinline__ void rshmemx_moe_rows_clear(rshmemx_moe_rows& r) {
    if (threadIdx.x == 0) {
        r.live = 0;
        r.direct = 1;
    }
}

// Adds a row (one thread per row); returns its index in the list.
__device__ __forceinline__ int rshmemx_moe_rows_add(rshmemx_moe_rows& r, const char* src, char* sym, int pe, rshmem_size_t bytes) {
    rshmemi_check("moe (row put)", sym, bytes, pe);
    char* mapped = (char*)rshmem_ptr(sym, pe);
    if (!mapped) r.direct = 0;
    const int j = atomicAdd(&r.live, 1);
    r.src[j] = src;
    r.sym[j] = sym;
    r.mapped[j] = mapped;
    r.pe[j] = pe;
    return j;
}

// Copies the listed rows of `row_bytes` each (block scope, a 1-D block, after a
// __syncthreads() that follows the adds). Where every row is mapped and the rows are
// 16-byte aligned (`aligned`: the caller's bases and row size), 16 bytes a thread with four
// loads in flight, spread over every thread of the block whatever the number of rows, so
// that a few rows still keep the block's loads in flight; otherwise a warp per row through
// rshmem_putmem_nbi_warp (PEs reached through the proxy, odd sizes).
__device__ __forceinline__ void rshmemx_moe_rows_copy(const rshmemx_moe_rows& r, rshmem_size_t row_bytes, bool aligned) {
    const unsigned tid = threadIdx.x, live = (unsigned)r.live;
    if (r.direct && aligned && row_bytes >= 16 && (row_bytes & 15) == 0) {
        const unsigned per = (unsigned)(row_bytes / 16), total = live * per, T = blockDim.x;
        for (unsigned f = tid; f < total; f += 4 * T) {
            int4 v[4];
            int4* to[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const unsigned x = f + u * T, j = x / per, c = x - j * per;
                to[u] = x < total ? (int4*)r.mapped[j] + c : (int4*)0;
                if (x < total) v[u] = ((const int4*)r.src[j])[c];
            }
#pragma unroll
            for (int u = 0; u < 4; u++)
                if (to[u]) *to[u] = v[u];
        }
        return;
    }
    for (unsigned j = tid >> 5; j < live; j += blockDim.x >> 5) rshmem_putmem_nbi_warp(r.sym[j], r.src[j], row_bytes, r.pe[j]);
}

// Dispatch of the `n` (token, k) pairs p0 .. p0 + n - 1 (p = t * top_k + k) by one block
// (every thread calls it with the same arguments; n at most RSHMEM_MOE_BLOCK_PAIRS and at
// most the block's size; a 1-D block). Moves what rshmemx_moe_dispatch_warp moves for each
// pair, in two steps: one thread per pair reserves its slot and writes its metadata, all
// of the block's pairs at once (one atomic round trip for the batch rather than one per
// pair); then the whole block copies the rows (rshmemx_moe_rows_copy), and a warp per row
// its scales.
__device__ __forceinline__ void rshmemx_moe_dispatch_block(const rshmemx_moe_layout& l, const char* rows, int row_bytes, const char* scales,
                                                           int scale_bytes, const int* topk_idx, const float* topk_w, long long p0, int n,
                                                           char* recv_rows, char* recv_scales, int* recv_meta, int* counters, int* sent,
                                                           int* status, int* slot_of) {
    __shared__ rshmemx_moe_rows r;
    __shared__ long long s_row[RSHMEM_MOE_BLOCK_PAIRS];  // le * C + slot of list entry j
    __shared__ int s_tok[RSHMEM_MOE_BLOCK_PAIRS];        // its token
    rshmemx_moe_rows_clear(r);
    __syncthreads();
    if ((int)threadIdx.x < n) {
        const long long p = p0 + threadIdx.x;
        const int t = (int)(p / l.top_k);
        int dst = 0;
        const long long row = rshmemx_moe_reserve_row(l, topk_idx, topk_w, t, (int)(p % l.top_k), recv_meta, counters, sent, status, slot_of, &dst);
        if (row >= 0) {
            const int j = rshmemx_moe_rows_add(r, rows + (long long)t * row_bytes, recv_rows + row * row_bytes, dst, (rshmem_size_t)row_bytes);
            s_row[j] = row;
            s_tok[j] = t;
        }
    }
    __syncthreads();
    rshmemx_moe_rows_copy(r, (rshmem_size_t)row_bytes, ((((rshmem_u64)rows) | (rshmem_u64)recv_rows) & 15) == 0);
    if (scale_bytes > 0)
        for (int j = (int)(threadIdx.x >> 5); j < r.live; j += (int)(blockDim.x >> 5))
            rshmem_putmem_nbi_warp(recv_scales + s_row[j] * scale_bytes, scales + (long long)s_tok[j] * scale_bytes, (rshmem_size_t)scale_bytes,
                                   r.pe[j]);
    // The next batch reuses the shared lists.
    __syncthreads();
}

// FP8 dispatch of token t's choices k0 .. k0 + 31 by one warp (every lane calls it with the
// same arguments), every expert's PE mapped. Lane j reserves choice k0 + j's slot, writes its
// metadata and finds its rows on the expert's PE; then the warp walks the token 512 values
// at a time, 16 per lane (a group of 128 values is 8 lanes): loads them, quantizes them
// as rshmemx_moe_quantize_group_warp does (the same amax, the same operations per value),
// and stores the 16 bytes, and the group's scale, into every reserved row.
__device__ __forceinline__ void rshmemx_moe_dispatch_fp8_warp(const rshmemx_moe_layout& l, const rshmem_bf16_bits* x, const int* topk_idx,
                                                              const float* topk_w, int t, int k0, unsigned char* recv_q, float* recv_s,
                                                              int* recv_meta, int* counters, int* sent, int* status, int* slot_of) {
    const unsigned lane = threadIdx.x & 31u;
    const int k = k0 + (int)lane;
    const int groups = l.hidden / 128;
    // A lane's 16 values of a piece of 4 groups: group g0 + lg, from value lo. The row is
    // read ahead one piece (the first before the slots are reserved, each next one before
    // this one is quantized and stored), so a warp always has a load in flight.
    const rshmem_bf16_bits* xr = x + (long long)t * l.hidden;
    const int lg = (int)(lane >> 3), lo = (int)(lane & 7u) * 16;
    uint4 na = {0u, 0u, 0u, 0u}, nb = {0u, 0u, 0u, 0u};
    if (lg < groups) {
        const uint4* p = (const uint4*)(xr + lg * 128 + lo);
        na = __ldg(p);
        nb = __ldg(p + 1);
    }
    unsigned char* q_row = 0;
    float* s_row = 0;
    if (k < l.top_k) {
        int dst = 0;
        const long long row = rshmemx_moe_reserve_row(l, topk_idx, topk_w, t, k, recv_meta, counters, sent, status, slot_of, &dst);
        if (row >= 0) {
            q_row = (unsigned char*)rshmem_ptr(recv_q + row * l.hidden, dst);
            s_row = (float*)rshmem_ptr(recv_s + row * groups, dst);
            if (!q_row || !s_row)
                rshmemi_fail("moe::dispatch (fp8, one pass)", "the expert's PE is not mapped", dst, (rshmem_u64)(recv_q + row * l.hidden), 0);
        }
    }
    const unsigned rows = __ballot_sync(0xffffffffu, q_row != 0);
    for (int g0 = 0; g0 < groups; g0 += 4) {
        const int g = g0 + lg;
        const int at = g * 128 + lo;
        const bool on = g < groups;
        const uint4 a = na, b = nb;
        if (g + 4 < groups) {
            const uint4* p = (const uint4*)(xr + at + 4 * 128);
            na = __ldg(p);
            nb = __ldg(p + 1);
        }
        float v[16];
        float amax = 0.0f;
        if (on) {
            const unsigned w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
            for (int i = 0; i < 8; i++) {
                v[2 * i] = __uint_as_float(w[i] << 16);
                v[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
            }
#pragma unroll
            for (int i = 0; i < 16; i++) amax = fmaxf(amax, fabsf(v[i]));
        }
        for (int o = 4; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
        const float inv = amax > 0.0f ? __fdiv_rn(448.0f, amax) : 0.0f;
        const float scale = amax > 0.0f ? __fdiv_rn(amax, 448.0f) : 0.0f;
        uint4 q = {0u, 0u, 0u, 0u};
        if (on) {
#pragma unroll
            for (int i = 0; i < 16; i++) v[i] = __fmul_rn(v[i], inv);
            q = make_uint4(rshmemx_e4m3x4(v), rshmemx_e4m3x4(v + 4), rshmemx_e4m3x4(v + 8), rshmemx_e4m3x4(v + 12));
        }
        for (unsigned m = rows; m; m &= m - 1u) {
            const int j = __ffs(m) - 1;
            unsigned char* qr = (unsigned char*)__shfl_sync(0xffffffffu, (unsigned long long)q_row, j);
            float* sr = (float*)__shfl_sync(0xffffffffu, (unsigned long long)s_row, j);
            if (on) {
                *(uint4*)(qr + at) = q;
                if ((lane & 7u) == 0) sr[g] = scale;
            }
        }
    }
    __syncwarp();
}

// After every dispatch put of this PE is complete: one atomic per expert publishes this
// PE's count to the expert's PE (thread scope; call for each expert once).
__device__ __forceinline__ void rshmemx_moe_publish_count(const rshmemx_moe_layout& l, int e, int* sent, rshmem_u64* expert_done) {
    const int dst = e / l.local_experts;
    const int le = e % l.local_experts;
    rshmem_signal_op(&expert_done[le], (1ull << 32) | (rshmem_u64)(unsigned)sent[e], RSHMEM_SIGNAL_ADD, dst);
    sent[e] = 0;
}

// Waits until every source reported for local expert le, stores its count and resets the
// expert's words for the next round (thread scope).
__device__ __forceinline__ void rshmemx_moe_wait_expert(const rshmemx_moe_layout& l, int le, rshmem_u64* expert_done, int* counters,
                                                        int* recv_count, int* status) {
    rshmem_u64 v = rshmem_signal_wait_until(&expert_done[le], RSHMEM_CMP_GE, (rshmem_u64)rshmem_n_pes() << 32);
    int count = (int)(v & 0xffffffffull);
    if (*(volatile int*)&counters[le] != count) atomicAdd(&status[RSHMEM_MOE_STATUS_MISMATCH], 1);
    recv_count[le] = count;
    *(volatile int*)&counters[le] = 0;
    *(volatile rshmem_u64*)&expert_done[le] = 0;
    __threadfence_system();
}

// Combine: one warp sends row `slot` of local expert `le` (y has recv_x's layout) back to
// its source PE's comb_recv[token][k].
__device__ __forceinline__ void rshmemx_moe_combine_warp(const rshmemx_moe_layout& l, const rshmem_bf16_bits* y, const int* recv_meta, int le,
                                                         int slot, rshmem_bf16_bits* comb_recv) {
    const long long row = (long long)le * l.capacity + slot;
    const int* m = recv_meta + row * 4;
    const int src_pe = m[0], t = m[1], k = m[2];
    rshmem_putmem_nbi_warp(comb_recv + ((long long)t * l.top_k + k) * l.hidden, y + row * l.hidden, (rshmem_size_t)l.hidden * 2, src_pe);
}

// Most experts per token the combine kernels take (rshmem::moe checks it).
#define RSHMEM_MOE_MAX_TOP_K 256

// Combine's reduction of one token by one block: out[h] = sum over j < n of w[j] * rows[j][h]
// (rows in k order), in f32 without fused multiply-add, rounded to bf16 once, for the
// chunks [lo, hi): 8 values each with `vec` (hidden a multiple of 8, rows and out 16-byte
// aligned), else 1. `rows` and `w` are the same for every thread (e.g. in shared memory).
// With `vec` a thread issues the loads of up to 8 rows before it adds: 8 x 16 B in flight.
__device__ __forceinline__ void rshmemx_moe_reduce_rows_block(int n, const rshmem_bf16_bits* const* rows, const float* w, bool vec, int lo,
                                                             int hi, rshmem_bf16_bits* out) {
    if (!vec) {
        for (int h = lo + threadIdx.x; h < hi; h += blockDim.x) {
            float acc = 0.0f;
            for (int j = 0; j < n; j++) acc = __fadd_rn(acc, __fmul_rn(w[j], rshmemx_bf16_to_float(__ldcg(rows[j] + h))));
            out[h] = rshmemx_float_to_bf16(acc);
        }
        return;
    }
    for (int c = lo + threadIdx.x; c < hi; c += blockDim.x) {
        float acc[8];
#pragma unroll
        for (int i = 0; i < 8; i++) acc[i] = 0.0f;
        for (int j0 = 0; j0 < n; j0 += 8) {
            uint4 v[8];
#pragma unroll
            for (int u = 0; u < 8; u++)
                if (j0 + u < n) v[u] = __ldcg((const uint4*)rows[j0 + u] + c);
#pragma unroll
            for (int u = 0; u < 8; u++) {
                if (j0 + u >= n) break;
                const float wu = w[j0 + u];
                const unsigned words[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    acc[2 * i] = __fadd_rn(acc[2 * i], __fmul_rn(wu, __uint_as_float(words[i] << 16)));
                    acc[2 * i + 1] = __fadd_rn(acc[2 * i + 1], __fmul_rn(wu, __uint_as_float(words[i] & 0xffff0000u)));
                }
            }
        }
        uint4 o;
        unsigned* ow = (unsigned*)&o;
#pragma unroll
        for (int i = 0; i < 4; i++) ow[i] = (unsigned)rshmemx_float_to_bf16(acc[2 * i]) | ((unsigned)rshmemx_float_to_bf16(acc[2 * i + 1]) << 16);
        ((uint4*)out)[c] = o;
    }
}

// Whether this block is the grid's last to get here (block scope; every thread calls it).
// Each block's earlier writes are fenced at system scope before it counts itself, so the
// last block sees all of them; the last one sets `counter` back to 0 for the next grid.
__device__ __forceinline__ bool rshmemx_moe_last_block(unsigned* counter) {
    __shared__ bool last;
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) {
        last = atomicAdd(counter, 1u) == gridDim.x - 1;
        if (last) *(volatile unsigned*)counter = 0;
    }
    __syncthreads();
    if (last) __threadfence_system();
    return last;
}

// Dispatch's end, called by every thread of the grid after its warps' puts: the grid's
// last block publishes one count per expert (after every block's puts), waits for every
// local expert's sources, and copies the counts and the 4 status words
// (recv_count[0..L+4]) to `host_out` (host memory the host reads after the grid; null: the
// host reads recv_count).
__device__ __forceinline__ void rshmemx_moe_dispatch_finish(const rshmemx_moe_layout& l, int* sent, rshmem_u64* expert_done, int* counters,
                                                            int* recv_count, unsigned* grid_done, int* host_out) {
    int* status = recv_count + l.local_experts;
    if (!rshmemx_moe_last_block(grid_done)) return;
    for (int e = threadIdx.x; e < l.n_experts; e += blockDim.x) rshmemx_moe_publish_count(l, e, sent, expert_done);
    for (int le = threadIdx.x; le < l.local_experts; le += blockDim.x) rshmemx_moe_wait_expert(l, le, expert_done, counters, recv_count, status);
    __syncthreads();
    if (host_out)
        for (int i = threadIdx.x; i < l.local_experts + 4; i += blockDim.x) ((volatile int*)host_out)[i] = ((volatile int*)recv_count)[i];
    __threadfence_system();
}

#endif  // RSHMEM_MOE_CUH
