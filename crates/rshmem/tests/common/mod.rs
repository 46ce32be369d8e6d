//! Shared harness for multi-PE tests: runs an example program as N PEs through the real
//! launcher, under a timeout, and returns what it printed.
#![allow(dead_code)]

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

    /// Panics unless all `n` PEs of examples/pe_rma.rs reported their checks passed,
    /// the sized and mem forms included.
    pub fn assert_rma_passed(&self, n: usize) -> &Self {
        assert_eq!(self.stdout.matches("checks passed").count(), n, "every PE reports: {}", self.stdout);
        assert!(self.stdout.contains("sized forms 8/16/32/64/128 bits and the mem forms checked"), "{}", self.stdout);
        self
    }

    /// Panics unless each of `n` PEs of `pe_amo table` checked every AMO type table.
    pub fn assert_amo_table(&self, n: usize) -> &Self {
        let lines = self.stdout.lines().filter(|l| l.contains("table: 12 standard, 7 bitwise, 14 extended types")).count();
        assert_eq!(lines, n, "every PE checks every table: {}", self.stdout);
        self
    }
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

/// The command that starts `n` PEs of `program` under this run's launcher, ending the job
/// after `timeout_s` seconds, with `env` exported to every PE.
fn launch(n: usize, program: &std::path::Path, args: &[&str], env: &[(&str, &str)], timeout_s: u32) -> Command {
    if under_mpirun() {
        mpirun_command(n, program, args, env, timeout_s)
    } else {
        rshmemrun_command(n, program, args, env, timeout_s)
    }
}

/// `rshmemrun -n N --timeout T program args`, with `env` set.
pub fn rshmemrun_command(n: usize, program: &std::path::Path, args: &[&str], env: &[(&str, &str)], timeout_s: u32) -> Command {
    let mut cmd = Command::new(rshmemrun());
    cmd.arg("-n").arg(n.to_string()).arg("--timeout").arg(timeout_s.to_string()).arg(program).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// `mpirun -np N --timeout T -x K=V... program args` (as root, oversubscribed: CI has 2
/// cores), outside any rshmemrun job.
pub fn mpirun_command(n: usize, program: &std::path::Path, args: &[&str], env: &[(&str, &str)], timeout_s: u32) -> Command {
    let mut cmd = Command::new("mpirun");
    cmd.args(["--allow-run-as-root", "--oversubscribe", "--timeout"]).arg(timeout_s.to_string());
    cmd.arg("-np").arg(n.to_string());
    for (k, v) in env {
        cmd.arg("-x").arg(format!("{k}={v}"));
        cmd.env(k, v);
    }
    cmd.arg(program).args(args).env_remove("RSHMEM_LAUNCHER_SOCK");
    cmd
}

/// Runs `example` as `n` PEs with `args` and extra environment, under `timeout_s`
/// seconds (the launcher's own timeout, so a hang fails with a message), started by this
/// run's launcher ([`under_mpirun`]).
pub fn run_env(n: usize, example_name: &str, args: &[&str], env: &[(&str, &str)], timeout_s: u32) -> Job {
    finish(launch(n, &example(example_name), args, env, timeout_s).output().expect("start the launcher"))
}

/// Runs `program args` (any executable, e.g. a wrapper script) as `n` PEs with extra
/// environment under this run's launcher and its timeout. A wrapper finds its PE number
/// in `$RSHMEM_PE` (rshmemrun) or `$PMIX_RANK` (mpirun).
pub fn run_program_env(n: usize, program: &std::path::Path, args: &[&str], env: &[(&str, &str)], timeout_s: u32) -> Job {
    finish(launch(n, program, args, env, timeout_s).output().expect("start the launcher"))
}

/// Runs `example` under `rshmemrun` whatever this run's launcher: for the tests of
/// rshmemrun's own behaviour (its messages, exit codes and options).
pub fn run_rshmemrun_env(n: usize, example_name: &str, args: &[&str], env: &[(&str, &str)], timeout_s: u32) -> Job {
    finish(rshmemrun_command(n, &example(example_name), args, env, timeout_s).output().expect("start rshmemrun"))
}

/// Runs `example` as `n` PEs with a 120 s timeout.
pub fn run(n: usize, example_name: &str, args: &[&str]) -> Job {
    run_env(n, example_name, args, &[], 120)
}
