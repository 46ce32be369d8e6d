//! Point-to-point synchronization test program (tests/p2p.rs): PE 0 writes, every other
//! PE waits. wait_until and test for every type of the `sync_types!` table and all six
//! comparisons; the array forms (all/any/some, with one value and _vector) with status
//! masks; a ping-pong where 7 PEs wait on PE 0's slow sequence of puts; timeouts.
//! Meant for 8 PEs on 2 cores: waiters must sleep, not starve the writer.
//! Checks (of the waiting PEs) are named `TYPE.CALL` (`int.test_any_vector`); then
//! `ping_pong.*`, `timeout.CALL`, `empty.CALL`.
//! Run: `rshmemrun -n 8 target/release/examples/pe_p2p`.

#[path = "../support/mod.rs"]
mod support;

use rshmem::{Cmp, Ctx, Error, Result, Sym, SyncWord, WaitMode};
use std::process::ExitCode;
use std::time::Duration;
use support::Check;

/// Every wait of the program gives up after this (the launcher's timeout is the backstop).
const WAIT: Duration = Duration::from_secs(10);
/// The writer's pause between puts, so that waiters go to sleep in between.
const PAUSE: Duration = Duration::from_micros(300);

fn val<T: SyncWord>(v: i64) -> T {
    T::from_bits(v as u64)
}

fn is_signed<T: SyncWord>() -> bool {
    val::<T>(-1) < val::<T>(0)
}

/// (comparison, initial value, comparison value, value written): the condition is false
/// before the write and true after it. The cases sit on the boundaries (Gt and Lt start
/// equal to the value, Ge and Le end equal to it) and cross zero for signed types or use
/// the top of the range for unsigned ones, so a comparison that is off by one or of the
/// wrong signedness fails (test before the write, or a wait that times out).
fn cases<T: SyncWord>() -> [(Cmp, T, T, T); 6] {
    let v = val::<T>;
    if is_signed::<T>() {
        [
            (Cmp::Eq, v(3), v(-2), v(-2)),
            (Cmp::Ne, v(-2), v(-2), v(5)),
            (Cmp::Gt, v(-1), v(-1), v(1)),
            (Cmp::Ge, v(-3), v(0), v(0)),
            (Cmp::Lt, v(0), v(0), v(-3)),
            (Cmp::Le, v(1), v(0), v(0)),
        ]
    } else {
        let max = v(-1);
        [
            (Cmp::Eq, v(3), max, max),
            (Cmp::Ne, v(7), v(7), max),
            (Cmp::Gt, v(5), v(5), max),
            (Cmp::Ge, v(0), v(-2), v(-2)),
            (Cmp::Lt, max, max, v(0)),
            (Cmp::Le, max, v(5), v(5)),
        ]
    }
}

/// PE 0 calls `put(w)` for every waiter `w`, pausing after each.
fn to_waiters(ctx: &Ctx, mut put: impl FnMut(usize) -> Result<()>) -> Result<()> {
    for w in 1..ctx.n_pes() {
        put(w)?;
        std::thread::sleep(PAUSE);
    }
    Ok(())
}

/// wait_until and test of one variable, each comparison.
fn single<T: SyncWord>(ctx: &Ctx, ck: &mut Check, name: &str) -> Result<()> {
    let me = ctx.my_pe();
    let cases = cases::<T>();
    let ivars = ctx.alloc::<T>(cases.len())?;
    for (k, &(_, x0, _, _)) in cases.iter().enumerate() {
        ivars.store(k, x0)?;
    }
    if me != 0 {
        for (k, &(cmp, _, v, _)) in cases.iter().enumerate() {
            ck.eq(&format!("{name}.test"), ctx.test(&ivars, k, cmp, v)?, false, format_args!("test {cmp:?} {v:?} before the write"));
            ck.eq(
                &format!("{name}.test_addr"),
                ctx.test_addr(ivars.addr_of(k), cmp, v)?,
                false,
                format_args!("test_addr {cmp:?} before the write"),
            );
        }
    }
    ctx.barrier_all()?;
    if me == 0 {
        for (k, &(_, _, _, x1)) in cases.iter().enumerate() {
            to_waiters(ctx, |w| ctx.p(&ivars, k, x1, w))?;
        }
    } else {
        for (k, &(cmp, _, v, x1)) in cases.iter().enumerate() {
            match ctx.wait_until_timeout(&ivars, k, cmp, v, WAIT) {
                Ok(()) => {
                    ck.eq(&format!("{name}.wait_until"), ivars.load(k)?, x1, format_args!("value after wait_until {cmp:?} {v:?}"));
                    ck.eq(&format!("{name}.test"), ctx.test(&ivars, k, cmp, v)?, true, format_args!("test {cmp:?} {v:?} after the write"));
                }
                Err(e) => {
                    ck.ok(&format!("{name}.wait_until"), false, format_args!("wait_until {cmp:?} {v:?}: {e}"));
                }
            }
        }
    }
    ctx.barrier_all()?;
    ctx.free(ivars)
}

/// The array-wait engine under a timeout: blocking phases go through it, so that a broken
/// mask or comparison fails in seconds with a message instead of hanging; the public
/// forms are then called once their condition holds (they return at once).
fn wait_many<T: SyncWord>(
    ctx: &Ctx,
    call: &'static str,
    ivars: &rshmem::Sym<T>,
    status: &[i32],
    cmp: Cmp,
    values: &[T],
    mode: WaitMode,
) -> Result<Vec<usize>> {
    ctx.wait_many_addr(call, ivars.addr(), ivars.len(), Some(status), cmp, values, mode, Some(WAIT), true)
}

fn sorted(mut v: Vec<usize>) -> Vec<usize> {
    v.sort_unstable();
    v
}

/// Elements 1 and 6 of the array tests are excluded; the writer sets 6 (which must be
/// ignored), never 1.
const STATUS: [i32; 8] = [0, 1, 0, 0, 0, 0, 1, 0];

/// wait_until_{all,any,some}[_vector] and test_{all,any,some}[_vector] with a status mask.
fn arrays<T: SyncWord>(ctx: &Ctx, ck: &mut Check, name: &str) -> Result<()> {
    let ivars = ctx.alloc::<T>(STATUS.len())?;
    arrays_one_value(ctx, ck, name, &ivars)?;
    arrays_vector(ctx, ck, name, &ivars)?;
    ctx.free(ivars)
}

/// The array forms with one comparison value.
fn arrays_one_value<T: SyncWord>(ctx: &Ctx, ck: &mut Check, name: &str, ivars: &Sym<T>) -> Result<()> {
    let (me, status) = (ctx.my_pe(), STATUS);
    let none_active = [1i32; STATUS.len()];
    let (v, one) = (val::<T>, val::<T>(1));

    if me != 0 {
        ck.eq(
            &format!("{name}.test_any"),
            ctx.test_any(ivars, Some(&status), Cmp::Eq, one)?,
            None,
            format_args!("test_any before any write"),
        );
        ck.eq(
            &format!("{name}.test_some"),
            ctx.test_some(ivars, Some(&status), Cmp::Eq, one)?,
            vec![],
            format_args!("test_some before any write"),
        );
        ck.eq(
            &format!("{name}.test_all"),
            ctx.test_all(ivars, Some(&status), Cmp::Eq, one)?,
            false,
            format_args!("test_all before any write"),
        );
        ck.eq(
            &format!("{name}.test_all"),
            ctx.test_all(ivars, Some(&none_active), Cmp::Eq, one)?,
            true,
            format_args!("test_all with every element excluded"),
        );
        ck.eq(
            &format!("{name}.test_any"),
            ctx.test_any(ivars, Some(&none_active), Cmp::Eq, one)?,
            None,
            format_args!("test_any with every element excluded"),
        );
        for mode in [WaitMode::All, WaitMode::Any, WaitMode::Some] {
            let r = wait_many(ctx, "wait_until (all excluded)", ivars, &none_active, Cmp::Eq, &[one], mode);
            ck.eq(&format!("{name}.wait_many"), r?, vec![], format_args!("{mode:?} wait with every element excluded returns at once"));
        }
        ck.eq(
            &format!("{name}.wait_until_any"),
            ctx.wait_until_any(ivars, Some(&none_active), Cmp::Eq, one)?,
            None,
            format_args!("wait_until_any, all excluded"),
        );
        ck.eq(
            &format!("{name}.wait_until_some"),
            ctx.wait_until_some(ivars, Some(&none_active), Cmp::Eq, one)?,
            vec![],
            format_args!("wait_until_some, all excluded"),
        );
        ctx.wait_until_all(ivars, Some(&none_active), Cmp::Eq, one)?;
    }
    ctx.barrier_all()?;
    if me == 0 {
        to_waiters(ctx, |w| ctx.p(ivars, 6, one, w))?;
        to_waiters(ctx, |w| ctx.p(ivars, 3, one, w))?;
    } else {
        let any = wait_many(ctx, "wait_until_any", ivars, &status, Cmp::Eq, &[one], WaitMode::Any)?;
        ck.eq(&format!("{name}.wait_until_any"), any, vec![3], format_args!("wait_until_any skips excluded element 6"));
        ck.eq(
            &format!("{name}.wait_until_any"),
            ctx.wait_until_any(ivars, Some(&status), Cmp::Eq, one)?,
            Some(3),
            format_args!("wait_until_any"),
        );
        ck.eq(
            &format!("{name}.wait_until_any"),
            ctx.wait_until_any(ivars, None, Cmp::Eq, one)?.is_some_and(|i| i == 3 || i == 6),
            true,
            format_args!("wait_until_any, no mask"),
        );
    }
    ctx.barrier_all()?;
    if me == 0 {
        to_waiters(ctx, |w| ctx.p(ivars, 0, one, w))?;
        to_waiters(ctx, |w| ctx.p(ivars, 5, one, w))?;
    } else {
        let some = sorted(wait_many(ctx, "wait_until_some", ivars, &status, Cmp::Eq, &[one], WaitMode::Some)?);
        ck.ok(
            &format!("{name}.wait_until_some"),
            some.contains(&3) && some.iter().all(|i| [0, 3, 5].contains(i)),
            format_args!("wait_until_some gave {some:?}"),
        );
    }
    ctx.barrier_all()?;
    if me != 0 {
        ck.eq(
            &format!("{name}.test_some"),
            sorted(ctx.test_some(ivars, Some(&status), Cmp::Eq, one)?),
            vec![0, 3, 5],
            format_args!("test_some"),
        );
        ck.eq(
            &format!("{name}.test_some"),
            sorted(ctx.test_some(ivars, None, Cmp::Eq, one)?),
            vec![0, 3, 5, 6],
            format_args!("test_some, no mask"),
        );
        ck.eq(
            &format!("{name}.wait_until_some"),
            sorted(ctx.wait_until_some(ivars, Some(&status), Cmp::Eq, one)?),
            vec![0, 3, 5],
            format_args!("wait_until_some when set"),
        );
        ck.eq(
            &format!("{name}.test_all"),
            ctx.test_all(ivars, Some(&status), Cmp::Eq, one)?,
            false,
            format_args!("test_all with 2, 4, 7 unset"),
        );
        ck.eq(
            &format!("{name}.test_any"),
            ctx.test_any(ivars, Some(&status), Cmp::Ne, one)?.is_some_and(|i| [2, 4, 7].contains(&i)),
            true,
            format_args!("test_any Ne"),
        );
    }
    ctx.barrier_all()?;
    if me == 0 {
        for k in [2, 4, 7] {
            to_waiters(ctx, |w| ctx.p(ivars, k, one, w))?;
        }
    } else {
        // Completes only if excluded element 1 (never written) is ignored.
        wait_many(ctx, "wait_until_all", ivars, &status, Cmp::Eq, &[one], WaitMode::All)?;
        ctx.wait_until_all(ivars, Some(&status), Cmp::Eq, one)?;
        ck.eq(
            &format!("{name}.test_all"),
            ctx.test_all(ivars, Some(&status), Cmp::Eq, one)?,
            true,
            format_args!("test_all after every active element is set"),
        );
        ck.eq(
            &format!("{name}.test_all"),
            ctx.test_all(ivars, None, Cmp::Eq, one)?,
            false,
            format_args!("test_all without the mask (element 1 unset)"),
        );
        ck.eq(&format!("{name}.excluded_untouched"), ivars.load(1)?, v(0), format_args!("excluded element 1 untouched"));
    }
    ctx.barrier_all()?;
    Ok(())
}

/// The array forms with one comparison value per element (Ge values[i] = i + 1).
fn arrays_vector<T: SyncWord>(ctx: &Ctx, ck: &mut Check, name: &str, ivars: &Sym<T>) -> Result<()> {
    let (me, status, v) = (ctx.my_pe(), STATUS, val::<T>);
    ivars.fill(v(0))?;
    let values: Vec<T> = (0..STATUS.len() as i64).map(|i| v(i + 1)).collect();
    if me != 0 {
        ck.eq(
            &format!("{name}.test_any_vector"),
            ctx.test_any_vector(ivars, Some(&status), Cmp::Ge, &values)?,
            None,
            format_args!("test_any_vector before writes"),
        );
        ck.eq(
            &format!("{name}.test_all_vector"),
            ctx.test_all_vector(ivars, Some(&status), Cmp::Ge, &values)?,
            false,
            format_args!("test_all_vector before writes"),
        );
    }
    ctx.barrier_all()?;
    if me == 0 {
        // Element 4 gets 4 (< 5: not satisfied, though it would be with values[0]);
        // excluded element 6 gets 100; then element 2 gets 3 (satisfied).
        to_waiters(ctx, |w| ctx.p(ivars, 4, v(4), w))?;
        to_waiters(ctx, |w| ctx.p(ivars, 6, v(100), w))?;
        to_waiters(ctx, |w| ctx.p(ivars, 2, v(3), w))?;
    } else {
        let any = wait_many(ctx, "wait_until_any_vector", ivars, &status, Cmp::Ge, &values, WaitMode::Any)?;
        ck.eq(&format!("{name}.wait_until_any_vector"), any, vec![2], format_args!("wait_until_any_vector (engine)"));
        ck.eq(
            &format!("{name}.wait_until_any_vector"),
            ctx.wait_until_any_vector(ivars, Some(&status), Cmp::Ge, &values)?,
            Some(2),
            format_args!("wait_until_any_vector"),
        );
    }
    ctx.barrier_all()?;
    if me != 0 {
        ck.eq(
            &format!("{name}.test_some_vector"),
            ctx.test_some_vector(ivars, Some(&status), Cmp::Ge, &values)?,
            vec![2],
            format_args!("test_some_vector"),
        );
        ck.eq(
            &format!("{name}.test_any_vector"),
            ctx.test_any_vector(ivars, Some(&status), Cmp::Ge, &values)?,
            Some(2),
            format_args!("test_any_vector"),
        );
        ck.eq(
            &format!("{name}.wait_until_some_vector"),
            ctx.wait_until_some_vector(ivars, Some(&status), Cmp::Ge, &values)?,
            vec![2],
            format_args!("wait_until_some_vector"),
        );
        ck.eq(
            &format!("{name}.test_some_vector"),
            sorted(ctx.test_some_vector(ivars, None, Cmp::Ge, &values)?),
            vec![2, 6],
            format_args!("test_some_vector, no mask"),
        );
    }
    ctx.barrier_all()?;
    if me == 0 {
        for k in [0usize, 3, 4, 5, 7] {
            to_waiters(ctx, |w| ctx.p(ivars, k, v(k as i64 + 1), w))?;
        }
    } else {
        wait_many(ctx, "wait_until_all_vector", ivars, &status, Cmp::Ge, &values, WaitMode::All)?;
        ctx.wait_until_all_vector(ivars, Some(&status), Cmp::Ge, &values)?;
        ck.eq(
            &format!("{name}.test_all_vector"),
            ctx.test_all_vector(ivars, Some(&status), Cmp::Ge, &values)?,
            true,
            format_args!("test_all_vector after the writes"),
        );
        ck.eq(
            &format!("{name}.test_all_vector"),
            ctx.test_all_vector(ivars, None, Cmp::Ge, &values)?,
            false,
            format_args!("test_all_vector without the mask"),
        );
    }
    ctx.barrier_all()?;
    Ok(())
}

/// 7 PEs wait on PE 0's slow sequence of puts and acknowledge each value; PE 0 waits for
/// all acknowledgements (wait_until_all with its own slot masked out) before the next.
fn ping_pong(ctx: &Ctx, ck: &mut Check, rounds: u64) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let seq = ctx.alloc::<u64>(1)?;
    let acks = ctx.alloc::<u64>(n)?;
    let mut status = vec![0i32; n];
    status[0] = 1;
    for r in 1..=rounds {
        if me == 0 {
            to_waiters(ctx, |w| ctx.p(&seq, 0, r, w))?;
            if r % 16 == 0 {
                std::thread::sleep(Duration::from_millis(3)); // long enough for every waiter to sleep
            }
            ctx.wait_many_addr("wait_until_all", acks.addr(), n, Some(&status), Cmp::Ge, &[r], WaitMode::All, Some(WAIT), true)?;
        } else {
            let seen = ctx.wait_until_timeout(&seq, 0, Cmp::Eq, r, WAIT);
            ck.ok_with("ping_pong.seen", seen.is_ok(), || format!("round {r}: {seen:?}"));
            seen?;
            ctx.p(&acks, me, r, 0)?;
        }
    }
    if me == 0 {
        let what = format!("every one of the {} waiters acknowledged round {rounds}", n - 1);
        ck.eq("ping_pong.acks", acks.to_vec()?[1..].to_vec(), vec![rounds; n - 1], what);
    }
    ctx.barrier_all()?;
    ctx.free(seq)?;
    ctx.free(acks)
}

/// Waits that cannot complete give up with Error::Timeout naming the call and the PE;
/// empty arrays return at once.
fn timeouts_and_empty(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let me = ctx.my_pe();
    let x = ctx.alloc::<u32>(4)?;
    let want = format!("PE {me}");
    let short = Duration::from_millis(25);
    let r = ctx.wait_until_timeout(&x, 2, Cmp::Eq, 7u32, short);
    ck.err(
        "timeout.wait_until",
        r,
        |e| matches!(e, Error::Timeout { call: "wait_until", pe, .. } if *pe == me),
        &["wait_until:", "timed out", &want],
    );
    for (call, mode) in [("wait_until_all", WaitMode::All), ("wait_until_any", WaitMode::Any), ("wait_until_some", WaitMode::Some)] {
        let r = ctx.wait_many_addr(call, x.addr(), 4, None, Cmp::Gt, &[0u32], mode, Some(short), true);
        ck.err(&format!("timeout.{call}"), r, |e| matches!(e, Error::Timeout { .. }), &[call, "timed out", &want]);
    }
    let empty = ctx.alloc::<u64>(0)?;
    ctx.wait_until_all(&empty, None, Cmp::Eq, 1)?;
    ck.eq("empty.wait_until_any", ctx.wait_until_any(&empty, None, Cmp::Eq, 1)?, None, "wait_until_any on an empty array");
    ck.eq("empty.wait_until_some", ctx.wait_until_some(&empty, None, Cmp::Eq, 1)?, vec![], "wait_until_some on an empty array");
    ck.eq("empty.test_all", ctx.test_all(&empty, None, Cmp::Eq, 1)?, true, "test_all on an empty array");
    ck.eq("empty.test_any", ctx.test_any(&empty, None, Cmp::Eq, 1)?, None, "test_any on an empty array");
    ctx.barrier_all()?;
    ctx.free(empty)?;
    ctx.free(x)
}

fn run(ctx: &Ctx, ck: &mut Check, rounds: u64) -> Result<()> {
    macro_rules! each_sync_type {
        ($(($name:ident, $t:ty)),* $(,)?) => {
            $(
                single::<$t>(ctx, ck, stringify!($name))?;
                arrays::<$t>(ctx, ck, stringify!($name))?;
            )*
        };
    }
    rshmem::sync_types!(each_sync_type);
    ping_pong(ctx, ck, rounds)?;
    timeouts_and_empty(ctx, ck)
}

fn main() -> ExitCode {
    support::run_program("pe_p2p", 2, |ctx, ck| {
        let rounds = std::env::args().nth(1).map_or(300, |s| s.parse().expect("rounds"));
        run(ctx, ck, rounds)
    })
}
