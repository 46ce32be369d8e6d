//! Distributed locks across real PEs (programs in tests/pe/lock.rs).

mod common;
use common::*;

#[test]
fn locked_plain_counter_loses_no_update_on_8_pes() {
    let per_pe = work(2_000, 100);
    let job = run(8, "pe_lock", &["counter", &per_pe.to_string()]);
    job.assert_all(8, &["counter.alone_inside"]).assert_checks([0], &["counter.total", "counter.per_pe"]);
    assert_eq!(job.check(3, "counter.alone_inside").count, per_pe, "PE 3 entered a critical section {per_pe} times");
    let total = 8 * per_pe;
    assert_eq!(job.check(0, "counter.total").detail, format!("8 PEs x {per_pe} locked get+put increments: total {total}, none lost"));
}

#[test]
fn lock_passes_in_queue_order() {
    for n in [2, 8] {
        let job = run(n, "pe_lock", &["fifo"]);
        job.assert_passed(n).assert_checks([0], &["fifo.order", "fifo.free_at_end"]);
    }
}

#[test]
fn test_lock_takes_free_and_refuses_held_locks() {
    let job = run(4, "pe_lock", &["try"]);
    job.assert_all(4, &["try.free_in_turn"]).assert_checks([0], &["try.free_lock", "try.held_by_self"]);
    job.assert_checks(1..4, &["try.held_by_pe0"]);
}

#[test]
fn lock_misuse_gets_clear_errors() {
    let job = run(2, "pe_lock", &["errors"]);
    let cases = ["clear_a_lock_not_held", "misaligned_lock", "lock_off_the_heap", "lock_index_past_the_end"];
    job.assert_all(2, &names(&[&["errors"], &cases])).assert_checks([0], &["errors.set_a_lock_already_held"]);
}
