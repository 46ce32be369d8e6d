//! Atomic memory operations across real PEs (programs in examples/pe_amo.rs).

mod common;
use common::*;

#[test]
fn every_amo_of_every_type_on_2_and_4_pes() {
    for n in [2, 4] {
        let job = run(n, "pe_amo", &["table"]);
        job.assert_ok();
        job.assert_amo_table(n);
    }
}

#[test]
fn mixed_atomics_stress_matches_the_model_on_8_pes() {
    let ops = work(100_000, 2_000);
    let job = run(8, "pe_amo", &["stress", &ops.to_string()]);
    job.assert_ok();
    assert_eq!(job.stdout.matches(&format!("counters equal the model of 8 PEs x {ops} ops")).count(), 8, "{}", job.stdout);
}

#[test]
fn fetch_add_tickets_form_a_permutation() {
    let per_pe = work(100_000, 1_000);
    let job = run(8, "pe_amo", &["tickets", &per_pe.to_string()]);
    job.assert_ok();
    let all = 8 * per_pe;
    assert!(job.stdout.contains(&format!("{all} fetch_inc tickets (u64 and u32) form a permutation")), "{}", job.stdout);
    assert!(job.stdout.contains(&format!("{all} fetch_add ranges tile")), "{}", job.stdout);
}

#[test]
fn compare_swap_stack_loses_and_duplicates_nothing() {
    let (nodes, churn) = (work(500, 50), work(2_000, 100));
    let job = run(8, "pe_amo", &["stack", &nodes.to_string(), &churn.to_string()]);
    job.assert_ok();
    let all = 8 * nodes;
    assert!(job.stdout.contains(&format!("stack: {all} nodes on 8 PEs survived the churn: none lost, none duplicated")), "{}", job.stdout);
}

#[test]
fn bad_atomic_targets_get_clear_errors() {
    let job = run(2, "pe_amo", &["errors"]);
    job.assert_ok();
    assert_eq!(job.stdout.matches("every bad atomic was refused, memory unchanged").count(), 2, "{}", job.stdout);
    assert!(job.stdout.contains("is not aligned to 8 bytes, as a u64 atomic needs (target PE 1)"), "{}", job.stdout);
}
