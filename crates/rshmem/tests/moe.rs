//! MoE dispatch and combine across real CPU PEs (program in examples/moe.rs), checked
//! there against a sequential model; here every case must report PASS and no FAIL.

mod common;
use common::*;

const CASES: usize = 12;

fn check(n: usize) {
    let job = run_env(n, "moe", &[], &[("RSHMEM_DEVICE", "cpu")], 120);
    job.assert_ok();
    assert!(!job.stdout.contains("FAIL"), "{}", job.stdout);
    assert_eq!(job.stdout.lines().filter(|l| l.starts_with("PASS ")).count(), CASES, "{}", job.stdout);
    assert_eq!(job.stdout.matches("all cases passed").count(), n, "{}", job.stdout);
    for case in
        ["random top-1", "random top-2", "random top-8", "odd experts receive nothing", "all tokens to one expert", "capacity overflow"]
    {
        assert!(job.stdout.contains(&format!("PASS {case}")), "missing {case}:\n{}", job.stdout);
    }
}

#[test]
fn dispatch_and_combine_match_the_model_on_2_pes() {
    check(2);
}

#[test]
fn dispatch_and_combine_match_the_model_on_4_pes() {
    check(4);
}

#[test]
fn bench_runs_small_and_prints_its_table() {
    let args = ["--bench", "--iters", "2", "--tokens", "8", "--throughput-tokens", "32", "--hidden", "256"];
    let job = run_env(2, "moe", &args, &[("RSHMEM_DEVICE", "cpu")], 120);
    job.assert_ok();
    assert_eq!(job.stdout.lines().filter(|l| l.starts_with("| 8 |") || l.starts_with("| 32 |")).count(), 4, "{}", job.stdout);
}
