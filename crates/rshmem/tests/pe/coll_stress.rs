//! Collectives under pressure (see tests/coll_stress.rs):
//!
//! 1. `disjoint`: the even and the odd PEs form two teams that run mixed collectives at
//!    the same time, back to back, with no barrier.
//! 2. `world`: the same on the world team, with more kinds, and every PE overwrites its
//!    source with garbage as soon as a call returns (so a PE that returned while a peer
//!    still read its source would corrupt the peer's result).
//! 3. `threads`: two threads per PE run collectives at the same time, one on the world
//!    team and one on the shared team (same members, different synchronization slots).
//!
//! Every result is checked against a model on every iteration: check `PHASE.KIND`
//! (`world.large_reduce`), whose failures name the iteration and element.

#[path = "../support/mod.rs"]
mod support;

use rshmem::{Ctx, ReduceOp, Result, Sym, Team, TeamConfig};
use std::process::ExitCode;
use support::Check;

const ITERS: u64 = 240;

/// Check `PHASE.KIND` of iteration `it`: `got` is `want`.
fn check<T: PartialEq + std::fmt::Debug>(ck: &mut Check, phase: &str, it: u64, kind: &str, got: &[T], want: &[T]) {
    let bad = (0..want.len()).find(|&i| got[i] != want[i]);
    ck.ok_with(&format!("{phase}.{kind}"), bad.is_none(), || {
        let i = bad.unwrap_or(0);
        format!("iteration {it}: element {i} is {:?}, expected {:?}", got[i], want[i])
    });
}

struct Bufs {
    a: Sym<u64>,
    b: Sym<u64>,
    f: Sym<f64>,
    g: Sym<f64>,
}

impl Bufs {
    fn new(ctx: &Ctx, n: usize) -> Result<Bufs> {
        let len = (n * 64).max(40_000);
        Ok(Bufs { a: ctx.alloc(len)?, b: ctx.alloc(len)?, f: ctx.alloc(len)?, g: ctx.alloc(len)? })
    }
}

fn garbage(b: &Sym<u64>, len: usize) -> Result<()> {
    b.copy_from(0, &vec![0xDEAD_BEEF_u64; len])
}

/// One iteration of a mixed sequence on `team` (`wide` adds the kinds only the world
/// phase runs). Values depend on the iteration, so stale data is caught.
fn step(ctx: &Ctx, ck: &mut Check, phase: &str, team: Team, it: u64, bufs: &Bufs, wide: bool) -> Result<()> {
    let (me, n) = (ctx.team_my_pe(team)?, ctx.team_n_pes(team)?);
    let kinds = if wide { 9 } else { 6 };
    let tag = it * 1000;
    match it % kinds {
        0 => {
            bufs.a.copy_from(0, &[tag + me as u64, 1, me as u64])?;
            ctx.reduce(team, &bufs.b, &bufs.a, 3, ReduceOp::Sum)?;
            garbage(&bufs.a, 3)?;
            let s: u64 = (0..n as u64).sum();
            check(ck, phase, it, "small_reduce", &bufs.b.to_vec()?[..3], &[tag * n as u64 + s, n as u64, s]);
        }
        1 => {
            let root = (it as usize / kinds as usize) % n;
            bufs.a.copy_from(0, &[tag + me as u64; 3])?;
            ctx.broadcast(team, &bufs.b, &bufs.a, 3, root)?;
            garbage(&bufs.a, 3)?;
            check(ck, phase, it, "small_broadcast", &bufs.b.to_vec()?[..3], &[tag + root as u64; 3]);
        }
        2 => {
            bufs.a.copy_from(0, &[tag + me as u64, tag])?;
            ctx.fcollect(team, &bufs.b, &bufs.a, 2)?;
            garbage(&bufs.a, 2)?;
            let want: Vec<u64> = (0..n as u64).flat_map(|r| [tag + r, tag]).collect();
            check(ck, phase, it, "fcollect", &bufs.b.to_vec()?[..2 * n], &want);
        }
        3 => {
            // Large: rsag or ring, reading the sources directly.
            let len = 40_000;
            let src: Vec<f64> = (0..len).map(|i| (tag as usize + me * 7 + i % 13) as f64).collect();
            bufs.f.copy_from(0, &src)?;
            ctx.reduce(team, &bufs.g, &bufs.f, len, ReduceOp::Max)?;
            bufs.f.copy_from(0, &vec![-1.0; len])?;
            let want: Vec<f64> = (0..len).map(|i| (tag as usize + (n - 1) * 7 + i % 13) as f64).collect();
            check(ck, phase, it, "large_reduce", &bufs.g.to_vec()?[..len], &want);
        }
        4 => {
            let src: Vec<u64> = (0..n as u64).map(|j| tag + (me as u64) * 100 + j).collect();
            bufs.a.copy_from(0, &src)?;
            ctx.alltoall(team, &bufs.b, &bufs.a, 1)?;
            garbage(&bufs.a, n)?;
            let want: Vec<u64> = (0..n as u64).map(|i| tag + i * 100 + me as u64).collect();
            check(ck, phase, it, "alltoall", &bufs.b.to_vec()?[..n], &want);
        }
        5 => {
            // Large broadcast: peers read the root's source directly.
            let root = (it as usize / kinds as usize + 1) % n;
            let len = 30_000;
            bufs.a.copy_from(0, &vec![tag + me as u64; len])?;
            ctx.broadcast(team, &bufs.b, &bufs.a, len, root)?;
            garbage(&bufs.a, len)?;
            check(ck, phase, it, "large_broadcast", &bufs.b.to_vec()?[..len], &vec![tag + root as u64; len]);
        }
        6 => {
            let mine = me % 3;
            bufs.a.copy_from(0, &vec![tag + me as u64; mine])?;
            ctx.collect(team, &bufs.b, &bufs.a, mine)?;
            garbage(&bufs.a, 3)?;
            let want: Vec<u64> = (0..n).flat_map(|r| vec![tag + r as u64; r % 3]).collect();
            check(ck, phase, it, "collect", &bufs.b.to_vec()?[..want.len()], &want);
        }
        7 => {
            bufs.a.copy_from(0, &[me as u64 + 1, tag])?;
            ctx.sum_inscan(team, &bufs.a, &bufs.a, 2)?;
            let want = [((me + 1) * (me + 2) / 2) as u64, tag * (me as u64 + 1)];
            check(ck, phase, it, "inscan", &bufs.a.to_vec()?[..2], &want);
        }
        _ => {
            let src: Vec<u64> = (0..2 * n as u64).map(|i| tag + i + me as u64).collect();
            bufs.a.copy_from(0, &src)?;
            ctx.reduce_scatter(team, &bufs.b, &bufs.a, 2, ReduceOp::Sum)?;
            garbage(&bufs.a, 2 * n)?;
            let s: u64 = (0..n as u64).sum();
            let base = n as u64 * (tag + 2 * me as u64) + s;
            check(ck, phase, it, "reduce_scatter", &bufs.b.to_vec()?[..2], &[base, base + n as u64]);
        }
    }
    Ok(())
}

fn run(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let bufs = Bufs::new(ctx, n)?;
    let cfg = TeamConfig::default();
    let even = ctx.team_split_strided(Team::WORLD, 0, 2, n.div_ceil(2), cfg)?;
    let odd = if n > 1 { ctx.team_split_strided(Team::WORLD, 1, 2, n / 2, cfg)? } else { Team::INVALID };
    let mine = if me % 2 == 0 { even } else { odd };
    for it in 0..ITERS {
        step(ctx, ck, "disjoint", mine, it, &bufs, false)?;
    }
    for it in 0..ITERS {
        step(ctx, ck, "world", Team::WORLD, it, &bufs, true)?;
    }
    let other = Bufs::new(ctx, n)?;
    ctx.barrier_all()?;
    let theirs = std::thread::scope(|scope| -> Result<Check> {
        let c2 = ctx.clone();
        let other = &other;
        let t = scope.spawn(move || -> Result<Check> {
            let mut ck = Check::new("pe_coll_stress", c2.my_pe());
            for it in 0..ITERS {
                step(&c2, &mut ck, "threads_shared", Team::SHARED, it, other, true)?;
            }
            Ok(ck)
        });
        for it in 0..ITERS {
            step(ctx, ck, "threads_world", Team::WORLD, it, &bufs, true)?;
        }
        t.join().expect("thread")
    })?;
    ck.absorb(theirs);
    ctx.barrier_all()?;
    for t in [even, odd] {
        if !t.is_invalid() {
            ctx.team_destroy(t)?;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    support::run_program("pe_coll_stress", 1, run)
}
