//! Every collective x every algorithm x team shapes x sizes, against a sequential model
//! computed in the PE program (tests/pe/coll.rs). Algorithms are forced through
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

/// The pushed forms forced (they fall back to direct and one-shot where a message does
/// not fit an inbox slot or part).
const PUSH: &str = "broadcast=push,fcollect=push,reduce=push";

/// Every hierarchical algorithm.
const HIER: &str = "barrier=hier,broadcast=hier,fcollect=hier,collect=hier,reduce=hier";

fn matrix(n: usize, algo: &str, check: &str) {
    let job = run_env(n, "pe_coll", &[], &[("RSHMEM_COLL_ALGO", algo), ("RSHMEM_COLL_CHECK", check), ("RSHMEM_WAIT_WARN", "20")], 300);
    job.assert_all(n, &coll_checks(false));
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
    matrix(5, PUSH, "0");
    matrix(3, PUSH, "1");
}

#[test]
fn matrix_hier_forced_on_one_host() {
    matrix(5, HIER, "0");
}

/// Runs pe_coll as `n` PEs, PE `p` on host `h<host_of>` (a shell expression in
/// `PE`, the PE's number), collectives over shared memory within a host and UCX tcp across.
fn across_hosts(n: usize, host_of: &str, args: &[&str], env: &[(&str, &str)]) {
    // The PE's number: rshmemrun sets RSHMEM_PE, mpirun PMIX_RANK.
    let script = format!("PE=${{RSHMEM_PE:-$PMIX_RANK}}; RSHMEM_HOST=h$(({host_of})) exec \"$0\" \"$@\"");
    let prog = example("pe_coll");
    let mut full = vec!["-c", &script, prog.to_str().expect("utf-8 path")];
    full.extend_from_slice(args);
    // The host split decides the transports (RSHMEM_TRANSPORT=ucx in the suite's
    // environment would send every pair through UCX and leave no host with two PEs).
    let mut all_env = vec![("RSHMEM_TRANSPORT", "auto"), ("UCX_TLS", "tcp"), ("RSHMEM_WAIT_WARN", "20")];
    all_env.extend_from_slice(env);
    let job = run_program_env(n, std::path::Path::new("/bin/sh"), &full, &all_env, 300);
    let mut checks = coll_checks(args.contains(&"expect-hier"));
    if args.contains(&"expect-push") {
        checks.push("push.plan".into());
        checks.push("push.staged_plan".into());
    }
    if args.contains(&"expect-rounds") {
        checks.push("rounds.plan".into());
    }
    job.assert_all(n, &checks);
}

#[test]
fn matrix_hier_across_two_simulated_hosts_over_ucx_tcp() {
    if let Err(e) = rshmem::ucx_available() {
        println!("SKIPPED: hosts apart need UCX: {e}");
        return;
    }
    // 2 hosts x 2 PEs: the decision tree picks the hierarchical forms by itself.
    across_hosts(4, "PE / 2", &["expect-hier"], &[("RSHMEM_COLL_CHECK", "1")]);
    // Interleaved hosts (non-contiguous ranks per host): the host order differs from
    // rank order, which the float model follows.
    across_hosts(4, "PE % 2", &["expect-hier"], &[]);
    // Three hosts of 2, 1 and 2 PEs.
    across_hosts(5, "PE * PE % 3", &["expect-hier", "small"], &[]);
    // One PE per host (every pair over UCX): the hierarchical forms are the leaders'
    // step alone.
    across_hosts(3, "PE", &["small"], &[("RSHMEM_COLL_ALGO", HIER)]);
    // The same with the decision tree's own picks: small broadcasts, fcollects and
    // all-reduces pushed into inboxes over UCX.
    across_hosts(3, "PE", &["small", "expect-push"], &[("RSHMEM_COLL_CHECK", "1")]);
}

/// Every pair over UCX tcp on teams of 2, 3 and 4 PEs, the full sizes (1 MiB per PE on
/// the world): all-reduces past the staging set go one-shot, pushed in rounds through
/// both staging sets, and must match the model bit for bit (in place and not, every
/// type and operator), on uneven splits (3 PEs) too.
#[test]
fn oneshot_reduce_in_rounds_over_ucx_tcp() {
    if let Err(e) = rshmem::ucx_available() {
        println!("SKIPPED: hosts apart need UCX: {e}");
        return;
    }
    for n in [2, 3, 4] {
        across_hosts(n, "PE", &["expect-rounds"], &[("RSHMEM_COLL_CHECK", "1")]);
    }
}

/// A stream of broadcasts with every pair over UCX tcp (2 and 3 PEs): a root that runs
/// ahead through the inbox and the staging ring (members asked how far they got only
/// now and then) must never overwrite a slot a member has not read; every call is
/// checked. (A root that believed its members 40 calls further on than they were failed
/// it.)
#[test]
fn broadcast_stream_over_ucx_tcp() {
    if let Err(e) = rshmem::ucx_available() {
        println!("SKIPPED: hosts apart need UCX: {e}");
        return;
    }
    for n in [2, 3] {
        let script = "PE=${RSHMEM_PE:-$PMIX_RANK}; RSHMEM_HOST=h$PE exec \"$0\" \"$@\"";
        let prog = example("pe_coll");
        let args = ["-c", script, prog.to_str().expect("utf-8 path"), "stream"];
        let env = [("RSHMEM_TRANSPORT", "auto"), ("UCX_TLS", "tcp"), ("RSHMEM_WAIT_WARN", "20"), ("RSHMEM_HANG_TIMEOUT", "120")];
        run_program_env(n, std::path::Path::new("/bin/sh"), &args, &env, 240).assert_all(n, &["bcast.stream"]);
    }
}
