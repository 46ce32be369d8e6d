//! The combining step every reduction shares: read the members' contributions a piece
//! at a time and fold them in a fixed order (see "Floating-point order" in [`super`]).

use super::session::Session;
use super::PIECE_BYTES;
use crate::error::Result;
use crate::types::{ReduceOp, ReduceType};

/// Largest combining piece (in 8-byte words) kept on the stack.
const STACK_WORDS: usize = 16;

/// Combines `count` elements at heap offset `src_of(r)` of every member `r` of `members`,
/// in the order given, a piece (`PIECE_BYTES`) at a time; hands each combined piece to
/// `sink(index of its first element, piece)`. With no members the pieces are zeros.
pub(crate) fn combine_pieces<T: ReduceType>(
    s: &Session<'_>,
    members: &[usize],
    src_of: impl Fn(usize) -> usize,
    count: usize,
    op: ReduceOp,
    sink: impl FnMut(usize, &[T]) -> Result<()>,
) -> Result<()> {
    let sources: Vec<(usize, usize)> = members.iter().map(|&r| (r, src_of(r))).collect();
    combine_from::<T>(s, &sources, count, op, sink)
}

/// [`combine_pieces`] over `(member, heap offset)` pairs, in the order given: the
/// contributions may lie anywhere (several in one member's heap, as in its inbox).
pub(crate) fn combine_from<T: ReduceType>(
    s: &Session<'_>,
    sources: &[(usize, usize)],
    count: usize,
    op: ReduceOp,
    mut sink: impl FnMut(usize, &[T]) -> Result<()>,
) -> Result<()> {
    let sz = std::mem::size_of::<T>();
    let piece = (PIECE_BYTES / sz).max(1).min(count.max(1));
    // Small reductions (the pushed form's contributions fit an inbox part) combine in two
    // buffers on the stack: two heap allocations cost a tenth of an 8-byte all-reduce.
    let (mut acc_words, mut tmp_words) = ([0u64; STACK_WORDS], [0u64; STACK_WORDS]);
    let (mut acc_heap, mut tmp_heap) = (Vec::new(), Vec::new());
    let (acc, tmp): (&mut [T], &mut [T]) = if piece * sz <= STACK_WORDS * 8 {
        (&mut bytemuck::cast_slice_mut(&mut acc_words)[..piece], &mut bytemuck::cast_slice_mut(&mut tmp_words)[..piece])
    } else {
        acc_heap.resize(piece, T::ZERO);
        tmp_heap.resize(piece, T::ZERO);
        (&mut acc_heap, &mut tmp_heap)
    };
    let mut start = 0;
    while start < count {
        let len = piece.min(count - start);
        let (a, b) = (&mut acc[..len], &mut tmp[..len]);
        match sources.split_first() {
            None => a.fill(T::ZERO),
            Some((&(first, off), rest)) => {
                s.get(first, off + start * sz, a)?;
                for &(r, off) in rest {
                    s.get(r, off + start * sz, b)?;
                    T::combine(op, a, b);
                }
            }
        }
        sink(start, a)?;
        start += len;
    }
    Ok(())
}
