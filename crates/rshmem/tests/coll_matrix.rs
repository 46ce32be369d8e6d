//! Every collective x every algorithm x team shapes x sizes, against a sequential model
//! computed in the PE program (examples/pe_coll.rs). Algorithms are forced through
//! RSHMEM_COLL_ALGO; each job runs all cases (about 1,600 collectives on 8 PEs) back to
//! back, so one launch covers many cases.

mod common;
use common::*;

/// Every non-default algorithm of the first family: radix-2 barrier, direct broadcast and
/// gathers, one-shot all-reduce, direct reduce-scatter.
const DIRECT: &str = "barrier=dissem:2,broadcast=direct,fcollect=direct,collect=direct,reduce=oneshot,reduce_scatter=direct";
/// The other family: radix-3 barrier, tree broadcast, ring gathers, reduce-scatter +
/// all-gather, ring reduce-scatter.
const TREE_RING: &str = "barrier=dissem:3,broadcast=tree,fcollect=ring,collect=ring,reduce=rsag,reduce_scatter=ring";
/// Ring all-reduce, flat barrier.
const RING: &str = "barrier=dissem:8,reduce=ring,broadcast=tree";

fn matrix(n: usize, algo: &str, check: &str) {
    let job = run_env(n, "pe_coll", &[], &[("RSHMEM_COLL_ALGO", algo), ("RSHMEM_COLL_CHECK", check), ("RSHMEM_WAIT_WARN", "20")], 300);
    job.assert_ok();
    assert!(job.stdout.contains(&format!("all collective cases passed on {n} PEs")), "{}", job.stdout);
    assert_eq!(job.stdout.matches("collective cases passed").count(), n + 1, "every PE reports: {}", job.stdout);
}

#[test]
fn matrix_auto_with_argument_check_on_8_pes() {
    matrix(8, "auto", "1");
}

#[test]
fn matrix_direct_and_oneshot_on_8_pes() {
    matrix(8, DIRECT, "0");
}

#[test]
fn matrix_tree_ring_rsag_on_8_pes() {
    matrix(8, TREE_RING, "0");
}

#[test]
fn matrix_ring_allreduce_on_8_pes() {
    matrix(8, RING, "0");
}

#[test]
fn matrix_small_worlds() {
    for n in [1, 2, 3] {
        matrix(n, "auto", "0");
    }
    matrix(5, TREE_RING, "1");
    matrix(5, RING, "0");
}
