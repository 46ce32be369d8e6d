//! Atomic memory operations across real PEs (programs in tests/pe/amo.rs).

mod common;
use common::*;

#[test]
fn every_amo_of_every_type_on_2_and_4_pes() {
    for n in [2, 4] {
        run(n, "pe_amo", &["table"]).assert_all(n, &amo_table_checks());
    }
}

#[test]
fn mixed_atomics_stress_matches_the_model_on_8_pes() {
    let ops = work(100_000, 2_000);
    run(8, "pe_amo", &["stress", &ops.to_string()]).assert_amo_stress(8, ops);
}

#[test]
fn fetch_add_tickets_form_a_permutation() {
    let per_pe = work(100_000, 1_000);
    let job = run(8, "pe_amo", &["tickets", &per_pe.to_string()]);
    job.assert_all(8, &["tickets.increasing"]);
    let first =
        ["tickets.u64_permutation", "tickets.u32_permutation", "tickets.final_counters", "tickets.ranges_tile", "tickets.range_total"];
    job.assert_checks([0], &first);
    let all = 8 * per_pe;
    assert!(job.check(0, "tickets.permutation").detail.starts_with(&format!("{all} fetch_inc tickets (u64 and u32)")));
    assert!(job.check(0, "tickets.tiling").detail.starts_with(&format!("{all} fetch_add ranges tile")));
}

#[test]
fn compare_swap_stack_loses_and_duplicates_nothing() {
    let (nodes, churn) = (work(500, 50), work(2_000, 100));
    let job = run(8, "pe_amo", &["stack", &nodes.to_string(), &churn.to_string()]);
    job.assert_all(8, &["stack.popped_node_was_free", "stack.pushed_node_was_held_once"]);
    let all = 8 * nodes;
    assert_eq!(job.check(0, "stack.survived").detail, format!("{all} nodes on 8 PEs survived the churn: none lost, none duplicated"));
}

#[test]
fn bad_atomic_targets_get_clear_errors() {
    let job = run(2, "pe_amo", &["errors"]);
    let cases = [
        "misaligned_u64_fetch_add",
        "misaligned_u32_compare_swap",
        "pe_out_of_range",
        "target_off_the_heap",
        "u64_atomic_on_a_4_byte_allocation",
        "index_past_the_end",
        "nbi_misaligned",
        "add_through_a_nostore_context",
        "nostore_fetch",
        "memory_unchanged",
    ];
    job.assert_all(2, &names(&[&["errors"], &cases]));
    let msg = job.check(0, "errors.misaligned_u64_fetch_add").detail;
    assert!(msg.contains("is not aligned to 8 bytes, as a u64 atomic needs (target PE 1)"), "{msg}");
}
