//! Pushed collectives (senders write the members' inboxes: `coll/broadcast_push.rs`,
//! `gather_push.rs`, `reduce_push.rs`), on thread PEs: streams of broadcasts with
//! rotating roots, and of fcollects and all-reduces, sizes on both sides of the inbox
//! limits, members that fall behind and sources overwritten as soon as a call returns,
//! checked call by call against a model; and a team destroyed and made again, whose new
//! collectives must not take the old team's inbox contents for theirs.

use rshmem::{BroadcastAlgo, Config, Ctx, GatherAlgo, ReduceAlgo, ReduceOp, Team, TeamConfig};
use std::time::Duration;

/// The settings of these jobs: the cheap argument check only (the protocol the release
/// build runs; the full check adds a flag exchange first), and a hang limit so that a
/// lost post fails the test instead of hanging it.
fn config() -> Config {
    Config::from_lookup(&|name| match name {
        "RSHMEM_COLL_CHECK" => Some("0".into()),
        "RSHMEM_HANG_TIMEOUT" => Some("60".into()),
        _ => None,
    })
    .expect("the settings parse")
}

/// Byte `k` of the message of call `it`.
fn pattern(it: usize, k: usize) -> u8 {
    (it * 31 + k * 7 + 1) as u8
}

/// Sizes of the stream: pushed ones (an inbox slot holds 1016 B), then a direct one.
const SIZES: [usize; 7] = [8, 1, 56, 57, 1016, 0, 1017];

fn stream(ctx: &Ctx, iters: usize) -> rshmem::Result<usize> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let src = ctx.alloc::<u8>(2048)?;
    let dst = ctx.alloc::<u8>(2048)?;
    for (bytes, want) in [(8, BroadcastAlgo::Push), (1016, BroadcastAlgo::Push), (1017, BroadcastAlgo::Direct)] {
        let got = ctx.coll_plan(Team::WORLD, bytes)?.broadcast;
        assert_eq!(got, want, "PE {me}: the plan for a broadcast of {bytes} B on {n} PEs");
    }
    let mut checked = 0;
    for it in 0..iters {
        // Roots in turn, but runs of one root too (it may then run ahead of its members
        // by up to the inbox's slots).
        let root = if it % 40 < 20 { it % n } else { (it / 40) % n };
        let bytes = SIZES[it % SIZES.len()];
        if me == root {
            let msg: Vec<u8> = (0..bytes).map(|k| pattern(it, k)).collect();
            src.copy_from(0, &msg)?;
        }
        // A member that falls behind now and then.
        if me != root && (it * (me + 3)) % 29 == 0 {
            std::thread::sleep(Duration::from_millis(2));
        }
        ctx.broadcastmem(Team::WORLD, dst.addr(), src.addr(), bytes, root)?;
        // The source may be reused at once.
        src.copy_from(0, &[0xEE; 2048])?;
        let got = dst.to_vec()?;
        for (k, &b) in got[..bytes].iter().enumerate() {
            assert_eq!(b, pattern(it, k), "PE {me}, call {it} ({bytes} B from PE {root}): byte {k}");
        }
        checked += 1;
        dst.copy_from(0, &[0u8; 2048])?;
    }
    ctx.barrier_all()?;
    Ok(checked)
}

#[test]
fn pushed_broadcasts_arrive_call_by_call_with_rotating_roots_and_late_members() {
    for n in [2, 3, 5] {
        let iters = 420;
        let out = rshmem::run_pes_with(n, config(), |ctx| stream(&ctx, iters)).expect("the job ran");
        for (pe, r) in out.into_iter().enumerate() {
            assert_eq!(r.unwrap_or_else(|e| panic!("{n} PEs, PE {pe}: {e}")), iters, "{n} PEs, PE {pe}: calls checked");
        }
    }
}

#[test]
fn a_new_team_on_a_destroyed_teams_slot_does_not_read_the_old_inbox() {
    new_team_reads_its_own_broadcast(1);
}

/// The same for the 40th broadcast of each team, whose slot lies past the inbox's first
/// 32, in the inbox extension of the first team slots (`heap/layout.rs`), which must be
/// zeroed with the team too.
#[test]
fn a_new_team_on_a_destroyed_teams_slot_does_not_read_the_old_inbox_extension() {
    new_team_reads_its_own_broadcast(40);
}

/// Three teams in turn on one slot, each making `calls` broadcasts from PE 1 and destroyed;
/// the last broadcast of each has a late root, and every member must get that team's value.
fn new_team_reads_its_own_broadcast(calls: u64) {
    let out = rshmem::run_pes_with(3, config(), move |ctx| -> rshmem::Result<Vec<u64>> {
        let me = ctx.my_pe();
        let src = ctx.alloc::<u64>(4)?;
        let dst = ctx.alloc::<u64>(4)?;
        let mut seen = Vec::new();
        for round in 1..=3u64 {
            let team = ctx.team_split_strided(Team::WORLD, 0, 1, 3, TeamConfig::default())?;
            for _ in 1..calls {
                ctx.broadcast(team, &dst, &src, 4, 1)?;
            }
            src.copy_from(0, &[round * 100 + me as u64; 4])?;
            // The new team's first (or `calls`-th) broadcast has the same sequence, arguments and so code
            // as the old team's first: only its tag being zeroed with the team tells the
            // members that the root has not posted yet. The root comes late.
            if me == 1 {
                std::thread::sleep(Duration::from_millis(50));
            }
            ctx.broadcast(team, &dst, &src, 4, 1)?;
            seen.push(dst.read(0)?);
            ctx.team_destroy(team)?;
        }
        Ok(seen)
    })
    .expect("the job ran");
    for (pe, r) in out.into_iter().enumerate() {
        assert_eq!(r.unwrap_or_else(|e| panic!("PE {pe}: {e}")), vec![101, 201, 301], "PE {pe}: each round's value from PE 1");
    }
}

#[test]
fn a_new_team_on_a_destroyed_teams_slot_does_not_read_old_gather_parts() {
    let out = rshmem::run_pes_with(3, config(), |ctx| -> rshmem::Result<Vec<Vec<u64>>> {
        let me = ctx.my_pe();
        let src = ctx.alloc::<u64>(1)?;
        let dst = ctx.alloc::<u64>(3)?;
        let mut seen = Vec::new();
        for round in 1..=3u64 {
            let team = ctx.team_split_strided(Team::WORLD, 0, 1, 3, TeamConfig::default())?;
            src.copy_from(0, &[round * 100 + me as u64])?;
            // The new team's first fcollect has the same sequence and arguments as the old
            // team's: the parts' tags left by the old team must not pass for the new
            // ones. PE 2 comes late, so PE 0 and 1 look at its part before it posts.
            if me == 2 {
                std::thread::sleep(Duration::from_millis(50));
            }
            ctx.fcollect(team, &dst, &src, 1)?;
            seen.push(dst.to_vec()?);
            ctx.team_destroy(team)?;
        }
        Ok(seen)
    })
    .expect("the job ran");
    for (pe, r) in out.into_iter().enumerate() {
        let want: Vec<Vec<u64>> = (1..=3u64).map(|round| (0..3).map(|p| round * 100 + p).collect()).collect();
        assert_eq!(r.unwrap_or_else(|e| panic!("PE {pe}: {e}")), want, "PE {pe}: each round's blocks");
    }
}

/// Contribution element `k` of PE `pe` in call `it`.
fn value(it: usize, pe: usize, k: usize) -> i64 {
    ((it + 1) * 1000 + pe * 10 + k) as i64
}

fn gathers(ctx: &Ctx, iters: usize) -> rshmem::Result<usize> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    // Elements of i64 per PE that fit a part of an inbox slot on n PEs.
    let cap = ((1024 / n) & !63).saturating_sub(8) / 8;
    for (count, push) in [(1, true), (cap, true), (cap + 1, false)] {
        let p = ctx.coll_plan(Team::WORLD, count * 8)?;
        assert_eq!(p.reduce == ReduceAlgo::Push, push, "PE {me}: reduce of {count} i64 on {n} PEs: {:?}", p.reduce);
        assert_eq!(p.fcollect == GatherAlgo::Push, push, "PE {me}: fcollect of {count} i64 on {n} PEs: {:?}", p.fcollect);
    }
    let src = ctx.alloc::<i64>(2 * cap + 2)?;
    let dst = ctx.alloc::<i64>(n * (2 * cap + 2))?;
    let mut checked = 0;
    for it in 0..iters {
        let count = [1, cap, cap + 1, 2, cap.saturating_sub(1).max(1)][it % 5];
        let mine: Vec<i64> = (0..count).map(|k| value(it, me, k)).collect();
        src.copy_from(0, &mine)?;
        if (it * (me + 5)) % 23 == 0 {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        if it % 2 == 0 {
            ctx.fcollect(Team::WORLD, &dst, &src, count)?;
            src.fill(-1)?;
            let got = dst.to_vec()?;
            for pe in 0..n {
                for k in 0..count {
                    assert_eq!(got[pe * count + k], value(it, pe, k), "PE {me}, fcollect {it} of {count}: PE {pe}'s element {k}");
                }
            }
        } else {
            // Every third all-reduce in place.
            let in_place = it % 3 == 0;
            let out = if in_place { &src } else { &dst };
            ctx.reduce(Team::WORLD, out, &src, count, ReduceOp::Sum)?;
            let got = out.to_vec()?;
            if !in_place {
                src.fill(-1)?;
            }
            for (k, &g) in got[..count].iter().enumerate() {
                let want: i64 = (0..n).map(|pe| value(it, pe, k)).sum();
                assert_eq!(g, want, "PE {me}, reduce {it} of {count} (in place: {in_place}): element {k}");
            }
        }
        checked += 1;
    }
    ctx.barrier_all()?;
    Ok(checked)
}

#[test]
fn pushed_fcollects_and_reduces_match_the_model_call_by_call() {
    for n in [2, 4, 9] {
        let iters = 300;
        let out = rshmem::run_pes_with(n, config(), |ctx| gathers(&ctx, iters)).expect("the job ran");
        for (pe, r) in out.into_iter().enumerate() {
            assert_eq!(r.unwrap_or_else(|e| panic!("{n} PEs, PE {pe}: {e}")), iters, "{n} PEs, PE {pe}: calls checked");
        }
    }
}
