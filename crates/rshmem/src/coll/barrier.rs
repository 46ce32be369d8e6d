//! Dissemination barrier over a team's slot.
//!
//! Round `r` of barrier number `e`: add 1 to the round-`r` counter of member
//! `(me + 2^r) mod n`, then wait until this PE's own round-`r` counter reaches `e`.
//! Counters only grow, so back-to-back barriers need no reset.

use crate::ctx::{Ctx, Runtime};
use crate::error::{Error, Result};
use crate::team::{Team, TeamInfo};
use crate::transport::notify::{self, WaitOutcome};
use crate::transport::AmoOp;
use std::sync::atomic::Ordering;

/// Most rounds a barrier can have (2^64 PEs).
const MAX_ROUNDS: usize = 64;

/// Barrier over the members of `t`, without quiet (a sync).
pub(crate) fn team_barrier(rt: &Runtime, t: &TeamInfo, call: &'static str) -> Result<()> {
    if t.size <= 1 {
        return Ok(());
    }
    let epoch = t.barrier_epoch.fetch_add(1, Ordering::Relaxed) + 1;
    let slot = rt.heap.sys().team_slot(t.slot);
    let me = rt.my_pe;
    let mut dist = 1usize;
    let mut round = 0usize;
    while dist < t.size {
        debug_assert!(round < MAX_ROUNDS);
        let flag = slot + round * 8;
        let partner = t.world_pe((t.my_index + dist) % t.size);
        rt.to(partner).amo(partner, flag, 8, AmoOp::FetchAdd, 1, 0);
        let local = rt.to(me);
        let outcome = notify::wait_until(
            rt.heap.base(me),
            rt.wait_policy(None),
            || local.load_word(me, flag, 8) >= epoch,
            || format!("{call} on PE {me} (round {round}, waiting for PE {})", t.world_pe((t.my_index + t.size - dist) % t.size)),
        );
        if outcome == WaitOutcome::TimedOut {
            return Err(Error::Timeout { call, what: "the barrier".into(), secs: 0.0, pe: me });
        }
        dist *= 2;
        round += 1;
    }
    Ok(())
}

/// Quiet, then barrier over every PE.
pub(crate) fn barrier_all(rt: &Runtime, call: &'static str) -> Result<()> {
    crate::ops::order::quiet_all(rt);
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
        crate::ops::order::quiet_all(&self.rt);
        team_barrier(&self.rt, &t, "barrier")
    }

    /// Barrier over the members of `team` without quiet (`team_sync`).
    pub fn sync(&self, team: Team) -> Result<()> {
        let t = self.team_info("sync", team)?;
        team_barrier(&self.rt, &t, "sync")
    }
}
