//! The decision tree: which algorithm a collective uses, and `RSHMEM_COLL_ALGO`.
//!
//! Inputs: the message size in bytes (per PE: what one PE contributes; for collect, the
//! total gathered, which every PE knows after the size exchange), the team size, whether
//! every member's heap is directly mapped (`Transport::direct_address`; on one host with
//! CPU PEs it always is), and whether the team spans hosts (`hier`: members on several
//! hosts and more than one member on some host; see [`super::hosts`]). Every PE of a team
//! computes the same answer from the same inputs, so no agreement step is needed.
//!
//! ```text
//! barrier        hier .................................... hier (fan-in to each host's leader,
//!                                                          dissemination among leaders, fan-out)
//!                mapped and n <= FLAT_BARRIER_MAX ........ dissemination, radix n (one round)
//!                mapped .................................. dissemination, radix 4
//!                otherwise ............................... dissemination, radix 2
//! broadcast      hier .................................... hier (leaders read the root, members
//!                                                          read their leader)
//!                bytes <= 1016 B and
//!                (n - 1) x slot lines <= 8 KiB ........... push (the root writes every member's
//!                                                          inbox; members wait on their own memory)
//!                mapped and (n <= 8 or bytes <= 64 KiB) .. direct (every PE reads the root)
//!                n <= 8 and bytes <= 1 MiB ............... direct over the network too (up to
//!                                                          16 KiB the root writes a slot of the
//!                                                          members' staging rings; larger:
//!                                                          members announce their entry, the
//!                                                          root writes every dest)
//!                otherwise ............................... tree (binomial, 64 KiB chunks pipelined)
//! fcollect,      hier .................................... hier (leaders gather their host, then
//! collect                                                  each other's hosts; members copy)
//!                fcollect, block fits an inbox
//!                part (n <= 16; 504 B on 2 PEs) .......... push (every PE writes its block into
//!                                                          every member's inbox)
//!                fcollect, not mapped, block fits a
//!                staging part (16 KiB on 2 PEs) .......... push into the members' staging sets
//!                mapped and (n <= 8 or total <= 1 MiB) ... direct (every PE writes its block into
//!                                                          every dest, one shot)
//!                n <= 8 and total <= 1 MiB ............... direct over the network too (entries
//!                                                          announced through the inboxes, each
//!                                                          block and its arrival one message)
//!                otherwise ............................... ring
//! alltoall(s)    always .................................. direct
//! reduce         hier .................................... hier (host partials, one-shot among
//! (all-reduce)                                             leaders, members copy the result)
//!                contribution fits an inbox part ......... push (every PE writes its contribution
//!                                                          into every member's inbox, each combines)
//!                not mapped, fits a staging part ......... push into the members' staging sets
//!                bytes <= ONESHOT_MAX (16 KiB) ........... one-shot (everyone reads everyone)
//!                not mapped and n <= 4 ................... one-shot pushed in rounds over the
//!                                                          network (any size)
//!                mapped .................................. reduce-scatter + all-gather
//!                otherwise ............................... ring
//! reduce_scatter mapped .................................. direct
//!                otherwise ............................... ring
//! scans          always .................................. direct
//! ```
//!
//! Why: on mapped memory a read of a peer costs what a read of one's own memory costs, so
//! the fewest synchronization steps win: one-shot and direct algorithms need one or two
//! flag exchanges whatever the team size, while ring and tree need O(n) and O(log n)
//! steps. A pushed broadcast needs no flag exchange at all on the members' side: the data
//! and its tag arrive in the member's own cache line, where a pulled one costs a member
//! two dependent reads of the root's memory (its flag, then its data); the root pays one
//! line per member, which bounds the team size it is used for.
//! Pushed forms also win where peers are reached through a network (every pair over UCX):
//! the root's (or each member's) data and tag travel as one-way puts and every wait is on
//! the waiter's own memory, where a pulled form polls a remote word with round trips
//! (over UCX tcp on one host, 2 PEs: broadcast 8 B 31 -> 14-18 us, fcollect 8 B 22 -> 15,
//! all-reduce 8 B 17-19 -> 14-16; results/cpu/issue21-ucx-session6.txt).
//! Over a network a part of a staging set (16 KiB split among the other members) takes
//! what an inbox part cannot hold: the push needs no entry exchange first (the one-shot
//! and direct forms over the network wait for every member's entry announcement, one
//! more trip) because a member writes a peer's set only once it knows the peer finished
//! the set's previous user, which a stream of pushed calls tells it for free (every part
//! a member receives shows that its sender entered the call; UCX tcp, 2 PEs: all-reduce
//! 512 B 24-42 -> 12-27 us, fcollect 512 B 22-32 -> 11-18 us;
//! results/cpu/issue21-ucx-session11.txt).
//! Rings and trees send each byte over fewer links and win when peers are reached
//! through a network (or, for broadcast, when many readers would all hit the root).
//! The thresholds are first guesses for a 2-core host; tune them against measurements.
//!
//! Across hosts the hierarchical forms send each byte over the network once per pair of
//! hosts instead of once per pair of PEs, and keep every wait of a non-leader on its own
//! host. alltoall stays direct: every block has its own destination, so gathering blocks
//! at a leader first would only add copies (and a leader buffer of `n * n` blocks the
//! API does not provide); reduce_scatter stays ring across hosts, for the same reason (a
//! host partial of all `n` blocks needs a buffer that neither `dest` nor the staging
//! area can hold).
//!
//! `RSHMEM_COLL_ALGO` overrides the tree, per collective, with comma-separated
//! `collective=algorithm` pairs, for example `reduce=ring,broadcast=tree,barrier=dissem:3`:
//!
//! | collective | algorithms |
//! |---|---|
//! | `barrier` | `dissem` (radix chosen as above), `dissem:K` (radix K >= 2), `hier` |
//! | `broadcast` | `direct`, `tree`, `hier`, `push` (messages that fit an inbox slot; larger ones direct) |
//! | `fcollect` | `direct`, `ring`, `hier`, `push` (blocks that fit an inbox part; larger ones direct) |
//! | `collect` | `direct`, `ring`, `hier` |
//! | `alltoall` | `direct` |
//! | `reduce` | `oneshot`, `rsag`, `ring`, `hier`, `push` (contributions that fit an inbox part; larger ones one-shot) |
//! | `reduce_scatter` | `direct`, `ring` |
//! | `scan` | `direct` |
//!
//! `auto` (or an empty value) means no override. Unknown names fail `init` with an error.
//! A forced `hier` works on any team: on one host it is a local step alone, with one
//! member per host the leaders' step alone.

pub use crate::config::coll_algo::{BarrierAlgo, BroadcastAlgo, Forced, GatherAlgo, ReduceAlgo, ReduceScatterAlgo};
use crate::error::Result;
use crate::heap::layout::{inbox_part, stage_part};

/// Teams up to this size use a one-round (flat) barrier when mapped.
pub const FLAT_BARRIER_MAX: usize = 8;
/// Largest all-reduce (bytes per PE) done one-shot by default; also the staging size.
pub const ONESHOT_MAX: usize = crate::heap::layout::STAGE_SET;
/// Teams up to this size reduce one-shot over the network at any size (pushed in rounds
/// through the staging sets): each member sends `n - 1` copies of its contribution
/// against the ring's two, but in one trip per round where the ring takes `2(n - 1)`
/// dependent steps, each a round trip (UCX tcp, 2 PEs: 32 KiB 100-130 -> 41-45 us, 128 KiB 273 -> 162 us).
pub const NET_ONESHOT_TEAM_MAX: usize = 4;
/// Largest broadcast done directly on big mapped teams.
pub const DIRECT_BROADCAST_MAX: usize = 64 << 10;
/// Largest gathered total done directly on big mapped teams.
pub const DIRECT_GATHER_MAX: usize = 1 << 20;
/// Team size up to which direct broadcast and gathers are used at any size.
pub const DIRECT_TEAM_MAX: usize = 8;
/// Largest broadcast pushed into the members' inboxes (one inbox slot).
pub const PUSH_BROADCAST_MAX: usize = crate::heap::layout::INBOX_DATA;
/// Most bytes (whole cache lines of tag and data, summed over the members) a pushed
/// broadcast's root writes by default.
pub const PUSH_TEAM_BYTES: usize = 8 << 10;

/// What the decision tree looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Number of team members.
    pub team_size: usize,
    /// Message size in bytes (see the module documentation).
    pub bytes: usize,
    /// Whether every member's heap is directly mapped.
    pub mapped: bool,
    /// Whether the team spans hosts with more than one member on some host.
    pub hier: bool,
}

/// Barrier algorithm (`hier`: see [`Shape::hier`]).
pub fn barrier(f: &Forced, hier: bool) -> BarrierAlgo {
    f.barrier_algo.unwrap_or(if hier { BarrierAlgo::Hier } else { BarrierAlgo::Dissemination })
}

/// Barrier radix.
pub fn barrier_radix(f: &Forced, team_size: usize, mapped: bool) -> usize {
    match f.barrier {
        Some(k) if k >= 2 => k,
        _ if mapped && team_size <= FLAT_BARRIER_MAX => team_size.max(2),
        _ if mapped => 4,
        _ => 2,
    }
}

/// Broadcast algorithm.
pub fn broadcast(f: &Forced, s: Shape) -> BroadcastAlgo {
    let fits = s.bytes <= PUSH_BROADCAST_MAX;
    match f.broadcast {
        Some(BroadcastAlgo::Push) if !fits => return BroadcastAlgo::Direct,
        Some(a) => return a,
        None => {}
    }
    let push_bytes = s.team_size.saturating_sub(1).saturating_mul((s.bytes + 8).next_multiple_of(64));
    if s.hier {
        BroadcastAlgo::Hier
    } else if fits && push_bytes <= PUSH_TEAM_BYTES {
        BroadcastAlgo::Push
    } else if s.mapped && (s.team_size <= DIRECT_TEAM_MAX || s.bytes <= DIRECT_BROADCAST_MAX) {
        BroadcastAlgo::Direct
    } else if !s.mapped && s.team_size <= DIRECT_TEAM_MAX && s.bytes <= DIRECT_GATHER_MAX {
        // Pushed into each member's dest over the network (see broadcast_direct).
        BroadcastAlgo::Direct
    } else {
        BroadcastAlgo::Tree
    }
}

fn gather(forced: Option<GatherAlgo>, s: Shape) -> GatherAlgo {
    forced.unwrap_or(if s.hier {
        GatherAlgo::Hier
    } else if s.mapped && (s.team_size <= DIRECT_TEAM_MAX || s.bytes <= DIRECT_GATHER_MAX) {
        GatherAlgo::Direct
    } else if s.team_size <= DIRECT_TEAM_MAX && s.bytes <= DIRECT_GATHER_MAX {
        // Over the network every PE still sends each of its n - 1 copies once (as in the
        // ring, which forwards n - 1 blocks), in one step instead of n - 1.
        GatherAlgo::Direct
    } else {
        GatherAlgo::Ring
    })
}

/// Whether `bytes` per member fit a member's part of an inbox slot on a team of `n`.
pub(crate) fn fits_part(n: usize, bytes: usize) -> bool {
    n >= 2 && bytes <= inbox_part(n).saturating_sub(8)
}

/// Whether `bytes` per member are pushed (into inbox parts, or over a network into
/// staging parts, [`stage_part`], with their tags in the inbox parts) on a team of `n`.
fn fits_push(n: usize, bytes: usize, mapped: bool) -> bool {
    fits_part(n, bytes) || (!mapped && inbox_part(n) > 0 && bytes <= stage_part(n))
}

/// fcollect algorithm (`bytes`: the gathered total).
pub fn fcollect(f: &Forced, s: Shape) -> GatherAlgo {
    let fits = fits_push(s.team_size, s.bytes / s.team_size.max(1), s.mapped);
    match f.fcollect {
        Some(GatherAlgo::Push) if !fits => GatherAlgo::Direct,
        None if fits && !s.hier => GatherAlgo::Push,
        forced => gather(forced, s),
    }
}

/// collect algorithm (`bytes`: the gathered total).
pub fn collect(f: &Forced, s: Shape) -> GatherAlgo {
    gather(f.collect, s)
}

/// All-reduce algorithm (`bytes`: one PE's contribution).
pub fn reduce(f: &Forced, s: Shape) -> ReduceAlgo {
    let fits = fits_push(s.team_size, s.bytes, s.mapped);
    match f.reduce {
        Some(ReduceAlgo::Push) if !fits => return ReduceAlgo::OneShot,
        Some(a) => return a,
        None if fits && !s.hier => return ReduceAlgo::Push,
        None => {}
    }
    if s.hier {
        ReduceAlgo::Hier
    } else if s.bytes <= ONESHOT_MAX || (!s.mapped && s.team_size <= NET_ONESHOT_TEAM_MAX) {
        ReduceAlgo::OneShot
    } else if s.mapped {
        ReduceAlgo::RsAg
    } else {
        ReduceAlgo::Ring
    }
}

/// Reduce-scatter algorithm (`bytes`: one PE's whole contribution).
pub fn reduce_scatter(f: &Forced, s: Shape) -> ReduceScatterAlgo {
    f.reduce_scatter.unwrap_or(if s.mapped { ReduceScatterAlgo::Direct } else { ReduceScatterAlgo::Ring })
}

/// What the tree picks for one message size on one team (see [`crate::Ctx::coll_plan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Barrier algorithm.
    pub barrier: BarrierAlgo,
    /// Barrier radix (of the dissemination; among the leaders for `hier`).
    pub barrier_radix: usize,
    /// Broadcast of `bytes`.
    pub broadcast: BroadcastAlgo,
    /// fcollect of `bytes` per PE.
    pub fcollect: GatherAlgo,
    /// collect gathering `bytes` per PE on average.
    pub collect: GatherAlgo,
    /// All-reduce of `bytes` per PE.
    pub reduce: ReduceAlgo,
    /// Reduce-scatter of blocks of `bytes`.
    pub reduce_scatter: ReduceScatterAlgo,
}

/// The plan for a message of `bytes` per PE.
pub fn plan(f: &Forced, team_size: usize, bytes: usize, mapped: bool, hier: bool) -> Plan {
    let one = Shape { team_size, bytes, mapped, hier };
    let all = Shape { team_size, bytes: bytes.saturating_mul(team_size), mapped, hier };
    Plan {
        barrier: barrier(f, hier),
        barrier_radix: barrier_radix(f, team_size, mapped),
        broadcast: broadcast(f, one),
        fcollect: fcollect(f, all),
        collect: collect(f, all),
        reduce: reduce(f, one),
        reduce_scatter: reduce_scatter(f, all),
    }
}

impl crate::Ctx {
    /// The algorithms the decision tree (with `RSHMEM_COLL_ALGO`) picks on `team` for a
    /// message of `bytes` per PE (for reduce_scatter: per block).
    pub fn coll_plan(&self, team: crate::Team, bytes: usize) -> Result<Plan> {
        let t = self.team_info("coll_plan", team)?;
        let mapped = (0..t.size).all(|i| self.rt.mapped(t.world_pe(i)));
        let hier = t.host_groups(&self.rt.host_of).spans_hosts();
        Ok(plan(&self.rt.forced, t.size, bytes, mapped, hier))
    }

    /// The members of `team` grouped by host, as the hierarchical algorithms see them:
    /// team ranks per host in increasing order, hosts ordered by their first member (its
    /// leader). One group when every member shares this PE's memory.
    pub fn team_hosts(&self, team: crate::Team) -> Result<Vec<Vec<usize>>> {
        let t = self.team_info("team_hosts", team)?;
        Ok(t.host_groups(&self.rt.host_of).groups)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_overrides() {
        let f = Forced::parse("reduce=ring, broadcast=tree,barrier=dissem:3,fcollect=ring,collect=direct,reduce_scatter=ring").unwrap();
        assert_eq!(f.reduce, Some(ReduceAlgo::Ring));
        assert_eq!(f.broadcast, Some(BroadcastAlgo::Tree));
        assert_eq!(f.barrier, Some(3));
        assert_eq!(f.fcollect, Some(GatherAlgo::Ring));
        assert_eq!(f.collect, Some(GatherAlgo::Direct));
        assert_eq!(f.reduce_scatter, Some(ReduceScatterAlgo::Ring));
        assert_eq!(Forced::parse("auto").unwrap(), Forced::default());
        assert_eq!(Forced::parse("barrier=dissem").unwrap().barrier, Some(0));
        let h = Forced::parse("barrier=hier,broadcast=hier,fcollect=hier,collect=hier,reduce=hier").unwrap();
        assert_eq!(h.barrier_algo, Some(BarrierAlgo::Hier));
        assert_eq!((h.broadcast, h.fcollect, h.collect), (Some(BroadcastAlgo::Hier), Some(GatherAlgo::Hier), Some(GatherAlgo::Hier)));
        assert_eq!(h.reduce, Some(ReduceAlgo::Hier));
        assert_eq!(Forced::parse("broadcast=push").unwrap().broadcast, Some(BroadcastAlgo::Push));
        for bad in ["reduce=fast", "reduce", "bcast=tree", "barrier=dissem:1", "alltoall=ring", "alltoall=hier", "reduce_scatter=hier"] {
            let e = Forced::parse(bad).unwrap_err().to_string();
            assert!(e.contains("RSHMEM_COLL_ALGO"), "{bad}: {e}");
        }
    }

    #[test]
    fn tree_picks() {
        let f = Forced::default();
        let s = |team_size, bytes, mapped| Shape { team_size, bytes, mapped, hier: false };
        assert_eq!(reduce(&f, s(4, 8, true)), ReduceAlgo::Push);
        assert_eq!(reduce(&f, s(4, 248, true)), ReduceAlgo::Push);
        assert_eq!(reduce(&f, s(4, 249, true)), ReduceAlgo::OneShot);
        assert_eq!(reduce(&f, s(16, 56, true)), ReduceAlgo::Push);
        assert_eq!(reduce(&f, s(17, 8, true)), ReduceAlgo::OneShot);
        assert_eq!(reduce(&f, s(4, 8, false)), ReduceAlgo::Push, "pushed over a network too");
        assert_eq!(reduce(&f, s(4, 5440, false)), ReduceAlgo::Push, "into staging parts over a network");
        assert_eq!(reduce(&f, s(4, 5441, false)), ReduceAlgo::OneShot);
        assert_eq!(reduce(&f, s(2, 16384, false)), ReduceAlgo::Push, "the whole set on 2 PEs");
        assert_eq!(reduce(&f, s(2, 16385, false)), ReduceAlgo::OneShot);
        assert_eq!(reduce(&f, s(17, 8, false)), ReduceAlgo::OneShot, "no inbox part for the tags");
        assert_eq!(fcollect(&f, s(2, 2 * 504, true)), GatherAlgo::Push);
        assert_eq!(fcollect(&f, s(2, 2 * 505, true)), GatherAlgo::Direct);
        assert_eq!(fcollect(&f, s(8, 8 * 8, false)), GatherAlgo::Push, "pushed over a network too");
        assert_eq!(fcollect(&f, s(8, 8 * 2304, false)), GatherAlgo::Push, "into staging parts over a network");
        assert_eq!(fcollect(&f, s(8, 8 * 2368, false)), GatherAlgo::Direct);
        assert_eq!(fcollect(&f, s(8, 8 * 8192, false)), GatherAlgo::Direct, "one step over a network too");
        assert_eq!(fcollect(&f, s(8, 8 << 20, false)), GatherAlgo::Ring);
        assert_eq!(fcollect(&f, s(9, 9 * 8192, false)), GatherAlgo::Ring);
        assert_eq!(collect(&f, s(2, 16, true)), GatherAlgo::Direct, "collect never pushes (its sizes differ per PE)");
        let push = Forced { fcollect: Some(GatherAlgo::Push), reduce: Some(ReduceAlgo::Push), ..Forced::default() };
        assert_eq!(fcollect(&push, s(4, 4 * 4096, true)), GatherAlgo::Direct);
        assert_eq!(reduce(&push, s(4, 4096, true)), ReduceAlgo::OneShot);
        assert_eq!(reduce(&push, s(4, 64, false)), ReduceAlgo::Push);
        assert_eq!(reduce(&push, s(4, 5441, false)), ReduceAlgo::OneShot, "forced push falls back where a staging part is too small");
        assert_eq!(reduce(&f, s(4, 1 << 20, true)), ReduceAlgo::RsAg);
        assert_eq!(reduce(&f, s(4, 1 << 20, false)), ReduceAlgo::OneShot, "pushed in rounds over a network");
        assert_eq!(reduce(&f, s(5, 1 << 20, false)), ReduceAlgo::Ring);
        assert_eq!(broadcast(&f, s(64, 1 << 20, true)), BroadcastAlgo::Tree);
        assert_eq!(broadcast(&f, s(4, 1 << 20, true)), BroadcastAlgo::Direct);
        assert_eq!(broadcast(&f, s(2, 8, true)), BroadcastAlgo::Push);
        assert_eq!(broadcast(&f, s(8, 1016, true)), BroadcastAlgo::Push);
        assert_eq!(broadcast(&f, s(8, 1017, true)), BroadcastAlgo::Direct);
        assert_eq!(broadcast(&f, s(10, 1016, true)), BroadcastAlgo::Direct, "the root would write 9 KiB");
        assert_eq!(broadcast(&f, s(128, 8, true)), BroadcastAlgo::Push);
        assert_eq!(broadcast(&f, s(200, 8, true)), BroadcastAlgo::Direct);
        assert_eq!(broadcast(&f, s(2, 8, false)), BroadcastAlgo::Push, "pushed over a network too");
        assert_eq!(broadcast(&f, s(2, 4096, false)), BroadcastAlgo::Direct, "pushed into every dest over a network");
        assert_eq!(broadcast(&f, s(2, 2 << 20, false)), BroadcastAlgo::Tree);
        assert_eq!(broadcast(&f, s(9, 4096, false)), BroadcastAlgo::Tree);
        let push = Forced { broadcast: Some(BroadcastAlgo::Push), ..Forced::default() };
        assert_eq!(broadcast(&push, s(200, 8, false)), BroadcastAlgo::Push);
        assert_eq!(broadcast(&push, s(2, 1017, true)), BroadcastAlgo::Direct, "forced push falls back where the inbox is too small");
        assert_eq!(fcollect(&f, s(64, 64 << 20, true)), GatherAlgo::Ring);
        assert_eq!(barrier_radix(&f, 4, true), 4);
        assert_eq!(barrier_radix(&f, 64, true), 4);
        assert_eq!(barrier_radix(&f, 64, false), 2);
        let forced = Forced { reduce: Some(ReduceAlgo::Ring), ..Forced::default() };
        assert_eq!(reduce(&forced, s(4, 8, true)), ReduceAlgo::Ring);
        let e = Forced::parse("collect=push").unwrap_err().to_string();
        assert!(e.contains("valid: direct, ring, hier)"), "{e}");
        // Across hosts.
        let h = |bytes| Shape { team_size: 4, bytes, mapped: false, hier: true };
        for bytes in [8, 1 << 20] {
            assert_eq!(reduce(&f, h(bytes)), ReduceAlgo::Hier);
            assert_eq!(broadcast(&f, h(bytes)), BroadcastAlgo::Hier);
            assert_eq!(fcollect(&f, h(bytes)), GatherAlgo::Hier);
            assert_eq!(reduce_scatter(&f, h(bytes)), ReduceScatterAlgo::Ring);
        }
        assert_eq!(barrier(&f, true), BarrierAlgo::Hier);
        assert_eq!(barrier(&f, false), BarrierAlgo::Dissemination);
        assert_eq!(reduce(&forced, h(8)), ReduceAlgo::Ring);
    }
}
