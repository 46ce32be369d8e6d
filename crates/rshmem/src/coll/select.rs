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
//!                mapped and (n <= 8 or bytes <= 64 KiB) .. direct (every PE reads the root)
//!                otherwise ............................... tree (binomial, 64 KiB chunks pipelined)
//! fcollect,      hier .................................... hier (leaders gather their host, then
//! collect                                                  each other's hosts; members copy)
//!                mapped and (n <= 8 or total <= 1 MiB) ... direct (every PE writes its block into
//!                                                          every dest, one shot)
//!                otherwise ............................... ring
//! alltoall(s)    always .................................. direct
//! reduce         hier .................................... hier (host partials, one-shot among
//! (all-reduce)                                             leaders, members copy the result)
//!                bytes <= ONESHOT_MAX (16 KiB) ........... one-shot (everyone reads everyone)
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
//! steps. Rings and trees send each byte over fewer links and win when peers are reached
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
//! | `broadcast` | `direct`, `tree`, `hier` |
//! | `fcollect` | `direct`, `ring`, `hier` |
//! | `collect` | `direct`, `ring`, `hier` |
//! | `alltoall` | `direct` |
//! | `reduce` | `oneshot`, `rsag`, `ring`, `hier` |
//! | `reduce_scatter` | `direct`, `ring` |
//! | `scan` | `direct` |
//!
//! `auto` (or an empty value) means no override. Unknown names fail `init` with an error.
//! A forced `hier` works on any team: on one host it is a local step alone, with one
//! member per host the leaders' step alone.

use crate::error::{Error, Result};

/// Teams up to this size use a one-round (flat) barrier when mapped.
pub const FLAT_BARRIER_MAX: usize = 8;
/// Largest all-reduce (bytes per PE) done one-shot by default; also the staging size.
pub const ONESHOT_MAX: usize = crate::heap::layout::STAGE_SET;
/// Largest broadcast done directly on big mapped teams.
pub const DIRECT_BROADCAST_MAX: usize = 64 << 10;
/// Largest gathered total done directly on big mapped teams.
pub const DIRECT_GATHER_MAX: usize = 1 << 20;
/// Team size up to which direct broadcast and gathers are used at any size.
pub const DIRECT_TEAM_MAX: usize = 8;

/// Barrier algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarrierAlgo {
    /// Dissemination over all members (radix from [`barrier_radix`]).
    Dissemination,
    /// Fan-in to each host's leader, dissemination among the leaders, fan-out.
    Hier,
}

/// Broadcast algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BroadcastAlgo {
    /// Every PE copies from the root.
    Direct,
    /// Binomial tree: each PE copies from its parent, chunk by chunk.
    Tree,
    /// The root's host reads the root; other hosts' leaders read the root, then their
    /// members read them.
    Hier,
}

/// Algorithms of fcollect and collect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GatherAlgo {
    /// Every PE writes its block into every PE's dest.
    Direct,
    /// Blocks travel around the ring, n - 1 steps.
    Ring,
    /// Leaders gather their host's blocks, then the other hosts' from their leaders;
    /// members copy the whole result from their leader.
    Hier,
}

/// All-reduce algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceAlgo {
    /// Every PE reads every contribution and combines them all.
    OneShot,
    /// Each PE reduces one chunk from all contributions, then writes it to every PE.
    RsAg,
    /// Ring reduce-scatter (partial sums passed to the right) then ring all-gather.
    Ring,
    /// Leaders combine their host's contributions, then every host's partial (one-shot
    /// among leaders); members copy the result from their leader.
    Hier,
}

/// Reduce-scatter algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceScatterAlgo {
    /// Each PE reads its block from every contribution.
    Direct,
    /// Partial sums passed around the ring.
    Ring,
}

/// Algorithms forced through `RSHMEM_COLL_ALGO` (None: the decision tree decides).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Forced {
    /// Barrier algorithm.
    pub barrier_algo: Option<BarrierAlgo>,
    /// Barrier radix (Some(0): dissemination with the radix the tree picks).
    pub barrier: Option<usize>,
    /// Broadcast.
    pub broadcast: Option<BroadcastAlgo>,
    /// fcollect.
    pub fcollect: Option<GatherAlgo>,
    /// collect.
    pub collect: Option<GatherAlgo>,
    /// All-reduce.
    pub reduce: Option<ReduceAlgo>,
    /// Reduce-scatter.
    pub reduce_scatter: Option<ReduceScatterAlgo>,
}

impl Forced {
    /// Parses the value of `RSHMEM_COLL_ALGO` (see the module documentation).
    pub fn parse(text: &str) -> Result<Forced> {
        let mut f = Forced::default();
        let bad = |detail: String| Error::InvalidArgument { call: "init", arg: "RSHMEM_COLL_ALGO", detail, pe: 0 };
        let text = text.trim();
        if text.is_empty() || text == "auto" {
            return Ok(f);
        }
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (coll, algo) = item.split_once('=').ok_or_else(|| bad(format!("`{item}` is not of the form collective=algorithm")))?;
            let (coll, algo) = (coll.trim(), algo.trim());
            let unknown = |valid: &str| bad(format!("`{algo}` is not an algorithm of {coll} (valid: {valid})"));
            match coll {
                "barrier" if algo == "hier" => f.barrier_algo = Some(BarrierAlgo::Hier),
                "barrier" => {
                    f.barrier_algo = Some(BarrierAlgo::Dissemination);
                    f.barrier = Some(match algo.split_once(':') {
                        None if algo == "dissem" || algo == "dissemination" => 0,
                        Some((a, k)) if a == "dissem" || a == "dissemination" => k
                            .parse::<usize>()
                            .ok()
                            .filter(|&k| k >= 2)
                            .ok_or_else(|| bad(format!("barrier radix `{k}` is not a number >= 2")))?,
                        _ => return Err(unknown("dissem, dissem:K, hier")),
                    })
                }
                "broadcast" => {
                    f.broadcast = Some(match algo {
                        "direct" => BroadcastAlgo::Direct,
                        "tree" => BroadcastAlgo::Tree,
                        "hier" => BroadcastAlgo::Hier,
                        _ => return Err(unknown("direct, tree, hier")),
                    })
                }
                "fcollect" | "collect" => {
                    let a = match algo {
                        "direct" => GatherAlgo::Direct,
                        "ring" => GatherAlgo::Ring,
                        "hier" => GatherAlgo::Hier,
                        _ => return Err(unknown("direct, ring, hier")),
                    };
                    if coll == "fcollect" {
                        f.fcollect = Some(a)
                    } else {
                        f.collect = Some(a)
                    }
                }
                "reduce" => {
                    f.reduce = Some(match algo {
                        "oneshot" => ReduceAlgo::OneShot,
                        "rsag" => ReduceAlgo::RsAg,
                        "ring" => ReduceAlgo::Ring,
                        "hier" => ReduceAlgo::Hier,
                        _ => return Err(unknown("oneshot, rsag, ring, hier")),
                    })
                }
                "reduce_scatter" => {
                    f.reduce_scatter = Some(match algo {
                        "direct" => ReduceScatterAlgo::Direct,
                        "ring" => ReduceScatterAlgo::Ring,
                        _ => return Err(unknown("direct, ring")),
                    })
                }
                "alltoall" | "scan" => {
                    if algo != "direct" {
                        return Err(unknown("direct"));
                    }
                }
                other => {
                    return Err(bad(format!(
                    "`{other}` is not a collective (valid: barrier, broadcast, fcollect, collect, alltoall, reduce, reduce_scatter, scan)"
                )))
                }
            }
        }
        Ok(f)
    }
}

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
    f.broadcast.unwrap_or(if s.hier {
        BroadcastAlgo::Hier
    } else if s.mapped && (s.team_size <= DIRECT_TEAM_MAX || s.bytes <= DIRECT_BROADCAST_MAX) {
        BroadcastAlgo::Direct
    } else {
        BroadcastAlgo::Tree
    })
}

fn gather(forced: Option<GatherAlgo>, s: Shape) -> GatherAlgo {
    forced.unwrap_or(if s.hier {
        GatherAlgo::Hier
    } else if s.mapped && (s.team_size <= DIRECT_TEAM_MAX || s.bytes <= DIRECT_GATHER_MAX) {
        GatherAlgo::Direct
    } else {
        GatherAlgo::Ring
    })
}

/// fcollect algorithm (`bytes`: the gathered total).
pub fn fcollect(f: &Forced, s: Shape) -> GatherAlgo {
    gather(f.fcollect, s)
}

/// collect algorithm (`bytes`: the gathered total).
pub fn collect(f: &Forced, s: Shape) -> GatherAlgo {
    gather(f.collect, s)
}

/// All-reduce algorithm (`bytes`: one PE's contribution).
pub fn reduce(f: &Forced, s: Shape) -> ReduceAlgo {
    f.reduce.unwrap_or(if s.hier {
        ReduceAlgo::Hier
    } else if s.bytes <= ONESHOT_MAX {
        ReduceAlgo::OneShot
    } else if s.mapped {
        ReduceAlgo::RsAg
    } else {
        ReduceAlgo::Ring
    })
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
        let mapped = (0..t.size).all(|i| {
            let pe = t.world_pe(i);
            self.rt.to(pe).direct_address(pe, 0).is_some()
        });
        let hier = super::hosts::HostGroups::of_team(&self.rt, &t).spans_hosts();
        Ok(plan(&self.rt.coll.forced, t.size, bytes, mapped, hier))
    }

    /// The members of `team` grouped by host, as the hierarchical algorithms see them:
    /// team ranks per host in increasing order, hosts ordered by their first member (its
    /// leader). One group when every member shares this PE's memory.
    pub fn team_hosts(&self, team: crate::Team) -> Result<Vec<Vec<usize>>> {
        let t = self.team_info("team_hosts", team)?;
        Ok(super::hosts::HostGroups::of_team(&self.rt, &t).groups)
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
        for bad in ["reduce=fast", "reduce", "bcast=tree", "barrier=dissem:1", "alltoall=ring", "alltoall=hier", "reduce_scatter=hier"] {
            let e = Forced::parse(bad).unwrap_err().to_string();
            assert!(e.contains("RSHMEM_COLL_ALGO"), "{bad}: {e}");
        }
    }

    #[test]
    fn tree_picks() {
        let f = Forced::default();
        let s = |team_size, bytes, mapped| Shape { team_size, bytes, mapped, hier: false };
        assert_eq!(reduce(&f, s(4, 8, true)), ReduceAlgo::OneShot);
        assert_eq!(reduce(&f, s(4, 1 << 20, true)), ReduceAlgo::RsAg);
        assert_eq!(reduce(&f, s(4, 1 << 20, false)), ReduceAlgo::Ring);
        assert_eq!(broadcast(&f, s(64, 1 << 20, true)), BroadcastAlgo::Tree);
        assert_eq!(broadcast(&f, s(4, 1 << 20, true)), BroadcastAlgo::Direct);
        assert_eq!(fcollect(&f, s(64, 64 << 20, true)), GatherAlgo::Ring);
        assert_eq!(barrier_radix(&f, 4, true), 4);
        assert_eq!(barrier_radix(&f, 64, true), 4);
        assert_eq!(barrier_radix(&f, 64, false), 2);
        let forced = Forced { reduce: Some(ReduceAlgo::Ring), ..Forced::default() };
        assert_eq!(reduce(&forced, s(4, 8, true)), ReduceAlgo::Ring);
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
