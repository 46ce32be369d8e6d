//! Signals across real PEs (programs in examples/pe_signal.rs).

mod common;
use common::*;

#[test]
fn put_signal_never_shows_the_signal_before_the_data() {
    let rounds = work(100_000, 2_000);
    let job = run(2, "pe_signal", &["order", &rounds.to_string()]);
    job.assert_ok();
    assert_eq!(job.stdout.matches(&format!("order: {rounds} rounds")).count(), 2, "{}", job.stdout);
    let job = run(4, "pe_signal", &["order", &work(10_000, 500).to_string()]);
    job.assert_ok();
    assert_eq!(job.stdout.matches("every signal seen came with its data").count(), 4, "{}", job.stdout);
}

#[test]
fn signal_ops_fetch_and_waits() {
    for n in [2, 3] {
        let job = run(n, "pe_signal", &["ops"]);
        job.assert_ok();
        assert_eq!(job.stdout.matches("ops: set, add, fetch, every wait comparison").count(), n, "{}", job.stdout);
    }
}

#[test]
fn bad_signal_words_get_clear_errors() {
    let job = run(2, "pe_signal", &["errors"]);
    job.assert_ok();
    assert_eq!(job.stdout.matches("every bad signal call was refused, nothing moved").count(), 2, "{}", job.stdout);
    assert!(job.stdout.contains("putmem_signal: argument `sig_addr`"), "{}", job.stdout);
}
