//! Point-to-point costs over whatever transport the job uses (for the remote transport's
//! closing note): put 8 B + quiet, get 8 B, fetch_add latency, and put bandwidth
//! (puts + one quiet) at 64 KiB, 1 MiB and 16 MiB, from PE 0 to PE 1 while PE 1 waits in
//! a barrier. Medians of several repetitions, one line per figure.
//!
//! Run: `RSHMEM_TRANSPORT=ucx UCX_TLS=tcp rshmemrun -n 2 target/release/examples/transport_bench`
//! (or without RSHMEM_TRANSPORT for the shared-memory transport).

use rshmem::Result;
use std::time::Instant;

const REPS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Microseconds per call of `f`, median over `REPS` runs of `iters` calls.
fn per_call_us(iters: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    let mut v = Vec::new();
    for _ in 0..REPS {
        let t = Instant::now();
        for _ in 0..iters {
            f()?;
        }
        v.push(t.elapsed().as_secs_f64() * 1e6 / iters as f64);
    }
    Ok(median(v))
}

fn main() -> Result<()> {
    let ctx = rshmem::init()?;
    if ctx.n_pes() < 2 {
        eprintln!("transport_bench: needs 2 PEs");
        std::process::exit(2);
    }
    let big = 16usize << 20;
    let buf = ctx.alloc::<u8>(big)?;
    let word = ctx.alloc::<u64>(1)?;
    ctx.barrier_all()?;
    if ctx.my_pe() == 0 {
        let src = vec![7u8; big];
        let mut dst = [0u8; 8];
        let put = per_call_us(2000, || {
            ctx.putmem(buf.addr(), &src[..8], 1)?;
            ctx.quiet();
            Ok(())
        })?;
        println!("put 8 B + quiet: {put:.2} us");
        let get = per_call_us(2000, || ctx.getmem(&mut dst, buf.addr(), 1))?;
        println!("get 8 B: {get:.2} us");
        let fadd = per_call_us(2000, || ctx.atomic_fetch_add(&word, 0, 1u64, 1).map(|_| ()))?;
        println!("fetch_add u64: {fadd:.2} us");
        for size in [64usize << 10, 1 << 20, big] {
            let iters = (256usize << 20) / size;
            let us = per_call_us(1, || {
                for _ in 0..iters {
                    ctx.putmem(buf.addr(), &src[..size], 1)?;
                }
                ctx.quiet();
                Ok(())
            })?;
            println!("put {} KiB: {:.2} GB/s", size >> 10, (size * iters) as f64 / (us * 1e3));
        }
        let total = ctx.atomic_fetch(&word, 0, 1)?;
        assert_eq!(total, (REPS * 2000) as u64, "fetch_adds all arrived at PE 1");
    }
    ctx.barrier_all()?;
    Ok(())
}
