//! The results of a run: one row per case with rshmem's figures and the anchor's beside
//! them, printed as a table and written as CSV and JSON. With several interleaved rounds
//! ([`Report::rounds`]) each figure is the median of the rounds' medians, with their
//! spread beside it.

use crate::sizes::format_size;
use crate::stats::{gbps, Spread, Summary};
use std::fmt::Write as _;

/// What the anchor says about one case.
#[derive(Debug, Clone, PartialEq)]
pub enum AnchorCell {
    /// No anchor in this run.
    NotRun,
    /// Measured.
    Measured(Summary),
    /// The anchor has no such operation (its reason).
    Skipped(String),
    /// The anchor ran but gave no figure for this case (it failed before it).
    Missing,
}

/// One case of the run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Row {
    /// Operation name.
    pub op: String,
    /// Message size in bytes.
    pub bytes: usize,
    /// Iterations per repetition.
    pub iters: usize,
    /// Repetitions.
    pub reps: usize,
    /// rshmem's figures (None when rshmem's job failed before this case).
    pub ours: Option<Summary>,
    /// Each anchor's, in the order of [`Report::anchors`].
    pub anchors: Vec<AnchorCell>,
    /// The spread of rshmem's round medians (None: not measured).
    pub ours_spread: Option<Spread>,
    /// The spread of each anchor's round medians, in the order of [`Report::anchors`]
    /// (shorter, or None, where there is none).
    pub anchor_spreads: Vec<Option<Spread>>,
}

impl Row {
    /// Anchor `k`'s time over rshmem's time (equal to rshmem's bandwidth over the
    /// anchor's): above 1 means rshmem is faster.
    pub fn ratio(&self, k: usize) -> Option<f64> {
        match (&self.ours, self.anchors.get(k)) {
            (Some(o), Some(AnchorCell::Measured(a))) if o.median_us > 0.0 => Some(a.median_us / o.median_us),
            _ => None,
        }
    }

    /// The spread of anchor `k`'s round medians.
    pub fn anchor_spread(&self, k: usize) -> Option<Spread> {
        self.anchor_spreads.get(k).copied().flatten()
    }
}

/// An anchor that ran beside rshmem.
#[derive(Debug, Clone, PartialEq)]
pub struct AnchorInfo {
    /// Short name (`oshmem`, `nvshmem`, `nccl`): the column heads and the files.
    pub label: String,
    /// What it is (its `INFO` line, or how it was found).
    pub describe: String,
}

/// Everything a run reports.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Number of PEs.
    pub n_pes: usize,
    /// What rshmem ran as.
    pub backend: String,
    /// The anchors that ran, in column order.
    pub anchors: Vec<AnchorInfo>,
    /// Host name, CPU model and load when the run started.
    pub host: String,
    /// Load average (1, 5, 15 minutes) when the run started.
    pub load: String,
    /// The cases.
    pub rows: Vec<Row>,
    /// Notes (anchor unavailable, a job that failed, ...).
    pub notes: Vec<String>,
    /// Interleaved rounds: each side's job ran this many times, alternating with the
    /// others' (1: the figures are one job's medians of repetitions).
    pub rounds: usize,
    /// How each side's PEs were bound, one entry per side that said so (`rshmem PE0
    /// cpus 0-1, PE1 cpus 0-1`).
    pub binding: Vec<String>,
}

/// One side's binding for the header, from the `(PE, CPU list)` its PEs reported:
/// `oshmem PE0 cpu 0, PE1 cpu 1`; `None` when no PE reported.
pub fn binding_summary(label: &str, pes: &[(usize, String)]) -> Option<String> {
    if pes.is_empty() {
        return None;
    }
    let mut pes = pes.to_vec();
    pes.sort();
    pes.dedup_by_key(|(pe, _)| *pe);
    let each: Vec<String> = pes
        .iter()
        .map(|(pe, cpus)| {
            let one = !cpus.contains([',', '-']) && cpus.parse::<usize>().is_ok();
            format!("PE{pe} {} {cpus}", if one { "cpu" } else { "cpus" })
        })
        .collect();
    Some(format!("{label} {}", each.join(", ")))
}

/// A spread for the table: `±7%`, `±0.4%` below 1%, `-` without one.
pub fn format_spread(spread: Option<Spread>, median_us: Option<f64>) -> String {
    match median_us.and_then(|m| spread?.percent(m)) {
        Some(p) if p < 0.95 => format!("±{p:.1}%"),
        Some(p) => format!("±{p:.0}%"),
        None => "-".into(),
    }
}

/// A figure with about three significant digits.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a < 0.01 {
        format!("{v:.4}")
    } else if a < 10.0 {
        format!("{v:.3}")
    } else if a < 100.0 {
        format!("{v:.2}")
    } else if a < 1000.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

fn cell(v: Option<f64>) -> String {
    v.map(fmt_num).unwrap_or_else(|| "-".into())
}

impl Report {
    /// The terminal table: rshmem's columns, then each anchor's time, bandwidth and ratio.
    pub fn table(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(t, "rshmem-perf: {} PEs, {}; {} (load {})", self.n_pes, self.backend, self.host, self.load);
        for a in &self.anchors {
            let _ = writeln!(t, "anchor {}: {}", a.label, a.describe);
        }
        if !self.binding.is_empty() {
            let _ = writeln!(t, "binding: {}", self.binding.join("; "));
        }
        let multi = self.rounds > 1;
        let _ = writeln!(
            t,
            "{}; us = microseconds per operation; GB/s = bytes / time{}",
            if multi {
                format!(
                    "medians over {} interleaved rounds of each round's median of repetitions; ± = half the range of the round medians / their median",
                    self.rounds
                )
            } else {
                "medians of repetitions".to_string()
            },
            if self.anchors.is_empty() { "" } else { "; ratio = anchor time / rshmem time (>1: rshmem faster)" }
        );
        let single = self.anchors.len() == 1;
        // A side's columns: time, its spread over rounds (several rounds only), bandwidth.
        let side = |label: &str| {
            let mut h = vec![format!("{label} us")];
            if multi {
                h.push(format!("{label} ±"));
            }
            h.push(format!("{label} GB/s"));
            h
        };
        let figures = |s: &Summary, spread: Option<Spread>, bytes: usize| {
            let mut l = vec![fmt_num(s.median_us)];
            if multi {
                l.push(format_spread(spread, Some(s.median_us)));
            }
            l.push(cell(gbps(bytes, s.median_us)));
            l
        };
        let blank = |text: &str| vec![text.to_string(); if multi { 3 } else { 2 }];
        let mut header = vec!["op".to_string(), "size".into()];
        header.extend(side("rshmem"));
        for a in &self.anchors {
            header.extend(side(&a.label));
            header.push(if single { "ratio".into() } else { format!("{} ratio", a.label) });
        }
        let mut lines: Vec<Vec<String>> = vec![header];
        for r in &self.rows {
            let size = if r.bytes == 0 { "-".to_string() } else { format_size(r.bytes) };
            let mut l = vec![r.op.clone(), size];
            l.extend(r.ours.map(|s| figures(&s, r.ours_spread, r.bytes)).unwrap_or_else(|| blank("-")));
            for k in 0..self.anchors.len() {
                match r.anchors.get(k).unwrap_or(&AnchorCell::NotRun) {
                    AnchorCell::Measured(a) => l.extend(figures(a, r.anchor_spread(k), r.bytes)),
                    AnchorCell::Skipped(_) => l.extend(blank("n/a")),
                    AnchorCell::Missing | AnchorCell::NotRun => l.extend(blank("-")),
                }
                l.push(r.ratio(k).map(format_ratio).unwrap_or_else(|| "-".into()));
            }
            lines.push(l);
        }
        let widths: Vec<usize> = (0..lines[0].len()).map(|c| lines.iter().map(|l| l[c].len()).max().unwrap_or(0)).collect();
        for l in &lines {
            let mut s = String::new();
            for (c, v) in l.iter().enumerate() {
                if c == 0 {
                    let _ = write!(s, "{v:<w$}", w = widths[c]);
                } else {
                    let _ = write!(s, "  {v:>w$}", w = widths[c]);
                }
            }
            let _ = writeln!(t, "{}", s.trim_end());
        }
        for (k, a) in self.anchors.iter().enumerate() {
            let mut skipped: Vec<String> = self
                .rows
                .iter()
                .filter_map(|r| match r.anchors.get(k) {
                    Some(AnchorCell::Skipped(why)) => Some(format!("{} ({why})", r.op)),
                    _ => None,
                })
                .collect();
            skipped.dedup();
            if !skipped.is_empty() {
                let _ = writeln!(t, "n/a: {} has no such operation: {}", a.label, skipped.join(", "));
            }
        }
        for n in &self.notes {
            let _ = writeln!(t, "note: {n}");
        }
        t
    }

    /// One summary line per anchor (`--cmp`): the rows where rshmem is faster (a ratio
    /// above one) and slower (below one), and the geometric mean of the ratios, over the
    /// rows where both sides measured: `cmp oshmem: 41 faster, 17 slower, geomean 1.23x over 58 rows`.
    pub fn cmp_lines(&self) -> Vec<String> {
        (0..self.anchors.len())
            .map(|k| {
                let label = &self.anchors[k].label;
                let ratios: Vec<f64> = self.rows.iter().filter_map(|r| r.ratio(k)).filter(|x| x.is_finite() && *x > 0.0).collect();
                if ratios.is_empty() {
                    return format!("cmp {label}: no row measured on both sides");
                }
                let faster = ratios.iter().filter(|x| **x > 1.0).count();
                let slower = ratios.iter().filter(|x| **x < 1.0).count();
                let even = ratios.len() - faster - slower;
                let geomean = (ratios.iter().map(|x| x.ln()).sum::<f64>() / ratios.len() as f64).exp();
                let even = if even > 0 { format!(", {even} even") } else { String::new() };
                let n = ratios.len();
                format!(
                    "cmp {label}: {faster} faster, {slower} slower{even}, geomean {} over {n} row{}",
                    format_ratio(geomean),
                    if n == 1 { "" } else { "s" }
                )
            })
            .collect()
    }

    /// The CSV file: one line per case and anchor (one line per case without anchors),
    /// rshmem's figures repeated on each.
    pub fn csv(&self) -> String {
        let mut t = String::from(
            "op,bytes,pes,iters,reps,rshmem_median_us,rshmem_min_us,rshmem_max_us,rshmem_gbps,anchor,anchor_median_us,anchor_min_us,anchor_max_us,anchor_gbps,ratio,anchor_note,\
             rounds,rshmem_round_min_us,rshmem_round_max_us,anchor_round_min_us,anchor_round_max_us\n",
        );
        let f = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
        let spread = |sp: Option<Spread>| format!("{},{}", f(sp.map(|s| s.min_us)), f(sp.map(|s| s.max_us)));
        for r in &self.rows {
            let ours = format!(
                "{},{},{},{},{},{},{},{},{}",
                csv_field(&r.op),
                r.bytes,
                self.n_pes,
                r.iters,
                r.reps,
                f(r.ours.map(|s| s.median_us)),
                f(r.ours.map(|s| s.min_us)),
                f(r.ours.map(|s| s.max_us)),
                f(r.ours.and_then(|s| gbps(r.bytes, s.median_us))),
            );
            let rounds = format!("{},{}", self.rounds, spread(r.ours_spread));
            if self.anchors.is_empty() {
                let _ = writeln!(t, "{ours},,,,,,,,{rounds},,");
                continue;
            }
            for (k, a) in self.anchors.iter().enumerate() {
                let (am, note) = match r.anchors.get(k).unwrap_or(&AnchorCell::NotRun) {
                    AnchorCell::Measured(s) => (Some(*s), String::new()),
                    AnchorCell::Skipped(why) => (None, why.clone()),
                    AnchorCell::Missing => (None, "no result".into()),
                    AnchorCell::NotRun => (None, String::new()),
                };
                let _ = writeln!(
                    t,
                    "{ours},{},{},{},{},{},{},{},{rounds},{}",
                    csv_field(&a.label),
                    f(am.map(|s| s.median_us)),
                    f(am.map(|s| s.min_us)),
                    f(am.map(|s| s.max_us)),
                    f(am.and_then(|s| gbps(r.bytes, s.median_us))),
                    f(r.ratio(k)),
                    csv_field(&note),
                    spread(am.and(r.anchor_spread(k))),
                );
            }
        }
        t
    }

    /// The JSON file.
    pub fn json(&self) -> String {
        let mut t = String::from("{\n");
        let _ = writeln!(t, "  \"pes\": {},", self.n_pes);
        let _ = writeln!(t, "  \"backend\": {},", json_str(&self.backend));
        let list = |v: Vec<String>| v.join(", ");
        let _ = writeln!(
            t,
            "  \"anchors\": [{}],",
            list(
                self.anchors
                    .iter()
                    .map(|a| format!("{{\"label\": {}, \"describe\": {}}}", json_str(&a.label), json_str(&a.describe)))
                    .collect()
            )
        );
        let _ = writeln!(t, "  \"host\": {},", json_str(&self.host));
        let _ = writeln!(t, "  \"load\": {},", json_str(&self.load));
        let _ = writeln!(t, "  \"rounds\": {},", self.rounds);
        let _ = writeln!(t, "  \"binding\": [{}],", list(self.binding.iter().map(|b| json_str(b)).collect()));
        let _ = writeln!(t, "  \"notes\": [{}],", list(self.notes.iter().map(|n| json_str(n)).collect()));
        t.push_str("  \"cases\": [\n");
        let summary = |s: &Summary, spread: Option<Spread>, bytes: usize| {
            let rounds = spread
                .map(|sp| format!(", \"round_min_us\": {}, \"round_max_us\": {}", json_num(sp.min_us), json_num(sp.max_us)))
                .unwrap_or_default();
            format!(
                "\"median_us\": {}, \"min_us\": {}, \"max_us\": {}, \"gbps\": {}{rounds}",
                json_num(s.median_us),
                json_num(s.min_us),
                json_num(s.max_us),
                gbps(bytes, s.median_us).map(json_num).unwrap_or_else(|| "null".into())
            )
        };
        for (i, r) in self.rows.iter().enumerate() {
            let anchors: Vec<String> = self
                .anchors
                .iter()
                .enumerate()
                .map(|(k, a)| {
                    let v = match r.anchors.get(k).unwrap_or(&AnchorCell::NotRun) {
                        AnchorCell::Measured(s) => {
                            let ratio = r.ratio(k).map(json_num).unwrap_or_else(|| "null".into());
                            format!("{{{}, \"ratio\": {ratio}}}", summary(s, r.anchor_spread(k), r.bytes))
                        }
                        AnchorCell::Skipped(why) => format!("{{\"skipped\": {}}}", json_str(why)),
                        AnchorCell::Missing => "{\"missing\": true}".into(),
                        AnchorCell::NotRun => "null".into(),
                    };
                    format!("{}: {v}", json_str(&a.label))
                })
                .collect();
            let _ = write!(
                t,
                "    {{\"op\": {}, \"bytes\": {}, \"iters\": {}, \"reps\": {}, \"rshmem\": {}, \"anchors\": {{{}}}}}",
                json_str(&r.op),
                r.bytes,
                r.iters,
                r.reps,
                r.ours.map(|s| format!("{{{}}}", summary(&s, r.ours_spread, r.bytes))).unwrap_or_else(|| "null".into()),
                anchors.join(", ")
            );
            t.push_str(if i + 1 < self.rows.len() { ",\n" } else { "\n" });
        }
        t.push_str("  ]\n}\n");
        t
    }
}

/// A CSV field, quoted when it needs to be.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A JSON number (non-finite values become null).
pub fn json_num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "null".into()
    }
}

/// A ratio for the table: two decimals, or two significant digits below 0.1 (a row far
/// behind must not read as "0.00x").
fn format_ratio(x: f64) -> String {
    if x >= 0.1 || x == 0.0 || !x.is_finite() {
        format!("{x:.2}x")
    } else {
        let decimals = (1 - x.log10().floor() as i32).clamp(2, 12) as usize;
        format!("{x:.decimals$}x")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(m: f64) -> Summary {
        Summary { median_us: m, min_us: m * 0.9, max_us: m * 1.5 }
    }

    fn report(anchor: bool) -> Report {
        let cells = |c: AnchorCell| if anchor { vec![c] } else { vec![] };
        let rows = vec![
            Row {
                op: "put".into(),
                bytes: 1024,
                iters: 10,
                reps: 3,
                ours: Some(s(0.5)),
                anchors: cells(AnchorCell::Measured(s(1.0))),
                ..Default::default()
            },
            Row {
                op: "barrier".into(),
                bytes: 0,
                iters: 10,
                reps: 3,
                ours: Some(s(2.0)),
                anchors: cells(AnchorCell::Skipped("none, here".into())),
                ..Default::default()
            },
        ];
        Report {
            n_pes: 2,
            backend: "rshmem CPU".into(),
            anchors: if anchor { vec![AnchorInfo { label: "oshmem".into(), describe: "Open MPI".into() }] } else { vec![] },
            host: "host \"x\"".into(),
            load: "0.1 0.2 0.3".into(),
            rows,
            notes: vec![],
            rounds: 1,
            binding: vec![],
        }
    }

    /// Two anchors: one measures put, the other has no put; both skip barrier.
    fn two_anchors() -> Report {
        let mut r = report(true);
        r.anchors.push(AnchorInfo { label: "nccl".into(), describe: "NCCL 2.28".into() });
        r.rows[0].anchors.push(AnchorCell::Skipped("no one-sided put".into()));
        r.rows[1].anchors.push(AnchorCell::Measured(s(4.0)));
        r
    }

    #[test]
    fn small_ratios_keep_two_significant_digits() {
        assert_eq!(format_ratio(2.0), "2.00x");
        assert_eq!(format_ratio(0.1234), "0.12x");
        assert_eq!(format_ratio(0.0025), "0.0025x");
        assert_eq!(format_ratio(0.000_31), "0.00031x");
    }

    #[test]
    fn ratio_is_anchor_over_ours() {
        let r = report(true);
        assert_eq!(r.rows[0].ratio(0), Some(2.0));
        assert_eq!(r.rows[1].ratio(0), None);
        assert_eq!(report(false).rows[0].ratio(0), None);
        let two = two_anchors();
        assert_eq!(two.rows[1].ratio(1), Some(2.0));
        assert_eq!(two.rows[0].ratio(1), None);
    }

    #[test]
    fn table_has_columns() {
        let t = report(true).table();
        assert!(t.contains("oshmem us") && t.contains("ratio"), "{t}");
        let put = t.lines().find(|l| l.starts_with("put")).unwrap();
        let cols: Vec<&str> = put.split_whitespace().collect();
        assert_eq!(cols, ["put", "1", "KiB", "0.500", "2.048", "1.000", "1.024", "2.00x"]);
        let t = report(false).table();
        assert!(!t.contains("ratio =") && !t.lines().any(|l| l.trim_end().ends_with("ratio")), "{t}");
    }

    #[test]
    fn table_with_two_anchors() {
        let t = two_anchors().table();
        let head = t.lines().find(|l| l.starts_with("op")).unwrap();
        assert!(head.contains("oshmem ratio") && head.trim_end().ends_with("nccl ratio"), "{t}");
        let put: Vec<&str> = t.lines().find(|l| l.starts_with("put")).unwrap().split_whitespace().collect();
        assert_eq!(put, ["put", "1", "KiB", "0.500", "2.048", "1.000", "1.024", "2.00x", "n/a", "n/a", "-"]);
        let bar: Vec<&str> = t.lines().find(|l| l.starts_with("barrier")).unwrap().split_whitespace().collect();
        assert_eq!(bar, ["barrier", "-", "2.000", "-", "n/a", "n/a", "-", "4.000", "-", "2.00x"]);
        assert!(t.contains("n/a: nccl has no such operation: put (no one-sided put)"), "{t}");
        assert!(t.contains("anchor nccl: NCCL 2.28"));
    }

    /// `n` rows of put where the anchor's time is `ratios[i]` times rshmem's.
    fn with_ratios(ratios: &[f64]) -> Report {
        let mut r = report(true);
        r.rows = ratios
            .iter()
            .enumerate()
            .map(|(i, x)| Row {
                op: "put".into(),
                bytes: 8 << i,
                iters: 10,
                reps: 3,
                ours: Some(s(1.0)),
                anchors: vec![AnchorCell::Measured(s(*x))],
                ..Default::default()
            })
            .collect();
        r
    }

    #[test]
    fn cmp_counts_and_geomean() {
        // 4 faster (ratio > 1), 2 slower, 1 even; geomean of 2*2*4*0.5*0.25*1*1 = 2^(1/7).
        let mut r = with_ratios(&[2.0, 2.0, 4.0, 0.5, 0.25, 1.0, 1.0 + 1e-9]);
        // A row the anchor skipped and one rshmem lost count in neither.
        r.rows.push(Row { op: "x".into(), anchors: vec![AnchorCell::Skipped("no".into())], ours: Some(s(1.0)), ..Default::default() });
        r.rows.push(Row { op: "y".into(), anchors: vec![AnchorCell::Measured(s(1.0))], ours: None, ..Default::default() });
        assert_eq!(
            r.cmp_lines(),
            vec![format!("cmp oshmem: 4 faster, 2 slower, 1 even, geomean {} over 7 rows", format_ratio(2f64.powf(1.0 / 7.0)))]
        );
        assert_eq!(r.cmp_lines()[0], "cmp oshmem: 4 faster, 2 slower, 1 even, geomean 1.10x over 7 rows");
        let r = with_ratios(&[1.5, 0.5]);
        assert_eq!(r.cmp_lines(), vec!["cmp oshmem: 1 faster, 1 slower, geomean 0.87x over 2 rows"]);
        // One line per anchor; none without anchors.
        let two = two_anchors().cmp_lines();
        assert_eq!(
            two,
            vec!["cmp oshmem: 1 faster, 0 slower, geomean 2.00x over 1 row", "cmp nccl: 1 faster, 0 slower, geomean 2.00x over 1 row"]
        );
        assert!(report(false).cmp_lines().is_empty());
        let mut none = report(true);
        none.rows.truncate(1);
        none.rows[0].anchors = vec![AnchorCell::Missing];
        assert_eq!(none.cmp_lines(), vec!["cmp oshmem: no row measured on both sides"]);
    }

    #[test]
    fn rounds_add_spread_columns() {
        let mut r = report(true);
        // One round: the single-round table, unchanged.
        let single = r.table();
        r.rounds = 3;
        r.rows[0].ours_spread = Some(Spread { rounds: 3, min_us: 0.45, max_us: 0.52 });
        r.rows[0].anchor_spreads = vec![Some(Spread { rounds: 3, min_us: 0.998, max_us: 1.004 })];
        r.binding = vec!["rshmem PE0 cpus 0-1, PE1 cpus 0-1".into(), "oshmem PE0 cpu 0, PE1 cpu 1".into()];
        let t = r.table();
        assert!(t.contains("binding: rshmem PE0 cpus 0-1, PE1 cpus 0-1; oshmem PE0 cpu 0, PE1 cpu 1\n"), "{t}");
        assert!(t.contains("medians over 3 interleaved rounds"), "{t}");
        let head: Vec<&str> =
            t.lines().find(|l| l.starts_with("op")).unwrap().split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
        assert_eq!(head, ["op", "size", "rshmem us", "rshmem ±", "rshmem GB/s", "oshmem us", "oshmem ±", "oshmem GB/s", "ratio"]);
        let put: Vec<&str> = t.lines().find(|l| l.starts_with("put")).unwrap().split_whitespace().collect();
        // (0.52 - 0.45) / 2 / 0.5 = 7%; (1.004 - 0.998) / 2 / 1.0 = 0.3%.
        assert_eq!(put, ["put", "1", "KiB", "0.500", "±7%", "2.048", "1.000", "±0.3%", "1.024", "2.00x"]);
        let bar: Vec<&str> = t.lines().find(|l| l.starts_with("barrier")).unwrap().split_whitespace().collect();
        assert_eq!(bar, ["barrier", "-", "2.000", "-", "-", "n/a", "n/a", "n/a", "-"]);
        assert!(!single.contains('±') && !single.contains("binding:") && single.contains("medians of repetitions;"), "{single}");
        // The files carry the spread too.
        let csv = r.csv();
        let line = csv.lines().nth(1).unwrap();
        assert!(line.ends_with(",3,0.45,0.52,0.998,1.004"), "{line}");
        let j = r.json();
        assert!(j.contains("\"rounds\": 3,") && j.contains("\"round_min_us\": 0.45, \"round_max_us\": 0.52"), "{j}");
        assert!(j.contains("\"binding\": [\"rshmem PE0 cpus 0-1, PE1 cpus 0-1\", \"oshmem PE0 cpu 0, PE1 cpu 1\"]"), "{j}");
    }

    #[test]
    fn binding_summaries() {
        let pes = vec![(1, "1".to_string()), (0, "0".to_string()), (1, "1".to_string())];
        assert_eq!(binding_summary("oshmem", &pes).as_deref(), Some("oshmem PE0 cpu 0, PE1 cpu 1"));
        assert_eq!(binding_summary("rshmem", &[(0, "0-1".into())]).as_deref(), Some("rshmem PE0 cpus 0-1"));
        assert_eq!(binding_summary("x", &[(0, "unknown".into())]).as_deref(), Some("x PE0 cpus unknown"));
        assert_eq!(binding_summary("x", &[]), None);
        assert_eq!(format_spread(None, Some(1.0)), "-");
        assert_eq!(format_spread(Some(Spread { rounds: 2, min_us: 1.0, max_us: 1.0 }), Some(1.0)), "±0.0%");
    }

    #[test]
    fn csv_rows() {
        let c = report(true).csv();
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines.len(), 3);
        let n = lines[0].split(',').count();
        assert_eq!(lines[1].split(',').count(), n);
        assert!(lines[1].starts_with("put,1024,2,10,3,0.5,"));
        assert!(lines[1].contains(",oshmem,1,"));
        assert!(lines[1].ends_with(",2,,1,,,,"), "{c}");
        assert!(lines[2].ends_with(",\"none, here\",1,,,,"), "{c}");
        let none = report(false).csv();
        assert!(none.lines().skip(1).all(|l| l.split(',').count() == n), "{none}");
        let two = two_anchors().csv();
        let lines: Vec<&str> = two.lines().collect();
        assert_eq!(lines.len(), 5, "one line per case and anchor");
        assert!(lines[2].contains(",nccl,") && lines[2].ends_with(",no one-sided put,1,,,,"), "{two}");
        assert!(lines[4].contains(",nccl,4,") && lines[4].contains(",2,"), "{two}");
    }

    #[test]
    fn json_escapes_and_nulls() {
        assert_eq!(json_str("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
        assert_eq!(json_num(f64::NAN), "null");
        let j = report(false).json();
        assert!(j.contains("\"host\": \"host \\\"x\\\"\""));
        assert!(j.contains("\"anchors\": []"));
        assert!(j.contains("\"gbps\": null"), "barrier has no bandwidth: {j}");
        for j in [j, two_anchors().json()] {
            assert_eq!(j.matches('{').count(), j.matches('}').count());
            assert_eq!(j.matches('[').count(), j.matches(']').count());
        }
        let j = two_anchors().json();
        assert!(j.contains("\"nccl\": {\"median_us\": 4, ") && j.contains("\"ratio\": 2}"), "{j}");
        assert!(j.contains("\"nccl\": {\"skipped\": \"no one-sided put\"}"), "{j}");
    }
}
