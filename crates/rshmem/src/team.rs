//! Teams: ordered sets of PEs `start, start + stride, ...` with their own numbering and
//! their own synchronization slot in every member's heap.
//!
//! A team's slot (see [`crate::heap::layout`]) holds its barrier counters, its collective
//! synchronization words and the scratch used to create child teams; a staging area per
//! slot holds data its collectives publish (see [`crate::coll`]). Slots are agreed at split time: the parent's members OR
//! their used-slot masks together and each new team takes the lowest free slot, so there
//! is no fixed small limit on teams (`RSHMEM_MAX_TEAMS` slots, 4096 by default, may be
//! live at once; handles are never reused, so a destroyed team is always recognized).

use crate::coll::session::{BarrierState, TeamCollState};
use crate::ctx::{Ctx, Runtime};
use crate::error::{Error, Result, TeamNote};
use crate::heap::layout::TEAM_SLOT;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock};

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

/// What the runtime knows of one team this PE belongs to.
#[derive(Debug)]
pub struct TeamInfo {
    /// First member's world PE.
    pub start: usize,
    /// Distance between members' world PEs.
    pub stride: usize,
    /// Number of members.
    pub size: usize,
    /// This PE's number in the team.
    pub my_index: usize,
    /// Synchronization slot.
    pub slot: usize,
    /// Configuration given at creation.
    pub config: TeamConfig,
    /// Barrier bookkeeping (radix, counter targets).
    pub(crate) barrier: Mutex<BarrierState>,
    /// Collective bookkeeping (sequence number, arrivals, staging use).
    pub(crate) coll: Mutex<TeamCollState>,
}

impl TeamInfo {
    fn new(start: usize, stride: usize, size: usize, my_index: usize, slot: usize, config: TeamConfig) -> TeamInfo {
        TeamInfo { start, stride, size, my_index, slot, config, barrier: Mutex::default(), coll: Mutex::default() }
    }

    /// World PE of team member `i`.
    #[inline]
    pub fn world_pe(&self, i: usize) -> usize {
        self.start + i * self.stride
    }

    /// Team number of world PE `pe`, if it is a member.
    pub fn index_of(&self, pe: usize) -> Option<usize> {
        let d = pe.checked_sub(self.start)?;
        (d % self.stride.max(1) == 0 && d / self.stride.max(1) < self.size).then(|| d / self.stride.max(1))
    }
}

/// This PE's teams.
pub(crate) struct TeamTable {
    teams: RwLock<HashMap<u32, Arc<TeamInfo>>>,
    next_id: AtomicU32,
    used_slots: Mutex<Vec<u64>>,
    max_teams: usize,
}

impl TeamTable {
    /// `shared`: (start, stride, size) of this PE's `SHARED` team.
    pub(crate) fn new(my_pe: usize, n_pes: usize, max_teams: usize, shared: (usize, usize, usize)) -> TeamTable {
        let mut map = HashMap::new();
        map.insert(Team::WORLD.0, Arc::new(TeamInfo::new(0, 1, n_pes, my_pe, 0, TeamConfig::default())));
        let (start, stride, size) = shared;
        // This PE's number in SHARED counts from the team's first PE, not from PE 0.
        let my_index = (my_pe - start) / stride.max(1);
        debug_assert!(my_index < size && start + my_index * stride.max(1) == my_pe, "PE {my_pe} is not in its SHARED team {shared:?}");
        map.insert(Team::SHARED.0, Arc::new(TeamInfo::new(start, stride, size, my_index, 1, TeamConfig::default())));
        let mut used = vec![0u64; max_teams.div_ceil(64)];
        used[0] |= 0b11;
        TeamTable { teams: RwLock::new(map), next_id: AtomicU32::new(2), used_slots: Mutex::new(used), max_teams }
    }

    pub(crate) fn get(&self, call: &'static str, team: Team, pe: usize) -> Result<Arc<TeamInfo>> {
        if team.is_invalid() {
            return Err(Error::InvalidTeam { call, arg: "team", what: "SHMEM_TEAM_INVALID is not a team", pe });
        }
        self.teams.read().expect("team table").get(&team.0).cloned().ok_or(if team.0 < self.next_id.load(Ordering::Relaxed) {
            Error::InvalidTeam { call, arg: "team", what: "the team was destroyed", pe }
        } else {
            Error::InvalidTeam { call, arg: "team", what: "not a team handle of this PE", pe }
        })
    }
}

/// Per-member record written into the parent's slot scratch during a split.
const SPLIT_SCRATCH: usize = crate::heap::layout::SLOT_SPLIT;
const RECORD_WORDS: usize = 8;

/// Most team slots (`RSHMEM_MAX_TEAMS`) a split can handle: each member's record carries
/// a mask with one bit per slot, and it must fit in the parent's slot after the scratch
/// offset (48,640 with 8 KiB slots).
pub const MAX_TEAM_SLOTS: usize = ((TEAM_SLOT - SPLIT_SCRATCH) / 8 - RECORD_WORDS) * 64;

fn world_of(rt: &Runtime, call: &'static str, team: Team) -> Result<Arc<TeamInfo>> {
    rt.teams.get(call, team, rt.my_pe)
}

impl Ctx {
    pub(crate) fn team_info(&self, call: &'static str, team: Team) -> Result<Arc<TeamInfo>> {
        world_of(&self.rt, call, team)
    }

    /// This PE's number in `team`.
    pub fn team_my_pe(&self, team: Team) -> Result<usize> {
        Ok(self.team_info("team_my_pe", team)?.my_index)
    }

    /// Number of PEs in `team`.
    pub fn team_n_pes(&self, team: Team) -> Result<usize> {
        Ok(self.team_info("team_n_pes", team)?.size)
    }

    /// The configuration `team` was created with.
    pub fn team_get_config(&self, team: Team) -> Result<TeamConfig> {
        Ok(self.team_info("team_get_config", team)?.config)
    }

    /// The members of `team` as (start, stride, size) in world PE numbers.
    pub fn team_layout(&self, team: Team) -> Result<(usize, usize, usize)> {
        let t = self.team_info("team_layout", team)?;
        Ok((t.start, t.stride, t.size))
    }

    /// The number in `dest` of PE `src_pe` of `src` (None if it is not a member of `dest`).
    pub fn team_translate_pe(&self, src: Team, src_pe: usize, dest: Team) -> Result<Option<usize>> {
        let s = self.team_info("team_translate_pe", src)?;
        let d = self.team_info("team_translate_pe", dest)?;
        if src_pe >= s.size {
            return Err(Error::PeOutOfRange {
                call: "team_translate_pe",
                arg: "src_pe",
                pe: src_pe as i64,
                n_pes: s.size,
                team: TeamNote(Some(src.0)),
            });
        }
        Ok(d.index_of(s.world_pe(src_pe)))
    }

    /// Checks that `pe` is a valid member number of `team` and returns its world PE.
    pub fn team_world_pe(&self, call: &'static str, team: Team, pe: usize) -> Result<usize> {
        let t = self.team_info(call, team)?;
        if pe >= t.size {
            return Err(Error::PeOutOfRange { call, arg: "pe", pe: pe as i64, n_pes: t.size, team: TeamNote(Some(team.0)) });
        }
        Ok(t.world_pe(pe))
    }

    /// Splits `parent` into a team of its PEs `start, start + stride, ...` (`size` of
    /// them, numbered in the parent). Collective over `parent`; every member must pass
    /// the same arguments. Returns [`Team::INVALID`] on PEs left out.
    pub fn team_split_strided(&self, parent: Team, start: usize, stride: usize, size: usize, config: TeamConfig) -> Result<Team> {
        const CALL: &str = "team_split_strided";
        let p = self.team_info(CALL, parent)?;
        let check = [start as u64, stride as u64, size as u64];
        let bad = |arg, detail: String| Error::InvalidArgument { call: CALL, arg, detail, pe: self.my_pe() };
        let valid = if size == 0 {
            Err(bad("size", "a team needs at least one PE".into()))
        } else if stride == 0 && size > 1 {
            Err(bad("stride", "stride 0 is allowed only for a team of one PE".into()))
        } else if (size - 1).checked_mul(stride).and_then(|span| span.checked_add(start)).is_none_or(|last| last >= p.size) {
            // Checked: a huge stride must not wrap around into a "valid" team.
            let second = start.saturating_add(stride);
            Err(bad("size", format!("PEs {start}, {second}, ... ({size} of them) do not fit in a parent of {} PEs", p.size)))
        } else {
            Ok(())
        };
        let wanted = valid.is_ok().then(|| {
            let me = p.my_index;
            let inside = me >= start
                && (stride == 0 && me == start || stride > 0 && (me - start).is_multiple_of(stride) && (me - start) / stride < size);
            inside.then(|| (p.world_pe(start), p.stride * stride.max(1), size))
        });
        let team = self.split_with(CALL, &p, &check, wanted.flatten(), config)?;
        valid.map(|_| team)
    }

    /// Splits `parent` into a 2-D grid with `xrange` columns: returns (row team, column
    /// team) for this PE (OpenSHMEM `team_split_2d`). Collective over `parent`.
    pub fn team_split_2d(&self, parent: Team, xrange: usize, xconfig: TeamConfig, yconfig: TeamConfig) -> Result<(Team, Team)> {
        const CALL: &str = "team_split_2d";
        let p = self.team_info(CALL, parent)?;
        if xrange == 0 {
            // Every PE sees the same argument, so every PE returns this error.
            return Err(Error::InvalidArgument { call: CALL, arg: "xrange", detail: "must be at least 1".into(), pe: self.my_pe() });
        }
        let xrange = xrange.min(p.size);
        let me = p.my_index;
        let (row, col) = (me / xrange, me % xrange);
        let row_start = row * xrange;
        let row_size = xrange.min(p.size - row_start);
        let x = self.split_with(CALL, &p, &[xrange as u64, 0], Some((p.world_pe(row_start), p.stride, row_size)), xconfig)?;
        let col_size = (p.size - col).div_ceil(xrange);
        let y = self.split_with(CALL, &p, &[xrange as u64, 1], Some((p.world_pe(col), p.stride * xrange, col_size)), yconfig)?;
        Ok((x, y))
    }

    /// The split engine: each member of `parent` names the team it wants to be in (world
    /// start, world stride, size) or none; members naming the same triple form one team.
    fn split_with(
        &self,
        call: &'static str,
        p: &TeamInfo,
        check: &[u64],
        wanted: Option<(usize, usize, usize)>,
        config: TeamConfig,
    ) -> Result<Team> {
        let rt = &self.rt;
        let tt = &rt.teams;
        let words = tt.max_teams.div_ceil(64);
        let mine_mask = tt.used_slots.lock().expect("slots").clone();
        let mut record = vec![0u64; RECORD_WORDS + words];
        for (i, v) in check.iter().take(4).enumerate() {
            record[i] = *v;
        }
        if let Some((s, st, n)) = wanted {
            record[4] = 1;
            record[5] = s as u64;
            record[6] = st as u64;
            record[7] = n as u64;
        }
        record[RECORD_WORDS..].copy_from_slice(&mine_mask);
        let bytes = record.len() * 8;
        assert!(SPLIT_SCRATCH + bytes <= TEAM_SLOT, "team slot too small for {} team slots", tt.max_teams);
        let scratch = rt.heap.sys().team_slot(p.slot) + SPLIT_SCRATCH;
        let me = rt.my_pe;
        rt.to(me).put(me, scratch, bytemuck::cast_slice(&record));
        crate::coll::barrier::team_barrier(rt, p, call)?;
        let mut all = Vec::with_capacity(p.size);
        for i in 0..p.size {
            let pe = p.world_pe(i);
            let mut r = vec![0u64; record.len()];
            rt.to(pe).get(pe, scratch, bytemuck::cast_slice_mut(&mut r));
            all.push(r);
        }
        crate::coll::barrier::team_barrier(rt, p, call)?;
        for (i, r) in all.iter().enumerate() {
            if r[..4] != all[0][..4] {
                return Err(Error::CollectiveMismatch {
                    call,
                    arg: "start/stride/size",
                    pe: p.world_pe(i),
                    value: format!("{:?}", &r[..check.len()]),
                    reference_pe: p.world_pe(0),
                    reference: format!("{:?}", &all[0][..check.len()]),
                });
            }
        }
        let mut used = vec![0u64; words];
        for r in &all {
            for (u, m) in used.iter_mut().zip(&r[RECORD_WORDS..]) {
                *u |= m;
            }
        }
        let mut triples: Vec<[u64; 3]> = all.iter().filter(|r| r[4] == 1).map(|r| [r[5], r[6], r[7]]).collect();
        triples.sort_unstable();
        triples.dedup();
        let free: Vec<usize> = (0..tt.max_teams).filter(|s| used[s / 64] & (1 << (s % 64)) == 0).take(triples.len()).collect();
        if free.len() < triples.len() {
            return Err(Error::Unsupported {
                call,
                detail: format!("all {} team slots are in use among the parent's PEs (raise RSHMEM_MAX_TEAMS) (on PE {me})", tt.max_teams),
            });
        }
        let Some((s, st, n)) = wanted else { return Ok(Team::INVALID) };
        let k = triples.binary_search(&[s as u64, st as u64, n as u64]).expect("own triple is listed");
        let slot = free[k];
        let info = TeamInfo::new(s, st, n, (me - s) / st.max(1), slot, config);
        tt.used_slots.lock().expect("slots")[slot / 64] |= 1 << (slot % 64);
        #[cfg(feature = "cuda")]
        if let Some(g) = &rt.gpu {
            g.set_team(slot, Some((s, st, n)))?;
        }
        let id = tt.next_id.fetch_add(1, Ordering::Relaxed);
        tt.teams.write().expect("team table").insert(id, Arc::new(info));
        Ok(Team(id))
    }

    /// Destroys `team` (collective over its members). Its handle becomes invalid.
    pub fn team_destroy(&self, team: Team) -> Result<()> {
        const CALL: &str = "team_destroy";
        if team == Team::WORLD || team == Team::SHARED {
            return Err(Error::InvalidTeam { call: CALL, arg: "team", what: "predefined teams cannot be destroyed", pe: self.my_pe() });
        }
        let t = self.team_info(CALL, team)?;
        crate::ops::order::quiet_all(&self.rt);
        crate::coll::barrier::team_barrier(&self.rt, &t, CALL)?;
        // Nobody signals into the slot any more: zero it for its next team.
        let off = self.rt.heap.sys().team_slot(t.slot);
        let me = self.my_pe();
        self.rt.to(me).put(me, off, &vec![0u8; TEAM_SLOT]);
        #[cfg(feature = "cuda")]
        if let Some(g) = &self.rt.gpu {
            g.set_team(t.slot, None)?;
        }
        self.rt.teams.teams.write().expect("team table").remove(&team.0);
        self.rt.teams.used_slots.lock().expect("slots")[t.slot / 64] &= !(1 << (t.slot % 64));
        Ok(())
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
}
