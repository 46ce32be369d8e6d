//! Team operations: queries, splits and destroy (collective over the parent team).
//!
//! The team state (handles, member sets, slots) lives in `runtime::teams`. A team's slot
//! (see [`crate::heap::layout`]) holds its barrier counters, its collective
//! synchronization words and the scratch used to create child teams; a staging area per
//! slot holds data its collectives publish (see [`crate::coll`]). Slots are agreed at split
//! time: the parent's members OR their used-slot masks together and each new team takes
//! the lowest free slot, so there is no fixed small limit on teams (`RSHMEM_MAX_TEAMS`
//! slots, 4096 by default, may be live at once; handles are never reused, so a destroyed
//! team is always recognized).

use crate::coll::barrier::team_barrier;
use crate::ctx::Ctx;
use crate::error::{Error, Result, TeamNote};
use crate::heap::layout::{INBOX_EXTRA, RING_EXTRA, SLOT_SPLIT, SPLIT_RECORD_WORDS, TEAM_INBOX, TEAM_SLOT};
use crate::runtime::teams::{Team, TeamConfig, TeamInfo};

impl Ctx {
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
        let mine_mask = tt.used_mask();
        let mut record = vec![0u64; SPLIT_RECORD_WORDS + words];
        for (i, v) in check.iter().take(4).enumerate() {
            record[i] = *v;
        }
        if let Some((s, st, n)) = wanted {
            record[4] = 1;
            record[5] = s as u64;
            record[6] = st as u64;
            record[7] = n as u64;
        }
        record[SPLIT_RECORD_WORDS..].copy_from_slice(&mine_mask);
        let bytes = record.len() * 8;
        assert!(SLOT_SPLIT + bytes <= TEAM_SLOT, "team slot too small for {} team slots", tt.max_teams);
        let scratch = rt.heap.sys().team_slot(p.slot) + SLOT_SPLIT;
        let me = rt.my_pe;
        rt.to(me).put(me, scratch, bytemuck::cast_slice(&record))?;
        team_barrier(rt, p, call)?;
        let mut all = Vec::with_capacity(p.size);
        for i in 0..p.size {
            let pe = p.world_pe(i);
            let mut r = vec![0u64; record.len()];
            rt.to(pe).get(pe, scratch, bytemuck::cast_slice_mut(&mut r))?;
            all.push(r);
        }
        team_barrier(rt, p, call)?;
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
            for (u, m) in used.iter_mut().zip(&r[SPLIT_RECORD_WORDS..]) {
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
        #[cfg(feature = "cuda")]
        if let Some(g) = &rt.gpu {
            g.set_team(slot, Some((s, st, n)))?;
        }
        Ok(tt.insert(TeamInfo::new(s, st, n, (me - s) / st.max(1), slot, config)))
    }

    /// Destroys `team` (collective over its members). Its handle becomes invalid.
    pub fn team_destroy(&self, team: Team) -> Result<()> {
        const CALL: &str = "team_destroy";
        if team == Team::WORLD || team == Team::SHARED {
            return Err(Error::InvalidTeam { call: CALL, arg: "team", what: "predefined teams cannot be destroyed", pe: self.my_pe() });
        }
        let t = self.team_info(CALL, team)?;
        self.rt.quiet_all()?;
        team_barrier(&self.rt, &t, CALL)?;
        // Nobody signals into the slot any more: zero it for its next team.
        let off = self.rt.heap.sys().team_slot(t.slot);
        let me = self.my_pe();
        self.rt.to(me).put(me, off, &vec![0u8; TEAM_SLOT])?;
        // And the whole inbox: the next team's collectives count from 1 again, so an old
        // tag could pass for one of theirs. Not only the slots' first words: gathers and
        // reductions put a tag at the start of every member's part, and a team of another
        // size has its parts' tags where this team's data was.
        let inbox = self.rt.heap.sys().team_inbox(t.slot);
        self.rt.to(me).put(me, inbox, &vec![0u8; TEAM_INBOX])?;
        if let Some(extension) = self.rt.heap.sys().team_extension(t.slot) {
            self.rt.to(me).put(me, extension + RING_EXTRA, &vec![0u8; INBOX_EXTRA])?;
        }
        #[cfg(feature = "cuda")]
        if let Some(g) = &self.rt.gpu {
            g.set_team(t.slot, None)?;
        }
        self.rt.teams.remove(team, t.slot);
        Ok(())
    }
}
