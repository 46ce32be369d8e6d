//! What each rshmem PE runs: the plan's cases, timed the same way as the anchor program.
//!
//! For every case: a barrier, the warm-up iterations, then `reps` repetitions, each a
//! barrier followed by `iters` timed iterations on every PE that takes part; the
//! per-operation time of a repetition is its elapsed time over `iters`. A final barrier
//! ends the case, then the data that moved is checked, so a case that measured nothing
//! fails. PE 0 prints one `RESULT` line per case (see [`crate::protocol`]).

use crate::ops::{Op, Pattern};
use crate::plan::Case;
use crate::protocol::{binding_line, cpus_allowed_list, result_line, Measurement};
use crate::stats::Summary;
use rshmem::{Cmp, Ctx, ReduceOp, SignalOp, Sym, Team};
use std::hint::black_box;
use std::io::Write;
use std::time::Instant;

/// What a PE does in a point-to-point case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Drives the operation towards `partner`.
    Initiator { partner: usize },
    /// Is the target of `partner`'s operations.
    Target { partner: usize },
    /// Takes no part (odd PE count).
    Idle,
}

fn role(me: usize, n: usize) -> Role {
    let half = n / 2;
    if me < half {
        Role::Initiator { partner: me + half }
    } else if me < 2 * half {
        Role::Target { partner: me - half }
    } else {
        Role::Idle
    }
}

/// The byte a buffer holds at `i`, so that a check can tell moved data from zeros.
fn pattern(i: usize) -> u8 {
    (i.wrapping_mul(131) % 251) as u8 + 1
}

/// Offsets that a check looks at: ends and middle.
fn probes(bytes: usize) -> [usize; 3] {
    [0, bytes / 2, bytes.saturating_sub(1)]
}

type Res<T> = Result<T, String>;

fn err(case: &Case, me: usize) -> impl Fn(rshmem::Error) -> String + '_ {
    move |e| format!("{} {} B on PE {me}: {e}", case.op.name(), case.bytes)
}

/// Runs `body(iterations)` as warm-up and timed repetitions; returns per-op microseconds.
fn timed(ctx: &Ctx, case: &Case, mut body: impl FnMut(usize) -> Res<()>) -> Res<Vec<f64>> {
    let me = ctx.my_pe();
    ctx.barrier_all().map_err(err(case, me))?;
    if case.warmup > 0 {
        body(case.warmup)?;
    }
    let mut samples = Vec::with_capacity(case.reps);
    for _ in 0..case.reps {
        ctx.barrier_all().map_err(err(case, me))?;
        let t0 = Instant::now();
        body(case.iters)?;
        samples.push(t0.elapsed().as_secs_f64() * 1e6 / case.iters as f64);
    }
    ctx.barrier_all().map_err(err(case, me))?;
    Ok(samples)
}

fn check_bytes(case: &Case, me: usize, what: &str, got: impl Fn(usize) -> Res<u8>) -> Res<()> {
    for i in probes(case.bytes) {
        let (g, want) = (got(i)?, pattern(i));
        if g != want {
            return Err(format!("{} {} B: PE {me} found {g:#04x} at byte {i} of {what}, expected {want:#04x}", case.op.name(), case.bytes));
        }
    }
    Ok(())
}

fn run_rma(ctx: &Ctx, case: &Case) -> Res<Vec<f64>> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let e = err(case, me);
    let r = role(me, n);
    let sym: Sym<u8> = ctx.alloc(case.bytes).map_err(&e)?;
    let mut local: Vec<u8> = match case.op {
        Op::Put | Op::PutNbi | Op::PutNbiRate => (0..case.bytes).map(pattern).collect(),
        _ => vec![0; case.bytes],
    };
    if matches!(case.op, Op::Get | Op::GetNbi) {
        sym.copy_from(0, &(0..case.bytes).map(pattern).collect::<Vec<u8>>()).map_err(&e)?;
    }
    let samples = timed(ctx, case, |k| {
        let Role::Initiator { partner } = r else { return Ok(()) };
        match case.op {
            Op::Put => {
                for _ in 0..k {
                    ctx.put(&sym, 0, &local, partner).map_err(&e)?;
                    ctx.quiet().map_err(&e)?;
                }
            }
            Op::PutNbi | Op::PutNbiRate => {
                for _ in 0..k {
                    ctx.put_nbi(&sym, 0, &local, partner).map_err(&e)?;
                }
                ctx.quiet().map_err(&e)?;
            }
            Op::Get => {
                for _ in 0..k {
                    ctx.get(&mut local, &sym, 0, partner).map_err(&e)?;
                }
            }
            Op::GetNbi => {
                // The raw form, whose gets stay in flight until quiet over a remote
                // transport (`get_nbi` into a borrowed slice completes before it returns).
                let (dst, len) = (local.as_mut_ptr(), local.len());
                for _ in 0..k {
                    // SAFETY: `local` outlives the quiet below and nothing reads or writes
                    // it until then (every get of the block writes the same bytes).
                    unsafe { ctx.getmem_nbi_raw(dst, len, sym.addr(), partner) }.map_err(&e)?;
                }
                ctx.quiet().map_err(&e)?;
            }
            other => unreachable!("{other:?} is not bulk RMA"),
        }
        Ok(())
    })?;
    match (case.op, r) {
        (Op::Put | Op::PutNbi | Op::PutNbiRate, Role::Target { .. }) => {
            check_bytes(case, me, "the put destination", |i| sym.read(i).map_err(&e))?
        }
        (Op::Get | Op::GetNbi, Role::Initiator { .. }) => check_bytes(case, me, "the get destination", |i| Ok(local[i]))?,
        _ => {}
    }
    ctx.free(sym).map_err(&e)?;
    Ok(samples)
}

fn run_word(ctx: &Ctx, case: &Case) -> Res<Vec<f64>> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let e = err(case, me);
    let r = role(me, n);
    let word: Sym<i64> = ctx.alloc(1).map_err(&e)?;
    // The value a g reads: set by each PE on itself before the first barrier.
    let g_value = 0x5eed_0000 + me as i64;
    if matches!(case.op, Op::G | Op::Fetch) {
        word.store(0, g_value).map_err(&e)?;
    }
    let mut sent: i64 = 0;
    let mut last_g: i64 = 0;
    let samples = timed(ctx, case, |k| {
        match (case.op, r) {
            (Op::FetchAdd, Role::Initiator { partner }) => {
                for _ in 0..k {
                    black_box(ctx.atomic_fetch_add(&word, 0, 1, partner).map_err(&e)?);
                }
            }
            (Op::Add, Role::Initiator { partner }) => {
                for _ in 0..k {
                    ctx.atomic_add(&word, 0, 1, partner).map_err(&e)?;
                    ctx.quiet().map_err(&e)?;
                }
            }
            (Op::AddRate, Role::Initiator { partner }) => {
                for _ in 0..k {
                    ctx.atomic_add(&word, 0, 1, partner).map_err(&e)?;
                }
                ctx.quiet().map_err(&e)?;
            }
            (Op::IncRate, Role::Initiator { partner }) => {
                for _ in 0..k {
                    ctx.atomic_inc(&word, 0, partner).map_err(&e)?;
                }
                ctx.quiet().map_err(&e)?;
            }
            (Op::SetRate, Role::Initiator { partner }) => {
                for _ in 0..k {
                    sent += 1;
                    ctx.atomic_set(&word, 0, sent, partner).map_err(&e)?;
                }
                ctx.quiet().map_err(&e)?;
            }
            (Op::CompareSwap, Role::Initiator { partner }) => {
                for _ in 0..k {
                    black_box(ctx.atomic_compare_swap(&word, 0, sent, sent + 1, partner).map_err(&e)?);
                    sent += 1;
                }
            }
            (Op::Fetch, Role::Initiator { partner }) => {
                for _ in 0..k {
                    last_g = black_box(ctx.atomic_fetch(&word, 0, partner).map_err(&e)?);
                }
            }
            (Op::P, Role::Initiator { partner }) => {
                for _ in 0..k {
                    sent += 1;
                    ctx.p(&word, 0, sent, partner).map_err(&e)?;
                    ctx.quiet().map_err(&e)?;
                }
            }
            (Op::G, Role::Initiator { partner }) => {
                for _ in 0..k {
                    last_g = black_box(ctx.g(&word, 0, partner).map_err(&e)?);
                }
            }
            (Op::PingPong, Role::Initiator { partner }) => {
                for _ in 0..k {
                    sent += 1;
                    ctx.p(&word, 0, sent, partner).map_err(&e)?;
                    ctx.wait_until(&word, 0, Cmp::Ge, sent).map_err(&e)?;
                }
            }
            (Op::PingPong, Role::Target { partner }) => {
                for _ in 0..k {
                    sent += 1;
                    ctx.wait_until(&word, 0, Cmp::Ge, sent).map_err(&e)?;
                    ctx.p(&word, 0, sent, partner).map_err(&e)?;
                }
            }
            _ => {}
        }
        Ok(())
    })?;
    let total = (case.warmup + case.reps * case.iters) as i64;
    let check = |what: &str, got: i64, want: i64| {
        if got == want {
            Ok(())
        } else {
            Err(format!("{} {} B: PE {me} found {got:#x} in {what}, expected {want:#x}", case.op.name(), case.bytes))
        }
    };
    match (case.op, r) {
        (Op::P, Role::Target { .. }) => check("the word written by p", word.load(0).map_err(&e)?, total)?,
        (Op::FetchAdd | Op::Add | Op::AddRate | Op::IncRate | Op::SetRate | Op::CompareSwap, Role::Target { .. }) => {
            check("the atomically updated word", word.load(0).map_err(&e)?, total)?
        }
        (Op::G, Role::Initiator { partner }) => check("the word read by g", last_g, 0x5eed_0000 + partner as i64)?,
        (Op::Fetch, Role::Initiator { partner }) => check("the word read by atomic_fetch", last_g, 0x5eed_0000 + partner as i64)?,
        (Op::PingPong, Role::Initiator { .. } | Role::Target { .. }) => check("the ping-pong flag", word.load(0).map_err(&e)?, total)?,
        _ => {}
    }
    // For a pingpong the time of a repetition covers `iters` round trips: report half of one.
    let samples = if case.op == Op::PingPong { samples.iter().map(|s| s / 2.0).collect() } else { samples };
    ctx.free(word).map_err(&e)?;
    Ok(samples)
}

fn run_signal_pingpong(ctx: &Ctx, case: &Case) -> Res<Vec<f64>> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let e = err(case, me);
    let r = role(me, n);
    let data: Sym<u8> = ctx.alloc(case.bytes).map_err(&e)?;
    let sig: Sym<u64> = ctx.alloc(1).map_err(&e)?;
    let local: Vec<u8> = (0..case.bytes).map(pattern).collect();
    let mut seq: u64 = 0;
    let samples = timed(ctx, case, |k| {
        match r {
            Role::Initiator { partner } => {
                for _ in 0..k {
                    seq += 1;
                    ctx.put_signal(&data, 0, &local, &sig, 0, seq, SignalOp::Set, partner).map_err(&e)?;
                    ctx.signal_wait_until(&sig, 0, Cmp::Ge, seq).map_err(&e)?;
                }
            }
            Role::Target { partner } => {
                for _ in 0..k {
                    seq += 1;
                    ctx.signal_wait_until(&sig, 0, Cmp::Ge, seq).map_err(&e)?;
                    ctx.put_signal(&data, 0, &local, &sig, 0, seq, SignalOp::Set, partner).map_err(&e)?;
                }
            }
            Role::Idle => {}
        }
        Ok(())
    })?;
    if r != Role::Idle {
        check_bytes(case, me, "the signalled message", |i| data.read(i).map_err(&e))?;
        let total = (case.warmup + case.reps * case.iters) as u64;
        let got = sig.load(0).map_err(&e)?;
        if got != total {
            return Err(format!("{} {} B: PE {me} found signal {got}, expected {total}", case.op.name(), case.bytes));
        }
    }
    ctx.free(data).map_err(&e)?;
    ctx.free(sig).map_err(&e)?;
    Ok(samples.iter().map(|s| s / 2.0).collect())
}

/// The value of element `i` of PE `pe`'s reduction source.
fn reduce_value(pe: usize, i: usize) -> i64 {
    (pe as i64 + 1) * (i as i64 + 1)
}

fn run_all(ctx: &Ctx, case: &Case) -> Res<Vec<f64>> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let e = err(case, me);
    let bytes = case.bytes;
    let world = Team::WORLD;
    let bad = |what: &str, at: usize, got: String, want: String| {
        Err(format!("{} {bytes} B: PE {me} found {got} at {what} {at}, expected {want}", case.op.name()))
    };
    match case.op {
        Op::Barrier => timed(ctx, case, |k| {
            for _ in 0..k {
                ctx.barrier_all().map_err(&e)?;
            }
            Ok(())
        }),
        Op::Broadcast | Op::Fcollect | Op::Alltoall => {
            let (src_len, dst_len) = match case.op {
                Op::Broadcast => (bytes, bytes),
                Op::Fcollect => (bytes, n * bytes),
                _ => (n * bytes, n * bytes),
            };
            let src: Sym<u8> = ctx.alloc(src_len).map_err(&e)?;
            let dst: Sym<u8> = ctx.alloc(dst_len).map_err(&e)?;
            src.copy_from(0, &(0..src_len).map(|i| pattern(i + me)).collect::<Vec<u8>>()).map_err(&e)?;
            let samples = timed(ctx, case, |k| {
                for _ in 0..k {
                    match case.op {
                        Op::Broadcast => ctx.broadcastmem(world, dst.addr(), src.addr(), bytes, 0),
                        Op::Fcollect => ctx.fcollectmem(world, dst.addr(), src.addr(), bytes),
                        _ => ctx.alltoallmem(world, dst.addr(), src.addr(), bytes),
                    }
                    .map_err(&e)?;
                }
                Ok(())
            })?;
            // Block j of dest came from PE j: its source byte at `offset` is pattern(offset + j).
            for j in 0..n {
                let offset = match case.op {
                    Op::Broadcast if me == 0 || j > 0 => continue,
                    Op::Broadcast | Op::Fcollect => 0,
                    _ => me * bytes,
                };
                for i in probes(bytes) {
                    let got = dst.read(j * bytes * (case.op != Op::Broadcast) as usize + i).map_err(&e)?;
                    let want = pattern(offset + i + j);
                    if got != want {
                        return bad("byte", i, format!("{got:#04x} in the block from PE {j}"), format!("{want:#04x}"));
                    }
                }
            }
            ctx.free(src).map_err(&e)?;
            ctx.free(dst).map_err(&e)?;
            Ok(samples)
        }
        Op::Reduce | Op::ReduceScatter => {
            let nreduce = bytes / 8;
            let src_len = if case.op == Op::Reduce { nreduce } else { n * nreduce };
            let src: Sym<i64> = ctx.alloc(src_len).map_err(&e)?;
            let dst: Sym<i64> = ctx.alloc(nreduce).map_err(&e)?;
            src.copy_from(0, &(0..src_len).map(|i| reduce_value(me, i)).collect::<Vec<i64>>()).map_err(&e)?;
            let samples = timed(ctx, case, |k| {
                for _ in 0..k {
                    if case.op == Op::Reduce {
                        ctx.reduce(world, &dst, &src, nreduce, ReduceOp::Sum)
                    } else {
                        ctx.reduce_scatter(world, &dst, &src, nreduce, ReduceOp::Sum)
                    }
                    .map_err(&e)?;
                }
                Ok(())
            })?;
            let first = if case.op == Op::Reduce { 0 } else { me * nreduce };
            for i in probes(nreduce) {
                let want: i64 = (0..n).map(|p| reduce_value(p, first + i)).sum();
                let got = dst.read(i).map_err(&e)?;
                if got != want {
                    return bad("element", i, got.to_string(), want.to_string());
                }
            }
            ctx.free(src).map_err(&e)?;
            ctx.free(dst).map_err(&e)?;
            Ok(samples)
        }
        other => unreachable!("{other:?} is not a collective"),
    }
}

/// Runs one case on this PE; returns the per-operation time of each repetition.
pub fn run_case(ctx: &Ctx, case: &Case) -> Res<Vec<f64>> {
    if case.op.info().pattern == Pattern::Pairs && ctx.n_pes() < 2 {
        return Err(format!("{} needs at least 2 PEs (got {})", case.op.name(), ctx.n_pes()));
    }
    match case.op {
        Op::Put | Op::PutNbi | Op::PutNbiRate | Op::Get | Op::GetNbi => run_rma(ctx, case),
        Op::P | Op::G | Op::PingPong | Op::FetchAdd | Op::Add | Op::CompareSwap | Op::Fetch | Op::AddRate | Op::IncRate | Op::SetRate => {
            run_word(ctx, case)
        }
        Op::SignalPingPong => run_signal_pingpong(ctx, case),
        Op::Barrier | Op::Broadcast | Op::Fcollect | Op::Alltoall | Op::Reduce | Op::ReduceScatter => run_all(ctx, case),
        other => Err(format!("{} is an operation of the {} suite, not of CPU PEs", other.name(), other.suite().name())),
    }
}

/// The CPUs the calling thread may run on (`Cpus_allowed_list` of
/// `/proc/thread-self/status`: thread PEs of one process may be bound apart; else of
/// `/proc/self/status`), or `unknown`.
pub fn allowed_cpus() -> String {
    ["/proc/thread-self/status", "/proc/self/status"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok().and_then(|t| cpus_allowed_list(&t)))
        .unwrap_or_else(|| "unknown".into())
}

/// The PE program: runs every case of the plan file and, on PE 0, prints the results.
pub fn main(plan_path: &std::path::Path) -> Res<()> {
    let text = std::fs::read_to_string(plan_path).map_err(|e| format!("cannot read plan {}: {e}", plan_path.display()))?;
    let cases = crate::plan::parse(&text, crate::ops::Suite::Cpu)?;
    rshmem::log::install();
    // Every PE this process hosts (one, or several as threads).
    let done = rshmem::run_local_pes(|ctx| -> Res<()> {
        let me = ctx.my_pe();
        // Not locked for the whole run: thread PEs of this process share stdout (only PE 0
        // writes).
        let mut out = std::io::stdout();
        if me == 0 {
            let threads = rshmem::local_pes().unwrap_or(1);
            let how = if threads > 1 { format!(", {threads} PEs per process as threads") } else { String::new() };
            // The transport to the last PE (the first a pair-wise case uses beside PE 0).
            let via = ctx.transport_name(ctx.n_pes() - 1).map_err(|e| e.to_string())?;
            let _ = writeln!(out, "INFO rshmem {} (CPU PEs, {via} transport{how})", env!("CARGO_PKG_VERSION"));
        }
        // Every PE says where it may run (the driver's header shows it).
        let _ = writeln!(out, "{}", binding_line(me, &allowed_cpus())).and_then(|_| out.flush());
        run_cases(&ctx, &cases, &mut out, |case| run_case(&ctx, case))?;
        ctx.finalize().map_err(|e| format!("finalize: {e}"))
    })
    .map_err(|e| format!("init: {e}"))?;
    done.into_iter().collect()
}

/// Runs every case with `run` and, on PE 0, writes each one's result line to `out` (the
/// CPU and GPU PE programs' common loop). A PE that fails a case ends the whole job at
/// once: its peers may be waiting for it inside the case, and a clean finalize would wait
/// for them in turn.
pub fn run_cases(ctx: &Ctx, cases: &[Case], out: &mut impl Write, mut run: impl FnMut(&Case) -> Res<Vec<f64>>) -> Res<()> {
    for case in cases {
        let samples = match run(case) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("rshmem-perf (pe): {e}");
                ctx.global_exit(1)
            }
        };
        if ctx.my_pe() == 0 {
            let time = Summary::of(&samples).ok_or_else(|| format!("{} {} B: no valid timing", case.op.name(), case.bytes))?;
            let m = Measurement { op: case.op.name().into(), bytes: case.bytes, iters: case.iters, reps: case.reps, time };
            writeln!(out, "{}", result_line(&m)).and_then(|_| out.flush()).map_err(|e| format!("cannot write results: {e}"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_cover_halves() {
        assert_eq!(role(0, 2), Role::Initiator { partner: 1 });
        assert_eq!(role(1, 2), Role::Target { partner: 0 });
        assert_eq!(role(1, 4), Role::Initiator { partner: 3 });
        assert_eq!(role(2, 4), Role::Target { partner: 0 });
        assert_eq!(role(4, 5), Role::Idle);
        assert_eq!(role(0, 1), Role::Idle);
    }

    #[test]
    fn pattern_has_no_zero() {
        assert!((0..10_000).all(|i| pattern(i) != 0));
        assert_eq!(probes(1), [0, 0, 0]);
        assert_eq!(probes(64), [0, 32, 63]);
    }
}
