//! The bad-input table (examples/pe_errors.rs): each case fails with its own error
//! variant and a message naming the call, the argument and the PE; nothing crashes and
//! the runtime works afterwards. `cargo test --release --test errors -- --nocapture`
//! shows the table.

mod common;
use common::*;

#[test]
fn bad_inputs_give_clear_errors() {
    let env = [("RSHMEM_SYMMETRIC_SIZE", "2M"), ("RSHMEM_MAX_SYMMETRIC_SIZE", "64M")];
    let job = run_env(4, "pe_errors", &[], &env, 120);
    println!("{}", job.stdout);
    job.assert_ok();
    assert_eq!(job.stdout.matches("checks passed").count(), 4, "every PE reports: {}", job.stdout);
    let table: Vec<&str> = job.stdout.lines().filter(|l| l.starts_with("  ")).collect();
    assert!(job.stdout.contains(&format!("error table on PE 0 of 4 ({} cases)", table.len())), "{}", job.stdout);
    for kind in [
        "PE out of range",
        "off the heap",
        "past an allocation",
        "freed memory",
        "misaligned",
        "bad stride",
        "destroyed team",
        "invalid team",
        "heap exhausted",
        "mismatched collective: alloc, PE 1 asks another size",
        "timeout",
    ] {
        assert!(table.iter().any(|l| l.trim_start().starts_with(kind)), "the table covers `{kind}`: {}", job.stdout);
    }
}

#[test]
fn too_many_team_slots_is_an_init_error() {
    let job = run_env(2, "pe_errors", &[], &[("RSHMEM_MAX_TEAMS", "1000000")], 60);
    assert_ne!(job.code, 0, "{}", job.stdout);
    assert!(job.stderr.contains("RSHMEM_MAX_TEAMS"), "{}", job.stderr);
    assert!(!job.stderr.contains("panicked"), "a clear error, not a panic: {}", job.stderr);
}
