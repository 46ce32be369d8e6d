//! The plan: the list of cases (operation, size, iterations, warm-up, repetitions) that
//! every side of a run executes. The driver writes it to a file; rshmem's PEs and the
//! anchor program read the same file, so both sides run the same cases with the same
//! counts.

use crate::ops::{Op, Shape};
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

/// Most symmetric memory per PE one case may need; larger cases are left out.
pub const MAX_CASE_HEAP: usize = 2 << 30;

/// The cases for `ops` on `n_pes` PEs, operations outer, sizes inner, and a note for
/// each operation that lost sizes (not a multiple of its element, or over
/// [`MAX_CASE_HEAP`]).
pub fn build(ops: &[Op], s: &PlanSettings, n_pes: usize) -> (Vec<Case>, Vec<String>) {
    let mut cases = Vec::new();
    let mut notes = Vec::new();
    for &op in ops {
        let info = op.info();
        let sizes: Vec<usize> = match info.shape {
            Shape::Sweep => s.sizes.clone(),
            Shape::Word => vec![8],
            Shape::NoData => vec![0],
        };
        let (mut unaligned, mut too_big) = (Vec::new(), Vec::new());
        for bytes in sizes {
            if !bytes.is_multiple_of(info.unit) {
                unaligned.push(bytes);
            } else if (info.heap)(bytes, n_pes) > MAX_CASE_HEAP {
                too_big.push(bytes);
            } else {
                cases.push(Case { op, bytes, iters: s.iters_for(bytes), warmup: s.warmup_for(bytes), reps: s.reps.max(1) });
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
                format_size(MAX_CASE_HEAP)
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

/// Reads a plan file's text; every line is a case, a comment (`#`) or blank.
pub fn parse(text: &str) -> Result<Vec<Case>, String> {
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
        let op = Op::from_name(f[1]).ok_or_else(|| bad("unknown operation"))?;
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
        PlanSettings { sizes: vec![8, 1024, 1 << 20], iters: 100, warmup: 10, reps: 3, rep_bytes: 16 << 20 }
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
        assert_eq!(parse(&text).unwrap(), cases);
    }

    #[test]
    fn rejects_bad_lines() {
        assert!(parse("case put 8 1 1").unwrap_err().contains("line 1"));
        assert!(parse("case nope 8 1 1 1").unwrap_err().contains("unknown operation"));
        assert!(parse("# c\n\ncase put x 1 1 1").unwrap_err().contains("line 3"));
        assert!(parse("case put 8 0 1 1").is_err());
    }
}
