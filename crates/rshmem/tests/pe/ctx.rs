//! Multi-PE checks of communication contexts (see tests/contexts.rs). Modes:
//!
//! * `lifecycle`: create and destroy contexts with every option set; ids, options and
//!   teams as asked; the default context cannot be destroyed; C option bits.
//! * `ops`: every RMA, AMO, signal, fence and quiet call through a created context reaches
//!   its target; NOSTORE contexts refuse stores and allow loads; private contexts in
//!   threads update one counter without losing increments.
//! * `team`: a context made from a team of every other PE takes team PE numbers; numbers
//!   outside the team are errors naming it; a PE outside the team cannot make one.
//!
//! Checks are named `MODE.WHAT`.

#[path = "../support/mod.rs"]
mod support;

use rshmem::{Cmp, Ctx, CtxOptions, Error, Result, SignalOp, Team, TeamConfig};
use std::process::ExitCode;
use support::{unknown_mode, Check};

fn all_options() -> Vec<CtxOptions> {
    (0..8).map(|b| CtxOptions::from_bits(b).expect("known bits")).collect()
}

fn lifecycle(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let default = ctx.is_default_ctx() && ctx.ctx_id() == 0 && ctx.ctx_team() == Team::WORLD;
    ck.ok("lifecycle.default_ctx", default, "init returns the default context (id 0, world team)");
    let bits = [CtxOptions::SERIALIZED, CtxOptions::PRIVATE, CtxOptions::NOSTORE];
    ck.ok("lifecycle.option_bits", bits == [1, 2, 4] && CtxOptions::from_bits(8).is_none(), format_args!("C option values {bits:?}"));
    let mut last = 0;
    for round in 0..100 {
        let made: Vec<Ctx> = all_options().into_iter().map(|o| ctx.create_ctx(o)).collect::<Result<_>>()?;
        for (o, c) in all_options().into_iter().zip(&made) {
            let good = c.options() == o && !c.is_default_ctx() && c.ctx_team() == Team::WORLD && c.ctx_id() > last;
            ck.ok_with("lifecycle.created", good, || format!("round {round}: context {c:?} made with {o:?}"));
            last = c.ctx_id();
        }
        // A clone shares its context; destroying one leaves the other usable.
        let clone = made[0].clone();
        ck.eq("lifecycle.clone_shares_id", clone.ctx_id(), made[0].ctx_id(), "a clone's context id");
        for c in made {
            c.destroy_ctx()?;
        }
        clone.quiet()?;
    }
    let refused = match ctx.clone().destroy_ctx() {
        Err(e @ Error::InvalidArgument { call: "destroy_ctx", .. }) => e.to_string().contains("default context"),
        _ => false,
    };
    ck.ok("lifecycle.default_not_destroyed", refused, "destroying the default context is an error naming it");
    ctx.barrier_all()
}

fn ops(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let block = ctx.alloc::<u64>(16)?;
    let strided = ctx.alloc::<u32>(8)?;
    let word = ctx.alloc::<u64>(4)?;
    let sig = ctx.alloc::<u64>(1)?;
    let total = ctx.alloc::<u64>(1)?;
    let c = ctx.create_ctx(CtxOptions::default())?;
    let mark = |k: u64| (me as u64) << 32 | k;
    let from_left = |k: u64| (left as u64) << 32 | k;
    // RMA through the context.
    c.put(&block, 0, &(0..8).map(mark).collect::<Vec<_>>(), right)?;
    c.put_nbi(&block, 8, &[mark(8), mark(9)], right)?;
    c.putmem(block.addr_of(10), bytemuck::cast_slice(&[mark(10)]), right)?;
    c.putmem_nbi(block.addr_of(11), bytemuck::cast_slice(&[mark(11)]), right)?;
    c.p(&block, 12, mark(12), right)?;
    c.iput(&strided, 0, &[me as u32, 0, me as u32 + 100], 2, 2, 2, right)?;
    c.fence()?;
    // AMOs through the context.
    c.atomic_set(&word, 0, mark(20), right)?;
    c.atomic_add(&word, 1, 5, right)?;
    c.atomic_fetch_or(&word, 2, 1 << me, right)?;
    c.atomic_inc(&total, 0, 0)?;
    c.pe_quiet(&[right])?;
    c.put_signal(&block, 13, &[mark(13)], &sig, 0, 1, SignalOp::Add, right)?;
    c.quiet()?;
    let seen = c.signal_wait_until(&sig, 0, Cmp::Ge, 1)?;
    ctx.barrier_all()?;
    let want: Vec<u64> = (0..14).map(from_left).collect();
    ck.eq("ops.rma", block.to_vec()?[..14].to_vec(), want, format_args!("put, put_nbi, putmem(_nbi), p, put_signal from PE {left}"));
    let st = strided.to_vec()?;
    ck.eq("ops.strided_and_signal", (st[0], st[2], seen), (left as u32, left as u32 + 100, 1), "iput and the signal");
    let words = (word.load(0)?, word.load(1)?, word.load(2)?);
    ck.eq("ops.amo", words, (from_left(20), 5, 1 << left), "atomic set, add, fetch_or from the left neighbour");
    // Gets and fetches through the context, from the right neighbour.
    let mut back = [0u64; 4];
    c.get(&mut back, &block, 0, right)?;
    let mut nb = [0u64; 2];
    c.get_nbi(&mut nb, &block, 4, right)?;
    let mut by_bytes = [0u64; 1];
    c.getmem(bytemuck::cast_slice_mut(&mut by_bytes), block.addr_of(6), right)?;
    let mut strided_back = [0u32; 2];
    c.iget(&mut strided_back, &strided, 0, 1, 2, 2, right)?;
    let g = c.g(&block, 7, right)?;
    let f = c.atomic_fetch(&word, 1, right)?;
    let good = back == [mark(0), mark(1), mark(2), mark(3)]
        && nb == [mark(4), mark(5)]
        && by_bytes[0] == mark(6)
        && strided_back == [me as u32, me as u32 + 100]
        && g == mark(7)
        && f == 5;
    ck.ok_with("ops.gets", good, || format!("gets through a context: {back:?} {nb:?} {by_bytes:?} {strided_back:?} {g:#x} {f}"));
    c.destroy_ctx()?;
    ctx.barrier_all()?;
    // NOSTORE: loads yes, stores no.
    let ro = ctx.create_ctx(CtxOptions::from_bits(CtxOptions::NOSTORE).expect("bits"))?;
    let refused: Vec<(&str, Result<()>)> = vec![
        ("put", ro.put(&block, 0, &[1], right)),
        ("put_nbi", ro.put_nbi(&block, 0, &[1], right)),
        ("putmem", ro.putmem(block.addr(), &[1], right)),
        ("p", ro.p(&block, 0, 1, right)),
        ("iput", ro.iput(&strided, 0, &[1], 1, 1, 1, right)),
        ("atomic_inc", ro.atomic_inc(&word, 0, right)),
        ("atomic_fetch_add", ro.atomic_fetch_add(&word, 0, 1, right).map(drop)),
        ("atomic_compare_swap", ro.atomic_compare_swap(&word, 0, 0, 1, right).map(drop)),
        ("put_signal", ro.put_signal(&block, 0, &[1], &sig, 0, 1, SignalOp::Set, right)),
        ("signal_op", ro.signal_op(&sig, 0, 1, SignalOp::Set, right)),
    ];
    for (what, r) in refused {
        ck.err("ops.nostore_refuses", r, |e| matches!(e, Error::InvalidArgument { arg: "ctx", .. }), &["NOSTORE", what]);
    }
    let mut one = [0u64];
    ro.get(&mut one, &block, 0, right)?;
    let loads = (one[0], ro.g(&block, 1, right)?, ro.atomic_fetch(&word, 1, right)?);
    ck.eq("ops.nostore_loads", loads, (mark(0), mark(1), 5), "get, g, atomic_fetch through a NOSTORE context");
    ro.quiet()?;
    ro.fence()?;
    ro.destroy_ctx()?;
    ctx.barrier_all()?;
    ck.eq("ops.nostore_unchanged", block.to_vec()?[0], from_left(0), "memory after the refused NOSTORE stores");
    // Private contexts, one per thread, all adding to PE 0's counter.
    let per_thread = 2000u64;
    std::thread::scope(|s| -> Result<()> {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let own = ctx.create_ctx(CtxOptions { private: true, serialized: true, nostore: false })?;
                let total = &total;
                Ok(s.spawn(move || -> Result<()> {
                    for _ in 0..per_thread {
                        own.atomic_fetch_add(total, 0, 1, 0)?;
                    }
                    own.destroy_ctx()
                }))
            })
            .collect::<Result<_>>()?;
        for w in workers {
            w.join().expect("worker thread")?;
        }
        Ok(())
    })?;
    ctx.barrier_all()?;
    let want = n as u64 * (1 + 2 * per_thread);
    if me == 0 {
        ck.eq("ops.private_ctx_threads", total.load(0)?, want, "PE 0's counter after 2 threads per PE added through private contexts");
    }
    ctx.barrier_all()
}

fn team(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let evens = ctx.team_split_strided(Team::WORLD, 0, 2, n.div_ceil(2), TeamConfig::default())?;
    let inbox = ctx.alloc::<u64>(1)?;
    let hits = ctx.alloc::<u64>(1)?;
    if evens.is_invalid() {
        let r = ctx.team_create_ctx(evens, CtxOptions::default());
        ck.err("team.invalid_team_refused", r, |e| matches!(e, Error::InvalidTeam { call: "team_create_ctx", .. }), &[]);
    } else {
        let size = ctx.team_n_pes(evens)?;
        let mine = ctx.team_my_pe(evens)?;
        let tc = ctx.team_create_ctx(evens, CtxOptions::default())?;
        ck.ok("team.ctx_names_team", tc.ctx_team() == evens && !tc.is_default_ctx(), format_args!("context {tc:?} of team {evens:?}"));
        // Team PE k is world PE 2k.
        let next = (mine + 1) % size;
        tc.p(&inbox, 0, me as u64 + 1, next)?;
        for k in 0..size {
            tc.atomic_inc(&hits, 0, k)?;
        }
        tc.quiet()?;
        let in_team = format!("in team {}", evens.raw());
        ck.err("team.pe_outside_team", tc.p(&inbox, 0, 1, size), |e| matches!(e, Error::PeOutOfRange { .. }), &[&in_team]);
        tc.destroy_ctx()?;
    }
    ctx.barrier_all()?;
    if me % 2 == 0 {
        let size = n.div_ceil(2);
        let prev = ((me / 2 + size - 1) % size) * 2;
        let got = (inbox.load(0)?, hits.load(0)?);
        ck.eq("team.pe_numbers", got, (prev as u64 + 1, size as u64), format_args!("value from team neighbour world PE {prev}, hits"));
    } else {
        ck.eq("team.odd_untouched", (inbox.load(0)?, hits.load(0)?), (0, 0), "an odd PE's words after the even team's context wrote");
    }
    ctx.barrier_all()?;
    if !evens.is_invalid() {
        ctx.team_destroy(evens)?;
    }
    ctx.barrier_all()
}

fn main() -> ExitCode {
    support::run_program("pe_ctx", 1, |ctx, ck| {
        let mode = std::env::args().nth(1).unwrap_or_else(|| "lifecycle".into());
        match mode.as_str() {
            "lifecycle" => lifecycle(ctx, ck),
            "ops" => ops(ctx, ck),
            "team" => team(ctx, ck),
            other => Err(unknown_mode(ctx, "pe_ctx", other)),
        }
    })
}
