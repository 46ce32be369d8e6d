//! The plan: the list of cases (operation, size, iterations, warm-up, repetitions) that
//! every side of a run executes. The driver writes it to a file; rshmem's PEs and the
//! anchor program read the same file, so both sides run the same cases with the same
//! counts.

use crate::ops::{Op, Shape, Suite};
use crate::sizes::format_size;
use std::fmt::Write as _;

/// One measured case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    /// The operation.
    pub op: Op,
    /// Message size in bytes (the whole buffer for collectives; 0 for barrier).
    pub bytes: usize,
    /// Iterations per timed repetition.
    pub iters: usize,
    /// Untimed iterations before the first repetition.
    pub warmup: usize,
    /// Timed repetitions (the reported figure is their median).
    pub reps: usize,
}

/// How the cases are derived from the command line.
#[derive(Debug, Clone)]
pub struct PlanSettings {
    /// Sizes of the sweep.
    pub sizes: Vec<usize>,
    /// Iterations per repetition for small messages.
    pub iters: usize,
    /// Warm-up iterations for small messages.
    pub warmup: usize,
    /// Repetitions per case.
    pub reps: usize,
    /// Large messages get fewer iterations: at most this many bytes per repetition
    /// (never fewer than one iteration).
    pub rep_bytes: usize,
    /// Most iterations of a case whose every iteration waits for another PE on the
    /// device ([`crate::ops::OpInfo::sync`]).
    pub sync_iters: usize,
    /// Most symmetric memory per PE one case may need; larger cases are left out.
    pub max_case_heap: usize,
}

impl PlanSettings {
    /// Iterations per repetition for a message of `bytes`.
    pub fn iters_for(&self, bytes: usize) -> usize {
        if bytes == 0 {
            return self.iters.max(1);
        }
        (self.rep_bytes / bytes).clamp(1, self.iters.max(1))
    }

    /// Warm-up iterations for a message of `bytes` (at most one repetition's worth).
    pub fn warmup_for(&self, bytes: usize) -> usize {
        self.warmup.min(self.iters_for(bytes))
    }
}

/// Most symmetric memory per PE one case may need on CPU PEs (the default of
/// [`PlanSettings::max_case_heap`]).
pub const MAX_CASE_HEAP: usize = 2 << 30;
/// The same on GPU PEs (device memory; PEs sharing a GPU share its memory).
pub const MAX_GPU_CASE_HEAP: usize = 8 << 30;

/// The cases for `ops` on `n_pes` PEs, operations outer, sizes inner, and a note for
/// each operation that lost sizes (not a multiple of its element, or over
/// [`PlanSettings::max_case_heap`]). Sizes outside an operation's range are not its
/// cases.
pub fn build(ops: &[Op], s: &PlanSettings, n_pes: usize) -> (Vec<Case>, Vec<String>) {
    let mut cases = Vec::new();
    let mut notes = Vec::new();
    for &op in ops {
        let info = op.info();
        let sizes: Vec<usize> = match info.shape {
            Shape::Sweep => s.sizes.iter().copied().filter(|b| (info.range.0..=info.range.1).contains(b)).collect(),
            Shape::Word => vec![8],
            Shape::NoData => vec![0],
        };
        let (mut unaligned, mut too_big) = (Vec::new(), Vec::new());
        for bytes in sizes {
            if !bytes.is_multiple_of(info.unit) {
                unaligned.push(bytes);
            } else if (info.heap)(bytes, n_pes) > s.max_case_heap {
                too_big.push(bytes);
            } else {
                let (mut iters, mut warmup) = (s.iters_for(bytes), s.warmup_for(bytes));
                if info.sync {
                    iters = iters.min(s.sync_iters.max(1));
                    warmup = warmup.min(iters);
                }
                cases.push(Case { op, bytes, iters, warmup, reps: s.reps.max(1) });
            }
        }
        if !unaligned.is_empty() {
            notes.push(format!("{}: sizes that are not multiples of {} B left out ({} of them)", info.name, info.unit, unaligned.len()));
        }
        if let Some(first) = too_big.first() {
            notes.push(format!(
                "{}: sizes from {} up left out on {n_pes} PEs (over {} of symmetric memory per PE)",
                info.name,
                format_size(*first),
                format_size(s.max_case_heap)
            ));
        }
    }
    (cases, notes)
}

/// Symmetric memory per PE that the largest case needs, plus room for the runtime.
pub fn heap_bytes(cases: &[Case], n_pes: usize) -> usize {
    let largest = cases.iter().map(|c| (c.op.info().heap)(c.bytes, n_pes)).max().unwrap_or(0);
    largest.next_multiple_of(1 << 20) + (64 << 20)
}

/// The plan file's first line.
pub const HEADER: &str = "# rshmem-perf plan v1: case OP BYTES ITERS WARMUP REPS";

/// The plan file's text.
pub fn to_text(cases: &[Case]) -> String {
    let mut t = String::from(HEADER);
    t.push('\n');
    for c in cases {
        let _ = writeln!(t, "case {} {} {} {} {}", c.op.name(), c.bytes, c.iters, c.warmup, c.reps);
    }
    t
}

/// Reads a plan file's text for `suite`; every line is a case, a comment (`#`) or blank.
pub fn parse(text: &str, suite: Suite) -> Result<Vec<Case>, String> {
    let mut cases = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| format!("plan line {}: {why}: `{line}`", n + 1);
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 6 || f[0] != "case" {
            return Err(bad("expected `case OP BYTES ITERS WARMUP REPS`"));
        }
        let op = Op::from_name(suite, f[1]).ok_or_else(|| bad(&format!("unknown {} operation", suite.name())))?;
        let num = |s: &str| s.parse::<usize>().map_err(|_| bad("not a number"));
        let c = Case { op, bytes: num(f[2])?, iters: num(f[3])?, warmup: num(f[4])?, reps: num(f[5])? };
        if c.iters == 0 || c.reps == 0 {
            return Err(bad("iterations and repetitions must be at least 1"));
        }
        cases.push(c);
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> PlanSettings {
        PlanSettings {
            sizes: vec![8, 1024, 1 << 20],
            iters: 100,
            warmup: 10,
            reps: 3,
            rep_bytes: 16 << 20,
            sync_iters: 100,
            max_case_heap: MAX_CASE_HEAP,
        }
    }

    #[test]
    fn scales_iterations_with_size() {
        let s = settings();
        assert_eq!(s.iters_for(8), 100);
        assert_eq!(s.iters_for(0), 100);
        assert_eq!(s.iters_for(1 << 20), 16);
        assert_eq!(s.iters_for(1 << 30), 1);
        assert_eq!(s.warmup_for(8), 10);
        assert_eq!(s.warmup_for(1 << 30), 1);
    }

    #[test]
    fn builds_shapes() {
        let (cases, notes) = build(&[Op::Put, Op::P, Op::Barrier], &settings(), 2);
        let sizes: Vec<(Op, usize)> = cases.iter().map(|c| (c.op, c.bytes)).collect();
        assert_eq!(sizes, vec![(Op::Put, 8), (Op::Put, 1024), (Op::Put, 1 << 20), (Op::P, 8), (Op::Barrier, 0)]);
        assert!(notes.is_empty());
        assert!(heap_bytes(&cases, 2) >= (1 << 20) + (64 << 20));
    }

    #[test]
    fn leaves_out_oversized_cases() {
        let mut s = settings();
        s.sizes = vec![1 << 30, 4 << 30];
        let (cases, notes) = build(&[Op::Get], &s, 2);
        assert_eq!(cases.len(), 1);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("from 4 GiB up"), "{notes:?}");
    }

    #[test]
    fn round_trips_through_text() {
        let (cases, _) = build(&[Op::Get, Op::PingPong], &settings(), 2);
        let text = to_text(&cases);
        assert!(text.starts_with(HEADER));
        assert_eq!(parse(&text, Suite::Cpu).unwrap(), cases);
    }

    #[test]
    fn rejects_bad_lines() {
        assert!(parse("case put 8 1 1", Suite::Cpu).unwrap_err().contains("line 1"));
        assert!(parse("case nope 8 1 1 1", Suite::Cpu).unwrap_err().contains("unknown cpu operation"));
        assert!(parse("# c\n\ncase put x 1 1 1", Suite::Cpu).unwrap_err().contains("line 3"));
        assert!(parse("case put 8 0 1 1", Suite::Cpu).is_err());
        assert!(parse("case put_bw 65536 1 1 1", Suite::Cpu).is_err(), "a GPU operation is not in a CPU plan");
    }

    #[test]
    fn gpu_plan_keeps_ranges_and_caps_device_waits() {
        let s = PlanSettings {
            sizes: crate::sizes::sweep(8, 1 << 30, 2).unwrap(),
            iters: 1000,
            warmup: 100,
            reps: 3,
            rep_bytes: 1 << 30,
            sync_iters: 10,
            max_case_heap: MAX_GPU_CASE_HEAP,
        };
        let ops = [Op::PutBw, Op::PutLat, Op::GpuP, Op::GpuSignalPingPong, Op::BarrierOnStream, Op::AlltoallOnStream];
        let (cases, notes) = build(&ops, &s, 2);
        let sizes = |op: Op| cases.iter().filter(|c| c.op == op).map(|c| c.bytes).collect::<Vec<_>>();
        assert_eq!(sizes(Op::PutBw).first(), Some(&(64 << 10)));
        assert_eq!(sizes(Op::PutBw).last(), Some(&(1 << 30)));
        assert_eq!(sizes(Op::PutBw).len(), 15);
        assert_eq!((sizes(Op::PutLat)[0], *sizes(Op::PutLat).last().unwrap()), (8, 64 << 10));
        assert_eq!(sizes(Op::GpuP), vec![8]);
        assert_eq!(sizes(Op::BarrierOnStream), vec![0]);
        // alltoall at 1 GiB on 2 PEs needs 4 GiB per PE: within the GPU limit.
        assert_eq!(sizes(Op::AlltoallOnStream).last(), Some(&(1 << 30)));
        assert!(notes.is_empty(), "{notes:?}");
        for c in &cases {
            if c.op.info().sync {
                assert!(c.iters <= 10 && c.warmup <= c.iters, "{c:?}");
            } else if c.bytes <= 1 << 20 {
                assert_eq!(c.iters, 1000, "{c:?}");
            }
        }
        assert_eq!(cases.iter().find(|c| c.op == Op::PutBw && c.bytes == 1 << 30).unwrap().iters, 1);
        let text = to_text(&cases);
        assert_eq!(parse(&text, Suite::Gpu).unwrap(), cases);
    }
}
