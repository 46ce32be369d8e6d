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
//! Exits non-zero, naming the PE, on the first mismatch.

use rshmem::{Cmp, Ctx, CtxOptions, Error, Result, SignalOp, Team, TeamConfig};

fn fail(me: usize, msg: String) -> ! {
    eprintln!("PE {me}: {msg}");
    std::process::exit(1)
}

fn all_options() -> Vec<CtxOptions> {
    (0..8).map(|b| CtxOptions::from_bits(b).expect("known bits")).collect()
}

fn lifecycle(ctx: &Ctx) -> Result<()> {
    let me = ctx.my_pe();
    if !ctx.is_default_ctx() || ctx.ctx_id() != 0 || ctx.ctx_team() != Team::WORLD {
        fail(me, "lifecycle: init did not return the default context".into());
    }
    let bits = [CtxOptions::SERIALIZED, CtxOptions::PRIVATE, CtxOptions::NOSTORE];
    if bits != [1, 2, 4] || CtxOptions::from_bits(8).is_some() {
        fail(me, format!("lifecycle: C option values {bits:?}"));
    }
    let mut last = 0;
    for round in 0..100 {
        let made: Vec<Ctx> = all_options().into_iter().map(|o| ctx.create_ctx(o)).collect::<Result<_>>()?;
        for (o, c) in all_options().into_iter().zip(&made) {
            if c.options() != o || c.is_default_ctx() || c.ctx_team() != Team::WORLD || c.ctx_id() <= last {
                fail(me, format!("lifecycle: round {round}: context {c:?} made with {o:?}"));
            }
            last = c.ctx_id();
        }
        // A clone shares its context; destroying one leaves the other usable.
        let clone = made[0].clone();
        if clone.ctx_id() != made[0].ctx_id() {
            fail(me, "lifecycle: a clone has another context id".into());
        }
        for c in made {
            c.destroy_ctx()?;
        }
        clone.quiet();
    }
    match ctx.clone().destroy_ctx() {
        Err(e @ Error::InvalidArgument { call: "destroy_ctx", .. }) if e.to_string().contains("default context") => {}
        other => fail(me, format!("lifecycle: destroying the default context gave {other:?}")),
    }
    ctx.barrier_all()?;
    println!("PE {me}: lifecycle: 800 contexts created and destroyed with every option set; ids unique");
    Ok(())
}

fn ops(ctx: &Ctx) -> Result<()> {
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
    c.fence();
    // AMOs through the context.
    c.atomic_set(&word, 0, mark(20), right)?;
    c.atomic_add(&word, 1, 5, right)?;
    c.atomic_fetch_or(&word, 2, 1 << me, right)?;
    c.atomic_inc(&total, 0, 0)?;
    c.pe_quiet(&[right])?;
    c.put_signal(&block, 13, &[mark(13)], &sig, 0, 1, SignalOp::Add, right)?;
    c.quiet();
    let seen = c.signal_wait_until(&sig, 0, Cmp::Ge, 1)?;
    ctx.barrier_all()?;
    let got = block.to_vec();
    if let Some(k) = (0..14).find(|&k| got[k] != from_left(k as u64)) {
        fail(me, format!("ops: word {k} from PE {left} through a context is {:#x}", got[k]));
    }
    let st = strided.to_vec();
    if st[0] != left as u32 || st[2] != left as u32 + 100 || seen != 1 {
        fail(me, format!("ops: strided put {st:?} / signal {seen} through a context"));
    }
    if word.load(0)? != from_left(20) || word.load(1)? != 5 || word.load(2)? != 1 << left {
        fail(me, format!("ops: atomics through a context left {:?}", word.to_vec()));
    }
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
    if back != [mark(0), mark(1), mark(2), mark(3)]
        || nb != [mark(4), mark(5)]
        || by_bytes[0] != mark(6)
        || strided_back != [me as u32, me as u32 + 100]
        || g != mark(7)
        || f != 5
    {
        fail(me, format!("ops: gets through a context: {back:?} {nb:?} {by_bytes:?} {strided_back:?} {g:#x} {f}"));
    }
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
        match r {
            Err(e @ Error::InvalidArgument { arg: "ctx", .. }) if e.to_string().contains("NOSTORE") && e.to_string().contains(what) => {}
            other => fail(me, format!("ops: {what} through a NOSTORE context gave {other:?}")),
        }
    }
    let mut one = [0u64];
    ro.get(&mut one, &block, 0, right)?;
    if one[0] != mark(0) || ro.g(&block, 1, right)? != mark(1) || ro.atomic_fetch(&word, 1, right)? != 5 {
        fail(me, "ops: loads through a NOSTORE context".into());
    }
    ro.quiet();
    ro.fence();
    ro.destroy_ctx()?;
    ctx.barrier_all()?;
    if block.to_vec()[0] != from_left(0) {
        fail(me, "ops: a refused NOSTORE put changed memory".into());
    }
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
    if me == 0 && total.load(0)? != want {
        fail(me, format!("ops: counter {} after contexts in threads, expected {want}", total.load(0)?));
    }
    println!("PE {me}: ops: RMA, AMO, signal, fence and quiet through contexts arrived; NOSTORE refused stores");
    ctx.barrier_all()
}

fn team(ctx: &Ctx) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let evens = ctx.team_split_strided(Team::WORLD, 0, 2, n.div_ceil(2), TeamConfig::default())?;
    let inbox = ctx.alloc::<u64>(1)?;
    let hits = ctx.alloc::<u64>(1)?;
    if evens.is_invalid() {
        match ctx.team_create_ctx(evens, CtxOptions::default()) {
            Err(Error::InvalidTeam { call: "team_create_ctx", .. }) => {}
            other => fail(me, format!("team: a context from the invalid team gave {other:?}")),
        }
    } else {
        let size = ctx.team_n_pes(evens)?;
        let mine = ctx.team_my_pe(evens)?;
        let tc = ctx.team_create_ctx(evens, CtxOptions::default())?;
        if tc.ctx_team() != evens || tc.is_default_ctx() {
            fail(me, format!("team: context {tc:?} does not name its team"));
        }
        // Team PE k is world PE 2k.
        let next = (mine + 1) % size;
        tc.p(&inbox, 0, me as u64 + 1, next)?;
        for k in 0..size {
            tc.atomic_inc(&hits, 0, k)?;
        }
        tc.quiet();
        let bad = tc.p(&inbox, 0, 1, size);
        match bad {
            Err(e @ Error::PeOutOfRange { .. }) if e.to_string().contains(&format!("in team {}", evens.raw())) => {}
            other => fail(me, format!("team: team PE {size} of a {size}-PE team gave {other:?}")),
        }
        tc.destroy_ctx()?;
    }
    ctx.barrier_all()?;
    if me % 2 == 0 {
        let size = n.div_ceil(2);
        let prev = ((me / 2 + size - 1) % size) * 2;
        if inbox.load(0)? != prev as u64 + 1 || hits.load(0)? != size as u64 {
            fail(me, format!("team: got {} from team neighbour world PE {prev} and {} hits", inbox.load(0)?, hits.load(0)?));
        }
    } else if inbox.load(0)? != 0 || hits.load(0)? != 0 {
        fail(me, "team: an odd PE was written by a team context of even PEs".into());
    }
    ctx.barrier_all()?;
    if !evens.is_invalid() {
        ctx.team_destroy(evens)?;
    }
    println!("PE {me}: team: team contexts used team PE numbers");
    ctx.barrier_all()
}

fn main() -> Result<()> {
    let ctx = rshmem::init()?;
    let mode = std::env::args().nth(1).unwrap_or_else(|| "lifecycle".into());
    match mode.as_str() {
        "lifecycle" => lifecycle(&ctx)?,
        "ops" => ops(&ctx)?,
        "team" => team(&ctx)?,
        other => fail(ctx.my_pe(), format!("unknown mode `{other}`")),
    }
    ctx.finalize()
}
