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
    match rshmem::transport::ucx::available() {
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
        let job = over("tcp", n, "pe_rma", &[]);
        job.assert_rma_passed(n);
    }
}

#[test]
fn every_amo_of_every_type_over_ucx_tcp() {
    if !ucx_present() {
        return;
    }
    let job = over("tcp", 2, "pe_amo", &["table"]);
    job.assert_amo_table(2);
}

#[test]
fn atomics_match_the_model_over_ucx_tcp() {
    if !ucx_present() {
        return;
    }
    let job = over("tcp", 4, "pe_amo", &["stress", "3000"]);
    assert_eq!(job.stdout.matches("counters equal the model of 4 PEs x 3000 ops").count(), 4, "{}", job.stdout);
    let job = over("tcp", 3, "pe_amo", &["tickets", "3000"]);
    assert!(job.stdout.contains("9000 fetch_inc tickets (u64 and u32) form a permutation"), "{}", job.stdout);
    let job = over("tcp", 3, "pe_amo", &["stack", "50", "200"]);
    assert!(job.stdout.contains("stack: 150 nodes on 3 PEs survived the churn: none lost, none duplicated"), "{}", job.stdout);
}

#[test]
fn waits_signals_and_locks_over_ucx_tcp() {
    if !ucx_present() {
        return;
    }
    let job = over("tcp", 2, "pe_p2p", &[]);
    assert!(job.stdout.contains("ping-pong of 300 rounds with 1 waiters done"), "{}", job.stdout);
    let job = over("tcp", 2, "pe_signal", &["order", "2000"]);
    assert!(job.stdout.contains("order: 2000 rounds from PE 1: every signal seen came with its data"), "{}", job.stdout);
    let job = over("tcp", 2, "pe_signal", &["ops"]);
    assert!(job.stdout.contains("ops: set, add, fetch, every wait comparison, timeout and empty put behave"), "{}", job.stdout);
    let job = over("tcp", 2, "pe_lock", &[]);
    assert!(job.stdout.contains("critical sections"), "{}", job.stdout);
}

#[test]
fn random_rma_against_the_model_over_ucx_tcp() {
    if !ucx_present() {
        return;
    }
    let job = over("tcp", 4, "pe_stress", &["30", "3"]);
    assert!(job.stdout.contains("pe_stress: 30 rounds (seed 3) on 4 PEs: 720 random operations"), "{}", job.stdout);
    assert_eq!(job.stdout.matches("checks passed").count(), 4, "{}", job.stdout);
}

#[test]
fn rma_and_atomics_over_ucx_shared_memory() {
    if !ucx_present() {
        return;
    }
    let job = over("sm,self", 2, "pe_rma", &[]);
    assert_eq!(job.stdout.matches("checks passed").count(), 2, "{}", job.stdout);
    let job = over("sm,self", 2, "pe_amo", &["table"]);
    job.assert_amo_table(2);
    let job = over("sm,self", 2, "pe_signal", &["order", "2000"]);
    assert!(job.stdout.contains("every signal seen came with its data"), "{}", job.stdout);
}

#[test]
fn an_unknown_transport_is_refused_by_name() {
    let job = run_env(2, "pe_launch", &[], &[("RSHMEM_TRANSPORT", "carrier-pigeon")], 60);
    assert_ne!(job.code, 0, "{}", job.stdout);
    let all = format!("{}{}", job.stdout, job.stderr);
    assert!(all.contains("RSHMEM_TRANSPORT") && all.contains("carrier-pigeon") && all.contains("not auto, local or ucx"), "{all}");
}
