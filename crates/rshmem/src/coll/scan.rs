//! Direct sum scans: member `i` reads the sources of members `0..=i` (inclusive) or
//! `0..i` (exclusive) and adds them in team-rank order; it then waits until the members
//! after it, which read its source, have done so. In place, the result is kept aside
//! until then. Two synchronization steps; member `i` reads `i` or `i + 1` sources.

use super::combine::combine_pieces;
use super::session::Session;
use crate::error::Result;
use crate::types::{ReduceOp, ReduceType};

pub(crate) fn run<T: ReduceType>(s: &Session<'_>, dest: usize, src: usize, count: usize, exclusive: bool) -> Result<()> {
    let (me, n) = (s.me(), s.n());
    let sz = std::mem::size_of::<T>();
    s.publish(1)?;
    let upto = if exclusive { me } else { me + 1 };
    for i in (0..upto).filter(|&i| i != me) {
        s.wait_progress(i, 1)?;
    }
    let members: Vec<usize> = (0..upto).collect();
    let aside = dest == src && me + 1 < n;
    let mut result = if aside { vec![T::ZERO; count] } else { Vec::new() };
    combine_pieces::<T>(
        s,
        &members,
        |_| src,
        count,
        ReduceOp::Sum,
        |at, piece| {
            if aside {
                result[at..at + piece.len()].copy_from_slice(piece);
                Ok(())
            } else {
                s.put_mine(dest + at * sz, piece)
            }
        },
    )?;
    s.consumed(1)?;
    for i in me + 1..n {
        s.wait_consumed(i, 1)?;
    }
    if aside {
        s.put_mine(dest, &result)?;
    }
    Ok(())
}
