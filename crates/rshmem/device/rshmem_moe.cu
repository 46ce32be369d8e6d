// Kernels of `rshmem::moe` (compiled at run time with NVRTC; see rshmem_moe.cuh for the
// buffer layout and the protocol). Launched in stream order: dispatch: [quantize,] dispatch, or
// dispatch_fp8 alone (FP8 in one pass);
// combine: [combine_send (push), signal_all (push, or PEs sharing the GPU), wait (PEs sharing
// the GPU),] combine_reduce. Kernel boundaries, or a grid's last block after every block
// fenced its writes, order each PE's puts before the atomics that publish them.
#include "rshmem_moe.cuh"

// Dispatch in one grid: blocks take batches of `batch` (token, k) pairs, grid-stride
// (`rows`/`scales` as in rshmemx_moe_dispatch_warp, each batch by rshmemx_moe_dispatch_block);
// then rshmemx_moe_dispatch_finish (the grid's last block publishes the counts and waits for
// the sources). `grid_done` counts the blocks (0 between grids).
extern "C" __global__ void rshmem_moe_dispatch(const char* rows, int row_bytes, const char* scales, int scale_bytes, const int* topk_idx,
                                               const float* topk_w, int n_tokens, int hidden, int top_k, int n_experts, int local_experts,
                                               int capacity, char* recv_rows, char* recv_scales, int* recv_meta, int* counters, int* sent,
                                               int* slot_of, rshmem_u64* expert_done, int* recv_count, unsigned* grid_done, int* host_out,
                                               int batch) {
    const rshmemx_moe_layout l = {hidden, top_k, n_experts, local_experts, capacity};
    int* status = recv_count + local_experts;
    const long long pairs = (long long)n_tokens * top_k;
    for (long long p0 = (long long)blockIdx.x * batch; p0 < pairs; p0 += (long long)gridDim.x * batch)
        rshmemx_moe_dispatch_block(l, rows, row_bytes, scales, scale_bytes, topk_idx, topk_w, p0, (int)min((long long)batch, pairs - p0),
                                   recv_rows, recv_scales, recv_meta, counters, sent, status, slot_of);
    rshmemx_moe_dispatch_finish(l, sent, expert_done, counters, recv_count, grid_done, host_out);
}

// FP8 dispatch in one pass, where every PE's heap is mapped: a warp per token quantizes
// its row once (the values and scales of rshmem_moe_quantize, bit for bit) and stores each
// piece straight into the received rows of every expert the token chose, through the
// mappings (rshmemx_moe_dispatch_fp8_warp); then the grid's last block publishes and waits
// as rshmem_moe_dispatch does.
extern "C" __global__ void rshmem_moe_dispatch_fp8(const rshmem_bf16_bits* x, const int* topk_idx, const float* topk_w, int n_tokens,
                                                   int hidden, int top_k, int n_experts, int local_experts, int capacity,
                                                   unsigned char* recv_q, float* recv_s, int* recv_meta, int* counters, int* sent,
                                                   int* slot_of, rshmem_u64* expert_done, int* recv_count, unsigned* grid_done,
                                                   int* host_out) {
    const rshmemx_moe_layout l = {hidden, top_k, n_experts, local_experts, capacity};
    int* status = recv_count + local_experts;
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long t = warp; t < n_tokens; t += warps)
        for (int k0 = 0; k0 < top_k; k0 += 32)
            rshmemx_moe_dispatch_fp8_warp(l, x, topk_idx, topk_w, (int)t, k0, recv_q, recv_s, recv_meta, counters, sent, status, slot_of);
    rshmemx_moe_dispatch_finish(l, sent, expert_done, counters, recv_count, grid_done, host_out);
}

// FP8 dispatch's first step: a warp per group of 128 values, grid-stride.
extern "C" __global__ void rshmem_moe_quantize(const rshmem_bf16_bits* x, long long groups, unsigned char* q, float* scales) {
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long g = warp; g < groups; g += warps) rshmemx_moe_quantize_group_warp(x + g * 128, q + g * 128, scales + g);
}

// Push combine: a warp per received row, grid-stride over (local expert, slot).
extern "C" __global__ void rshmem_moe_combine_send(const rshmem_bf16_bits* y, const int* recv_meta, const int* recv_count, int hidden,
                                                   int top_k, int n_experts, int local_experts, int capacity, rshmem_bf16_bits* comb_recv) {
    const rshmemx_moe_layout l = {hidden, top_k, n_experts, local_experts, capacity};
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    const long long rows = (long long)local_experts * capacity;
    for (long long p = warp; p < rows; p += warps) {
        const int le = (int)(p / capacity), slot = (int)(p % capacity);
        if (slot < recv_count[le]) rshmemx_moe_combine_warp(l, y, recv_meta, le, slot, comb_recv);
    }
    __threadfence_system();
}

// One thread per PE adds 1 to that PE's `word` (after this PE's puts: a later launch).
extern "C" __global__ void rshmem_moe_signal_all(rshmem_u64* word) {
    const int pe = blockIdx.x * blockDim.x + threadIdx.x;
    if (pe < rshmem_n_pes()) rshmem_signal_op(word, 1ull, RSHMEM_SIGNAL_ADD, pe);
}

// Waits until `word` reaches `target` (one thread).
extern "C" __global__ void rshmem_moe_wait(rshmem_u64* word, rshmem_u64 target) {
    if (blockIdx.x == 0 && threadIdx.x == 0) rshmem_signal_wait_until(word, RSHMEM_CMP_GE, target);
}

// Combine's reduction, grid-stride over (token, slice of hidden) items: with
// `signal_first`, block 0 first adds 1 to every PE's comb_done (this PE's outputs are
// ready: an earlier launch wrote them); every block waits until comb_done reaches
// `target` (the grid must fit on the GPU at once), then reduces its items' rows: with
// `pull`, row slot_of[t][k] of `src` (the experts' outputs, laid out as recv_x) on the
// expert's PE, read through its mapping; else row (t, k) of `src` (comb_recv, filled by
// the experts' pushes). A pull's last block then adds 1 to every PE's pull_done and waits
// until it reaches `target` (no PE's outputs change while a PE still reads them).
// `status` (dispatch's 4 status words) is cleared for the next dispatch.
extern "C" __global__ void rshmem_moe_combine_reduce(const int* topk_idx, const float* topk_w, const int* slot_of, int n_tokens, int hidden,
                                                     int top_k, int n_experts, int local_experts, int capacity, const rshmem_bf16_bits* src,
                                                     int pull, int vec, int slices, rshmem_bf16_bits* out, rshmem_u64* comb_done,
                                                     rshmem_u64 target, int signal_first, int* status, unsigned* grid_done,
                                                     rshmem_u64* pull_done) {
    __shared__ const rshmem_bf16_bits* rows[RSHMEM_MOE_MAX_TOP_K];
    __shared__ float w[RSHMEM_MOE_MAX_TOP_K];
    __shared__ int n;
    const unsigned lane = threadIdx.x & 31u;
    if (blockIdx.x == 0 && threadIdx.x < 4) status[threadIdx.x] = 0;
    if (signal_first && blockIdx.x == 0)
        for (int pe = threadIdx.x; pe < rshmem_n_pes(); pe += blockDim.x) rshmem_signal_op(comb_done, 1ull, RSHMEM_SIGNAL_ADD, pe);
    if (threadIdx.x == 0) rshmem_signal_wait_until(comb_done, RSHMEM_CMP_GE, target);
    __syncthreads();
    const int chunks = vec ? hidden / 8 : hidden;
    const int per = (chunks + slices - 1) / slices;
    for (long long item = blockIdx.x; item < (long long)n_tokens * slices; item += gridDim.x) {
        const int t = (int)(item / slices), lo = (int)(item % slices) * per;
        if (threadIdx.x < 32) {
            // The first warp lists the token's experts in k order (ids of -1 dropped).
            int base = 0;
            for (int k0 = 0; k0 < top_k; k0 += 32) {
                const int k = k0 + (int)lane;
                const long long tk = (long long)t * top_k + k;
                const rshmem_bf16_bits* r = 0;
                const int e = k < top_k ? topk_idx[tk] : -1;
                if (e >= 0 && pull) {
                    const int pe = e / local_experts;
                    const long long row = (long long)(e % local_experts) * capacity + slot_of[tk];
                    r = (const rshmem_bf16_bits*)rshmem_ptr(src + row * hidden, pe);
                    if (!r) rshmemi_fail("moe::combine (pull)", "the expert's PE is not mapped", pe, (rshmem_u64)(src + row * hidden), 0);
                } else if (e >= 0) {
                    r = src + tk * hidden;
                }
                const unsigned m = __ballot_sync(0xffffffffu, e >= 0);
                if (e >= 0) {
                    const int pos = base + __popc(m & ((1u << lane) - 1u));
                    rows[pos] = r;
                    w[pos] = topk_w[tk];
                }
                base += __popc(m);
            }
            if (lane == 0) n = base;
        }
        __syncthreads();
        rshmemx_moe_reduce_rows_block(n, rows, w, vec != 0, lo, min(lo + per, chunks), out + (long long)t * hidden);
        __syncthreads();
    }
    if (!pull || !rshmemx_moe_last_block(grid_done)) return;
    for (int pe = threadIdx.x; pe < rshmem_n_pes(); pe += blockDim.x) rshmem_signal_op(pull_done, 1ull, RSHMEM_SIGNAL_ADD, pe);
    if (threadIdx.x == 0) rshmem_signal_wait_until(pull_done, RSHMEM_CMP_GE, target);
}

// Baseline all-to-all: block b puts part b / n_pes of this PE's chunk for PE b % n_pes.
extern "C" __global__ void rshmem_moe_alltoall(const char* src, char* dst, long long bytes_per_pe) {
    const int n = rshmem_n_pes(), me = rshmem_my_pe();
    const int parts = gridDim.x / n;
    if ((int)blockIdx.x >= parts * n) return;
    const int pe = blockIdx.x % n, part = blockIdx.x / n;
    const long long per = (bytes_per_pe / parts + 15) & ~15ll;
    const long long lo = (long long)part * per;
    long long hi = lo + per;
    if (hi > bytes_per_pe) hi = bytes_per_pe;
    if (lo < hi) rshmem_putmem_nbi_block(dst + (long long)me * bytes_per_pe + lo, src + (long long)pe * bytes_per_pe + lo, hi - lo, pe);
    __threadfence_system();
}
