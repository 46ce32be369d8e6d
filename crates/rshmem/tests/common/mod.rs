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
}

fn finish(out: Output) -> Job {
    Job {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `example` as `n` PEs with `args` and extra environment, under `timeout_s`
/// seconds (the launcher's own --timeout, so a hang fails with a message).
pub fn run_env(n: usize, example_name: &str, args: &[&str], env: &[(&str, &str)], timeout_s: u32) -> Job {
    let mut cmd = Command::new(rshmemrun());
    cmd.arg("-n").arg(n.to_string()).arg("--timeout").arg(timeout_s.to_string()).arg(example(example_name)).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    finish(cmd.output().expect("start rshmemrun"))
}

/// Runs `program args` (any executable, e.g. a wrapper script) as `n` PEs with extra
/// environment under the launcher's `--timeout`.
pub fn run_program_env(n: usize, program: &std::path::Path, args: &[&str], env: &[(&str, &str)], timeout_s: u32) -> Job {
    let mut cmd = Command::new(rshmemrun());
    cmd.arg("-n").arg(n.to_string()).arg("--timeout").arg(timeout_s.to_string()).arg(program).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    finish(cmd.output().expect("start rshmemrun"))
}

/// Runs `example` as `n` PEs with a 120 s timeout.
pub fn run(n: usize, example_name: &str, args: &[&str]) -> Job {
    run_env(n, example_name, args, &[], 120)
}
