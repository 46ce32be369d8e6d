//! The operations the suite measures: one table with each operation's name, what it
//! times and which sizes it takes. Both sides (rshmem's PEs and the anchor program) run
//! exactly what this table describes; the README's table of operations follows it.

/// One measured operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// Blocking put, then quiet, per iteration (latency to completion).
    Put,
    /// Non-blocking put per iteration, one quiet per timed block (throughput).
    PutNbi,
    /// Blocking get per iteration.
    Get,
    /// Non-blocking get per iteration, one quiet per timed block.
    GetNbi,
    /// Scalar put of one 8-byte word, then quiet, per iteration.
    P,
    /// Scalar get of one 8-byte word per iteration.
    G,
    /// p + wait_until ping-pong between two PEs (half a round trip per iteration).
    PingPong,
    /// put_signal + signal_wait_until ping-pong carrying a message (half a round trip).
    SignalPingPong,
    /// Blocking atomic fetch-and-add of an 8-byte word.
    FetchAdd,
    /// Atomic add, then quiet, per iteration.
    Add,
    /// Atomic compare-and-swap that always succeeds.
    CompareSwap,
    /// Atomic fetch.
    Fetch,
    /// Atomic adds back to back, one quiet per timed block (the rate of updates).
    AddRate,
    /// Barrier over all PEs (barrier_all) per iteration.
    Barrier,
    /// Broadcast of the message from PE 0 to every PE of the world team.
    Broadcast,
    /// fcollect: every PE contributes the message; every PE gets all of them.
    Fcollect,
    /// alltoall: every pair of PEs exchanges the message.
    Alltoall,
    /// All-reduce (sum) of an array of 64-bit integers.
    Reduce,
    /// Reduce-scatter (sum): every PE gets its block (the message) of the reduced array.
    ReduceScatter,
}

/// Which sizes an operation takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Every size of the sweep.
    Sweep,
    /// One 8-byte word, whatever the sweep.
    Word,
    /// No payload (size 0).
    NoData,
}

/// Which PEs take part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Point to point: PE i (i < N/2) drives PE i + N/2, all pairs at once; PE 0's pair
    /// is reported.
    Pairs,
    /// Every PE takes part; PE 0's time is reported.
    All,
}

/// The description of one operation.
#[derive(Debug, Clone, Copy)]
pub struct OpInfo {
    /// The operation.
    pub op: Op,
    /// Its name on the command line, in the protocol and in the outputs.
    pub name: &'static str,
    /// Sizes it takes.
    pub shape: Shape,
    /// PEs that take part.
    pub pattern: Pattern,
    /// What one iteration is, for the README and `--list-ops`.
    pub about: &'static str,
    /// Sizes must be multiples of this (the element size of collectives).
    pub unit: usize,
    /// Symmetric memory per PE a case of `bytes` on `n` PEs needs, on either side.
    pub heap: fn(bytes: usize, n: usize) -> usize,
}

fn heap_message(bytes: usize, _n: usize) -> usize {
    bytes
}

fn heap_word(_bytes: usize, _n: usize) -> usize {
    8
}

fn heap_message_and_word(bytes: usize, _n: usize) -> usize {
    bytes + 8
}

fn heap_two_messages(bytes: usize, _n: usize) -> usize {
    2 * bytes
}

fn heap_gather(bytes: usize, n: usize) -> usize {
    (n + 1) * bytes
}

fn heap_alltoall(bytes: usize, n: usize) -> usize {
    2 * n * bytes
}

/// Source and destination, and the anchor's work array (half the elements, OpenSHMEM 1.4).
fn heap_reduce(bytes: usize, _n: usize) -> usize {
    2 * bytes + bytes / 2 + 8
}

/// Every operation the suite runs, in sweep order.
pub const OPS: &[OpInfo] = &[
    OpInfo { op: Op::Put, name: "put", shape: Shape::Sweep, pattern: Pattern::Pairs, about: "putmem + quiet", unit: 1, heap: heap_message },
    OpInfo {
        op: Op::PutNbi,
        name: "put_nbi",
        shape: Shape::Sweep,
        pattern: Pattern::Pairs,
        about: "putmem_nbi; one quiet per block",
        unit: 1,
        heap: heap_message,
    },
    OpInfo { op: Op::Get, name: "get", shape: Shape::Sweep, pattern: Pattern::Pairs, about: "getmem", unit: 1, heap: heap_message },
    OpInfo {
        op: Op::GetNbi,
        name: "get_nbi",
        shape: Shape::Sweep,
        pattern: Pattern::Pairs,
        about: "getmem_nbi; one quiet per block",
        unit: 1,
        heap: heap_message,
    },
    OpInfo { op: Op::P, name: "p", shape: Shape::Word, pattern: Pattern::Pairs, about: "long p + quiet", unit: 1, heap: heap_word },
    OpInfo { op: Op::G, name: "g", shape: Shape::Word, pattern: Pattern::Pairs, about: "long g", unit: 1, heap: heap_word },
    OpInfo {
        op: Op::PingPong,
        name: "pingpong",
        shape: Shape::Word,
        pattern: Pattern::Pairs,
        about: "p + wait_until ping-pong; half a round trip",
        unit: 1,
        heap: heap_word,
    },
    OpInfo {
        op: Op::SignalPingPong,
        name: "signal_pingpong",
        shape: Shape::Sweep,
        pattern: Pattern::Pairs,
        about: "put_signal + signal_wait_until ping-pong with a message; half a round trip",
        unit: 1,
        heap: heap_message_and_word,
    },
    OpInfo {
        op: Op::FetchAdd,
        name: "fetch_add",
        shape: Shape::Word,
        pattern: Pattern::Pairs,
        about: "long atomic_fetch_add",
        unit: 1,
        heap: heap_word,
    },
    OpInfo {
        op: Op::Add,
        name: "add",
        shape: Shape::Word,
        pattern: Pattern::Pairs,
        about: "long atomic_add + quiet",
        unit: 1,
        heap: heap_word,
    },
    OpInfo {
        op: Op::CompareSwap,
        name: "compare_swap",
        shape: Shape::Word,
        pattern: Pattern::Pairs,
        about: "long atomic_compare_swap (always succeeds)",
        unit: 1,
        heap: heap_word,
    },
    OpInfo {
        op: Op::Fetch,
        name: "fetch",
        shape: Shape::Word,
        pattern: Pattern::Pairs,
        about: "long atomic_fetch",
        unit: 1,
        heap: heap_word,
    },
    OpInfo {
        op: Op::AddRate,
        name: "add_rate",
        shape: Shape::Word,
        pattern: Pattern::Pairs,
        about: "long atomic_add back to back; one quiet per block",
        unit: 1,
        heap: heap_word,
    },
    OpInfo {
        op: Op::Barrier,
        name: "barrier",
        shape: Shape::NoData,
        pattern: Pattern::All,
        about: "barrier_all",
        unit: 1,
        heap: heap_word,
    },
    OpInfo {
        op: Op::Broadcast,
        name: "broadcast",
        shape: Shape::Sweep,
        pattern: Pattern::All,
        about: "broadcast from PE 0 (world team)",
        unit: 8,
        heap: heap_two_messages,
    },
    OpInfo {
        op: Op::Fcollect,
        name: "fcollect",
        shape: Shape::Sweep,
        pattern: Pattern::All,
        about: "fcollect; size = bytes each PE contributes",
        unit: 8,
        heap: heap_gather,
    },
    OpInfo {
        op: Op::Alltoall,
        name: "alltoall",
        shape: Shape::Sweep,
        pattern: Pattern::All,
        about: "alltoall; size = bytes each pair of PEs exchanges",
        unit: 8,
        heap: heap_alltoall,
    },
    OpInfo {
        op: Op::Reduce,
        name: "reduce",
        shape: Shape::Sweep,
        pattern: Pattern::All,
        about: "all-reduce, sum of 64-bit integers; size = the array",
        unit: 8,
        heap: heap_reduce,
    },
    OpInfo {
        op: Op::ReduceScatter,
        name: "reduce_scatter",
        shape: Shape::Sweep,
        pattern: Pattern::All,
        about: "reduce-scatter, sum of 64-bit integers; size = each PE's block of the result",
        unit: 8,
        heap: heap_gather,
    },
];

/// Operations of the usual SHMEM perftests that rshmem does not implement yet: named so
/// that the suite can say they were left out, never measured (none today).
pub const NOT_YET: &[(&str, &str)] = &[];

impl Op {
    /// This operation's table entry.
    pub fn info(self) -> &'static OpInfo {
        OPS.iter().find(|i| i.op == self).expect("every Op has a table entry")
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The operation called `name`, if the table has it.
    pub fn from_name(name: &str) -> Option<Op> {
        OPS.iter().find(|i| i.name == name).map(|i| i.op)
    }
}

/// The result of reading an `--ops` list.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Operations to run, in table order.
    pub ops: Vec<Op>,
    /// Requested (or, without a filter, known) operations that rshmem lacks, with what
    /// they wait for.
    pub left_out: Vec<(&'static str, &'static str)>,
}

/// Reads a comma-separated `--ops` filter (`None`: every operation). Unknown names are
/// errors that list the known ones.
pub fn select(filter: Option<&str>) -> Result<Selection, String> {
    let Some(filter) = filter else {
        return Ok(Selection { ops: OPS.iter().map(|i| i.op).collect(), left_out: NOT_YET.to_vec() });
    };
    let mut sel = Selection::default();
    for name in filter.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if let Some(op) = Op::from_name(name) {
            if !sel.ops.contains(&op) {
                sel.ops.push(op);
            }
        } else if let Some(&entry) = NOT_YET.iter().find(|(n, _)| *n == name) {
            if !sel.left_out.contains(&entry) {
                sel.left_out.push(entry);
            }
        } else {
            let known: Vec<&str> = OPS.iter().map(|i| i.name).collect();
            return Err(format!("--ops: unknown operation `{name}` (known: {})", known.join(", ")));
        }
    }
    sel.ops.sort();
    if sel.ops.is_empty() && sel.left_out.is_empty() {
        return Err("--ops names no operation".into());
    }
    Ok(sel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_consistent() {
        for (i, a) in OPS.iter().enumerate() {
            assert_eq!(Op::from_name(a.name), Some(a.op));
            assert_eq!(a.op.name(), a.name);
            assert!(OPS[i + 1..].iter().all(|b| b.name != a.name && b.op != a.op), "{} twice", a.name);
            assert!(NOT_YET.iter().all(|(n, _)| *n != a.name), "{} is both measured and not yet", a.name);
        }
    }

    #[test]
    fn selects_in_table_order() {
        let s = select(Some("get,put,get")).unwrap();
        assert_eq!(s.ops, vec![Op::Put, Op::Get]);
        assert!(s.left_out.is_empty());
        let all = select(None).unwrap();
        assert_eq!(all.ops.len(), OPS.len());
    }

    #[test]
    fn reports_unknown_and_missing() {
        let e = select(Some("put,bogus")).unwrap_err();
        assert!(e.contains("bogus") && e.contains("put_nbi"), "{e}");
        assert!(select(Some(",")).is_err());
        if let Some((name, _)) = NOT_YET.first() {
            let s = select(Some(&format!("put,{name}"))).unwrap();
            assert_eq!(s.ops, vec![Op::Put]);
            assert_eq!(s.left_out.len(), 1);
        }
    }
}
