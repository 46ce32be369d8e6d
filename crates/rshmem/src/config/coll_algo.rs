//! Names of the collective algorithms and `RSHMEM_COLL_ALGO`, which forces them.
//!
//! The decision tree that picks among them when nothing is forced is `coll::select`.

use super::kinds::Kind;
use crate::error::{Error, Result};

/// The kind of `RSHMEM_COLL_ALGO`'s value, for the configuration table.
pub fn kind() -> Kind<Forced> {
    Kind {
        name: || "collective=algorithm list".into(),
        parse: |t| {
            Forced::parse(t).map_err(|e| match e {
                Error::InvalidArgument { detail, .. } => detail,
                other => other.to_string(),
            })
        },
    }
}

/// Barrier algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarrierAlgo {
    /// Dissemination over all members (radix from `coll::select::barrier_radix`).
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
    /// The root writes the data, with a tag word, into every member's inbox; members
    /// wait on their own memory (messages up to the inbox slot's size).
    Push,
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
    /// Every PE writes its block, with a tag word, into its part of every member's inbox;
    /// members wait on their own memory (fcollect only, blocks that fit a part).
    Push,
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
    /// Every PE writes its contribution into its part of every member's inbox; each
    /// combines all of them from its own memory (contributions that fit a part).
    Push,
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
                        "push" => BroadcastAlgo::Push,
                        _ => return Err(unknown("direct, tree, hier, push")),
                    })
                }
                "fcollect" | "collect" => {
                    let a = match algo {
                        "direct" => GatherAlgo::Direct,
                        "ring" => GatherAlgo::Ring,
                        "hier" => GatherAlgo::Hier,
                        "push" if coll == "fcollect" => GatherAlgo::Push,
                        _ if coll == "fcollect" => return Err(unknown("direct, ring, hier, push")),
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
                        "push" => ReduceAlgo::Push,
                        _ => return Err(unknown("oneshot, rsag, ring, hier, push")),
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
