//! One collective call's view of its team's synchronization words and staging.
//!
//! A [`Session`] numbers the call (the team's collective sequence, the same on every
//! member because members call a team's collectives in the same order), offers the
//! protocol's primitives (publish, wait, arrive, pull, push) and, when it ends (dropped,
//! on success or error), records that this PE finished the call (CONSUMED = DONE).
//! See the module documentation of [`crate::coll`] for the protocol.
//!
//! # Tag words and the argument code
//!
//! PROGRESS, CONSUMED and STEP_IN hold *tag words*:
//!
//! ```text
//! bits 63..32  collective sequence, mod 2^32 (compared as serial numbers)
//! bits 31..24  argument code of the PE that wrote the word
//! bits 23..0   step within the collective (DONE: finished)
//! ```
//!
//! The argument code ([`argument_code`]) condenses the call's kind and arguments (sizes,
//! root, type, operator, symmetric offsets, algorithm) into a residue mod 251, or one of
//! two markers: [`INVALID`] (the PE rejected its own arguments) and [`FAILED`] (the PE
//! failed the call after it found differing arguments). Every wait on a peer's tag word
//! of the current collective compares the peer's code with this PE's, so the always-on
//! argument check costs no extra load, store or round trip: it rides on the words the
//! algorithms exchange anyway. A PE that waits on a peer before it publishes anything
//! publishes an entry word first (step 0), so that a peer which, under its own
//! arguments, waits on it sees its code instead of hanging.
//!
//! PROGRESS has one word per sequence mod 4 (`SLOT_PROGRESS + 8 * (seq % 4)`, one cache
//! line), so a PE's word for collective `s` stays readable until it enters `s + 4`, also
//! when it left `s` early (a staged broadcast root, a PE that failed the call): a reader
//! always sees the writer's code for the collective it waits in. A word of a later
//! collective (only zero-length collectives let a PE run that far ahead) satisfies the
//! wait, unchecked, unless the writer ended `s` abnormally (failed it or rejected its
//! arguments; a failed call runs ahead of its peers, it waits for no one): then its
//! argument record of `s`, which it keeps until every member has finished `s`, says so
//! (a read only in this rare case).
//!
//! Sequence numbers in tag words wrap at 2^32 and are compared as serial numbers, which
//! holds while the members of a team are fewer than 2^31 collectives apart (they are at
//! most a few apart unless a PE runs a long stream of zero-length collectives alone).
//! (Before the code, the sequence took 40 bits and never wrapped in practice; the step
//! keeps its 24 bits, so the ring and tree limits are unchanged.)
//!
//! On a mismatch (the slow path, the only one where the check costs anything) the PE
//! writes its *argument record* (kind, argument values, the member it found differing)
//! into the check area of its slot, one 128-byte record per PROGRESS word
//! (`SLOT_CHECK + 128 * (seq % 4)`, within the area `heap/layout.rs` reserves before
//! `SLOT_SPLIT`; the full check of `RSHMEM_COLL_CHECK=1` writes the same records), marks
//! its words FAILED, and reads the records of the PEs involved to name the argument. The
//! layout's table still shows PROGRESS as one word and the check area as two
//! descriptors; the words named here live in the same lines and area.

use crate::error::{Error, Result};
use crate::heap::layout::{
    inbox_part, stage_part, CHECK_BYTES, INBOX_SLOT, INBOX_SLOTS, RING_EXTRA, RING_UNITS, SLOT_ARRIVE, SLOT_CHECK, SLOT_CONSUMED,
    SLOT_INFO, SLOT_PROGRESS, SLOT_SPLIT, SLOT_STEP_IN, STAGE_SET, STAGE_UNIT, TEAM_STAGE, WIDE_INBOX_SLOTS,
};
use crate::runtime::hosts::HostGroups;
use crate::runtime::teams::TeamCollState;
use crate::runtime::teams::TeamInfo;
use crate::runtime::Runtime;
use crate::transport::notify::{self, WaitOutcome};
use crate::transport::{AmoOp, PolledWord};
use crate::types::{ReduceDtype, ReduceOp};
use std::cell::Cell;
use std::cmp::Ordering;
use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};

/// Bits of a tag word that hold the step within one collective.
pub(crate) const STEP_BITS: u32 = 24;
/// The step that means "finished the whole call".
pub(crate) const DONE: u64 = (1 << STEP_BITS) - 1;
/// Argument codes are residues mod this prime; larger byte values are markers.
const CODE_MOD: u64 = 251;
/// Marker code: the PE rejected its own arguments (it returns its own error).
pub(crate) const INVALID: u8 = 0xFE;
/// Marker code: the PE failed the call after finding differing arguments (its record in
/// the check area says what it passed and whom it found differing).
pub(crate) const FAILED: u8 = 0xFF;
/// PROGRESS words per team slot (indexed by sequence mod this).
const PROGRESS_WORDS: usize = 4;
/// Words of one argument record (the check area has one per PROGRESS word).
const RECORD_WORDS: usize = CHECK_BYTES / 8;
/// Most arguments a collective checks (a record's words 0-2 are sequence, kind and
/// "rejected", then the arguments; its last word names the PE a failed PE found
/// differing).
const MAX_FIELDS: usize = 6;
/// Record word naming the differing member of an abnormal end (team index + 1; the
/// PE's own when it rejected its arguments; 0: a record of the full check).
const CULPRIT: usize = RECORD_WORDS - 1;
/// A staging set last published this many collectives ago is free: every member has
/// entered a later collective since, so it has finished that one.
const STALE: u64 = 1 << 30;
/// How long a PE that found differing arguments waits for the differing PE to finish
/// the call, to read what it passed (only then can it name the argument).
const NAMING_WAIT: Duration = Duration::from_secs(2);

const _: () = assert!(SLOT_PROGRESS + 8 * PROGRESS_WORDS <= SLOT_CONSUMED);
const _: () = assert!(SLOT_CHECK + PROGRESS_WORDS * CHECK_BYTES <= SLOT_SPLIT);
const _: () = assert!(3 + MAX_FIELDS < CULPRIT);

/// The tag word of collective `seq`, written with argument code `code`, at `step`.
#[inline]
fn tag(seq: u64, code: u8, step: u64) -> u64 {
    debug_assert!(step <= DONE);
    ((seq as u32 as u64) << 32) | (u64::from(code) << STEP_BITS) | step
}

/// A tag word taken apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tag {
    seq: u32,
    code: u8,
    step: u64,
}

#[inline]
fn decode(w: u64) -> Tag {
    Tag { seq: (w >> 32) as u32, code: (w >> STEP_BITS) as u8, step: w & DONE }
}

/// Where collective `word_seq` (a tag word's sequence) lies relative to collective `seq`.
#[inline]
fn relative(word_seq: u32, seq: u64) -> Ordering {
    (word_seq.wrapping_sub(seq as u32) as i32).cmp(&0)
}

/// Whether a CONSUMED word `w` says its PE has finished collective `seq`.
#[inline]
fn finished(w: Tag, seq: u64) -> bool {
    match relative(w.seq, seq) {
        Ordering::Less => false,
        Ordering::Equal => w.step == DONE,
        Ordering::Greater => true,
    }
}

/// The argument code of a call: `kind + sum(c_k * v_k)` mod 251 over the argument values
/// `v_k`, with small distinct coefficients `c_k` (one division per call). Linear while
/// the sum does not wrap (values below 2^56: every real size and offset), so a call that
/// differs from another in one argument gets another code unless the difference is a
/// multiple of 251 (a root, operator, type or kind always differs; a size or offset
/// almost always); calls that differ in several arguments collide with chance 1/251.
#[inline]
pub(crate) fn argument_code(kind: Kind, values: &[u64]) -> u8 {
    const COEF: [u64; MAX_FIELDS] = [2, 3, 5, 7, 11, 13];
    let mut acc = kind as u64;
    for (v, c) in values.iter().zip(COEF) {
        acc = acc.wrapping_add(v.wrapping_mul(c));
    }
    (acc % CODE_MOD) as u8
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

/// One checked argument: its name and how to show a value.
type Spec = (&'static str, fn(u64) -> String);

impl Kind {
    const ALL: [Kind; 9] = [
        Kind::Broadcast,
        Kind::Fcollect,
        Kind::Collect,
        Kind::Alltoall,
        Kind::Alltoalls,
        Kind::Reduce,
        Kind::ReduceScatter,
        Kind::Inscan,
        Kind::Exscan,
    ];

    fn from_raw(v: u64) -> Option<Kind> {
        Kind::ALL.into_iter().find(|&k| k as u64 == v)
    }

    fn name_of(v: u64) -> String {
        let names = ["broadcast", "fcollect", "collect", "alltoall", "alltoalls", "reduce", "reduce_scatter", "sum_inscan", "sum_exscan"];
        names.get((v as usize).wrapping_sub(1)).map_or_else(|| format!("collective #{v}"), |s| s.to_string())
    }

    /// The arguments the check compares, in the order callers pass their values.
    pub(crate) fn fields(self) -> &'static [Spec] {
        const BROADCAST: &[Spec] =
            &[("nbytes", show_num), ("PE_root", show_num), ("dest", show_offset), ("source", show_offset), ("algorithm", show_algo)];
        const FCOLLECT: &[Spec] = &[("nbytes", show_num), ("dest", show_offset), ("source", show_offset), ("algorithm", show_algo)];
        const COLLECT: &[Spec] = &[("dest", show_offset), ("source", show_offset), ("forced algorithm", show_algo)];
        const ALLTOALL: &[Spec] = &[
            ("element bytes (alltoall: block bytes)", show_num),
            ("nelems", show_num),
            ("dst", show_num),
            ("sst", show_num),
            ("dest", show_offset),
            ("source", show_offset),
        ];
        const REDUCE: &[Spec] = &[
            ("type", show_dtype),
            ("op", show_op),
            ("nreduce", show_num),
            ("dest", show_offset),
            ("source", show_offset),
            ("algorithm", show_algo),
        ];
        const SCAN: &[Spec] = &[("type", show_dtype), ("nelems", show_num), ("dest", show_offset), ("source", show_offset)];
        match self {
            Kind::Broadcast => BROADCAST,
            Kind::Fcollect => FCOLLECT,
            Kind::Collect => COLLECT,
            Kind::Alltoall | Kind::Alltoalls => ALLTOALL,
            Kind::Reduce | Kind::ReduceScatter => REDUCE,
            Kind::Inscan | Kind::Exscan => SCAN,
        }
    }
}

/// Shows a number.
fn show_num(v: u64) -> String {
    v.to_string()
}
/// Shows a heap offset (a symmetric address).
fn show_offset(v: u64) -> String {
    if v == u64::MAX {
        "an address outside the heap".into()
    } else {
        format!("heap offset {v:#x}")
    }
}
/// Shows a reduction type tag.
fn show_dtype(v: u64) -> String {
    ReduceDtype::from_raw(v as i32).map_or_else(|| v.to_string(), |d| d.name().to_string())
}
/// Shows a reduction operator.
fn show_op(v: u64) -> String {
    ReduceOp::from_raw(v as i32).map_or_else(|| v.to_string(), |o| o.name().to_string())
}
/// Shows an algorithm number (the index in the algorithm's enum).
fn show_algo(v: u64) -> String {
    format!("algorithm #{v} (RSHMEM_COLL_ALGO differs?)")
}

/// What a PE passed to one collective, as its argument record holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Record {
    kind: u64,
    rejected: bool,
    values: [u64; MAX_FIELDS],
    /// The member a failed PE found differing.
    culprit: Option<usize>,
}

impl Record {
    fn words(&self, seq: u64) -> [u64; RECORD_WORDS] {
        let mut w = [0u64; RECORD_WORDS];
        w[0] = seq;
        w[1] = self.kind;
        w[2] = u64::from(self.rejected);
        w[3..3 + MAX_FIELDS].copy_from_slice(&self.values);
        w[CULPRIT] = self.culprit.map_or(0, |c| c as u64 + 1);
        w
    }

    fn from_words(w: &[u64; RECORD_WORDS]) -> Record {
        let mut values = [0u64; MAX_FIELDS];
        values.copy_from_slice(&w[3..3 + MAX_FIELDS]);
        Record { kind: w[1], rejected: w[2] != 0, values, culprit: w[CULPRIT].checked_sub(1).map(|c| c as usize) }
    }

    /// Whether two records describe the same call (the culprit aside).
    fn same_call(&self, other: &Record) -> bool {
        (self.kind, self.rejected, self.values) == (other.kind, other.rejected, other.values)
    }

    /// "broadcast with nbytes 8, PE_root 1, ...".
    fn describe(&self) -> String {
        let Some(kind) = Kind::from_raw(self.kind) else { return Kind::name_of(self.kind) };
        let args: Vec<String> = kind
            .fields()
            .iter()
            .zip(&self.values)
            .map(|(&(name, show), &v)| if name.ends_with("algorithm") { format!("{name} #{v}") } else { format!("{name} {}", show(v)) })
            .collect();
        format!("{} with {}", Kind::name_of(self.kind), args.join(", "))
    }
}

/// Spaces the reads an [`EntryWatch`] makes of the PROGRESS word of a member reached over a
/// network. Each read is a round trip that the peer's progress thread serves: a watch that
/// read on every poll once the spin was over kept a late peer's progress thread busy
/// answering (3 PEs waiting on a 4th that slept, over UCX tcp on 2 loaded cores) and
/// reached its own warning and hang checks only between long runs of round trips. The
/// first [`RemoteReads::FREE`] reads go at once (a short wait is not slowed); after that
/// a read is due once a gap has passed, the gap doubling from [`RemoteReads::FIRST`] to
/// [`RemoteReads::LONGEST`], so a long wait gains at most about the time it has already
/// waited, and at most `LONGEST`.
#[derive(Default)]
struct RemoteReads {
    reads: u32,
    next: Option<Instant>,
    gap: Duration,
}

impl RemoteReads {
    const FREE: u32 = 8;
    const FIRST: Duration = Duration::from_micros(20);
    const LONGEST: Duration = Duration::from_millis(1);

    /// Whether the wait should read the remote word now (then it counts as read).
    fn due(&mut self) -> bool {
        if self.reads < Self::FREE {
            self.reads += 1;
            return true;
        }
        let now = Instant::now();
        if self.next.is_some_and(|t| now < t) {
            return false;
        }
        self.gap = if self.gap.is_zero() { Self::FIRST } else { (self.gap * 2).min(Self::LONGEST) };
        self.next = Some(now + self.gap);
        true
    }
}

/// Watches a member's PROGRESS word of the current collective now and then (every 64th
/// poll, then every poll once the spin is over) while a wait on another of its words goes
/// on, until the word is of this collective: a member that waits under differing
/// arguments shows its code there, whatever it writes elsewhere.
#[derive(Default)]
struct EntryWatch {
    polls: u32,
    checked: bool,
    /// Paces the reads of a member reached over a network.
    remote: RemoteReads,
}

impl EntryWatch {
    /// Member `i`'s code, when its word of this collective shows another than this PE's.
    fn poll(&mut self, s: &Session<'_>, i: usize) -> Result<Option<u8>> {
        self.polls += 1;
        if self.checked || !(self.polls.is_multiple_of(64) || self.polls > s.rt.config.spin) {
            return Ok(None);
        }
        if !s.member_mapped(i) && !self.remote.due() {
            return Ok(None);
        }
        let e = decode(s.load(i, Session::progress_off(s.seq))?);
        if relative(e.seq, s.seq) != Ordering::Equal {
            return Ok(None);
        }
        self.checked = true;
        Ok((e.code != s.code).then_some(e.code))
    }
}

/// Where members' pushed parts land (gathers and reductions: member `j` writes part `j`).
/// The part's tag word is always the first word of member `j`'s part of this
/// collective's inbox slot, claimed before it is written ([`Session::claim_inbox`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mailbox {
    /// The data follows its tag in the inbox part ([`inbox_part`] bytes per member).
    Inbox,
    /// The data lands in the staging set at this heap offset ([`stage_part`] bytes per
    /// member), for members reached over a network: larger parts than an inbox's. The
    /// set is acquired once for all members with [`Session::stage_set`] first.
    Stage(usize),
}

/// Which of the `n - 1` parts of member `at`'s staging set holds member `from`'s data
/// (a member has no part of its own: its contribution stays in its source).
pub(crate) fn stage_part_index(from: usize, at: usize, n: usize) -> usize {
    debug_assert!(from != at && from < n && at < n);
    (from + n - at - 1) % n
}

/// Where one member's part of a [`Mailbox`] lies (heap offsets).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Part {
    /// Its tag word.
    pub(crate) tag: usize,
    /// Its data.
    pub(crate) data: usize,
    /// How many data bytes it holds.
    pub(crate) cap: usize,
}

/// One collective call on one team.
pub(crate) struct Session<'a> {
    pub(crate) rt: &'a Runtime,
    t: &'a TeamInfo,
    pub(crate) call: &'static str,
    pub(crate) seq: u64,
    slot: usize,
    stage: usize,
    /// The team's extension (a ring extension, then an inbox extension), for the first
    /// team slots (`heap/layout.rs`).
    extension: Option<usize>,
    inbox: usize,
    state: MutexGuard<'a, TeamCollState>,
    /// What this PE passed ([`Session::check`]).
    args: Record,
    /// The argument code of `args`.
    code: u8,
    /// Whether this PE has written its PROGRESS word of this collective.
    entered: Cell<bool>,
    /// Whether this PE failed the call after finding differing arguments.
    failed: Cell<bool>,
    /// The member whose STEP_IN word this PE signals (ring gather), told on failure.
    ring_right: Cell<Option<usize>>,
}

impl<'a> Session<'a> {
    /// Starts the next collective of `t` on this PE.
    pub(crate) fn begin(rt: &'a Runtime, t: &'a TeamInfo, call: &'static str) -> Session<'a> {
        let mut state = t.coll.lock().unwrap_or_else(|p| p.into_inner());
        state.seq += 1;
        let seq = state.seq;
        if state.entered.len() != t.size {
            state.entered = vec![Cell::new(0); t.size];
        }
        if state.stage_seq.len() != RING_UNITS {
            state.stage_seq = vec![0; RING_UNITS];
        }
        let sys = rt.heap.sys();
        Session {
            rt,
            t,
            call,
            seq,
            slot: sys.team_slot(t.slot),
            stage: sys.team_stage(t.slot),
            extension: sys.team_extension(t.slot),
            inbox: sys.team_inbox(t.slot),
            state,
            args: Record { kind: 0, rejected: false, values: [0; MAX_FIELDS], culprit: None },
            code: 0,
            entered: Cell::new(false),
            failed: Cell::new(false),
            ring_right: Cell::new(None),
        }
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

    /// Whether member `i`'s heap is mapped into this process (its words are plain loads,
    /// not round trips).
    fn member_mapped(&self, i: usize) -> bool {
        self.rt.mapped(self.pe(i))
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

    /// Whether the team spans hosts ([`HostGroups::spans_hosts`]), read off the cached
    /// groups without cloning their handle (the common case needs only this).
    pub(crate) fn spans_hosts(&mut self) -> bool {
        self.host_groups().spans_hosts()
    }

    /// The members grouped by host (see [`HostGroups`]).
    pub(crate) fn hosts(&mut self) -> Arc<HostGroups> {
        self.host_groups().clone()
    }

    /// The team's host groups, computed on its first collective.
    fn host_groups(&mut self) -> &Arc<HostGroups> {
        let (t, host_of) = (self.t, &self.rt.host_of);
        self.state.hosts.get_or_insert_with(|| Arc::new(t.host_groups(host_of)))
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

    /// Slot offset of the PROGRESS word of collective `seq`.
    #[inline]
    fn progress_off(seq: u64) -> usize {
        SLOT_PROGRESS + 8 * (seq as usize % PROGRESS_WORDS)
    }

    /// Slot offset of the argument record of collective `seq`.
    #[inline]
    fn record_off(seq: u64) -> usize {
        SLOT_CHECK + (seq as usize % PROGRESS_WORDS) * CHECK_BYTES
    }

    /// The code this PE writes into its tag words.
    #[inline]
    fn word_code(&self) -> u8 {
        if self.failed.get() {
            FAILED
        } else {
            self.code
        }
    }

    /// Waits until `ready(word)` holds for member `i`'s word at heap offset `word`
    /// (anywhere in the runtime area), sleeping on the futex of the heap that holds the
    /// word (every store into a heap wakes its waiters), at most `timeout` when given.
    fn wait_word(
        &self,
        i: usize,
        word: usize,
        mut ready: impl FnMut(u64) -> Result<bool>,
        what: impl Fn() -> String,
        timeout: Option<Duration>,
    ) -> Result<WaitOutcome> {
        let pe = self.pe(i);
        let t = self.rt.to(pe);
        let polled = PolledWord::new(t, pe, word, 8);
        let mut check = || ready(polled.load()?);
        if check()? {
            return Ok(WaitOutcome::Ready);
        }
        let me = self.rt.my_pe;
        let base = if t.caps().mapped { self.rt.heap.base(pe) } else { self.rt.heap.base(me) };
        let call = self.call;
        let describe = || format!("{call} on PE {me} (collective {} of its team): {}", self.seq, what());
        notify::wait_until(base, self.rt.wait_policy(timeout), check, describe)
    }

    /// [`Session::wait_word`] on member `i`'s slot word at `off` without a time limit (but under the job's hang limit).
    fn wait(&self, i: usize, off: usize, ready: impl FnMut(u64) -> Result<bool>, what: impl Fn() -> String) -> Result<()> {
        self.wait_at(i, self.slot + off, ready, what)
    }

    /// [`Session::wait`] on the word at heap offset `word` of member `i`.
    fn wait_at(&self, i: usize, word: usize, ready: impl FnMut(u64) -> Result<bool>, what: impl Fn() -> String) -> Result<()> {
        match self.wait_word(i, word, ready, &what, None)? {
            WaitOutcome::Ready => Ok(()),
            WaitOutcome::TimedOut => Err(Error::Timeout { call: self.call, what: what(), secs: 0.0, pe: self.rt.my_pe }),
        }
    }

    /// Publishes this PE's entry word (its code, step 0) unless it already published
    /// in this collective: called before every wait on a peer of this collective.
    fn enter(&self) -> Result<()> {
        if !self.entered.replace(true) {
            self.store_mine(Self::progress_off(self.seq), tag(self.seq, self.word_code(), 0))?;
        }
        Ok(())
    }

    /// Publishes step `step` of this collective (PROGRESS).
    pub(crate) fn publish(&self, step: u64) -> Result<()> {
        self.entered.set(true);
        self.store_mine(Self::progress_off(self.seq), tag(self.seq, self.word_code(), step))
    }

    /// Records that this PE has read its peers' data up to step `step` (CONSUMED).
    pub(crate) fn consumed(&self, step: u64) -> Result<()> {
        self.store_mine(SLOT_CONSUMED, tag(self.seq, self.word_code(), step))
    }

    /// Waits until member `i` has published step `step`, checking its argument code.
    pub(crate) fn wait_progress(&self, i: usize, step: u64) -> Result<()> {
        self.enter()?;
        let seen = Cell::new(None);
        self.wait(
            i,
            Self::progress_off(self.seq),
            |v| {
                let w = decode(v);
                Ok(match relative(w.seq, self.seq) {
                    Ordering::Less => false,
                    // Past this collective (4 or more ahead): it published everything,
                    // unless it ended this one abnormally (its record says so).
                    Ordering::Greater => {
                        if self.ended_abnormally(i) {
                            seen.set(Some(FAILED));
                        }
                        true
                    }
                    Ordering::Equal if w.code != self.code => {
                        seen.set(Some(w.code));
                        true
                    }
                    Ordering::Equal => w.step >= step,
                })
            },
            || format!("PE {} to publish step {step}", self.pe(i)),
        )?;
        self.verdict(i, seen.get())?;
        self.saw_entered(i);
        Ok(())
    }

    /// Waits until member `i` has read up to step `step`, checking its argument code in
    /// its CONSUMED word and, while that is not yet of this collective, now and then in
    /// its PROGRESS word (so that two PEs that each wait for the other to read, under
    /// differing arguments, find out instead of hanging).
    pub(crate) fn wait_consumed(&self, i: usize, step: u64) -> Result<()> {
        self.enter()?;
        let seen = Cell::new(None);
        let mut watch = EntryWatch::default();
        self.wait(
            i,
            SLOT_CONSUMED,
            |v| {
                let w = decode(v);
                match relative(w.seq, self.seq) {
                    Ordering::Greater => return Ok(true),
                    Ordering::Equal if w.code != self.code => {
                        seen.set(Some(w.code));
                        return Ok(true);
                    }
                    Ordering::Equal if w.step >= step => return Ok(true),
                    _ => {}
                }
                Ok(watch.poll(self, i)?.inspect(|&c| seen.set(Some(c))).is_some())
            },
            || format!("PE {} to finish reading step {step}", self.pe(i)),
        )?;
        self.verdict(i, seen.get())?;
        self.saw_entered(i);
        Ok(())
    }

    /// Notes that member `i` has entered this collective (it published a step of it or
    /// of a later one), so it has finished every earlier one.
    fn saw_entered(&self, i: usize) {
        if let Some(e) = self.state.entered.get(i) {
            e.set(e.get().max(self.seq));
        }
    }

    /// Whether member `i` is known to have finished collective `seq` (see
    /// [`TeamCollState::entered`]).
    fn known_finished(&self, i: usize, seq: u64) -> bool {
        self.state.entered.get(i).is_some_and(|e| e.get() > seq)
    }

    /// Waits until member `i` has finished collective `prev` (its CONSUMED word says so),
    /// unless this PE already knows it has; what the word shows is remembered (member
    /// `i` finished every collective before the one it names, and that one too when the
    /// word says DONE), so that a stream of calls reads the word once every few calls.
    fn wait_finished(&self, i: usize, prev: u64, what: impl Fn() -> String) -> Result<()> {
        if self.known_finished(i, prev) {
            return Ok(());
        }
        let seen = Cell::new(0u64);
        self.wait(
            i,
            SLOT_CONSUMED,
            |v| {
                seen.set(v);
                Ok(finished(decode(v), prev))
            },
            what,
        )?;
        let w = decode(seen.get());
        // The word's sequence in full (it is within 2^31 of this collective's).
        let full = self.seq.wrapping_add(w.seq.wrapping_sub(self.seq as u32) as i32 as i64 as u64);
        let entered = if w.step == DONE { full + 1 } else { full };
        if let Some(e) = self.state.entered.get(i) {
            e.set(e.get().max(entered));
        }
        Ok(())
    }

    /// Adds one to member `i`'s ARRIVE counter (after a push to it and a fence). The add
    /// is posted ([`Transport::signal_post`](crate::transport::Transport::signal_post)):
    /// over the network it costs no round trip (the fence before it keeps it behind the
    /// push, and the member waits for the count).
    pub(crate) fn arrive(&self, i: usize) -> Result<()> {
        self.arrive_on(i, 0)
    }

    /// [`Session::arrive`] on ARRIVE counter `c` (0 or 1).
    fn arrive_on(&self, i: usize, c: usize) -> Result<()> {
        let pe = self.pe(i);
        self.rt.to(pe).signal_post(pe, self.slot + SLOT_ARRIVE + 8 * c, 8, AmoOp::FetchAdd, 1)
    }

    /// Waits for `k` more pushes into this PE.
    pub(crate) fn wait_arrivals(&mut self, k: u64) -> Result<()> {
        self.wait_arrivals_on(0, k)
    }

    /// Waits for `k` more pushes counted on ARRIVE counter `c` (0 or 1): forms of several
    /// rounds count even and odd rounds apart, so that a peer already a round ahead
    /// cannot make up the count of a round whose pushes have not all landed.
    pub(crate) fn wait_arrivals_on(&mut self, c: usize, k: u64) -> Result<()> {
        self.state.arrivals[c] += k;
        let target = self.state.arrivals[c];
        self.wait(self.me(), SLOT_ARRIVE + 8 * c, |v| Ok(v >= target), || format!("{k} peers to write their blocks into this PE"))
    }

    /// Says that this PE signals member `i`'s STEP_IN word (ring gather): should it fail
    /// the call, it marks that word, so that `i` does not wait for a signal that never comes.
    pub(crate) fn signals_to(&self, i: usize) {
        self.ring_right.set(Some(i));
    }

    /// Sets member `i`'s ring signal to step `step` (only its left neighbour does this).
    pub(crate) fn signal_step(&self, i: usize, step: u64) -> Result<()> {
        let pe = self.pe(i);
        self.rt.to(pe).store_word(pe, self.slot + SLOT_STEP_IN, 8, tag(self.seq, self.word_code(), step))
    }

    /// Waits until the left neighbour has signalled step `step`, checking its code.
    pub(crate) fn wait_step_in(&self, step: u64) -> Result<()> {
        let left = (self.me() + self.n() - 1) % self.n();
        let seen = Cell::new(None);
        self.wait(
            self.me(),
            SLOT_STEP_IN,
            |v| {
                let w = decode(v);
                // Only the left neighbour writes this word, and only for the collective
                // this PE is in: other sequences are leftovers of earlier rings.
                Ok(if relative(w.seq, self.seq) != Ordering::Equal {
                    false
                } else if w.code != self.code {
                    seen.set(Some(w.code));
                    true
                } else {
                    w.step >= step
                })
            },
            || format!("PE {} (left neighbour) to send ring step {step}", self.pe(left)),
        )?;
        self.verdict(left, seen.get())
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
        self.acquire_stage(set * STAGE_SET, STAGE_SET, true, 0)
    }

    /// Heap offset of `len` bytes at `at` of the team's staging area (offsets past
    /// `TEAM_STAGE` lie in its ring extension, which a slice never straddles), recorded as used by
    /// this collective. With `wait`, first waits until every member has finished the
    /// collectives that used them last; then, when it must wait at all, for one `ahead`
    /// collectives back (at most the one before this), so that a stream of calls through a
    /// ring of slots asks once every few calls. Without `wait`, only records: for a PE
    /// that only reads its own staging, which peers write after waiting for it (a staged
    /// broadcast's member).
    fn acquire_stage(&mut self, at: usize, len: usize, wait: bool, ahead: u64) -> Result<usize> {
        let units = at / STAGE_UNIT..(at + len).div_ceil(STAGE_UNIT);
        let prev = self.state.stage_seq[units.clone()].iter().copied().max().unwrap_or(0);
        if wait && prev != 0 && self.seq - prev < STALE {
            let until = prev.max(self.seq.saturating_sub(ahead)).min(self.seq - 1);
            for i in (0..self.n()).filter(|&i| i != self.me()) {
                if !self.known_finished(i, prev) {
                    self.wait_finished(i, until, || format!("PE {} to finish reading its staging of collective {prev}", self.pe(i)))?;
                }
            }
        }
        self.state.stage_seq[units].fill(self.seq);
        Ok(match self.extension {
            Some(extra) if at >= TEAM_STAGE => extra + (at - TEAM_STAGE),
            _ => self.stage + at,
        })
    }

    /// The slot of a staged broadcast of `nbytes` (at most [`Session::ring_slot_max`]) and
    /// its heap offset:
    /// the staging area and its ring extension, where the team has one, as a ring of
    /// slots of `nbytes` rounded up to a power of two (at least a unit), collective `seq`
    /// taking slot `seq` mod their number. The root (`wait`) may write the slot on every
    /// member once they finished its last user (it asks once every half ring in a
    /// stream); members record it.
    pub(crate) fn stage_ring_slot(&mut self, nbytes: usize, wait: bool) -> Result<usize> {
        debug_assert!(nbytes <= self.ring_slot_max());
        let slot = nbytes.next_power_of_two().clamp(STAGE_UNIT, self.ring_slot_max());
        let ring = TEAM_STAGE + self.extension.map_or(0, |_| RING_EXTRA);
        let slots = (ring / slot) as u64;
        self.acquire_stage((self.seq % slots) as usize * slot, slot, wait, slots / 2)
    }

    /// The largest message a staged broadcast's ring takes: a set, or the whole staging
    /// area (a quarter of the ring) where the team has a ring extension.
    pub(crate) fn ring_slot_max(&self) -> usize {
        if self.extension.is_some() {
            TEAM_STAGE
        } else {
            STAGE_SET
        }
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

    // ----- inbox -----

    /// Heap offset of this collective's inbox slot (the same on every member).
    pub(crate) fn inbox_slot(&self) -> usize {
        let k = self.seq as usize % self.inbox_slots();
        match self.extension {
            Some(extra) if k >= INBOX_SLOTS => extra + RING_EXTRA + (k - INBOX_SLOTS) * INBOX_SLOT,
            _ => self.inbox + k * INBOX_SLOT,
        }
    }

    /// Slots of the team's inbox: collective `seq` uses slot `seq` mod this number.
    fn inbox_slots(&self) -> usize {
        if self.extension.is_some() {
            WIDE_INBOX_SLOTS
        } else {
            INBOX_SLOTS
        }
    }

    /// Waits until member `i`'s inbox slot of this collective is free: `i` has finished
    /// the collective that last used it, as many collectives ago as the inbox has slots
    /// (inboxes start zeroed, so the first collectives of a team find them free).
    ///
    /// When it must wait, it waits for half the slots to be free instead: a sender that
    /// runs ahead of a member then reads the member's CONSUMED word once every half
    /// inbox of calls, not on every call (each read takes the line from the
    /// member, whose next store to it then waits for the line to come back). Every
    /// collective it waits for is earlier than this one, and this PE has done its part
    /// of all of them, so the longer wait cannot deadlock.
    pub(crate) fn claim_inbox(&self, i: usize) -> Result<()> {
        let Some(prev) = self.seq.checked_sub(self.inbox_slots() as u64).filter(|&p| p > 0) else { return Ok(()) };
        if self.known_finished(i, prev) {
            return Ok(());
        }
        let until = self.seq - (self.inbox_slots() / 2) as u64;
        self.wait_finished(i, until, || format!("PE {} to finish reading its inbox of collective {prev}", self.pe(i)))
    }

    /// Where member `j`'s part starts in an inbox slot that every member writes (bytes
    /// from the slot's start), and how many data bytes a part holds.
    pub(crate) fn inbox_part_of(&self, j: usize) -> (usize, usize) {
        let part = inbox_part(self.n());
        (j * part, part.saturating_sub(8))
    }

    /// The mailbox of a pushed gather or reduction of `bytes` per member: the inbox when
    /// they fit its parts, else (members over a network, see
    /// [`select`](super::select)) this collective's staging set, acquired here.
    pub(crate) fn push_mailbox(&mut self, bytes: usize) -> Result<Mailbox> {
        if super::select::fits_part(self.n(), bytes) {
            return Ok(Mailbox::Inbox);
        }
        let set = self.stage_set(self.own_set())?;
        debug_assert!(bytes <= self.part(Mailbox::Stage(set), self.me(), 0).cap);
        Ok(Mailbox::Stage(set))
    }

    /// Where member `j`'s part of `mb` lies in member `at`'s memory (a staging set holds
    /// the other members' parts only, see [`stage_part_index`]).
    pub(crate) fn part(&self, mb: Mailbox, j: usize, at: usize) -> Part {
        let (off, cap) = self.inbox_part_of(j);
        let tag = self.inbox_slot() + off;
        match mb {
            Mailbox::Inbox => Part { tag, data: tag + 8, cap },
            Mailbox::Stage(set) => {
                let part = stage_part(self.n());
                Part { tag, data: set + stage_part_index(j, at, self.n()) * part, cap: part }
            }
        }
    }

    /// Writes `len` bytes of this PE's heap at `src_off` into member `i`'s inbox slot of
    /// this collective at byte `at` (a part's start: 0, or a multiple of
    /// [`Session::inbox_part_of`]), then the part's tag word (this PE's code, step 1) after a fence,
    /// so that a member that sees the tag sees the data. Call [`Session::claim_inbox`]
    /// first.
    pub(crate) fn post_inbox(&self, i: usize, at: usize, src_off: usize, len: usize) -> Result<()> {
        debug_assert!(at + len + 8 <= INBOX_SLOT);
        let tag = self.inbox_slot() + at;
        self.post_tagged(i, Part { tag, data: tag + 8, cap: len }, src_off, len)
    }

    /// Writes `len` bytes of this PE's heap at `src_off` into member `i`'s heap at
    /// `part.data`, then this collective's tag word at `part.tag` (see [`Session::post_inbox`]).
    pub(crate) fn post_tagged(&self, i: usize, part: Part, src_off: usize, len: usize) -> Result<()> {
        debug_assert!(len <= part.cap);
        let pe = self.pe(i);
        let (t, w) = (self.rt.to(pe), tag(self.seq, self.word_code(), 1));
        if t.caps().mapped {
            self.copy(i, part.data, self.me(), src_off, len)?;
            self.fence(i)?;
            t.store_word(pe, part.tag, 8, w)
        } else {
            // Over the network, data and tag as one signalled put (one message where
            // the transport can), not a put and an atomic that waits for its reply.
            let mut data = vec![0u8; len];
            self.get(self.me(), src_off, &mut data)?;
            t.signal_put(pe, part.data, &data, part.tag, AmoOp::Set, w)
        }
    }

    /// Tells every other member that this PE has entered this collective: publishes
    /// step 1 and posts a tag without data into this PE's part of each member's inbox.
    /// For teams whose members are reached over the network, where a member that polls
    /// this PE's PROGRESS word pays a round trip per read: the tag reaches it in one
    /// trip, into its own memory. Members wait with [`Session::wait_entry`]. Needs a part
    /// per member ([`Session::inbox_part_of`]: teams of up to 16).
    pub(crate) fn announce_entry(&self) -> Result<()> {
        self.publish(1)?;
        let (me, n) = (self.me(), self.n());
        for d in 1..n {
            self.announce_to((me + d) % n)?;
        }
        Ok(())
    }

    /// [`Session::announce_entry`] to member `i` only (a broadcast's members tell the
    /// root).
    pub(crate) fn announce_entry_to(&self, i: usize) -> Result<()> {
        self.publish(1)?;
        self.announce_to(i)
    }

    /// Posts this PE's entry tag into its part of member `i`'s inbox.
    fn announce_to(&self, i: usize) -> Result<()> {
        self.claim_inbox(i)?;
        self.post_inbox(i, self.inbox_part_of(self.me()).0, 0, 0)
    }

    /// Waits until every other member has entered this collective (so its dest is free
    /// to write): over the network, teams of up to 16 announce their entry into each
    /// other's inboxes ([`Session::announce_entry`], one trip), others publish their
    /// PROGRESS word and read each other's.
    pub(crate) fn enter_all(&mut self) -> Result<()> {
        let (me, n) = (self.me(), self.n());
        let pushed = !self.mapped() && inbox_part(n) > 0;
        if pushed {
            self.announce_entry()?;
        } else {
            self.publish(1)?;
        }
        for i in (0..n).filter(|&i| i != me) {
            if pushed {
                self.wait_entry(i)?;
            } else {
                self.wait_progress(i, 1)?;
            }
        }
        Ok(())
    }

    /// Writes `len` bytes of this PE's heap at `src_off` into member `i`'s heap at
    /// `dst_off`, then adds one to `i`'s ARRIVE counter: whoever sees the count sees the
    /// data. Over the network both go as one signalled put where they fit one
    /// ([`Transport::signal_put`](crate::transport::Transport::signal_put)).
    pub(crate) fn push_arrive(&self, i: usize, dst_off: usize, src_off: usize, len: usize) -> Result<()> {
        self.push_arrive_on(i, dst_off, src_off, len, 0)
    }

    /// [`Session::push_arrive`] counted on ARRIVE counter `c` (0 or 1).
    pub(crate) fn push_arrive_on(&self, i: usize, dst_off: usize, src_off: usize, len: usize, c: usize) -> Result<()> {
        let pe = self.pe(i);
        let t = self.rt.to(pe);
        if t.caps().mapped || len == 0 {
            self.copy(i, dst_off, self.me(), src_off, len)?;
            self.fence(i)?;
            return self.arrive_on(i, c);
        }
        let mut data = vec![0u8; len];
        self.get(self.me(), src_off, &mut data)?;
        t.signal_put(pe, dst_off, &data, self.slot + SLOT_ARRIVE + 8 * c, AmoOp::FetchAdd, 1)
    }

    /// Waits until member `i` has announced its entry into this collective
    /// ([`Session::announce_entry`]), checking its code; it has then finished every
    /// earlier collective.
    pub(crate) fn wait_entry(&self, i: usize) -> Result<()> {
        self.wait_part(Mailbox::Inbox, i).map(|_| ())
    }

    /// Posts `len` bytes of this PE's heap at `src_off` into this PE's part of `mb` on
    /// every other member (gathers and reductions), each inbox part after claiming it.
    pub(crate) fn post_part_to_others(&self, mb: Mailbox, src_off: usize, len: usize) -> Result<()> {
        let (me, n) = (self.me(), self.n());
        for d in 1..n {
            let j = (me + d) % n;
            let part = self.part(mb, me, j);
            debug_assert!(len <= part.cap, "{len} B do not fit a part of {} B", part.cap);
            self.claim_inbox(j)?;
            self.post_tagged(j, part, src_off, len)?;
        }
        Ok(())
    }

    /// Waits until member `j` has posted its part of `mb` into this PE ([`Session::wait_inbox`]);
    /// returns the heap offset of the data.
    pub(crate) fn wait_part(&self, mb: Mailbox, j: usize) -> Result<usize> {
        let part = self.part(mb, j, self.me());
        self.wait_tagged(j, part.tag)?;
        Ok(part.data)
    }

    /// Waits until member `from` has posted its part at byte `at` of this PE's inbox slot
    /// of this collective, checking the code of its tag. While it waits it also watches
    /// the sender's PROGRESS word now and then: a sender that chose another algorithm
    /// under differing arguments (or is not a sender under its own) posts nothing, but
    /// its word shows its code. Returns the heap offset of the data.
    pub(crate) fn wait_inbox(&self, from: usize, at: usize) -> Result<usize> {
        let tag = self.inbox_slot() + at;
        self.wait_tagged(from, tag)?;
        Ok(tag + 8)
    }

    /// [`Session::wait_inbox`] on the tag word at heap offset `slot` of this PE. A tag of
    /// this collective shows that `from` entered it, which is remembered
    /// ([`Session::saw_entered`]): later calls then write into its inbox and staging
    /// without asking.
    pub(crate) fn wait_tagged(&self, from: usize, slot: usize) -> Result<()> {
        self.enter()?;
        let seen = Cell::new(None);
        let mut watch = EntryWatch::default();
        self.wait_at(
            self.me(),
            slot,
            |v| {
                let w = decode(v);
                if relative(w.seq, self.seq) == Ordering::Equal {
                    if w.code != self.code {
                        seen.set(Some(w.code));
                    }
                    return Ok(true);
                }
                Ok(watch.poll(self, from)?.inspect(|&c| seen.set(Some(c))).is_some())
            },
            || format!("PE {} to write its part of this PE's inbox", self.pe(from)),
        )?;
        self.verdict(from, seen.get())?;
        self.saw_entered(from);
        Ok(())
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

    /// Records this PE's arguments: the collective's kind, the values of
    /// [`Kind::fields`] (in that order) and whether its own arguments passed the local
    /// checks (`local_ok`). They set the argument code that every tag word of this call
    /// carries, which the waits compare (always on, see the module documentation).
    ///
    /// With `RSHMEM_COLL_CHECK` on (by default in debug builds) it also runs the full
    /// check: every member publishes its record and compares all of them against team
    /// member 0, so all reach the same verdict before any data moves. Returns Ok on a PE
    /// whose own arguments failed (the caller then returns its own error); the others
    /// get an error naming that PE.
    #[inline]
    pub(crate) fn check<const N: usize>(&mut self, kind: Kind, values: [u64; N], local_ok: bool) -> Result<()> {
        debug_assert_eq!(N, kind.fields().len(), "the values of {kind:?}'s fields");
        const { assert!(N <= MAX_FIELDS) };
        self.args.kind = kind as u64;
        self.args.rejected = !local_ok;
        self.args.values[..N].copy_from_slice(&values);
        self.code = if local_ok { argument_code(kind, &values) } else { INVALID };
        if !self.rt.config.coll_check() || self.n() == 1 {
            return Ok(());
        }
        self.full_check()
    }

    /// The full argument check (see [`Session::check`]).
    #[cold]
    #[inline(never)]
    fn full_check(&self) -> Result<()> {
        let off = Self::record_off(self.seq);
        let words = self.args.words(self.seq);
        let me = self.rt.my_pe;
        self.rt.to(me).put(me, self.slot + off + 8, bytemuck::cast_slice(&words[1..]))?;
        self.store_mine(off, self.seq)?;
        let mut all = Vec::with_capacity(self.n());
        for i in 0..self.n() {
            // A member that rejected its own arguments rewrites its record (with itself
            // as the culprit) once it has seen every record: its sequence word reads 0
            // meanwhile. Read again until the record did not change while being read.
            let w = loop {
                self.wait(i, off, |v| Ok(v >= self.seq), || format!("PE {} to enter the collective (argument check)", self.pe(i)))?;
                let mut w = [0u64; RECORD_WORDS];
                self.get(i, self.slot + off, &mut w)?;
                if w[0] != 0 && self.load(i, off)? == w[0] {
                    break w;
                }
            };
            all.push(w);
        }
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
        if self.args.rejected {
            return Ok(());
        }
        let records: Vec<Record> = all.iter().map(Record::from_words).collect();
        if let Some(i) = records.iter().position(|r| r.rejected) {
            return Err(self.rejected_error(i));
        }
        match records.iter().position(|r| !r.same_call(&records[0])) {
            Some(i) => Err(self.named(i, &records[i], 0, &records[0]).unwrap_or_else(|| self.unnamed(i, None))),
            None => Ok(()),
        }
    }

    /// The error for a wait that saw member `i`'s tag word carry code `seen` (a code
    /// other than this PE's), if any.
    fn verdict(&self, i: usize, seen: Option<u8>) -> Result<()> {
        match seen {
            None => Ok(()),
            Some(code) => Err(self.mismatch(i, code)),
        }
    }

    /// Fails the call on this PE: writes its argument record (with the member it found
    /// differing), then marks its PROGRESS and CONSUMED words (and the STEP_IN word it
    /// signals) FAILED for this collective, so that every PE waiting on it fails too
    /// instead of waiting for steps that will not come. Best effort: a transport that
    /// fails here has failed the call already.
    #[cold]
    #[inline(never)]
    fn fail(&self, culprit: usize) {
        if self.failed.replace(true) {
            return;
        }
        self.write_record(culprit);
        let marker = tag(self.seq, FAILED, DONE);
        self.entered.set(true);
        let _ = self.store_mine(Self::progress_off(self.seq), marker);
        let _ = self.store_mine(SLOT_CONSUMED, marker);
        if let Some(r) = self.ring_right.get() {
            let pe = self.pe(r);
            let _ = self.rt.to(pe).store_word(pe, self.slot + SLOT_STEP_IN, 8, marker);
        }
    }

    /// Writes this PE's record of an abnormal end of this collective (`culprit`: the
    /// member it found differing, or itself when it rejected its own arguments). The
    /// record outlives the PROGRESS word, which the PE overwrites when it enters collective
    /// `seq + 4` (it may run ahead: a failed call waits for no one): a peer still in this
    /// collective that finds that later word reads the record instead. So before
    /// overwriting an abnormal record of an earlier collective, this waits until every
    /// member has finished that one. Error path only; best effort.
    fn write_record(&self, culprit: usize) {
        let off = Self::record_off(self.seq);
        let mut old = [0u64; RECORD_WORDS];
        if self.get(self.me(), self.slot + off, &mut old).is_ok() && old[CULPRIT] != 0 && old[0] != 0 && old[0] < self.seq {
            let prev = old[0];
            for i in (0..self.n()).filter(|&i| i != self.me()) {
                let _ = self.wait(
                    i,
                    SLOT_CONSUMED,
                    |v| Ok(finished(decode(v), prev)),
                    || format!("PE {} to finish collective {prev}, which this PE ended abnormally", self.pe(i)),
                );
            }
        }
        let words = Record { culprit: Some(culprit), ..self.args }.words(self.seq);
        let me = self.rt.my_pe;
        // The sequence word goes to 0 first and back last, so that a reader can tell a
        // record that changed while it read it.
        let _ = self.store_mine(off, 0);
        let _ = self.rt.to(me).put(me, self.slot + off + 8, bytemuck::cast_slice(&words[1..]));
        let _ = self.store_mine(off, self.seq);
    }

    /// Whether member `i`, whose PROGRESS word is already of a later collective, ended
    /// this one abnormally (failed it, or rejected its arguments): its record says so.
    #[cold]
    #[inline(never)]
    fn ended_abnormally(&self, i: usize) -> bool {
        self.record(i).is_some_and(|r| r.culprit.is_some())
    }

    /// Member `i`'s argument record of this collective, if it wrote one (the full check,
    /// or an abnormal end) and it did not change while being read.
    fn record(&self, i: usize) -> Option<Record> {
        let off = Self::record_off(self.seq);
        if self.load(i, off).ok()? != self.seq {
            return None;
        }
        let mut w = [0u64; RECORD_WORDS];
        self.get(i, self.slot + off, &mut w).ok()?;
        (w[0] == self.seq && self.load(i, off).ok()? == self.seq).then(|| Record::from_words(&w))
    }

    /// Waits (at most [`NAMING_WAIT`]) until member `i` has finished this collective,
    /// succeeded or failed, and returns its record, if it wrote one.
    fn final_record(&self, i: usize) -> Option<Record> {
        let _ = self.wait_word(
            i,
            self.slot + SLOT_CONSUMED,
            |v| Ok(finished(decode(v), self.seq)),
            || format!("PE {} to finish the call (to name the argument that differs)", self.pe(i)),
            Some(NAMING_WAIT),
        );
        self.record(i)
    }

    /// The error for code `seen` in member `i`'s word; fails the call on this PE first
    /// (so that no PE waits on it), then works out what differs, reading the records of
    /// the PEs involved (the slow path: only here does the check cost anything).
    #[cold]
    #[inline(never)]
    fn mismatch(&self, i: usize, seen: u8) -> Error {
        if seen == INVALID {
            self.fail(i);
            return self.rejected_error(i);
        }
        if seen != FAILED {
            // Member i passed other arguments: once it has finished the call its record
            // (written if it failed too) says which.
            self.fail(i);
            return match self.final_record(i) {
                Some(r) => self.against_me(i, &r).unwrap_or_else(|| self.unnamed(i, None)),
                None => self.unnamed(i, None),
            };
        }
        // Member i failed the call: its record says what it passed and whom it found
        // differing (written before its FAILED marker).
        match self.record(i) {
            Some(r) if !r.same_call(&self.args) => {
                self.fail(i);
                self.against_me(i, &r).unwrap_or_else(|| self.unnamed(i, None))
            }
            Some(Record { culprit: Some(c), .. }) if c < self.n() && c != self.me() && c != i => {
                // It agrees with this PE; the difference is with member c.
                self.fail(c);
                match self.final_record(c) {
                    Some(r) if !r.same_call(&self.args) => self.against_me(c, &r).unwrap_or_else(|| self.unnamed(c, Some(i))),
                    _ => self.unnamed(c, Some(i)),
                }
            }
            _ => {
                self.fail(i);
                self.unnamed(i, None)
            }
        }
    }

    /// "PE x passed arguments it rejected".
    fn rejected_error(&self, i: usize) -> Error {
        Error::CollectiveMismatch {
            call: self.call,
            arg: "(arguments)",
            pe: self.pe(i),
            value: "arguments it rejected (see its own error)".into(),
            reference_pe: self.rt.my_pe,
            reference: "valid arguments".into(),
        }
    }

    /// The error naming the first argument in which member `i`'s record `theirs`
    /// differs from this PE's.
    fn against_me(&self, i: usize, theirs: &Record) -> Option<Error> {
        if theirs.rejected {
            return Some(self.rejected_error(i));
        }
        self.named(i, theirs, self.me(), &self.args)
    }

    /// The error naming the first argument in which member `i`'s record `theirs`
    /// differs from member `r`'s record `reference`; None if none does.
    fn named(&self, i: usize, theirs: &Record, r: usize, reference: &Record) -> Option<Error> {
        let error = |arg, value, reference| Error::CollectiveMismatch {
            call: self.call,
            arg,
            pe: self.pe(i),
            value,
            reference_pe: self.pe(r),
            reference,
        };
        if theirs.kind != reference.kind {
            return Some(error("(collective called)", Kind::name_of(theirs.kind), Kind::name_of(reference.kind)));
        }
        let kind = Kind::from_raw(reference.kind)?;
        let (k, &(name, show)) = kind.fields().iter().enumerate().find(|&(k, _)| theirs.values[k] != reference.values[k])?;
        Some(error(name, show(theirs.values[k]), show(reference.values[k])))
    }

    /// The error for differing arguments that cannot be named: member `i`'s code differs
    /// from this PE's, but it finished the call without reading from a PE that differs
    /// from it (so it wrote no record). `found_by`: the member that reported it.
    fn unnamed(&self, i: usize, found_by: Option<usize>) -> Error {
        let by = found_by.map_or_else(String::new, |f| format!(", found by PE {}", self.pe(f)));
        Error::CollectiveMismatch {
            call: self.call,
            arg: "(arguments)",
            pe: self.pe(i),
            value: format!(
                "different arguments (their code in its synchronization words differs{by}; RSHMEM_COLL_CHECK=1 names the argument)"
            ),
            reference_pe: self.rt.my_pe,
            reference: self.args.describe(),
        }
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        // A failing transport has already failed the call; nothing more to report here.
        if self.n() > 1 && !self.entered.replace(true) {
            // A PE that left without publishing (zero-length call, rejected arguments,
            // an error every member returns alike) still shows its code to peers that
            // wait on it under other arguments; one that rejected its arguments also
            // leaves a record, for peers that find its word of a later collective.
            if self.args.rejected {
                self.write_record(self.me());
            }
            let _ = self.store_mine(Self::progress_off(self.seq), tag(self.seq, self.word_code(), 0));
        }
        let _ = self.store_mine(SLOT_CONSUMED, tag(self.seq, self.word_code(), DONE));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_reads_go_at_once_then_spaced_by_a_doubling_gap() {
        let mut r = RemoteReads::default();
        for k in 0..RemoteReads::FREE {
            assert!(r.due(), "read {k} of the first {} waits", RemoteReads::FREE);
        }
        // The first spaced read is due at once; the next only after its gap.
        // Taken before the read, which starts the gap: the gap is at least this long.
        let first = Instant::now();
        assert!(r.due());
        let mut polls = 0u64;
        while !r.due() {
            polls += 1;
            assert!(first.elapsed() < Duration::from_secs(10), "no read due after 10 s");
        }
        assert!(first.elapsed() >= RemoteReads::FIRST, "read due after {:?}", first.elapsed());
        assert!(polls > 0, "a poll right after a read found the next read due");
        // The gap doubles up to LONGEST and stays there.
        // Returns when the read was due: not before the read that started its gap.
        let read = |r: &mut RemoteReads| {
            let t = Instant::now();
            loop {
                let before = Instant::now();
                if r.due() {
                    return before;
                }
                assert!(t.elapsed() < Duration::from_secs(10), "no read due after 10 s");
            }
        };
        let mut last = first;
        for _ in 0..20 {
            last = read(&mut r);
        }
        assert_eq!(r.gap, RemoteReads::LONGEST);
        read(&mut r);
        assert!(last.elapsed() >= RemoteReads::LONGEST, "gap {:?}", last.elapsed());
    }

    #[test]
    fn tag_words_round_trip_and_order_across_the_wrap() {
        let w = decode(tag(7, 42, 3));
        assert_eq!(w, Tag { seq: 7, code: 42, step: 3 });
        assert_eq!(decode(tag(1 << 32 | 5, FAILED, DONE)), Tag { seq: 5, code: FAILED, step: DONE });
        assert_eq!(relative(5, 5), Ordering::Equal);
        assert_eq!(relative(4, 5), Ordering::Less);
        assert_eq!(relative(9, 5), Ordering::Greater);
        // Across the wrap of the 32-bit field.
        let s = (1u64 << 32) + 1;
        assert_eq!(relative(u32::MAX, s), Ordering::Less);
        assert_eq!(relative(3, s), Ordering::Greater);
        assert_eq!(relative(0, 1), Ordering::Less, "a zeroed word is before the first collective");
    }

    #[test]
    fn single_argument_differences_change_the_code() {
        let base = [64u64, 0, 0x1000, 0x2000, 0];
        let code = argument_code(Kind::Broadcast, &base);
        assert!(u64::from(code) < CODE_MOD);
        for k in 0..base.len() {
            for delta in [1u64, 2, 7, 8, 64, 250, 1 << 20] {
                let mut v = base;
                v[k] += delta;
                assert_ne!(argument_code(Kind::Broadcast, &v), code, "field {k} + {delta}");
            }
        }
        for a in Kind::ALL {
            for b in Kind::ALL {
                if a != b {
                    assert_ne!(argument_code(a, &[8, 0, 0]), argument_code(b, &[8, 0, 0]), "{a:?} vs {b:?}");
                }
            }
        }
    }

    #[test]
    fn records_round_trip() {
        let r = Record { kind: Kind::Reduce as u64, rejected: false, values: [3, 1, 7, 0x40, 0x80, 0], culprit: Some(2) };
        let back = Record::from_words(&r.words(9));
        assert_eq!(back, r);
        assert!(back.same_call(&Record { culprit: None, ..r }));
        assert!(r.describe().starts_with("reduce with type"), "{}", r.describe());
        for k in Kind::ALL {
            assert!(k.fields().len() <= MAX_FIELDS);
            assert_eq!(Kind::from_raw(k as u64), Some(k));
        }
    }
}
