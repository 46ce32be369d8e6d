//! Multi-PE checks of signals (see tests/signal.rs). Modes:
//!
//! * `order [rounds]`: a ring; every round each PE sends a block to its right neighbour
//!   with put_signal (alternately blocking SET and non-blocking ADD) and checks, the moment
//!   it sees its own signal, that the block from its left neighbour is all there; then it
//!   acknowledges with signal_op. Default 100,000 rounds.
//! * `ops`: signal_op SET/ADD, signal_fetch, signal_wait_until with every comparison, a
//!   timed-out wait, empty puts, wrap-around.
//! * `errors`: bad signal words and ranges get the right error and move nothing.
//!
//! Checks are named `MODE.WHAT`; `ops.wait_CMP` for each comparison of `Cmp::ALL`.

#[path = "../support/mod.rs"]
mod support;

use rshmem::{Cmp, Ctx, CtxOptions, Error, Result, SignalOp};
use std::process::ExitCode;
use std::time::Duration;
use support::{unknown_mode, Check};

/// Block sizes (u64 words) cycled through by the rounds.
const SIZES: [usize; 4] = [1, 7, 64, 1024];

fn word(sender: usize, round: u64, i: usize) -> u64 {
    (sender as u64) << 56 | round << 20 | i as u64
}

fn order(ctx: &Ctx, ck: &mut Check, rounds: u64) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let inbox = ctx.alloc::<u64>(SIZES[3])?;
    let sig = ctx.alloc::<u64>(1)?;
    let ack = ctx.alloc::<u64>(1)?;
    let mut block = vec![0u64; SIZES[3]];
    let mut got = vec![0u64; SIZES[3]];
    for r in 1..=rounds {
        let len = SIZES[(r % 4) as usize];
        for (i, w) in block[..len].iter_mut().enumerate() {
            *w = word(me, r, i);
        }
        // The right neighbour has checked round r-1 (its ack) before we overwrite its inbox.
        ctx.wait_until(&ack, 0, Cmp::Ge, r - 1)?;
        if r % 2 == 0 {
            ctx.put_signal(&inbox, 0, &block[..len], &sig, 0, r, SignalOp::Set, right)?;
        } else {
            ctx.put_signal_nbi(&inbox, 0, &block[..len], &sig, 0, 1, SignalOp::Add, right)?;
        }
        let seen = ctx.signal_wait_until(&sig, 0, Cmp::Ge, r)?;
        ck.ok_with("order.signal_value", seen == r, || format!("round {r}: signal from PE {left} is {seen}, expected {r}"));
        ctx.get(&mut got[..len], &inbox, 0, me)?;
        let stale = (0..len).find(|&i| got[i] != word(left, r, i));
        ck.ok_with("order.data_with_signal", stale.is_none(), || {
            let i = stale.unwrap_or(0);
            format!(
                "round {r}: saw the signal before the data: word {i} of {len} from PE {left} is {:#x}, expected {:#x}",
                got[i],
                word(left, r, i)
            )
        });
        ctx.signal_op(&ack, 0, 1, SignalOp::Add, left)?;
        if r % 2 == 1 {
            ctx.quiet()?;
        }
    }
    ctx.wait_until(&ack, 0, Cmp::Ge, rounds)?;
    ctx.barrier_all()
}

fn ops(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let sig = ctx.alloc::<u64>(n)?;
    let data = ctx.alloc::<u32>(4)?;
    let codes = (SignalOp::from_raw(0), SignalOp::from_raw(1), SignalOp::from_raw(2));
    ck.eq("ops.signal_op_codes", codes, (Some(SignalOp::Set), Some(SignalOp::Add), None), "SignalOp of the C values 0, 1, 2");
    // Every PE sets its slot on every PE (itself included), then adds to it.
    for q in 0..n {
        ctx.signal_op(&sig, me, 1000 + me as u64, SignalOp::Set, q)?;
        ctx.signal_op(&sig, me, 5, SignalOp::Add, q)?;
        ctx.signal_op(&sig, me, u64::MAX, SignalOp::Add, q)?; // -1: wraps
    }
    ctx.barrier_all()?;
    for p in 0..n {
        ck.eq("ops.set_add_fetch", ctx.signal_fetch(&sig, p)?, 1004 + p as u64, format_args!("slot of PE {p} after set+add"));
    }
    ctx.barrier_all()?;
    // Waits with every comparison, on values a neighbour sets after a barrier.
    let left = (me + n - 1) % n;
    let right = (me + 1) % n;
    for (k, cmp) in Cmp::ALL.into_iter().enumerate() {
        let target = 5000 + k as u64;
        let value = match cmp {
            Cmp::Eq | Cmp::Ge | Cmp::Le => target,
            Cmp::Ne => target + 1,
            Cmp::Gt => target + 1,
            Cmp::Lt => target - 1,
        };
        // Start from a value that does not satisfy the comparison.
        let start = match cmp {
            Cmp::Eq | Cmp::Gt | Cmp::Ge => 0,
            Cmp::Ne => target,
            Cmp::Lt | Cmp::Le => u64::MAX,
        };
        ctx.signal_op(&sig, left, start, SignalOp::Set, me)?;
        ctx.barrier_all()?;
        let name = format!("ops.wait_{}", format!("{cmp:?}").to_lowercase());
        let early = ctx.signal_wait_until_timeout(&sig, left, cmp, target, Duration::from_millis(1)).is_ok();
        ck.ok(&name, !early, format_args!("wait {cmp:?} {target} is not satisfied by the start value {start}"));
        ctx.barrier_all()?;
        // The left neighbour's slot on this PE is written by the left neighbour (put_signal).
        ctx.put_signal(&data, 0, &[k as u32, 1, 2, 3], &sig, me, value, SignalOp::Set, right)?;
        let seen = ctx.signal_wait_until_timeout(&sig, left, cmp, target, Duration::from_secs(30))?;
        ck.eq(&name, seen, value, format_args!("wait {cmp:?} {target} returned the value set"));
        ck.eq(&name, data.load(0)? as u64, k as u64, "the data put with the signal");
        ctx.barrier_all()?;
    }
    // A wait nobody satisfies times out with an error naming the call and the PE.
    let r = ctx.signal_wait_until_timeout(&sig, me, Cmp::Eq, 77, Duration::from_millis(50));
    ck.err("ops.timeout", r, |e| matches!(e, Error::Timeout { call: "signal_wait_until", .. }), &[&format!("PE {me}")]);
    // An empty put with a signal still signals.
    ctx.barrier_all()?;
    ctx.put_signal::<u32>(&data, 4, &[], &sig, me, 9, SignalOp::Set, right)?;
    ck.eq("ops.empty_put_signals", ctx.signal_wait_until(&sig, left, Cmp::Eq, 9)?, 9, "the signal of an empty put");
    ctx.barrier_all()
}

fn errors(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let right = (me + 1) % n;
    let rs = format!("PE {right}");
    let dest = ctx.alloc::<u64>(8)?;
    let sig = ctx.alloc::<u64>(2)?;
    let small = ctx.alloc::<u32>(1)?;
    let src = [0xdeadu64; 8];
    let bytes: &[u8] = bytemuck::cast_slice(&src);
    let off_heap = [0u64; 2];
    ck.err(
        "errors.signal_word_off_the_heap",
        ctx.putmem_signal(dest.addr(), bytes, off_heap.as_ptr() as usize, 1, SignalOp::Set, right),
        |e| matches!(e, Error::NotSymmetric { call: "putmem_signal", arg: "sig_addr", .. }),
        &["putmem_signal", "sig_addr", "not in the symmetric heap", &rs],
    );
    ck.err(
        "errors.misaligned_signal_word",
        ctx.putmem_signal_nbi(dest.addr(), bytes, sig.addr() + 4, 1, SignalOp::Add, right),
        |e| matches!(e, Error::Misaligned { call: "putmem_signal_nbi", arg: "sig_addr", align: 8, .. }),
        &["putmem_signal_nbi", "sig_addr", "aligned to 8", &rs],
    );
    ck.err(
        "errors.signal_word_in_a_4_byte_allocation",
        ctx.signal_op_addr(small.addr(), 1, SignalOp::Set, right),
        |e| matches!(e, Error::OutOfBounds { call: "signal_op", arg: "sig_addr", .. }),
        &["signal_op", "sig_addr", "past the end", &rs],
    );
    ck.err(
        "errors.signal_word_inside_the_data",
        ctx.putmem_signal(dest.addr(), bytes, dest.addr() + 16, 1, SignalOp::Set, right),
        |e| matches!(e, Error::InvalidArgument { call: "putmem_signal", arg: "sig_addr", .. }),
        &["putmem_signal", "sig_addr", "overlaps"],
    );
    ck.err(
        "errors.signal_index_past_the_end",
        ctx.put_signal(&dest, 0, &src, &sig, 2, 1, SignalOp::Set, right),
        |e| matches!(e, Error::OutOfBounds { call: "put_signal", arg: "sig_addr", .. }),
        &["put_signal", "sig_addr", &rs],
    );
    ck.err(
        "errors.data_past_the_end",
        ctx.put_signal(&dest, 4, &src, &sig, 0, 1, SignalOp::Set, right),
        |e| matches!(e, Error::OutOfBounds { call: "put_signal", arg: "dest", .. }),
        &["put_signal", "dest", &rs],
    );
    let bad = format!("PE {}", n + 3);
    ck.err(
        "errors.pe_out_of_range",
        ctx.put_signal(&dest, 0, &src, &sig, 0, 1, SignalOp::Set, n + 3),
        |e| matches!(e, Error::PeOutOfRange { call: "put_signal", .. }),
        &["put_signal", &bad],
    );
    let mine = format!("PE {me}");
    ck.err(
        "errors.signal_fetch_off_the_heap",
        ctx.signal_fetch_addr(off_heap.as_ptr() as usize),
        |e| matches!(e, Error::NotSymmetric { call: "signal_fetch", arg: "sig_addr", .. }),
        &["signal_fetch", "sig_addr", &mine],
    );
    ck.err(
        "errors.signal_wait_until_misaligned",
        ctx.signal_wait_until_addr(sig.addr() + 2, Cmp::Eq, 0, None),
        |e| matches!(e, Error::Misaligned { call: "signal_wait_until", arg: "sig_addr", .. }),
        &["signal_wait_until", "sig_addr", &mine],
    );
    let ro = ctx.create_ctx(CtxOptions { nostore: true, ..Default::default() })?;
    ck.err(
        "errors.put_signal_through_a_nostore_context",
        ro.put_signal(&dest, 0, &src, &sig, 0, 1, SignalOp::Set, right),
        |e| matches!(e, Error::InvalidArgument { call: "put_signal", arg: "ctx", .. }),
        &["put_signal", "NOSTORE"],
    );
    ro.destroy_ctx()?;
    ctx.barrier_all()?;
    let moved = dest.to_vec()?.iter().any(|&w| w != 0) || sig.to_vec()? != [0, 0] || small.load(0)? != 0;
    ck.ok("errors.nothing_moved", !moved, "data and signal words after the refused calls");
    ctx.barrier_all()
}

fn main() -> ExitCode {
    support::run_program("pe_signal", 1, |ctx, ck| {
        let args: Vec<String> = std::env::args().skip(1).collect();
        match args.first().map(String::as_str).unwrap_or("order") {
            "order" => order(ctx, ck, args.get(1).and_then(|a| a.parse().ok()).unwrap_or(100_000)),
            "ops" => ops(ctx, ck),
            "errors" => errors(ctx, ck),
            other => Err(unknown_mode(ctx, "pe_signal", other)),
        }
    })
}
