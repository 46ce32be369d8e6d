//! Expert-parallel mixture-of-experts: low-latency token **dispatch** and **combine**.
//!
//! Experts are spread evenly over the PEs (expert `e` lives on PE `e / (n_experts / n_pes)`).
//! Each PE holds up to `max_tokens` tokens of `hidden` bf16 values (stored as `u16` bits),
//! the router's top-k expert ids (`i32`, `-1` for "no expert") and weights (`f32`).
//! [`Moe::dispatch`] sends each token to the PEs of its experts, into per-expert receive
//! buffers in the symmetric heap, and reports per local expert how many tokens arrived;
//! [`Moe::recv_info`] names their source PE and token. [`Moe::combine`] sends the experts'
//! outputs back and sums them, weighted by the router, into the original token order.
//!
//! The protocol (see `device/rshmem_moe.cuh`): per (token, k) the sender reserves a slot
//! with an atomic fetch-add on the expert's counter at the destination, puts the row and
//! its metadata, and after all its puts publishes one count per expert with one atomic;
//! the receiver waits until every PE reported. On GPU PEs this runs as kernels (a warp per
//! token and destination); on CPU PEs the same steps run through the host API. Combine
//! reduces in f32 with k ascending and no fused multiply-add, so both paths give the same
//! bits.
//!
//! With [`MoeConfig::fp8`], dispatch sends e4m3 values with one f32 scale per 128 (the
//! sender quantizes; [`quantize_fp8`] is the exact host model) and combine stays bf16.
//!
//! Each dispatch must be followed by a combine before the next dispatch: combine's
//! completion signal is what tells a source that the receivers have reset their counters.
//! All calls are collective (every PE calls them, with the same configuration).

#[cfg(feature = "cuda")]
mod gpu;

use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::sym::Sym;
use crate::types::{Cmp, SymType};
use std::time::Duration;

/// The device header with the MoE device functions (NVRTC gets it as `rshmem_moe.cuh`,
/// so users' kernels may include it too).
pub const DEVICE_HEADER: &str = include_str!("../../device/rshmem_moe.cuh");

/// The kernel source the GPU path compiles (`device/rshmem_moe.cu`).
pub const KERNEL_SOURCE: &str = include_str!("../../device/rshmem_moe.cu");

/// Most experts per token a GPU layer takes (`RSHMEM_MOE_MAX_TOP_K` in the kernels).
pub const MAX_GPU_TOP_K: usize = 256;

/// bf16 bits to f32.
pub fn bf16_to_f32(b: u16) -> f32 {
    f32::from_bits((b as u32) << 16)
}

/// f32 to bf16 bits, rounding to nearest even (NaN becomes a quiet NaN), as the kernels do.
pub fn f32_to_bf16(f: f32) -> u16 {
    let u = f.to_bits();
    if u & 0x7fff_ffff > 0x7f80_0000 {
        return 0x7fc0;
    }
    (u.wrapping_add(0x7fff + ((u >> 16) & 1)) >> 16) as u16
}

/// FP8 e4m3 (OCP "FN": bias 7, no infinities, largest 448) from f32, rounding to nearest
/// even and saturating to +-448 (NaN becomes 0x7f), as the kernels do.
pub fn f32_to_e4m3(f: f32) -> u8 {
    let u = f.to_bits();
    let sign = ((u >> 24) & 0x80) as u8;
    let a = u & 0x7fff_ffff;
    if a > 0x7f80_0000 {
        return 0x7f;
    }
    let af = f32::from_bits(a);
    if af > 448.0 {
        return sign | 0x7e;
    }
    if af < 0.015625 {
        return sign | (af * 512.0).round_ties_even() as u8;
    }
    let mut e = (a >> 23) as i32 - 127;
    let (m, mut r) = (a & 0x7f_ffff, (a & 0x7f_ffff) >> 20);
    let rem = m & 0xf_ffff;
    if rem > 0x8_0000 || (rem == 0x8_0000 && r & 1 == 1) {
        r += 1;
    }
    if r == 8 {
        r = 0;
        e += 1;
    }
    let code = ((((e + 7) as u32) << 3) | r).min(0x7e);
    sign | code as u8
}

/// FP8 e4m3 to f32.
pub fn e4m3_to_f32(c: u8) -> f32 {
    let (ex, m) = (((c >> 3) & 15) as u32, (c & 7) as u32);
    let v = if ex == 0 {
        m as f32 / 512.0
    } else if ex == 15 && m == 7 {
        f32::NAN
    } else {
        f32::from_bits(((ex + 120) << 23) | (m << 20))
    };
    if c & 0x80 != 0 {
        -v
    } else {
        v
    }
}

/// Quantizes bf16 values to e4m3 with one f32 scale per 128 (`x.len()` a multiple of
/// 128): `scale = amax / 448`, `q = e4m3(x * (448 / amax))`; a group of zeros gets scale 0.
/// The value is about `e4m3_to_f32(q) * scale`. This is what FP8 dispatch sends.
pub fn quantize_fp8(x: &[u16], q: &mut [u8], scales: &mut [f32]) {
    for ((g, qg), s) in x.chunks(128).zip(q.chunks_mut(128)).zip(scales.iter_mut()) {
        let amax = g.iter().map(|&b| bf16_to_f32(b).abs()).fold(0.0f32, f32::max);
        let inv = if amax > 0.0 { 448.0 / amax } else { 0.0 };
        for (o, &b) in qg.iter_mut().zip(g) {
            *o = f32_to_e4m3(bf16_to_f32(b) * inv);
        }
        *s = if amax > 0.0 { amax / 448.0 } else { 0.0 };
    }
}

/// Sizes of a MoE layer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoeConfig {
    /// Most tokens a PE dispatches in one round.
    pub max_tokens: usize,
    /// bf16 values per token.
    pub hidden: usize,
    /// Experts per token.
    pub top_k: usize,
    /// Experts in all; a multiple of the number of PEs.
    pub n_experts: usize,
    /// Receive slots per local expert; `None`: the worst case, `n_pes * max_tokens`
    /// (each token names an expert at most once). A round that sends more tokens to an
    /// expert fails with an error.
    pub capacity: Option<usize>,
    /// How long a PE waits for its peers before failing with [`Error::Timeout`].
    pub timeout: Duration,
    /// Dispatch in FP8: the sender quantizes each 128 values to e4m3 with one f32 scale
    /// ([`quantize_fp8`]) and the receivers get [`Moe::recv_fp8`] instead of
    /// [`Moe::recv_tokens`]; `hidden` must be a multiple of 128. Combine stays bf16.
    pub fp8: bool,
    /// How a GPU layer's combine moves the experts' outputs (see [`MoeCombine`]).
    pub combine: MoeCombine,
}

/// How combine brings the experts' outputs to their tokens' PEs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MoeCombine {
    /// [`MoeCombine::Pull`] when every PE's heap is mapped into this PE's kernels (PEs of
    /// one host's GPUs), else [`MoeCombine::Push`].
    #[default]
    Auto,
    /// The experts' PEs put each output row into its token's PE, which then reduces its
    /// tokens locally (the outputs cross twice: put, then the reduction's read). CPU PEs
    /// always combine this way.
    Push,
    /// Each PE reduces its tokens reading the output rows straight from the experts' PEs
    /// through the mappings (the outputs cross once), then tells every PE it is done
    /// reading. GPU layers whose every PE is mapped only: elsewhere [`Moe::new`] fails.
    Pull,
}

impl MoeConfig {
    /// A configuration with worst-case capacity, a 60 s timeout, bf16 dispatch and the
    /// combine chosen by the layout ([`MoeCombine::Auto`]).
    pub fn new(max_tokens: usize, hidden: usize, top_k: usize, n_experts: usize) -> MoeConfig {
        MoeConfig {
            max_tokens,
            hidden,
            top_k,
            n_experts,
            capacity: None,
            timeout: Duration::from_secs(60),
            fp8: false,
            combine: MoeCombine::Auto,
        }
    }
}

/// Where a received token came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecvInfo {
    /// The PE that sent it.
    pub src_pe: usize,
    /// Its index among that PE's tokens.
    pub src_token: usize,
    /// Which of the token's top-k choices this expert was.
    pub k: usize,
    /// The router's weight for this choice.
    pub weight: f32,
}

/// One MoE layer's symmetric buffers and state on this PE (see the module docs).
pub struct Moe {
    cfg: MoeConfig,
    me: usize,
    n_pes: usize,
    local_experts: usize,
    capacity: usize,
    x: Sym<u16>,
    topk_idx: Sym<i32>,
    topk_w: Sym<f32>,
    recv_x: Sym<u16>,
    xq: Sym<u8>,
    xs: Sym<f32>,
    recv_q: Sym<u8>,
    recv_s: Sym<f32>,
    recv_meta: Sym<i32>,
    counters: Sym<i32>,
    expert_done: Sym<u64>,
    recv_count: Sym<i32>,
    sent: Sym<i32>,
    slot_of: Sym<i32>,
    comb_recv: Sym<u16>,
    comb_done: Sym<u64>,
    pull_done: Sym<u64>,
    combined: Sym<u16>,
    grid_done: Sym<u32>,
    pull: bool,
    round: u64,
    n_tokens: usize,
    pending: Option<Vec<usize>>,
    broken: bool,
    #[cfg(feature = "cuda")]
    kernels: Option<gpu::MoeKernels>,
}

impl std::fmt::Debug for Moe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Moe").field("cfg", &self.cfg).field("pe", &self.me).field("capacity", &self.capacity).finish()
    }
}

fn invalid(call: &'static str, arg: &'static str, detail: String, pe: usize) -> Error {
    Error::InvalidArgument { call, arg, detail, pe }
}

/// Copies `len` elements of this PE's `sym` from `start` (works on GPU heaps too).
fn read_range<T: SymType>(ctx: &Ctx, sym: &Sym<T>, start: usize, len: usize) -> Result<Vec<T>> {
    let mut v = vec![T::zeroed(); len];
    if len > 0 {
        ctx.get(&mut v, sym, start, ctx.my_pe())?;
    }
    Ok(v)
}

impl Moe {
    /// Allocates the layer's buffers (collective: every PE passes the same `cfg`). On a GPU
    /// PE this also compiles the kernels.
    pub fn new(ctx: &Ctx, cfg: MoeConfig) -> Result<Moe> {
        const CALL: &str = "Moe::new";
        let (me, n_pes) = (ctx.my_pe(), ctx.n_pes());
        for (arg, v) in [("max_tokens", cfg.max_tokens), ("hidden", cfg.hidden), ("top_k", cfg.top_k), ("n_experts", cfg.n_experts)] {
            if v == 0 {
                return Err(invalid(CALL, arg, "must be at least 1".into(), me));
            }
        }
        if !cfg.n_experts.is_multiple_of(n_pes) {
            return Err(invalid(CALL, "n_experts", format!("{} experts do not spread evenly over {n_pes} PEs", cfg.n_experts), me));
        }
        if cfg.top_k > cfg.n_experts {
            return Err(invalid(CALL, "top_k", format!("{} is more than the {} experts", cfg.top_k, cfg.n_experts), me));
        }
        let worst = n_pes * cfg.max_tokens;
        let capacity = cfg.capacity.unwrap_or(worst).min(worst);
        if capacity == 0 || capacity > i32::MAX as usize || cfg.max_tokens * cfg.top_k > i32::MAX as usize {
            return Err(invalid(CALL, "capacity", format!("{capacity} slots per expert is out of range"), me));
        }
        if cfg.fp8 && !cfg.hidden.is_multiple_of(128) {
            return Err(invalid(CALL, "hidden", format!("FP8 dispatch needs a multiple of 128 values, not {}", cfg.hidden), me));
        }
        let pull = Self::pulls(ctx, &cfg)?;
        let local_experts = cfg.n_experts / n_pes;
        let (t, h, k) = (cfg.max_tokens, cfg.hidden, cfg.top_k);
        let rows = local_experts * capacity;
        // Buffers of the format not in use get one element.
        let (bf, f8) = if cfg.fp8 { (0, 1) } else { (1, 0) };
        let moe = Moe {
            cfg,
            me,
            n_pes,
            local_experts,
            capacity,
            x: ctx.alloc(t * h)?,
            topk_idx: ctx.alloc(t * k)?,
            topk_w: ctx.alloc(t * k)?,
            recv_x: ctx.alloc((rows * h * bf).max(1))?,
            xq: ctx.alloc((t * h * f8).max(1))?,
            xs: ctx.alloc((t * h / 128 * f8).max(1))?,
            recv_q: ctx.alloc((rows * h * f8).max(1))?,
            recv_s: ctx.alloc((rows * h / 128 * f8).max(1))?,
            recv_meta: ctx.alloc(rows * 4)?,
            counters: ctx.alloc(local_experts)?,
            expert_done: ctx.alloc(local_experts)?,
            // GPU path: per-expert counts, then the kernels' 4 status words (one read back).
            recv_count: ctx.alloc(local_experts + 4)?,
            sent: ctx.alloc(cfg.n_experts)?,
            slot_of: ctx.alloc(t * k)?,
            // A pull combine never stages the outputs.
            comb_recv: ctx.alloc(if pull { 1 } else { t * k * h })?,
            comb_done: ctx.alloc(1)?,
            pull_done: ctx.alloc(1)?,
            combined: ctx.alloc(t * h)?,
            // The GPU grids' block counters (dispatch, combine).
            grid_done: ctx.alloc(2)?,
            pull,
            round: 0,
            n_tokens: 0,
            pending: None,
            broken: false,
            #[cfg(feature = "cuda")]
            kernels: match ctx.gpu() {
                Some(g) => Some(gpu::MoeKernels::new(ctx, g)?),
                None => None,
            },
        };
        ctx.barrier_all()?;
        Ok(moe)
    }

    /// Frees the layer's symmetric buffers (collective; dropping a `Moe` frees nothing,
    /// as for every [`Sym`]).
    pub fn free(self, ctx: &Ctx) -> Result<()> {
        ctx.barrier_all()?;
        ctx.free(self.x)?;
        ctx.free(self.topk_idx)?;
        ctx.free(self.topk_w)?;
        ctx.free(self.recv_x)?;
        ctx.free(self.xq)?;
        ctx.free(self.xs)?;
        ctx.free(self.recv_q)?;
        ctx.free(self.recv_s)?;
        ctx.free(self.recv_meta)?;
        ctx.free(self.counters)?;
        ctx.free(self.expert_done)?;
        ctx.free(self.recv_count)?;
        ctx.free(self.sent)?;
        ctx.free(self.slot_of)?;
        ctx.free(self.comb_recv)?;
        ctx.free(self.comb_done)?;
        ctx.free(self.pull_done)?;
        ctx.free(self.grid_done)?;
        ctx.free(self.combined)
    }

    /// Whether this layer's combine pulls (see [`MoeCombine`]).
    fn pulls(ctx: &Ctx, cfg: &MoeConfig) -> Result<bool> {
        #[cfg(feature = "cuda")]
        if ctx.gpu().is_some() {
            return gpu::pulls(ctx, cfg);
        }
        match cfg.combine {
            MoeCombine::Pull => Err(invalid("Moe::new", "combine", "a pull combine needs GPU PEs; CPU PEs push".into(), ctx.my_pe())),
            _ => Ok(false),
        }
    }

    /// Whether combine pulls the outputs ([`MoeCombine::Pull`], or `Auto` resolved to it).
    pub fn combine_pulls(&self) -> bool {
        self.pull
    }

    /// The configuration.
    pub fn config(&self) -> &MoeConfig {
        &self.cfg
    }

    /// Experts on each PE.
    pub fn local_experts(&self) -> usize {
        self.local_experts
    }

    /// Receive slots per local expert.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Whether dispatch and combine run as GPU kernels on this PE.
    pub fn on_gpu(&self) -> bool {
        #[cfg(feature = "cuda")]
        if self.kernels.is_some() {
            return true;
        }
        false
    }

    /// Input tokens, `[max_tokens][hidden]` bf16 bits (kernels may write it directly).
    pub fn tokens(&self) -> &Sym<u16> {
        &self.x
    }

    /// Router expert ids, `[max_tokens][top_k]` (`-1`: no expert).
    pub fn topk_idx(&self) -> &Sym<i32> {
        &self.topk_idx
    }

    /// Router weights, `[max_tokens][top_k]`.
    pub fn topk_weights(&self) -> &Sym<f32> {
        &self.topk_w
    }

    /// Received tokens, `[local_experts][capacity][hidden]` bf16 (a bf16 layer): local expert
    /// `le`'s slot `s` is row `le * capacity + s`, valid for `s` below the count
    /// [`Moe::dispatch`] returned.
    pub fn recv_tokens(&self) -> &Sym<u16> {
        &self.recv_x
    }

    /// FP8 dispatch's received tokens: e4m3 values `[local_experts][capacity][hidden]` and
    /// their scales `[local_experts][capacity][hidden / 128]` (rows as in [`Moe::recv_tokens`]).
    pub fn recv_fp8(&self) -> (&Sym<u8>, &Sym<f32>) {
        (&self.recv_q, &self.recv_s)
    }

    /// Combine's output, `[max_tokens][hidden]` bf16 bits, in this PE's token order.
    pub fn combined(&self) -> &Sym<u16> {
        &self.combined
    }

    /// Copies `n_tokens` tokens and their routing into the input buffers, checking shapes
    /// and expert ids (each in `-1..n_experts`, no expert twice for one token).
    pub fn set_input(&self, ctx: &Ctx, n_tokens: usize, x: &[u16], topk_idx: &[i32], topk_w: &[f32]) -> Result<()> {
        const CALL: &str = "Moe::set_input";
        let (h, k) = (self.cfg.hidden, self.cfg.top_k);
        if n_tokens > self.cfg.max_tokens {
            return Err(invalid(CALL, "n_tokens", format!("{n_tokens} is more than max_tokens {}", self.cfg.max_tokens), self.me));
        }
        for (arg, len, want) in
            [("x", x.len(), n_tokens * h), ("topk_idx", topk_idx.len(), n_tokens * k), ("topk_w", topk_w.len(), n_tokens * k)]
        {
            if len != want {
                return Err(invalid(CALL, arg, format!("has {len} elements, {n_tokens} tokens need {want}"), self.me));
            }
        }
        for (t, ids) in topk_idx.chunks(k).enumerate() {
            for (j, &e) in ids.iter().enumerate() {
                if e < -1 || e >= self.cfg.n_experts as i32 {
                    return Err(invalid(
                        CALL,
                        "topk_idx",
                        format!("token {t} choice {j}: expert {e} is not in -1..{}", self.cfg.n_experts),
                        self.me,
                    ));
                }
                if e >= 0 && ids[..j].contains(&e) {
                    return Err(invalid(CALL, "topk_idx", format!("token {t} names expert {e} twice"), self.me));
                }
            }
        }
        if n_tokens > 0 {
            ctx.put(&self.x, 0, x, self.me)?;
            ctx.put(&self.topk_idx, 0, topk_idx, self.me)?;
            ctx.put(&self.topk_w, 0, topk_w, self.me)?;
        }
        Ok(())
    }

    /// Sends this PE's first `n_tokens` tokens to their experts (collective) and returns,
    /// per local expert, how many tokens it received.
    pub fn dispatch(&mut self, ctx: &Ctx, n_tokens: usize) -> Result<Vec<usize>> {
        const CALL: &str = "moe::dispatch";
        if n_tokens > self.cfg.max_tokens {
            return Err(invalid(CALL, "n_tokens", format!("{n_tokens} is more than max_tokens {}", self.cfg.max_tokens), self.me));
        }
        if self.pending.is_some() {
            return Err(invalid(CALL, "self", "dispatch called again before combine".into(), self.me));
        }
        if self.broken {
            return Err(invalid(
                CALL,
                "self",
                "an earlier dispatch failed: this layer's counters are in an unknown state; make a new Moe".into(),
                self.me,
            ));
        }
        self.n_tokens = n_tokens;
        self.broken = true;
        let (counts, overflow, bad) = self.dispatch_path(ctx, n_tokens)?;
        if bad > 0 {
            return Err(invalid(CALL, "topk_idx", format!("{bad} expert ids are outside -1..{}", self.cfg.n_experts), self.me));
        }
        let over: Vec<(usize, usize)> = counts.iter().copied().enumerate().filter(|&(_, c)| c > self.capacity).collect();
        if overflow > 0 || !over.is_empty() {
            let detail = format!(
                "{overflow} of this PE's tokens found their expert full; local experts over capacity {} (expert, tokens): {over:?}",
                self.capacity
            );
            return Err(invalid(CALL, "capacity", detail, self.me));
        }
        self.broken = false;
        self.pending = Some(counts.clone());
        Ok(counts)
    }

    fn dispatch_path(&self, ctx: &Ctx, n_tokens: usize) -> Result<(Vec<usize>, usize, usize)> {
        #[cfg(feature = "cuda")]
        if let Some(k) = &self.kernels {
            return k.dispatch(ctx, self, n_tokens);
        }
        self.dispatch_cpu(ctx, n_tokens)
    }

    /// The host path: the kernels' steps, through the host API.
    fn dispatch_cpu(&self, ctx: &Ctx, n_tokens: usize) -> Result<(Vec<usize>, usize, usize)> {
        let (h, k, l, c) = (self.cfg.hidden, self.cfg.top_k, self.local_experts, self.capacity);
        let x = read_range(ctx, &self.x, 0, n_tokens * h)?;
        let (mut q, mut qs) = (Vec::new(), Vec::new());
        if self.cfg.fp8 {
            q = vec![0u8; n_tokens * h];
            qs = vec![0f32; n_tokens * h / 128];
            quantize_fp8(&x, &mut q, &mut qs);
        }
        let idx = read_range(ctx, &self.topk_idx, 0, n_tokens * k)?;
        let w = read_range(ctx, &self.topk_w, 0, n_tokens * k)?;
        let mut sent = vec![0u64; self.cfg.n_experts];
        let (mut overflow, mut bad) = (0, 0);
        for t in 0..n_tokens {
            for j in 0..k {
                let e = idx[t * k + j];
                if e < 0 {
                    continue;
                }
                let e = e as usize;
                if e >= self.cfg.n_experts {
                    bad += 1;
                    continue;
                }
                let (dst, le) = (e / l, e % l);
                let slot = ctx.atomic_fetch_add(&self.counters, le, 1i32, dst)? as usize;
                sent[e] += 1;
                if slot >= c {
                    overflow += 1;
                    continue;
                }
                let row = le * c + slot;
                if self.cfg.fp8 {
                    let g = h / 128;
                    ctx.put(&self.recv_q, row * h, &q[t * h..(t + 1) * h], dst)?;
                    ctx.put(&self.recv_s, row * g, &qs[t * g..(t + 1) * g], dst)?;
                } else {
                    ctx.put(&self.recv_x, row * h, &x[t * h..(t + 1) * h], dst)?;
                }
                ctx.put(&self.recv_meta, row * 4, &[self.me as i32, t as i32, j as i32, w[t * k + j].to_bits() as i32], dst)?;
            }
        }
        ctx.fence()?;
        for (e, &s) in sent.iter().enumerate() {
            ctx.atomic_add(&self.expert_done, e % l, (1u64 << 32) | s, e / l)?;
        }
        let mut counts = vec![0; l];
        for (le, count) in counts.iter_mut().enumerate() {
            ctx.wait_until_timeout(&self.expert_done, le, Cmp::Ge, (self.n_pes as u64) << 32, self.cfg.timeout)?;
            let v = self.expert_done.load(le)?;
            *count = (v & 0xffff_ffff) as usize;
            let slots = self.counters.load(le)?;
            if slots as usize != *count {
                return Err(Error::InvalidArgument {
                    call: "moe::dispatch",
                    arg: "counters",
                    detail: format!("local expert {le}: {slots} slots reserved but {count} published"),
                    pe: self.me,
                });
            }
            self.counters.store(le, 0)?;
            self.expert_done.store(le, 0)?;
        }
        Ok((counts, overflow, bad))
    }

    /// Where the tokens local expert `le` received came from, in slot order.
    pub fn recv_info(&self, ctx: &Ctx, le: usize) -> Result<Vec<RecvInfo>> {
        let counts =
            self.pending.as_ref().ok_or_else(|| invalid("Moe::recv_info", "self", "no dispatch awaits its combine".into(), self.me))?;
        if le >= self.local_experts {
            return Err(invalid("Moe::recv_info", "le", format!("{le} is not below {} local experts", self.local_experts), self.me));
        }
        let m = read_range(ctx, &self.recv_meta, le * self.capacity * 4, counts[le] * 4)?;
        Ok(m.chunks(4)
            .map(|r| RecvInfo { src_pe: r[0] as usize, src_token: r[1] as usize, k: r[2] as usize, weight: f32::from_bits(r[3] as u32) })
            .collect())
    }

    /// Sends the experts' outputs (`y`, laid out like [`Moe::recv_tokens`]; pass
    /// `recv_tokens()` itself to compute in place) back to their source PEs, and writes
    /// into [`Moe::combined`] each token's sum of outputs weighted by the router (collective).
    pub fn combine(&mut self, ctx: &Ctx, y: &Sym<u16>) -> Result<()> {
        let rows = self.local_experts * self.capacity;
        if y.len() < rows * self.cfg.hidden {
            return Err(invalid(
                "moe::combine",
                "y",
                format!("has {} elements, the layout needs {}", y.len(), rows * self.cfg.hidden),
                self.me,
            ));
        }
        let counts = self.start_combine()?;
        self.combine_path(ctx, y, &counts)
    }

    /// [`Moe::combine`] of the outputs the experts wrote over [`Moe::recv_tokens`].
    pub fn combine_in_place(&mut self, ctx: &Ctx) -> Result<()> {
        if self.cfg.fp8 {
            return Err(invalid(
                "moe::combine_in_place",
                "self",
                "an FP8 layer receives e4m3 rows: pass the bf16 outputs to combine".into(),
                self.me,
            ));
        }
        let counts = self.start_combine()?;
        self.combine_path(ctx, &self.recv_x, &counts)
    }

    fn start_combine(&mut self) -> Result<Vec<usize>> {
        let counts = self
            .pending
            .take()
            .ok_or_else(|| invalid("moe::combine", "self", "combine called without a successful dispatch".into(), self.me))?;
        self.round += 1;
        Ok(counts)
    }

    fn combine_path(&self, ctx: &Ctx, y: &Sym<u16>, counts: &[usize]) -> Result<()> {
        #[cfg(feature = "cuda")]
        if let Some(k) = &self.kernels {
            return k.combine(ctx, self, y);
        }
        self.combine_cpu(ctx, y, counts)
    }

    fn combine_cpu(&self, ctx: &Ctx, y: &Sym<u16>, counts: &[usize]) -> Result<()> {
        let (h, k, c) = (self.cfg.hidden, self.cfg.top_k, self.capacity);
        for (le, &count) in counts.iter().enumerate() {
            let meta = read_range(ctx, &self.recv_meta, le * c * 4, count * 4)?;
            let rows = read_range(ctx, y, le * c * h, count * h)?;
            for (m, row) in meta.chunks(4).zip(rows.chunks(h)) {
                let (src_pe, t, j) = (m[0] as usize, m[1] as usize, m[2] as usize);
                ctx.put(&self.comb_recv, (t * k + j) * h, row, src_pe)?;
            }
        }
        ctx.fence()?;
        for pe in 0..self.n_pes {
            ctx.atomic_add(&self.comb_done, 0, 1u64, pe)?;
        }
        ctx.wait_until_timeout(&self.comb_done, 0, Cmp::Ge, self.round * self.n_pes as u64, self.cfg.timeout)?;
        let n = self.n_tokens;
        let idx = read_range(ctx, &self.topk_idx, 0, n * k)?;
        let w = read_range(ctx, &self.topk_w, 0, n * k)?;
        let comb = read_range(ctx, &self.comb_recv, 0, n * k * h)?;
        let mut out = vec![0u16; n * h];
        for t in 0..n {
            for (i, o) in out[t * h..(t + 1) * h].iter_mut().enumerate() {
                let mut acc = 0.0f32;
                for j in 0..k {
                    if idx[t * k + j] >= 0 {
                        acc += w[t * k + j] * bf16_to_f32(comb[(t * k + j) * h + i]);
                    }
                }
                *o = f32_to_bf16(acc);
            }
        }
        if n > 0 {
            self.combined.copy_from(0, &out)?;
        }
        Ok(())
    }
}

/// A plain put-based all-to-all of `bytes_per_pe` bytes to every PE: the baseline that
/// dispatch and combine are measured against (the same completion protocol: puts, then
/// one atomic per PE, then a wait).
pub struct AllToAll {
    bytes_per_pe: usize,
    src: Sym<u8>,
    dst: Sym<u8>,
    done: Sym<u64>,
    round: u64,
    timeout: Duration,
    #[cfg(feature = "cuda")]
    kernels: Option<gpu::MoeKernels>,
}

impl std::fmt::Debug for AllToAll {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AllToAll").field("bytes_per_pe", &self.bytes_per_pe).finish()
    }
}

impl AllToAll {
    /// Allocates the buffers (collective).
    pub fn new(ctx: &Ctx, bytes_per_pe: usize) -> Result<AllToAll> {
        let n = ctx.n_pes();
        let a = AllToAll {
            bytes_per_pe,
            src: ctx.alloc(n * bytes_per_pe.max(1))?,
            dst: ctx.alloc(n * bytes_per_pe.max(1))?,
            done: ctx.alloc(1)?,
            round: 0,
            timeout: Duration::from_secs(60),
            #[cfg(feature = "cuda")]
            kernels: match ctx.gpu() {
                Some(g) => Some(gpu::MoeKernels::new(ctx, g)?),
                None => None,
            },
        };
        ctx.barrier_all()?;
        Ok(a)
    }

    /// Frees the buffers (collective).
    pub fn free(self, ctx: &Ctx) -> Result<()> {
        ctx.barrier_all()?;
        ctx.free(self.src)?;
        ctx.free(self.dst)?;
        ctx.free(self.done)
    }

    /// Bytes sent to each PE.
    pub fn bytes_per_pe(&self) -> usize {
        self.bytes_per_pe
    }

    /// One all-to-all (collective).
    pub fn run(&mut self, ctx: &Ctx) -> Result<()> {
        self.round += 1;
        let (n, b, me) = (ctx.n_pes(), self.bytes_per_pe, ctx.my_pe());
        #[cfg(feature = "cuda")]
        if let Some(k) = &self.kernels {
            return k.alltoall(&self.src, &self.dst, &self.done, b, self.round * n as u64);
        }
        let src = read_range(ctx, &self.src, 0, n * b)?;
        for pe in 0..n {
            ctx.put(&self.dst, me * b, &src[pe * b..(pe + 1) * b], pe)?;
        }
        ctx.fence()?;
        for pe in 0..n {
            ctx.atomic_add(&self.done, 0, 1u64, pe)?;
        }
        ctx.wait_until_timeout(&self.done, 0, Cmp::Ge, self.round * n as u64, self.timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_round_trip_and_rounding() {
        for v in [0.0f32, 1.0, -2.5, 3.140625, 65280.0] {
            assert_eq!(bf16_to_f32(f32_to_bf16(v)), v);
        }
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to even (1.0).
        assert_eq!(f32_to_bf16(1.0 + 1.0 / 256.0), f32_to_bf16(1.0));
        assert_eq!(bf16_to_f32(f32_to_bf16(1.0 + 3.0 / 256.0)), 1.0 + 4.0 / 256.0);
        assert_eq!(f32_to_bf16(f32::NAN), 0x7fc0);
    }

    #[test]
    fn e4m3_encodes_every_code_back_to_itself_and_rounds_to_even() {
        for c in 0..=255u8 {
            if c & 0x7f == 0x7f {
                assert!(e4m3_to_f32(c).is_nan());
                continue;
            }
            let v = e4m3_to_f32(c);
            let back = f32_to_e4m3(v);
            assert!(back == c || (v == 0.0 && back & 0x7f == 0), "code {c:#x} -> {v} -> {back:#x}");
        }
        assert_eq!(e4m3_to_f32(0x7e), 448.0);
        assert_eq!(e4m3_to_f32(0x01), 1.0 / 512.0);
        assert_eq!(f32_to_e4m3(1000.0), 0x7e);
        assert_eq!(f32_to_e4m3(-1000.0), 0xfe);
        // 1.0625 is halfway between 1.0 (0x38) and 1.125 (0x39): ties to even.
        assert_eq!(f32_to_e4m3(1.0625), 0x38);
        assert_eq!(f32_to_e4m3(1.1875), 0x3a);
        assert_eq!(f32_to_e4m3(1.5 / 512.0), 0x02);
    }

    #[test]
    fn fp8_groups_scale_to_448() {
        let x: Vec<u16> = (0..256).map(|i| f32_to_bf16(if i < 128 { (i as f32 - 64.0) / 8.0 } else { 0.0 })).collect();
        let (mut q, mut s) = (vec![0u8; 256], vec![0f32; 2]);
        quantize_fp8(&x, &mut q, &mut s);
        assert_eq!(s[0], 8.0 / 448.0);
        assert_eq!(e4m3_to_f32(q[0]), -448.0);
        assert_eq!((s[1], q[128..].iter().all(|&v| v == 0)), (0.0, true));
    }

    #[cfg(feature = "cuda")]
    #[test]
    fn nvrtc_gets_the_moe_header() {
        assert!(KERNEL_SOURCE.contains("#include \"rshmem_moe.cuh\""));
        assert!(crate::gpu::nvrtc::DEVICE_HEADERS.iter().any(|&(name, text)| name == "rshmem_moe.cuh" && text == DEVICE_HEADER));
    }
}
