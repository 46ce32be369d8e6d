//! Dissemination barrier with radix k over a team's slot.
//!
//! Round `r` (distance `d = k^r`, while `d < n`): this PE adds 1 to the round-`r` counter
//! of members `me + j*d (mod n)` for `j = 1 .. k-1` with `j*d < n`, then waits until its
//! own round-`r` counter has received as many increments, in total over all barriers so
//! far, as it has sent in round `r` (the receivers of round `r` are exactly the senders,
//! mirrored). After round `r` a PE has heard, directly or through others, from the
//! `k^(r+1) - 1` members before it, so after `ceil(log_k n)` rounds from all of them.
//! Counters only grow, so back-to-back barriers need no reset: an increment that belongs
//! to the next barrier arriving early carries strictly more information (its sender has
//! completed this barrier). Radix 2 is the classic barrier (log2 n rounds, one signal
//! each); radix n is a flat barrier (one round, n - 1 signals). The radix comes from the
//! decision tree ([`crate::coll::select::barrier_radix`]) once per team.
//!
//! Hierarchical form (teams that span hosts, [`super::hosts`]): each member adds 1 to its
//! host leader's fan-in counter and waits on its own fan-out counter; a leader waits for
//! its host's fan-in, runs the dissemination above among the leaders only (over the
//! network), then adds 1 to each member's fan-out counter. Members never wait on the
//! network, and the network carries `hosts * log(hosts)` signals instead of
//! `n * log(n)`.

use super::select::BarrierAlgo;
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::heap::layout::{SLOT_BARRIER, SLOT_EPOCH};
use crate::runtime::teams::{Team, TeamInfo};
use crate::runtime::Runtime;
use crate::transport::notify::{self, WaitOutcome};
use crate::transport::AmoOp;

/// Most rounds a barrier can have (radix 2 and 2^64 PEs).
const MAX_ROUNDS: usize = 64;

/// Barrier over the members of `t`, without quiet (a sync).
pub(crate) fn team_barrier(rt: &Runtime, t: &TeamInfo, call: &'static str) -> Result<()> {
    let n = t.size;
    if n <= 1 {
        return Ok(());
    }
    let mut st = t.barrier.lock().unwrap_or_else(|p| p.into_inner());
    if st.radix == 0 {
        let mapped = (0..n).all(|i| {
            let pe = t.world_pe(i);
            rt.mapped(pe)
        });
        let hosts = t.host_groups(&rt.host_of);
        let forced = &rt.forced;
        if super::select::barrier(forced, hosts.spans_hosts()) == BarrierAlgo::Hier {
            st.radix = super::select::barrier_radix(forced, hosts.groups.len(), false);
            st.hier = Some(hosts);
        } else {
            st.radix = super::select::barrier_radix(forced, n, mapped);
        }
        st.targets = vec![0; MAX_ROUNDS];
    }
    let st = &mut *st;
    let slot = rt.heap.sys().team_slot(t.slot) + SLOT_BARRIER;
    // Publish that this PE entered barrier number `epoch`, so that a waiter can name the
    // member that has not (rather than the partner whose signal it happens to wait for).
    st.epoch += 1;
    let epoch = st.epoch;
    let epoch_word = rt.heap.sys().team_slot(t.slot) + SLOT_EPOCH;
    rt.to(rt.my_pe).store_word(rt.my_pe, epoch_word, 8, epoch)?;
    let missing = || lagging(rt, t, epoch, epoch_word);
    let Some(hosts) = &st.hier else {
        let members: Vec<usize> = (0..n).map(|i| t.world_pe(i)).collect();
        return dissemination(rt, &members, t.my_index, st.radix, slot, &mut st.targets, call, &missing);
    };
    // Hierarchical: counter 0 counts the fan-in at a leader, counters 1 .. 62 are the
    // leaders' rounds, counter 63 the fan-out at a member.
    let me = rt.my_pe;
    let (fan_in, fan_out) = (slot, slot + (MAX_ROUNDS - 1) * 8);
    let group = &hosts.groups[hosts.group_of[t.my_index]];
    let leader = t.world_pe(group[0]);
    if me != leader {
        rt.to(leader).signal_post(leader, fan_in, 8, AmoOp::FetchAdd, 1)?;
        st.targets[MAX_ROUNDS - 1] += 1;
        return wait_count(rt, fan_out, st.targets[MAX_ROUNDS - 1], call, || {
            missing().unwrap_or_else(|| format!("its host's leader PE {leader} (hierarchical barrier)"))
        });
    }
    st.targets[0] += group.len() as u64 - 1;
    wait_count(rt, fan_in, st.targets[0], call, || {
        missing().unwrap_or_else(|| format!("the {} other PEs of its host (hierarchical barrier)", group.len() - 1))
    })?;
    let leaders: Vec<usize> = hosts.leaders().into_iter().map(|i| t.world_pe(i)).collect();
    let mine = hosts.group_of[t.my_index];
    dissemination(rt, &leaders, mine, st.radix, slot + 8, &mut st.targets[1..MAX_ROUNDS - 1], call, &missing)?;
    for &i in &group[1..] {
        let pe = t.world_pe(i);
        rt.to(pe).signal_post(pe, fan_out, 8, AmoOp::FetchAdd, 1)?;
    }
    Ok(())
}

/// Waits until this PE's counter at `word` reaches `target`.
fn wait_count(rt: &Runtime, word: usize, target: u64, call: &'static str, what: impl Fn() -> String) -> Result<()> {
    let me = rt.my_pe;
    let local = rt.to(me);
    let outcome = notify::wait_until(
        rt.heap.base(me),
        rt.wait_policy(None),
        || Ok(local.load_word(me, word, 8)? >= target),
        || format!("{call} on PE {me} (waiting for {})", what()),
    )?;
    if outcome == WaitOutcome::TimedOut {
        return Err(Error::Timeout { call, what: what(), secs: 0.0, pe: me });
    }
    Ok(())
}

/// The members of `t` that have not entered this PE's barrier number `epoch` yet, as
/// the text of a wait ("PE 3, which has not entered barrier 5 of its team (it is at 4)"),
/// or `None` when every member whose heap this PE maps has (the wait is then for a
/// signal of a later round, or for a member reached only over the network, whose word
/// is not read here: a hang report must not wait on the network).
fn lagging(rt: &Runtime, t: &TeamInfo, epoch: u64, epoch_word: usize) -> Option<String> {
    let behind: Vec<String> = (0..t.size)
        .map(|i| t.world_pe(i))
        .filter(|&pe| pe != rt.my_pe && rt.mapped(pe))
        .filter_map(|pe| {
            let theirs = rt.to(pe).load_word(pe, epoch_word, 8).ok()?;
            (theirs < epoch).then(|| format!("PE {pe}, which has not entered barrier {epoch} of its team (it is at {theirs})"))
        })
        .collect();
    (!behind.is_empty()).then(|| behind.join("; "))
}

/// Dissemination with radix `radix` over the world PEs `members` (this PE is
/// `members[my]`), round `r` counting on the word at `counters + 8 r`; `targets[r]` holds
/// the increments expected so far on it. `missing` names the members that have not
/// entered the barrier, for the wait's description.
#[allow(clippy::too_many_arguments)]
fn dissemination(
    rt: &Runtime,
    members: &[usize],
    my: usize,
    radix: usize,
    counters: usize,
    targets: &mut [u64],
    call: &'static str,
    missing: &dyn Fn() -> Option<String>,
) -> Result<()> {
    let n = members.len();
    let mut dist = 1usize;
    let mut round = 0usize;
    while dist < n {
        debug_assert!(round < targets.len());
        let flag = counters + round * 8;
        let mut sent = 0u64;
        for j in 1..radix {
            let d = match j.checked_mul(dist) {
                Some(d) if d < n => d,
                _ => break,
            };
            let partner = members[(my + d) % n];
            rt.to(partner).signal_post(partner, flag, 8, AmoOp::FetchAdd, 1)?;
            sent += 1;
        }
        targets[round] += sent;
        let from = members[(my + n - dist) % n];
        wait_count(rt, flag, targets[round], call, || {
            missing().unwrap_or_else(|| format!("PE {from} (barrier round {round} of radix {radix})"))
        })?;
        round += 1;
        dist = match dist.checked_mul(radix) {
            Some(d) => d,
            None => break,
        };
    }
    Ok(())
}

/// Quiet, then barrier over every PE.
pub(crate) fn barrier_all(rt: &Runtime, call: &'static str) -> Result<()> {
    rt.quiet_all()?;
    let world = rt.teams.get(call, Team::WORLD, rt.my_pe)?;
    team_barrier(rt, &world, call)
}

impl Ctx {
    /// Completes this PE's outstanding operations and waits until every PE has called it
    /// (OpenSHMEM `barrier_all`).
    pub fn barrier_all(&self) -> Result<()> {
        barrier_all(&self.rt, "barrier_all")
    }

    /// Waits until every PE has called it, without completing operations (`sync_all`).
    pub fn sync_all(&self) -> Result<()> {
        self.sync(Team::WORLD)
    }

    /// Quiet, then a barrier over the members of `team`.
    pub fn barrier(&self, team: Team) -> Result<()> {
        let t = self.team_info("barrier", team)?;
        self.rt.quiet_all()?;
        team_barrier(&self.rt, &t, "barrier")
    }

    /// Barrier over the members of `team` without quiet (`team_sync`).
    pub fn sync(&self, team: Team) -> Result<()> {
        let t = self.team_info("sync", team)?;
        team_barrier(&self.rt, &t, "sync")
    }
}
