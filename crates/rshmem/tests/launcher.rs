//! The launcher (rshmemrun itself, whichever launcher the rest of the suite runs under):
//! real processes, exit codes, dead PEs, timeouts, refused connections.

mod common;
use common::*;
use std::time::Instant;

#[test]
fn ring_runs_on_1_2_4_8_pes() {
    for n in [1, 2, 4, 8] {
        let job = run_rshmemrun_env(n, "ring", &[], &[], 120);
        job.assert_ok();
        assert!(job.stdout.contains(&format!("ring of {n} PEs: all data arrived intact")), "{}", job.stdout);
        assert_eq!(job.stdout.matches("checked").count(), n, "every PE reports: {}", job.stdout);
    }
}

#[test]
fn program_without_launcher_is_one_pe() {
    let out = std::process::Command::new(example("ring")).env_remove("RSHMEM_LAUNCHER_SOCK").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("ring of 1 PEs"));
}

#[test]
fn dead_pe_ends_the_others_and_is_named() {
    let t = Instant::now();
    let job = run_rshmemrun_env(4, "pe_launch", &["die"], &[], 120);
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(job.code, 128 + 9, "exit code is the dead PE's (SIGKILL): {}", job.stderr);
    assert!(job.stderr.contains("PE 2 (pid"), "names the PE: {}", job.stderr);
    assert!(job.stderr.contains("was killed by signal 9 (SIGKILL) before finalize"), "says how: {}", job.stderr);
    assert!(job.stderr.contains("ending the other 3 PE(s)"), "{}", job.stderr);
    // The survivors sit in a barrier for 60 s unless ended; the job must end far sooner.
    assert!(secs < 10.0, "job took {secs:.1} s to end");
}

#[test]
fn nonzero_exit_status_is_forwarded() {
    let job = run_rshmemrun_env(3, "pe_launch", &["exit3"], &[], 120);
    assert_eq!(job.code, 3, "{}", job.stderr);
    assert!(job.stderr.contains("PE 1 (pid") && job.stderr.contains("exited with status 3"), "{}", job.stderr);
}

#[test]
fn timeout_ends_a_hung_job() {
    let t = Instant::now();
    let job = run_rshmemrun_env(2, "pe_launch", &["hang"], &[], 2);
    assert_eq!(job.code, 124, "{}", job.stderr);
    assert!(job.stderr.contains("exceeded --timeout 2 s"), "{}", job.stderr);
    assert!(t.elapsed().as_secs_f64() < 8.0);
}

#[test]
fn wrong_key_is_refused() {
    let job = run_rshmemrun_env(2, "pe_launch", &["wrong-key"], &[], 120);
    assert_ne!(job.code, 0);
    assert!(job.stderr.contains("wrong job key"), "{}", job.stderr);
}

#[test]
fn output_can_be_tagged() {
    let out =
        std::process::Command::new(rshmemrun()).args(["-n", "2", "--tag-output", "--timeout", "60"]).arg(example("ring")).output().unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.lines().all(|l| l.starts_with("[PE 0] ") || l.starts_with("[PE 1] ")), "{s}");
}

#[test]
fn exit_right_after_finalize_is_clean() {
    // PE 0 exits while the others still run: its Finalize frame and its exit reach the
    // launcher by different threads, and the launcher must not call that a death.
    for _ in 0..8 {
        let job = run_rshmemrun_env(4, "pe_launch", &["linger"], &[], 120);
        assert_eq!(job.code, 0, "{}", job.stderr);
        assert!(!job.stderr.contains("before finalize"), "{}", job.stderr);
    }
}
