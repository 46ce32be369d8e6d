//! The PMIx bootstrap (src/bootstrap/pmix.rs) under Slurm: the ring, RMA and AMO programs
//! started by `srun --mpi=pmix` (Slurm's own PMIx server, not Open MPI's), a killed PE and
//! `global_exit` ending the job step, and plain `srun` (no PMIx) refused with a clear message
//! instead of running as N single PEs.
//!
//! The tests are skipped, with the reason printed, only where `srun` is not installed or
//! `sinfo` cannot reach a controller. `scripts/slurm-local.sh` sets up a one-node Slurm.

mod common;
use common::*;
use std::process::Command;

/// Whether a Slurm controller answers here; prints why not.
fn slurm_present() -> bool {
    if let Err(e) = Command::new("srun").arg("--version").output() {
        println!("SKIPPED: Slurm tests need srun (slurm-client; scripts/slurm-local.sh starts a one-node Slurm): {e}");
        return false;
    }
    match Command::new("timeout").args(["20", "sinfo", "-h", "-o", "%P %a"]).output() {
        Ok(o) if o.status.success() => true,
        Ok(o) => {
            println!(
                "SKIPPED: `sinfo` cannot reach a Slurm controller ({}): {} (scripts/slurm-local.sh starts one)",
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            );
            false
        }
        Err(e) => {
            println!("SKIPPED: cannot run `timeout 20 sinfo`: {e}");
            false
        }
    }
}

/// Runs `example` as `n` tasks of one job step under `srun` with `mpi` (`--mpi=pmix`, or
/// `--mpi=none`), oversubscribed (CI has 2 cores), ended after 120 s by Slurm (`--time`)
/// or, should the job not even start, by `timeout`.
fn srun(mpi: &str, n: usize, example_name: &str, args: &[&str]) -> Job {
    let mut cmd = Command::new("timeout");
    cmd.args(["-k", "10", "150", "srun", "--time=2", "--overcommit", "--oversubscribe", "--quiet"]);
    cmd.arg(format!("--mpi={mpi}")).arg("-n").arg(n.to_string());
    cmd.arg(example(example_name)).args(args).env_remove("RSHMEM_LAUNCHER_SOCK");
    finish(cmd.output().expect("start srun"))
}

#[test]
fn ring_and_rma_under_srun_pmix() {
    if !slurm_present() {
        return;
    }
    for n in [2, 4] {
        let job = srun("pmix", n, "ring", &[]);
        job.assert_ok();
        assert!(job.stdout.contains(&format!("ring of {n} PEs: all data arrived intact")), "{}", job.stdout);
    }
    srun("pmix", 2, "pe_rma", &[]).assert_all(2, &rma_checks());
}

#[test]
fn every_amo_under_srun_pmix() {
    if !slurm_present() {
        return;
    }
    srun("pmix", 3, "pe_amo", &["table"]).assert_all(3, &amo_table_checks());
}

#[test]
fn a_killed_pe_and_global_exit_end_the_srun_step() {
    if !slurm_present() {
        return;
    }
    // PE 2 kills itself while the others wait in a barrier: srun ends the step, naming task 2.
    let job = srun("pmix", 3, "pe_launch", &["die"]);
    assert_ne!(job.code, 0, "{}", job.stdout);
    assert_ne!(job.code, 124, "timed out instead of ending the step\n{}", job.stderr);
    assert!(job.stderr.contains("task 2: Killed"), "{}", job.stderr);
    // global_exit(7) on PE 1: srun's status is 7 and the others are ended.
    let job = srun("pmix", 3, "pe_launch", &["global-exit"]);
    assert_eq!(job.code, 7, "srun's status is PE 1's global_exit code\n{}\n{}", job.stdout, job.stderr);
    assert!(job.stderr.contains("global_exit(7) called on PE 1"), "{}", job.stderr);
}

#[test]
fn srun_without_pmix_is_an_error_not_n_single_pes() {
    if !slurm_present() {
        return;
    }
    let job = srun("none", 2, "ring", &[]);
    assert_ne!(job.code, 0, "{}", job.stdout);
    assert!(job.stderr.contains("SLURM_STEP_NUM_TASKS=2") && job.stderr.contains("srun --mpi=pmix"), "{}", job.stderr);
    assert!(!job.stdout.contains("all data arrived"), "{}", job.stdout);
    // One task is a single PE.
    let job = srun("none", 1, "ring", &[]);
    job.assert_ok();
    assert!(job.stdout.contains("ring of 1 PEs: all data arrived intact"), "{}", job.stdout);
}
