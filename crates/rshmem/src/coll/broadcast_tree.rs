//! Binomial-tree broadcast, pipelined in chunks.
//!
//! Members are renumbered so that the root is 0 (`v = (me - root) mod n`). Member `v > 0`
//! copies from its parent `v - 2^floor(log2 v)` (the parent's dest; the root's source),
//! chunk by chunk (64 KiB), publishing each chunk as it lands so its own children can
//! follow one chunk behind. A member returns once its children (`v + 2^k` for every
//! `2^k > v`) have read everything from it. Depth `ceil(log2 n)`; the root serves at most
//! `ceil(log2 n)` readers instead of `n - 1`.

use super::session::{Session, DONE};
use crate::error::Result;

/// Bytes per pipelined chunk.
const CHUNK: usize = 64 << 10;

pub(crate) fn run(s: &mut Session<'_>, dest: usize, src: usize, nbytes: usize, root: usize) -> Result<()> {
    let (me, n) = (s.me(), s.n());
    let chunk = CHUNK.max(nbytes.div_ceil(DONE as usize - 2));
    let nchunks = nbytes.div_ceil(chunk);
    let v = (me + n - root) % n;
    let member = |vr: usize| (vr + root) % n;
    if v == 0 {
        s.publish(nchunks as u64)?;
        s.copy(me, dest, me, src, nbytes)?;
    } else {
        let pv = v - (1 << v.ilog2());
        let parent = member(pv);
        let from = if pv == 0 { src } else { dest };
        for k in 0..nchunks {
            let at = k * chunk;
            let len = chunk.min(nbytes - at);
            s.wait_progress(parent, k as u64 + 1)?;
            s.copy(me, dest + at, parent, from + at, len)?;
            s.publish(k as u64 + 1)?;
        }
        s.consumed(1)?;
    }
    let mut bit = if v == 0 { 1 } else { 1usize << (v.ilog2() + 1) };
    while v + bit < n {
        s.wait_consumed(member(v + bit), 1)?;
        bit <<= 1;
    }
    Ok(())
}
