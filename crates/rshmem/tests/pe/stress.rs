//! Stress test program (tests/stress.rs): random puts and gets among the PEs, seeded and
//! deterministic per PE, checked against a sequential model that every PE keeps of every
//! PE's memory; plus fence ordering (data put, fence, flag put: a PE that sees the flag
//! sees the data) and quiet ordering (puts to two PEs, quiet, a flag to a third PE, which
//! then reads both) every round.
//! Checks: `own.CALL` (this PE's gets of its own regions as it goes), `verify.*` (random
//! gets anywhere after each round's barrier), `fence.flag_implies_data` and
//! `quiet.flag_implies_data` (every round).
//! Arguments: `[rounds [seed]]` (defaults 600 and 1). Needs at least 4 PEs.
//! Run: `rshmemrun -n 4 target/release/examples/pe_stress`.

#[path = "../support/mod.rs"]
mod support;

use rshmem::{Cmp, Ctx, Result, Sym};
use std::process::ExitCode;
use std::time::{Duration, Instant};
use support::{mix, Check, Rng};

/// Words each writer owns in every PE's `data` (writer q owns `q*W..(q+1)*W`).
const W: usize = 512;
/// Bytes each writer owns in every PE's `bytes`.
const WB: usize = 777;
/// Random operations per PE per round.
const OPS: usize = 24;
/// Random verifying gets per PE per round.
const VERIFY: usize = 12;
/// Largest block of the fence and quiet phases, in words.
const BLOCK: usize = 1024;
const WAIT: Duration = Duration::from_secs(20);

#[derive(Debug, Clone, Copy)]
enum Op {
    Put { t: usize, off: usize, len: usize },
    PutNbi { t: usize, off: usize, len: usize },
    P { t: usize, off: usize },
    Iput { t: usize, off: usize, stride: usize, nel: usize },
    PutMem { t: usize, off: usize, len: usize },
    Get { t: usize, off: usize, len: usize },
    G { t: usize, off: usize },
    Iget { t: usize, off: usize, stride: usize, nel: usize },
    GetMem { t: usize, off: usize, len: usize },
}

/// The operations writer `q` issues in `round`: every PE can compute every PE's list.
fn ops_of(seed: u64, q: usize, round: u64, n: usize) -> Vec<Op> {
    let mut rng = Rng::new(seed ^ mix((q as u64) << 40 ^ round));
    (0..OPS)
        .map(|_| {
            let t = rng.below(n);
            let off = rng.below(W);
            let len = 1 + rng.below((W - off).min(96));
            match rng.below(9) {
                0 | 1 => Op::Put { t, off, len },
                2 => Op::PutNbi { t, off, len },
                3 => Op::P { t, off },
                4 => {
                    let stride = 2 + rng.below(3);
                    Op::Iput { t, off, stride, nel: 1 + (W - 1 - off) / stride }
                }
                5 => {
                    let off = rng.below(WB);
                    Op::PutMem { t, off, len: 1 + rng.below(WB - off) }
                }
                6 => Op::Get { t, off, len },
                7 => {
                    if rng.below(2) == 0 {
                        Op::G { t, off }
                    } else {
                        let stride = 1 + rng.below(4);
                        Op::Iget { t, off, stride, nel: 1 + rng.below(1 + (W - 1 - off) / stride) }
                    }
                }
                _ => {
                    let off = rng.below(WB);
                    Op::GetMem { t, off, len: 1 + rng.below(WB - off) }
                }
            }
        })
        .collect()
}

fn value(seed: u64, q: usize, round: u64, k: usize, j: usize) -> u64 {
    mix(seed ^ (q as u64) << 56 ^ round << 32 ^ (k as u64) << 20 ^ j as u64)
}

/// What every PE's memory should hold: `words[pe]` mirrors `data` on `pe`, `bytes[pe]`
/// mirrors `bytes` on `pe`.
struct Model {
    words: Vec<Vec<u64>>,
    bytes: Vec<Vec<u8>>,
}

impl Model {
    /// Applies writer `q`'s write `k` of `round`.
    fn apply(&mut self, seed: u64, q: usize, round: u64, k: usize, op: Op) {
        match op {
            Op::Put { t, off, len } | Op::PutNbi { t, off, len } => {
                for j in 0..len {
                    self.words[t][q * W + off + j] = value(seed, q, round, k, j);
                }
            }
            Op::P { t, off } => self.words[t][q * W + off] = value(seed, q, round, k, 0),
            Op::Iput { t, off, stride, nel } => {
                for j in 0..nel {
                    self.words[t][q * W + off + j * stride] = value(seed, q, round, k, j);
                }
            }
            Op::PutMem { t, off, len } => {
                for j in 0..len {
                    self.bytes[t][q * WB + off + j] = value(seed, q, round, k, j) as u8;
                }
            }
            _ => {}
        }
    }
}

struct Arrays {
    data: Sym<u64>,
    bytes: Sym<u8>,
    fence_data: Sym<u64>,
    fence_flag: Sym<u64>,
    quiet_data: Sym<u64>,
    quiet_flag: Sym<u64>,
}

/// Phase A: this PE's random operations, executed and checked as it goes (its gets read
/// only its own regions, which nobody else writes, so the model is exact at every step).
fn own_ops(ctx: &Ctx, ck: &mut Check, a: &Arrays, m: &mut Model, seed: u64, round: u64) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let base = me * W;
    for (k, op) in ops_of(seed, me, round, n).into_iter().enumerate() {
        let vals = |len: usize| -> Vec<u64> { (0..len).map(|j| value(seed, me, round, k, j)).collect() };
        match op {
            Op::Put { t, off, len } => ctx.put(&a.data, base + off, &vals(len), t)?,
            Op::PutNbi { t, off, len } => ctx.put_nbi(&a.data, base + off, &vals(len), t)?,
            Op::P { t, off } => ctx.p(&a.data, base + off, value(seed, me, round, k, 0), t)?,
            Op::Iput { t, off, stride, nel } => ctx.iput(&a.data, base + off, &vals(nel), stride, 1, nel, t)?,
            Op::PutMem { t, off, len } => {
                let v: Vec<u8> = vals(len).into_iter().map(|x| x as u8).collect();
                ctx.putmem(a.bytes.addr_of(me * WB + off), &v, t)?
            }
            Op::Get { t, off, len } => {
                let mut got = vec![0u64; len];
                ctx.get(&mut got, &a.data, base + off, t)?;
                let want = &m.words[t][base + off..base + off + len];
                ck.ok(
                    "own.get",
                    got == want,
                    format_args!("round {round} op {k}: get of {len} own words at {off} from PE {t} after own puts"),
                );
            }
            Op::G { t, off } => {
                let got = ctx.g(&a.data, base + off, t)?;
                ck.ok("own.g", got == m.words[t][base + off], format_args!("round {round} op {k}: g of own word {off} from PE {t}"));
            }
            Op::Iget { t, off, stride, nel } => {
                let mut got = vec![0u64; nel];
                ctx.iget(&mut got, &a.data, base + off, 1, stride, nel, t)?;
                let want: Vec<u64> = (0..nel).map(|j| m.words[t][base + off + j * stride]).collect();
                ck.ok("own.iget", got == want, format_args!("round {round} op {k}: iget of {nel} own words, stride {stride}, from PE {t}"));
            }
            Op::GetMem { t, off, len } => {
                let mut got = vec![0u8; len];
                ctx.getmem(&mut got, a.bytes.addr_of(me * WB + off), t)?;
                ck.ok(
                    "own.getmem",
                    got[..] == m.bytes[t][me * WB + off..me * WB + off + len],
                    format_args!("round {round} op {k}: getmem of own bytes from PE {t}"),
                );
            }
        }
        m.apply(seed, me, round, k, op);
    }
    ctx.quiet()?;
    Ok(())
}

/// Phase B: after the barrier every PE's writes are in the model; random gets anywhere.
fn verify(ctx: &Ctx, ck: &mut Check, a: &Arrays, m: &Model, rng: &mut Rng, round: u64, full: bool) -> Result<()> {
    let n = ctx.n_pes();
    for v in 0..VERIFY {
        let t = rng.below(n);
        let off = rng.below(n * W);
        let len = 1 + rng.below((n * W - off).min(300));
        let mut got = vec![0u64; len];
        ctx.get(&mut got, &a.data, off, t)?;
        ck.ok_with("verify.words", got[..] == m.words[t][off..off + len], || {
            let i = (0..len).find(|&i| got[i] != m.words[t][off + i]).unwrap_or(0);
            format!(
                "round {round} verify {v}: PE {t} word {} (writer PE {}): got {:#x}, model {:#x}",
                off + i,
                (off + i) / W,
                got[i],
                m.words[t][off + i]
            )
        });
        let boff = rng.below(n * WB);
        let blen = 1 + rng.below(n * WB - boff);
        let mut gotb = vec![0u8; blen];
        ctx.getmem(&mut gotb, a.bytes.addr_of(boff), t)?;
        ck.ok(
            "verify.bytes",
            gotb[..] == m.bytes[t][boff..boff + blen],
            format_args!("round {round} verify {v}: bytes {boff}+{blen} of PE {t}"),
        );
    }
    if full {
        let me = ctx.my_pe();
        ck.ok("verify.all_words", a.data.to_vec()? == m.words[me], format_args!("round {round}: all of this PE's words match the model"));
        ck.ok("verify.all_bytes", a.bytes.to_vec()? == m.bytes[me], format_args!("round {round}: all of this PE's bytes match the model"));
    }
    Ok(())
}

fn block_len(seed: u64, p: usize, round: u64, what: u64) -> usize {
    1 + (mix(seed ^ what << 60 ^ (p as u64) << 40 ^ round) % BLOCK as u64) as usize
}

fn block(seed: u64, p: usize, round: u64, what: u64, len: usize) -> Vec<u64> {
    (0..len).map(|i| mix(seed ^ what << 62 ^ (p as u64) << 48 ^ round << 20 ^ i as u64)).collect()
}

/// Fence: data (non-blocking), fence, flag to one PE. Quiet: data to two PEs, quiet, flag
/// to a third, which reads the data from the other two.
fn ordering(ctx: &Ctx, ck: &mut Check, a: &Arrays, seed: u64, round: u64) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    // Fence: PE p sends to p + c, so every PE receives from exactly one.
    let c = 1 + (round as usize) % (n - 1);
    let (to, from) = ((me + c) % n, (me + n - c) % n);
    let len = block_len(seed, me, round, 1);
    ctx.put_nbi(&a.fence_data, me * BLOCK, &block(seed, me, round, 1, len), to)?;
    ctx.fence()?;
    ctx.p(&a.fence_flag, me, round, to)?;
    // Quiet: to p+1 and p+2, then the flag to p+3.
    let qlen = block_len(seed, me, round, 2);
    for t in [(me + 1) % n, (me + 2) % n] {
        ctx.put_nbi(&a.quiet_data, me * BLOCK, &block(seed, me, round, 2 + t as u64, qlen), t)?;
    }
    ctx.quiet()?;
    ctx.p(&a.quiet_flag, me, round, (me + 3) % n)?;

    // Receive the fence message.
    ctx.wait_until_timeout(&a.fence_flag, from, Cmp::Ge, round, WAIT)?;
    let flen = block_len(seed, from, round, 1);
    let mut got = vec![0u64; flen];
    ctx.get(&mut got, &a.fence_data, from * BLOCK, me)?;
    ck.ok(
        "fence.flag_implies_data",
        got == block(seed, from, round, 1, flen),
        format_args!("round {round}: PE {from} put {flen} words, fence, flag: the flag was seen without the data"),
    );
    // Receive the quiet message: from PE me-3, whose data went to me-2 and me-1.
    let q = (me + n - 3) % n;
    ctx.wait_until_timeout(&a.quiet_flag, q, Cmp::Ge, round, WAIT)?;
    let qlen = block_len(seed, q, round, 2);
    for t in [(q + 1) % n, (q + 2) % n] {
        let mut got = vec![0u64; qlen];
        ctx.get(&mut got, &a.quiet_data, q * BLOCK, t)?;
        ck.ok(
            "quiet.flag_implies_data",
            got == block(seed, q, round, 2 + t as u64, qlen),
            format_args!("round {round}: PE {q} put to PE {t}, quiet, flag to PE {me}: PE {me} saw the flag but not the data at PE {t}"),
        );
    }
    Ok(())
}

fn run(ctx: &Ctx, ck: &mut Check, rounds: u64, seed: u64) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let a = Arrays {
        data: ctx.alloc(n * W)?,
        bytes: ctx.alloc(n * WB)?,
        fence_data: ctx.alloc(n * BLOCK)?,
        fence_flag: ctx.alloc(n)?,
        quiet_data: ctx.alloc(n * BLOCK)?,
        quiet_flag: ctx.alloc(n)?,
    };
    let mut m = Model { words: vec![vec![0; n * W]; n], bytes: vec![vec![0; n * WB]; n] };
    let mut rng = Rng::new(seed ^ 0xabc ^ (me as u64) << 32);
    for round in 1..=rounds {
        own_ops(ctx, ck, &a, &mut m, seed, round)?;
        ctx.barrier_all()?;
        for q in (0..n).filter(|&q| q != me) {
            for (k, op) in ops_of(seed, q, round, n).into_iter().enumerate() {
                m.apply(seed, q, round, k, op);
            }
        }
        verify(ctx, ck, &a, &m, &mut rng, round, round % 50 == 0 || round == rounds)?;
        ordering(ctx, ck, &a, seed, round)?;
        ctx.barrier_all()?;
    }
    Ok(())
}

fn main() -> ExitCode {
    support::run_program("pe_stress", 4, |ctx, ck| {
        let args: Vec<u64> = std::env::args().skip(1).map(|s| s.parse().expect("number")).collect();
        let (rounds, seed) = (args.first().copied().unwrap_or(600), args.get(1).copied().unwrap_or(1));
        let (me, n) = (ctx.my_pe(), ctx.n_pes());
        let t = Instant::now();
        let r = run(ctx, ck, rounds, seed);
        if me == 0 {
            println!(
                "pe_stress: {rounds} rounds (seed {seed}) on {n} PEs: {} random operations, {} verifying gets, {rounds} fence and quiet exchanges per PE in {:.1} s",
                rounds as usize * OPS,
                rounds as usize * VERIFY * 2,
                t.elapsed().as_secs_f64()
            );
        }
        r
    })
}
