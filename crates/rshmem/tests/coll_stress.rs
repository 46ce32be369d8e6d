//! Concurrent collectives on disjoint teams, back-to-back collectives with no barrier
//! and sources overwritten as soon as a call returns, and two threads per PE running
//! collectives on two teams at once (examples/pe_coll_stress.rs), under each algorithm
//! family.

mod common;
use common::*;

fn stress(n: usize, algo: &str) {
    let job = run_env(n, "pe_coll_stress", &[], &[("RSHMEM_COLL_ALGO", algo), ("RSHMEM_WAIT_WARN", "20")], 300);
    job.assert_ok();
    assert!(job.stdout.contains(&format!("stress passed on {n} PEs")), "{}", job.stdout);
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
