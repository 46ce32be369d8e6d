//! Stress (tests/pe/stress.rs): seeded random puts, gets, p/g, strided and byte
//! transfers among the PEs, checked against a sequential model of every PE's memory, with
//! fence ordering (put, fence, flag: the flag implies the data) and quiet ordering (puts
//! to two PEs, quiet, flag to a third that reads both) every round.

mod common;
use common::*;

#[test]
fn random_rma_against_a_model_on_4_pes() {
    let rounds = work(4_000, 100);
    let job = run(4, "pe_stress", &[&rounds.to_string(), "1"]);
    println!("{}", job.stdout.lines().find(|l| l.contains("rounds")).unwrap_or_default());
    job.assert_stress(4, rounds);
}

#[test]
fn random_rma_against_a_model_on_8_pes() {
    // 8 PEs on a 2-core machine: PEs are preempted in the middle of transfers and waits.
    let rounds = work(1_500, 60);
    let job = run(8, "pe_stress", &[&rounds.to_string(), "2"]);
    println!("{}", job.stdout.lines().find(|l| l.contains("rounds")).unwrap_or_default());
    job.assert_stress(8, rounds);
}
