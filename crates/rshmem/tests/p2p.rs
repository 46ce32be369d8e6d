//! Point-to-point synchronization across real PEs (examples/pe_p2p.rs): wait_until and
//! test for every `sync_types!` entry and all six comparisons, the array and vector forms
//! with status masks, 7 waiters on one slow writer, timeouts naming call and PE. Run
//! with 8 PEs (on a 2-core machine waiters must sleep, or the writer starves).

mod common;
use common::*;

macro_rules! count {
    ($(($name:ident, $t:ty)),* $(,)?) => { [$(stringify!($name)),*].len() };
}

fn check(job: &Job, n: usize) {
    job.assert_ok();
    let types = rshmem::sync_types!(count);
    assert!(
        job.stdout.contains(&format!("pe_p2p: {types} sync types x 6 comparisons, array and vector forms, on {n} PEs")),
        "{}",
        job.stdout
    );
    assert!(job.stdout.contains(&format!("ping-pong of 300 rounds with {} waiters done", n - 1)), "{}", job.stdout);
    assert!(
        job.stdout.contains("wait_until_timeout gives: wait_until: timed out after 0.025 s waiting for ivar at"),
        "the timeout names the call: {}",
        job.stdout
    );
    assert!(job.stdout.contains("(on PE 0)"), "the timeout names the PE: {}", job.stdout);
    assert_eq!(job.stdout.matches("checks passed").count(), n, "every PE reports: {}", job.stdout);
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
