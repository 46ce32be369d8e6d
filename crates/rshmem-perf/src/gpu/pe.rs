//! What each rshmem GPU PE runs: the plan's cases of the GPU suite, timed with CUDA events
//! the way the anchor programs time theirs.
//!
//! For every case: a (host) barrier, the warm-up iterations, then `reps` repetitions,
//! each a barrier, then `iters` iterations enqueued on one stream between two events;
//! the per-operation time of a repetition is the events' elapsed time over `iters`. An
//! iteration is one kernel launch for bandwidth cases, one operation of a one-thread
//! kernel loop for latency cases, one enqueued collective for on-stream cases. A final
//! barrier ends the case, then the data that moved is checked. PE 0 prints one `RESULT`
//! line per case. With `RSHMEM_PERF_HOST_TIMES=1` in the environment every PE also writes
//! to stderr, per repetition, the host time it took to enqueue the `iters` iterations (per
//! iteration) beside the events' time: when they match, the host's enqueueing is the limit.

use crate::ops::{Op, Pattern};
use crate::plan::Case;
use rshmem::gpu::cuda::{Stream, Timer};
use rshmem::gpu::{Gpu, KernelArg as A, LaunchConfig, Module};
use rshmem::{Ctx, Sym, Team};
use std::io::Write;
use std::sync::Arc;

/// Source of the suite's kernels.
pub const KERNELS: &str = include_str!("perf.cu");

type Res<T> = Result<T, String>;

/// Threads per block of the bandwidth kernels.
const BLOCK: u32 = 1024;

/// How a bandwidth case is launched: blocks (None: one per SM), scope code, direction.
fn bw_shape(op: Op) -> Option<(Option<u32>, i32, i32)> {
    Some(match op {
        Op::PutBw => (None, 2, 0),
        Op::GetBw => (None, 2, 1),
        Op::PutBwBlock => (Some(1), 2, 0),
        Op::GetBwBlock => (Some(1), 2, 1),
        Op::PutBwWarp => (Some(1), 1, 0),
        Op::GetBwWarp => (Some(1), 1, 1),
        Op::PutBwThread => (Some(1), 0, 0),
        Op::GetBwThread => (Some(1), 0, 1),
        _ => return None,
    })
}

/// The `kind` of `perf_lat` for a latency case.
fn lat_kind(op: Op) -> Option<i32> {
    Some(match op {
        Op::PutLat => 0,
        Op::GetLat => 1,
        Op::GpuP => 2,
        Op::GpuG => 3,
        Op::GpuFetchAdd => 4,
        _ => return None,
    })
}

/// The byte a message holds at `i` (the kernel `perf_fill_bytes` with salt 0).
pub fn pattern(i: usize) -> u8 {
    (i.wrapping_mul(131) % 251) as u8 + 1
}

/// Element `i` of PE `pe`'s collective source (the kernel `perf_fill_words`).
pub fn word_value(pe: usize, i: usize) -> i64 {
    (pe as i64 + 1) * (i as i64 + 1)
}

fn probes(n: usize) -> [usize; 3] {
    [0, n / 2, n.saturating_sub(1)]
}

/// One PE's GPU state for the run.
struct Runner<'a> {
    ctx: &'a Ctx,
    g: Arc<Gpu>,
    m: Module,
    st: Stream,
    timer: Timer,
    sms: u32,
    me: usize,
    n: usize,
}

impl Runner<'_> {
    fn err<'b>(&'b self, case: &'b Case) -> impl Fn(rshmem::Error) -> String + 'b {
        move |e| format!("{} {} B on PE {}: {e}", case.op.name(), case.bytes, self.me)
    }

    /// Launches `kernel` of the suite's module on the run's stream.
    fn launch(&self, case: &Case, kernel: &str, cfg: LaunchConfig, args: &[A]) -> Res<()> {
        // SAFETY: every call site passes the argument kinds of the kernel's signature in
        // perf.cu, with addresses of live symmetric allocations of the sizes it touches.
        unsafe { self.m.launch(kernel, cfg, Some(&self.st), args) }.map_err(self.err(case))
    }

    fn fill_bytes(&self, case: &Case, s: &Sym<u8>) -> Res<()> {
        let cfg = LaunchConfig::new(self.sms, 256);
        self.launch(case, "perf_fill_bytes", cfg, &[A::U64(s.addr() as u64), A::U64(s.len() as u64), A::U64(0)])
    }

    fn fill_words(&self, case: &Case, s: &Sym<i64>) -> Res<()> {
        let cfg = LaunchConfig::new(self.sms, 256);
        self.launch(case, "perf_fill_words", cfg, &[A::U64(s.addr() as u64), A::U64(s.len() as u64), A::I64(self.me as i64)])
    }

    /// Warm-up and timed repetitions of `body(iterations)`, which enqueues work on the
    /// stream (`run` false: this PE only joins the barriers).
    fn timed(&self, case: &Case, run: bool, mut body: impl FnMut(usize) -> Res<()>) -> Res<Vec<f64>> {
        let e = self.err(case);
        self.st.synchronize().map_err(&e)?;
        self.ctx.barrier_all().map_err(&e)?;
        if run && case.warmup > 0 {
            body(case.warmup)?;
            self.st.synchronize().map_err(&e)?;
        }
        let mut samples = Vec::with_capacity(case.reps);
        for _ in 0..case.reps {
            self.ctx.barrier_all().map_err(&e)?;
            if run {
                self.timer.start(&self.st).map_err(&e)?;
                let t0 = std::time::Instant::now();
                body(case.iters)?;
                let host_us = t0.elapsed().as_secs_f64() * 1e6 / case.iters as f64;
                let ms = self.timer.stop_ms(&self.st).map_err(&e)?;
                samples.push(ms as f64 * 1e3 / case.iters as f64);
                if std::env::var_os("RSHMEM_PERF_HOST_TIMES").is_some_and(|v| v == "1") {
                    eprintln!(
                        "HOST-TIME pe={} op={} bytes={} enqueue_us={host_us:.3} event_us={:.3}",
                        self.me,
                        case.op.name(),
                        case.bytes,
                        ms as f64 * 1e3 / case.iters as f64
                    );
                }
            } else {
                samples.push(0.0);
            }
        }
        self.st.synchronize().map_err(&e)?;
        self.ctx.barrier_all().map_err(&e)?;
        Ok(samples)
    }

    fn check(&self, case: &Case, what: &str, got: i64, want: i64) -> Res<()> {
        if got == want {
            Ok(())
        } else {
            Err(format!("{} {} B: PE {} found {got:#x} in {what}, expected {want:#x}", case.op.name(), case.bytes, self.me))
        }
    }

    fn check_bytes(&self, case: &Case, what: &str, s: &Sym<u8>) -> Res<()> {
        for i in probes(case.bytes) {
            let got = s.read(i).map_err(self.err(case))?;
            self.check(case, &format!("byte {i} of {what}"), got as i64, pattern(i) as i64)?;
        }
        Ok(())
    }

    /// Point-to-point cases: PE i (i < N/2) drives PE i + N/2.
    fn partner(&self) -> (Option<usize>, Option<usize>) {
        let half = self.n / 2;
        if self.me < half {
            (Some(self.me + half), None)
        } else if self.me < 2 * half {
            (None, Some(self.me - half))
        } else {
            (None, None)
        }
    }

    fn run_bw(&self, case: &Case) -> Res<Vec<f64>> {
        let e = self.err(case);
        let (blocks, scope, dir) = bw_shape(case.op).expect("a bandwidth case");
        let (to, from) = self.partner();
        let src: Sym<u8> = self.ctx.alloc(case.bytes).map_err(&e)?;
        let dst: Sym<u8> = self.ctx.alloc(case.bytes).map_err(&e)?;
        self.fill_bytes(case, &src)?;
        let cfg = LaunchConfig::new(blocks.unwrap_or(self.sms), BLOCK);
        let samples = self.timed(case, to.is_some(), |k| {
            let pe = to.expect("only the initiator runs") as i32;
            for _ in 0..k {
                let args = [
                    A::U64(dst.addr() as u64),
                    A::U64(src.addr() as u64),
                    A::U64(case.bytes as u64),
                    A::I32(scope),
                    A::I32(dir),
                    A::I32(pe),
                ];
                self.launch(case, "perf_bw", cfg, &args)?;
            }
            Ok(())
        })?;
        match (dir, to, from) {
            (0, _, Some(_)) => self.check_bytes(case, "the put destination", &dst)?,
            (1, Some(_), _) => self.check_bytes(case, "the get destination", &dst)?,
            _ => {}
        }
        self.ctx.free(src).map_err(&e)?;
        self.ctx.free(dst).map_err(&e)?;
        Ok(samples)
    }

    fn run_lat(&self, case: &Case) -> Res<Vec<f64>> {
        let e = self.err(case);
        let kind = lat_kind(case.op).expect("a latency case");
        let (to, from) = self.partner();
        let bytes = case.bytes.max(8);
        let src: Sym<u8> = self.ctx.alloc(bytes).map_err(&e)?;
        let dst: Sym<u8> = self.ctx.alloc(bytes).map_err(&e)?;
        let out: Sym<u64> = self.ctx.alloc(1).map_err(&e)?;
        self.fill_bytes(case, &src)?;
        // The word g reads: this PE's own value, set before the first barrier.
        let g_value = 0x5eed_0000 + self.me as u64;
        self.st.synchronize().map_err(&e)?;
        if case.op == Op::GpuG {
            src.copy_from(0, &g_value.to_le_bytes()).map_err(&e)?;
        }
        // Counters start at zero (the memory may hold an earlier case's data).
        dst.copy_from(0, &[0u8; 8]).map_err(&e)?;
        out.write(0, 0).map_err(&e)?;
        let one = LaunchConfig::new(1, 1);
        let mut seq: u64 = 0;
        let samples = self.timed(case, to.is_some(), |k| {
            let pe = to.expect("only the initiator runs") as i32;
            let args = [
                A::U64(dst.addr() as u64),
                A::U64(src.addr() as u64),
                A::U64(case.bytes as u64),
                A::I32(kind),
                A::I32(k as i32),
                A::U64(0),
                A::U64(seq),
                A::U64(out.addr() as u64),
                A::I32(pe),
            ];
            seq += k as u64;
            self.launch(case, "perf_lat", one, &args)
        })?;
        let total = (case.warmup + case.reps * case.iters) as u64;
        let word = |s: &Sym<u8>| -> Res<i64> {
            let mut b = [0u8; 8];
            for (i, v) in b.iter_mut().enumerate() {
                *v = s.read(i).map_err(&e)?;
            }
            Ok(i64::from_le_bytes(b))
        };
        match (case.op, to, from) {
            (Op::PutLat, _, Some(_)) => self.check_bytes(case, "the put destination", &dst)?,
            (Op::GetLat, Some(_), _) => self.check_bytes(case, "the get destination", &dst)?,
            (Op::GpuP, _, Some(_)) => self.check(case, "the word written by p", word(&dst)?, total as i64)?,
            (Op::GpuFetchAdd, _, Some(_)) => self.check(case, "the atomically updated word", word(&dst)?, total as i64)?,
            (Op::GpuG, Some(p), _) => {
                let want = total.wrapping_mul(0x5eed_0000 + p as u64);
                self.check(case, "the sum of the words read by g", out.read(0).map_err(&e)? as i64, want as i64)?
            }
            _ => {}
        }
        self.ctx.free(src).map_err(&e)?;
        self.ctx.free(dst).map_err(&e)?;
        self.ctx.free(out).map_err(&e)?;
        Ok(samples)
    }

    fn run_signal_pingpong(&self, case: &Case) -> Res<Vec<f64>> {
        let e = self.err(case);
        let (to, from) = self.partner();
        let src: Sym<u8> = self.ctx.alloc(case.bytes).map_err(&e)?;
        let data: Sym<u8> = self.ctx.alloc(case.bytes).map_err(&e)?;
        let sig: Sym<u64> = self.ctx.alloc(1).map_err(&e)?;
        self.fill_bytes(case, &src)?;
        // The signal starts at zero (the memory may hold an earlier case's data).
        sig.write(0, 0).map_err(&e)?;
        let one = LaunchConfig::new(1, 1);
        let peer = to.or(from);
        let mut seq: u64 = 0;
        let samples = self.timed(case, peer.is_some(), |k| {
            let args = [
                A::U64(data.addr() as u64),
                A::U64(src.addr() as u64),
                A::U64(case.bytes as u64),
                A::U64(sig.addr() as u64),
                A::U64(seq),
                A::I32(k as i32),
                A::I32(to.is_some() as i32),
                A::I32(peer.expect("a pair") as i32),
            ];
            seq += k as u64;
            self.launch(case, "perf_sigpp", one, &args)
        })?;
        if peer.is_some() {
            self.check_bytes(case, "the signalled message", &data)?;
            let total = (case.warmup + case.reps * case.iters) as i64;
            self.check(case, "the signal", sig.read(0).map_err(&e)? as i64, total)?;
        }
        self.ctx.free(src).map_err(&e)?;
        self.ctx.free(data).map_err(&e)?;
        self.ctx.free(sig).map_err(&e)?;
        Ok(samples.iter().map(|s| s / 2.0).collect())
    }

    fn run_collective(&self, case: &Case) -> Res<Vec<f64>> {
        let e = self.err(case);
        let (me, n) = (self.me, self.n);
        let (ctx, st, world) = (self.ctx, &self.st, Team::WORLD);
        match case.op {
            Op::GpuBarrier => {
                return self.timed(case, true, |k| self.launch(case, "perf_barrier", LaunchConfig::new(1, 1), &[A::I32(k as i32)]));
            }
            Op::BarrierOnStream => {
                return self.timed(case, true, |k| {
                    for _ in 0..k {
                        ctx.barrier_all_on_stream(st).map_err(&e)?;
                    }
                    Ok(())
                });
            }
            _ => {}
        }
        let nel = case.bytes / 8;
        let (src_len, dst_len) = match case.op {
            Op::BroadcastOnStream | Op::ReduceOnStream => (nel, nel),
            Op::FcollectOnStream => (nel, n * nel),
            Op::ReduceScatterOnStream => (n * nel, nel),
            _ => (n * nel, n * nel),
        };
        let src: Sym<i64> = ctx.alloc(src_len).map_err(&e)?;
        let dst: Sym<i64> = ctx.alloc(dst_len).map_err(&e)?;
        self.fill_words(case, &src)?;
        let samples = self.timed(case, true, |k| {
            for _ in 0..k {
                match case.op {
                    Op::BroadcastOnStream => ctx.broadcast_on_stream(world, &dst, &src, nel, 0, st),
                    Op::FcollectOnStream => ctx.fcollect_on_stream(world, &dst, &src, nel, st),
                    Op::AlltoallOnStream => ctx.alltoall_on_stream(world, &dst, &src, nel, st),
                    Op::ReduceOnStream => ctx.reduce_on_stream(world, &dst, &src, nel, rshmem::ReduceOp::Sum, st),
                    _ => ctx.reduce_scatter_on_stream(world, &dst, &src, nel, rshmem::ReduceOp::Sum, st),
                }
                .map_err(&e)?;
            }
            Ok(())
        })?;
        // (destination index, expected value) pairs.
        let mut want: Vec<(usize, i64)> = Vec::new();
        for i in probes(nel) {
            match case.op {
                Op::BroadcastOnStream if me != 0 => want.push((i, word_value(0, i))),
                Op::BroadcastOnStream => {}
                Op::FcollectOnStream => (0..n).for_each(|j| want.push((j * nel + i, word_value(j, i)))),
                Op::AlltoallOnStream => (0..n).for_each(|j| want.push((j * nel + i, word_value(j, me * nel + i)))),
                Op::ReduceOnStream => want.push((i, (0..n).map(|p| word_value(p, i)).sum())),
                _ => want.push((i, (0..n).map(|p| word_value(p, me * nel + i)).sum())),
            }
        }
        for (at, w) in want {
            self.check(case, &format!("element {at} of the destination"), dst.read(at).map_err(&e)?, w)?;
        }
        ctx.free(src).map_err(&e)?;
        ctx.free(dst).map_err(&e)?;
        Ok(samples)
    }

    fn run_case(&self, case: &Case) -> Res<Vec<f64>> {
        if case.op.info().pattern == Pattern::Pairs && self.n < 2 {
            return Err(format!("{} needs at least 2 PEs (got {})", case.op.name(), self.n));
        }
        if bw_shape(case.op).is_some() {
            self.run_bw(case)
        } else if lat_kind(case.op).is_some() {
            self.run_lat(case)
        } else if case.op == Op::GpuSignalPingPong {
            self.run_signal_pingpong(case)
        } else if case.op.suite() == crate::ops::Suite::Gpu {
            self.run_collective(case)
        } else {
            Err(format!("{} is an operation of the CPU suite, not of GPU PEs", case.op.name()))
        }
    }
}

/// The GPU PE program: runs every case of the plan file and, on PE 0, prints the results;
/// `coll_proto` is the collective protocol the driver forced, for the INFO line.
pub fn main(plan_path: &std::path::Path, coll_proto: Option<&str>) -> Res<()> {
    let text = std::fs::read_to_string(plan_path).map_err(|e| format!("cannot read plan {}: {e}", plan_path.display()))?;
    let cases = crate::plan::parse(&text, crate::ops::Suite::Gpu)?;
    rshmem::log::install();
    // Every PE this process hosts (one, or several as threads sharing the GPU's context).
    let done = rshmem::run_local_pes(|ctx| run_pe(ctx, &cases, coll_proto)).map_err(|e| format!("init: {e}"))?;
    done.into_iter().collect()
}

/// One GPU PE of the job: its kernels, stream and timer, then every case.
fn run_pe(ctx: rshmem::Ctx, cases: &[crate::plan::Case], coll_proto: Option<&str>) -> Res<()> {
    let me = ctx.my_pe();
    let Some(g) = ctx.gpu().cloned() else {
        let e = format!("PE {me} has no GPU heap, though the GPU suite runs its PEs with RSHMEM_DEVICE=gpu");
        eprintln!("rshmem-perf (pe): {e}");
        ctx.global_exit(1)
    };
    let setup = || -> Res<Runner<'_>> {
        let m = g.compile("rshmem_perf", KERNELS, &[]).map_err(|e| format!("PE {me}: compiling the suite's kernels: {e}"))?;
        let st = g.new_stream().map_err(|e| format!("PE {me}: {e}"))?;
        let timer = g.timer().map_err(|e| format!("PE {me}: {e}"))?;
        let sms = g.sm_count().map_err(|e| format!("PE {me}: {e}"))? as u32;
        Ok(Runner { ctx: &ctx, g: g.clone(), m, st, timer, sms, me, n: ctx.n_pes() })
    };
    let runner = match setup() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("rshmem-perf (pe): {e}");
            ctx.global_exit(1)
        }
    };
    // Not locked for the whole run: thread PEs of this process share stdout (only PE 0
    // writes).
    let mut out = std::io::stdout();
    if me == 0 {
        let proto = coll_proto.map(|p| format!(", {}={p}", super::COLL_PROTO_VAR)).unwrap_or_default();
        let threads = g.sharers();
        let how = if threads > 1 { format!(", {threads} PEs per process as threads") } else { String::new() };
        let _ = writeln!(
            out,
            "INFO rshmem {} (GPU PEs on {}, {}, {} SMs{proto}{how})",
            env!("CARGO_PKG_VERSION"),
            runner.g.device_name(),
            runner.g.arch(),
            runner.sms
        );
    }
    crate::pe::run_cases(&ctx, cases, &mut out, |case| runner.run_case(case))?;
    drop(runner);
    ctx.finalize().map_err(|e| format!("finalize: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{Suite, GPU_OPS};

    #[test]
    fn every_gpu_op_has_a_runner() {
        for o in GPU_OPS {
            let kinds = bw_shape(o.op).is_some() as u8 + lat_kind(o.op).is_some() as u8;
            assert!(kinds <= 1, "{}", o.name);
            assert_eq!(o.op.suite(), Suite::Gpu);
        }
        assert_eq!(bw_shape(Op::PutBw), Some((None, 2, 0)));
        assert_eq!(bw_shape(Op::GetBwThread), Some((Some(1), 0, 1)));
        assert_eq!(bw_shape(Op::Put), None);
    }

    #[test]
    fn kernels_are_the_ones_launched() {
        for k in ["perf_bw", "perf_lat", "perf_sigpp", "perf_barrier", "perf_fill_bytes", "perf_fill_words"] {
            let decl = KERNELS.lines().find(|l| l.contains(&format!(" {k}("))).unwrap_or_else(|| panic!("no kernel {k}"));
            assert!(decl.starts_with("extern \"C\" __global__ void"), "{decl}");
        }
        // The host's pattern is the kernel's formula.
        assert!(KERNELS.contains("((i + salt) * 131ull) % 251ull + 1ull"));
        assert_eq!(pattern(0), 1);
        assert_eq!(pattern(2), (262 % 251) as u8 + 1);
        assert_eq!(word_value(1, 3), 8);
    }
}
