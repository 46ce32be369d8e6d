//! Backends: the programs that run a plan. rshmem's CPU and GPU PEs and the anchor
//! programs all plug in the same way: a [`Backend`] makes the command that runs the plan
//! on N PEs, that command prints the [`crate::protocol`] lines on stdout, and
//! [`run_job`] reads them while it runs.

use crate::ops::Suite;
use crate::plan::Case;
use crate::progress::Progress;
use crate::protocol::{parse_line, Line, Measurement};
use crate::sizes::format_size;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Environment variable that tells a re-executed `rshmem-perf` which role it has:
/// `launch` (start the PEs through the launcher) or `pe` (run the plan as a PE).
pub const ROLE_VAR: &str = "RSHMEM_PERF_ROLE";
/// Environment variable naming the plan file for the `launch` and `pe` roles.
pub const PLAN_VAR: &str = "RSHMEM_PERF_PLAN";
/// Environment variable with the PE count for the `launch` role.
pub const NPES_VAR: &str = "RSHMEM_PERF_NPES";
/// Environment variable with the job's time limit in seconds for the `launch` role.
pub const TIMEOUT_VAR: &str = "RSHMEM_PERF_TIMEOUT";
/// Environment variable naming the suite (`cpu`, `gpu`) for the `launch` and `pe` roles.
pub const SUITE_VAR: &str = "RSHMEM_PERF_SUITE";
/// Environment variable with rshmem's PEs per process for the `launch` role.
pub const PER_PROCESS_VAR: &str = "RSHMEM_PERF_PES_PER_PROCESS";

/// What a job is asked to run.
#[derive(Debug, Clone)]
pub struct JobSpec {
    /// The plan file.
    pub plan: PathBuf,
    /// Number of PEs.
    pub n_pes: usize,
    /// Symmetric memory per PE that the largest case needs.
    pub heap_bytes: usize,
    /// End the job after this long.
    pub timeout: Duration,
}

/// A program that runs a plan on N PEs and prints protocol lines.
pub trait Backend {
    /// Short name used in the table and the files (`rshmem`, `oshmem`).
    fn label(&self) -> &str;
    /// One line saying what it is.
    fn describe(&self) -> String;
    /// Builds whatever it needs under `out` (the anchors compile their program there).
    fn prepare(&mut self, _out: &Path) -> Result<(), String> {
        Ok(())
    }
    /// The command that runs `job`.
    fn command(&self, job: &JobSpec) -> Result<Command, String>;
}

/// rshmem's PEs on this host: `rshmem-perf` starts itself again in the `launch` role,
/// which runs the launcher (`rshmem::bootstrap::launcher::run`) over copies of itself in
/// the `pe` role. CPU PEs (`RSHMEM_DEVICE=cpu`) or GPU PEs (`RSHMEM_DEVICE=gpu`, the heap
/// sized for the largest case).
pub struct RshmemPes {
    exe: PathBuf,
    suite: Suite,
    env: Vec<(String, String)>,
    /// PEs per process (threads of one process beyond 1).
    per_process: usize,
}

impl RshmemPes {
    /// The backend that runs this very binary as PEs of `suite`.
    pub fn this_binary(suite: Suite) -> Result<RshmemPes, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this program's path: {e}"))?;
        Ok(RshmemPes { exe, suite, env: Vec::new(), per_process: 1 })
    }

    /// Runs `k` PEs in each process, as threads (`rshmemrun --pes-per-process K`).
    pub fn with_pes_per_process(mut self, k: usize) -> RshmemPes {
        self.per_process = k.max(1);
        self
    }

    /// Adds an environment variable for the PEs (a forced collective protocol, say).
    pub fn with_env(mut self, key: &str, value: &str) -> RshmemPes {
        self.env.push((key.into(), value.into()));
        self
    }
}

impl Backend for RshmemPes {
    fn label(&self) -> &str {
        "rshmem"
    }

    fn describe(&self) -> String {
        let extra: Vec<String> = self.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut extra = if extra.is_empty() { String::new() } else { format!(", {}", extra.join(" ")) };
        if self.per_process > 1 {
            extra += &format!(", {} PEs per process as threads", self.per_process);
        }
        match self.suite {
            Suite::Cpu => format!("rshmem {} CPU PEs{extra}", env!("CARGO_PKG_VERSION")),
            Suite::Gpu => format!("rshmem {} GPU PEs{extra}", env!("CARGO_PKG_VERSION")),
        }
    }

    fn command(&self, job: &JobSpec) -> Result<Command, String> {
        let mut cmd = Command::new(&self.exe);
        cmd.env(ROLE_VAR, "launch")
            .env(PLAN_VAR, &job.plan)
            .env(NPES_VAR, job.n_pes.to_string())
            .env(TIMEOUT_VAR, job.timeout.as_secs_f64().to_string())
            .env(SUITE_VAR, self.suite.name())
            .env(PER_PROCESS_VAR, self.per_process.to_string())
            .env("RSHMEM_DEVICE", self.suite.name());
        if self.suite == Suite::Gpu {
            // The whole heap up front: no growth (a collective remap) inside a case.
            cmd.env("RSHMEM_SYMMETRIC_SIZE", job.heap_bytes.to_string());
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        Ok(cmd)
    }
}

/// What a job printed and how it ended.
#[derive(Debug, Default)]
pub struct JobOutput {
    /// `INFO` lines.
    pub info: Vec<String>,
    /// Measured cases, in plan order.
    pub results: Vec<Measurement>,
    /// Cases the implementation cannot run: (operation, bytes, reason).
    pub skips: Vec<(String, usize, String)>,
    /// Why the job failed, when it did (exit status, time limit, malformed output).
    pub failure: Option<String>,
}

/// Runs `backend` on `job`, advancing `progress` by one for each case reported and
/// passing other output (stdout lines that are not protocol, all of stderr) through. Never panics on a misbehaving job: the failure is
/// described in [`JobOutput::failure`] with what was measured before it.
pub fn run_job(backend: &dyn Backend, job: &JobSpec, cases: &[Case], progress: &Progress) -> JobOutput {
    let label = backend.label().to_string();
    let mut out = JobOutput::default();
    let mut cmd = match backend.command(job) {
        Ok(c) => c,
        Err(e) => {
            out.failure = Some(e);
            return out;
        }
    };
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            out.failure = Some(format!("cannot start {}: {e}", cmd.get_program().to_string_lossy()));
            return out;
        }
    };
    let pid = child.id();
    let (stdout, stderr) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
    let err_reader = {
        let (progress, label) = (progress.clone(), label.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                progress.println(&format!("[{label}] {line}"));
            }
        })
    };
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let limit = job.timeout + Duration::from_secs(10);
    let watchdog = std::thread::spawn(move || {
        if done_rx.recv_timeout(limit) == Err(mpsc::RecvTimeoutError::Timeout) {
            end_process(pid);
            return true;
        }
        false
    });
    let next_label = |k: usize| cases.get(k).map(|c| format!("{label} {} {}", c.op.name(), format_size(c.bytes))).unwrap_or_default();
    progress.set_message(&next_label(0));
    let mut reported = 0usize;
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        match parse_line(&line) {
            Ok(Line::Info(i)) => out.info.push(i),
            Ok(Line::Result(m)) => {
                out.results.push(m);
                reported += 1;
                progress.inc(&next_label(reported));
            }
            Ok(Line::Skip { op, bytes, reason }) => {
                out.skips.push((op, bytes, reason));
                reported += 1;
                progress.inc(&next_label(reported));
            }
            Ok(Line::Other(text)) => progress.println(&format!("[{label}] {text}")),
            Err(e) => {
                if out.failure.is_none() {
                    out.failure = Some(format!("{label}: {e}"));
                }
            }
        }
    }
    let status = child.wait();
    let _ = done_tx.send(());
    let timed_out = watchdog.join().unwrap_or(false);
    let _ = err_reader.join();
    // Cases not reported still count, so that the bar ends where it should.
    for k in reported..cases.len() {
        progress.inc(&next_label(k + 1));
    }
    let failure = match status {
        _ if timed_out => Some(format!("{label} exceeded the time limit of {:.0} s and was ended", limit.as_secs_f64())),
        Ok(s) if s.success() => None,
        Ok(s) => Some(format!("{label} {}", rshmem::bootstrap::launcher::describe(&s))),
        Err(e) => Some(format!("{label}: cannot wait for it: {e}")),
    };
    if out.failure.is_none() {
        out.failure = failure;
    }
    if out.failure.is_none() && reported < cases.len() {
        out.failure = Some(format!("{label} reported {reported} of {} cases", cases.len()));
    }
    out
}

/// SIGTERM, then SIGKILL after a grace period, to a job that ran too long.
fn end_process(pid: u32) {
    use rustix::process::{kill_process, Pid, Signal};
    let Some(p) = Pid::from_raw(pid as i32) else { return };
    let _ = kill_process(p, Signal::TERM);
    std::thread::sleep(Duration::from_secs(3));
    let _ = kill_process(p, Signal::KILL);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(cmd: &Command, key: &str) -> Option<String> {
        cmd.get_envs().find(|(k, _)| *k == key).and_then(|(_, v)| v.map(|v| v.to_string_lossy().into_owned()))
    }

    #[test]
    fn pes_command_names_suite_and_device() {
        let job = JobSpec { plan: "/tmp/p.txt".into(), n_pes: 2, heap_bytes: 3 << 30, timeout: Duration::from_secs(60) };
        let cpu = RshmemPes::this_binary(Suite::Cpu).unwrap().command(&job).unwrap();
        assert_eq!(env_of(&cpu, "RSHMEM_DEVICE").as_deref(), Some("cpu"));
        assert_eq!(env_of(&cpu, SUITE_VAR).as_deref(), Some("cpu"));
        assert_eq!(env_of(&cpu, "RSHMEM_SYMMETRIC_SIZE"), None);
        let gpu = RshmemPes::this_binary(Suite::Gpu).unwrap().with_env("RSHMEM_GPU_COLL_PROTO", "ll");
        assert!(gpu.describe().contains("GPU PEs, RSHMEM_GPU_COLL_PROTO=ll"), "{}", gpu.describe());
        let cmd = gpu.command(&job).unwrap();
        assert_eq!(env_of(&cmd, "RSHMEM_DEVICE").as_deref(), Some("gpu"));
        assert_eq!(env_of(&cmd, "RSHMEM_SYMMETRIC_SIZE"), Some((3usize << 30).to_string()));
        assert_eq!(env_of(&cmd, "RSHMEM_GPU_COLL_PROTO").as_deref(), Some("ll"));
        assert_eq!(env_of(&cmd, PLAN_VAR).as_deref(), Some("/tmp/p.txt"));
        assert_eq!(env_of(&cmd, ROLE_VAR).as_deref(), Some("launch"));
    }
}
