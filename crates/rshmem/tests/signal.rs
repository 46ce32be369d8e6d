//! Signals across real PEs (programs in tests/pe/signal.rs).

mod common;
use common::*;

#[test]
fn put_signal_never_shows_the_signal_before_the_data() {
    let rounds = work(100_000, 2_000);
    run(2, "pe_signal", &["order", &rounds.to_string()]).assert_signal_order(2, rounds);
    let rounds = work(10_000, 500);
    run(4, "pe_signal", &["order", &rounds.to_string()]).assert_signal_order(4, rounds);
}

#[test]
fn signal_ops_fetch_and_waits() {
    for n in [2, 3] {
        run(n, "pe_signal", &["ops"]).assert_all(n, &signal_ops_checks());
    }
}

#[test]
fn bad_signal_words_get_clear_errors() {
    let job = run(2, "pe_signal", &["errors"]);
    let cases = [
        "signal_word_off_the_heap",
        "misaligned_signal_word",
        "signal_word_in_a_4_byte_allocation",
        "signal_word_inside_the_data",
        "signal_index_past_the_end",
        "data_past_the_end",
        "pe_out_of_range",
        "signal_fetch_off_the_heap",
        "signal_wait_until_misaligned",
        "put_signal_through_a_nostore_context",
        "nothing_moved",
    ];
    job.assert_all(2, &names(&[&["errors"], &cases]));
    let msg = job.check(0, "errors.signal_word_off_the_heap").detail;
    assert!(msg.contains("putmem_signal: argument `sig_addr`"), "{msg}");
}
