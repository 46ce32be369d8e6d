//! Relay test program (tests/ucx_am.rs): puts and gets that travel through a third PE.
//!
//! Mode `all` (the default): every PE relays a block to every other PE through every PE
//! it may relay through (a PE whose heap it does not map, so the staged UCX protocol
//! reaches it), at several sizes (one word, a few pages, more than one protocol piece), and
//! reads the same blocks back through the same relays. Each block's place on the final PE
//! is its own (origin, relay) slot, so the final PE checks every slot: the pattern of the
//! origin that wrote it, or untouched. How many blocks were sent and how many arrived are
//! summed over the job and must agree (and be non-zero). The argument checks
//! (relay = final PE, relay = self, final = self, a PE out of range, a range past the
//! allocation) are checked by error and message.
//!
//! Mode `refused`: on a transport that does not relay (shared memory), the call is refused
//! by name and says what would make it work.
//!
//! Run: `RSHMEM_TRANSPORT=ucx RSHMEM_UCX_PROTOCOL=am rshmemrun -n 4 target/release/examples/pe_relay`.

#[path = "../support/mod.rs"]
mod support;

use rshmem::{Ctx, Error, ReduceOp, Result, Team};
use std::process::ExitCode;
use support::{pattern, Check};

/// Elements per block at each size: one word, a few pages, more than one 256 KiB piece.
const SIZES: [usize; 3] = [1, 1001, 70_001];

fn tag(origin: usize, relay: usize, size: usize) -> u64 {
    ((origin as u64) << 32) ^ ((relay as u64) << 16) ^ size as u64
}

/// Relays that `me` may use to reach `pe`: every other PE whose heap it does not map.
fn relays_for(ctx: &Ctx, probe: &rshmem::Sym<u64>, pe: usize) -> Vec<usize> {
    let me = ctx.my_pe();
    (0..ctx.n_pes()).filter(|&r| r != me && r != pe && ctx.ptr(probe, r).is_none()).collect()
}

fn all(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let max = *SIZES.iter().max().expect("sizes");
    // Slot (origin, relay) of every PE: `max` elements.
    let slots = ctx.alloc::<u64>(n * n * max)?;
    let counts = ctx.alloc::<u64>(2)?;
    let totals = ctx.alloc::<u64>(2)?;
    let mut sent = 0u64;
    let mut arrived = 0u64;
    for &size in &SIZES {
        slots.copy_from(0, &vec![0u64; n * n * max])?;
        ctx.barrier_all()?;
        for pe in (0..n).filter(|&p| p != me) {
            for relay in relays_for(ctx, &slots, pe) {
                let slot = (me * n + relay) * max;
                ctx.relay_put(&slots, slot, &pattern::<u64>(me, tag(me, relay, size), size), pe, relay)?;
                sent += 1;
            }
        }
        ctx.barrier_all()?;
        let all_slots = slots.to_vec()?;
        for origin in (0..n).filter(|&o| o != me) {
            for relay in (0..n).filter(|&r| r != me && r != origin) {
                let at = (origin * n + relay) * max;
                let got = &all_slots[at..at + size];
                if got.iter().all(|&w| w == 0) {
                    continue;
                }
                arrived += 1;
                let want = pattern::<u64>(origin, tag(origin, relay, size), size);
                ck.same_bits("relay.put", got, &want, format_args!("{size} words from PE {origin} through PE {relay}"));
                let rest = &all_slots[at + size..at + max];
                ck.ok_with("relay.put_stays_in_range", rest.iter().all(|&w| w == 0), || {
                    format!("words after the {size} from PE {origin} through PE {relay} were written")
                });
            }
        }
        // Gets of the same slots back through the same relays.
        for pe in (0..n).filter(|&p| p != me) {
            for relay in relays_for(ctx, &slots, pe) {
                let mut got = vec![0u64; size];
                ctx.relay_get(&mut got, &slots, (me * n + relay) * max, pe, relay)?;
                let want = pattern::<u64>(me, tag(me, relay, size), size);
                ck.same_bits("relay.get", &got, &want, format_args!("{size} words of PE {pe} through PE {relay}"));
            }
        }
        ctx.barrier_all()?;
    }
    counts.copy_from(0, &[sent, arrived])?;
    ctx.reduce(Team::WORLD, &totals, &counts, 2, ReduceOp::Sum)?;
    let [s, a] = <[u64; 2]>::try_from(totals.to_vec()?).expect("two totals");
    ck.ok("relay.every_block_arrived_once", s == a && s > 0, format_args!("{s} blocks relayed, {a} found at their final PEs"));
    errors(ctx, ck, &slots, max)
}

fn errors(ctx: &Ctx, ck: &mut Check, slots: &rshmem::Sym<u64>, max: usize) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let (right, far) = ((me + 1) % n, (me + 2) % n);
    let mine = format!("PE {me}");
    let bad_relay = |e: &Error| matches!(e, Error::InvalidArgument { call: "relay_put", arg: "relay_pe", .. });
    let one = [7u64];
    ck.err("errors.relay_is_the_final_pe", ctx.relay_put(slots, 0, &one, right, right), bad_relay, &["relay_put", "relay_pe", &mine]);
    ck.err("errors.relay_through_self", ctx.relay_put(slots, 0, &one, right, me), bad_relay, &["relay_put", "itself", &mine]);
    ck.err("errors.relay_to_self", ctx.relay_put(slots, 0, &one, me, far), bad_relay, &["relay_put", "itself", &mine]);
    ck.err(
        "errors.relay_pe_out_of_range",
        ctx.relay_put(slots, 0, &one, right, n),
        |e| matches!(e, Error::PeOutOfRange { call: "relay_put", .. }),
        &["relay_put", &format!("PE {n}")],
    );
    let mut two = [0u64; 2];
    ck.err(
        "errors.relay_get_past_the_allocation",
        ctx.relay_get(&mut two, slots, n * n * max - 1, far, right),
        |e| matches!(e, Error::OutOfBounds { call: "relay_get", .. } | Error::InvalidArgument { call: "relay_get", .. }),
        &["relay_get"],
    );
    ctx.barrier_all()
}

/// On a transport that does not relay, the call is refused by name.
fn refused(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let slots = ctx.alloc::<u64>(4)?;
    ck.err(
        "refused.relay_needs_the_staged_protocol",
        ctx.relay_put(&slots, 0, &[1u64], (me + 2) % n, (me + 1) % n),
        |e| matches!(e, Error::Unsupported { call: "relay_put", .. }),
        &["relay_put", "RSHMEM_UCX_PROTOCOL=am", &format!("PE {me}")],
    );
    ctx.barrier_all()?;
    ck.ok("refused.nothing_moved", slots.to_vec()?.iter().all(|&w| w == 0), "the destination after the refused relay");
    ctx.barrier_all()
}

fn main() -> ExitCode {
    support::run_program("pe_relay", 3, |ctx, ck| {
        let args: Vec<String> = std::env::args().skip(1).collect();
        match args.first().map(String::as_str).unwrap_or("all") {
            "all" => all(ctx, ck),
            "refused" => refused(ctx, ck),
            other => Err(support::unknown_mode(ctx, "pe_relay", other)),
        }
    })
}
