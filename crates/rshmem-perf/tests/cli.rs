//! The `rshmem-perf` binary end to end: it launches its own PEs, prints the table and
//! writes its files. These tests check behaviour (rows, numbers, files), never timings.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs rshmem-perf with `args`, killing it after `limit`.
fn perf(args: &[&str], limit: Duration) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rshmem-perf"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start rshmem-perf");
    let start = Instant::now();
    while child.try_wait().expect("poll").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("collect output");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rshmem-perf-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn is_number(s: &str) -> bool {
    s.parse::<f64>().is_ok_and(|v| v.is_finite() && v > 0.0)
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name} not written in {}: {e}", dir.display()))
}

const SIZES: [&str; 14] =
    ["8 B", "16 B", "32 B", "64 B", "128 B", "256 B", "512 B", "1 KiB", "2 KiB", "4 KiB", "8 KiB", "16 KiB", "32 KiB", "64 KiB"];

#[test]
fn quick_put_get_writes_table_and_files() {
    let out = scratch("quick");
    let run = perf(
        &["--quick", "--anchor", "none", "--ops", "put,get", "--end", "64K", "--out", out.to_str().unwrap()],
        Duration::from_secs(120),
    );
    assert_eq!(run.code, Some(0), "rshmem-perf failed\n--- stdout\n{}\n--- stderr\n{}", run.stdout, run.stderr);

    // The table: one row per (op, size) with a latency and a bandwidth.
    for op in ["put", "get"] {
        let rows: Vec<Vec<&str>> =
            run.stdout.lines().filter(|l| l.split_whitespace().next() == Some(op)).map(|l| l.split_whitespace().collect()).collect();
        assert_eq!(rows.len(), SIZES.len(), "{op} rows:\n{}", run.stdout);
        for (row, size) in rows.iter().zip(SIZES) {
            assert_eq!(format!("{} {}", row[1], row[2]), size, "{row:?}");
            assert!(is_number(row[3]) && is_number(row[4]), "latency and bandwidth of {row:?}");
        }
    }
    assert!(!run.stdout.contains("ratio ="), "no anchor columns with --anchor none");

    // CSV: a header and one line of numbers per case.
    let csv = read(&out, "results.csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name} column"));
    let (op, bytes, us, gbps) = (col("op"), col("bytes"), col("rshmem_median_us"), col("rshmem_gbps"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2 * SIZES.len());
    for r in &rows {
        assert_eq!(r.len(), header.len());
        assert!(["put", "get"].contains(&r[op]));
        assert!(r[bytes].parse::<usize>().is_ok_and(|b| (8..=65536).contains(&b)));
        assert!(is_number(r[us]) && is_number(r[gbps]), "{r:?}");
    }

    // JSON: the cases with rshmem's figures.
    let json = read(&out, "results.json");
    assert!(json.contains("\"pes\": 2"));
    assert_eq!(json.matches("\"median_us\": ").count(), 2 * SIZES.len());
    assert!(!json.contains("NaN"));

    // The plots: a panel per operation, titled by it, with rshmem's curve.
    for name in ["latency.svg", "bandwidth.svg"] {
        let svg = read(&out, name);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{name}");
        let texts: Vec<&str> =
            svg.split("<text").skip(1).filter_map(|t| t.split_once('>')?.1.split_once("</text>").map(|(x, _)| x.trim())).collect();
        assert!(texts.contains(&"put") && texts.contains(&"get"), "{name}: a panel per operation: {texts:?}");
        assert_eq!(texts.iter().filter(|t| **t == "rshmem").count(), 2, "{name}: rshmem's curve in each panel's legend");
        assert!(svg.matches("<polyline").count() >= 2, "{name}");
    }
    assert!(read(&out, "plan.txt").contains("case put 65536 "));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn anchor_side_by_side_or_said_unavailable() {
    let out = scratch("anchor");
    let run = perf(
        &["--ops", "put,pingpong,barrier", "--end", "64", "--iters", "20", "--warmup", "2", "--reps", "3", "--out", out.to_str().unwrap()],
        Duration::from_secs(120),
    );
    assert_eq!(run.code, Some(0), "--- stdout\n{}\n--- stderr\n{}", run.stdout, run.stderr);
    let oshcc = Path::new("/usr/bin/oshcc");
    let anchored = oshcc.exists() && Path::new("/usr/bin/oshrun").exists() && rshmem_perf::anchor::header_present(oshcc);
    if anchored {
        // Every row has the anchor's time and a ratio.
        let rows: Vec<Vec<&str>> = run
            .stdout
            .lines()
            .filter(|l| ["put", "pingpong", "barrier"].contains(&l.split_whitespace().next().unwrap_or("")))
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(rows.len(), 6, "put x4 sizes, pingpong, barrier:\n{}", run.stdout);
        for r in &rows {
            let ratio = r.last().unwrap();
            assert!(ratio.ends_with('x') && is_number(ratio.trim_end_matches('x')), "{r:?}");
        }
        assert!(out.join("anchor/oshmem_perf").exists(), "the anchor is compiled into the results folder");
        assert!(read(&out, "results.csv").lines().skip(1).all(|l| l.contains(",oshmem,")));
    } else {
        assert!(run.stderr.contains("anchor oshmem unavailable") && run.stderr.contains("apt-get install"), "{}", run.stderr);
        assert!(run.stdout.contains("put") && !run.stdout.contains("ratio ="));
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn every_operation_runs_and_checks_its_data() {
    // 3 PEs: one pair plus an idle PE for point-to-point cases, an odd team for the
    // collectives. Each PE checks the data each case moved and fails the job otherwise.
    let out = scratch("all");
    let run = perf(
        &[
            "--pes",
            "3",
            "--anchor",
            "none",
            "--begin",
            "8",
            "--end",
            "512",
            "--factor",
            "8",
            "--iters",
            "20",
            "--warmup",
            "2",
            "--reps",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(run.code, Some(0), "--- stdout\n{}\n--- stderr\n{}", run.stdout, run.stderr);
    let listed = perf(&["--list-ops"], Duration::from_secs(30));
    let ops: Vec<&str> = listed.stdout.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert!(ops.len() >= 19, "{ops:?}");
    for op in ops {
        let rows: Vec<Vec<&str>> =
            run.stdout.lines().filter(|l| l.split_whitespace().next() == Some(op)).map(|l| l.split_whitespace().collect()).collect();
        assert!(!rows.is_empty(), "no row for {op}:\n{}", run.stdout);
        for r in rows {
            let us = if r[1] == "-" { r[2] } else { r[3] };
            assert!(is_number(us), "{op}: {r:?}");
        }
    }
}

#[test]
fn refuses_bad_requests_clearly() {
    // Without a CUDA driver, --gpu says so (and nothing is written); with one it is the default.
    let gpu = perf(&["--gpu", "--out", "/nonexistent/never-written"], Duration::from_secs(30));
    if !Path::new("/usr/lib/x86_64-linux-gnu/libcuda.so.1").exists() && !Path::new("/usr/lib64/libcuda.so.1").exists() {
        assert_eq!(gpu.code, Some(2));
        assert!(gpu.stderr.contains("--gpu: no CUDA driver (libcuda)") && gpu.stderr.contains("CPU suite"), "{}", gpu.stderr);
        // The default is then the CPU suite.
        let listed = perf(&["--list-ops"], Duration::from_secs(30));
        assert!(listed.stdout.lines().any(|l| l.starts_with("put_nbi")), "{}", listed.stdout);
    }
    let gpu_ops = perf(&["--gpu", "--list-ops"], Duration::from_secs(30));
    assert_eq!(gpu_ops.code, Some(0));
    for op in ["put_bw", "get_bw_thread", "put_lat", "signal_pingpong", "barrier_on_stream", "reduce_scatter_on_stream"] {
        assert!(gpu_ops.stdout.lines().any(|l| l.split_whitespace().next() == Some(op)), "{op}: {}", gpu_ops.stdout);
    }
    let cpu_ops = perf(&["--cpu", "--ops", "put_bw", "--anchors", "none"], Duration::from_secs(30));
    assert_eq!(cpu_ops.code, Some(2));
    assert!(cpu_ops.stderr.contains("unknown cpu operation `put_bw`"), "{}", cpu_ops.stderr);

    let anchor = perf(&["--cpu", "--anchors", "nvshmem", "--ops", "put"], Duration::from_secs(30));
    assert_eq!(anchor.code, Some(2));
    assert!(anchor.stderr.contains("nvshmem is not an anchor of the cpu suite"), "{}", anchor.stderr);
    let anchor = perf(&["--anchors", "mpich"], Duration::from_secs(30));
    assert_eq!(anchor.code, Some(2));
    assert!(anchor.stderr.contains("unknown anchor `mpich`"), "{}", anchor.stderr);

    let proto = perf(&["--gpu-coll-proto", "fast"], Duration::from_secs(30));
    assert_eq!(proto.code, Some(2));
    assert!(proto.stderr.contains("ll128"), "{}", proto.stderr);

    let ops = perf(&["--ops", "put,warp_drive", "--anchor", "none"], Duration::from_secs(30));
    assert_eq!(ops.code, Some(2));
    assert!(ops.stderr.contains("warp_drive") && ops.stderr.contains("put_nbi"), "{}", ops.stderr);

    let pes = perf(&["--pes", "1", "--ops", "put", "--anchor", "none"], Duration::from_secs(30));
    assert_eq!(pes.code, Some(2));
    assert!(pes.stderr.contains("at least 2 PEs"), "{}", pes.stderr);

    let size = perf(&["--end", "12Q"], Duration::from_secs(30));
    assert_eq!(size.code, Some(2));
    assert!(size.stderr.contains("12Q"), "{}", size.stderr);
}
