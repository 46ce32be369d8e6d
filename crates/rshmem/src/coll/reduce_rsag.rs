//! Reduce-scatter + all-gather all-reduce: member `k` reduces chunk `k`
//! ([`super::chunk_range`]) of every member's source, in team-rank order, into its own
//! dest, then writes that chunk into every other member's dest and adds one to their
//! ARRIVE counters; it returns once the other `n - 1` chunks have arrived.
//!
//! Two synchronization steps; every member reads and writes about `2 * nbytes` instead
//! of the one-shot's `n * nbytes`. In place is safe: member `k` writes chunk `k` of a
//! peer's dest (= its source) only after it finished reading that chunk itself, and no
//! one else reads it; a member's source is fully read when all `n - 1` chunks arrived,
//! since each member sends its chunk only after reading.

use super::chunk_range;
use super::combine::combine_pieces;
use super::session::Session;
use crate::error::Result;
use crate::types::{ReduceOp, ReduceType};

pub(crate) fn run<T: ReduceType>(s: &mut Session<'_>, dest: usize, src: usize, count: usize, op: ReduceOp) -> Result<()> {
    let (me, n) = (s.me(), s.n());
    let sz = std::mem::size_of::<T>();
    s.publish(1)?;
    for i in (0..n).filter(|&i| i != me) {
        s.wait_progress(i, 1)?;
    }
    let mine = chunk_range(count, n, me);
    let (at, len) = (mine.start * sz, mine.len() * sz);
    let members: Vec<usize> = (0..n).collect();
    {
        let s: &Session<'_> = s;
        combine_pieces::<T>(s, &members, |_| src + at, mine.len(), op, |i, piece| s.put_mine(dest + at + i * sz, piece))?;
    }
    for d in 1..n {
        let j = (me + d) % n;
        s.copy(j, dest + at, me, dest + at, len)?;
        s.fence(j)?;
        s.arrive(j)?;
    }
    s.wait_arrivals(n as u64 - 1)
}
