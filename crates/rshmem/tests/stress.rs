//! Stress (examples/pe_stress.rs): seeded random puts, gets, p/g, strided and byte
//! transfers among the PEs, checked against a sequential model of every PE's memory, with
//! fence ordering (put, fence, flag: the flag implies the data) and quiet ordering (puts
//! to two PEs, quiet, flag to a third that reads both) every round.

mod common;
use common::*;

#[test]
fn random_rma_against_a_model_on_4_pes() {
    let job = run(4, "pe_stress", &["4000", "1"]);
    println!("{}", job.stdout.lines().find(|l| l.contains("rounds")).unwrap_or_default());
    job.assert_ok();
    assert!(job.stdout.contains("pe_stress: 4000 rounds (seed 1) on 4 PEs: 96000 random operations"), "{}", job.stdout);
    assert_eq!(job.stdout.matches("checks passed").count(), 4, "{}", job.stdout);
}

#[test]
fn random_rma_against_a_model_on_8_pes() {
    // 8 PEs on a 2-core machine: PEs are preempted in the middle of transfers and waits.
    let job = run(8, "pe_stress", &["1500", "2"]);
    println!("{}", job.stdout.lines().find(|l| l.contains("rounds")).unwrap_or_default());
    job.assert_ok();
    assert_eq!(job.stdout.matches("checks passed").count(), 8, "{}", job.stdout);
}
