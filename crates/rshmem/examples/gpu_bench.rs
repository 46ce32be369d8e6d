//! Device-initiated bandwidth and latency between 2 PEs (PE 0 drives, PE 1 waits on the
//! host so its GPU stays idle). Same grid, sizes and method as
//! bench/nvshmem/nvshmem_bench.cu, whose output `--anchor FILE` reads to print ratios.
//!
//! `rshmemrun -n 2 gpu_bench [--anchor nvshmem.txt] [--max-bytes N]`

use rshmem::gpu::{KernelArg as A, LaunchConfig};
use std::collections::BTreeMap;

const SRC: &str = include_str!("gpu/bench.cu");

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let max_bytes: usize = opt("--max-bytes").map(|v| v.parse().expect("--max-bytes")).unwrap_or(1 << 30);
    let anchor: BTreeMap<(String, usize), f64> = opt("--anchor")
        .and_then(|f| std::fs::read_to_string(f).ok())
        .map(|t| {
            t.lines()
                .filter_map(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    if w.len() != 5 || w[0] != "RESULT" {
                        return None;
                    }
                    Some(((w[1].to_string(), w[2].parse::<usize>().ok()?), w[3].parse::<f64>().ok()?))
                })
                .collect()
        })
        .unwrap_or_default();

    let ctx = rshmem::init().expect("init");
    let me = ctx.my_pe();
    assert!(ctx.n_pes() >= 2, "gpu_bench needs 2 PEs");
    let g = ctx.gpu().cloned().expect("gpu_bench needs GPU PEs");
    let m = g.compile("bench", SRC, &[]).expect("compile");
    let sms = g.sm_count().unwrap() as u32;
    let src = ctx.alloc::<u8>(max_bytes).unwrap();
    let dst = ctx.alloc::<u8>(max_bytes).unwrap();
    src.fill(0x5a);
    ctx.barrier_all().unwrap();
    if std::env::var_os("GPU_BENCH_VERBOSE").is_some() {
        eprintln!(
            "PE {me}: src {:#x} dst {:#x}; PE 1 sees src at {:#x}; heap usage {:?}",
            src.addr(),
            dst.addr(),
            g.peer_address(src.addr() as u64, 1),
            ctx.heap_usage()
        );
    }
    let mut rows: Vec<(String, usize, f64, &str)> = Vec::new();
    if me == 0 {
        let st = g.new_stream().unwrap();
        let timer = g.timer().unwrap();
        // SAFETY: argument kinds match the kernels of examples/gpu/bench.cu.
        let launch = |k: &str, cfg: LaunchConfig, a: &[A]| unsafe { m.launch(k, cfg, Some(&st), a) }.unwrap();
        let time = |reps: usize, f: &dyn Fn()| -> f64 {
            f();
            st.synchronize().unwrap();
            let mut t = Vec::new();
            for _ in 0..3 {
                timer.start(&st).unwrap();
                for _ in 0..reps {
                    f();
                }
                t.push(timer.stop_ms(&st).unwrap() as f64 * 1e3 / reps as f64);
            }
            median(t)
        };
        let big = LaunchConfig::new(sms, 1024);
        let mut size = 64 << 10;
        while size <= max_bytes {
            let reps = (4usize << 30).div_ceil(size).clamp(5, 200);
            for (op, k) in [("put", "bw_put"), ("get", "bw_get")] {
                let us =
                    time(reps, &|| launch(k, big, &[A::U64(dst.addr() as u64), A::U64(src.addr() as u64), A::U64(size as u64), A::I32(1)]));
                rows.push((format!("{op}_bw"), size, size as f64 / us / 1e3, "GB/s"));
            }
            let us = time(reps, &|| g.cuda_copy_async(dst.addr() as u64, g.peer_address(src.addr() as u64, 1), size, &st).unwrap());
            rows.push(("memcpy_peer_bw".into(), size, size as f64 / us / 1e3, "GB/s"));
            let us = time(reps, &|| g.cuda_copy_async(dst.addr() as u64, src.addr() as u64, size, &st).unwrap());
            rows.push(("memcpy_local_bw".into(), size, size as f64 / us / 1e3, "GB/s"));
            size *= 4;
        }
        let n_threads = sms as usize * 2048;
        let cfg = LaunchConfig::new((n_threads / 256) as u32, 256);
        let us = time(50, &|| launch("bw_p", cfg, &[A::U64(dst.addr() as u64), A::U64(n_threads as u64), A::I32(1)]));
        rows.push(("p_scalar_bw".into(), n_threads * 8, (n_threads * 8) as f64 / us / 1e3, "GB/s"));
        let us =
            time(50, &|| launch("bw_g", cfg, &[A::U64(dst.addr() as u64), A::U64(src.addr() as u64), A::U64(n_threads as u64), A::I32(1)]));
        rows.push(("g_scalar_bw".into(), n_threads * 8, (n_threads * 8) as f64 / us / 1e3, "GB/s"));
        let iters = 2000;
        for (name, kind, bytes) in
            [("put_quiet_lat", 0, 8usize), ("put_quiet_lat", 0, 512), ("p_quiet_lat", 1, 8), ("g_lat", 2, 8), ("fetch_add_lat", 3, 8)]
        {
            let one = LaunchConfig::new(1, 1);
            let us = time(3, &|| {
                launch(
                    "lat",
                    one,
                    &[
                        A::U64(dst.addr() as u64),
                        A::U64(src.addr() as u64),
                        A::U64(bytes as u64),
                        A::I32(kind),
                        A::I32(iters),
                        A::U64(0),
                        A::U64(dst.addr_of(max_bytes - 64) as u64),
                        A::I32(1),
                    ],
                )
            });
            rows.push((name.to_string(), bytes, us / iters as f64, "us"));
        }
    }
    ctx.barrier_all().unwrap();
    if me == 0 {
        println!("rshmem device-initiated, PE 0 -> PE 1 on {} ({} blocks x 1024 threads for bandwidth)", g.device_name(), sms);
        println!("{:<16} {:>12} {:>12} {:>6} {:>12} {:>8}", "op", "bytes", "rshmem", "unit", "nvshmem", "ratio");
        for (op, size, v, unit) in &rows {
            let a = anchor.get(&(op.clone(), *size));
            let (av, ratio) = match a {
                Some(a) if unit == &"us" => (format!("{a:.3}"), format!("{:.2}", a / v)),
                Some(a) => (format!("{a:.1}"), format!("{:.2}", v / a)),
                None => ("-".into(), "-".into()),
            };
            println!("{:<16} {:>12} {:>12.3} {:>6} {:>12} {:>8}", op, size, v, unit, av, ratio);
            println!("RESULT {op} {size} {v} {unit}");
        }
        println!("(ratio > 1 means rshmem is better: higher bandwidth or lower latency)");
    }
    ctx.barrier_all().unwrap();
    ctx.finalize().unwrap();
}
