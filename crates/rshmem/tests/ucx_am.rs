//! The staged UCX protocol (active messages that the target's progress thread carries
//! out: what GPU heaps use, since the UCX builds here cannot touch GPU memory), tested on
//! CPU PEs with `RSHMEM_UCX_PROTOCOL=am`: the RMA, AMO and signal programs with every pair
//! of distinct PEs going through it over loopback TCP.
//!
//! Skipped, with the reason printed, only where libucp.so.0 cannot be loaded (CI installs
//! UCX, so there they run).

mod common;
use common::*;

fn ucx_present() -> bool {
    match rshmem::ucx_available() {
        Ok(()) => true,
        Err(e) => {
            println!("SKIPPED: staged UCX tests need libucp: {e}");
            false
        }
    }
}

fn staged(n: usize, example: &str, args: &[&str]) -> Job {
    let env = [("RSHMEM_TRANSPORT", "ucx"), ("RSHMEM_UCX_PROTOCOL", "am"), ("UCX_TLS", "tcp")];
    let job = run_env(n, example, args, &env, 180);
    job.assert_ok();
    job
}

#[test]
fn rma_through_active_messages() {
    if !ucx_present() {
        return;
    }
    staged(2, "pe_rma", &[]).assert_all(2, &rma_checks());
}

#[test]
fn atomics_through_active_messages_match_the_model() {
    if !ucx_present() {
        return;
    }
    staged(2, "pe_amo", &["table"]).assert_all(2, &amo_table_checks());
    staged(4, "pe_amo", &["stress", "1000"]).assert_amo_stress(4, 1000);
}

#[test]
fn signals_through_active_messages_come_after_their_data() {
    if !ucx_present() {
        return;
    }
    staged(2, "pe_signal", &["order", "1000"]).assert_signal_order(2, 1000);
    staged(2, "pe_signal", &["ops"]).assert_all(2, &signal_ops_checks());
}

#[test]
fn an_unknown_ucx_protocol_is_refused_by_name() {
    let job = run_env(2, "pe_launch", &[], &[("RSHMEM_UCX_PROTOCOL", "smoke-signals")], 60);
    assert_ne!(job.code, 0, "{}", job.stdout);
    let all = format!("{}{}", job.stdout, job.stderr);
    assert!(all.contains("RSHMEM_UCX_PROTOCOL") && all.contains("smoke-signals") && all.contains("not rma or am"), "{all}");
}

#[test]
fn relayed_puts_and_gets_arrive_through_every_relay() {
    if !ucx_present() {
        return;
    }
    // Every PE through UCX: each relay carries the request on through its own UCX
    // endpoint to the final PE.
    staged(4, "pe_relay", &[]).assert_all(4, &RELAY_CHECKS);
}

#[test]
fn relays_across_two_simulated_hosts_reach_the_relays_neighbours() {
    if !ucx_present() {
        return;
    }
    // Two hosts of two PEs (RSHMEM_HOST): a PE relays only through the other host's PEs,
    // which carry a block on to their own neighbour through their mapping, or back to the
    // origin's host through UCX.
    let script = "PE=${RSHMEM_PE:-$PMIX_RANK}; RSHMEM_HOST=h$((PE / 2)) exec \"$0\" \"$@\"";
    let prog = example("pe_relay");
    let env = [("RSHMEM_TRANSPORT", "auto"), ("RSHMEM_UCX_PROTOCOL", "am"), ("UCX_TLS", "tcp")];
    let job = run_program_env(4, std::path::Path::new("/bin/sh"), &["-c", script, prog.to_str().expect("utf-8 path")], &env, 180);
    job.assert_ok().assert_all(4, &RELAY_CHECKS);
}

#[test]
fn relays_are_refused_by_name_where_the_transport_cannot_relay() {
    let job = run(3, "pe_relay", &["refused"]);
    job.assert_ok().assert_all(3, &["refused.relay_needs_the_staged_protocol", "refused.nothing_moved"]);
}

const RELAY_CHECKS: [&str; 9] = [
    "relay.put",
    "relay.put_stays_in_range",
    "relay.get",
    "relay.every_block_arrived_once",
    "errors.relay_is_the_final_pe",
    "errors.relay_through_self",
    "errors.relay_to_self",
    "errors.relay_pe_out_of_range",
    "errors.relay_get_past_the_allocation",
];
