//! Shared harness for multi-PE tests: runs a test program (tests/pe, built as an example)
//! as N PEs through the real launcher, under a timeout, and reads the verdict lines it
//! printed ([`verdict`], written by tests/support's `Check`).
#![allow(dead_code)]

#[path = "../support/verdict.rs"]
pub mod verdict;

pub use verdict::{Line, Summary, Verdict};

pub mod mpirun;
use std::path::PathBuf;
use std::process::{Command, Output};

/// Path of the launcher built with this package.
pub fn rshmemrun() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rshmemrun"))
}

/// Path of an example program (`cargo test` builds examples before running tests).
pub fn example(name: &str) -> PathBuf {
    let p = rshmemrun().parent().expect("target dir").join("examples").join(name);
    assert!(p.exists(), "example {} not built: run the whole suite with `cargo test` (it builds the examples)", p.display());
    p
}

/// A finished job.
pub struct Job {
    /// Launcher exit code (-1 if killed by a signal).
    pub code: i32,
    /// Everything on stdout.
    pub stdout: String,
    /// Everything on stderr.
    pub stderr: String,
}

impl Job {
    /// Panics with the job's output unless it exited 0.
    pub fn assert_ok(&self) -> &Self {
        assert_eq!(self.code, 0, "job failed with {}\n--- stdout\n{}\n--- stderr\n{}", self.code, self.stdout, self.stderr);
        self
    }

    /// The verdict lines the job printed ([`verdict`]), in order; other lines are skipped.
    pub fn lines(&self) -> Vec<Line> {
        self.stdout.lines().filter_map(verdict::parse).collect()
    }

    /// The check lines of the job.
    pub fn verdicts(&self) -> Vec<Verdict> {
        self.lines().into_iter().filter_map(|l| if let Line::Check(v) = l { Some(v) } else { None }).collect()
    }

    /// Check `name` of `pe`, its lines merged (a program may print one line per
    /// evaluation): passed when all passed, the counts summed, the first failure's
    /// detail or else the last one's. None when the PE printed no such check.
    pub fn find(&self, pe: usize, name: &str) -> Option<Verdict> {
        let mut lines = self.verdicts().into_iter().filter(|v| v.pe == pe && v.name == name);
        let mut merged = lines.next()?;
        for v in lines {
            merged.count += v.count;
            if merged.passed {
                merged.detail = v.detail;
            }
            merged.passed &= v.passed;
        }
        Some(merged)
    }

    /// Check `name` of `pe` ([`Job::find`]); panics, listing the PE's checks, when the PE
    /// printed none of that name.
    pub fn check(&self, pe: usize, name: &str) -> Verdict {
        self.find(pe, name).unwrap_or_else(|| {
            let names: Vec<String> = self.verdicts().into_iter().filter(|v| v.pe == pe).map(|v| v.name).collect();
            panic!("{}", self.report(&[format!("PE {pe} printed no check `{name}`; its checks: {}", names.join(" "))]))
        })
    }

    /// Panics unless the job exited 0 and each of PEs `0..n` printed its summary line,
    /// with no failed check and as many check lines as it says; no check of any PE may
    /// have failed. The message lists the failed checks with their details.
    pub fn assert_passed(&self, n: usize) -> &Self {
        let lines = self.lines();
        let mut problems = Vec::new();
        if self.code != 0 {
            problems.push(format!("the job exited with {}", self.code));
        }
        for pe in 0..n {
            let checks = lines.iter().filter(|l| matches!(l, Line::Check(v) if v.pe == pe)).count();
            let summaries: Vec<&Summary> =
                lines.iter().filter_map(|l| if let Line::Summary(s) = l { Some(s) } else { None }).filter(|s| s.pe == pe).collect();
            match summaries[..] {
                [s] if s.failed > 0 => problems.push(format!("PE {pe}: {} of its {} checks failed", s.failed, s.checks)),
                [s] if s.checks != checks => problems.push(format!("PE {pe} says it printed {} check lines; {checks} were read", s.checks)),
                [_] => {}
                [] => problems.push(format!("PE {pe} printed no summary line")),
                _ => problems.push(format!("PE {pe} printed {} summary lines", summaries.len())),
            }
        }
        let failed = lines.iter().filter(|l| matches!(l, Line::Check(v) if !v.passed)).count();
        if failed > 0 {
            problems.push(format!("{failed} check lines failed"));
        }
        assert!(problems.is_empty(), "{}", self.report(&problems));
        self
    }

    /// Panics unless every PE of `pes` passed every check of `names` ([`Job::find`]).
    pub fn assert_checks<S: AsRef<str>>(&self, pes: impl IntoIterator<Item = usize>, names: &[S]) -> &Self {
        let mut problems = Vec::new();
        for pe in pes {
            for name in names {
                match self.find(pe, name.as_ref()) {
                    Some(v) if v.passed => {}
                    Some(v) => problems.push(format!("PE {pe}: {} failed: {}", v.name, v.detail)),
                    None => problems.push(format!("PE {pe} did not check {}", name.as_ref())),
                }
            }
        }
        if problems.len() > 40 {
            let more = problems.len() - 40;
            problems.truncate(40);
            problems.push(format!("... and {more} more"));
        }
        assert!(problems.is_empty(), "{}", self.report(&problems));
        self
    }

    /// [`Job::assert_passed`] for `n` PEs and [`Job::assert_checks`] of `names` on every one.
    pub fn assert_all(&self, n: usize, names: &[impl AsRef<str>]) -> &Self {
        self.assert_passed(n).assert_checks(0..n, names)
    }

    /// Panics unless every one of the `n` PEs of `pe_amo stress OPS` found its counters
    /// equal to the model of `n` PEs x `ops` operations.
    pub fn assert_amo_stress(&self, n: usize, ops: u64) -> &Self {
        self.assert_all(n, &["stress.counters", "stress.or_bits_stay"]);
        for pe in 0..n {
            let detail = self.check(pe, "stress.counters").detail;
            assert!(detail.contains(&format!("counters equal the model of {n} PEs x {ops} ops")), "PE {pe}: {detail}");
        }
        self
    }

    /// Panics unless every one of the `n` PEs of `pe_signal order ROUNDS` saw each of its
    /// `rounds` signals with the right value and with all of its data.
    pub fn assert_signal_order(&self, n: usize, rounds: u64) -> &Self {
        self.assert_all(n, &["order.signal_value", "order.data_with_signal"]);
        for pe in 0..n {
            assert_eq!(self.check(pe, "order.data_with_signal").count, rounds, "PE {pe} checked every round");
        }
        self
    }

    /// Panics unless every one of the `n` PEs of `pe_stress ROUNDS` found every get equal
    /// to the model and saw the fence and quiet orders hold in each of the `rounds`.
    pub fn assert_stress(&self, n: usize, rounds: u64) -> &Self {
        let verify = ["verify.words", "verify.bytes", "verify.all_words", "verify.all_bytes"];
        self.assert_all(n, &verify).assert_checks(0..n, &["fence.flag_implies_data", "quiet.flag_implies_data"]);
        for pe in 0..n {
            assert_eq!(self.check(pe, "fence.flag_implies_data").count, rounds, "PE {pe}: a fenced message every round");
            assert_eq!(self.check(pe, "quiet.flag_implies_data").count, 2 * rounds, "PE {pe}: two quieted puts every round");
        }
        self
    }

    /// A failure message: `problems`, the failed checks with their details, the exit
    /// status, and the tails of stderr and of what stdout printed besides verdicts.
    pub fn report(&self, problems: &[String]) -> String {
        let mut out = format!("{}\n--- exit status {}\n", problems.join("\n"), self.code);
        let failed: Vec<String> = self.verdicts().into_iter().filter(|v| !v.passed).map(|v| v.to_string()).collect();
        if !failed.is_empty() {
            out += &format!("--- failed checks ({})\n{}\n", failed.len(), tail(&failed, 40));
        }
        let summaries: Vec<String> = self.stdout.lines().filter(|l| l.starts_with(verdict::SUMMARY)).map(String::from).collect();
        out += &format!("--- summaries\n{}\n", summaries.join("\n"));
        let other: Vec<String> = self.stdout.lines().filter(|l| verdict::parse(l).is_none()).map(String::from).collect();
        out += &format!("--- stdout besides verdicts (last 40 lines)\n{}\n", tail(&other, 40));
        let err: Vec<String> = self.stderr.lines().map(String::from).collect();
        out + &format!("--- stderr (last 60 lines)\n{}", tail(&err, 60))
    }
}

/// The last `n` of `lines`, joined.
fn tail(lines: &[String], n: usize) -> String {
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The entry names of the library's type tables (`rshmem::types`), from which the tests
/// derive the checks they expect of the programs that walk the tables.
pub mod tables {
    macro_rules! names {
        ($(($name:ident, $t:ty)),* $(,)?) => { &[$(stringify!($name)),*] };
    }
    /// `rshmem::rma_types!`.
    pub const RMA: &[&str] = rshmem::rma_types!(names);
    /// `rshmem::sync_types!`.
    pub const SYNC: &[&str] = rshmem::sync_types!(names);
    /// `rshmem::amo_standard_types!`.
    pub const AMO_STANDARD: &[&str] = rshmem::amo_standard_types!(names);
    /// `rshmem::amo_bitwise_types!`.
    pub const AMO_BITWISE: &[&str] = rshmem::amo_bitwise_types!(names);
    /// `rshmem::amo_extended_types!` (the types the extended AMOs add to the standard ones).
    pub const AMO_EXTENDED: &[&str] = rshmem::amo_extended_types!(names);
}

/// The forms tests/pe/rma.rs checks for every type: those of any element type...
const RMA_BULK: &[&str] = &["put", "get", "put_nbi", "get_nbi", "self", "iput", "iget", "zero_length"];
/// ...and those of word types.
const RMA_WORD: &[&str] = &["p", "g", "p_self"];

/// The checks every PE of tests/pe/rma.rs makes: each form for every type of the
/// `rma_types!` table and the sized forms (128 bits: no word forms), the mem forms and
/// `ptr`. The pe_rma runs of the UCX, PMIx and Slurm tests expect them too.
pub fn rma_checks() -> Vec<String> {
    let words: Vec<&str> = tables::RMA.iter().copied().chain(["sized8", "sized16", "sized32", "sized64"]).collect();
    let mut all = names(&[&words, RMA_BULK]);
    all.extend(names(&[&words, RMA_WORD]));
    all.extend(names(&[&["sized128", "i128"], RMA_BULK]));
    all.extend(names(&[&["mem"], &["putmem", "getmem", "putmem_nbi", "getmem_nbi", "iputmem", "igetmem"]]));
    all.extend(names(&[&["ptr"], &["self", "out_of_range", "stack_address", "peer"]]));
    all
}

/// The checks every PE of `pe_amo table` makes: one per entry of the library's AMO
/// tables (the extended AMOs: the standard types and those `amo_extended_types!` adds).
/// The pe_amo runs of the UCX, PMIx and Slurm tests expect them too.
pub fn amo_table_checks() -> Vec<String> {
    let extended: Vec<&str> = tables::AMO_STANDARD.iter().chain(tables::AMO_EXTENDED).copied().collect();
    let mut all = names(&[&["standard"], tables::AMO_STANDARD]);
    all.extend(names(&[&["bitwise"], tables::AMO_BITWISE]));
    all.extend(names(&[&["extended"], &extended]));
    all
}

/// The checks every PE of tests/pe/coll.rs makes (on every team it is in): each
/// collective, the reduction for every operator of every type of the library's reduction
/// table, the typed forms; with `expect-hier`, the `hier.*` checks too.
pub fn coll_checks(expect_hier: bool) -> Vec<String> {
    let mut all = names(&[&["barrier", "broadcast", "fcollect", "collect", "alltoalls", "reduce_scatter", "scan"]]);
    for dtype in rshmem::ReduceDtype::ALL {
        let ops = rshmem::ReduceOp::ALL.into_iter().filter(|&op| dtype.supports(op));
        all.extend(ops.map(|op| format!("reduce.{}.{}", dtype.name(), op.name())));
    }
    let typed = ["reduce", "reduce_in_place", "broadcast", "fcollect", "collect", "alltoall", "alltoalls", "reduce_scatter"];
    all.extend(names(&[&["typed"], &typed]));
    all.extend(names(&[&["typed"], &["sum_inscan", "sum_exscan"]]));
    if expect_hier {
        all.extend(names(&[&["hier"], &["plan", "mapped", "shared"]]));
    }
    all
}

/// The checks every PE of tests/pe/heap.rs makes (with `RSHMEM_SYMMETRIC_SIZE=2M
/// RSHMEM_MAX_SYMMETRIC_SIZE=96M`): alignment, realloc, reuse, growth 2M -> 90M,
/// exhaustion at 96M, and every block a peer fills, written and read back.
pub fn heap_checks() -> Vec<String> {
    let mut all = names(&[&["align"], &["address", "min16", "last_byte", "u128"]]);
    all.extend(names(&[&["realloc"], &["kept", "zeroed", "old_freed", "peer_put", "shrink_kept"]]));
    all.extend(names(&[&["reuse"], &["hole", "zeroed", "allocation_size", "all_free", "coalesced", "freed_64m"]]));
    all.extend(names(&[&["growth"], &["reserved", "empty_before", "in_use", "empty_at_end"]]));
    all.extend(names(&[&["exhaustion"], &["past_limit", "nothing_allocated", "one_tib", "block_intact"]]));
    let blocks = ["reused_hole", "coalesced", "grown_64m", "after_failures_16m", "reused_60m", "limit_90m"];
    all.extend(names(&[&["fill"], &blocks, &["written", "read_back"]]));
    all
}

/// The checks every PE of `pe_signal ops` makes: `signal_op` codes, set/add/fetch, a wait
/// for every comparison of the library's `Cmp::ALL`, the timeout, an empty put's signal.
pub fn signal_ops_checks() -> Vec<String> {
    let mut all = names(&[&["ops"], &["signal_op_codes", "set_add_fetch", "timeout", "empty_put_signals"]]);
    all.extend(rshmem::Cmp::ALL.iter().map(|cmp| format!("ops.wait_{}", format!("{cmp:?}").to_lowercase())));
    all
}

/// Every check name made of one part from each of `parts`, joined by dots:
/// `names(&[&["int", "long"], &["put", "get"]])` is `int.put int.get long.put long.get`.
pub fn names(parts: &[&[&str]]) -> Vec<String> {
    parts.iter().fold(vec![String::new()], |acc, part| {
        acc.iter().flat_map(|a| part.iter().map(move |p| if a.is_empty() { p.to_string() } else { format!("{a}.{p}") })).collect()
    })
}

/// The [`Job`] of a finished launcher process.
pub fn finish(out: Output) -> Job {
    Job {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Which launcher starts this run's jobs: `RSHMEM_TEST_LAUNCHER=mpirun` runs every job of
/// the suite under Open MPI's `mpirun` (the PMIx bootstrap); anything else, or unset, under
/// `rshmemrun`. CI runs the suite once each way.
pub fn under_mpirun() -> bool {
    std::env::var("RSHMEM_TEST_LAUNCHER").is_ok_and(|v| v == "mpirun")
}

/// Whether this run sends every pair of PEs through UCX (`RSHMEM_TRANSPORT=ucx` in the
/// suite's environment, which every job inherits). CI runs the suite once so.
pub fn over_ucx() -> bool {
    std::env::var("RSHMEM_TRANSPORT").is_ok_and(|v| v == "ucx")
}

/// A test's operation count for this run: `n` on shared memory; over UCX, where every
/// remote operation is a round trip through a peer's progress thread (several PEs to a
/// core on CI's 2 cores), `n / 20`, at least `min`. The programs check every operation
/// either way; only how many they make changes.
pub fn work(n: u64, min: u64) -> u64 {
    if over_ucx() {
        (n / 20).max(min)
    } else {
        n
    }
}

/// How this run starts jobs, for messages: "rshmemrun" or "mpirun", and the transport.
pub fn mode() -> String {
    let launcher = if under_mpirun() { "mpirun" } else { "rshmemrun" };
    let transport = std::env::var("RSHMEM_TRANSPORT").unwrap_or_else(|_| "auto".into());
    format!("{launcher}, RSHMEM_TRANSPORT={transport}")
}

/// A job ready to start: the launcher's command, and where mpirun writes the PEs' output.
pub struct Launch {
    cmd: Command,
    /// `mpirun --output-filename DIR`: mpirun forwards the PEs' output in chunks, so lines
    /// of PEs that print at once can be cut into each other on its stdout; the per-rank
    /// files keep every PE's lines whole, and the job's stdout is read from them.
    rank_output: Option<PathBuf>,
}

impl Launch {
    /// The launcher's command, for a test that starts the job itself and interacts with
    /// it (signals, pipes); its output is the launcher's own.
    pub fn into_command(self) -> Command {
        self.cmd
    }

    /// Starts the job and waits for it to end.
    pub fn run(mut self) -> Job {
        let mut job = finish(self.cmd.output().expect("start the launcher"));
        if let Some(dir) = self.rank_output {
            if let Some(stdout) = rank_stdout(&dir) {
                job.stdout = stdout;
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
        job
    }
}

/// The stdout files of every rank under `dir` (`DIR/JOB/rank.N/stdout`), in rank order,
/// joined; None when mpirun wrote none.
fn rank_stdout(dir: &std::path::Path) -> Option<String> {
    let mut ranks: Vec<(usize, PathBuf)> = Vec::new();
    for job in std::fs::read_dir(dir).ok()?.flatten() {
        for rank in std::fs::read_dir(job.path()).ok()?.flatten() {
            let name = rank.file_name().to_string_lossy().into_owned();
            if let Some(r) = name.strip_prefix("rank.").and_then(|r| r.parse().ok()) {
                ranks.push((r, rank.path().join("stdout")));
            }
        }
    }
    ranks.sort();
    (!ranks.is_empty()).then(|| ranks.iter().map(|(_, p)| std::fs::read_to_string(p).unwrap_or_default()).collect())
}

/// The command that starts `n` PEs of `program` under this run's launcher, ending the job
/// after `timeout_s` seconds, with `env` exported to every PE.
fn launch(n: usize, program: &std::path::Path, args: &[&str], env: &[(&str, &str)], timeout_s: u32) -> Launch {
    if under_mpirun() {
        mpirun_command(n, program, args, env, timeout_s)
    } else {
        rshmemrun_launch(n, pes_per_process().unwrap_or(1), program, args, env, timeout_s)
    }
}

/// `K` when this run starts the PEs of a job as threads, K to a process
/// (`RSHMEM_TEST_PES_PER_PROCESS=K`: `rshmemrun --pes-per-process K`); CI runs the suite
/// once so. Tests of what happens to processes (a killed PE, the launcher's messages)
/// start processes whatever this says.
pub fn pes_per_process() -> Option<usize> {
    std::env::var("RSHMEM_TEST_PES_PER_PROCESS").ok().and_then(|v| v.parse().ok()).filter(|&k: &usize| k > 1)
}

/// `rshmemrun -n N --timeout T program args`, with `env` set.
pub fn rshmemrun_command(n: usize, program: &std::path::Path, args: &[&str], env: &[(&str, &str)], timeout_s: u32) -> Launch {
    rshmemrun_launch(n, 1, program, args, env, timeout_s)
}

/// `rshmemrun -n N --pes-per-process K --timeout T program args`, with `env` set.
fn rshmemrun_launch(n: usize, per: usize, program: &std::path::Path, args: &[&str], env: &[(&str, &str)], timeout_s: u32) -> Launch {
    let mut cmd = Command::new(rshmemrun());
    cmd.arg("-n").arg(n.to_string()).arg("--timeout").arg(timeout_s.to_string());
    if per > 1 {
        cmd.arg("--pes-per-process").arg(per.to_string());
    }
    cmd.arg(program).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    Launch { cmd, rank_output: None }
}

/// `mpirun -np N --timeout T -x K=V... program args` (as root, oversubscribed: CI has 2
/// cores), outside any rshmemrun job, each rank's output also in a file of its own.
pub fn mpirun_command(n: usize, program: &std::path::Path, args: &[&str], env: &[(&str, &str)], timeout_s: u32) -> Launch {
    static JOBS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = JOBS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("rshmem-test-mpirun-{}-{k}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cmd = mpirun::mpirun();
    cmd.arg("--timeout").arg(timeout_s.to_string());
    cmd.arg("-np").arg(n.to_string()).arg("--output-filename").arg(&dir);
    for (k, v) in env {
        cmd.arg("-x").arg(format!("{k}={v}"));
        cmd.env(k, v);
    }
    cmd.arg(program).args(args).env_remove("RSHMEM_LAUNCHER_SOCK");
    Launch { cmd, rank_output: Some(dir) }
}

/// Runs `example` as `n` PEs with `args` and extra environment, under `timeout_s`
/// seconds (the launcher's own timeout, so a hang fails with a message), started by this
/// run's launcher ([`under_mpirun`]).
pub fn run_env(n: usize, example_name: &str, args: &[&str], env: &[(&str, &str)], timeout_s: u32) -> Job {
    launch(n, &example(example_name), args, env, timeout_s).run()
}

/// Runs `program args` (any executable, e.g. a wrapper script) as `n` PEs with extra
/// environment under this run's launcher and its timeout. A wrapper finds its PE number
/// in `$RSHMEM_PE` (rshmemrun) or `$PMIX_RANK` (mpirun). One PE per process whatever
/// [`pes_per_process`] says: a wrapper sets the environment of one PE.
pub fn run_program_env(n: usize, program: &std::path::Path, args: &[&str], env: &[(&str, &str)], timeout_s: u32) -> Job {
    if under_mpirun() {
        mpirun_command(n, program, args, env, timeout_s).run()
    } else {
        rshmemrun_command(n, program, args, env, timeout_s).run()
    }
}

/// Runs `example` under `rshmemrun` whatever this run's launcher: for the tests of
/// rshmemrun's own behaviour (its messages, exit codes and options).
pub fn run_rshmemrun_env(n: usize, example_name: &str, args: &[&str], env: &[(&str, &str)], timeout_s: u32) -> Job {
    rshmemrun_command(n, &example(example_name), args, env, timeout_s).run()
}

/// [`run_env`] with every PE a process of its own whatever [`pes_per_process`] says: for
/// tests of what happens when a PE's process exits or is killed.
pub fn run_processes_env(n: usize, example_name: &str, args: &[&str], env: &[(&str, &str)], timeout_s: u32) -> Job {
    let program = example(example_name);
    if under_mpirun() {
        mpirun_command(n, &program, args, env, timeout_s).run()
    } else {
        rshmemrun_command(n, &program, args, env, timeout_s).run()
    }
}

/// Runs `example` as `n` PEs with a 120 s timeout.
pub fn run(n: usize, example_name: &str, args: &[&str]) -> Job {
    run_env(n, example_name, args, &[], 120)
}
