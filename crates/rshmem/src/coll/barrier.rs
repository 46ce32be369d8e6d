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

use crate::ctx::{Ctx, Runtime};
use crate::error::{Error, Result};
use crate::heap::layout::SLOT_BARRIER;
use crate::team::{Team, TeamInfo};
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
            rt.to(pe).direct_address(pe, 0).is_some()
        });
        st.radix = super::select::barrier_radix(&rt.coll.forced, n, mapped);
        st.targets = vec![0; MAX_ROUNDS];
    }
    let radix = st.radix;
    let slot = rt.heap.sys().team_slot(t.slot) + SLOT_BARRIER;
    let me = rt.my_pe;
    let local = rt.to(me);
    let mut dist = 1usize;
    let mut round = 0usize;
    while dist < n {
        let flag = slot + round * 8;
        let mut sent = 0u64;
        for j in 1..radix {
            let d = match j.checked_mul(dist) {
                Some(d) if d < n => d,
                _ => break,
            };
            let partner = t.world_pe((t.my_index + d) % n);
            rt.to(partner).amo(partner, flag, 8, AmoOp::FetchAdd, 1, 0);
            sent += 1;
        }
        st.targets[round] += sent;
        let target = st.targets[round];
        let outcome = notify::wait_until(
            rt.heap.base(me),
            rt.wait_policy(None),
            || local.load_word(me, flag, 8) >= target,
            || {
                format!(
                    "{call} on PE {me} (barrier round {round} of radix {radix}, waiting for PE {})",
                    t.world_pe((t.my_index + n - dist) % n)
                )
            },
        );
        if outcome == WaitOutcome::TimedOut {
            return Err(Error::Timeout { call, what: "the barrier".into(), secs: 0.0, pe: me });
        }
        round += 1;
        dist = match dist.checked_mul(radix) {
            Some(d) => d,
            None => break,
        };
        debug_assert!(round < MAX_ROUNDS);
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
