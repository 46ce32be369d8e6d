//! `rshmem-perf`: rshmem's benchmark suite, side by side with the anchor.
//!
//! The same binary plays three roles, chosen by `RSHMEM_PERF_ROLE`: unset, it is the
//! driver (flags, plan, table, files); `launch`, it starts the PEs through rshmem's
//! launcher; `pe`, it is one PE running the plan.

use clap::Parser;
use rshmem_perf::anchor::{Oshmem, OSHMEM_INSTALL_HINT};
use rshmem_perf::backend::{self, Backend, JobOutput, JobSpec, RshmemPes, NPES_VAR, PLAN_VAR, ROLE_VAR, SUITE_VAR, TIMEOUT_VAR};
use rshmem_perf::gpu::anchors::{GpuAnchor, Library};
use rshmem_perf::gpu::{self, COLL_PROTO_VAR};
use rshmem_perf::ops::{self, Suite};
use rshmem_perf::plan::{self, PlanSettings};
use rshmem_perf::progress::Progress;
use rshmem_perf::report::{AnchorCell, AnchorInfo, Report, Row};
use rshmem_perf::sizes::{format_size, parse_size, sweep};
use rshmem_perf::svg::{plot, Metric};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// rshmem's benchmark suite: put/get, p/g, atomics, ping-pongs, barrier and collectives
/// over a sweep of sizes, side by side with the anchors (Open MPI's OpenSHMEM for CPU
/// PEs; NVSHMEM and NCCL for GPU PEs) when they are installed.
#[derive(Parser, Debug)]
#[command(name = "rshmem-perf", version, about, after_help = AFTER_HELP)]
struct Cli {
    /// The short sweep: 8 B to 1 MiB (GPU: 16 MiB) by 2x, 1000 iterations (at most 32 MiB
    /// per repetition), 50 warm-up, 5 repetitions.
    #[arg(long)]
    quick: bool,
    /// Number of PEs (processes on this host).
    #[arg(long, default_value_t = 2)]
    pes: usize,
    /// Run the GPU suite on GPU PEs (the default when a GPU is present).
    #[arg(long, conflicts_with = "cpu")]
    gpu: bool,
    /// Run the CPU suite on CPU PEs even where a GPU is present.
    #[arg(long)]
    cpu: bool,
    /// Smallest message size (K, M, G suffixes) [default: 8].
    #[arg(long, value_parser = parse_size)]
    begin: Option<usize>,
    /// Largest message size [default: 1G; --quick: 1M, GPU 16M].
    #[arg(long, value_parser = parse_size)]
    end: Option<usize>,
    /// Size step factor [default: 2].
    #[arg(long)]
    factor: Option<usize>,
    /// Iterations per repetition for small messages; large ones get fewer (see
    /// --rep-bytes) [default: 1000].
    #[arg(long)]
    iters: Option<usize>,
    /// Most bytes one repetition moves: larger messages get fewer iterations, never fewer
    /// than one [default: 256M; GPU 1G; --quick 32M].
    #[arg(long, value_parser = parse_size)]
    rep_bytes: Option<usize>,
    /// Most iterations of a case whose every iteration waits on another PE's GPU
    /// (ping-pongs, barriers and collectives of the GPU suite: PEs that share a GPU take
    /// turns on it, milliseconds each) [default: 20].
    #[arg(long)]
    sync_iters: Option<usize>,
    /// Untimed warm-up iterations [default: 100; --quick: 50].
    #[arg(long)]
    warmup: Option<usize>,
    /// Timed repetitions per case; the median is reported [default: 5].
    #[arg(long)]
    reps: Option<usize>,
    /// Comma-separated operations to run (see --list-ops) [default: all].
    #[arg(long)]
    ops: Option<String>,
    /// Side-by-side anchors, comma-separated: auto (those of the suite that are
    /// installed), none, oshmem (CPU), nvshmem, nccl (GPU). A named one that is missing is
    /// an error.
    #[arg(long, alias = "anchor", default_value = "auto")]
    anchors: String,
    /// Force the protocol of rshmem's GPU collectives (auto, simple, ll, ll128, proxy): sets
    /// RSHMEM_GPU_COLL_PROTO for rshmem's PEs.
    #[arg(long, value_parser = gpu::parse_coll_proto)]
    gpu_coll_proto: Option<String>,
    /// Results folder (CSV, JSON, SVG plots, the plan, the compiled anchors).
    #[arg(long, default_value = "perf-results")]
    out: PathBuf,
    /// Time limit of each side's job, in seconds (a net against hangs: the full default sweep
    /// took Open MPI's OpenSHMEM over 15 minutes on 2 cores).
    #[arg(long, default_value_t = 3600.0)]
    timeout: f64,
    /// List the operations (of the suite chosen) and exit.
    #[arg(long)]
    list_ops: bool,
}

const AFTER_HELP: &str = "Outputs in --out: results.csv, results.json, latency.svg, bandwidth.svg, plan.txt.\n\
The ratio columns are anchor time / rshmem time: above 1, rshmem is faster.";

fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("rshmem-perf: {msg}");
    ExitCode::from(2)
}

fn host_line() -> (String, String) {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_string();
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| c.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split_once(':')).map(|(_, m)| m.trim().to_string()))
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let load =
        std::fs::read_to_string("/proc/loadavg").map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")).unwrap_or_default();
    (format!("{host}, {cores} cores, {cpu}"), load)
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The suite to run: `--gpu`, `--cpu`, or GPU when this machine has one.
fn choose_suite(cli: &Cli) -> Result<Suite, String> {
    if cli.cpu {
        return Ok(Suite::Cpu);
    }
    if cli.gpu && cli.list_ops {
        // Listing needs no GPU.
        return Ok(Suite::Gpu);
    }
    match (cli.gpu, gpu::unavailable()) {
        (true, Some(why)) => Err(format!("--gpu: {why} (without --gpu, rshmem-perf runs the CPU suite)")),
        (_, None) => Ok(Suite::Gpu),
        (false, Some(_)) => Ok(Suite::Cpu),
    }
}

/// The anchors `--anchors` names for `suite`: (name, required).
fn anchor_names(list: &str, suite: Suite) -> Result<Vec<(&'static str, bool)>, String> {
    let of_suite: &[&'static str] = match suite {
        Suite::Cpu => &["oshmem"],
        Suite::Gpu => &["nvshmem", "nccl"],
    };
    let mut out: Vec<(&'static str, bool)> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match name {
            "none" => return Ok(Vec::new()),
            "auto" => of_suite.iter().for_each(|n| out.push((n, false))),
            _ => match ["oshmem", "nvshmem", "nccl"].into_iter().find(|k| *k == name) {
                Some(k) if of_suite.contains(&k) => out.push((k, true)),
                Some(k) => {
                    return Err(format!(
                        "--anchors: {k} is not an anchor of the {} suite (those are: {})",
                        suite.name(),
                        of_suite.join(", ")
                    ))
                }
                None => return Err(format!("--anchors: unknown anchor `{name}` (auto, none, oshmem, nvshmem, nccl)")),
            },
        }
    }
    let mut seen: Vec<(&'static str, bool)> = Vec::new();
    for (n, req) in out {
        match seen.iter_mut().find(|(s, _)| *s == n) {
            Some(e) => e.1 |= req,
            None => seen.push((n, req)),
        }
    }
    Ok(seen)
}

fn detect_anchor(name: &str) -> Result<Box<dyn Backend>, String> {
    match name {
        "oshmem" => Oshmem::detect().map(|a| Box::new(a) as Box<dyn Backend>),
        "nvshmem" => GpuAnchor::detect(Library::Nvshmem).map(|a| Box::new(a) as Box<dyn Backend>),
        _ => GpuAnchor::detect(Library::Nccl).map(|a| Box::new(a) as Box<dyn Backend>),
    }
}

fn driver(cli: Cli) -> ExitCode {
    let suite = match choose_suite(&cli) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    if cli.list_ops {
        for o in suite.ops() {
            println!("{:<26} {}", o.name, o.about);
        }
        if suite == Suite::Cpu {
            for (name, waits) in ops::NOT_YET {
                println!("{name:<26} (not yet: rshmem has no {waits})");
            }
        }
        return ExitCode::SUCCESS;
    }
    let selection = match ops::select(suite, cli.ops.as_deref()) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let wanted = match anchor_names(&cli.anchors, suite) {
        Ok(w) => w,
        Err(e) => return fail(e),
    };
    let (q, on_gpu) = (cli.quick, suite == Suite::Gpu);
    let begin = cli.begin.unwrap_or(8);
    let end = cli.end.unwrap_or(match (q, on_gpu) {
        (true, false) => 1 << 20,
        (true, true) => 16 << 20,
        _ => 1 << 30,
    });
    let factor = cli.factor.unwrap_or(2);
    let sizes = match sweep(begin, end, factor) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let settings = PlanSettings {
        sizes,
        iters: cli.iters.unwrap_or(1000).max(1),
        warmup: cli.warmup.unwrap_or(if q { 50 } else { 100 }),
        reps: cli.reps.unwrap_or(5).max(1),
        rep_bytes: cli.rep_bytes.unwrap_or(match (q, on_gpu) {
            (true, _) => 32 << 20,
            (false, true) => 1 << 30,
            (false, false) => 256 << 20,
        }),
        sync_iters: cli.sync_iters.unwrap_or(if on_gpu { 20 } else { usize::MAX }).max(1),
        max_case_heap: if on_gpu { plan::MAX_GPU_CASE_HEAP } else { plan::MAX_CASE_HEAP },
    };
    let (cases, mut notes) = plan::build(&selection.ops, &settings, cli.pes);
    if cli.pes == 0 {
        return fail("--pes must be at least 1");
    }
    let pair_ops: Vec<&str> = selection.ops.iter().filter(|o| o.info().pattern == ops::Pattern::Pairs).map(|o| o.name()).collect();
    if cli.pes < 2 && !pair_ops.is_empty() {
        return fail(format!("--pes {}: point-to-point operations ({}) need at least 2 PEs", cli.pes, pair_ops.join(", ")));
    }
    if let Err(e) = std::fs::create_dir_all(&cli.out) {
        return fail(format!("cannot create the results folder {}: {e}", cli.out.display()));
    }
    let out = cli.out.canonicalize().unwrap_or_else(|_| cli.out.clone());
    let plan_path = out.join("plan.txt");
    if let Err(e) = write_file(&plan_path, &plan::to_text(&cases)) {
        return fail(e);
    }
    let job = JobSpec {
        plan: plan_path,
        n_pes: cli.pes,
        heap_bytes: plan::heap_bytes(&cases, cli.pes),
        timeout: Duration::from_secs_f64(cli.timeout.max(1.0)),
    };
    if cases.is_empty() {
        notes.push("no case to run".to_string());
    }

    // The anchors: found and compiled before anything runs, so a missing one is said first.
    let mut anchors: Vec<Box<dyn Backend>> = Vec::new();
    for (name, required) in if cases.is_empty() { Vec::new() } else { wanted } {
        match detect_anchor(name).and_then(|mut a| a.prepare(&out).map(|_| a)) {
            Ok(a) => anchors.push(a),
            Err(e) if !required => {
                let first = e.lines().next().unwrap_or("").to_string();
                // The whole error (a compiler's messages) goes to the log.
                eprintln!("rshmem-perf: anchor {name} unavailable, running without it: {e}");
                notes.push(format!("anchor {name} unavailable: {first}"));
            }
            Err(e) => return fail(format!("--anchors {name}: {e}")),
        }
    }

    let mut ours_backend = match RshmemPes::this_binary(suite) {
        Ok(b) => b,
        Err(e) => return fail(e),
    };
    if let Some(p) = &cli.gpu_coll_proto {
        ours_backend = ours_backend.with_env(COLL_PROTO_VAR, p);
    }
    let (host, load) = host_line();
    let sides = 1 + anchors.len() as u64;
    let names: Vec<String> = anchors.iter().map(|a| a.describe()).collect();
    eprintln!(
        "rshmem-perf: {} {} cases ({} to {}, {} repetitions) on {} PEs{}; results in {}",
        cases.len(),
        suite.name(),
        format_size(settings.sizes[0]),
        format_size(*settings.sizes.last().expect("a sweep has a size")),
        settings.reps,
        cli.pes,
        if names.is_empty() { String::new() } else { format!(", then the same on {}", names.join("; ")) },
        out.display()
    );
    let progress = Progress::new(cases.len() as u64 * sides);
    let ours = backend::run_job(&ours_backend, &job, &cases, &progress);
    let theirs: Vec<JobOutput> = anchors.iter().map(|a| backend::run_job(a.as_ref(), &job, &cases, &progress)).collect();
    progress.finish();

    let mut code = ExitCode::SUCCESS;
    if let Some(f) = &ours.failure {
        // Its stderr was passed through as it came (`[rshmem] ...`).
        notes.push(format!("rshmem: {f}"));
        code = ExitCode::from(1);
    }
    for (a, t) in anchors.iter().zip(&theirs) {
        if let Some(f) = &t.failure {
            notes.push(format!("anchor {}: {f}", a.label()));
            if cli.anchors.split(',').any(|n| n.trim() == a.label()) {
                code = ExitCode::from(1);
            }
        }
    }
    let find = |o: &JobOutput, op: &str, bytes: usize| o.results.iter().find(|m| m.op == op && m.bytes == bytes).map(|m| m.time);
    let rows: Vec<Row> = cases
        .iter()
        .map(|c| {
            let (op, bytes) = (c.op.name(), c.bytes);
            let cells = theirs
                .iter()
                .map(|t| match find(t, op, bytes) {
                    Some(s) => AnchorCell::Measured(s),
                    None => t
                        .skips
                        .iter()
                        .find(|(o, b, _)| o == op && *b == bytes)
                        .map(|(_, _, why)| AnchorCell::Skipped(why.clone()))
                        .unwrap_or(AnchorCell::Missing),
                })
                .collect();
            Row { op: op.into(), bytes, iters: c.iters, reps: c.reps, ours: find(&ours, op, bytes), anchors: cells }
        })
        .collect();
    let report = Report {
        n_pes: cli.pes,
        backend: ours.info.first().cloned().unwrap_or_else(|| ours_backend.describe()),
        anchors: anchors
            .iter()
            .zip(&theirs)
            .map(|(a, t)| AnchorInfo { label: a.label().to_string(), describe: t.info.first().cloned().unwrap_or_else(|| a.describe()) })
            .collect(),
        host,
        load,
        rows,
        left_out: selection.left_out.iter().map(|(n, w)| (n.to_string(), w.to_string())).collect(),
        notes,
    };
    print!("{}", report.table());
    let files = [
        ("results.csv", report.csv()),
        ("results.json", report.json()),
        ("latency.svg", plot(&report, Metric::Latency)),
        ("bandwidth.svg", plot(&report, Metric::Bandwidth)),
    ];
    for (name, text) in &files {
        if let Err(e) = write_file(&out.join(name), text) {
            eprintln!("rshmem-perf: {e}");
            code = ExitCode::from(1);
        }
    }
    let names: Vec<&str> = files.iter().map(|(n, _)| *n).collect();
    println!("wrote {} in {}", names.join(", "), out.display());
    code
}

/// The `launch` role: starts the PEs (this binary in the `pe` role) through the launcher.
fn launch() -> ExitCode {
    let var = |k: &str| std::env::var(k).map_err(|_| format!("{k} is not set"));
    let run = || -> Result<i32, String> {
        let n_pes: usize = var(NPES_VAR)?.parse().map_err(|e| format!("{NPES_VAR}: {e}"))?;
        let timeout: f64 = var(TIMEOUT_VAR)?.parse().map_err(|e| format!("{TIMEOUT_VAR}: {e}"))?;
        let plan = var(PLAN_VAR)?;
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this program's path: {e}"))?;
        let opts = rshmem::bootstrap::launcher::LaunchOptions {
            n_pes,
            timeout: Some(Duration::from_secs_f64(timeout)),
            tag_output: false,
            program: exe.into_os_string(),
            args: Vec::new(),
            env: vec![
                (ROLE_VAR.into(), "pe".into()),
                (PLAN_VAR.into(), plan.into()),
                (SUITE_VAR.into(), std::env::var(SUITE_VAR).unwrap_or_else(|_| "cpu".into()).into()),
            ],
            name: "rshmem-perf".into(),
        };
        rshmem::bootstrap::launcher::run(&opts).map_err(|e| format!("launcher: {e}"))
    };
    match run() {
        Ok(0) => ExitCode::SUCCESS,
        Ok(c) => ExitCode::from(c.clamp(1, 255) as u8),
        Err(e) => {
            eprintln!("rshmem-perf (launch): {e}");
            ExitCode::from(1)
        }
    }
}

/// The `pe` role: one PE of the job.
fn pe() -> ExitCode {
    let Ok(plan) = std::env::var(PLAN_VAR) else {
        eprintln!("rshmem-perf (pe): {PLAN_VAR} is not set");
        return ExitCode::from(1);
    };
    let suite = std::env::var(SUITE_VAR).ok().and_then(|s| Suite::from_name(&s)).unwrap_or(Suite::Cpu);
    let run = match suite {
        Suite::Cpu => rshmem_perf::pe::main(Path::new(&plan)),
        Suite::Gpu => rshmem_perf::gpu::pe::main(Path::new(&plan)),
    };
    match run {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rshmem-perf (pe): {e}");
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    match std::env::var(ROLE_VAR).as_deref() {
        Ok("launch") => launch(),
        Ok("pe") => pe(),
        Ok(other) => fail(format!("{ROLE_VAR}={other} is not a role (launch, pe); unset it to run the suite")),
        Err(_) => {
            let _ = OSHMEM_INSTALL_HINT;
            driver(Cli::parse())
        }
    }
}
