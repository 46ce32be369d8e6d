//! The bad-input table (tests/pe/errors.rs): each case fails with its own error variant
//! and a message naming the call, the argument and the PE; nothing crashes and the runtime
//! works afterwards. `cargo test --release --test errors -- --nocapture` shows PE 0's
//! table of cases and messages.

mod common;
use common::*;

#[test]
fn bad_inputs_give_clear_errors() {
    let env = [("RSHMEM_SYMMETRIC_SIZE", "2M"), ("RSHMEM_MAX_SYMMETRIC_SIZE", "64M")];
    let job = run_env(4, "pe_errors", &[], &env, 120);
    job.assert_passed(4);
    let table: Vec<Verdict> = job.verdicts().into_iter().filter(|v| v.pe == 0 && !v.name.starts_with("unharmed.")).collect();
    let width = table.iter().map(|v| v.name.len()).max().unwrap_or(0);
    println!("error table on PE 0 of 4 ({} cases):", table.len());
    for v in &table {
        println!("  {:<width$}  {}", v.name, v.detail);
    }
    job.assert_checks(0..4, &["unharmed.a", "unharmed.b", "unharmed.heap_works"]);
    for kind in [
        "pe_out_of_range.",
        "off_the_heap.",
        "past_an_allocation.",
        "freed_memory.",
        "misaligned.",
        "bad_stride.",
        "destroyed_team.",
        "invalid_team.",
        "heap_exhausted.",
        "mismatched_collective.alloc_pe_1_asks_another_size",
        "timeout.",
    ] {
        assert!(table.iter().any(|v| v.name.starts_with(kind)), "the table covers `{kind}`");
    }
}

#[test]
fn too_many_team_slots_is_an_init_error() {
    let job = run_env(2, "pe_errors", &[], &[("RSHMEM_MAX_TEAMS", "1000000")], 60);
    assert_ne!(job.code, 0, "{}", job.stdout);
    assert!(job.stderr.contains("RSHMEM_MAX_TEAMS"), "{}", job.stderr);
    assert!(!job.stderr.contains("panicked"), "a clear error, not a panic: {}", job.stderr);
}
