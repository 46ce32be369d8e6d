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

/// The table rows (split into words) of the operations `ops`.
fn table_rows<'a>(stdout: &'a str, ops: &[&str]) -> Vec<Vec<&'a str>> {
    stdout.lines().filter(|l| ops.contains(&l.split_whitespace().next().unwrap_or(""))).map(|l| l.split_whitespace().collect()).collect()
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
        let rows = table_rows(&run.stdout, &[op]);
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
    if open_mpi_present() {
        // Every row has the anchor's time and a ratio.
        let rows = table_rows(&run.stdout, &["put", "pingpong", "barrier"]);
        assert_eq!(rows.len(), 6, "put x4 sizes, pingpong, barrier:\n{}", run.stdout);
        for r in &rows {
            let ratio = r.last().unwrap();
            assert!(ratio.ends_with('x') && is_number(ratio.trim_end_matches('x')), "{r:?}");
        }
        assert!(out.join("anchor/oshmem_perf").exists(), "the anchor is compiled into the results folder");
        // One CSV line per case and anchor: every case has its oshmem line.
        assert_eq!(read(&out, "results.csv").lines().filter(|l| l.contains(",oshmem,")).count(), 6);
    } else {
        assert!(run.stderr.contains("anchor oshmem unavailable") && run.stderr.contains("apt-get install"), "{}", run.stderr);
        // (rshmem's own libshmem anchor may still be there.)
        assert!(run.stdout.contains("put") && !run.stdout.contains("oshmem us"), "{}", run.stdout);
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
    assert!(ops.len() >= 22, "{ops:?}");
    for rate in ["put_nbi_rate", "inc_rate", "set_rate"] {
        assert!(ops.contains(&rate), "{rate}: {ops:?}");
    }
    for op in ops {
        let rows = table_rows(&run.stdout, &[op]);
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

/// Whether Open MPI's OpenSHMEM (the `oshmem` anchor) is installed.
fn open_mpi_present() -> bool {
    let oshcc = Path::new("/usr/bin/oshcc");
    oshcc.exists() && Path::new("/usr/bin/oshrun").exists() && rshmem_perf::anchor::header_present(oshcc)
}

#[test]
fn libshmem_column_over_interleaved_rounds() {
    let out = scratch("libshmem");
    let exe_dir = Path::new(env!("CARGO_BIN_EXE_rshmem-perf")).parent().expect("bin dir").to_path_buf();
    let tools =
        rshmem_perf::anchor::rshmem_tool_dirs(&exe_dir).into_iter().any(|d| d.join("oshcc").is_file() && d.join("oshrun").is_file());
    let omp = open_mpi_present();
    let anchors = if omp { "oshmem,libshmem" } else { "libshmem" };
    let args = [
        "--ops",
        "put,add_rate,put_nbi_rate",
        "--begin",
        "8",
        "--end",
        "64",
        "--iters",
        "50",
        "--reps",
        "2",
        "--rounds",
        "2",
        "--cmp",
        "--anchors",
        anchors,
        "--out",
        out.to_str().unwrap(),
    ];
    let run = perf(&args, Duration::from_secs(180));
    if !tools {
        // Named but not built: an error that says how to build it.
        assert_eq!(run.code, Some(2), "{}", run.stderr);
        assert!(run.stderr.contains("cargo build --release -p rshmem-c"), "{}", run.stderr);
        return;
    }
    assert_eq!(run.code, Some(0), "--- stdout\n{}\n--- stderr\n{}", run.stdout, run.stderr);
    let labels: Vec<&str> = std::iter::once("rshmem").chain(anchors.split(',')).collect();
    let head = run.stdout.lines().find(|l| l.starts_with("op ")).unwrap_or_else(|| panic!("no header:\n{}", run.stdout));
    for l in &labels {
        assert!(head.contains(&format!("{l} us")) && head.contains(&format!("{l} ±")), "{l}: {head}");
    }
    assert!(head.trim_end().ends_with("libshmem ratio") || !omp, "{head}");
    // put 8..64 B (4), add_rate, put_nbi_rate 8..64 B (4): all measured on every side,
    // with a spread per side and a ratio per anchor.
    let rows = table_rows(&run.stdout, &["put", "add_rate", "put_nbi_rate"]);
    assert_eq!(rows.len(), 9, "{}", run.stdout);
    for r in &rows {
        assert_eq!(r.iter().filter(|c| c.starts_with('±')).count(), labels.len(), "{r:?}");
        assert_eq!(r.iter().filter(|c| c.ends_with('x') && is_number(c.trim_end_matches('x'))).count(), labels.len() - 1, "{r:?}");
    }
    // --cmp: one line per anchor, its counts within the rows.
    for a in &labels[1..] {
        let line =
            run.stdout.lines().find(|l| l.starts_with(&format!("cmp {a}: "))).unwrap_or_else(|| panic!("no cmp {a}:\n{}", run.stdout));
        let words: Vec<&str> = line.split_whitespace().collect();
        let (faster, slower) = (words[2].parse::<usize>().unwrap(), words[4].trim_end_matches(',').parse::<usize>().unwrap());
        assert!(faster + slower <= 9 && line.ends_with("over 9 rows") && line.contains(" geomean "), "{line}");
    }
    // The header says how each side's PEs were bound.
    let binding = run.stdout.lines().find(|l| l.starts_with("binding: ")).unwrap_or_else(|| panic!("no binding:\n{}", run.stdout));
    for l in &labels {
        assert!(binding.contains(&format!("{l} PE0 cpu")) && binding.contains("PE1 cpu"), "{l}: {binding}");
    }
    assert!(out.join("anchor/libshmem_perf").exists(), "the anchor compiled with rshmem's oshcc");
    // The files: 2 rounds, each figure within its rounds' spread.
    let csv = read(&out, "results.csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name} column"));
    let lines: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(lines.len(), 9 * (labels.len() - 1));
    for r in &lines {
        assert_eq!(r[col("rounds")], "2");
        for side in ["rshmem", "anchor"] {
            let v = |c: &str| r[col(&format!("{side}_{c}"))].parse::<f64>().unwrap_or_else(|_| panic!("{side}_{c}: {r:?}"));
            assert!(v("round_min_us") <= v("median_us") && v("median_us") <= v("round_max_us"), "{r:?}");
            assert!(v("min_us") <= v("round_min_us") && v("round_max_us") <= v("max_us"), "{r:?}");
        }
    }
    assert!(lines.iter().any(|r| r[col("anchor")] == "libshmem"));
    assert!(read(&out, "results.json").contains("\"rounds\": 2,"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn libshmem_named_but_missing_says_how_to_build_it() {
    // A copy of the binary outside any target folder finds no rshmem C tools.
    let dir = scratch("lonely");
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("rshmem-perf");
    std::fs::copy(env!("CARGO_BIN_EXE_rshmem-perf"), &copy).expect("copy the binary");
    let out = Command::new(&copy)
        .args(["--ops", "put", "--end", "8", "--anchors", "libshmem", "--out"])
        .arg(dir.join("out"))
        .output()
        .expect("run the copy");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--anchors libshmem: rshmem's oshcc") && stderr.contains("`cargo build --release -p rshmem-c`"), "{stderr}");
    // `auto` runs without it and says so.
    let auto = Command::new(&copy)
        .args(["--ops", "put", "--end", "8", "--iters", "10", "--anchors", "auto", "--out"])
        .arg(dir.join("out"))
        .output();
    let auto = auto.expect("run the copy");
    assert_eq!(auto.status.code(), Some(0), "{}", String::from_utf8_lossy(&auto.stderr));
    assert!(String::from_utf8_lossy(&auto.stderr).contains("anchor libshmem unavailable"));
    let _ = std::fs::remove_dir_all(&dir);
}
