//! Multi-PE checks of the distributed locks (see tests/lock.rs). Modes:
//!
//! * `counter [iters]`: every PE, `iters` times, takes one of two locks and increments
//!   that lock's plain counter on PE 0 with a get then a put (no atomics), checking that
//!   nobody else is inside; no update may be lost. Half the acquisitions try test_lock
//!   first and fall back to set_lock.
//! * `fifo`: with PE 0 holding the lock, PEs 1, 2, ... queue one after another; the lock
//!   must pass to them in exactly that order (no PE overtaken, so none starved).
//! * `try`: test_lock acquires a free lock and refuses a held one, never waiting.
//! * `errors`: relocking, clearing a lock not held, bad lock words: the right error.
//!
//! Checks are named `MODE.WHAT`.

#[path = "../support/mod.rs"]
mod support;

use rshmem::{Cmp, Ctx, Error, Result, Sym};
use std::process::ExitCode;
use std::time::{Duration, Instant};
use support::{unknown_mode, Check};

fn counter(ctx: &Ctx, ck: &mut Check, iters: usize) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let locks = ctx.alloc::<u64>(2)?;
    let counters = ctx.alloc::<u64>(2)?;
    let inside = ctx.alloc::<u64>(2)?;
    let by_pe = ctx.alloc::<u64>(n)?;
    let mut tried = 0;
    for i in 0..iters {
        let l = (i + me) % 2;
        if i % 4 == 1 && ctx.test_lock(&locks, l)? {
            tried += 1;
        } else {
            ctx.set_lock(&locks, l)?;
        }
        let others = ctx.atomic_fetch_inc(&inside, l, n - 1)?;
        ck.ok_with("counter.alone_inside", others == 0, || format!("iteration {i}: {others} other PE(s) inside lock {l}"));
        let mut v = [0u64];
        ctx.get(&mut v, &counters, l, 0)?;
        if i % 8 == 0 {
            // Give up the CPU inside the critical section now and then, so that the other
            // PEs run (and queue) while the lock is held even on a machine with few cores.
            std::thread::yield_now();
        }
        ctx.put(&counters, l, &[v[0] + 1], 0)?;
        ctx.atomic_inc(&by_pe, me, 0)?;
        ctx.atomic_add(&inside, l, u64::MAX, n - 1)?;
        ctx.clear_lock(&locks, l)?;
    }
    ctx.barrier_all()?;
    if me == 0 {
        let total = counters.load(0)? + counters.load(1)?;
        let want = (n * iters) as u64;
        let detail = if total == want {
            format!("{n} PEs x {iters} locked get+put increments: total {total}, none lost")
        } else {
            format!("plain counters total {total}, expected {want} ({n} PEs x {iters}): updates lost")
        };
        ck.ok("counter.total", total == want, detail);
        let entries: Vec<u64> = (0..n).map(|p| by_pe.load(p)).collect::<Result<_>>()?;
        ck.eq("counter.per_pe", entries, vec![iters as u64; n], "critical sections entered by each PE");
    }
    println!("PE {me}: counter: {iters} critical sections ({tried} taken by test_lock)");
    ctx.barrier_all()
}

/// The queue tail (bytes 0..4 of PE 0's copy of the lock word, see `ops::lock`).
fn tail(ctx: &Ctx, lock: &Sym<u64>) -> Result<u32> {
    ctx.g_addr::<u32>(lock.addr(), 0)
}

/// Waits until the queue tail is `want`; gives up after 60 s with an error.
fn wait_tail(ctx: &Ctx, lock: &Sym<u64>, want: u32) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while tail(ctx, lock)? != want {
        if Instant::now() > deadline {
            let detail = format!("queue tail stuck at {}, waiting for {want}", tail(ctx, lock)?);
            return Err(Error::InvalidArgument { call: "pe_lock fifo", arg: "lock", detail, pe: ctx.my_pe() });
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

fn fifo(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let lock = ctx.alloc::<u64>(1)?;
    let order = ctx.alloc::<u64>(n)?;
    let slot = ctx.alloc::<u64>(1)?;
    let log = |pe: usize| -> Result<()> {
        let at = ctx.atomic_fetch_inc(&slot, 0, 0)? as usize;
        ctx.p(&order, at, pe as u64, 0)
    };
    if me == 0 {
        ctx.set_lock(&lock, 0)?;
        log(0)?;
    }
    ctx.barrier_all()?;
    if me > 0 {
        // Queue right behind PE me-1 (tail = 1 + the last PE queued).
        wait_tail(ctx, &lock, me as u32)?;
        ctx.set_lock(&lock, 0)?;
        log(me)?;
        ctx.clear_lock(&lock, 0)?;
    } else {
        wait_tail(ctx, &lock, n as u32)?;
        ctx.clear_lock(&lock, 0)?;
    }
    ctx.barrier_all()?;
    if me == 0 {
        let got = order.to_vec()?;
        let detail = format!("the lock passed to {n} PEs in the order {got:?}; the queue order is 0..{n}");
        ck.ok("fifo.order", got == (0..n as u64).collect::<Vec<_>>(), detail);
        ck.eq("fifo.free_at_end", tail(ctx, &lock)?, 0, "the queue tail at the end");
    }
    ctx.barrier_all()
}

fn try_lock(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let lock = ctx.alloc::<u64>(1)?;
    let turn = ctx.alloc::<u64>(1)?;
    let mut want = |name: &str, got: bool, expect: bool| ck.eq(name, got, expect, "test_lock's result");
    if me == 0 {
        want("try.free_lock", ctx.test_lock(&lock, 0)?, true);
        want("try.held_by_self", ctx.test_lock(&lock, 0)?, false);
    }
    ctx.barrier_all()?;
    if me != 0 {
        want("try.held_by_pe0", ctx.test_lock(&lock, 0)?, false);
    }
    ctx.barrier_all()?;
    if me == 0 {
        ctx.clear_lock(&lock, 0)?;
    }
    ctx.barrier_all()?;
    // Each PE in turn takes the free lock with test_lock and hands the turn on. The turn
    // word counts the PEs done, by adds: stores of the turn number could arrive out of
    // order at a third PE (PE 1's "2" after PE 2's "3") and leave it waiting forever.
    ctx.wait_until(&turn, 0, Cmp::Ge, me as u64)?;
    want("try.free_in_turn", ctx.test_lock(&lock, 0)?, true);
    ctx.clear_lock(&lock, 0)?;
    for q in 0..n {
        ctx.atomic_add(&turn, 0, 1, q)?;
    }
    ctx.wait_until(&turn, 0, Cmp::Ge, n as u64)?;
    ctx.barrier_all()
}

fn errors(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let me = ctx.my_pe();
    let mine = format!("PE {me}");
    let locks = ctx.alloc::<u64>(2)?;
    ck.err(
        "errors.clear_a_lock_not_held",
        ctx.clear_lock(&locks, 0),
        |e| matches!(e, Error::InvalidArgument { call: "clear_lock", arg: "lock", .. }),
        &["clear_lock", "does not hold", &mine],
    );
    if me == 0 {
        ctx.set_lock(&locks, 1)?;
        ck.err(
            "errors.set_a_lock_already_held",
            ctx.set_lock(&locks, 1),
            |e| matches!(e, Error::InvalidArgument { call: "set_lock", arg: "lock", .. }),
            &["set_lock", "already holds", &mine],
        );
        ctx.clear_lock(&locks, 1)?;
    }
    ck.err(
        "errors.misaligned_lock",
        ctx.set_lock_addr(locks.addr() + 4),
        |e| matches!(e, Error::Misaligned { call: "set_lock", arg: "lock", align: 8, .. }),
        &["set_lock", "lock", "aligned to 8"],
    );
    let off_heap = 0u64;
    ck.err(
        "errors.lock_off_the_heap",
        ctx.test_lock_addr(&off_heap as *const u64 as usize),
        |e| matches!(e, Error::NotSymmetric { call: "test_lock", arg: "lock", .. }),
        &["test_lock", "lock", "not in the symmetric heap"],
    );
    ck.err(
        "errors.lock_index_past_the_end",
        ctx.set_lock(&locks, 2),
        |e| matches!(e, Error::OutOfBounds { call: "set_lock", arg: "lock", .. }),
        &["set_lock", "lock", &mine],
    );
    ctx.barrier_all()?;
    // After the refused calls both locks still work for everyone.
    for l in 0..2 {
        ctx.set_lock(&locks, l)?;
        ctx.clear_lock(&locks, l)?;
    }
    ctx.barrier_all()
}

fn main() -> ExitCode {
    support::run_program("pe_lock", 1, |ctx, ck| {
        let args: Vec<String> = std::env::args().skip(1).collect();
        match args.first().map(String::as_str).unwrap_or("counter") {
            "counter" => counter(ctx, ck, args.get(1).and_then(|a| a.parse().ok()).unwrap_or(2000)),
            "fifo" => fifo(ctx, ck),
            "try" => try_lock(ctx, ck),
            "errors" => errors(ctx, ck),
            other => Err(unknown_mode(ctx, "pe_lock", other)),
        }
    })
}
