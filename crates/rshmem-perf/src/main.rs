//! `rshmem-perf`: rshmem's benchmark suite, side by side with the anchor.
//!
//! The same binary plays three roles, chosen by `RSHMEM_PERF_ROLE`: unset, it is the
//! driver (flags, plan, table, files); `launch`, it starts the PEs through rshmem's
//! launcher; `pe`, it is one PE running the plan.

use clap::{Parser, ValueEnum};
use rshmem_perf::anchor::{Oshmem, OSHMEM_INSTALL_HINT};
use rshmem_perf::backend::{self, Backend, CpuPes, JobOutput, JobSpec, NPES_VAR, PLAN_VAR, ROLE_VAR, TIMEOUT_VAR};
use rshmem_perf::ops::{self, OPS};
use rshmem_perf::plan::{self, PlanSettings};
use rshmem_perf::progress::Progress;
use rshmem_perf::report::{AnchorCell, Report, Row};
use rshmem_perf::sizes::{format_size, parse_size, sweep};
use rshmem_perf::svg::{plot, Metric};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Which anchor to run beside rshmem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AnchorMode {
    /// The anchor of this machine's PEs when it is installed (Open MPI's OpenSHMEM for CPU PEs).
    Auto,
    /// rshmem alone.
    None,
    /// Open MPI's OpenSHMEM; an error when it is missing.
    Oshmem,
}

/// rshmem's benchmark suite: put/get, p/g, atomics, ping-pongs, barrier and collectives
/// over a sweep of sizes, side by side with Open MPI's OpenSHMEM when it is installed.
#[derive(Parser, Debug)]
#[command(name = "rshmem-perf", version, about, after_help = AFTER_HELP)]
struct Cli {
    /// The short sweep: 8 B to 1 MiB by 2x, 1000 iterations (at most 32 MiB per
    /// repetition), 50 warm-up, 5 repetitions.
    #[arg(long)]
    quick: bool,
    /// Number of PEs (CPU processes on this host).
    #[arg(long, default_value_t = 2)]
    pes: usize,
    /// Smallest message size (K, M, G suffixes) [default: 8].
    #[arg(long, value_parser = parse_size)]
    begin: Option<usize>,
    /// Largest message size [default: 1G; --quick: 1M].
    #[arg(long, value_parser = parse_size)]
    end: Option<usize>,
    /// Size step factor [default: 2].
    #[arg(long)]
    factor: Option<usize>,
    /// Iterations per repetition for small messages; large ones get fewer (at most
    /// 256 MiB, --quick 32 MiB, per repetition) [default: 1000].
    #[arg(long)]
    iters: Option<usize>,
    /// Untimed warm-up iterations [default: 100; --quick: 50].
    #[arg(long)]
    warmup: Option<usize>,
    /// Timed repetitions per case; the median is reported [default: 5].
    #[arg(long)]
    reps: Option<usize>,
    /// Comma-separated operations to run (see --list-ops) [default: all].
    #[arg(long)]
    ops: Option<String>,
    /// Side-by-side anchor.
    #[arg(long, value_enum, default_value = "auto")]
    anchor: AnchorMode,
    /// Results folder (CSV, JSON, SVG plots, the plan, the compiled anchor).
    #[arg(long, default_value = "perf-results")]
    out: PathBuf,
    /// Run on GPU PEs.
    #[arg(long)]
    gpu: bool,
    /// Time limit of each side's job, in seconds.
    #[arg(long, default_value_t = 900.0)]
    timeout: f64,
    /// List the operations and exit.
    #[arg(long)]
    list_ops: bool,
}

const AFTER_HELP: &str = "Outputs in --out: results.csv, results.json, latency.svg, bandwidth.svg, plan.txt.\n\
The ratio column is anchor time / rshmem time: above 1, rshmem is faster.";

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

fn driver(cli: Cli) -> ExitCode {
    if cli.list_ops {
        for o in OPS {
            println!("{:<16} {}", o.name, o.about);
        }
        for (name, waits) in ops::NOT_YET {
            println!("{name:<16} (not yet: rshmem has no {waits})");
        }
        return ExitCode::SUCCESS;
    }
    if cli.gpu {
        match backend::gpu_backend() {
            None => return fail(format!("--gpu: {}", backend::NO_GPU_BACKEND)),
            Some(_) => return fail("--gpu: the GPU backend is registered but this driver does not run it yet"),
        }
    }
    let selection = match ops::select(cli.ops.as_deref()) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let q = cli.quick;
    let begin = cli.begin.unwrap_or(8);
    let end = cli.end.unwrap_or(if q { 1 << 20 } else { 1 << 30 });
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
        rep_bytes: if q { 32 << 20 } else { 256 << 20 },
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

    // The anchor: found and compiled before anything runs, so a missing one is said first.
    let mut anchor: Option<Oshmem> = None;
    if cli.anchor != AnchorMode::None && !cases.is_empty() {
        match Oshmem::detect().and_then(|mut a| a.prepare(&out).map(|_| a)) {
            Ok(a) => anchor = Some(a),
            Err(e) if cli.anchor == AnchorMode::Auto => {
                let first = e.lines().next().unwrap_or("").to_string();
                eprintln!("rshmem-perf: anchor unavailable, running rshmem alone: {first}");
                notes.push(format!("anchor unavailable: {first}"));
            }
            Err(e) => return fail(format!("--anchor oshmem: {e}")),
        }
    }

    let ours_backend = match CpuPes::this_binary() {
        Ok(b) => b,
        Err(e) => return fail(e),
    };
    let (host, load) = host_line();
    let sides = 1 + anchor.is_some() as u64;
    eprintln!(
        "rshmem-perf: {} cases ({} to {}, {} repetitions) on {} PEs{}; results in {}",
        cases.len(),
        format_size(settings.sizes[0]),
        format_size(*settings.sizes.last().expect("a sweep has a size")),
        settings.reps,
        cli.pes,
        anchor.as_ref().map(|a| format!(", then the same on {}", a.describe())).unwrap_or_default(),
        out.display()
    );
    let progress = Progress::new(cases.len() as u64 * sides);
    let ours = backend::run_job(&ours_backend, &job, &cases, &progress);
    let theirs: Option<JobOutput> = anchor.as_ref().map(|a| backend::run_job(a, &job, &cases, &progress));
    progress.finish();

    let mut code = ExitCode::SUCCESS;
    if let Some(f) = &ours.failure {
        // Its stderr was passed through as it came (`[rshmem] ...`).
        notes.push(format!("rshmem: {f}"));
        code = ExitCode::from(1);
    }
    if let Some(t) = &theirs {
        if let Some(f) = &t.failure {
            notes.push(format!("anchor: {f}"));
            if cli.anchor == AnchorMode::Oshmem {
                code = ExitCode::from(1);
            }
        }
    }
    let rows: Vec<Row> = cases
        .iter()
        .map(|c| {
            let find = |o: &JobOutput| o.results.iter().find(|m| m.op == c.op.name() && m.bytes == c.bytes).map(|m| m.time);
            let anchor = match &theirs {
                None => AnchorCell::NotRun,
                Some(t) => match find(t) {
                    Some(s) => AnchorCell::Measured(s),
                    None => t
                        .skips
                        .iter()
                        .find(|(op, b, _)| op == c.op.name() && *b == c.bytes)
                        .map(|(_, _, why)| AnchorCell::Skipped(why.clone()))
                        .unwrap_or(AnchorCell::Missing),
                },
            };
            Row { op: c.op.name().into(), bytes: c.bytes, iters: c.iters, reps: c.reps, ours: find(&ours), anchor }
        })
        .collect();
    let report = Report {
        n_pes: cli.pes,
        backend: ours.info.first().cloned().unwrap_or_else(|| ours_backend.describe()),
        anchor_label: anchor.as_ref().map(|a| a.label().to_string()),
        anchor: anchor.as_ref().map(|a| theirs.as_ref().and_then(|t| t.info.first().cloned()).unwrap_or_else(|| a.describe())),
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
            env: vec![(ROLE_VAR.into(), "pe".into()), (PLAN_VAR.into(), plan.into())],
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
    match rshmem_perf::pe::main(Path::new(&plan)) {
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
