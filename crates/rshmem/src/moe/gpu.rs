//! The GPU path of [`super::Moe`]: the kernels of `device/rshmem_moe.cu`, launched in
//! stream order on the PE's default stream (CUDA glue: the launches are `unsafe`).

use super::{invalid, Moe, MoeCombine, MoeConfig, KERNEL_SOURCE, MAX_GPU_TOP_K};
use crate::ctx::Ctx;
use crate::error::Result;
use crate::gpu::{Gpu, KernelArg as A, LaunchConfig, Module, RESULT_WORDS};
use crate::ops::engines::Engine;
use crate::sym::Sym;
use crate::types::SymType;
use std::sync::Arc;

const WARPS_PER_BLOCK: u32 = 8;
/// Most (token, k) pairs a dispatch block lists at once (`RSHMEM_MOE_BLOCK_PAIRS` of
/// device/rshmem_moe.cuh; at most the block's `32 * WARPS_PER_BLOCK` threads).
const ROW_BATCH_MAX: usize = 64;
/// Fewest pairs a dispatch block lists at once. Each block of the dispatch grid also pays a
/// system-scope fence and an atomic on one counter at its end: on the H200, 128 tokens
/// (1024 pairs) in 512 blocks of 2 took 37-40 us a dispatch, in 128 blocks of 8 27.5-28.1,
/// in 64 of 16 26.8-29.7.
const ROW_BATCH_LEAST: usize = 16;
/// Threads per block of combine's reduction.
const REDUCE_THREADS: u32 = 128;

/// The compiled MoE kernels of one PE.
pub(crate) struct MoeKernels {
    module: Module,
    gpu: Arc<Gpu>,
    sms: u32,
    /// Blocks of combine's reduction that fit on the GPU at once (its every block waits).
    reduce_fit: usize,
    /// Fewest tokens an FP8 dispatch runs in one pass (`RSHMEM_MOE_FP8_ONE_PASS_TOKENS`),
    /// `None` where some PE is not mapped (it never does then).
    one_pass_from: Option<usize>,
}

/// The first PE this PE's kernels reach only through the proxy, if any.
fn unmapped_pe(ctx: &Ctx) -> Option<usize> {
    (0..ctx.n_pes()).find(|&pe| !ctx.engine_reaches(Engine::Sm, pe))
}

/// Whether a GPU layer's combine pulls (see [`MoeCombine`]); checks that the kernels take
/// the configuration's `top_k`.
pub(crate) fn pulls(ctx: &Ctx, cfg: &MoeConfig) -> Result<bool> {
    const CALL: &str = "Moe::new";
    if cfg.top_k > MAX_GPU_TOP_K {
        return Err(invalid(CALL, "top_k", format!("{} is more than the {MAX_GPU_TOP_K} the GPU kernels take", cfg.top_k), ctx.my_pe()));
    }
    match (cfg.combine, unmapped_pe(ctx)) {
        (MoeCombine::Push, _) => Ok(false),
        (MoeCombine::Auto, u) => Ok(u.is_none()),
        (MoeCombine::Pull, None) => Ok(true),
        (MoeCombine::Pull, Some(pe)) => Err(invalid(
            CALL,
            "combine",
            format!("a pull combine reads every PE's outputs through a mapping, and PE {pe} is reached through the proxy"),
            ctx.my_pe(),
        )),
    }
}

/// The grid on `sms` multiprocessors of a kernel whose blocks list `rows` rows a batch at a
/// time, and the batch: at least [`ROW_BATCH_LEAST`] (`least` in the tests), at most
/// [`ROW_BATCH_MAX`]; at most 4 blocks per SM, which take the batches in turn, every block
/// the same number of them (the last turn short), so that no block is left with a whole
/// batch more than the others at the end.
fn row_grid(rows: usize, sms: usize, least: usize) -> (u32, usize) {
    let most_blocks = 4 * sms.max(1);
    let turns = rows.div_ceil(most_blocks * ROW_BATCH_MAX).max(1);
    let batch = rows.div_ceil(most_blocks * turns).clamp(least.clamp(1, ROW_BATCH_MAX), ROW_BATCH_MAX);
    (rows.div_ceil(batch).clamp(1, most_blocks) as u32, batch)
}

fn a<T: SymType>(s: &Sym<T>) -> A {
    A::U64(s.addr() as u64)
}

impl MoeKernels {
    pub(crate) fn new(ctx: &Ctx, gpu: &Arc<Gpu>) -> Result<MoeKernels> {
        let module = gpu.compile("rshmem_moe", KERNEL_SOURCE, &[])?;
        let sms = gpu.sm_count()?.max(1) as u32;
        let reduce_fit = module.resident_blocks("rshmem_moe_combine_reduce", REDUCE_THREADS)?;
        let one_pass_from = unmapped_pe(ctx).is_none().then_some(ctx.rt.config.moe_fp8_one_pass);
        Ok(MoeKernels { module, gpu: gpu.clone(), sms, reduce_fit, one_pass_from })
    }

    fn launch(&self, kernel: &str, blocks: u32, threads: u32, args: &[A]) -> Result<()> {
        // SAFETY: every caller below passes the argument kinds of the kernel's signature in
        // device/rshmem_moe.cu, with addresses of live symmetric allocations of the layout
        // the kernels index (sized by Moe::new / AllToAll::new from the same numbers).
        unsafe { self.module.launch(kernel, LaunchConfig::new(blocks.max(1), threads), None, args) }
    }

    /// Blocks of `WARPS_PER_BLOCK` warps for `items` warp-sized work items, up to 4 per SM.
    fn warp_blocks(&self, items: usize) -> u32 {
        (items.div_ceil(WARPS_PER_BLOCK as usize) as u32).clamp(1, 4 * self.sms)
    }

    /// The dispatch kernel's grid for `rows` (token, k) pairs: [`row_grid`].
    fn row_batches(&self, rows: usize) -> (u32, usize) {
        row_grid(rows, self.sms as usize, ROW_BATCH_LEAST)
    }

    fn layout(m: &Moe) -> [A; 5] {
        [
            A::I32(m.cfg.hidden as i32),
            A::I32(m.cfg.top_k as i32),
            A::I32(m.cfg.n_experts as i32),
            A::I32(m.local_experts as i32),
            A::I32(m.capacity as i32),
        ]
    }

    pub(crate) fn dispatch(&self, _ctx: &Ctx, m: &Moe, n_tokens: usize) -> Result<(Vec<usize>, usize, usize)> {
        // The status words start zeroed and combine_reduce clears them after each dispatch.
        let [h, k, e, l, c] = Self::layout(m);
        let h_us = m.cfg.hidden;
        let one_pass = m.cfg.fp8 && self.one_pass_from.is_some_and(|from| n_tokens >= from);
        // The counts and status words come back through the PE's result memory where they
        // fit (no device-to-host copy), else from recv_count.
        let words = m.local_experts + 4;
        let back = self.gpu.with_results(|out| -> Result<Vec<u32>> {
            let fits = words <= RESULT_WORDS;
            let host_out = A::U64(if fits { out.device() } else { 0 });
            let tail = [a(&m.recv_meta), a(&m.counters), a(&m.sent), a(&m.slot_of), a(&m.expert_done), a(&m.recv_count)];
            let grid_done = A::U64(m.grid_done.addr_of(0) as u64);
            if one_pass {
                let head = [a(&m.x), a(&m.topk_idx), a(&m.topk_w), A::I32(n_tokens as i32), h, k, e, l, c, a(&m.recv_q), a(&m.recv_s)];
                let args: Vec<A> = head.into_iter().chain(tail).chain([grid_done, host_out]).collect();
                self.launch("rshmem_moe_dispatch_fp8", self.warp_blocks(n_tokens), 32 * WARPS_PER_BLOCK, &args)?;
            } else {
                let (rows, row_bytes, scales, scale_bytes, recv_rows, recv_scales) = if m.cfg.fp8 {
                    let groups = n_tokens * h_us / 128;
                    self.launch(
                        "rshmem_moe_quantize",
                        self.warp_blocks(groups),
                        32 * WARPS_PER_BLOCK,
                        &[a(&m.x), A::I64(groups as i64), a(&m.xq), a(&m.xs)],
                    )?;
                    (a(&m.xq), h_us, a(&m.xs), h_us / 128 * 4, a(&m.recv_q), a(&m.recv_s))
                } else {
                    (a(&m.x), 2 * h_us, a(&m.x), 0, a(&m.recv_x), a(&m.recv_x))
                };
                let head = [
                    rows,
                    A::I32(row_bytes as i32),
                    scales,
                    A::I32(scale_bytes as i32),
                    a(&m.topk_idx),
                    a(&m.topk_w),
                    A::I32(n_tokens as i32),
                    h,
                    k,
                    e,
                    l,
                    c,
                    recv_rows,
                    recv_scales,
                ];
                let (blocks, batch) = self.row_batches(n_tokens * m.cfg.top_k);
                let args: Vec<A> = head.into_iter().chain(tail).chain([grid_done, host_out, A::I32(batch as i32)]).collect();
                self.launch("rshmem_moe_dispatch", blocks, 32 * WARPS_PER_BLOCK, &args)?;
            }
            self.gpu.synchronize()?;
            if !fits {
                return Ok(m.recv_count.to_vec()?.into_iter().map(|v| v as u32).collect());
            }
            let mut back = vec![0u32; words];
            out.read_words(0, &mut back);
            Ok(back)
        })?;
        let (counts, st) = back.split_at(m.local_experts);
        let counts = counts.iter().map(|&v| v as usize).collect();
        if st[2] != 0 {
            return Err(crate::error::Error::InvalidArgument {
                call: "moe::dispatch",
                arg: "counters",
                detail: format!("{} local experts: slots reserved differ from the published count", st[2]),
                pe: m.me,
            });
        }
        Ok((counts, st[0] as usize, st[1] as usize))
    }

    pub(crate) fn combine(&self, _ctx: &Ctx, m: &Moe, y: &Sym<u16>) -> Result<()> {
        let [h, k, e, l, c] = Self::layout(m);
        let target = A::U64(m.round * m.n_pes as u64);
        let shared = self.gpu.sharers() > 1;
        let src = if m.pull {
            y
        } else {
            let rows = m.local_experts * m.capacity;
            self.launch(
                "rshmem_moe_combine_send",
                self.warp_blocks(rows),
                32 * WARPS_PER_BLOCK,
                &[a(y), a(&m.recv_meta), a(&m.recv_count), h, k, e, l, c, a(&m.comb_recv)],
            )?;
            &m.comb_recv
        };
        // After this PE's puts (push) or its outputs' writes (pull): a later launch, or the
        // reduction grid's first step when it pulls alone on the GPU.
        let signal_first = m.pull && !shared;
        if !signal_first {
            self.signal_all(&m.comb_done, m.n_pes)?;
        }
        if shared {
            // PEs of this process share the SMs: a reduction grid whose every block spins on
            // the signal could fill them and keep the other PEs' kernels (which bring the
            // signal) from running (seen with 8 thread PEs on the H200). One thread waits
            // first; the grid's own wait then passes at once.
            self.launch("rshmem_moe_wait", 1, 32, &[a(&m.comb_done), target])?;
        }
        let h_us = m.cfg.hidden;
        // 16-byte steps need whole rows of 8 values and aligned bases (heap blocks are).
        let vec = h_us.is_multiple_of(8) && [src.addr(), m.combined.addr()].iter().all(|p| p.is_multiple_of(16));
        // Few tokens: each is cut into slices of at least 128 chunks, so that every SM gets work.
        let chunks = if vec { h_us / 8 } else { h_us };
        let slices = (8 * self.sms as usize).div_ceil(m.n_tokens.max(1)).min(chunks.div_ceil(REDUCE_THREADS as usize)).max(1);
        // Every block waits for the signal: the grid must fit on the GPU at once.
        let blocks = (m.n_tokens * slices).clamp(1, self.reduce_fit) as u32;
        self.launch(
            "rshmem_moe_combine_reduce",
            blocks,
            REDUCE_THREADS,
            &[
                a(&m.topk_idx),
                a(&m.topk_w),
                a(&m.slot_of),
                A::I32(m.n_tokens as i32),
                h,
                k,
                e,
                l,
                c,
                a(src),
                A::I32(m.pull as i32),
                A::I32(vec as i32),
                A::I32(slices as i32),
                a(&m.combined),
                a(&m.comb_done),
                target,
                A::I32(signal_first as i32),
                A::U64(m.recv_count.addr_of(m.local_experts) as u64),
                A::U64(m.grid_done.addr_of(1) as u64),
                a(&m.pull_done),
            ],
        )?;
        self.gpu.synchronize()
    }

    /// Adds 1 to `word` on each of the `pes` PEs.
    fn signal_all(&self, word: &Sym<u64>, pes: usize) -> Result<()> {
        self.launch("rshmem_moe_signal_all", (pes as u32).div_ceil(128), 128, &[a(word)])
    }

    pub(crate) fn alltoall(&self, src: &Sym<u8>, dst: &Sym<u8>, done: &Sym<u64>, bytes_per_pe: usize, target: u64) -> Result<()> {
        let pes = src.len() / bytes_per_pe.max(1);
        let parts = (4 * self.sms as usize / pes.max(1)).max(1);
        self.launch("rshmem_moe_alltoall", (parts * pes) as u32, 256, &[a(src), a(dst), A::I64(bytes_per_pe as i64)])?;
        self.signal_all(done, pes)?;
        self.launch("rshmem_moe_wait", 1, 32, &[a(done), A::U64(target)])?;
        self.gpu.synchronize()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_row_grid_covers_every_row_in_batches_a_block_takes() {
        for sms in [1, 8, 132] {
            for least in [1, 8, 16, 100] {
                for pairs in [0, 1, 7, 8, 1024, 18432, 4 * 132 * 64, 32768, 81920, 1_000_000] {
                    let (blocks, batch) = row_grid(pairs, sms, least);
                    let blocks = blocks as usize;
                    assert!((1..=ROW_BATCH_MAX).contains(&batch), "batch {batch} for {pairs} pairs on {sms} SMs");
                    assert!(batch >= least.min(ROW_BATCH_MAX), "batch {batch} below {least}");
                    // Turns of the grid-stride loop: where the batch is not at its least
                    // and the turns are few, the last turn keeps at least half the blocks
                    // busy (81920 rows in batches of 64 on 528 blocks would leave 224 busy
                    // in the last of 3 turns).
                    let batches = pairs.div_ceil(batch);
                    let turns = batches.div_ceil(blocks);
                    if batch > least && (2..8).contains(&turns) {
                        let last = batches - (turns - 1) * blocks;
                        assert!(
                            2 * last >= blocks,
                            "{pairs} rows: {batches} batches of {batch} on {blocks} blocks, {last} in the last turn"
                        );
                    }
                    assert!((1..=4 * sms).contains(&blocks), "{blocks} blocks for {pairs} pairs on {sms} SMs");
                    // Grid-stride over batches: every pair is in some block's batch, and no
                    // block is left without one while pairs remain.
                    assert!(blocks * batch >= pairs.min(4 * sms * batch), "{blocks} x {batch} leaves pairs of {pairs} out");
                    assert!(
                        pairs == 0 || (blocks - 1) * batch < pairs,
                        "{blocks} blocks of {batch} for {pairs} pairs: a block without work"
                    );
                }
            }
        }
    }
}
