//! Communication contexts across real PEs (programs in examples/pe_ctx.rs).

mod common;
use common::*;

#[test]
fn contexts_are_created_and_destroyed_with_every_option() {
    let job = run(2, "pe_ctx", &["lifecycle"]);
    job.assert_ok();
    assert_eq!(job.stdout.matches("800 contexts created and destroyed").count(), 2, "{}", job.stdout);
}

#[test]
fn operations_through_contexts_arrive_and_nostore_refuses_stores() {
    for n in [2, 4] {
        let job = run(n, "pe_ctx", &["ops"]);
        job.assert_ok();
        assert_eq!(job.stdout.matches("through contexts arrived; NOSTORE refused stores").count(), n, "{}", job.stdout);
    }
}

#[test]
fn team_contexts_use_team_pe_numbers() {
    for n in [4, 5] {
        let job = run(n, "pe_ctx", &["team"]);
        job.assert_ok();
        assert_eq!(job.stdout.matches("team contexts used team PE numbers").count(), n, "{}", job.stdout);
    }
}
