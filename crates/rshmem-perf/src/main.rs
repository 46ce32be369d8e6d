//! `rshmem-perf`: rshmem's benchmark suite, side by side with the anchor.
//!
//! The same binary plays three roles, chosen by `RSHMEM_PERF_ROLE`: unset, it is the
//! driver (flags, plan, table, files); `launch`, it starts the PEs through rshmem's
//! launcher; `pe`, it is one PE running the plan.

use clap::Parser;
use rshmem_perf::anchor::{self, Oshmem};
use rshmem_perf::backend::{
    self, Backend, JobOutput, JobSpec, RshmemPes, NPES_VAR, PER_PROCESS_VAR, PLAN_VAR, ROLE_VAR, SUITE_VAR, TIMEOUT_VAR,
};
use rshmem_perf::gpu::anchors::{GpuAnchor, Library};
use rshmem_perf::gpu::{self, COLL_PROTO_VAR};
use rshmem_perf::ops::{self, Suite};
use rshmem_perf::plan::{self, PlanSettings};
use rshmem_perf::plot::{plot, Metric};
use rshmem_perf::progress::Progress;
use rshmem_perf::report::{AnchorInfo, Report};
use rshmem_perf::rounds;
use rshmem_perf::sizes::{format_size, parse_size, sweep};
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
    /// Number of PEs (processes on this host, or threads: see --pes-per-process).
    #[arg(long, default_value_t = 2)]
    pes: usize,
    /// rshmem's PEs per process, as threads of one process (like
    /// `rshmemrun --pes-per-process`): PEs on one GPU then share its context and run at the
    /// same time. The anchors keep one PE per process.
    #[arg(long, default_value_t = 1)]
    pes_per_process: usize,
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
    /// installed), none, oshmem (CPU: Open MPI's OpenSHMEM), libshmem (CPU: rshmem's own C
    /// ABI, with its oshcc and oshrun from this binary's target folder), nvshmem, nccl
    /// (GPU). A named one that is missing is an error.
    #[arg(long, alias = "anchor", default_value = "auto")]
    anchors: String,
    /// Interleaved rounds: run each side's whole job this many times, taking turns
    /// (rshmem, the anchors, rshmem, the anchors, ...). Each figure is then the median of
    /// the rounds' medians, with their spread (min and max of the round medians; a `±`
    /// column in the table).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// After the table, one line per anchor: the rows where rshmem is faster and slower
    /// (ratio above and below 1) and the geometric mean of the ratios.
    #[arg(long)]
    cmp: bool,
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
    /// What the driver tells the copies of itself it starts.
    #[command(flatten)]
    internal: Internal,
}

/// The settings the driver passes through the environment to the copies of itself that it
/// starts ([`RshmemPes`]): the only environment this binary reads, as hidden options.
#[derive(clap::Args, Debug)]
struct Internal {
    /// The role of this copy: unset, the driver.
    #[arg(long = "internal-role", env = ROLE_VAR, hide = true, value_enum)]
    role: Option<Role>,
    /// The plan file (`launch` and `pe`).
    #[arg(long = "internal-plan", env = PLAN_VAR, hide = true)]
    plan: Option<PathBuf>,
    /// Number of PEs (`launch`).
    #[arg(long = "internal-npes", env = NPES_VAR, hide = true)]
    npes: Option<usize>,
    /// The job's time limit in seconds (`launch`).
    #[arg(long = "internal-timeout", env = TIMEOUT_VAR, hide = true)]
    job_timeout: Option<f64>,
    /// rshmem's PEs per process (`launch`).
    /// (Its own argument id: the public `--pes-per-process` of the flattened CLI has the
    /// field's name, and clap would read one value for both.)
    #[arg(id = "internal_pes_per_process", long = "internal-pes-per-process", env = PER_PROCESS_VAR, hide = true)]
    pes_per_process: Option<usize>,
    /// The suite (`launch` and `pe`) [default: cpu].
    #[arg(long = "internal-suite", env = SUITE_VAR, hide = true, value_parser = parse_suite)]
    suite: Option<Suite>,
    /// The GPU collectives' protocol that `--gpu-coll-proto` forced on the PEs (`pe`, for
    /// its INFO line).
    #[arg(long = "internal-coll-proto", env = COLL_PROTO_VAR, hide = true)]
    coll_proto: Option<String>,
}

/// The roles of the binary's copies.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Starts the PEs (this binary in the `pe` role) through rshmem's launcher.
    Launch,
    /// One PE of the job, running the plan.
    Pe,
}

fn parse_suite(s: &str) -> Result<Suite, String> {
    Suite::from_name(s).ok_or_else(|| format!("`{s}` is not a suite (cpu, gpu)"))
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
        Suite::Cpu => &["oshmem", "libshmem"],
        Suite::Gpu => &["nvshmem", "nccl"],
    };
    let mut out: Vec<(&'static str, bool)> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match name {
            "none" => return Ok(Vec::new()),
            "auto" => of_suite.iter().for_each(|n| out.push((n, false))),
            _ => match ["oshmem", "libshmem", "nvshmem", "nccl"].into_iter().find(|k| *k == name) {
                Some(k) if of_suite.contains(&k) => out.push((k, true)),
                Some(k) => {
                    return Err(format!(
                        "--anchors: {k} is not an anchor of the {} suite (those are: {})",
                        suite.name(),
                        of_suite.join(", ")
                    ))
                }
                None => return Err(format!("--anchors: unknown anchor `{name}` (auto, none, oshmem, libshmem, nvshmem, nccl)")),
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
        "libshmem" => Oshmem::detect_libshmem().map(|a| Box::new(a) as Box<dyn Backend>),
        "nvshmem" => GpuAnchor::detect(Library::Nvshmem).map(|a| Box::new(a) as Box<dyn Backend>),
        _ => GpuAnchor::detect(Library::Nccl).map(|a| Box::new(a) as Box<dyn Backend>),
    }
}

/// The driver: plans the cases, runs rshmem's PEs and the anchors, prints the table and
/// writes the files.
fn driver(cli: &Cli) -> ExitCode {
    match run_suite(cli) {
        Ok(code) => code,
        Err(e) => fail(e),
    }
}

/// Prints the operations of `suite`.
fn list_ops(suite: Suite) {
    for o in suite.ops() {
        println!("{:<26} {}", o.name, o.about);
    }
}

/// The plan settings of the flags, with the defaults of the suite and of `--quick`.
fn plan_settings(cli: &Cli, suite: Suite) -> Result<PlanSettings, String> {
    let (q, on_gpu) = (cli.quick, suite == Suite::Gpu);
    let end = cli.end.unwrap_or(match (q, on_gpu) {
        (true, false) => 1 << 20,
        (true, true) => 16 << 20,
        _ => 1 << 30,
    });
    Ok(PlanSettings {
        sizes: sweep(cli.begin.unwrap_or(8), end, cli.factor.unwrap_or(2))?,
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
    })
}

/// The anchors `wanted` (name, required), found and compiled under `out` before anything
/// runs, so that a missing one is said first: an optional one that is missing becomes a
/// note, a required one an error.
fn prepare_anchors(wanted: Vec<(&'static str, bool)>, out: &Path, notes: &mut Vec<String>) -> Result<Vec<Box<dyn Backend>>, String> {
    let mut anchors: Vec<Box<dyn Backend>> = Vec::new();
    for (name, required) in wanted {
        match detect_anchor(name).and_then(|mut a| a.prepare(out).map(|_| a)) {
            Ok(a) => anchors.push(a),
            Err(e) if !required => {
                let first = e.lines().next().unwrap_or("").to_string();
                // The whole error (a compiler's messages) goes to the log.
                eprintln!("rshmem-perf: anchor {name} unavailable, running without it: {e}");
                notes.push(format!("anchor {name} unavailable: {first}"));
            }
            Err(e) => return Err(format!("--anchors {name}: {e}")),
        }
    }
    Ok(anchors)
}

/// Writes the CSV, JSON and SVG files of `report` into `out`; false if one failed.
fn write_files(report: &Report, out: &Path) -> bool {
    let files = [
        ("results.csv", Ok(report.csv())),
        ("results.json", Ok(report.json())),
        ("latency.svg", plot(report, Metric::Latency)),
        ("bandwidth.svg", plot(report, Metric::Bandwidth)),
    ];
    let mut ok = true;
    for (name, text) in &files {
        if let Err(e) = text.as_ref().map_err(String::clone).and_then(|t| write_file(&out.join(name), t)) {
            eprintln!("rshmem-perf: {name}: {e}");
            ok = false;
        }
    }
    let names: Vec<&str> = files.iter().map(|(n, _)| *n).collect();
    println!("wrote {} in {}", names.join(", "), out.display());
    ok
}

/// The suite as the flags ask: the exit status, or what was wrong with the request.
fn run_suite(cli: &Cli) -> Result<ExitCode, String> {
    let suite = choose_suite(cli)?;
    if cli.list_ops {
        list_ops(suite);
        return Ok(ExitCode::SUCCESS);
    }
    let selection = ops::select(suite, cli.ops.as_deref())?;
    let wanted = anchor_names(&cli.anchors, suite)?;
    let settings = plan_settings(cli, suite)?;
    if cli.pes == 0 {
        return Err("--pes must be at least 1".into());
    }
    let (cases, mut notes) = plan::build(&selection, &settings, cli.pes);
    let pair_ops: Vec<&str> = selection.iter().filter(|o| o.info().pattern == ops::Pattern::Pairs).map(|o| o.name()).collect();
    if cli.pes < 2 && !pair_ops.is_empty() {
        return Err(format!("--pes {}: point-to-point operations ({}) need at least 2 PEs", cli.pes, pair_ops.join(", ")));
    }
    std::fs::create_dir_all(&cli.out).map_err(|e| format!("cannot create the results folder {}: {e}", cli.out.display()))?;
    let out = cli.out.canonicalize().unwrap_or_else(|_| cli.out.clone());
    let plan_path = out.join("plan.txt");
    write_file(&plan_path, &plan::to_text(&cases))?;
    let job = JobSpec {
        plan: plan_path,
        n_pes: cli.pes,
        heap_bytes: plan::heap_bytes(&cases, cli.pes),
        timeout: Duration::from_secs_f64(cli.timeout.max(1.0)),
    };
    if cases.is_empty() {
        notes.push("no case to run".to_string());
    }
    let anchors = prepare_anchors(if cases.is_empty() { Vec::new() } else { wanted }, &out, &mut notes)?;
    if anchors.iter().any(|a| a.label() == "oshmem") {
        if let Some(btl) = anchor::network_btl(std::env::var("RSHMEM_TRANSPORT").ok().as_deref()) {
            notes.push(format!(
                "oshmem runs with --mca btl {btl}: under RSHMEM_TRANSPORT=ucx its collectives (over its MPI layer) cross TCP too, like rshmem's"
            ));
        }
    }
    let mut ours_backend = RshmemPes::this_binary(suite)?.with_pes_per_process(cli.pes_per_process);
    if let Some(p) = &cli.gpu_coll_proto {
        ours_backend = ours_backend.with_env(COLL_PROTO_VAR, p);
    }
    let (host, load) = host_line();
    let names: Vec<String> = anchors.iter().map(|a| a.describe()).collect();
    eprintln!(
        "rshmem-perf: {} {} cases ({} to {}, {} repetitions) on {} PEs{}{}; results in {}",
        cases.len(),
        suite.name(),
        format_size(settings.sizes[0]),
        format_size(*settings.sizes.last().expect("a sweep has a size")),
        settings.reps,
        cli.pes,
        if names.is_empty() { String::new() } else { format!(", then the same on {}", names.join("; ")) },
        if cli.rounds > 1 { format!(", {} rounds taking turns", cli.rounds) } else { String::new() },
        out.display()
    );
    let n_rounds = cli.rounds as usize;
    let progress = Progress::new(cases.len() as u64 * (1 + anchors.len() as u64) * n_rounds as u64);
    // Round after round, each side's job in turn: ours[r], theirs[k][r].
    let mut ours: Vec<JobOutput> = Vec::with_capacity(n_rounds);
    let mut theirs: Vec<Vec<JobOutput>> = anchors.iter().map(|_| Vec::with_capacity(n_rounds)).collect();
    for _ in 0..n_rounds {
        ours.push(backend::run_job(&ours_backend, &job, &cases, &progress));
        for (a, t) in anchors.iter().zip(&mut theirs) {
            t.push(backend::run_job(a.as_ref(), &job, &cases, &progress));
        }
    }
    progress.finish();

    let mut code = ExitCode::SUCCESS;
    let round_of = |r: usize| if n_rounds > 1 { format!(" (round {} of {n_rounds})", r + 1) } else { String::new() };
    for (r, f) in ours.iter().enumerate().filter_map(|(r, o)| Some((r, o.failure.as_ref()?))) {
        // Its stderr was passed through as it came (`[rshmem] ...`).
        notes.push(format!("rshmem{}: {f}", round_of(r)));
        code = ExitCode::from(1);
    }
    for (a, t) in anchors.iter().zip(&theirs) {
        for (r, f) in t.iter().enumerate().filter_map(|(r, o)| Some((r, o.failure.as_ref()?))) {
            notes.push(format!("anchor {}{}: {f}", a.label(), round_of(r)));
            if cli.anchors.split(',').any(|n| n.trim() == a.label()) {
                code = ExitCode::from(1);
            }
        }
    }
    let binding = std::iter::once(rounds::binding("rshmem", &ours))
        .chain(anchors.iter().zip(&theirs).map(|(a, t)| rounds::binding(a.label(), t)))
        .flatten()
        .collect();
    let report = Report {
        n_pes: cli.pes,
        backend: rounds::describe(&ours).unwrap_or_else(|| ours_backend.describe()),
        anchors: anchors
            .iter()
            .zip(&theirs)
            .map(|(a, t)| AnchorInfo { label: a.label().to_string(), describe: rounds::describe(t).unwrap_or_else(|| a.describe()) })
            .collect(),
        host,
        load,
        rows: rounds::rows(&cases, &ours, &theirs),
        notes,
        rounds: n_rounds,
        binding,
    };
    print!("{}", report.table());
    if cli.cmp {
        for line in report.cmp_lines() {
            println!("{line}");
        }
    }
    if !write_files(&report, &out) {
        code = ExitCode::from(1);
    }
    Ok(code)
}

/// The `launch` role: starts the PEs (this binary in the `pe` role) through the launcher.
fn launch(internal: &Internal) -> ExitCode {
    let run = || -> Result<i32, String> {
        let n_pes = internal.npes.ok_or(format!("{NPES_VAR} is not set"))?;
        let timeout = internal.job_timeout.ok_or(format!("{TIMEOUT_VAR} is not set"))?;
        let plan = internal.plan.clone().ok_or(format!("{PLAN_VAR} is not set"))?;
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this program's path: {e}"))?;
        let opts = rshmem::bootstrap::launcher::LaunchOptions {
            n_pes,
            timeout: Some(Duration::from_secs_f64(timeout)),
            tag_output: false,
            program: exe.into_os_string(),
            args: Vec::new(),
            env: vec![
                (ROLE_VAR.into(), "pe".into()),
                (PLAN_VAR.into(), plan.into_os_string()),
                (SUITE_VAR.into(), internal.suite.unwrap_or(Suite::Cpu).name().into()),
            ],
            name: "rshmem-perf".into(),
            pes_per_process: internal.pes_per_process.unwrap_or(1),
            // RSHMEM_BIND_TO's policy (auto: a core each when the PEs fit), as rshmemrun.
            bind_to: None,
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
fn pe(internal: &Internal) -> ExitCode {
    let Some(plan) = &internal.plan else {
        eprintln!("rshmem-perf (pe): {PLAN_VAR} is not set");
        return ExitCode::from(1);
    };
    let run = match internal.suite.unwrap_or(Suite::Cpu) {
        Suite::Cpu => rshmem_perf::pe::main(plan),
        Suite::Gpu => rshmem_perf::gpu::pe::main(plan, internal.coll_proto.as_deref()),
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
    let cli = Cli::parse();
    match cli.internal.role {
        None => driver(&cli),
        Some(Role::Launch) => launch(&cli.internal),
        Some(Role::Pe) => pe(&cli.internal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_has_no_clashing_arguments() {
        // clap's own consistency check: two fields of one id (the flattened internal
        // arguments beside the public ones) fail here instead of sharing one value.
        Cli::command().debug_assert();
    }

    #[test]
    fn rounds_and_cmp_flags() {
        let cli = Cli::try_parse_from(["rshmem-perf"]).expect("parses");
        assert_eq!((cli.rounds, cli.cmp), (1, false), "one round, no summary by default");
        let cli = Cli::try_parse_from(["rshmem-perf", "--rounds", "3", "--cmp"]).expect("parses");
        assert_eq!((cli.rounds, cli.cmp), (3, true));
        assert!(Cli::try_parse_from(["rshmem-perf", "--rounds", "0"]).is_err());
    }

    #[test]
    fn libshmem_is_a_cpu_anchor() {
        assert_eq!(anchor_names("auto", Suite::Cpu).unwrap(), vec![("oshmem", false), ("libshmem", false)]);
        assert_eq!(anchor_names("auto,libshmem", Suite::Cpu).unwrap(), vec![("oshmem", false), ("libshmem", true)]);
        assert!(anchor_names("libshmem", Suite::Gpu).unwrap_err().contains("not an anchor of the gpu suite"));
    }

    #[test]
    fn the_launch_role_reads_its_own_pes_per_process() {
        let cli = Cli::try_parse_from(["rshmem-perf", "--pes-per-process", "1", "--internal-pes-per-process", "4"]).expect("parses");
        assert_eq!(cli.pes_per_process, 1);
        assert_eq!(cli.internal.pes_per_process, Some(4));
    }
}
