//! Pushed all-reduce: every member writes its contribution into its part of every
//! member's inbox, and each combines all `n` contributions from its own memory, in
//! team-rank order (the same bits as one-shot's).
//!
//! For contributions that fit a member's part of an inbox slot (`heap/layout.rs`), or,
//! over a network, of a staging set ([`Session::push_mailbox`]). One cache-line transfer
//! per contribution up to 56 bytes and no flag exchange: the one-shot form reads each
//! member's PROGRESS word, then its staging (over a network it first waits for every
//! member's entry). Nothing to wait for afterwards: the source was copied into the
//! members' memory before the call returns, and `dest` (even when it is the source) is
//! written only after all is read.

use super::combine::combine_from;
use super::session::Session;
use crate::error::Result;
use crate::types::{ReduceOp, ReduceType};

pub(crate) fn run<T: ReduceType>(s: &mut Session<'_>, dest: usize, src: usize, count: usize, op: ReduceOp) -> Result<()> {
    let (me, n) = (s.me(), s.n());
    let sz = std::mem::size_of::<T>();
    let nbytes = count * sz;
    // Published for members that watch for differing arguments while they wait.
    s.publish(1)?;
    let mb = s.push_mailbox(nbytes)?;
    s.post_part_to_others(mb, src, nbytes)?;
    let mut sources = vec![(me, src); n];
    for d in 1..n {
        let j = (me + n - d) % n;
        sources[j] = (me, s.wait_part(mb, j)?);
    }
    let s: &Session<'_> = s;
    // Every contribution but this PE's own is read from its own memory, so `dest` (even
    // when it is the source) may take each combined piece as it is made.
    combine_from::<T>(s, &sources, count, op, |i, piece| s.put_mine(dest + i * sz, piece))
}
