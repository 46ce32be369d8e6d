//! Pushed broadcast: the root writes the data into every member's inbox.
//!
//! For messages that fit one inbox slot (`heap/layout.rs`). The root writes the data and
//! then the slot's tag word into each member's heap, publishes its PROGRESS word (read
//! only by a member that watches for differing arguments) and returns. A member waits
//! on the tag in its own memory, so the data and its flag reach it in one cache-line
//! transfer for messages up to 56 bytes, and copies the data into its dest. The pulled
//! form ([direct](super::broadcast_direct)) costs a member two dependent reads of the
//! root's memory: its PROGRESS word, then its staging.
//!
//! Slot reuse: collective `seq` uses slot `seq % INBOX_SLOTS` of every member, and the
//! root writes a member's slot only once that member has finished the collective that
//! used it before ([`Session::claim_inbox`], which reads the member's CONSUMED word once
//! every few calls of a stream). The member's CONSUMED = DONE, stored as its call ends,
//! is its only word the root reads.

use super::session::Session;
use crate::error::Result;

pub(crate) fn run(s: &mut Session<'_>, dest: usize, src: usize, nbytes: usize, root: usize) -> Result<()> {
    let me = s.me();
    if me == root {
        s.publish(1)?;
        for i in (0..s.n()).filter(|&i| i != root) {
            s.claim_inbox(i)?;
            s.post_inbox(i, 0, src, nbytes)?;
        }
        return s.copy(me, dest, me, src, nbytes);
    }
    let data = s.wait_inbox(root, 0)?;
    s.copy(me, dest, me, data, nbytes)
}
