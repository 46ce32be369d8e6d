//! Distributed locks across real PEs (programs in examples/pe_lock.rs).

mod common;
use common::*;

#[test]
fn locked_plain_counter_loses_no_update_on_8_pes() {
    let per_pe = work(2_000, 100);
    let job = run(8, "pe_lock", &["counter", &per_pe.to_string()]);
    job.assert_ok();
    let total = 8 * per_pe;
    assert!(
        job.stdout.contains(&format!("counter: 8 PEs x {per_pe} locked get+put increments: total {total}, none lost")),
        "{}",
        job.stdout
    );
}

#[test]
fn lock_passes_in_queue_order() {
    for n in [2, 8] {
        let job = run(n, "pe_lock", &["fifo"]);
        job.assert_ok();
        assert!(job.stdout.contains(&format!("fifo: the lock passed to {n} PEs in exactly their queue order")), "{}", job.stdout);
    }
}

#[test]
fn test_lock_takes_free_and_refuses_held_locks() {
    let job = run(4, "pe_lock", &["try"]);
    job.assert_ok();
    assert_eq!(job.stdout.matches("try: test_lock took free locks and refused held ones").count(), 4, "{}", job.stdout);
}

#[test]
fn lock_misuse_gets_clear_errors() {
    let job = run(2, "pe_lock", &["errors"]);
    job.assert_ok();
    assert_eq!(job.stdout.matches("every misuse was refused and the locks still work").count(), 2, "{}", job.stdout);
}
