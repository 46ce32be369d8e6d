//! Direct reduce-scatter: member `k` reads block `k` of every member's source and
//! combines the blocks in team-rank order into its dest; it then waits until every
//! member has read its own source (CONSUMED) before returning. Two synchronization steps.

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
    let members: Vec<usize> = (0..n).collect();
    {
        let s: &Session<'_> = s;
        combine_pieces::<T>(s, &members, |_| src + me * count * sz, count, op, |i, piece| s.put_mine(dest + i * sz, piece))?;
    }
    s.consumed(1)?;
    for i in (0..n).filter(|&i| i != me) {
        s.wait_consumed(i, 1)?;
    }
    Ok(())
}
