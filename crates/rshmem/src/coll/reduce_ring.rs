//! Ring reduce-scatter and ring all-reduce (ring reduce-scatter, then ring all-gather).
//!
//! The contribution is cut into `n` chunks (all-reduce: [`super::chunk_range`];
//! reduce-scatter: the `n` blocks); chunk `k` ends, fully reduced, at member `k`.
//! Reduce-scatter step `t = 1 .. n-1`: member `i` takes the left neighbour's partial
//! result for chunk `k = (i - 1 - t) mod n` (at `t = 1` the left neighbour's own source
//! chunk), combines its own source chunk into it (`partial op mine`) and publishes the new
//! partial in its staging area; at `t = n - 1` the result is chunk `i` itself and goes to
//! its dest. So chunk `k` is combined in ring order `x(k+1), x(k+2), ..., x(k)`.
//!
//! Chunks move in pieces of one staging set (16 KiB), piece-major: a member runs piece
//! 0 of every step, then piece 1 of every step, and so on (unit `u = p * (n-1) + t-1`),
//! so its right neighbour consumes each partial piece one unit after it was produced.
//! Partials go to the two staging sets alternately; a member writes its `w`-th partial
//! once the right neighbour has read its `(w-2)`-th (the neighbour's CONSUMED word), so
//! staging stays bounded whatever the message size. Every wait points to a smaller unit
//! (data: the left neighbour's previous unit; space: the right neighbour's), so the
//! ring cannot deadlock.
//!
//! All-gather step `t = 1 .. n-1` (all-reduce only): member `i` copies the left
//! neighbour's final chunk `(i - t) mod n` from the neighbour's dest into its own dest.
//! A member returns once its right neighbour, the only one reading its memory, has
//! finished. 2(n - 1) steps; each member moves about `2 * nbytes`.

use super::chunk_range;
use super::session::{Session, DONE};
use crate::error::{Error, Result};
use crate::heap::layout::STAGE_SET;
use crate::types::{ReduceOp, ReduceType};
use std::ops::Range;

/// Where the reduce-scatter phase ended: the PROGRESS step a member publishes when done,
/// and the step at which it finished step 1 (after which it no longer reads its left
/// neighbour's source).
struct RsEnd {
    done: u64,
    step1_done: u64,
}

fn ring_reduce_scatter<T: ReduceType>(
    s: &mut Session<'_>,
    src: usize,
    chunk: impl Fn(usize) -> Range<usize>,
    final_dest: usize,
    op: ReduceOp,
) -> Result<RsEnd> {
    let (me, n) = (s.me(), s.n());
    let sz = std::mem::size_of::<T>();
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    let piece = (STAGE_SET / sz).max(1);
    let longest = (0..n).map(|k| chunk(k).len()).max().unwrap_or(0);
    let npieces = longest.div_ceil(piece).max(1);
    let steps = n - 1;
    let units = npieces * steps;
    if units as u64 + n as u64 + 2 >= DONE {
        return Err(Error::Unsupported {
            call: s.call,
            detail: format!("a ring over {n} PEs of {longest} elements per chunk has too many steps"),
        });
    }
    let stage = s.stage_all()?;
    // The w-th partial (counting only staged ones) lives in set w mod 2.
    let partial = |p: usize, t: usize| p * (steps - 1) + (t - 1);
    let slot = |w: usize| stage + (w % 2) * STAGE_SET;
    s.publish(1)?;
    let mut acc = vec![T::ZERO; piece.min(longest.max(1))];
    let mut mine = acc.clone();
    for p in 0..npieces {
        for t in 1..n {
            let u = p * steps + (t - 1);
            let range = chunk((me + 2 * n - 1 - t) % n);
            let lo = (p * piece).min(range.len());
            let hi = ((p + 1) * piece).min(range.len());
            let (a, b) = (&mut acc[..hi - lo], &mut mine[..hi - lo]);
            if t == 1 {
                // The left neighbour's own contribution: its source.
                s.wait_progress(left, 1)?;
                s.get(left, src + (range.start + lo) * sz, a)?;
            } else {
                let w = partial(p, t - 1);
                s.wait_progress(left, 2 + (u - 1) as u64)?;
                s.get(left, slot(w), a)?;
                s.consumed(w as u64 + 1)?;
            }
            s.get(me, src + (range.start + lo) * sz, b)?;
            T::combine(op, a, b);
            if t == steps {
                s.put_mine(final_dest + lo * sz, a)?;
            } else {
                let w = partial(p, t);
                if w >= 2 {
                    s.wait_consumed(right, (w - 2) as u64 + 1)?;
                }
                s.put_mine(slot(w), a)?;
            }
            s.publish(2 + u as u64)?;
        }
    }
    // The right neighbour reads this PE's source in its step-1 units, the last of which
    // is unit (npieces - 1) * steps.
    Ok(RsEnd { done: 1 + units as u64, step1_done: 2 + ((npieces - 1) * steps) as u64 })
}

/// Ring all-reduce of `count` elements.
pub(crate) fn allreduce<T: ReduceType>(s: &mut Session<'_>, dest: usize, src: usize, count: usize, op: ReduceOp) -> Result<()> {
    let (me, n) = (s.me(), s.n());
    let sz = std::mem::size_of::<T>();
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    let chunk = |k: usize| chunk_range(count, n, k);
    let end = ring_reduce_scatter::<T>(s, src, chunk, dest + chunk(me).start * sz, op)?;
    if dest == src {
        // The all-gather overwrites source chunk (me - 1), which the right neighbour reads
        // in its step 1.
        s.wait_progress(right, end.step1_done)?;
    }
    for t in 1..n {
        let r = chunk((me + n - t) % n);
        s.wait_progress(left, end.done + t as u64 - 1)?;
        s.copy(me, dest + r.start * sz, left, dest + r.start * sz, r.len() * sz)?;
        s.publish(end.done + t as u64)?;
    }
    s.wait_progress(right, end.done + n as u64 - 1)
}

/// Ring reduce-scatter of blocks of `count` elements.
pub(crate) fn reduce_scatter<T: ReduceType>(s: &mut Session<'_>, dest: usize, src: usize, count: usize, op: ReduceOp) -> Result<()> {
    let right = (s.me() + 1) % s.n();
    let end = ring_reduce_scatter::<T>(s, src, |k| k * count..(k + 1) * count, dest, op)?;
    s.wait_progress(right, end.done)
}
