//! rshmem's UCX transport next to `ucx_perftest`, in the same run, with the same
//! `UCX_TLS` (the remote transport's closing note).
//!
//! Run as one process (not under `rshmemrun`):
//!
//! ```text
//! target/release/examples/transport_bench [--tls tcp,sm] [--quick]
//! ```
//!
//! For each `UCX_TLS` value (default: `tcp`, then `sm`; `sm` runs as `UCX_TLS=sm,self`
//! for both sides) it starts this program again as 2 PEs under `rshmemrun` with
//! `RSHMEM_TRANSPORT=ucx` (the PE mode below), then `ucx_perftest` server and client on
//! localhost for the same figures, and prints one table with the ratio rshmem /
//! ucx_perftest per row (latency: above 1 is slower than UCX; bandwidth: below 1 is
//! slower). Figures, PE 0 to PE 1 (PE 1 waits in a barrier or answers the ping-pong):
//!
//! | row | rshmem | ucx_perftest |
//! |---|---|---|
//! | put latency 8 B | `putmem` 8 B + `wait_until` ping-pong, half round trip | `ucp_put_lat -s 8` |
//! | put 8 B + quiet | `putmem` 8 B then `quiet` (remote completion) | - |
//! | fetch_add latency | `atomic_fetch_add` u64 | `ucp_fadd -O 1` |
//! | put bandwidth S | `putmem` of S bytes, repeated, one `quiet` | `ucp_put_bw -s S` |
//!
//! Latencies are medians of 5 repetitions (ucx_perftest: its 50th percentile);
//! bandwidth medians of 3 (ucx_perftest: its overall figure, MB = 2^20 bytes).
//! Timings on a small shared machine are noisy: compare within one run.
//!
//! PE mode (under `rshmemrun -n 2`, set up by the compare mode): prints the figures as
//! `row <key> <value>` lines on PE 0.

use rshmem::{Cmp, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Put sizes of the bandwidth rows: 8 B to 4 MiB, times 8.
const SIZES: [usize; 8] = [8, 64, 512, 4 << 10, 32 << 10, 256 << 10, 1 << 20, 4 << 20];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Microseconds per call of `f`, median over `reps` runs of `iters` calls.
fn per_call_us(reps: usize, iters: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    let mut v = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        for _ in 0..iters {
            f()?;
        }
        v.push(t.elapsed().as_secs_f64() * 1e6 / iters as f64);
    }
    Ok(median(v))
}

/// Puts per bandwidth repetition of `size` bytes.
fn bw_iters(size: usize, quick: bool) -> usize {
    let bytes: usize = if quick { 8 << 20 } else { 64 << 20 };
    (bytes / size).clamp(100, if quick { 2000 } else { 20000 })
}

fn lat_iters(quick: bool) -> usize {
    if quick {
        300
    } else {
        2000
    }
}

/// The PE side: 2 PEs, figures from PE 0 to PE 1.
fn pe_mode(quick: bool) -> Result<()> {
    rshmem::log::install();
    let ctx = rshmem::init()?;
    if ctx.n_pes() != 2 {
        eprintln!("transport_bench: the PE mode needs exactly 2 PEs");
        std::process::exit(2);
    }
    let me = ctx.my_pe();
    let big = *SIZES.last().unwrap();
    let buf = ctx.alloc::<u8>(big)?;
    let word = ctx.alloc::<u64>(2)?;
    let iters = lat_iters(quick);
    let reps = 5;
    let row = |k: String, v: f64| println!("row {k} {v:.6}");
    ctx.barrier_all()?;
    // Ping-pong: each side puts the round number into the other's word 0.
    let rounds = reps * iters;
    if me == 0 {
        let mut sent = 0u64;
        let lat = per_call_us(reps, iters, || {
            sent += 1;
            ctx.putmem(word.addr(), &sent.to_ne_bytes(), 1)?;
            ctx.wait_until(&word, 0, Cmp::Ge, sent)
        })?;
        row("put_lat".into(), lat / 2.0);
    } else {
        for r in 1..=rounds as u64 {
            ctx.wait_until(&word, 0, Cmp::Ge, r)?;
            ctx.putmem(word.addr(), &r.to_ne_bytes(), 0)?;
        }
    }
    ctx.barrier_all()?;
    if me == 0 {
        let src = vec![7u8; big];
        let put_quiet = per_call_us(reps, iters, || {
            ctx.putmem(buf.addr(), &src[..8], 1)?;
            ctx.quiet()?;
            Ok(())
        })?;
        row("put_quiet".into(), put_quiet);
        let fadd = per_call_us(reps, iters, || ctx.atomic_fetch_add(&word, 1, 1u64, 1).map(|_| ()))?;
        row("fadd".into(), fadd);
        for size in SIZES {
            let n = bw_iters(size, quick);
            let us = per_call_us(3, 1, || {
                for _ in 0..n {
                    ctx.putmem(buf.addr(), &src[..size], 1)?;
                }
                ctx.quiet()?;
                Ok(())
            })?;
            row(format!("put_bw_{size}"), (size * n) as f64 / (us * 1e3));
        }
        let total = ctx.atomic_fetch(&word, 1, 1)?;
        if total != (reps * iters) as u64 {
            eprintln!("transport_bench: PE 1 saw {total} fetch_adds, PE 0 issued {}", reps * iters);
            std::process::exit(1);
        }
    }
    ctx.barrier_all()?;
    ctx.finalize()
}

/// One row of the table.
struct Row {
    key: String,
    label: String,
    unit: &'static str,
    rshmem: Option<f64>,
    perftest: Option<f64>,
}

fn fail(msg: String) -> ! {
    eprintln!("transport_bench: {msg}");
    std::process::exit(1)
}

/// The figures of the PE mode over `UCX_TLS=tls`.
fn run_rshmem(rshmemrun: &Path, me: &Path, tls: &str, quick: bool) -> Vec<(String, f64)> {
    let mut cmd = Command::new(rshmemrun);
    cmd.args(["-n", "2", "--timeout", "300"]).arg(me).arg("pe");
    if quick {
        cmd.arg("--quick");
    }
    let out = cmd
        .env("RSHMEM_TRANSPORT", "ucx")
        .env("UCX_TLS", tls)
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| fail(format!("cannot start {}: {e}", rshmemrun.display())));
    if !out.status.success() {
        fail(format!("the rshmem job over UCX_TLS={tls} failed ({})", out.status));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            match (w.next(), w.next(), w.next().and_then(|v| v.parse().ok())) {
                (Some("row"), Some(k), Some(v)) => Some((k.to_string(), v)),
                _ => None,
            }
        })
        .collect()
}

/// Runs one ucx_perftest test (server and client on localhost); returns the numbers of
/// its final line: iterations, latency 50%/average/overall (us), bandwidth
/// average/overall (MB/s), message rate average/overall.
fn perftest(tls: &str, port: u16, args: &[&str]) -> Option<Vec<f64>> {
    let port_s = port.to_string();
    let mut server =
        Command::new("ucx_perftest").args(["-p", &port_s]).env("UCX_TLS", tls).stdout(Stdio::null()).stderr(Stdio::null()).spawn().ok()?;
    let mut result = None;
    let deadline = Instant::now() + Duration::from_secs(60);
    // The client retries until the server listens.
    while result.is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        let out =
            Command::new("ucx_perftest").arg("localhost").args(["-p", &port_s]).args(args).arg("-f").env("UCX_TLS", tls).output().ok()?;
        if !out.status.success() {
            if matches!(server.try_wait(), Ok(Some(_))) {
                break;
            }
            continue;
        }
        result = String::from_utf8_lossy(&out.stdout)
            .lines()
            .rev()
            .filter_map(|l| {
                let nums: Vec<f64> = l.split_whitespace().filter_map(|w| w.parse().ok()).collect();
                (nums.len() == 8).then_some(nums)
            })
            .next();
    }
    let _ = server.kill();
    let _ = server.wait();
    result
}

fn compare_mode(tls_list: &[String], quick: bool) {
    let me = std::env::current_exe().unwrap_or_else(|e| fail(format!("own path: {e}")));
    let rshmemrun = std::env::var_os("RSHMEMRUN").map(PathBuf::from).unwrap_or_else(|| {
        // target/<profile>/examples/transport_bench -> target/<profile>/rshmemrun
        me.parent().and_then(Path::parent).map(|d| d.join("rshmemrun")).unwrap_or_else(|| "rshmemrun".into())
    });
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let have_perftest = Command::new("ucx_perftest").arg("-h").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok();
    println!("transport_bench: rshmem (RSHMEM_TRANSPORT=ucx) vs ucx_perftest, PE 0 -> PE 1 on localhost, {cores} cores");
    if !have_perftest {
        println!("(ucx_perftest not found: install ucx-utils for its column)");
    }
    let iters = lat_iters(quick).to_string();
    let mut port = 20000 + (std::process::id() % 20000) as u16;
    println!();
    println!("| UCX_TLS | figure | rshmem | ucx_perftest | rshmem / ucx_perftest |");
    println!("|---|---|---|---|---|");
    for tls in tls_list {
        let tls_env = if tls == "sm" { "sm,self".to_string() } else { tls.clone() };
        let got = run_rshmem(&rshmemrun, &me, &tls_env, quick);
        let value = |k: &str| got.iter().find(|(key, _)| key == k).map(|(_, v)| *v);
        let mut rows = vec![
            Row { key: "put_lat".into(), label: "put latency 8 B (half round trip)".into(), unit: "us", rshmem: None, perftest: None },
            Row { key: "put_quiet".into(), label: "put 8 B + quiet".into(), unit: "us", rshmem: None, perftest: None },
            Row { key: "fadd".into(), label: "fetch_add u64 latency".into(), unit: "us", rshmem: None, perftest: None },
        ];
        for size in SIZES {
            let label = if size >= 1 << 20 {
                format!("put bandwidth {} MiB", size >> 20)
            } else if size >= 1 << 10 {
                format!("put bandwidth {} KiB", size >> 10)
            } else {
                format!("put bandwidth {size} B")
            };
            rows.push(Row { key: format!("put_bw_{size}"), label, unit: "GB/s", rshmem: None, perftest: None });
        }
        for r in &mut rows {
            r.rshmem = value(&r.key);
            if !have_perftest {
                continue;
            }
            port += 1;
            r.perftest = match r.key.as_str() {
                "put_lat" => perftest(&tls_env, port, &["-t", "ucp_put_lat", "-s", "8", "-n", &iters, "-w", "100"]).map(|v| v[1]),
                "fadd" => perftest(&tls_env, port, &["-t", "ucp_fadd", "-O", "1", "-n", &iters, "-w", "100"]).map(|v| v[1]),
                k if k.starts_with("put_bw_") => {
                    let size: usize = k["put_bw_".len()..].parse().unwrap_or(8);
                    let n = bw_iters(size, quick).to_string();
                    perftest(&tls_env, port, &["-t", "ucp_put_bw", "-s", &size.to_string(), "-n", &n, "-w", "10"])
                        .map(|v| v[5] * (1u64 << 20) as f64 / 1e9)
                }
                _ => None,
            };
        }
        for r in &rows {
            let show = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3} {}", r.unit));
            let ratio = match (r.rshmem, r.perftest) {
                (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
                _ => "-".into(),
            };
            println!("| {tls_env} | {} | {} | {} | {ratio} |", r.label, show(r.rshmem), show(r.perftest));
        }
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    if args.first().map(String::as_str) == Some("pe") || std::env::var_os("RSHMEM_LAUNCHER_SOCK").is_some() {
        return pe_mode(quick);
    }
    let tls = args
        .iter()
        .position(|a| a == "--tls")
        .and_then(|i| args.get(i + 1))
        .map_or_else(|| vec!["tcp".to_string(), "sm".to_string()], |v| v.split(',').map(str::to_string).collect());
    compare_mode(&tls, quick);
    Ok(())
}
