//! The combining step every reduction shares: read the members' contributions a piece
//! at a time and fold them in a fixed order (see "Floating-point order" in [`super`]).

use super::session::Session;
use super::PIECE_BYTES;
use crate::error::Result;
use crate::types::{ReduceOp, ReduceType};

/// Combines `count` elements at heap offset `src_of(r)` of every member `r` of `members`,
/// in the order given, a piece (`PIECE_BYTES`) at a time; hands each combined piece to
/// `sink(index of its first element, piece)`. With no members the pieces are zeros.
pub(crate) fn combine_pieces<T: ReduceType>(
    s: &Session<'_>,
    members: &[usize],
    src_of: impl Fn(usize) -> usize,
    count: usize,
    op: ReduceOp,
    mut sink: impl FnMut(usize, &[T]) -> Result<()>,
) -> Result<()> {
    let sz = std::mem::size_of::<T>();
    let piece = (PIECE_BYTES / sz).max(1).min(count.max(1));
    let mut acc = vec![T::ZERO; piece];
    let mut tmp = vec![T::ZERO; piece];
    let mut start = 0;
    while start < count {
        let len = piece.min(count - start);
        let (a, b) = (&mut acc[..len], &mut tmp[..len]);
        match members.split_first() {
            None => a.fill(T::ZERO),
            Some((&first, rest)) => {
                s.get(first, src_of(first) + start * sz, a)?;
                for &r in rest {
                    s.get(r, src_of(r) + start * sz, b)?;
                    T::combine(op, a, b);
                }
            }
        }
        sink(start, a)?;
        start += len;
    }
    Ok(())
}
