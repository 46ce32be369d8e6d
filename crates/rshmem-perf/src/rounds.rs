//! Interleaved rounds (`--rounds N`): the driver runs each side's job N times, taking
//! turns (rshmem, the anchors, rshmem, the anchors, ...), so that a slow spell of a shared
//! machine falls on every side alike. Here the rounds' outputs become the report's rows:
//! per case and side, the median of the round medians and their spread
//! ([`crate::stats::over_rounds`]), and the header's description and binding of each
//! side.

use crate::backend::JobOutput;
use crate::plan::Case;
use crate::protocol::parse_binding;
use crate::report::{binding_summary, AnchorCell, Row};
use crate::stats::{over_rounds, Spread, Summary};

/// The figures of `op` at `bytes` in each round that measured it.
fn measured(rounds: &[JobOutput], op: &str, bytes: usize) -> Vec<Summary> {
    rounds.iter().filter_map(|o| o.results.iter().find(|m| m.op == op && m.bytes == bytes).map(|m| m.time)).collect()
}

/// The combined figure of `op` at `bytes` over `rounds`, if one measured it.
fn combined(rounds: &[JobOutput], op: &str, bytes: usize) -> Option<(Summary, Spread)> {
    over_rounds(&measured(rounds, op, bytes))
}

/// One row per case from each side's rounds: `ours[r]` is rshmem's job of round `r`,
/// `theirs[k][r]` anchor `k`'s. An anchor's cell is measured when a round measured it,
/// else skipped when a round skipped it (with its reason), else missing.
pub fn rows(cases: &[Case], ours: &[JobOutput], theirs: &[Vec<JobOutput>]) -> Vec<Row> {
    cases
        .iter()
        .map(|c| {
            let (op, bytes) = (c.op.name(), c.bytes);
            let mine = combined(ours, op, bytes);
            let (cells, spreads) = theirs
                .iter()
                .map(|rounds| match combined(rounds, op, bytes) {
                    Some((s, sp)) => (AnchorCell::Measured(s), Some(sp)),
                    None => {
                        let skip = rounds.iter().flat_map(|o| &o.skips).find(|(o, b, _)| o == op && *b == bytes);
                        (skip.map(|(_, _, why)| AnchorCell::Skipped(why.clone())).unwrap_or(AnchorCell::Missing), None)
                    }
                })
                .unzip();
            Row {
                op: op.into(),
                bytes,
                iters: c.iters,
                reps: c.reps,
                ours: mine.map(|m| m.0),
                anchors: cells,
                ours_spread: mine.map(|m| m.1),
                anchor_spreads: spreads,
            }
        })
        .collect()
}

/// What a side says it is: the first `INFO` line of its first round that is not a PE's
/// binding.
pub fn describe(rounds: &[JobOutput]) -> Option<String> {
    rounds.iter().flat_map(|o| &o.info).find(|i| parse_binding(i).is_none()).cloned()
}

/// How a side's PEs were bound (the first round whose PEs said so), for the header.
pub fn binding(label: &str, rounds: &[JobOutput]) -> Option<String> {
    rounds.iter().find_map(|o| binding_summary(label, &o.info.iter().filter_map(|i| parse_binding(i)).collect::<Vec<_>>()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Op;
    use crate::protocol::Measurement;

    fn round(put_us: f64, info: &[&str]) -> JobOutput {
        let time = Summary { median_us: put_us, min_us: put_us * 0.9, max_us: put_us * 1.1 };
        JobOutput {
            info: info.iter().map(|s| s.to_string()).collect(),
            results: vec![Measurement { op: "put".into(), bytes: 8, iters: 10, reps: 3, time }],
            skips: vec![("barrier".into(), 0, "none here".into())],
            failure: None,
        }
    }

    fn cases() -> Vec<Case> {
        vec![
            Case { op: Op::Put, bytes: 8, iters: 10, warmup: 1, reps: 3 },
            Case { op: Op::Barrier, bytes: 0, iters: 10, warmup: 1, reps: 3 },
        ]
    }

    #[test]
    fn rows_combine_the_rounds() {
        let ours = [round(1.0, &[]), round(3.0, &[]), round(2.0, &[])];
        // The anchor's second round failed before measuring anything.
        let theirs = vec![vec![round(4.0, &[]), JobOutput::default(), round(6.0, &[])]];
        let rows = rows(&cases(), &ours, &theirs);
        let put = &rows[0];
        let o = put.ours.unwrap();
        assert_eq!((o.median_us, o.min_us), (2.0, 0.9));
        assert!((o.max_us - 3.3).abs() < 1e-12);
        let sp = put.ours_spread.unwrap();
        assert_eq!((sp.rounds, sp.min_us, sp.max_us), (3, 1.0, 3.0));
        assert_eq!(put.anchors[0], AnchorCell::Measured(Summary { median_us: 5.0, min_us: 3.6, max_us: 6.0 * 1.1 }));
        let asp = put.anchor_spread(0).unwrap();
        assert_eq!((asp.rounds, asp.min_us, asp.max_us), (2, 4.0, 6.0));
        assert_eq!(put.ratio(0), Some(2.5));
        // Measured by neither side: rshmem has no figure, the anchor's skip is kept.
        assert_eq!(rows[1].ours, None);
        assert_eq!(rows[1].anchors, vec![AnchorCell::Skipped("none here".into())]);
        assert_eq!(rows[1].anchor_spread(0), None);
        // No round of an anchor at all: missing.
        assert_eq!(super::rows(&cases(), &ours, &[vec![]])[0].anchors, vec![AnchorCell::Missing]);
    }

    #[test]
    fn one_round_gives_the_job_figures() {
        let ours = [round(1.5, &[])];
        let rows = rows(&cases(), &ours, &[]);
        assert_eq!(rows[0].ours, Some(ours[0].results[0].time));
        assert!(rows[0].anchors.is_empty() && rows[0].anchor_spreads.is_empty());
    }

    #[test]
    fn description_and_binding_from_info_lines() {
        let r = [round(1.0, &["binding PE 1 cpus 1", "Open MPI OpenSHMEM 4.1.4", "binding PE 0 cpus 0"]), round(1.0, &["other"])];
        assert_eq!(describe(&r).as_deref(), Some("Open MPI OpenSHMEM 4.1.4"));
        assert_eq!(binding("oshmem", &r).as_deref(), Some("oshmem PE0 cpu 0, PE1 cpu 1"));
        let threads = [round(1.0, &["rshmem 0.1.0", "binding PE 0 cpus 0-1", "binding PE 1 cpus 0,1"])];
        assert_eq!(binding("rshmem", &threads).as_deref(), Some("rshmem PE0 cpus 0-1, PE1 cpus 0,1"));
        assert_eq!(binding("x", &[round(1.0, &["no binding here"])]), None);
        assert_eq!(describe(&[]), None);
    }
}
