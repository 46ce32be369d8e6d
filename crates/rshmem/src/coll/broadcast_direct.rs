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
//! staging set, the root writes it into each member's staging set (this call's own) with
//! a tag in the member's inbox slot, one signalled put per member, and returns; members
//! wait on their own memory and copy. The root first makes sure every member finished
//! the set's previous user ([`Session::stage_set`]), two calls back in a stream: each
//! member tells the root it entered as it enters (its SEEN word in the root's slot, one
//! message, no wait), and the root waits for the word of the previous call, long under
//! way (after a call of another form, the root reads the member's CONSUMED word, a
//! round trip). The form below instead
//! waits for every member's message of the current call, two trips per call. Larger
//! messages go straight into the dests: each member tells the root it has entered (a tag
//! in the root's inbox, one message), the root writes the data into each member's dest
//! with its arrival count (one signalled put per member where it fits one), and members
//! wait on their own memory.

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
    if nbytes <= STAGE_SET {
        let set = s.own_set();
        // The root's tag in its own part of the inbox slot, the data in the whole set.
        let tag = s.inbox_slot() + s.inbox_part_of(root).0;
        let part = Part { tag, data: s.stage_set_offset(set), cap: STAGE_SET };
        let told_before = s.note_told(root);
        if me != root {
            s.note_stage_set(set);
            s.tell_entered(root)?;
            s.wait_tagged(root, part.tag)?;
            return s.copy(me, dest, me, part.data, nbytes);
        }
        s.publish(1)?;
        if told_before {
            // Each member told this PE its entry into the previous call: wait for that
            // word (one trip, long under way) rather than ask (two).
            let prev = s.seq - 1;
            for i in (0..s.n()).filter(|&i| i != root) {
                s.wait_seen(i, prev)?;
            }
        }
        s.stage_set(set)?;
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
