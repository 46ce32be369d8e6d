//! MoE dispatch and combine across real CPU PEs (program in examples/moe.rs), checked
//! there against a sequential model: every case must pass on every PE.

mod common;
use common::*;

/// The cases of examples/moe.rs.
const CASES: [&str; 12] = [
    "random_top1",
    "random_top2_8_rounds",
    "random_top8",
    "random_top2_uneven",
    "odd_experts_receive_nothing",
    "all_tokens_to_one_expert",
    "all_tokens_to_experts_0_8",
    "fp8_random_top8",
    "fp8_all_tokens_to_one_expert",
    "capacity_bound_fullest_expert",
    "capacity_overflow",
    "bad_input_refused",
];

fn check(n: usize) {
    let job = run_env(n, "moe", &[], &[("RSHMEM_DEVICE", "cpu")], 120);
    job.assert_all(n, &CASES);
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
