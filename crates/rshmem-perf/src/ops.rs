//! The operations the suite measures: one table per suite (CPU PEs, GPU PEs) with each
//! operation's name, what it times and which sizes it takes. Every side (rshmem's PEs and
//! the anchor programs) runs exactly what these tables describe; the README's table of
//! operations follows them.

/// Which kind of PE a run uses; each has its own table of operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Suite {
    /// CPU PEs: host-initiated operations ([`OPS`]).
    Cpu,
    /// GPU PEs: device-initiated operations from kernels and on-stream collectives ([`GPU_OPS`]).
    Gpu,
}

impl Suite {
    /// The suite's operations, in sweep order.
    pub fn ops(self) -> &'static [OpInfo] {
        match self {
            Suite::Cpu => OPS,
            Suite::Gpu => GPU_OPS,
        }
    }

    /// Its name in the plan and the outputs (`cpu`, `gpu`).
    pub fn name(self) -> &'static str {
        match self {
            Suite::Cpu => "cpu",
            Suite::Gpu => "gpu",
        }
    }

    /// The suite called `name`.
    pub fn from_name(name: &str) -> Option<Suite> {
        [Suite::Cpu, Suite::Gpu].into_iter().find(|s| s.name() == name)
    }
}

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
    /// Message rate: non-blocking puts of small messages streamed back to back to one
    /// peer, one quiet per timed block (the loop of [`Op::PutNbi`] over [`RATE`] sizes).
    PutNbiRate,
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
    /// Atomic increments back to back, one quiet per timed block.
    IncRate,
    /// Atomic sets back to back, one quiet per timed block.
    SetRate,
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
    /// GPU: one put of the message per kernel, split over a grid of one block per SM,
    /// block scope (multi-block bandwidth).
    PutBw,
    /// GPU: the same with gets.
    GetBw,
    /// GPU: one block of 1024 threads puts the message with one block-scope call.
    PutBwBlock,
    /// GPU: the same with a get.
    GetBwBlock,
    /// GPU: one block's 32 warps each put their part with a warp-scope call.
    PutBwWarp,
    /// GPU: the same with gets.
    GetBwWarp,
    /// GPU: one block's 1024 threads each put their part with a thread-scope call.
    PutBwThread,
    /// GPU: the same with gets.
    GetBwThread,
    /// GPU: one thread: blocking put + quiet per iteration.
    PutLat,
    /// GPU: one thread: blocking get per iteration.
    GetLat,
    /// GPU: one thread: 8-byte p + quiet per iteration.
    GpuP,
    /// GPU: one thread: 8-byte g per iteration (each depends on the last).
    GpuG,
    /// GPU: one thread: 8-byte atomic fetch-add per iteration (each depends on the last).
    GpuFetchAdd,
    /// GPU: one thread per PE: put_signal + signal_wait_until ping-pong (half a round trip).
    GpuSignalPingPong,
    /// GPU: one thread per PE: device-side barrier_all per iteration.
    GpuBarrier,
    /// GPU: barrier over all PEs enqueued on a stream.
    BarrierOnStream,
    /// GPU: broadcast from PE 0 enqueued on a stream.
    BroadcastOnStream,
    /// GPU: fcollect enqueued on a stream.
    FcollectOnStream,
    /// GPU: alltoall enqueued on a stream.
    AlltoallOnStream,
    /// GPU: all-reduce (sum of 64-bit integers) enqueued on a stream.
    ReduceOnStream,
    /// GPU: reduce-scatter (sum of 64-bit integers) enqueued on a stream.
    ReduceScatterOnStream,
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
    /// Sizes of the sweep it takes, inclusive (the sweep's other sizes are not its range).
    pub range: (usize, usize),
    /// Every iteration waits for another PE's progress on the device (ping-pongs,
    /// barriers and collectives on GPU PEs): such cases get at most
    /// [`crate::plan::PlanSettings::sync_iters`] iterations, since PEs that share a GPU
    /// take turns on it.
    pub sync: bool,
}

/// Every size.
const ANY: (usize, usize) = (0, usize::MAX);
/// The sizes of the CPU message-rate case ([`Op::PutNbiRate`]): small messages, where
/// the per-message cost, not the copy, is what is measured.
pub const RATE: (usize, usize) = (1, 64 << 10);

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
    OpInfo {
        op: Op::Put,
        name: "put",
        shape: Shape::Sweep,
        pattern: Pattern::Pairs,
        about: "putmem + quiet",
        unit: 1,
        heap: heap_message,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::PutNbi,
        name: "put_nbi",
        shape: Shape::Sweep,
        pattern: Pattern::Pairs,
        about: "putmem_nbi; one quiet per block",
        unit: 1,
        heap: heap_message,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::Get,
        name: "get",
        shape: Shape::Sweep,
        pattern: Pattern::Pairs,
        about: "getmem",
        unit: 1,
        heap: heap_message,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::GetNbi,
        name: "get_nbi",
        shape: Shape::Sweep,
        pattern: Pattern::Pairs,
        about: "getmem_nbi; one quiet per block",
        unit: 1,
        heap: heap_message,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::PutNbiRate,
        name: "put_nbi_rate",
        shape: Shape::Sweep,
        pattern: Pattern::Pairs,
        about: "putmem_nbi streamed back to back to one peer, 1 B to 64 KiB; one quiet per block",
        unit: 1,
        heap: heap_message,
        range: RATE,
        sync: false,
    },
    OpInfo {
        op: Op::P,
        name: "p",
        shape: Shape::Word,
        pattern: Pattern::Pairs,
        about: "long p + quiet",
        unit: 1,
        heap: heap_word,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::G,
        name: "g",
        shape: Shape::Word,
        pattern: Pattern::Pairs,
        about: "long g",
        unit: 1,
        heap: heap_word,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::PingPong,
        name: "pingpong",
        shape: Shape::Word,
        pattern: Pattern::Pairs,
        about: "p + wait_until ping-pong; half a round trip",
        unit: 1,
        heap: heap_word,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::SignalPingPong,
        name: "signal_pingpong",
        shape: Shape::Sweep,
        pattern: Pattern::Pairs,
        about: "put_signal + signal_wait_until ping-pong with a message; half a round trip",
        unit: 1,
        heap: heap_message_and_word,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::FetchAdd,
        name: "fetch_add",
        shape: Shape::Word,
        pattern: Pattern::Pairs,
        about: "long atomic_fetch_add",
        unit: 1,
        heap: heap_word,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::Add,
        name: "add",
        shape: Shape::Word,
        pattern: Pattern::Pairs,
        about: "long atomic_add + quiet",
        unit: 1,
        heap: heap_word,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::CompareSwap,
        name: "compare_swap",
        shape: Shape::Word,
        pattern: Pattern::Pairs,
        about: "long atomic_compare_swap (always succeeds)",
        unit: 1,
        heap: heap_word,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::Fetch,
        name: "fetch",
        shape: Shape::Word,
        pattern: Pattern::Pairs,
        about: "long atomic_fetch",
        unit: 1,
        heap: heap_word,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::AddRate,
        name: "add_rate",
        shape: Shape::Word,
        pattern: Pattern::Pairs,
        about: "long atomic_add back to back; one quiet per block",
        unit: 1,
        heap: heap_word,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::IncRate,
        name: "inc_rate",
        shape: Shape::Word,
        pattern: Pattern::Pairs,
        about: "long atomic_inc back to back; one quiet per block",
        unit: 1,
        heap: heap_word,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::SetRate,
        name: "set_rate",
        shape: Shape::Word,
        pattern: Pattern::Pairs,
        about: "long atomic_set back to back; one quiet per block",
        unit: 1,
        heap: heap_word,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::Barrier,
        name: "barrier",
        shape: Shape::NoData,
        pattern: Pattern::All,
        about: "barrier_all",
        unit: 1,
        heap: heap_word,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::Broadcast,
        name: "broadcast",
        shape: Shape::Sweep,
        pattern: Pattern::All,
        about: "broadcast from PE 0 (world team)",
        unit: 8,
        heap: heap_two_messages,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::Fcollect,
        name: "fcollect",
        shape: Shape::Sweep,
        pattern: Pattern::All,
        about: "fcollect; size = bytes each PE contributes",
        unit: 8,
        heap: heap_gather,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::Alltoall,
        name: "alltoall",
        shape: Shape::Sweep,
        pattern: Pattern::All,
        about: "alltoall; size = bytes each pair of PEs exchanges",
        unit: 8,
        heap: heap_alltoall,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::Reduce,
        name: "reduce",
        shape: Shape::Sweep,
        pattern: Pattern::All,
        about: "all-reduce, sum of 64-bit integers; size = the array",
        unit: 8,
        heap: heap_reduce,
        range: ANY,
        sync: false,
    },
    OpInfo {
        op: Op::ReduceScatter,
        name: "reduce_scatter",
        shape: Shape::Sweep,
        pattern: Pattern::All,
        about: "reduce-scatter, sum of 64-bit integers; size = each PE's block of the result",
        unit: 8,
        heap: heap_gather,
        range: ANY,
        sync: false,
    },
];

/// Source and destination of a GPU transfer (both symmetric: the source is device memory too).
fn heap_gpu_pair(bytes: usize, _n: usize) -> usize {
    2 * bytes.max(8)
}

/// Source, destination and the signal word.
fn heap_gpu_signal(bytes: usize, _n: usize) -> usize {
    2 * bytes + 8
}

/// The smallest and largest device bandwidth message.
const BW: (usize, usize) = (64 << 10, 1 << 30);
/// Latency sweeps: 8 B to 64 KiB (one thread moves the message: larger ones are the
/// bandwidth cases' job, and would take seconds per case on one thread).
const LAT: (usize, usize) = (8, 64 << 10);

/// A GPU table entry (collectives take 8-byte elements).
#[allow(clippy::too_many_arguments)]
const fn gpu(
    op: Op,
    name: &'static str,
    shape: Shape,
    pattern: Pattern,
    about: &'static str,
    heap: fn(usize, usize) -> usize,
    range: (usize, usize),
    sync: bool,
) -> OpInfo {
    let unit = if matches!(pattern, Pattern::All) { 8 } else { 1 };
    OpInfo { op, name, shape, pattern, about, unit, heap, range, sync }
}

/// Every operation of the GPU suite, in sweep order. Point-to-point cases run on PE pairs
/// as on CPU PEs; PE 0 reports. Device bandwidth: each iteration is one kernel moving the
/// message (nbi calls, then quiet); latency: one kernel of one thread runs the iterations.
pub const GPU_OPS: &[OpInfo] = &[
    gpu(
        Op::PutBw,
        "put_bw",
        Shape::Sweep,
        Pattern::Pairs,
        "grid of one 1024-thread block per SM, each putmem_nbi_block of its part; quiet",
        heap_gpu_pair,
        BW,
        false,
    ),
    gpu(
        Op::GetBw,
        "get_bw",
        Shape::Sweep,
        Pattern::Pairs,
        "grid of one 1024-thread block per SM, each getmem_nbi_block of its part; quiet",
        heap_gpu_pair,
        BW,
        false,
    ),
    gpu(
        Op::PutBwBlock,
        "put_bw_block",
        Shape::Sweep,
        Pattern::Pairs,
        "one 1024-thread block: putmem_nbi_block of the message; quiet",
        heap_gpu_pair,
        BW,
        false,
    ),
    gpu(
        Op::GetBwBlock,
        "get_bw_block",
        Shape::Sweep,
        Pattern::Pairs,
        "one 1024-thread block: getmem_nbi_block of the message; quiet",
        heap_gpu_pair,
        BW,
        false,
    ),
    gpu(
        Op::PutBwWarp,
        "put_bw_warp",
        Shape::Sweep,
        Pattern::Pairs,
        "one block of 32 warps, each putmem_nbi_warp of its part; quiet",
        heap_gpu_pair,
        BW,
        false,
    ),
    gpu(
        Op::GetBwWarp,
        "get_bw_warp",
        Shape::Sweep,
        Pattern::Pairs,
        "one block of 32 warps, each getmem_nbi_warp of its part; quiet",
        heap_gpu_pair,
        BW,
        false,
    ),
    gpu(
        Op::PutBwThread,
        "put_bw_thread",
        Shape::Sweep,
        Pattern::Pairs,
        "one block of 1024 threads, each putmem_nbi of its part; quiet",
        heap_gpu_pair,
        BW,
        false,
    ),
    gpu(
        Op::GetBwThread,
        "get_bw_thread",
        Shape::Sweep,
        Pattern::Pairs,
        "one block of 1024 threads, each getmem_nbi of its part; quiet",
        heap_gpu_pair,
        BW,
        false,
    ),
    gpu(Op::PutLat, "put_lat", Shape::Sweep, Pattern::Pairs, "one thread: putmem + quiet", heap_gpu_pair, LAT, false),
    gpu(Op::GetLat, "get_lat", Shape::Sweep, Pattern::Pairs, "one thread: getmem", heap_gpu_pair, LAT, false),
    gpu(Op::GpuP, "p", Shape::Word, Pattern::Pairs, "one thread: uint64 p + quiet", heap_gpu_pair, ANY, false),
    gpu(Op::GpuG, "g", Shape::Word, Pattern::Pairs, "one thread: uint64 g, each depending on the last", heap_gpu_pair, ANY, false),
    gpu(
        Op::GpuFetchAdd,
        "fetch_add",
        Shape::Word,
        Pattern::Pairs,
        "one thread: uint64 atomic_fetch_add, each depending on the last",
        heap_gpu_pair,
        ANY,
        false,
    ),
    gpu(
        Op::GpuSignalPingPong,
        "signal_pingpong",
        Shape::Sweep,
        Pattern::Pairs,
        "one thread per PE: putmem_signal + signal_wait_until ping-pong; half a round trip",
        heap_gpu_signal,
        LAT,
        true,
    ),
    gpu(Op::GpuBarrier, "barrier", Shape::NoData, Pattern::All, "one thread per PE: device barrier_all", heap_word, ANY, true),
    gpu(Op::BarrierOnStream, "barrier_on_stream", Shape::NoData, Pattern::All, "barrier_all enqueued on a stream", heap_word, ANY, true),
    gpu(
        Op::BroadcastOnStream,
        "broadcast_on_stream",
        Shape::Sweep,
        Pattern::All,
        "broadcast of 64-bit integers from PE 0 on a stream",
        heap_two_messages,
        ANY,
        true,
    ),
    gpu(
        Op::FcollectOnStream,
        "fcollect_on_stream",
        Shape::Sweep,
        Pattern::All,
        "fcollect on a stream; size = bytes each PE contributes",
        heap_gather,
        ANY,
        true,
    ),
    gpu(
        Op::AlltoallOnStream,
        "alltoall_on_stream",
        Shape::Sweep,
        Pattern::All,
        "alltoall on a stream; size = bytes each pair of PEs exchanges",
        heap_alltoall,
        ANY,
        true,
    ),
    gpu(
        Op::ReduceOnStream,
        "reduce_on_stream",
        Shape::Sweep,
        Pattern::All,
        "all-reduce on a stream, sum of 64-bit integers; size = the array",
        heap_two_messages,
        ANY,
        true,
    ),
    gpu(
        Op::ReduceScatterOnStream,
        "reduce_scatter_on_stream",
        Shape::Sweep,
        Pattern::All,
        "reduce-scatter on a stream, sum of 64-bit integers; size = each PE's block",
        heap_gather,
        ANY,
        true,
    ),
];

impl Op {
    /// This operation's table entry.
    pub fn info(self) -> &'static OpInfo {
        OPS.iter().chain(GPU_OPS).find(|i| i.op == self).expect("every Op has a table entry")
    }

    /// The suite it belongs to.
    pub fn suite(self) -> Suite {
        if GPU_OPS.iter().any(|i| i.op == self) {
            Suite::Gpu
        } else {
            Suite::Cpu
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The operation of `suite` called `name`, if its table has it.
    pub fn from_name(suite: Suite, name: &str) -> Option<Op> {
        suite.ops().iter().find(|i| i.name == name).map(|i| i.op)
    }
}

/// Reads a comma-separated `--ops` filter of `suite` (`None`: every operation) into the
/// operations to run, in table order. Unknown names are errors that list the known ones.
pub fn select(suite: Suite, filter: Option<&str>) -> Result<Vec<Op>, String> {
    let table = suite.ops();
    let Some(filter) = filter else {
        return Ok(table.iter().map(|i| i.op).collect());
    };
    let mut ops = Vec::new();
    for name in filter.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some(op) = Op::from_name(suite, name) else {
            let known: Vec<&str> = table.iter().map(|i| i.name).collect();
            return Err(format!("--ops: unknown {} operation `{name}` (known: {})", suite.name(), known.join(", ")));
        };
        if !ops.contains(&op) {
            ops.push(op);
        }
    }
    ops.sort();
    if ops.is_empty() {
        return Err("--ops names no operation".into());
    }
    Ok(ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_consistent() {
        for suite in [Suite::Cpu, Suite::Gpu] {
            let table = suite.ops();
            for (i, a) in table.iter().enumerate() {
                assert_eq!(Op::from_name(suite, a.name), Some(a.op));
                assert_eq!(a.op.name(), a.name);
                assert_eq!(a.op.suite(), suite, "{}", a.name);
                assert!(table[i + 1..].iter().all(|b| b.name != a.name && b.op != a.op), "{} twice", a.name);
                assert!(a.range.0 <= a.range.1);
            }
        }
        // No variant is in both tables.
        assert!(OPS.iter().all(|a| GPU_OPS.iter().all(|b| a.op != b.op)));
        assert!(OPS.iter().all(|a| !a.sync), "CPU cases are not capped");
        assert_eq!(Suite::from_name("gpu"), Some(Suite::Gpu));
    }

    #[test]
    fn selects_in_table_order() {
        assert_eq!(select(Suite::Cpu, Some("get,put,get")).unwrap(), vec![Op::Put, Op::Get]);
        assert_eq!(select(Suite::Cpu, None).unwrap().len(), OPS.len());
        let g = select(Suite::Gpu, Some("reduce_on_stream,put_bw,p")).unwrap();
        assert_eq!(g, vec![Op::PutBw, Op::GpuP, Op::ReduceOnStream]);
        assert!(select(Suite::Gpu, Some("put_nbi")).unwrap_err().contains("unknown gpu operation"));
    }

    #[test]
    fn reports_unknown_and_missing() {
        let e = select(Suite::Cpu, Some("put,bogus")).unwrap_err();
        assert!(e.contains("bogus") && e.contains("put_nbi"), "{e}");
        assert!(select(Suite::Cpu, Some(",")).is_err());
    }
}
