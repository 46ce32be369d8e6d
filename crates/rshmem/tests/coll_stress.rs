//! Concurrent collectives on disjoint teams, back-to-back collectives with no barrier
//! and sources overwritten as soon as a call returns, and two threads per PE running
//! collectives on two teams at once (tests/pe/coll_stress.rs), under each algorithm
//! family.

mod common;
use common::*;

/// The kinds of collective each phase runs (`disjoint` the first six).
const KINDS: [&str; 9] =
    ["small_reduce", "small_broadcast", "fcollect", "large_reduce", "alltoall", "large_broadcast", "collect", "inscan", "reduce_scatter"];

fn stress(n: usize, algo: &str) {
    let job = run_env(n, "pe_coll_stress", &[], &[("RSHMEM_COLL_ALGO", algo), ("RSHMEM_WAIT_WARN", "20")], 300);
    let mut checks = names(&[&["disjoint"], &KINDS[..6]]);
    checks.extend(names(&[&["world", "threads_world", "threads_shared"], &KINDS]));
    job.assert_all(n, &checks);
    // 240 iterations a phase, the kinds in turn.
    assert_eq!(job.check(0, "world.large_reduce").count, 240 / 9 + 1, "world.large_reduce ran every ninth iteration");
}

#[test]
fn stress_auto() {
    stress(8, "auto");
    stress(3, "auto");
}

#[test]
fn stress_direct_oneshot() {
    stress(6, "broadcast=direct,fcollect=direct,collect=direct,reduce=oneshot,reduce_scatter=direct,barrier=dissem:2");
}

#[test]
fn stress_tree_ring() {
    stress(7, "broadcast=tree,fcollect=ring,collect=ring,reduce=ring,reduce_scatter=ring,barrier=dissem:3");
    stress(4, "reduce=rsag");
}
