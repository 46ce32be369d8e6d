//! Layout of the runtime's own area at the start of every PE's heap.
//!
//! ```text
//! offset 0                      header: wake sequence (u32), wake flag (u32, armed by sleepers), reserved to 4 KiB
//! offset 4096                   team slots: max_teams x TEAM_SLOT bytes (synchronization words)
//! 4096 + max_teams*TEAM_SLOT    team staging: max_teams x TEAM_STAGE bytes (collective scratch)
//! ... + max_teams*TEAM_STAGE     team inboxes: max_teams x TEAM_INBOX bytes (pushed broadcasts)
//! ... + max_teams*TEAM_INBOX     team extensions: RING_TEAMS x TEAM_EXTRA bytes (the first team slots' wider rings and inboxes)
//! ```
//! Every PE uses the same layout, so a slot's offset names the same slot on all PEs.
//!
//! One team slot (`TEAM_SLOT` = 8 KiB; zeroed when its team is destroyed):
//!
//! ```text
//! 0     SLOT_BARRIER   64 x u64   dissemination-barrier round counters (peers add 1)
//! 512   SLOT_PROGRESS  u64        what this PE has published in the current collective
//! 576   SLOT_CONSUMED  u64        how far this PE has read its peers' data
//! 640   SLOT_ARRIVE    u64        pushes that arrived in this PE's buffers (peers add 1)
//! 704   SLOT_STEP_IN   u64        ring step signal, written by the left neighbour only
//! 768   SLOT_INFO      u64        a value published with PROGRESS (collect: this PE's size)
//! 832   SLOT_EPOCH     u64        barriers this PE has entered on the team (names the missing PE)
//! 1024  SLOT_CHECK     2 x 128 B  argument descriptors of the debug argument check
//! 2048  SLOT_SPLIT     ...        per-member records of a team split (team.rs)
//! ```
//! Each word sits on its own 64-byte line so that peers polling one word do not disturb
//! writers of another. PROGRESS and CONSUMED hold `(collective sequence << 24) | step`
//! and only grow (see `coll` for the protocol).
//!
//! One team staging area (`TEAM_STAGE` = 2 sets of `STAGE_SET` bytes, never zeroed): data
//! a PE publishes for its peers to read (small broadcasts, small all-reduces, ring
//! partial sums), so that it can return without waiting for its readers. On mapped teams
//! only the owner writes its staging area; over a network peers push into it (the
//! network forms of `coll`), each once it knows the owner finished the set's previous
//! user (a staged broadcast over the network uses the area as a ring of smaller slots;
//! use is recorded per [`STAGE_UNIT`]). Pages are committed only when touched.
//!
//! The first [`RING_TEAMS`] team slots (the world team's among them) also have an
//! extension of [`TEAM_EXTRA`] bytes: a ring extension of [`RING_EXTRA`] bytes (never
//! zeroed), over which a staged broadcast over the network runs its ring of slots after
//! the staging area, so that a root streaming 4-32 KiB broadcasts asks its members how
//! far they got once every 8-32 calls instead of every 2-8 (each ask a round trip); and
//! an inbox extension of [`INBOX_EXTRA`] bytes (zeroed with the inbox), which makes their
//! inboxes [`WIDE_INBOX_SLOTS`] slots deep.
//!
//! One team inbox (`TEAM_INBOX` = `INBOX_SLOTS` slots of `INBOX_SLOT` bytes; its tag words
//! are zeroed when its team is destroyed): small collectives whose data the sender writes
//! into every member's heap (the pushed algorithms of `coll`, through `Session`'s inbox calls). A slot holds a tag word (written last)
//! and up to `INBOX_DATA` bytes of data right after it (a broadcast's root), or one such
//! part of [`inbox_part`] bytes per member (gathers and reductions, where every member
//! writes), so that up to 56 bytes arrive in the same cache line as their tag.
//! Collective `seq` uses slot `seq % INBOX_SLOTS`; a sender writes a member's slot only
//! after the member has finished the collective that used the slot before.

use super::align_up;

/// Bytes per team slot.
pub const TEAM_SLOT: usize = 8192;
/// Bytes of the header.
pub const HEADER: usize = 4096;
/// Offset of the wake sequence word in the header.
pub const WAKE_SEQ: usize = 0;
/// Offset of the wake flag in the header (non-zero while a sleeper may need a wake).
pub const WAITERS: usize = 4;

/// Offset in a team slot of the barrier round counters (64 u64 words).
pub const SLOT_BARRIER: usize = 0;
/// Offset in a team slot of the PROGRESS word.
pub const SLOT_PROGRESS: usize = 512;
/// Offset in a team slot of the CONSUMED word.
pub const SLOT_CONSUMED: usize = 576;
/// Offset in a team slot of the ARRIVE counters: two u64 words, pushes into this PE
/// counted apart by the parity of their round (one word for single-round forms).
pub const SLOT_ARRIVE: usize = 640;
/// Offset in a team slot of the ring STEP_IN word.
pub const SLOT_STEP_IN: usize = 704;
/// Offset in a team slot of the INFO word.
pub const SLOT_INFO: usize = 768;
/// Offset in a team slot of the EPOCH word: how many barriers this PE has entered on the
/// team (written by its owner only; read by waiters to name the PE a barrier waits for).
pub const SLOT_EPOCH: usize = 832;
/// Offset in a team slot of the two argument-check descriptors.
pub const SLOT_CHECK: usize = 1024;
/// Bytes of one argument-check descriptor (16 u64 words).
pub const CHECK_BYTES: usize = 128;
/// Offset in a team slot of the team-split records.
pub const SLOT_SPLIT: usize = 2048;
/// Fixed words of one member's team-split record (its arguments and the team it wants),
/// before its used-slot mask.
pub const SPLIT_RECORD_WORDS: usize = 8;
/// Most team slots (`RSHMEM_MAX_TEAMS`) a split can handle: each member's record carries
/// a mask with one bit per slot, and it must fit in the parent's slot after the split
/// offset (48,640 with 8 KiB slots).
pub const MAX_TEAM_SLOTS: usize = ((TEAM_SLOT - SLOT_SPLIT) / 8 - SPLIT_RECORD_WORDS) * 64;

/// Bytes of one staging set.
pub const STAGE_SET: usize = 16 << 10;
/// Bytes of staging per team (two sets, used alternately).
pub const TEAM_STAGE: usize = 2 * STAGE_SET;
/// The grain at which collectives record their use of the staging area (a set, or a
/// slot of a staged broadcast's ring over the whole area).
pub const STAGE_UNIT: usize = 1024;

/// Team slots (the first ones) with an extension (a wider staging ring and inbox).
pub const RING_TEAMS: usize = 8;
/// Bytes of a ring extension. Measured with the ring over 128 KiB instead of 32 (2 PEs,
/// UCX over loopback TCP, broadcast in a stream): 8 KiB 8.5-9.6 us a call -> 6.2-8.0,
/// 16 KiB 11.4-12.5 -> 8.0-9.5.
pub const RING_EXTRA: usize = 96 << 10;
/// Units of a staging area with its ring extension.
pub const RING_UNITS: usize = (TEAM_STAGE + RING_EXTRA) / STAGE_UNIT;
/// Inbox slots of a team slot with an extension.
pub const WIDE_INBOX_SLOTS: usize = 128;
/// Bytes of an inbox extension (after the inbox's own `INBOX_SLOTS` slots).
pub const INBOX_EXTRA: usize = (WIDE_INBOX_SLOTS - INBOX_SLOTS) * INBOX_SLOT;
/// Bytes of a team extension: its ring extension, then its inbox extension.
pub const TEAM_EXTRA: usize = RING_EXTRA + INBOX_EXTRA;

/// Bytes of one inbox slot (a tag word and the data, or one such part per writer).
pub const INBOX_SLOT: usize = 1024;
/// Most data bytes one inbox slot holds.
pub const INBOX_DATA: usize = INBOX_SLOT - 8;

/// Bytes of each member's part of an inbox slot that all `n` members of a team write
/// (gathers and reductions: member `j` writes part `j`, its tag word first), whole cache
/// lines; 0 when `n` parts of a line each do not fit.
pub const fn inbox_part(n: usize) -> usize {
    match INBOX_SLOT.checked_div(n) {
        Some(part) => part & !63,
        None => 0,
    }
}
/// Bytes of each member's part of a staging set that the other `n - 1` members of a team
/// push into over a network (a member's own contribution stays in its source; the tag
/// word of member `j`'s part goes to the first word of its inbox part, as for an inbox
/// push), whole cache lines: the whole set on 2 PEs; 0 on a team of one.
pub const fn stage_part(n: usize) -> usize {
    match STAGE_SET.checked_div(n.saturating_sub(1)) {
        Some(part) => part & !63,
        None => 0,
    }
}
/// Inbox slots per team (collective `seq` uses slot `seq % INBOX_SLOTS`): how far a
/// sender may run ahead of a member. Measured on 8 PEs sharing 2 cores, a stream of 8 B
/// broadcasts took 2.0 us a call with 8 slots, 1.3 with 16 and 1.0 with 32 (a root that
/// gets the CPU posts more calls before it waits for its members); 2 PEs with a core
/// each do not care. The area is virtual until touched: a stream touches the slots'
/// first lines.
pub const INBOX_SLOTS: usize = 32;
/// Bytes of one team inbox.
pub const TEAM_INBOX: usize = INBOX_SLOTS * INBOX_SLOT;

/// Where things are in the runtime area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SysLayout {
    /// Size of the whole runtime area (a multiple of the segment alignment).
    pub size: usize,
    /// Number of team slots.
    pub max_teams: usize,
}

impl SysLayout {
    /// The layout for `max_teams` team slots.
    pub fn new(max_teams: usize) -> SysLayout {
        // The configuration bounds RSHMEM_MAX_TEAMS by the same number (config tests).
        debug_assert!(max_teams <= MAX_TEAM_SLOTS, "{max_teams} team slots do not fit a split record");
        let extensions = max_teams.min(RING_TEAMS) * TEAM_EXTRA;
        SysLayout { size: align_up(Self::extensions_start(max_teams) + extensions, super::SEGMENT_ALIGN), max_teams }
    }

    /// Offset (from a heap base) of team slot `slot`.
    pub fn team_slot(&self, slot: usize) -> usize {
        assert!(slot < self.max_teams, "team slot {slot} out of range");
        HEADER + slot * TEAM_SLOT
    }

    /// Offset (from a heap base) of the staging area of team slot `slot`.
    pub fn team_stage(&self, slot: usize) -> usize {
        assert!(slot < self.max_teams, "team slot {slot} out of range");
        HEADER + self.max_teams * TEAM_SLOT + slot * TEAM_STAGE
    }

    /// Offset (from a heap base) of the inbox of team slot `slot`.
    pub fn team_inbox(&self, slot: usize) -> usize {
        assert!(slot < self.max_teams, "team slot {slot} out of range");
        HEADER + self.max_teams * (TEAM_SLOT + TEAM_STAGE) + slot * TEAM_INBOX
    }

    /// Offset (from a heap base) of the extension of team slot `slot`, if it has one: its
    /// ring extension, then (`RING_EXTRA` bytes on) its inbox extension.
    pub fn team_extension(&self, slot: usize) -> Option<usize> {
        (slot < self.max_teams.min(RING_TEAMS)).then(|| Self::extensions_start(self.max_teams) + slot * TEAM_EXTRA)
    }

    /// Offset of the team extensions: after every team's slot, staging and inbox.
    const fn extensions_start(max_teams: usize) -> usize {
        HEADER + max_teams * (TEAM_SLOT + TEAM_STAGE + TEAM_INBOX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn areas_do_not_overlap() {
        let l = SysLayout::new(4);
        assert_eq!(l.team_slot(0), HEADER);
        assert_eq!(l.team_stage(0), l.team_slot(3) + TEAM_SLOT);
        assert_eq!(l.team_inbox(0), l.team_stage(3) + TEAM_STAGE);
        assert_eq!(l.team_extension(0), Some(l.team_inbox(3) + TEAM_INBOX));
        assert_eq!(l.team_extension(4), None);
        assert!(l.team_extension(3).unwrap() + TEAM_EXTRA <= l.size);
        // Only the first RING_TEAMS slots have an extension.
        let big = SysLayout::new(RING_TEAMS + 3);
        assert!(big.team_extension(RING_TEAMS - 1).is_some() && big.team_extension(RING_TEAMS).is_none());
        assert!(big.team_extension(RING_TEAMS - 1).unwrap() + TEAM_EXTRA <= big.size);
        // A ring slot (at most TEAM_STAGE bytes) never straddles the staging area and the extension.
        const { assert!(RING_EXTRA.is_multiple_of(TEAM_STAGE)) };
        const { assert!(SLOT_CHECK + 2 * CHECK_BYTES <= SLOT_SPLIT) };
        const { assert!(SLOT_BARRIER + 64 * 8 <= SLOT_PROGRESS) };
        assert_eq!(
            (inbox_part(1), inbox_part(2), inbox_part(3), inbox_part(8), inbox_part(16), inbox_part(17)),
            (1024, 512, 320, 128, 64, 0)
        );
    }
}
