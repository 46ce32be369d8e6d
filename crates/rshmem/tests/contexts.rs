//! Communication contexts across real PEs (programs in tests/pe/ctx.rs).

mod common;
use common::*;

#[test]
fn contexts_are_created_and_destroyed_with_every_option() {
    let job = run(2, "pe_ctx", &["lifecycle"]);
    let checks = ["default_ctx", "option_bits", "created", "clone_shares_id", "default_not_destroyed"];
    job.assert_all(2, &names(&[&["lifecycle"], &checks]));
    for pe in 0..2 {
        assert_eq!(job.check(pe, "lifecycle.created").count, 800, "8 option sets x 100 rounds of contexts on PE {pe}");
    }
}

#[test]
fn operations_through_contexts_arrive_and_nostore_refuses_stores() {
    for n in [2, 4] {
        let job = run(n, "pe_ctx", &["ops"]);
        let checks = ["rma", "strided_and_signal", "amo", "gets", "nostore_refuses", "nostore_loads", "nostore_unchanged"];
        job.assert_all(n, &names(&[&["ops"], &checks]));
        job.assert_checks([0], &["ops.private_ctx_threads"]);
        assert_eq!(job.check(0, "ops.nostore_refuses").count, 10, "every store call through a NOSTORE context");
    }
}

#[test]
fn team_contexts_use_team_pe_numbers() {
    for n in [4, 5] {
        let job = run(n, "pe_ctx", &["team"]);
        job.assert_passed(n);
        job.assert_checks((0..n).step_by(2), &names(&[&["team"], &["ctx_names_team", "pe_outside_team", "pe_numbers"]]));
        job.assert_checks((1..n).step_by(2), &names(&[&["team"], &["invalid_team_refused", "odd_untouched"]]));
    }
}
