//! Teams across real PEs (tests/pe/teams.rs): splits, 2-D grids, translation, config,
//! barriers on split teams checked with data, destroy and the errors after it; more than
//! 5,000 teams in sequence and 300 alive at once (NVSHMEM stops at 128).

mod common;
use common::*;

/// Size of SHARED on a job of `n` PEs on this one host: all of them, or only the PE
/// itself when `RSHMEM_TRANSPORT=ucx` maps no peer's heap.
fn shared_size(n: usize) -> usize {
    if over_ucx() {
        1
    } else {
        n
    }
}

/// The checks every PE makes, whatever its place in the teams.
const EVERY_PE: &[&str] = &[
    "world.my_pe",
    "shared.size",
    "shared.my_pe",
    "grid.row",
    "grid.column",
    "grid.config",
    "grid.translate",
    "grid.wide_row",
    "grid.wide_columns",
    "destroyed.error",
    "ring.row",
    "ring.column",
    "sequence.membership",
    "sequence.numbering",
    "alive.member",
    "alive.config",
    "alive.refill",
    "ring.live",
    "ring.refill",
];

fn teams_on(n: usize, sequence: usize, alive: usize) {
    let job = run(n, "pe_teams", &[&sequence.to_string(), &alive.to_string()]);
    job.assert_all(n, EVERY_PE);
    job.assert_checks((0..n).step_by(2), &names(&[&["even"], &["my_pe", "size", "config", "layout", "translate"]]));
    job.assert_checks((0..n).step_by(2), &["ring.even"]).assert_checks((1..n).step_by(2), &["even.invalid_outside"]);
    assert_eq!(job.check(0, "sequence.membership").count, sequence as u64, "{sequence} teams created and destroyed in sequence");
    assert!(job.check(0, "alive.member").detail.starts_with(&format!("{alive} teams alive at once on {n} PEs")));
    let shared = job.check(0, "shared.size").detail;
    assert!(shared.starts_with(&format!("SHARED holds {} of {n} PEs", shared_size(n))), "{shared}");
}

#[test]
fn teams_on_4_pes() {
    teams_on(4, 5200, 300);
}

#[test]
fn teams_on_7_pes() {
    // Odd size: ragged last row and columns of different lengths in split_2d.
    teams_on(7, 600, 250);
}

#[test]
fn running_out_of_team_slots_is_a_clear_error() {
    let job = run_env(3, "pe_teams", &["slots"], &[("RSHMEM_MAX_TEAMS", "16")], 60);
    job.assert_all(3, &["slots.exhausted", "slots.reusable"]);
    // 16 slots: WORLD, SHARED and 14 more.
    let msg = job.check(0, "slots.exhausted").detail;
    assert!(msg.contains("after 14 teams: team_split_strided: all 16 team slots are in use"), "{msg}");
}
