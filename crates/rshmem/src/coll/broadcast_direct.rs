//! Direct broadcast: every member copies the root's data into its own dest.
//!
//! Up to one staging set (16 KiB) the root first copies its source into its staging
//! area, publishes, and returns at once (its readers are waited for lazily, when the set
//! is next reused). Larger messages are read straight from the root's source; the root
//! then waits until every member has finished reading (CONSUMED) before it returns, so
//! the source may be reused. One synchronization step for the members, none or one for
//! the root. A member's only word of the call besides its CONSUMED = DONE is its entry
//! word (the argument code, see `session.rs`), which it writes before waiting on the root.
//!
//! Over the network (members not mapped; teams of up to 16, which have an inbox part
//! each) reading the root costs round trips, so the data is pushed instead. Up to one
//! staging set (the whole staging area on the first team slots, whose ring also runs
//! over their ring extension: `heap/layout.rs`), the root writes it into a slot of each
//! member's staging area, used as a ring of slots of the message size rounded up to a
//! power of two (16 of them for 2 KiB, 64 with the extension), with its tag in the member's inbox slot, one signalled put per member, and returns;
//! members wait on their own memory and copy. Before it reuses a slot the root makes
//! sure every member finished the slot's last user; when it must ask (a member's
//! CONSUMED word, a round trip), it asks for the collective half a ring back, so a
//! stream asks once every half ring. (Members that told the root their entry on every
//! call, one message each, made the members the bottleneck: UCX tcp, 2 PEs, broadcast
//! 2 KiB 13-17 us that way, 8.5-12 with the ring.) Larger messages go straight into the
//! dests: each member tells the root it has entered (a tag in the root's inbox, one
//! message), the root writes the data into each member's dest with its arrival count
//! (one signalled put per member where it fits one), and members wait on their own
//! memory.

use super::session::{Part, Session};
use crate::error::Result;
use crate::heap::layout::{inbox_part, STAGE_SET};

pub(crate) fn run(s: &mut Session<'_>, dest: usize, src: usize, nbytes: usize, root: usize) -> Result<()> {
    let me = s.me();
    if !s.mapped() && inbox_part(s.n()) > 0 {
        return pushed(s, dest, src, nbytes, root);
    }
    let staged = nbytes <= STAGE_SET;
    let from = if staged {
        let set = s.own_set();
        if me == root {
            let stage = s.stage_set(set)?;
            s.copy(me, stage, me, src, nbytes)?;
            s.publish(1)?;
            s.copy(me, dest, me, src, nbytes)?;
            return Ok(());
        }
        // Every member knows where the root stages: the same set at the same offset.
        s.stage_set_offset(set)
    } else {
        src
    };
    if me == root {
        s.publish(1)?;
        s.copy(me, dest, me, src, nbytes)?;
        for i in (0..s.n()).filter(|&i| i != root) {
            s.wait_consumed(i, 1)?;
        }
        return Ok(());
    }
    s.wait_progress(root, 1)?;
    s.copy(me, dest, root, from, nbytes)?;
    // The CONSUMED = DONE this PE stores as it returns tells the root it has read.
    Ok(())
}

/// The network form (see the module documentation).
fn pushed(s: &mut Session<'_>, dest: usize, src: usize, nbytes: usize, root: usize) -> Result<()> {
    let me = s.me();
    if nbytes <= s.ring_slot_max() {
        // The root's tag in its own part of the inbox slot, the data in a slot of the
        // staging ring.
        let tag = s.inbox_slot() + s.inbox_part_of(root).0;
        if me != root {
            let data = s.stage_ring_slot(nbytes, false)?;
            s.wait_tagged(root, tag)?;
            return s.copy(me, dest, me, data, nbytes);
        }
        s.publish(1)?;
        let part = Part { tag, data: s.stage_ring_slot(nbytes, true)?, cap: nbytes };
        for i in (0..s.n()).filter(|&i| i != root) {
            s.claim_inbox(i)?;
            s.post_tagged(i, part, src, nbytes)?;
        }
        return s.copy(me, dest, me, src, nbytes);
    }
    if me != root {
        s.announce_entry_to(root)?;
        return s.wait_arrivals(1);
    }
    s.publish(1)?;
    for i in (0..s.n()).filter(|&i| i != root) {
        s.wait_entry(i)?;
        s.push_arrive(i, dest, src, nbytes)?;
    }
    s.copy(me, dest, me, src, nbytes)
}
