//! Ring exchange: every PE puts a block to its right neighbour, signals it, and checks
//! what arrived from its left. Run with `target/release/rshmemrun -n 4 target/release/examples/ring`.

use rshmem::{Cmp, Result};
use std::time::Instant;

fn main() -> Result<()> {
    let t0 = Instant::now();
    rshmem::log::install();
    // Every PE this process hosts: one, or K as threads under `rshmemrun --pes-per-process K`.
    for pe in rshmem::run_local_pes(|ctx| ring(ctx, t0))? {
        pe?;
    }
    Ok(())
}

fn ring(ctx: rshmem::Ctx, t0: Instant) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    const LEN: usize = 1 << 16;
    let inbox = ctx.alloc::<u64>(LEN)?;
    let flag = ctx.alloc::<u64>(1)?;
    let right = (me + 1) % n;
    let left = (me + n - 1) % n;
    let rounds = 100u64;
    let start = Instant::now();
    for round in 1..=rounds {
        let block: Vec<u64> = (0..LEN as u64).map(|i| (me as u64) << 48 | round << 24 | i).collect();
        ctx.put(&inbox, 0, &block, right)?;
        ctx.fence()?;
        ctx.p(&flag, 0, round, right)?;
        ctx.wait_until(&flag, 0, Cmp::Ge, round)?;
        let got = inbox.to_vec()?;
        let bad = got.iter().enumerate().filter(|&(i, &v)| v != ((left as u64) << 48 | round << 24 | i as u64)).count();
        if bad != 0 {
            eprintln!("PE {me}: round {round}: {bad} of {LEN} words from PE {left} are wrong");
            std::process::exit(1);
        }
        ctx.barrier_all()?;
    }
    let secs = start.elapsed().as_secs_f64();
    let mb = (rounds as usize * LEN * 8) as f64 / 1e6;
    println!(
        "PE {me}/{n}: {rounds} rounds of {} KiB from PE {left} checked, {:.0} MB/s per PE, init {:.1} ms",
        LEN * 8 / 1024,
        mb / secs,
        (start - t0).as_secs_f64() * 1e3
    );
    ctx.barrier_all()?;
    if me == 0 {
        println!("ring of {n} PEs: all data arrived intact");
    }
    ctx.finalize()
}
