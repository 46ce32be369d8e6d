//! Collectives that go wrong (see tests/coll_fail.rs).
//!
//! * `mismatch`: with `RSHMEM_COLL_CHECK=1`, PEs pass differing sizes, roots, operators,
//!   types, buffers or collectives, or one PE passes an invalid root; every PE must get
//!   an error naming the PE that differs, and the team must stay usable. Check
//!   `mismatch.K` carries case K's error message.
//! * `cheap`: with the full check off (`RSHMEM_COLL_CHECK=0`, or unset in a release
//!   build), the always-on check (the argument code in the synchronization words) must
//!   still turn differing arguments into errors naming the call and both PEs, instead of
//!   wrong results or a hang: a reduce size, a broadcast root (two PEs that each name the
//!   other, and one PE that names another root than the rest), an fcollect size; the
//!   world must stay usable. Check `cheap.K` carries case K's outcome on this PE.
//! * `errors`: arguments every PE gets wrong alike (partial overlap, a bitwise operator
//!   on floats, a root out of range, memory outside the heap, a zero stride) are errors,
//!   not hangs or crashes. Check `error.K` carries case K's error message.
//! * `die`: PE `n - 1` sleeps, then exits with status 7, while the others wait inside an
//!   all-reduce; the launcher must end the job.
//! * `kill`: a thread of PE `n - 1` kills its process with SIGKILL while the main thread is
//!   inside a stream of large ring all-reduces.

#[path = "../support/mod.rs"]
mod support;

use rshmem::{Ctx, ReduceDtype, ReduceOp, Result, Team};
use std::process::ExitCode;
use std::time::Duration;
use support::{unknown_mode, Check};

/// Check `name`: `r` is an error whose message mentions every one of `needles`.
fn expect_err(ck: &mut Check, name: &str, r: Result<()>, needles: &[&str]) {
    ck.err(name, r, |_| true, needles);
}

fn mismatch(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    assert!(n >= 3, "mismatch needs 3 PEs");
    let a = ctx.alloc::<i64>(64)?;
    let b = ctx.alloc::<i64>(64)?;
    let c = ctx.alloc::<i64>(64)?;
    a.fill(me as i64 + 1)?;
    // 1: nreduce differs on PE 1.
    let count = if me == 1 { 8 } else { 7 };
    expect_err(
        ck,
        "mismatch.1",
        ctx.reduce(Team::WORLD, &b, &a, count, ReduceOp::Sum),
        &["argument `nreduce` differs", "PE 1 passed 8", "PE 0 passed 7"],
    );
    // 2: root differs on PE 2.
    let root = if me == 2 { 1 } else { 0 };
    expect_err(
        ck,
        "mismatch.2",
        ctx.broadcast(Team::WORLD, &b, &a, 4, root),
        &["argument `PE_root` differs", "PE 2 passed 1", "PE 0 passed 0"],
    );
    // 3: operator differs on the last PE.
    let op = if me == n - 1 { ReduceOp::Max } else { ReduceOp::Sum };
    let last = format!("PE {} passed max", n - 1);
    expect_err(ck, "mismatch.3", ctx.reduce(Team::WORLD, &b, &a, 4, op), &["argument `op` differs", &last, "PE 0 passed sum"]);
    // 4: element type differs on PE 1.
    let ty = if me == 1 { ReduceDtype::I32 } else { ReduceDtype::I64 };
    expect_err(
        ck,
        "mismatch.4",
        ctx.reduce_addr(Team::WORLD, b.addr(), a.addr(), 4, ty, ReduceOp::Sum),
        &["argument `type` differs", "PE 1 passed i32", "PE 0 passed i64"],
    );
    // 5: a different collective on PE 2.
    let r = if me == 2 { ctx.fcollect(Team::WORLD, &b, &a, 2) } else { ctx.broadcast(Team::WORLD, &b, &a, 2, 0) };
    expect_err(ck, "mismatch.5", r, &["(collective called)", "PE 2 passed fcollect", "PE 0 passed broadcast"]);
    // 6: a different dest buffer on PE 1.
    let dest = if me == 1 { &c } else { &b };
    expect_err(
        ck,
        "mismatch.6",
        ctx.reduce(Team::WORLD, dest, &a, 4, ReduceOp::Sum),
        &["argument `dest` differs", "PE 1 passed heap offset"],
    );
    // 7: only PE 2 passes an invalid root: it gets its own error, the others one naming it.
    let root = if me == 2 { 99 } else { 0 };
    let r = ctx.broadcast(Team::WORLD, &b, &a, 4, root);
    if me == 2 {
        expect_err(ck, "mismatch.7", r, &["PE_root", "PE 99 is out of range"]);
    } else {
        expect_err(ck, "mismatch.7", r, &["PE 2 passed arguments it rejected"]);
    }
    // 8: sizes that differ on a split team.
    let (row, _col) = ctx.team_split_2d(Team::WORLD, 2, Default::default(), Default::default())?;
    let rank = ctx.team_my_pe(row)?;
    let nbytes = if rank == 1 { 16 } else { 8 };
    if ctx.team_n_pes(row)? > 1 {
        let second = format!("PE {} passed 16", ctx.team_translate_pe(row, 1, Team::WORLD)?.unwrap_or(usize::MAX));
        expect_err(ck, "mismatch.8", ctx.fcollectmem(row, c.addr(), a.addr(), nbytes), &["argument `nbytes` differs", &second]);
    }
    // After all that, the teams still work.
    a.fill(me as i64 + 1)?;
    ctx.reduce(Team::WORLD, &b, &a, 4, ReduceOp::Sum)?;
    let want = (n * (n + 1) / 2) as i64;
    ck.eq("mismatch.teams_still_work", b.to_vec()?[..4].to_vec(), vec![want; 4], "a reduce after the mismatches");
    ctx.fcollectmem(row, c.addr(), a.addr(), 8)
}

fn cheap(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    assert!(n >= 4, "cheap needs 4 PEs");
    let w = Team::WORLD;
    let a = ctx.alloc::<i64>(64)?;
    let b = ctx.alloc::<i64>(64)?;
    let c = ctx.alloc::<i64>(64)?;
    a.fill(me as i64 + 1)?;
    // 1: nreduce differs on PE 1. Every PE waits on every other (one-shot), so every PE
    // finds it, and reads the differing PE's record: the argument is named.
    let count = if me == 1 { 8 } else { 7 };
    expect_err(
        ck,
        "cheap.1",
        ctx.reduce(w, &b, &a, count, ReduceOp::Sum),
        &["reduce: argument `nreduce` differs between PEs", "PE 1 passed 8", "passed 7"],
    );
    // 2: PE 0 names PE 1 the root, everyone else PE 0: PEs 0 and 1 each wait for the
    // other, the rest for PE 0; every PE fails and names PE 0's root.
    let root = if me == 0 { 1 } else { 0 };
    expect_err(ck, "cheap.2", ctx.broadcast(w, &b, &a, 4, root), &["broadcast: argument `PE_root` differs between PEs", "PE 0 passed 1"]);
    // 3: only PE 2 names root 1 (the others root 0). PE 2 waits for a PE that has other
    // arguments (PE 1 in the direct and tree algorithms), which may finish without
    // reading from a PE that differs from it: PE 2 fails naming that PE and itself. Every
    // other PE either gets the root's data or (when it waits on PE 2, as the root does in
    // the binomial tree) an error naming PE 2's root.
    let root = if me == 2 { 1 } else { 0 };
    let r = ctx.broadcast(w, &b, &a, 4, root);
    if me == 2 {
        expect_err(ck, "cheap.3", r, &["broadcast: argument `", "differs between PEs: PE ", "PE 2 passed"]);
    } else {
        let outcome = match &r {
            Ok(()) => {
                let got = b.to_vec()?[..4].to_vec();
                (got == vec![1i64; 4], format!("got {got:?}"))
            }
            Err(e) => {
                let msg = e.to_string();
                (msg.starts_with("broadcast: argument `PE_root` differs between PEs: PE 2 passed 1"), msg)
            }
        };
        ck.ok("cheap.3", outcome.0, outcome.1);
    }
    // 4: fcollect size differs on PE 2 (direct on shared memory, ring over UCX).
    let nbytes = if me == 2 { 16 } else { 8 };
    expect_err(
        ck,
        "cheap.4",
        ctx.fcollectmem(w, c.addr(), a.addr(), nbytes),
        &["fcollectmem: argument `nbytes` differs between PEs", "PE 2 passed 16", "passed 8"],
    );
    // 5: alltoall's nelems differs on PE 3. Every PE waits for every other to enter
    // (over UCX through the inboxes), so every PE finds it and names the argument.
    let nelems = if me == 3 { 2 } else { 1 };
    expect_err(
        ck,
        "cheap.5",
        ctx.alltoall(w, &c, &b, nelems),
        &["alltoall: argument `element bytes (alltoall: block bytes)` differs between PEs", "PE 3 passed 16", "passed 8"],
    );
    // After all that, the world still works, and agrees on every argument again.
    ctx.alltoall(w, &c, &b, 2)?;
    a.fill(me as i64 + 1)?;
    ctx.reduce(w, &b, &a, 4, ReduceOp::Sum)?;
    let want = (n * (n + 1) / 2) as i64;
    ck.eq("cheap.world_still_works", b.to_vec()?[..4].to_vec(), vec![want; 4], "a reduce after the mismatches");
    ctx.broadcast(w, &b, &a, 4, n - 1)?;
    ck.eq("cheap.broadcast_still_works", b.to_vec()?[..4].to_vec(), vec![n as i64; 4], "a broadcast after the mismatches");
    ctx.fcollectmem(w, c.addr(), a.addr(), 8)?;
    let all: Vec<i64> = (1..=n as i64).collect();
    ck.eq("cheap.fcollect_still_works", c.to_vec()?[..n].to_vec(), all, "an fcollect after the mismatches");
    Ok(())
}

fn errors(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let n = ctx.n_pes();
    let a = ctx.alloc::<f64>(64)?;
    let b = ctx.alloc::<f64>(64)?;
    let w = Team::WORLD;
    let overlap = ctx.reduce_addr(w, a.addr_of(1), a.addr(), 8, ReduceDtype::F64, ReduceOp::Sum);
    expect_err(ck, "error.1", overlap, &["reduce", "overlap partly"]);
    expect_err(ck, "error.2", ctx.reduce(w, &b, &a, 4, ReduceOp::Xor), &["reduce", "`op`", "xor is not defined on f64"]);
    expect_err(ck, "error.3", ctx.broadcast(w, &b, &a, 4, n), &["broadcast", "PE_root", "out of range"]);
    let outside = [0u8; 64];
    expect_err(
        ck,
        "error.4",
        ctx.fcollectmem(w, outside.as_ptr() as usize, a.addr(), 8),
        &["fcollectmem", "`dest`", "not in the symmetric heap"],
    );
    expect_err(ck, "error.5", ctx.alltoalls(w, &b, &a, 0, 1, 1), &["alltoalls", "strides must be at least 1"]);
    expect_err(ck, "error.6", ctx.reduce(w, &b, &a, 65, ReduceOp::Sum), &["reduce", "`dest`", "past the end"]);
    expect_err(ck, "error.7", ctx.fcollect(w, &a, &a, 1), &["fcollect", "overlap"]);
    expect_err(ck, "error.8", ctx.broadcast(Team::INVALID, &b, &a, 1, 0), &["broadcast", "SHMEM_TEAM_INVALID"]);
    // The world still works after every PE's calls failed alike.
    a.fill(1.5)?;
    ctx.reduce(w, &b, &a, 2, ReduceOp::Sum)?;
    ck.eq("error.world_still_works", b.to_vec()?[..2].to_vec(), vec![1.5 * n as f64; 2], "a reduce after the errors");
    Ok(())
}

fn die(ctx: &Ctx, kill: bool) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let len = if kill { 1 << 17 } else { 4 };
    let a = ctx.alloc::<f64>(len)?;
    let b = ctx.alloc::<f64>(len)?;
    if me == n - 1 && kill {
        std::thread::spawn(|| {
            std::thread::sleep(Duration::from_millis(1500));
            let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
        });
    }
    for it in 0..u64::MAX {
        if me == n - 1 && !kill && it == 20 {
            // Long enough that the others' 1 s wait warning fires first, also when a
            // loaded machine or the UCX path delays their arrival in this all-reduce or
            // their wait's first check of the warning time (CI once saw PE 0's come after
            // PE 3 left at 3 s).
            std::thread::sleep(Duration::from_millis(5000));
            std::process::exit(7);
        }
        a.fill(it as f64)?;
        ctx.reduce(Team::WORLD, &b, &a, len, ReduceOp::Sum)?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let mode = std::env::args().nth(1).unwrap_or_default();
    support::run_program("pe_coll_fail", 1, |ctx, ck| match mode.as_str() {
        "mismatch" => mismatch(ctx, ck),
        "cheap" => cheap(ctx, ck),
        "errors" => errors(ctx, ck),
        "die" => die(ctx, false),
        "kill" => die(ctx, true),
        other => Err(unknown_mode(ctx, "pe_coll_fail", other)),
    })
}
