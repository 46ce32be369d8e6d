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
//! Exits non-zero, naming the PE, on the first mismatch.

use rshmem::{Cmp, Ctx, Error, Result, Sym};
use std::time::{Duration, Instant};

fn fail(me: usize, msg: String) -> ! {
    eprintln!("PE {me}: {msg}");
    std::process::exit(1)
}

fn counter(ctx: &Ctx, iters: usize) -> Result<()> {
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
        if others != 0 {
            fail(me, format!("counter: iteration {i}: {others} other PE(s) inside lock {l}"));
        }
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
        if total != (n * iters) as u64 {
            fail(me, format!("counter: plain counters total {total}, expected {} ({n} PEs x {iters}): updates lost", n * iters));
        }
        if let Some(p) = (0..n).find(|&p| by_pe.load(p).unwrap() != iters as u64) {
            fail(me, format!("counter: PE {p} entered {} times, expected {iters}", by_pe.load(p)?));
        }
        println!("counter: {n} PEs x {iters} locked get+put increments: total {total}, none lost");
    }
    println!("PE {me}: counter: {iters} critical sections ({tried} taken by test_lock)");
    ctx.barrier_all()
}

/// The queue tail (bytes 0..4 of PE 0's copy of the lock word, see `ops::lock`).
fn tail(ctx: &Ctx, lock: &Sym<u64>) -> Result<u32> {
    ctx.g_addr::<u32>(lock.addr(), 0)
}

fn wait_tail(ctx: &Ctx, lock: &Sym<u64>, want: u32) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while tail(ctx, lock)? != want {
        if Instant::now() > deadline {
            fail(ctx.my_pe(), format!("fifo: queue tail stuck at {}, waiting for {want}", tail(ctx, lock)?));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

fn fifo(ctx: &Ctx) -> Result<()> {
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
        let got = order.to_vec();
        if got != (0..n as u64).collect::<Vec<_>>() {
            fail(me, format!("fifo: the lock passed in the order {got:?}, expected 0..{n} in queue order"));
        }
        if tail(ctx, &lock)? != 0 {
            fail(me, "fifo: the lock is not free at the end".into());
        }
        println!("fifo: the lock passed to {n} PEs in exactly their queue order");
    }
    ctx.barrier_all()
}

fn try_lock(ctx: &Ctx) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let lock = ctx.alloc::<u64>(1)?;
    let turn = ctx.alloc::<u64>(1)?;
    let want = |what: &str, got: bool, expect: bool| {
        if got != expect {
            fail(me, format!("try: {what}: test_lock returned {got}, expected {expect}"));
        }
    };
    if me == 0 {
        want("free lock", ctx.test_lock(&lock, 0)?, true);
        want("lock this PE holds", ctx.test_lock(&lock, 0)?, false);
    }
    ctx.barrier_all()?;
    if me != 0 {
        want("lock PE 0 holds", ctx.test_lock(&lock, 0)?, false);
    }
    ctx.barrier_all()?;
    if me == 0 {
        ctx.clear_lock(&lock, 0)?;
    }
    ctx.barrier_all()?;
    // Each PE in turn takes the free lock with test_lock and hands the turn on.
    ctx.wait_until(&turn, 0, Cmp::Eq, me as u64)?;
    want("free lock in turn", ctx.test_lock(&lock, 0)?, true);
    ctx.clear_lock(&lock, 0)?;
    for q in 0..n {
        ctx.p(&turn, 0, me as u64 + 1, q)?;
    }
    ctx.wait_until(&turn, 0, Cmp::Eq, n as u64)?;
    ctx.barrier_all()?;
    println!("PE {me}: try: test_lock took free locks and refused held ones");
    ctx.barrier_all()
}

fn expect_err<T: std::fmt::Debug>(me: usize, what: &str, r: Result<T>, ok: impl Fn(&Error) -> bool, words: &[&str]) {
    match r {
        Ok(v) => fail(me, format!("errors: {what} succeeded with {v:?}")),
        Err(e) => {
            let msg = e.to_string();
            if !ok(&e) || !words.iter().all(|w| msg.contains(w)) {
                fail(me, format!("errors: {what}: wrong error {e:?} (`{msg}`), expected one naming {words:?}"));
            }
            println!("PE {me}: {what}: {msg}");
        }
    }
}

fn errors(ctx: &Ctx) -> Result<()> {
    let me = ctx.my_pe();
    let mine = format!("PE {me}");
    let locks = ctx.alloc::<u64>(2)?;
    expect_err(
        me,
        "clear a lock not held",
        ctx.clear_lock(&locks, 0),
        |e| matches!(e, Error::InvalidArgument { call: "clear_lock", arg: "lock", .. }),
        &["clear_lock", "does not hold", &mine],
    );
    if me == 0 {
        ctx.set_lock(&locks, 1)?;
        expect_err(
            me,
            "set a lock already held",
            ctx.set_lock(&locks, 1),
            |e| matches!(e, Error::InvalidArgument { call: "set_lock", arg: "lock", .. }),
            &["set_lock", "already holds", &mine],
        );
        ctx.clear_lock(&locks, 1)?;
    }
    expect_err(
        me,
        "misaligned lock",
        ctx.set_lock_addr(locks.addr() + 4),
        |e| matches!(e, Error::Misaligned { call: "set_lock", arg: "lock", align: 8, .. }),
        &["set_lock", "lock", "aligned to 8"],
    );
    let off_heap = 0u64;
    expect_err(
        me,
        "lock off the heap",
        ctx.test_lock_addr(&off_heap as *const u64 as usize),
        |e| matches!(e, Error::NotSymmetric { call: "test_lock", arg: "lock", .. }),
        &["test_lock", "lock", "not in the symmetric heap"],
    );
    expect_err(
        me,
        "lock index past the end",
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
    ctx.barrier_all()?;
    println!("PE {me}: errors: every misuse was refused and the locks still work");
    ctx.barrier_all()
}

fn main() -> Result<()> {
    let ctx = rshmem::init()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str).unwrap_or("counter") {
        "counter" => counter(&ctx, args.get(1).and_then(|a| a.parse().ok()).unwrap_or(2000))?,
        "fifo" => fifo(&ctx)?,
        "try" => try_lock(&ctx)?,
        "errors" => errors(&ctx)?,
        other => fail(ctx.my_pe(), format!("unknown mode `{other}`")),
    }
    ctx.finalize()
}
