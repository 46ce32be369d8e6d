//! One collective call's view of its team's synchronization words and staging.
//!
//! A [`Session`] numbers the call (the team's collective sequence, the same on every
//! member because members call a team's collectives in the same order), offers the
//! protocol's primitives (publish, wait, arrive, pull, push) and, when it ends (dropped,
//! on success or error), records that this PE finished the call (CONSUMED = DONE).
//! See the module documentation of [`crate::coll`] for the protocol.

use crate::error::{Error, Result};
use crate::heap::layout::{
    CHECK_BYTES, SLOT_ARRIVE, SLOT_CHECK, SLOT_CONSUMED, SLOT_INFO, SLOT_PROGRESS, SLOT_STEP_IN, STAGE_SET, TEAM_STAGE,
};
use crate::runtime::hosts::HostGroups;
use crate::runtime::teams::TeamCollState;
use crate::runtime::teams::TeamInfo;
use crate::runtime::Runtime;
use crate::transport::notify::{self, WaitOutcome};
use crate::transport::AmoOp;
use crate::types::{ReduceDtype, ReduceOp};
use std::sync::{Arc, MutexGuard};

/// Bits of a PROGRESS/CONSUMED word that hold the step within one collective.
pub(crate) const STEP_BITS: u32 = 24;
/// The step that means "finished the whole call".
pub(crate) const DONE: u64 = (1 << STEP_BITS) - 1;

/// The value of a PROGRESS/CONSUMED word: collective `seq`, step `step`.
#[inline]
pub(crate) fn tag(seq: u64, step: u64) -> u64 {
    debug_assert!(step <= DONE);
    (seq << STEP_BITS) | step
}

/// Collective kinds, as recorded in the argument check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub(crate) enum Kind {
    Broadcast = 1,
    Fcollect = 2,
    Collect = 3,
    Alltoall = 4,
    Alltoalls = 5,
    Reduce = 6,
    ReduceScatter = 7,
    Inscan = 8,
    Exscan = 9,
}

impl Kind {
    fn name_of(v: u64) -> String {
        let names = ["broadcast", "fcollect", "collect", "alltoall", "alltoalls", "reduce", "reduce_scatter", "sum_inscan", "sum_exscan"];
        names.get((v as usize).wrapping_sub(1)).map_or_else(|| format!("collective #{v}"), |s| s.to_string())
    }
}

/// One argument in the check: name, value, how to show it.
pub(crate) type Field = (&'static str, u64, fn(u64) -> String);

/// Shows a number.
pub(crate) fn show_num(v: u64) -> String {
    v.to_string()
}
/// Shows a heap offset (a symmetric address).
pub(crate) fn show_offset(v: u64) -> String {
    if v == u64::MAX {
        "an address outside the heap".into()
    } else {
        format!("heap offset {v:#x}")
    }
}
/// Shows a reduction type tag.
pub(crate) fn show_dtype(v: u64) -> String {
    ReduceDtype::from_raw(v as i32).map_or_else(|| v.to_string(), |d| d.name().to_string())
}
/// Shows a reduction operator.
pub(crate) fn show_op(v: u64) -> String {
    ReduceOp::from_raw(v as i32).map_or_else(|| v.to_string(), |o| o.name().to_string())
}
/// Shows an algorithm number (the index in the algorithm's enum).
pub(crate) fn show_algo(v: u64) -> String {
    format!("algorithm #{v} (RSHMEM_COLL_ALGO differs?)")
}

/// One collective call on one team.
pub(crate) struct Session<'a> {
    pub(crate) rt: &'a Runtime,
    t: &'a TeamInfo,
    pub(crate) call: &'static str,
    pub(crate) seq: u64,
    slot: usize,
    stage: usize,
    state: MutexGuard<'a, TeamCollState>,
}

impl<'a> Session<'a> {
    /// Starts the next collective of `t` on this PE.
    pub(crate) fn begin(rt: &'a Runtime, t: &'a TeamInfo, call: &'static str) -> Session<'a> {
        let mut state = t.coll.lock().unwrap_or_else(|p| p.into_inner());
        state.seq += 1;
        let seq = state.seq;
        let sys = rt.heap.sys();
        Session { rt, t, call, seq, slot: sys.team_slot(t.slot), stage: sys.team_stage(t.slot), state }
    }

    /// Team size.
    #[inline]
    pub(crate) fn n(&self) -> usize {
        self.t.size
    }

    /// This PE's team number.
    #[inline]
    pub(crate) fn me(&self) -> usize {
        self.t.my_index
    }

    /// World PE of member `i`.
    #[inline]
    pub(crate) fn pe(&self, i: usize) -> usize {
        self.t.world_pe(i)
    }

    /// Whether every member's heap is directly mapped into this process.
    pub(crate) fn mapped(&mut self) -> bool {
        if let Some(m) = self.state.mapped {
            return m;
        }
        let m = (0..self.n()).all(|i| {
            let pe = self.pe(i);
            self.rt.mapped(pe)
        });
        self.state.mapped = Some(m);
        m
    }

    /// The members grouped by host (see [`HostGroups`]).
    pub(crate) fn hosts(&mut self) -> Arc<HostGroups> {
        if let Some(h) = &self.state.hosts {
            return h.clone();
        }
        let h = Arc::new(self.t.host_groups(&self.rt.host_of));
        self.state.hosts = Some(h.clone());
        h
    }

    // ----- words -----

    fn store_mine(&self, off: usize, v: u64) -> Result<()> {
        let me = self.rt.my_pe;
        self.rt.to(me).store_word(me, self.slot + off, 8, v)
    }

    fn load(&self, i: usize, off: usize) -> Result<u64> {
        let pe = self.pe(i);
        self.rt.to(pe).load_word(pe, self.slot + off, 8)
    }

    /// Waits until member `i`'s slot word at `off` reaches `target`, sleeping on the futex
    /// of the heap that holds the word (every store into a heap wakes its waiters).
    fn wait_word(&self, i: usize, off: usize, target: u64, what: impl Fn() -> String) -> Result<()> {
        let pe = self.pe(i);
        let t = self.rt.to(pe);
        let word = self.slot + off;
        let ready = || Ok(t.load_word(pe, word, 8)? >= target);
        if ready()? {
            return Ok(());
        }
        let me = self.rt.my_pe;
        let base = if t.caps().mapped { self.rt.heap.base(pe) } else { self.rt.heap.base(me) };
        let call = self.call;
        let describe = || format!("{call} on PE {me} (collective {} of its team): {}", self.seq, what());
        match notify::wait_until(base, self.rt.wait_policy(None), ready, describe)? {
            WaitOutcome::Ready => Ok(()),
            WaitOutcome::TimedOut => Err(Error::Timeout { call, what: what(), secs: 0.0, pe: me }),
        }
    }

    /// Publishes step `step` of this collective (PROGRESS).
    pub(crate) fn publish(&self, step: u64) -> Result<()> {
        self.store_mine(SLOT_PROGRESS, tag(self.seq, step))
    }

    /// Records that this PE has read its peers' data up to step `step` (CONSUMED).
    pub(crate) fn consumed(&self, step: u64) -> Result<()> {
        self.store_mine(SLOT_CONSUMED, tag(self.seq, step))
    }

    /// Waits until member `i` has published step `step`.
    pub(crate) fn wait_progress(&self, i: usize, step: u64) -> Result<()> {
        self.wait_word(i, SLOT_PROGRESS, tag(self.seq, step), || format!("PE {} to publish step {step}", self.pe(i)))
    }

    /// Waits until member `i` has read up to step `step`.
    pub(crate) fn wait_consumed(&self, i: usize, step: u64) -> Result<()> {
        self.wait_word(i, SLOT_CONSUMED, tag(self.seq, step), || format!("PE {} to finish reading step {step}", self.pe(i)))
    }

    /// Adds one to member `i`'s ARRIVE counter (after a push to it and a fence).
    pub(crate) fn arrive(&self, i: usize) -> Result<()> {
        let pe = self.pe(i);
        self.rt.to(pe).amo(pe, self.slot + SLOT_ARRIVE, 8, AmoOp::FetchAdd, 1, 0).map(|_| ())
    }

    /// Waits for `k` more pushes into this PE.
    pub(crate) fn wait_arrivals(&mut self, k: u64) -> Result<()> {
        self.state.arrivals += k;
        let target = self.state.arrivals;
        self.wait_word(self.me(), SLOT_ARRIVE, target, || format!("{k} peers to write their blocks into this PE"))
    }

    /// Sets member `i`'s ring signal to step `step` (only its left neighbour does this).
    pub(crate) fn signal_step(&self, i: usize, step: u64) -> Result<()> {
        let pe = self.pe(i);
        self.rt.to(pe).store_word(pe, self.slot + SLOT_STEP_IN, 8, tag(self.seq, step))
    }

    /// Waits until the left neighbour has signalled step `step`.
    pub(crate) fn wait_step_in(&self, step: u64) -> Result<()> {
        let left = (self.me() + self.n() - 1) % self.n();
        self.wait_word(self.me(), SLOT_STEP_IN, tag(self.seq, step), || {
            format!("PE {} (left neighbour) to send ring step {step}", self.pe(left))
        })
    }

    /// Publishes a value readable by members once PROGRESS says so.
    pub(crate) fn set_info(&self, v: u64) -> Result<()> {
        self.store_mine(SLOT_INFO, v)
    }

    /// Member `i`'s INFO value (read after waiting for its PROGRESS).
    pub(crate) fn info(&self, i: usize) -> Result<u64> {
        self.load(i, SLOT_INFO)
    }

    // ----- staging -----

    /// Heap offset of staging set `set` (the same on every member), after waiting until
    /// every member has finished the collective that last published it, so this PE may
    /// overwrite it. Records this collective as its new publisher.
    pub(crate) fn stage_set(&mut self, set: usize) -> Result<usize> {
        let prev = self.state.stage_seq[set];
        if prev != 0 {
            for i in (0..self.n()).filter(|&i| i != self.me()) {
                self.wait_word(i, SLOT_CONSUMED, tag(prev, DONE), || {
                    format!("PE {} to finish reading this PE's staging of collective {prev}", self.pe(i))
                })?;
            }
        }
        self.state.stage_seq[set] = self.seq;
        Ok(self.stage + set * STAGE_SET)
    }

    /// Heap offset of staging set `set`, without acquiring it (where to read a peer's).
    pub(crate) fn stage_set_offset(&self, set: usize) -> usize {
        self.stage + set * STAGE_SET
    }

    /// The staging set this collective uses when it needs one.
    pub(crate) fn own_set(&self) -> usize {
        (self.seq % 2) as usize
    }

    /// Heap offset of the whole staging area (both sets, `TEAM_STAGE` bytes) after
    /// acquiring both sets.
    pub(crate) fn stage_all(&mut self) -> Result<usize> {
        let a = self.stage_set(0)?;
        self.stage_set(1)?;
        debug_assert_eq!(a + TEAM_STAGE, self.stage + 2 * STAGE_SET);
        Ok(a)
    }

    // ----- data -----

    /// Copies `len` bytes from member `src`'s heap at `src_off` to member `dst`'s heap at
    /// `dst_off`, through the transport of the side that is not this PE.
    pub(crate) fn copy(&self, dst: usize, dst_off: usize, src: usize, src_off: usize, len: usize) -> Result<()> {
        if len == 0 || (dst == src && dst_off == src_off) {
            return Ok(());
        }
        let (dpe, spe) = (self.pe(dst), self.pe(src));
        let (to_dst, to_src) = (self.rt.to(dpe), self.rt.to(spe));
        if std::ptr::addr_eq(to_dst as *const dyn crate::transport::Transport, to_src as *const dyn crate::transport::Transport) {
            // One transport reaches both ends (the mapped transport copies directly).
            to_dst.copy(dpe, dst_off, spe, src_off, len)
        } else {
            // Different transports (this PE through shared memory, a peer through UCX):
            // read with the one that reaches the source, write with the other.
            let mut buf = vec![0u8; len];
            to_src.get(spe, src_off, &mut buf)?;
            to_dst.put(dpe, dst_off, &buf)
        }
    }

    /// Reads `buf.len()` elements from member `i`'s heap at `off`.
    pub(crate) fn get<T: bytemuck::Pod>(&self, i: usize, off: usize, buf: &mut [T]) -> Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let pe = self.pe(i);
        self.rt.to(pe).get(pe, off, bytemuck::cast_slice_mut(buf))
    }

    /// Writes `data` into this PE's heap at `off`.
    pub(crate) fn put_mine<T: bytemuck::Pod>(&self, off: usize, data: &[T]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let me = self.rt.my_pe;
        self.rt.to(me).put(me, off, bytemuck::cast_slice(data))
    }

    /// Orders earlier writes to member `i` before later ones.
    pub(crate) fn fence(&self, i: usize) -> Result<()> {
        self.rt.to(self.pe(i)).fence()
    }

    // ----- argument check -----

    /// The argument check (on when `RSHMEM_COLL_CHECK` is, by default in debug builds):
    /// every member publishes the collective's kind, whether its own arguments passed the
    /// local checks (`local_ok`), and `fields`; every member compares all of them against
    /// team member 0, so all reach the same verdict. Returns Ok on a PE whose own
    /// arguments failed (the caller then returns its own error); the others get an error
    /// naming that PE. Without the check, returns Ok.
    pub(crate) fn check(&self, kind: Kind, fields: &[Field], local_ok: bool) -> Result<()> {
        if !self.rt.config.coll_check() || self.n() == 1 {
            return Ok(());
        }
        const WORDS: usize = CHECK_BYTES / 8;
        assert!(fields.len() <= WORDS - 3, "too many checked fields");
        let off = self.slot + SLOT_CHECK + self.own_set() * CHECK_BYTES;
        let mut words = [0u64; WORDS];
        words[1] = kind as u64;
        words[2] = u64::from(!local_ok);
        for (k, f) in fields.iter().enumerate() {
            words[3 + k] = f.1;
        }
        let me = self.rt.my_pe;
        self.rt.to(me).put(me, off + 8, bytemuck::cast_slice(&words[1..]))?;
        self.store_mine(off - self.slot, self.seq)?;
        let mut all = Vec::with_capacity(self.n());
        for i in 0..self.n() {
            self.wait_word(i, off - self.slot, self.seq, || format!("PE {} to enter the collective (argument check)", self.pe(i)))?;
            let mut w = [0u64; WORDS];
            self.get(i, off, &mut w)?;
            all.push(w);
        }
        let mismatch = |arg, i: usize, value: String, reference: String| Error::CollectiveMismatch {
            call: self.call,
            arg,
            pe: self.pe(i),
            value,
            reference_pe: self.pe(0),
            reference,
        };
        for (i, w) in all.iter().enumerate() {
            if w[0] != self.seq {
                return Err(Error::CollectiveMismatch {
                    call: self.call,
                    arg: "(collectives called on this team so far)",
                    pe: self.pe(i),
                    value: w[0].to_string(),
                    reference_pe: me,
                    reference: self.seq.to_string(),
                });
            }
        }
        if !local_ok {
            return Ok(());
        }
        if let Some(i) = all.iter().position(|w| w[2] != 0) {
            return Err(Error::CollectiveMismatch {
                call: self.call,
                arg: "(arguments)",
                pe: self.pe(i),
                value: "arguments it rejected (see its own error)".into(),
                reference_pe: me,
                reference: "valid arguments".into(),
            });
        }
        if let Some(i) = all.iter().position(|w| w[1] != all[0][1]) {
            return Err(mismatch("(collective called)", i, Kind::name_of(all[i][1]), Kind::name_of(all[0][1])));
        }
        for (k, &(name, _, show)) in fields.iter().enumerate() {
            if let Some(i) = all.iter().position(|w| w[3 + k] != all[0][3 + k]) {
                return Err(mismatch(name, i, show(all[i][3 + k]), show(all[0][3 + k])));
            }
        }
        Ok(())
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        // A failing transport has already failed the call; nothing more to report here.
        let _ = self.store_mine(SLOT_CONSUMED, tag(self.seq, DONE));
    }
}
