//! Layout of the runtime's own area at the start of every PE's heap.
//!
//! ```text
//! offset 0        header: wake sequence (u32), wake flag (u32, armed by sleepers), reserved to 4 KiB
//! offset 4096     team slots: max_teams x TEAM_SLOT bytes (barrier flags, scratch)
//! ```
//! Every PE uses the same layout, so a slot's offset names the same slot on all PEs.

use super::align_up;

/// Bytes per team slot.
pub const TEAM_SLOT: usize = 8192;
/// Bytes of the header.
pub const HEADER: usize = 4096;
/// Offset of the wake sequence word in the header.
pub const WAKE_SEQ: usize = 0;
/// Offset of the wake flag in the header (non-zero while a sleeper may need a wake).
pub const WAITERS: usize = 4;

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
        SysLayout { size: align_up(HEADER + max_teams * TEAM_SLOT, super::SEGMENT_ALIGN), max_teams }
    }

    /// Offset (from a heap base) of team slot `slot`.
    pub fn team_slot(&self, slot: usize) -> usize {
        assert!(slot < self.max_teams, "team slot {slot} out of range");
        HEADER + slot * TEAM_SLOT
    }
}
