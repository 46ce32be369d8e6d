//! Pushed fcollect: every member writes its block into its part of every member's inbox.
//!
//! For blocks that fit a member's part of an inbox slot (`heap/layout.rs`,
//! [`crate::heap::layout::inbox_part`]) or, over a network, of a staging set
//! ([`Session::push_mailbox`]). Each PE writes its block and the part's tag word
//! into every other member's heap, then waits for the other `n - 1` parts in its own
//! memory and copies them into its dest: one cache-line transfer per block for blocks
//! up to 56 bytes, and no flag exchange before the data moves (the direct gather first
//! waits for every member's entry, then for every member's arrival count). The caller
//! has published this PE's PROGRESS word, which members watch while they wait.

use super::session::Session;
use crate::error::Result;

pub(crate) fn run(s: &mut Session<'_>, dest: usize, src: usize, nbytes: usize) -> Result<()> {
    let (me, n) = (s.me(), s.n());
    let mb = s.push_mailbox(nbytes)?;
    s.post_part_to_others(mb, src, nbytes)?;
    s.copy(me, dest + me * nbytes, me, src, nbytes)?;
    // The member that posted first (the left neighbour, who began with this PE) first.
    for d in 1..n {
        let j = (me + n - d) % n;
        let data = s.wait_part(mb, j)?;
        s.copy(me, dest + j * nbytes, me, data, nbytes)?;
    }
    Ok(())
}
