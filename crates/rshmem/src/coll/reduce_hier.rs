//! Hierarchical all-reduce for teams that span hosts ([`super::hosts`]).
//!
//! 1. Every member publishes its source (step 1).
//! 2. Each host's leader combines its host's contributions, in team-rank order, into its
//!    own dest (the host partial) and publishes it (step 2). Shared memory only.
//! 3. Each leader reads every leader's partial, host by host (one-shot among leaders,
//!    over the network), combines them in host order into a local buffer, waits until
//!    the other leaders have read its partial, writes the result into its dest and
//!    publishes it (step 3).
//! 4. The other members of a host copy the result from their leader's dest; the leader
//!    returns once they have (CONSUMED 3).
//!
//! Each leader receives `hosts - 1` partials over the network, instead of `n - 1`
//! contributions; members never touch the network.
//!
//! Order: `((P0 op P1) op P2) ...` over hosts in the order of their first member, where
//! `Pg = ((x_a op x_b) op x_c) ...` over host `g`'s members in team-rank order. For
//! integer operators and MIN/MAX this equals one-shot's rank-order result; so do float
//! SUM and PROD where the orders coincide (the first host holds ranks `0..k` and every
//! other host one member), otherwise they may differ from it in the last bits (2 hosts
//! of 2: `(x0+x1)+(x2+x3)` instead of `((x0+x1)+x2)+x3`). Every member gets the same
//! bits, and reruns too.

use super::combine::combine_pieces;
use super::session::Session;
use crate::error::Result;
use crate::runtime::hosts::HostGroups;
use crate::types::{ReduceOp, ReduceType};

pub(crate) fn run<T: ReduceType>(
    s: &mut Session<'_>,
    hosts: &HostGroups,
    dest: usize,
    src: usize,
    count: usize,
    op: ReduceOp,
) -> Result<()> {
    let me = s.me();
    let sz = std::mem::size_of::<T>();
    let group = &hosts.groups[hosts.group_of[me]];
    let leader = group[0];
    s.publish(1)?;
    if me != leader {
        s.wait_progress(leader, 3)?;
        s.copy(me, dest, leader, dest, count * sz)?;
        s.consumed(3)?;
        return Ok(());
    }
    for &i in &group[1..] {
        s.wait_progress(i, 1)?;
    }
    {
        // In place is safe: each piece of dest is written after every member's piece
        // (this PE's source included) was read.
        let s: &Session<'_> = s;
        combine_pieces::<T>(s, group, |_| src, count, op, |at, piece| s.put_mine(dest + at * sz, piece))?;
    }
    s.publish(2)?;
    let leaders = hosts.leaders();
    if leaders.len() > 1 {
        for &l in leaders.iter().filter(|&&l| l != me) {
            s.wait_progress(l, 2)?;
        }
        let mut result = vec![T::ZERO; count];
        combine_pieces::<T>(
            s,
            &leaders,
            |_| dest,
            count,
            op,
            |at, piece| {
                result[at..at + piece.len()].copy_from_slice(piece);
                Ok(())
            },
        )?;
        s.consumed(2)?;
        for &l in leaders.iter().filter(|&&l| l != me) {
            s.wait_consumed(l, 2)?;
        }
        s.put_mine(dest, &result)?;
    }
    s.publish(3)?;
    for &i in &group[1..] {
        s.wait_consumed(i, 3)?;
    }
    Ok(())
}
