//! Collectives, built on the transport's put/get/copy/atomics. Each algorithm lives in
//! its own file; [`select`] (the decision tree) picks among them.
//!
//! | collective | algorithms (file) |
//! |---|---|
//! | barrier, sync | dissemination with radix k, hierarchical ([`barrier`]) |
//! | broadcast | pushed into inboxes (`broadcast_push.rs`), direct (`broadcast_direct.rs`), binomial tree (`broadcast_tree.rs`), hierarchical (`broadcast_hier.rs`) |
//! | fcollect, collect | direct one-shot writes (`gather_direct.rs`), ring (`gather_ring.rs`), hierarchical (`gather_hier.rs`), pushed into inboxes (`gather_push.rs`, fcollect) |
//! | alltoall, alltoalls | direct (`alltoall.rs`) |
//! | reduce (all-reduce) | pushed into inboxes (`reduce_push.rs`), one-shot (`reduce_oneshot.rs`), reduce-scatter + all-gather (`reduce_rsag.rs`), ring (`reduce_ring.rs`), hierarchical (`reduce_hier.rs`) |
//! | reduce_scatter | direct (`reduce_scatter_direct.rs`), ring (`reduce_ring.rs`) |
//! | sum_inscan, sum_exscan | direct (`scan.rs`) |
//!
//! # Synchronization
//!
//! Each team has a slot of words in every member's runtime area and a staging area (see
//! [`crate::heap::layout`]); the library manages both, so several teams run collectives
//! at the same time without interfering. Each member numbers the collectives it calls on
//! a team (the *sequence*; members call them in the same order, so numbers agree). A PE
//! publishes progress in its own PROGRESS word as a tag word: sequence, the PE's argument
//! code (see "Argument check" below) and step (layout in `session.rs`). A collective's
//! PROGRESS word is one of four, by sequence mod 4, so a reader finds the writer's word of
//! the collective it waits in even when the writer already left it. Values of one
//! collective only grow, so a wait is "until the word is at least this", never needs a
//! reset, and a later collective's value satisfies an earlier wait (CONSUMED is one word
//! for all collectives). The rules every algorithm keeps:
//!
//! 1. A PE reads a peer's buffer only after the peer published it (PROGRESS), and writes a
//!    peer's buffer only after the peer entered the collective (so the peer's dest is
//!    ready and its previous collective on the team is over).
//! 2. A PE that published its user buffers (source or dest) does not return while a peer
//!    may still read them: it waits for the readers (their CONSUMED word, or the pushes
//!    they send after reading).
//! 3. Data published in the *staging* area (small broadcasts and all-reduces, ring
//!    partial sums) lets a PE return without waiting for its readers; before it
//!    overwrites a staging set it waits until every member finished the collective that
//!    last published it (each member stores CONSUMED = DONE when a collective ends). Two
//!    sets, used alternately by sequence number, make that wait rare.
//! 4. Pushes count in the target's ARRIVE counter; the target knows how many to expect,
//!    and a peer pushes only after the target entered the collective, so counts from
//!    consecutive collectives never mix.
//! 5. A member's *inbox* (small pushed broadcasts, fcollects and all-reduces) is the one
//!    buffer a peer writes before the member entered the collective: collective `seq`
//!    writes inbox slot `seq % INBOX_SLOTS` (the root all of it, or each member its own
//!    part), and a sender writes it only after the member finished the collective that
//!    used that slot before (its CONSUMED word). Each part's tag word, written after the
//!    data, carries the sender's code and sequence.
//!
//! So a team runs collectives back to back with no barrier in between, a PE's dest is
//! never written before it enters the call, and its source may be reused as soon as the
//! call returns. Every wait goes through [`crate::transport::notify::wait_until`]: spin
//! briefly, then sleep on the futex of the heap that holds the word, which every store
//! into that heap wakes. A PE that dies mid-collective leaves its peers asleep until the
//! launcher ends them (and `RSHMEM_WAIT_WARN` names what they wait for).
//!
//! # Argument check
//!
//! Always on: every tag word a PE writes in a collective (PROGRESS, CONSUMED, the ring's
//! STEP_IN) carries its *argument code*, a residue mod 251 of the call's kind, sizes,
//! root, type, operator, symmetric offsets and algorithm (or a marker: the PE rejected
//! its own arguments, or it failed the call). Every wait on a peer's word of the current
//! collective compares the peer's code with its own, so the check adds no load, store or
//! round trip to the algorithms: it reads only what they read anyway. A PE that waits
//! before it has published anything publishes an entry word first (the broadcast's
//! non-roots, whose only other word is CONSUMED = DONE, in place of their CONSUMED 1), so
//! that PEs waiting on each other under differing arguments find out instead of hanging.
//! On a mismatch the PE fails the call: it writes its argument record into its team slot
//! and marks its words FAILED, so every PE that waits on it, directly or through others,
//! fails too rather than waits forever or reads data published under other arguments.
//! It then reads the records of the PEs involved (waiting, at most 2 s, for the differing
//! PE to finish the call) and returns [`crate::Error::CollectiveMismatch`] naming the
//! call, the differing PE and itself, and the argument with both values when the
//! differing PE failed too (it then wrote its record); otherwise it names the PEs and
//! lists its own arguments. Data only ever moves between PEs whose codes agree.
//!
//! What the code cannot see: calls that differ in several arguments collide with chance
//! 1/251 (a single argument that differs always changes the code unless it differs by a
//! multiple of 251); a PE that reads from and waits for no one of differing arguments
//! cannot notice them. The one such PE in the algorithms is the root of a staged direct
//! or pushed broadcast (up to 16 KiB on mapped peers): it publishes and returns. (A
//! member of a pushed broadcast, which waits on its own inbox, also watches the root's
//! PROGRESS word, so a root that posts nothing under other arguments is found.) So when PEs name
//! different roots, the PEs that read from a PE of other arguments fail, but a PE that
//! names itself root while no one reads from it returns its own source unchecked (every
//! PE naming itself root: nobody fails).
//!
//! With `RSHMEM_COLL_CHECK=1` (the default in debug builds) each collective also starts by
//! publishing its record (kind, sizes, root, type, operator, symmetric offsets, algorithm,
//! and whether the PE's own arguments were valid) in its team slot; every member compares
//! all records with member 0's and every member returns the same
//! [`crate::Error::CollectiveMismatch`] naming the PE that differs, before any data moves.
//! Differing arguments the code misses are undefined behaviour of the program (never
//! memory unsafety: every range a PE touches was checked on that PE).
//!
//! # Floating-point order
//!
//! Reductions combine contributions element by element in a fixed order, so every PE
//! gets bit-identical results and reruns give the same bits:
//! * one-shot, reduce-scatter + all-gather, direct reduce_scatter and the scans combine in
//!   team-rank order, `((x0 op x1) op x2) ... op x(n-1)`; their results are identical to
//!   each other.
//! * ring (all-reduce and reduce_scatter) combines chunk `k` (see [`chunk_range`]; for
//!   reduce_scatter, block `k`) in ring order starting after its owner:
//!   `((x(k+1) op x(k+2)) ... op x(k))`, indices mod n. For integer operators and
//!   MIN/MAX the result equals the others'; float SUM and PROD may differ in the last
//!   bits from the rank-order algorithms.
//! * hierarchical all-reduce (teams spanning hosts) combines each host's members in
//!   team-rank order, then the host partials in host order (hosts ordered by their first
//!   member): `(P0 op P1) op ...`. For integer operators and MIN/MAX the result equals
//!   one-shot's; float SUM and PROD equal it where the two orders coincide (the first
//!   host holds team ranks `0..k` and every other host one member, e.g. one member per
//!   host) and may otherwise differ in the last bits (see `reduce_hier.rs`). All members
//!   get the same bits.
//!
//! # Teams that span hosts
//!
//! Members are grouped by host ([`hosts`]); the hierarchical algorithms work on shared
//! memory within a host first, and only each host's leader talks across hosts.

pub(crate) mod alltoall;
pub(crate) mod barrier;
pub(crate) mod broadcast;
pub(crate) mod broadcast_direct;
pub(crate) mod broadcast_hier;
pub(crate) mod broadcast_push;
pub(crate) mod broadcast_tree;
pub(crate) mod combine;
pub(crate) mod gather;
pub(crate) mod gather_direct;
pub(crate) mod gather_hier;
pub(crate) mod gather_push;
pub(crate) mod gather_ring;
#[cfg(feature = "cuda")]
pub mod gpu;
#[cfg(feature = "cuda")]
pub mod gpu_select;
pub(crate) mod reduce;
pub(crate) mod reduce_hier;
pub(crate) mod reduce_oneshot;
pub(crate) mod reduce_push;
pub(crate) mod reduce_ring;
pub(crate) mod reduce_rsag;
pub(crate) mod reduce_scatter_direct;
pub(crate) mod scan;
pub mod select;
pub(crate) mod session;

use crate::error::{Error, Result};
use crate::runtime::Runtime;
use std::ops::Range;

pub use select::{BarrierAlgo, BroadcastAlgo, Forced, GatherAlgo, Plan, ReduceAlgo, ReduceScatterAlgo};

/// Bytes reductions read from a peer at a time (into a local buffer, then combined).
pub(crate) const PIECE_BYTES: usize = crate::heap::layout::STAGE_SET;

/// The elements of chunk `k` when `nelems` elements are split among `n` PEs: the first
/// `nelems % n` chunks have one element more than the others. The reduce-scatter +
/// all-gather and ring all-reduces give chunk `k` to team member `k`.
pub fn chunk_range(nelems: usize, n: usize, k: usize) -> Range<usize> {
    let (q, r) = (nelems / n, nelems % n);
    let start = k * q + k.min(r);
    start..start + q + usize::from(k < r)
}

/// Checks that `[addr, addr + len)` is symmetric memory of this PE and returns its heap
/// offset. Zero-length ranges are not checked (C callers may pass NULL) and get offset
/// `u64::MAX as usize` when outside the heap.
pub(crate) fn sym_range(rt: &Runtime, call: &'static str, arg: &'static str, addr: usize, len: usize) -> Result<usize> {
    if len == 0 {
        return Ok(rt.heap.offset_of(addr).unwrap_or(u64::MAX as usize));
    }
    rt.heap.check_range(call, arg, addr, len, rt.my_pe)
}

/// How two byte ranges relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overlap {
    /// No byte in common (or one is empty).
    Disjoint,
    /// The same start (an in-place call).
    Same,
    /// Partly overlapping.
    Partial,
}

pub(crate) fn overlap(a: usize, alen: usize, b: usize, blen: usize) -> Overlap {
    if alen == 0 || blen == 0 || a + alen <= b || b + blen <= a {
        Overlap::Disjoint
    } else if a == b && alen == blen {
        Overlap::Same
    } else {
        Overlap::Partial
    }
}

/// The error for dest and source that overlap in a way the call does not allow.
pub(crate) fn overlap_error(call: &'static str, detail: &str, pe: usize) -> Error {
    Error::InvalidArgument { call, arg: "dest", detail: detail.to_string(), pe }
}

/// `count * size` in bytes, or an error naming `arg`.
pub(crate) fn bytes_of(call: &'static str, arg: &'static str, count: usize, size: usize, pe: usize) -> Result<usize> {
    count.checked_mul(size).ok_or_else(|| Error::InvalidArgument { call, arg, detail: format!("{count} elements overflow"), pe })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_everything_once() {
        for nelems in [0, 1, 5, 7, 64, 1001] {
            for n in 1..9 {
                let mut next = 0;
                for k in 0..n {
                    let r = chunk_range(nelems, n, k);
                    assert_eq!(r.start, next);
                    assert!(r.len() == nelems / n || r.len() == nelems / n + 1);
                    next = r.end;
                }
                assert_eq!(next, nelems);
            }
        }
    }

    #[test]
    fn overlaps() {
        assert_eq!(overlap(0, 8, 8, 8), Overlap::Disjoint);
        assert_eq!(overlap(0, 8, 0, 8), Overlap::Same);
        assert_eq!(overlap(0, 8, 4, 8), Overlap::Partial);
        assert_eq!(overlap(0, 16, 0, 8), Overlap::Partial);
        assert_eq!(overlap(0, 0, 0, 8), Overlap::Disjoint);
    }
}
