//! One-shot all-reduce: every member publishes its contribution and combines all `n`
//! contributions itself, in team-rank order.
//!
//! Up to one staging set (16 KiB) a member first copies its source into its staging area,
//! so it can return as soon as it has its result (its readers are waited for lazily, when
//! the set is next reused): one synchronization step. Larger contributions are read
//! straight from the members' sources, a piece at a time; a member then waits until
//! every member has read its source (CONSUMED) before returning (and, in place, before
//! writing its result over its source).
//!
//! Over the network (members not mapped, teams of up to 16) reading a member's staging
//! costs a round trip per piece, so contributions are pushed instead ([`pushed`]): once
//! every member has entered (announced through the inboxes, so every member's sets are
//! free), each member writes its contribution into its slot of every member's staging set
//! with its arrival count (one signalled put each), then combines its own source and the
//! other `n - 1` slots from its own memory, in team-rank order (the same bits as the
//! pulled form).
//!
//! Contributions that do not fit one staging set together go the same way in rounds:
//! each round pushes a piece of every contribution small enough for the `n - 1` pieces a
//! member receives to fit one set (its own piece it reads from its source), rounds using
//! the two sets in turn. No
//! round needs a wait of its own for space: a member pushes round `r + 1` (into the set
//! of round `r - 1`) only after every member's round-`r` push has reached it, and each
//! member sends that push only after it has combined round `r - 1`. Even and odd rounds
//! count their pushes on separate ARRIVE counters, since a member may receive a peer's
//! round `r + 1` before another peer's round `r`.

use super::combine::{combine_from, combine_pieces};
use super::session::{stage_part_index, Session};
use crate::error::Result;
use crate::heap::layout::{inbox_part, STAGE_SET};
use crate::types::{ReduceOp, ReduceType};

pub(crate) fn run<T: ReduceType>(s: &mut Session<'_>, dest: usize, src: usize, count: usize, op: ReduceOp) -> Result<()> {
    let (me, n) = (s.me(), s.n());
    let sz = std::mem::size_of::<T>();
    let nbytes = count * sz;
    if !s.mapped() && inbox_part(n) > 0 {
        return pushed::<T>(s, dest, src, count, op);
    }
    let members: Vec<usize> = (0..n).collect();
    if nbytes <= STAGE_SET {
        let set = s.own_set();
        let stage = s.stage_set(set)?;
        s.copy(me, stage, me, src, nbytes)?;
        s.publish(1)?;
        for i in (0..n).filter(|&i| i != me) {
            s.wait_progress(i, 1)?;
        }
        // Every contribution is read from the staging areas, so `dest` (even when it is
        // `source`) takes each combined piece as it is made.
        let s: &Session<'_> = s;
        combine_pieces::<T>(s, &members, |_| stage, count, op, |at, piece| s.put_mine(dest + at * sz, piece))?;
        return Ok(());
    }
    s.publish(1)?;
    for i in (0..n).filter(|&i| i != me) {
        s.wait_progress(i, 1)?;
    }
    let in_place = dest == src;
    let mut result = if in_place { vec![T::ZERO; count] } else { Vec::new() };
    {
        let s: &Session<'_> = s;
        combine_pieces::<T>(
            s,
            &members,
            |_| src,
            count,
            op,
            |at, piece| {
                if in_place {
                    result[at..at + piece.len()].copy_from_slice(piece);
                    Ok(())
                } else {
                    s.put_mine(dest + at * sz, piece)
                }
            },
        )?;
    }
    s.consumed(1)?;
    for i in (0..n).filter(|&i| i != me) {
        s.wait_consumed(i, 1)?;
    }
    if in_place {
        s.put_mine(dest, &result)?;
    }
    Ok(())
}

/// The network form (see the module documentation): one round where the other `n - 1`
/// contributions fit one staging set (this call's own set), else rounds through both sets
/// in turn.
fn pushed<T: ReduceType>(s: &mut Session<'_>, dest: usize, src: usize, count: usize, op: ReduceOp) -> Result<()> {
    let (me, n) = (s.me(), s.n());
    let sz = std::mem::size_of::<T>();
    s.enter_all()?;
    // A member receives the other n - 1 pieces of a round (its own is read from its
    // source): n - 1 slots per set, so 2 PEs move a whole set per round.
    let per = (STAGE_SET / ((n - 1) * sz)).max(1);
    let rounds = count.div_ceil(per).max(1);
    // Every member has entered, so has finished every earlier call: the sets are free on
    // all of them (acquiring them here only records this call as their last user).
    let stage = if rounds == 1 { s.stage_set(s.own_set())? } else { s.stage_all()? };
    for r in 0..rounds {
        let (lo, parity) = (r * per, r % 2);
        let len = per.min(count - lo);
        // Member `to`'s slot for the piece of member `from` (`to` has none of its own).
        let slot = |from: usize, to: usize| stage + parity * STAGE_SET + stage_part_index(from, to, n) * per * sz;
        for d in 1..n {
            let to = (me + d) % n;
            s.push_arrive_on(to, slot(me, to), src + lo * sz, len * sz, parity)?;
        }
        s.wait_arrivals_on(parity, n as u64 - 1)?;
        // This PE's own piece is read from its source: in place, the result of a round
        // lands on source elements no later round reads.
        let sources: Vec<(usize, usize)> = (0..n).map(|i| (me, if i == me { src + lo * sz } else { slot(i, me) })).collect();
        let s: &Session<'_> = s;
        combine_from::<T>(s, &sources, len, op, |at, piece| s.put_mine(dest + (lo + at) * sz, piece))?;
    }
    Ok(())
}
