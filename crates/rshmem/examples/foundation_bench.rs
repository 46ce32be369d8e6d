//! Foundation measurements for the closing note (not the perf suite):
//! * launch to first put: wall time from just before `rshmemrun -n 8` is spawned to the
//!   first completed put (of the earliest PE and of the last of the 8), median of several
//!   launches;
//! * put and get bandwidth at 8 B and 64 MiB between 2 PEs, next to memcpy of the same
//!   sizes in the same process, in one run (medians of several repetitions).
//!
//! Run (after `cargo build --release --bins --examples`):
//! `target/release/examples/foundation_bench` (it starts `rshmemrun` itself, found next to
//! the examples folder or given with `--rshmemrun PATH`). The PE parts can also be run
//! alone: `rshmemrun -n 8 target/release/examples/foundation_bench launch $(date +%s%N)` and
//! `rshmemrun -n 2 target/release/examples/foundation_bench bw`.

use rshmem::Result;
use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

const LAUNCHES: usize = 7;
const REPS: usize = 9;
const SMALL_OPS: usize = 200_000;
const BIG: usize = 64 << 20;

fn now_ns() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock after 1970").as_nanos()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// PE side of the launch measurement: init, one symmetric word, one put to the right.
fn launch_pe(t0: u128) -> Result<()> {
    rshmem::log::install();
    let ctx = rshmem::init()?;
    let t_init = now_ns();
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let x = ctx.alloc::<u64>(1)?;
    ctx.p(&x, 0, me as u64 + 1, (me + 1) % n)?;
    let t_put = now_ns();
    println!("launch pe={me} init_ms={:.3} first_put_ms={:.3}", (t_init - t0) as f64 / 1e6, (t_put - t0) as f64 / 1e6);
    ctx.barrier_all()?;
    ctx.finalize()
}

/// Seconds per call of each of `fs`, median over REPS repetitions of `iters` calls; the
/// repetitions of the different calls are interleaved, so that a change of the machine's
/// load during the run affects them alike.
fn time_per_call<const N: usize>(iters: usize, mut fs: [&mut dyn FnMut(); N]) -> [f64; N] {
    for f in fs.iter_mut() {
        f(); // warm-up: page faults, caches
    }
    let mut samples = vec![Vec::with_capacity(REPS); N];
    for _ in 0..REPS {
        for (f, s) in fs.iter_mut().zip(samples.iter_mut()) {
            let t = Instant::now();
            for _ in 0..iters {
                f();
            }
            s.push(t.elapsed().as_secs_f64() / iters as f64);
        }
    }
    let mut out = [0.0; N];
    for (o, s) in out.iter_mut().zip(samples) {
        *o = median(s);
    }
    out
}

/// PE side of the bandwidth measurement: PE 0 works, PE 1 waits in the final barrier.
fn bandwidth_pe() -> Result<()> {
    rshmem::log::install();
    let ctx = rshmem::init()?;
    assert_eq!(ctx.n_pes(), 2, "the bandwidth part runs on 2 PEs");
    let small = ctx.alloc::<u8>(8)?;
    let big = ctx.alloc::<u8>(BIG)?;
    if ctx.my_pe() == 1 {
        big.fill(1)?; // commit the pages on the target before PE 0 measures
    }
    ctx.barrier_all()?;
    if ctx.my_pe() == 0 {
        let src8 = [7u8; 8];
        let mut dst8 = [0u8; 8];
        let (a8, mut b8) = ([3u8; 8], [0u8; 8]);
        let [put8, get8, memcpy8] = time_per_call(
            SMALL_OPS,
            [
                &mut || ctx.putmem(small.addr(), black_box(&src8), 1).expect("put"),
                &mut || ctx.getmem(black_box(&mut dst8), small.addr(), 1).expect("get"),
                &mut || black_box(&mut b8).copy_from_slice(black_box(&a8)),
            ],
        );
        let src = vec![5u8; BIG];
        let mut dst = vec![0u8; BIG];
        let mut dst2 = vec![0u8; BIG];
        let [put_big, get_big, memcpy_big] = time_per_call(
            1,
            [
                &mut || {
                    ctx.putmem(big.addr(), black_box(&src), 1).expect("put");
                    ctx.quiet().expect("local access to the symmetric heap");
                },
                &mut || ctx.getmem(black_box(&mut dst), big.addr(), 1).expect("get"),
                &mut || black_box(&mut dst2).copy_from_slice(black_box(&src)),
            ],
        );
        black_box((&dst, &dst2, &b8, &dst8));
        let gbs = |bytes: usize, s: f64| bytes as f64 / s / 1e9;
        println!("bw size=8 put_ns={:.1} get_ns={:.1} memcpy_ns={:.1}", put8 * 1e9, get8 * 1e9, memcpy8 * 1e9);
        println!("bw size=8 put_gbs={:.3} get_gbs={:.3} memcpy_gbs={:.3}", gbs(8, put8), gbs(8, get8), gbs(8, memcpy8));
        println!("bw size={BIG} put_gbs={:.2} get_gbs={:.2} memcpy_gbs={:.2}", gbs(BIG, put_big), gbs(BIG, get_big), gbs(BIG, memcpy_big));
    }
    ctx.barrier_all()?;
    ctx.finalize()
}

fn field(line: &str, key: &str) -> Option<f64> {
    line.split_whitespace().find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

fn driver() {
    let args: Vec<String> = std::env::args().collect();
    let me = std::env::current_exe().expect("own path");
    let runner = args
        .iter()
        .position(|a| a == "--rshmemrun")
        .map(|i| PathBuf::from(&args[i + 1]))
        .unwrap_or_else(|| me.parent().and_then(|d| d.parent()).expect("target dir").join("rshmemrun"));
    assert!(
        runner.exists(),
        "{} not found: build with `cargo build --release --bins --examples` or pass --rshmemrun PATH",
        runner.display()
    );

    // Launch to first put, 8 PEs.
    let (mut first, mut last, mut inits, mut walls) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..LAUNCHES {
        let t0 = now_ns();
        let start = Instant::now();
        let out = Command::new(&runner)
            .args(["-n", "8", "--timeout", "60"])
            .arg(&me)
            .args(["launch", &t0.to_string()])
            .output()
            .expect("run rshmemrun");
        walls.push(start.elapsed().as_secs_f64() * 1e3);
        assert!(out.status.success(), "launch job failed: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        let puts: Vec<f64> = text.lines().filter_map(|l| field(l, "first_put_ms")).collect();
        let init: Vec<f64> = text.lines().filter_map(|l| field(l, "init_ms")).collect();
        assert_eq!(puts.len(), 8, "every PE reports: {text}");
        first.push(puts.iter().copied().fold(f64::INFINITY, f64::min));
        last.push(puts.iter().copied().fold(0.0, f64::max));
        inits.push(init.iter().copied().fold(0.0, f64::max));
    }

    // Bandwidth, 2 PEs.
    let out = Command::new(&runner).args(["-n", "2", "--timeout", "120"]).arg(&me).arg("bw").output().expect("run rshmemrun");
    assert!(out.status.success(), "bandwidth job failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |size: usize, key: &str| -> f64 {
        text.lines().filter(|l| l.contains(&format!("size={size} "))).find_map(|l| field(l, key)).unwrap_or(f64::NAN)
    };

    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("foundation_bench: {cores} cores; medians of {LAUNCHES} launches and {REPS} repetitions");
    println!();
    println!("launch to first put, 8 PEs (from just before spawning rshmemrun):");
    println!("  first PE's first put done    {:8.1} ms", median(first));
    println!("  all 8 PEs' first put done    {:8.1} ms", median(last));
    println!("  (init returned on all 8 PEs  {:8.1} ms; whole rshmemrun job {:.1} ms)", median(inits), median(walls));
    println!();
    println!("PE 0 -> PE 1 (put and get are blocking, complete on return; 64 MiB put includes quiet):");
    println!("  {:>8}  {:>12}  {:>12}  {:>12}  {:>9}  {:>9}", "size", "put", "get", "memcpy", "put/memcpy", "get/memcpy");
    let (p8, g8, m8) = (line(8, "put_ns"), line(8, "get_ns"), line(8, "memcpy_ns"));
    println!("  {:>8}  {:>9.1} ns  {:>9.1} ns  {:>9.1} ns  {:>9.2}  {:>9.2}", "8 B", p8, g8, m8, m8 / p8, m8 / g8);
    println!("  {:>8}  {:>7.3} GB/s  {:>7.3} GB/s  {:>7.3} GB/s", "8 B", line(8, "put_gbs"), line(8, "get_gbs"), line(8, "memcpy_gbs"));
    let (pb, gb, mb) = (line(BIG, "put_gbs"), line(BIG, "get_gbs"), line(BIG, "memcpy_gbs"));
    println!("  {:>8}  {:>7.2} GB/s  {:>7.2} GB/s  {:>7.2} GB/s  {:>9.2}  {:>9.2}", "64 MiB", pb, gb, mb, pb / mb, gb / mb);
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("launch") => launch_pe(args.get(1).and_then(|s| s.parse().ok()).unwrap_or_else(now_ns)),
        Some("bw") => bandwidth_pe(),
        _ => {
            driver();
            Ok(())
        }
    }
}
