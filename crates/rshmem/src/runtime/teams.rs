//! The teams this PE belongs to: handles, member sets and per-team bookkeeping.
//!
//! A team is an ordered set of PEs `start, start + stride, ...` with its own numbering
//! and its own synchronization slot in every member's heap (see [`crate::heap::layout`]).
//! This module holds only the state; creating and destroying teams (collective) is
//! `crate::team`, and the bookkeeping fields are used by `crate::coll`.

use crate::error::{Error, Result};
use crate::runtime::hosts::HostGroups;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

/// A team handle. Copyable; valid on the PEs that are members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Team(pub(crate) u32);

impl Team {
    /// All PEs of the job.
    pub const WORLD: Team = Team(0);
    /// The PEs that share memory with this one (on one host: every PE).
    pub const SHARED: Team = Team(1);
    /// The handle a split returns on PEs that are not members of the new team.
    pub const INVALID: Team = Team(u32::MAX);

    /// Whether this is the invalid handle.
    pub fn is_invalid(self) -> bool {
        self == Team::INVALID
    }

    /// The handle's number (stable for the team's life; used by the C ABI).
    pub fn raw(self) -> u32 {
        self.0
    }

    /// The handle with number `raw`.
    pub fn from_raw(raw: u32) -> Team {
        Team(raw)
    }
}

/// Team creation options (OpenSHMEM `shmem_team_config_t`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TeamConfig {
    /// Number of contexts the team expects to create.
    pub num_contexts: i32,
}

/// Per-team collective bookkeeping of this PE (used by `coll::session`).
#[derive(Debug, Default)]
pub(crate) struct TeamCollState {
    /// Collectives started on the team.
    pub(crate) seq: u64,
    /// Pushes this PE has waited for so far, per ARRIVE counter (each only grows).
    pub(crate) arrivals: [u64; 2],
    /// Collective that last used each [`STAGE_UNIT`](crate::heap::layout::STAGE_UNIT) of
    /// the team's staging area and its ring extension (0: never; sized by `Session::begin`).
    pub(crate) stage_seq: Vec<u64>,
    /// Per member: the latest collective this PE saw the member publish a step of (0:
    /// none). A member that entered collective `s` has finished every earlier one on the
    /// team, reads of this PE's staging included, so reusing a set needs no wait on it.
    pub(crate) entered: Vec<std::cell::Cell<u64>>,
    /// Whether every member's heap is mapped (computed once).
    pub(crate) mapped: Option<bool>,
    /// The members grouped by host (computed once).
    pub(crate) hosts: Option<Arc<HostGroups>>,
}

/// Per-team barrier bookkeeping of this PE (used by `coll::barrier`).
#[derive(Debug, Default)]
pub(crate) struct BarrierState {
    /// Radix chosen for the team (0: not yet).
    pub(crate) radix: usize,
    /// Cumulative increments expected on each round counter.
    pub(crate) targets: Vec<u64>,
    /// The members grouped by host, when the team uses the hierarchical barrier.
    pub(crate) hier: Option<HostGroups>,
    /// Barriers this PE has entered on the team (published in its EPOCH word).
    pub(crate) epoch: u64,
}

/// What the runtime knows of one team this PE belongs to.
#[derive(Debug)]
pub(crate) struct TeamInfo {
    /// First member's world PE.
    pub(crate) start: usize,
    /// Distance between members' world PEs.
    pub(crate) stride: usize,
    /// Number of members.
    pub(crate) size: usize,
    /// This PE's number in the team.
    pub(crate) my_index: usize,
    /// Synchronization slot.
    pub(crate) slot: usize,
    /// Configuration given at creation.
    pub(crate) config: TeamConfig,
    /// Barrier bookkeeping (radix, counter targets).
    pub(crate) barrier: Mutex<BarrierState>,
    /// Collective bookkeeping (sequence number, arrivals, staging use).
    pub(crate) coll: Mutex<TeamCollState>,
}

impl TeamInfo {
    /// A team of `size` PEs from world PE `start`, `stride` apart, in which this PE is
    /// number `my_index`, synchronizing in `slot`.
    pub(crate) fn new(start: usize, stride: usize, size: usize, my_index: usize, slot: usize, config: TeamConfig) -> TeamInfo {
        TeamInfo { start, stride, size, my_index, slot, config, barrier: Mutex::default(), coll: Mutex::default() }
    }

    /// World PE of team member `i`.
    #[inline]
    pub(crate) fn world_pe(&self, i: usize) -> usize {
        self.start + i * self.stride
    }

    /// The members grouped by the host (`host_of[pe]`, the runtime's table) of their
    /// world PE.
    pub(crate) fn host_groups(&self, host_of: &[usize]) -> HostGroups {
        HostGroups::from_hosts(&(0..self.size).map(|i| host_of[self.world_pe(i)]).collect::<Vec<_>>())
    }

    /// Team number of world PE `pe`, if it is a member.
    pub(crate) fn index_of(&self, pe: usize) -> Option<usize> {
        let d = pe.checked_sub(self.start)?;
        (d % self.stride.max(1) == 0 && d / self.stride.max(1) < self.size).then(|| d / self.stride.max(1))
    }
}

/// A team found in the [`TeamTable`]: WORLD and SHARED borrowed from the table (no
/// reference count touched: an atomic read-modify-write per call would wait for every
/// store the PE still has in flight to a peer's memory), split teams shared.
#[derive(Debug)]
pub(crate) enum TeamRef<'a> {
    /// A predefined team (never destroyed).
    Predefined(&'a TeamInfo),
    /// A team made by a split, kept alive while in use even if destroyed meanwhile.
    Split(Arc<TeamInfo>),
}

impl std::ops::Deref for TeamRef<'_> {
    type Target = TeamInfo;

    #[inline]
    fn deref(&self) -> &TeamInfo {
        match self {
            TeamRef::Predefined(t) => t,
            TeamRef::Split(t) => t,
        }
    }
}

/// This PE's teams, and which synchronization slots they use.
pub(crate) struct TeamTable {
    /// WORLD and SHARED, by handle: the teams of nearly every call, found without the
    /// lock and the hash (they are never destroyed).
    predefined: [TeamInfo; 2],
    /// The teams made by splits, by handle.
    teams: RwLock<HashMap<u32, Arc<TeamInfo>>>,
    next_id: AtomicU32,
    used_slots: Mutex<Vec<u64>>,
    /// Number of team slots (`RSHMEM_MAX_TEAMS`).
    pub(crate) max_teams: usize,
}

impl TeamTable {
    /// `shared`: (start, stride, size) of this PE's `SHARED` team.
    pub(crate) fn new(my_pe: usize, n_pes: usize, max_teams: usize, shared: (usize, usize, usize)) -> TeamTable {
        let world = TeamInfo::new(0, 1, n_pes, my_pe, 0, TeamConfig::default());
        let (start, stride, size) = shared;
        // This PE's number in SHARED counts from the team's first PE, not from PE 0.
        let my_index = (my_pe - start) / stride.max(1);
        debug_assert!(my_index < size && start + my_index * stride.max(1) == my_pe, "PE {my_pe} is not in its SHARED team {shared:?}");
        let shared = TeamInfo::new(start, stride, size, my_index, 1, TeamConfig::default());
        let mut used = vec![0u64; max_teams.div_ceil(64)];
        used[0] |= 0b11;
        TeamTable {
            predefined: [world, shared],
            teams: RwLock::new(HashMap::new()),
            next_id: AtomicU32::new(2),
            used_slots: Mutex::new(used),
            max_teams,
        }
    }

    fn slots(&self) -> MutexGuard<'_, Vec<u64>> {
        self.used_slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The team behind handle `team`, or an error naming `call` and `pe` (this PE).
    pub(crate) fn get(&self, call: &'static str, team: Team, pe: usize) -> Result<TeamRef<'_>> {
        if team.is_invalid() {
            return Err(Error::InvalidTeam { call, arg: "team", what: "SHMEM_TEAM_INVALID is not a team", pe });
        }
        if let Some(t) = self.predefined.get(team.0 as usize) {
            return Ok(TeamRef::Predefined(t));
        }
        let teams = self.teams.read().unwrap_or_else(|p| p.into_inner());
        teams.get(&team.0).cloned().map(TeamRef::Split).ok_or(if team.0 < self.next_id.load(Ordering::Relaxed) {
            Error::InvalidTeam { call, arg: "team", what: "the team was destroyed", pe }
        } else {
            Error::InvalidTeam { call, arg: "team", what: "not a team handle of this PE", pe }
        })
    }

    /// The mask of slots in use on this PE (bit `s % 64` of word `s / 64`).
    pub(crate) fn used_mask(&self) -> Vec<u64> {
        self.slots().clone()
    }

    /// Records a new team (its slot taken) and returns its handle (never reused).
    pub(crate) fn insert(&self, info: TeamInfo) -> Team {
        let slot = info.slot;
        self.slots()[slot / 64] |= 1 << (slot % 64);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.teams.write().unwrap_or_else(|p| p.into_inner()).insert(id, Arc::new(info));
        Team(id)
    }

    /// Forgets `team`, whose slot `slot` becomes free.
    pub(crate) fn remove(&self, team: Team, slot: usize) {
        self.teams.write().unwrap_or_else(|p| p.into_inner()).remove(&team.0);
        self.slots()[slot / 64] &= !(1 << (slot % 64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_team_numbers_this_pe_from_its_first_member() {
        // PE 5 of 8 on a host holding PEs 4..8: it is member 1 of SHARED, member 5 of WORLD.
        let t = TeamTable::new(5, 8, 16, (4, 1, 4));
        let shared = t.get("test", Team::SHARED, 5).unwrap();
        assert_eq!((shared.my_index, shared.size, shared.world_pe(shared.my_index)), (1, 4, 5));
        assert_eq!(t.get("test", Team::WORLD, 5).unwrap().my_index, 5);
        // Strided host (PEs 1, 3, 5, 7) and a host of one PE.
        let t = TeamTable::new(5, 8, 16, (1, 2, 4));
        assert_eq!(t.get("test", Team::SHARED, 5).unwrap().my_index, 2);
        let t = TeamTable::new(5, 8, 16, (5, 1, 1));
        assert_eq!(t.get("test", Team::SHARED, 5).unwrap().my_index, 0);
    }

    #[test]
    fn handles_are_never_reused_and_slots_are() {
        let t = TeamTable::new(0, 4, 16, (0, 1, 4));
        let a = t.insert(TeamInfo::new(0, 2, 2, 0, 2, TeamConfig::default()));
        assert_eq!(t.used_mask()[0], 0b111);
        t.remove(a, 2);
        assert_eq!(t.used_mask()[0], 0b11);
        let e = t.get("test", a, 0).unwrap_err().to_string();
        assert!(e.contains("destroyed"), "{e}");
        let b = t.insert(TeamInfo::new(0, 2, 2, 0, 2, TeamConfig::default()));
        assert_ne!(a, b);
        assert!(t.get("test", Team(99), 0).unwrap_err().to_string().contains("not a team handle"));
    }
}
