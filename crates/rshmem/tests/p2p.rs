//! Point-to-point synchronization across real PEs (tests/pe/p2p.rs): wait_until and
//! test for every `sync_types!` entry and all six comparisons, the array and vector forms
//! with status masks, 7 waiters on one slow writer, timeouts naming call and PE. Run
//! with 8 PEs (on a 2-core machine waiters must sleep, or the writer starves).

mod common;
use common::*;

/// The calls each waiting PE checks for every type of the `sync_types!` table.
const CALLS: &[&str] = &[
    "test",
    "test_addr",
    "wait_until",
    "test_all",
    "test_any",
    "test_some",
    "wait_until_any",
    "wait_until_some",
    "wait_many",
    "excluded_untouched",
    "test_all_vector",
    "test_any_vector",
    "test_some_vector",
    "wait_until_any_vector",
    "wait_until_some_vector",
];

fn check(job: &Job, n: usize) {
    let mut every = names(&[&["timeout"], &["wait_until", "wait_until_all", "wait_until_any", "wait_until_some"]]);
    every.extend(names(&[&["empty"], &["wait_until_any", "wait_until_some", "test_all", "test_any"]]));
    job.assert_all(n, &every);
    let mut waiters = names(&[tables::SYNC, CALLS]);
    waiters.push("ping_pong.seen".into());
    job.assert_checks(1..n, &waiters);
    assert_eq!(job.check(1, "ping_pong.seen").count, 300, "PE 1 saw every round");
    assert_eq!(job.check(0, "ping_pong.acks").detail, format!("every one of the {} waiters acknowledged round 300", n - 1));
    let timeout = job.check(0, "timeout.wait_until").detail;
    assert!(timeout.starts_with("wait_until: timed out after 0.025 s waiting for ivar at"), "the timeout names the call: {timeout}");
    assert!(timeout.contains("(on PE 0)"), "the timeout names the PE: {timeout}");
}

#[test]
fn waits_and_tests_on_8_pes() {
    check(&run(8, "pe_p2p", &[]), 8);
}

#[test]
fn waits_that_always_sleep_on_the_futex() {
    // RSHMEM_SPIN=0: every wait that is not satisfied at once sleeps, so every wake-up
    // goes through the writer's futex wake.
    check(&run_env(8, "pe_p2p", &[], &[("RSHMEM_SPIN", "0")], 120), 8);
}

#[test]
fn waits_and_tests_on_2_pes() {
    check(&run(2, "pe_p2p", &[]), 2);
}
