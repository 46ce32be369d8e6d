//! The results of a run: one row per case with rshmem's figures and the anchor's beside
//! them, printed as a table and written as CSV and JSON.

use crate::sizes::format_size;
use crate::stats::{gbps, Summary};
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
#[derive(Debug, Clone, PartialEq)]
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
#[derive(Debug, Clone)]
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
        let _ = writeln!(
            t,
            "medians of repetitions; us = microseconds per operation; GB/s = bytes / time{}",
            if self.anchors.is_empty() { "" } else { "; ratio = anchor time / rshmem time (>1: rshmem faster)" }
        );
        let single = self.anchors.len() == 1;
        let mut header = vec!["op".to_string(), "size".into(), "rshmem us".into(), "rshmem GB/s".into()];
        for a in &self.anchors {
            let al = &a.label;
            header.extend([format!("{al} us"), format!("{al} GB/s"), if single { "ratio".into() } else { format!("{al} ratio") }]);
        }
        let mut lines: Vec<Vec<String>> = vec![header];
        for r in &self.rows {
            let size = if r.bytes == 0 { "-".to_string() } else { format_size(r.bytes) };
            let mut l = vec![r.op.clone(), size, cell(r.ours.map(|s| s.median_us)), cell(r.ours.and_then(|s| gbps(r.bytes, s.median_us)))];
            for k in 0..self.anchors.len() {
                match r.anchors.get(k).unwrap_or(&AnchorCell::NotRun) {
                    AnchorCell::Measured(a) => {
                        l.push(fmt_num(a.median_us));
                        l.push(cell(gbps(r.bytes, a.median_us)));
                        l.push(r.ratio(k).map(format_ratio).unwrap_or_else(|| "-".into()));
                    }
                    AnchorCell::Skipped(_) => l.extend(["n/a".into(), "n/a".into(), "-".into()]),
                    AnchorCell::Missing | AnchorCell::NotRun => l.extend(["-".into(), "-".into(), "-".into()]),
                }
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

    /// The CSV file: one line per case and anchor (one line per case without anchors),
    /// rshmem's figures repeated on each.
    pub fn csv(&self) -> String {
        let mut t = String::from(
            "op,bytes,pes,iters,reps,rshmem_median_us,rshmem_min_us,rshmem_max_us,rshmem_gbps,anchor,anchor_median_us,anchor_min_us,anchor_max_us,anchor_gbps,ratio,anchor_note\n",
        );
        let f = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
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
            if self.anchors.is_empty() {
                let _ = writeln!(t, "{ours},,,,,,,");
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
                    "{ours},{},{},{},{},{},{},{}",
                    csv_field(&a.label),
                    f(am.map(|s| s.median_us)),
                    f(am.map(|s| s.min_us)),
                    f(am.map(|s| s.max_us)),
                    f(am.and_then(|s| gbps(r.bytes, s.median_us))),
                    f(r.ratio(k)),
                    csv_field(&note),
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
        let _ = writeln!(t, "  \"notes\": [{}],", list(self.notes.iter().map(|n| json_str(n)).collect()));
        t.push_str("  \"cases\": [\n");
        let summary = |s: &Summary, bytes: usize| {
            format!(
                "\"median_us\": {}, \"min_us\": {}, \"max_us\": {}, \"gbps\": {}",
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
                            format!("{{{}, \"ratio\": {}}}", summary(s, r.bytes), r.ratio(k).map(json_num).unwrap_or_else(|| "null".into()))
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
                r.ours.map(|s| format!("{{{}}}", summary(&s, r.bytes))).unwrap_or_else(|| "null".into()),
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
            Row { op: "put".into(), bytes: 1024, iters: 10, reps: 3, ours: Some(s(0.5)), anchors: cells(AnchorCell::Measured(s(1.0))) },
            Row {
                op: "barrier".into(),
                bytes: 0,
                iters: 10,
                reps: 3,
                ours: Some(s(2.0)),
                anchors: cells(AnchorCell::Skipped("none, here".into())),
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

    #[test]
    fn csv_rows() {
        let c = report(true).csv();
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines.len(), 3);
        let n = lines[0].split(',').count();
        assert_eq!(lines[1].split(',').count(), n);
        assert!(lines[1].starts_with("put,1024,2,10,3,0.5,"));
        assert!(lines[1].contains(",oshmem,1,"));
        assert!(lines[1].ends_with(",2,"));
        assert!(lines[2].ends_with(",\"none, here\""));
        let none = report(false).csv();
        assert!(none.lines().skip(1).all(|l| l.split(',').count() == n), "{none}");
        let two = two_anchors().csv();
        let lines: Vec<&str> = two.lines().collect();
        assert_eq!(lines.len(), 5, "one line per case and anchor");
        assert!(lines[2].contains(",nccl,") && lines[2].ends_with(",no one-sided put"), "{two}");
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
