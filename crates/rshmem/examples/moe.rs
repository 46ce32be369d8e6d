//! MoE dispatch and combine (`rshmem::moe`) checked against a sequential model, on CPU PEs
//! and GPU PEs alike: `rshmemrun -n 4 moe` prints a verdict line per case and PE
//! (`RSHMEM-CHECK ... name=random_top8 result=pass`, tests/support) and exits non-zero if
//! any failed. Every PE rebuilds every PE's tokens and routing from a seed, so
//! each checks what it received and what combine produced without extra communication.
//!
//! `moe --bench [--iters N] [--tokens N] [--hidden H] [--throughput-tokens N]` times
//! dispatch and combine for 128 tokens of H = 7168 bf16 with top-8 routing over 256
//! experts, and the throughput for 4096 tokens, next to a put-based all-to-all of the same
//! bytes in the same run (medians over the iterations, PE 0's clock). Where combine can pull
//! (GPU PEs, every heap mapped) the checks and the bf16 bench rows run both ways.

#[path = "../tests/support/mod.rs"]
mod support;

use rshmem::moe::{bf16_to_f32, e4m3_to_f32, f32_to_bf16, quantize_fp8, AllToAll, Moe, MoeCombine, MoeConfig, RecvInfo};
use rshmem::{Ctx, Sym};
use std::time::Instant;
use support::Check;

/// splitmix64: every PE derives the same streams from the same seeds.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Routing {
    /// Distinct uniformly random experts.
    Random,
    /// Only even experts (odd ones receive nothing), some choices masked with -1.
    EvenOnlyMasked,
    /// Every token to experts 0..k (all tokens to one expert when k = 1).
    AllToFirst,
}

struct Case {
    /// The case's check name.
    check: &'static str,
    name: String,
    tokens: usize,
    hidden: usize,
    top_k: usize,
    experts: usize,
    routing: Routing,
    /// PE p has tokens - p * uneven tokens (at least 0).
    uneven: usize,
    /// Bound the capacity by the largest count the model predicts (exactly full).
    tight_capacity: bool,
    /// FP8 dispatch (e4m3, one scale per 128 values).
    fp8: bool,
    /// Token values chosen for quantization's edge cases instead of random ones (see
    /// [`edge_value`]).
    edge_values: bool,
    /// Rounds on one layer (each checks that the one before reset its counters).
    rounds: usize,
}

/// One PE's input for a round.
struct Input {
    x: Vec<u16>,
    idx: Vec<i32>,
    w: Vec<f32>,
}

/// Value `i` of a token stream whose groups of 128 put e4m3 quantization at its edges:
/// each group's first value (+-1) is its largest, so the scale is exactly 1/448 and value
/// p of the group becomes p * m * 448 / 2^16 (m = 1, 37 or 512 by group): results in
/// e4m3's subnormal range with exact ties (p * 3.5 subnormal steps for m = 1), across
/// the normal range (m = 512), signs alternating by group, one group of zeros with a
/// negative zero, and one whole group of zeros (scale 0).
fn edge_value(i: usize) -> u16 {
    let (g, p) = (i / 128, i % 128);
    let sign = if g % 2 == 1 { -1.0f32 } else { 1.0 };
    match g % 5 {
        4 => 0,
        3 => [0x8000, 0][p % 2],
        _ if p == 0 => f32_to_bf16(sign),
        m => f32_to_bf16(sign * p as f32 * [1.0, 37.0, 512.0, 1.0][m] / 65536.0),
    }
}

fn n_tokens(c: &Case, pe: usize) -> usize {
    c.tokens.saturating_sub(pe * c.uneven)
}

fn input(c: &Case, case_no: usize, round: usize, pe: usize) -> Input {
    let n = n_tokens(c, pe);
    let mut r = Rng(((case_no as u64) << 40) ^ ((round as u64) << 32) ^ (pe as u64 * 7919 + 1));
    let x = (0..n * c.hidden)
        .map(|i| {
            let random = ((r.next() >> 40) % 509) as f32 / 64.0 - 4.0 + (i % 3) as f32 / 128.0;
            if c.edge_values {
                edge_value(i + pe * 128 * 5)
            } else {
                f32_to_bf16(random)
            }
        })
        .collect();
    let mut idx = Vec::with_capacity(n * c.top_k);
    for _ in 0..n {
        let mut chosen: Vec<i32> = Vec::new();
        for j in 0..c.top_k {
            let e = match c.routing {
                Routing::AllToFirst => j as i32,
                Routing::Random => loop {
                    let e = r.below(c.experts) as i32;
                    if !chosen.contains(&e) {
                        break e;
                    }
                },
                Routing::EvenOnlyMasked => loop {
                    if r.below(5) == 0 {
                        break -1;
                    }
                    let e = 2 * r.below(c.experts / 2) as i32;
                    if !chosen.contains(&e) {
                        break e;
                    }
                },
            };
            chosen.push(e);
        }
        idx.extend(chosen);
    }
    let w = (0..n * c.top_k).map(|_| (r.next() >> 40) as f32 / (1u64 << 24) as f32).collect();
    Input { x, idx, w }
}

/// The "expert": a scale per expert, rounded to bf16.
fn expert_out(e: usize, v: u16) -> u16 {
    f32_to_bf16(bf16_to_f32(v) * (0.5 + (e % 5) as f32 * 0.25))
}

/// The expert's output for one received token row `x` (bf16), as the expert sees it:
/// bf16 as sent, or the FP8 values times their scales.
fn expert_row(c: &Case, e: usize, x: &[u16]) -> Vec<u16> {
    if !c.fp8 {
        return x.iter().map(|&v| expert_out(e, v)).collect();
    }
    let (mut q, mut s) = (vec![0u8; x.len()], vec![0f32; x.len() / 128]);
    quantize_fp8(x, &mut q, &mut s);
    fp8_expert_row(e, &q, &s)
}

fn fp8_expert_row(e: usize, q: &[u8], s: &[f32]) -> Vec<u16> {
    q.iter().enumerate().map(|(i, &v)| f32_to_bf16(e4m3_to_f32(v) * s[i / 128] * (0.5 + (e % 5) as f32 * 0.25))).collect()
}

/// Runs one round of a case on an existing layer; returns a list of problems.
fn round(ctx: &Ctx, moe: &mut Moe, y_buf: &Sym<u16>, c: &Case, case_no: usize, rnd: usize) -> Vec<String> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let (h, k, l) = (c.hidden, c.top_k, moe.local_experts());
    let inputs: Vec<Input> = (0..n).map(|p| input(c, case_no, rnd, p)).collect();
    let mine = &inputs[me];
    let nt = n_tokens(c, me);
    let mut bad = Vec::new();
    moe.set_input(ctx, nt, &mine.x, &mine.idx, &mine.w).expect("set_input");
    let counts = match moe.dispatch(ctx, nt) {
        Ok(v) => v,
        Err(e) => return vec![format!("dispatch: {e}")],
    };
    // Model of what each local expert receives.
    let cap = moe.capacity();
    for (le, &count) in counts.iter().enumerate() {
        let e = me * l + le;
        let mut want: Vec<(usize, usize, usize, u32)> = Vec::new();
        for (p, inp) in inputs.iter().enumerate() {
            for (tk, &id) in inp.idx.iter().enumerate() {
                if id == e as i32 {
                    want.push((p, tk / k, tk % k, inp.w[tk].to_bits()));
                }
            }
        }
        if count != want.len() {
            bad.push(format!("expert {e}: received {count} tokens, model says {}", want.len()));
            continue;
        }
        let info = moe.recv_info(ctx, le).expect("recv_info");
        let mut got: Vec<(usize, usize, usize, u32)> =
            info.iter().map(|i: &RecvInfo| (i.src_pe, i.src_token, i.k, i.weight.to_bits())).collect();
        got.sort_unstable();
        want.sort_unstable();
        if got != want {
            bad.push(format!(
                "expert {e}: received (pe, token, k, weight) {:?}.., model {:?}..",
                &got[..got.len().min(3)],
                &want[..want.len().min(3)]
            ));
            continue;
        }
        if count == 0 {
            continue;
        }
        let y: Vec<u16> = if c.fp8 {
            let (rq, rs) = moe.recv_fp8();
            let (mut q, mut sc) = (vec![0u8; count * h], vec![0f32; count * h / 128]);
            ctx.get(&mut q, rq, le * cap * h, me).expect("read received values");
            ctx.get(&mut sc, rs, le * cap * h / 128, me).expect("read received scales");
            for (s, i) in info.iter().enumerate() {
                let src = &inputs[i.src_pe].x[i.src_token * h..(i.src_token + 1) * h];
                let (mut wq, mut ws) = (vec![0u8; h], vec![0f32; h / 128]);
                quantize_fp8(src, &mut wq, &mut ws);
                if q[s * h..(s + 1) * h] != wq[..] || sc[s * h / 128..(s + 1) * h / 128] != ws[..] {
                    bad.push(format!(
                        "expert {e} slot {s}: FP8 values or scales differ from PE {} token {} quantized",
                        i.src_pe, i.src_token
                    ));
                    break;
                }
            }
            (0..count).flat_map(|s| fp8_expert_row(e, &q[s * h..(s + 1) * h], &sc[s * h / 128..(s + 1) * h / 128])).collect()
        } else {
            let mut rows = vec![0u16; count * h];
            ctx.get(&mut rows, moe.recv_tokens(), le * cap * h, me).expect("read received tokens");
            for (s, i) in info.iter().enumerate() {
                let src = &inputs[i.src_pe].x[i.src_token * h..(i.src_token + 1) * h];
                if &rows[s * h..(s + 1) * h] != src {
                    bad.push(format!("expert {e} slot {s}: data differs from PE {} token {}", i.src_pe, i.src_token));
                    break;
                }
            }
            rows.iter().map(|&v| expert_out(e, v)).collect()
        };
        // bf16 experts compute in place, FP8 ones into a separate buffer.
        let out = if c.fp8 { y_buf } else { moe.recv_tokens() };
        out.copy_from(le * cap * h, &y).expect("write expert output");
    }
    let combined = if c.fp8 { moe.combine(ctx, y_buf) } else { moe.combine_in_place(ctx) };
    if let Err(e) = combined {
        bad.push(format!("combine: {e}"));
        return bad;
    }
    let got = if nt > 0 {
        let mut v = vec![0u16; nt * h];
        ctx.get(&mut v, moe.combined(), 0, me).expect("read combined");
        v
    } else {
        Vec::new()
    };
    let mut wrong = 0;
    let mut first = None;
    for t in 0..nt {
        let outs: Vec<Vec<u16>> = (0..k)
            .map(|j| mine.idx[t * k + j])
            .map(|id| if id >= 0 { expert_row(c, id as usize, &mine.x[t * h..(t + 1) * h]) } else { Vec::new() })
            .collect();
        for i in 0..h {
            let mut acc = 0.0f32;
            for (j, out) in outs.iter().enumerate() {
                if mine.idx[t * k + j] >= 0 {
                    acc += mine.w[t * k + j] * bf16_to_f32(out[i]);
                }
            }
            let want = f32_to_bf16(acc);
            if got[t * h + i] != want {
                wrong += 1;
                first.get_or_insert((t, i, got[t * h + i], want));
            }
        }
    }
    if wrong > 0 {
        bad.push(format!("combine: {wrong} values differ from the model, first (token, h, got, want) {first:?}"));
    }
    bad
}

/// Reports case `check` (`name` says what it is) as a verdict of this PE: passed when
/// nothing was `bad`; then waits for every PE to be done with the case.
fn report(ctx: &Ctx, ck: &mut Check, check: &str, name: &str, bad: &[String]) {
    ck.ok(check, bad.is_empty(), if bad.is_empty() { name.to_string() } else { format!("{name}: {}", bad.join("; ")) });
    ctx.barrier_all().expect("barrier");
}

fn cases(n: usize) -> Vec<Case> {
    let e = |per: usize| per * n;
    let c = |check, name: &str, tokens, hidden, top_k, experts, routing, uneven| Case {
        check,
        name: format!("{name} ({n} PEs, {tokens} tokens, H {hidden}, top-{top_k}, {experts} experts)"),
        tokens,
        hidden,
        top_k,
        experts,
        routing,
        uneven,
        tight_capacity: false,
        fp8: false,
        edge_values: false,
        rounds: 2,
    };
    vec![
        c("random_top1", "random top-1", 40, 128, 1, e(2), Routing::Random, 0),
        Case { rounds: 8, ..c("random_top2_8_rounds", "random top-2, 8 rounds on one layer", 33, 100, 2, e(4), Routing::Random, 0) },
        c("random_top8", "random top-8", 24, 64, 8, e(16usize.div_ceil(n).max(4)), Routing::Random, 0),
        c(
            "random_top2_uneven",
            "random top-2 uneven token counts (one PE has none)",
            21,
            72,
            2,
            e(3),
            Routing::Random,
            21 / (n - 1).max(1),
        ),
        c("odd_experts_receive_nothing", "odd experts receive nothing, masked choices", 30, 96, 3, e(4), Routing::EvenOnlyMasked, 0),
        c("all_tokens_to_one_expert", "all tokens to one expert", 48, 80, 1, e(2), Routing::AllToFirst, 0),
        c("wide_rows_top8", "random top-8, rows of H 7168", 16, 7168, 8, e(16usize.div_ceil(n).max(4)), Routing::Random, 0),
        c(
            "all_tokens_to_experts_0_8",
            "all tokens to experts 0..8 (top-8)",
            16,
            64,
            8,
            e(16usize.div_ceil(n).max(4)),
            Routing::AllToFirst,
            0,
        ),
        Case {
            fp8: true,
            ..c("fp8_random_top8", "FP8 dispatch, random top-8", 20, 256, 8, e(16usize.div_ceil(n).max(4)), Routing::Random, 0)
        },
        Case {
            fp8: true,
            edge_values: true,
            ..c("fp8_edge_values", "FP8 dispatch of values at quantization's edges", 12, 640, 4, e(4), Routing::Random, 0)
        },
        Case {
            fp8: true,
            ..c("fp8_all_tokens_to_one_expert", "FP8 dispatch, all tokens to one expert", 24, 128, 1, e(2), Routing::AllToFirst, 0)
        },
        Case {
            tight_capacity: true,
            ..c(
                "capacity_bound_fullest_expert",
                "random top-8, capacity bound = the fullest expert's count",
                12,
                48,
                8,
                e(16usize.div_ceil(n).max(4)),
                Routing::Random,
                0,
            )
        },
    ]
}

/// The most tokens any expert receives in either round of a case.
fn fullest_expert(c: &Case, case_no: usize, n: usize) -> usize {
    let mut most = 1;
    for rnd in 0..c.rounds {
        let mut counts = vec![0usize; c.experts];
        for p in 0..n {
            for &id in &input(c, case_no, rnd, p).idx {
                if id >= 0 {
                    counts[id as usize] += 1;
                }
            }
        }
        most = most.max(counts.into_iter().max().unwrap_or(0));
    }
    most
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn arg(name: &str, default: usize) -> usize {
    let a: Vec<String> = std::env::args().collect();
    a.iter().position(|x| x == name).and_then(|i| a.get(i + 1)).map(|v| v.parse().expect("a number")).unwrap_or(default)
}

/// The combine modes to check and bench, with the suffix of their check names: the default
/// alone, or where combine pulls by default (GPU PEs, every heap mapped) also a push.
fn combine_modes(ctx: &Ctx) -> Vec<(MoeCombine, &'static str)> {
    let probe = Moe::new(ctx, MoeConfig::new(1, 8, 1, ctx.n_pes())).expect("Moe::new");
    let pulls = probe.combine_pulls();
    probe.free(ctx).expect("free");
    if pulls {
        vec![(MoeCombine::Auto, ""), (MoeCombine::Push, "_push")]
    } else {
        vec![(MoeCombine::Auto, "")]
    }
}

/// Times dispatch, combine and the all-to-all baseline for `tokens` tokens per PE.
fn bench_one(ctx: &Ctx, tokens: usize, hidden: usize, iters: usize, fp8: bool, combine: MoeCombine) -> (f64, f64, f64, usize, bool) {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let (k, experts) = (8, 256);
    // Random routing: expected tokens per expert is tokens * n * k / experts; allow 2x + 64.
    let expected = tokens * n * k / experts;
    let mut cfg = MoeConfig::new(tokens, hidden, k, experts);
    cfg.capacity = Some(2 * expected + 64);
    cfg.fp8 = fp8;
    cfg.combine = combine;
    let mut moe = Moe::new(ctx, cfg).expect("Moe::new");
    let y_buf = ctx.alloc::<u16>(if fp8 { moe.local_experts() * moe.capacity() * hidden } else { 1 }).expect("expert output buffer");
    let c = Case {
        check: "bench",
        name: String::new(),
        tokens,
        hidden,
        top_k: k,
        experts,
        routing: Routing::Random,
        uneven: 0,
        tight_capacity: false,
        fp8: false,
        edge_values: false,
        rounds: 1,
    };
    let inp = input(&c, 99, 0, me);
    moe.set_input(ctx, tokens, &inp.x, &inp.idx, &inp.w).expect("set_input");
    // Dispatch moves this many bytes per PE (bf16, or e4m3 plus scales); the baseline the same.
    let bytes = if fp8 { tokens * k * (hidden + hidden / 128 * 4) } else { tokens * k * hidden * 2 };
    let mut a2a = AllToAll::new(ctx, bytes / n).expect("AllToAll::new");
    let (mut td, mut tc, mut ta) = (Vec::new(), Vec::new(), Vec::new());
    for it in 0..iters + 3 {
        ctx.barrier_all().unwrap();
        let t0 = Instant::now();
        moe.dispatch(ctx, tokens).expect("dispatch");
        let t1 = Instant::now();
        if fp8 {
            moe.combine(ctx, &y_buf).expect("combine");
        } else {
            moe.combine_in_place(ctx).expect("combine");
        }
        let t2 = Instant::now();
        ctx.barrier_all().unwrap();
        let t3 = Instant::now();
        a2a.run(ctx).expect("all-to-all");
        let t4 = Instant::now();
        if it >= 3 {
            td.push((t1 - t0).as_secs_f64());
            tc.push((t2 - t1).as_secs_f64());
            ta.push((t4 - t3).as_secs_f64());
        }
    }
    let pulls = moe.combine_pulls();
    moe.free(ctx).expect("free");
    a2a.free(ctx).expect("free");
    ctx.free(y_buf).expect("free");
    (median(&mut td), median(&mut tc), median(&mut ta), bytes, pulls)
}

fn bench(ctx: &Ctx) {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let iters = arg("--iters", 20);
    let hidden = arg("--hidden", 7168);
    let sizes = [arg("--tokens", 128), arg("--throughput-tokens", 4096)];
    let gpu = ctx.heap_is_device();
    if me == 0 {
        println!(
            "moe bench: {n} {} PEs, H {hidden} bf16, top-8 over 256 experts ({} per PE), medians of {iters}, wall clock on PE 0 (host call to completion)",
            if gpu { "GPU" } else { "CPU" },
            256 / n
        );
        println!("| tokens/PE | dispatch format | combine | bytes/PE | dispatch us | combine us | all-to-all us | dispatch GB/s | combine GB/s (bf16) | all-to-all GB/s | dispatch / a2a time | combine / bf16 a2a time |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    }
    let modes = combine_modes(ctx);
    for &tokens in &sizes {
        // Combine always moves bf16 (tokens * 8 * hidden * 2 bytes): its ratio is to the bf16 all-to-all.
        let mut bf16_a2a = f64::NAN;
        let runs = modes.iter().map(|&(m, _)| (false, m)).chain([(true, MoeCombine::Auto)]);
        for (fp8, combine) in runs {
            let (d, c, a, bytes, pulls) = bench_one(ctx, tokens, hidden, iters, fp8, combine);
            if !fp8 && bf16_a2a.is_nan() {
                bf16_a2a = a;
            }
            if me == 0 {
                let gbs = |t: f64, b: usize| b as f64 / t / 1e9;
                let comb = tokens * 8 * hidden * 2;
                let how = if pulls { "pull" } else { "push" };
                println!(
                    "| {tokens} | {} | {how} | {bytes} | {:.1} | {:.1} | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
                    if fp8 { "fp8 e4m3" } else { "bf16" },
                    d * 1e6,
                    c * 1e6,
                    a * 1e6,
                    gbs(d, bytes),
                    gbs(c, comb),
                    gbs(a, bytes),
                    d / a,
                    c / bf16_a2a
                );
            }
        }
    }
}

fn main() {
    rshmem::log::install();
    // Every PE this process hosts (one, or several as threads under
    // `rshmemrun --pes-per-process K`).
    rshmem::run_local_pes(moe_pe).expect("init");
}

fn moe_pe(ctx: rshmem::Ctx) {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    if std::env::args().any(|a| a == "--bench") {
        bench(&ctx);
        ctx.finalize().unwrap();
        return;
    }
    if me == 0 {
        println!("moe: {n} PEs ({})", if ctx.heap_is_device() { "GPU heap, kernels" } else { "CPU heap, host path" });
    }
    let mut ck = Check::immediate("moe", me);
    for (combine, suffix) in combine_modes(&ctx) {
        for (i, c) in cases(n).iter().enumerate() {
            let mut cfg = MoeConfig::new(c.tokens, c.hidden, c.top_k, c.experts);
            if c.tight_capacity {
                cfg.capacity = Some(fullest_expert(c, i, n));
            }
            cfg.fp8 = c.fp8;
            cfg.combine = combine;
            let mut moe = Moe::new(&ctx, cfg).expect("Moe::new");
            let y_buf = ctx.alloc::<u16>(if c.fp8 { moe.local_experts() * moe.capacity() * c.hidden } else { 1 }).unwrap();
            let mut bad = Vec::new();
            for rnd in 0..c.rounds {
                bad.extend(round(&ctx, &mut moe, &y_buf, c, i, rnd).into_iter().map(|b| format!("round {rnd}: {b}")));
            }
            let how = if moe.combine_pulls() { "pull" } else { "push" };
            report(&ctx, &mut ck, &format!("{}{suffix}", c.check), &format!("{}, {how} combine", c.name), &bad);
            moe.free(&ctx).expect("free");
            ctx.free(y_buf).expect("free");
        }
    }
    // Overflow: more tokens to one expert than its capacity fails on every sender.
    {
        let mut cfg = MoeConfig::new(16, 32, 1, n);
        cfg.capacity = Some(8);
        let mut moe = Moe::new(&ctx, cfg).expect("Moe::new");
        let x = vec![0u16; 16 * 32];
        moe.set_input(&ctx, 16, &x, &[0; 16], &[1.0; 16]).unwrap();
        let bad = match moe.dispatch(&ctx, 16) {
            Ok(_) => vec!["dispatch of 16 tokens into capacity 8 succeeded".to_string()],
            Err(e) if e.to_string().contains("capacity") => Vec::new(),
            Err(e) => vec![format!("unexpected error: {e}")],
        };
        report(&ctx, &mut ck, "capacity_overflow", "capacity overflow is an error naming the capacity", &bad);
    }
    // Bad input: an expert id out of range is refused before any communication.
    {
        let moe = Moe::new(&ctx, MoeConfig::new(4, 8, 2, 2 * n)).expect("Moe::new");
        let bad = match moe.set_input(&ctx, 1, &[0; 8], &[0, 2 * n as i32], &[0.5, 0.5]) {
            Ok(()) => vec!["expert id n_experts accepted".to_string()],
            Err(e) if e.to_string().contains("topk_idx") => Vec::new(),
            Err(e) => vec![format!("unexpected error: {e}")],
        };
        let bad2 = match Moe::new(&ctx, MoeConfig::new(4, 8, 2, 2 * n + 1)) {
            Ok(_) if n == 1 => Vec::new(),
            Ok(_) => vec!["uneven expert count accepted".to_string()],
            Err(e) if e.to_string().contains("n_experts") => Vec::new(),
            Err(e) => vec![format!("unexpected error: {e}")],
        };
        // A pull combine on CPU PEs is refused by name.
        let mut pull = MoeConfig::new(4, 8, 2, 2 * n);
        pull.combine = MoeCombine::Pull;
        let bad3 = match Moe::new(&ctx, pull) {
            Err(e) if !ctx.heap_is_device() && e.to_string().contains("combine") => Vec::new(),
            Err(e) if !ctx.heap_is_device() => vec![format!("unexpected error: {e}")],
            Err(_) => Vec::new(),
            Ok(m) if ctx.heap_is_device() => {
                m.free(&ctx).expect("free");
                Vec::new()
            }
            Ok(_) => vec!["a pull combine on CPU PEs was accepted".to_string()],
        };
        let bad: Vec<String> = bad.into_iter().chain(bad2).chain(bad3).collect();
        report(&ctx, &mut ck, "bad_input_refused", "bad expert ids and uneven expert counts are refused", &bad);
    }
    let all_ok = ck.finish();
    ctx.barrier_all().unwrap();
    ctx.finalize().unwrap();
    if !all_ok {
        std::process::exit(1);
    }
}
