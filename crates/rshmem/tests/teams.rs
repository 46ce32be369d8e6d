//! Teams across real PEs (examples/pe_teams.rs): splits, 2-D grids, translation, config,
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

#[test]
fn teams_on_4_pes() {
    let job = run(4, "pe_teams", &[]);
    job.assert_ok();
    assert!(job.stdout.contains("5200 teams created and destroyed in sequence on 4 PEs"), "{}", job.stdout);
    assert!(job.stdout.contains("300 teams alive at once on 4 PEs"), "{}", job.stdout);
    assert!(job.stdout.contains(&format!("SHARED holds {} of 4 PEs", shared_size(4))), "{}", job.stdout);
    assert_eq!(job.stdout.matches("checks passed").count(), 4, "{}", job.stdout);
}

#[test]
fn teams_on_7_pes() {
    // Odd size: ragged last row and columns of different lengths in split_2d.
    let job = run(7, "pe_teams", &["600", "250"]);
    job.assert_ok();
    assert!(job.stdout.contains("250 teams alive at once on 7 PEs"), "{}", job.stdout);
    assert!(job.stdout.contains(&format!("SHARED holds {} of 7 PEs", shared_size(7))), "{}", job.stdout);
    assert_eq!(job.stdout.matches("checks passed").count(), 7, "{}", job.stdout);
}

#[test]
fn running_out_of_team_slots_is_a_clear_error() {
    let job = run_env(3, "pe_teams", &["slots"], &[("RSHMEM_MAX_TEAMS", "16")], 60);
    job.assert_ok();
    // 16 slots: WORLD, SHARED and 14 more.
    assert!(job.stdout.contains("after 14 teams: team_split_strided: all 16 team slots are in use"), "{}", job.stdout);
}
