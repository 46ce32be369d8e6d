//! The remote transport: the RMA, AMO, point-to-point, signal, lock and stress programs
//! again with `RSHMEM_TRANSPORT=ucx`, so every pair of distinct PEs goes through UCX
//! (over loopback TCP, and once over UCX's shared-memory transports). Sizes are smaller
//! than the shared-memory runs': on 2 cores every remote operation is a round trip
//! through a peer's progress thread.
//!
//! Skipped, with the reason printed, only where libucp.so.0 cannot be loaded (CI installs
//! UCX, so there they run).

mod common;
use common::*;

/// Whether UCX is here; prints why not.
fn ucx_present() -> bool {
    match rshmem::ucx_available() {
        Ok(()) => true,
        Err(e) => {
            println!("SKIPPED: UCX tests need libucp: {e}");
            false
        }
    }
}

fn over(tls: &str, n: usize, example: &str, args: &[&str]) -> Job {
    let job = run_env(n, example, args, &[("RSHMEM_TRANSPORT", "ucx"), ("UCX_TLS", tls)], 180);
    job.assert_ok();
    job
}

#[test]
fn rma_over_ucx_tcp_on_2_and_3_pes() {
    if !ucx_present() {
        return;
    }
    for n in [2, 3] {
        over("tcp", n, "pe_rma", &[]).assert_all(n, &rma_checks());
    }
}

#[test]
fn every_amo_of_every_type_over_ucx_tcp() {
    if !ucx_present() {
        return;
    }
    over("tcp", 2, "pe_amo", &["table"]).assert_all(2, &amo_table_checks());
}

#[test]
fn atomics_match_the_model_over_ucx_tcp() {
    if !ucx_present() {
        return;
    }
    over("tcp", 4, "pe_amo", &["stress", "3000"]).assert_amo_stress(4, 3000);
    let job = over("tcp", 3, "pe_amo", &["tickets", "3000"]);
    job.assert_all(3, &["tickets.increasing"]);
    assert_eq!(job.check(0, "tickets.permutation").detail, "9000 fetch_inc tickets (u64 and u32) form a permutation");
    let job = over("tcp", 3, "pe_amo", &["stack", "50", "200"]);
    job.assert_all(3, &["stack.popped_node_was_free", "stack.pushed_node_was_held_once"]);
    assert_eq!(job.check(0, "stack.survived").detail, "150 nodes on 3 PEs survived the churn: none lost, none duplicated");
}

#[test]
fn waits_signals_and_locks_over_ucx_tcp() {
    if !ucx_present() {
        return;
    }
    let job = over("tcp", 2, "pe_p2p", &[]);
    job.assert_passed(2).assert_checks([1], &names(&[tables::SYNC, &["wait_until", "wait_until_any_vector"]]));
    assert_eq!(job.check(0, "ping_pong.acks").detail, "every one of the 1 waiters acknowledged round 300");
    over("tcp", 2, "pe_signal", &["order", "2000"]).assert_signal_order(2, 2000);
    over("tcp", 2, "pe_signal", &["ops"]).assert_all(2, &signal_ops_checks());
    let job = over("tcp", 2, "pe_lock", &[]);
    job.assert_all(2, &["counter.alone_inside"]).assert_checks([0], &["counter.total"]);
}

#[test]
fn random_rma_against_the_model_over_ucx_tcp() {
    if !ucx_present() {
        return;
    }
    over("tcp", 4, "pe_stress", &["30", "3"]).assert_stress(4, 30);
}

#[test]
fn rma_and_atomics_over_ucx_shared_memory() {
    if !ucx_present() {
        return;
    }
    over("sm,self", 2, "pe_rma", &[]).assert_all(2, &rma_checks());
    over("sm,self", 2, "pe_amo", &["table"]).assert_all(2, &amo_table_checks());
    over("sm,self", 2, "pe_signal", &["order", "2000"]).assert_signal_order(2, 2000);
}

#[test]
fn an_unknown_transport_is_refused_by_name() {
    let job = run_env(2, "pe_launch", &[], &[("RSHMEM_TRANSPORT", "carrier-pigeon")], 60);
    assert_ne!(job.code, 0, "{}", job.stdout);
    let all = format!("{}{}", job.stdout, job.stderr);
    assert!(all.contains("RSHMEM_TRANSPORT") && all.contains("carrier-pigeon") && all.contains("not auto, local or ucx"), "{all}");
}
