//! SVG plots written by hand: a grid of panels, one per operation, each with rshmem's
//! curve and the anchor's on log-log axes (size on x, latency or bandwidth on y).

use crate::report::{AnchorCell, Report};
use crate::sizes::format_size;
use crate::stats::gbps;
use std::fmt::Write as _;

/// One curve.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend name.
    pub name: String,
    /// (x, y) points; those with a non-positive coordinate are not drawn.
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed (the anchor).
    pub dashed: bool,
    /// Stroke colour.
    pub color: &'static str,
}

/// One panel of the grid.
#[derive(Debug, Clone)]
pub struct Panel {
    /// Title (the operation).
    pub title: String,
    /// Its curves.
    pub series: Vec<Series>,
}

const PANEL_W: f64 = 380.0;
const PANEL_H: f64 = 260.0;
const COLUMNS: usize = 3;
const MARGIN_L: f64 = 62.0;
const MARGIN_R: f64 = 14.0;
const MARGIN_T: f64 = 26.0;
const MARGIN_B: f64 = 40.0;
const HEADER_H: f64 = 54.0;
const OURS: &str = "#1f5fbf";
/// Colours of the anchors' curves, in anchor order.
const ANCHORS: [&str; 3] = ["#d9741c", "#2a9d4b", "#9b3fb5"];

/// Escapes text for XML.
pub fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The log2 range covering `xs`: whole powers of two, at least one step wide.
fn x_range(xs: &[f64]) -> (f64, f64) {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min).log2().floor();
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max).log2().ceil();
    if hi > lo {
        (lo, hi)
    } else {
        (lo - 1.0, hi + 1.0)
    }
}

/// The log10 range covering `ys`: whole decades, at least one wide.
fn y_range(ys: &[f64]) -> (f64, f64) {
    let lo = ys.iter().copied().fold(f64::INFINITY, f64::min).log10().floor();
    let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max).log10().ceil();
    if hi > lo {
        (lo, hi)
    } else {
        (lo, lo + 1.0)
    }
}

fn y_label(decade: i32) -> String {
    if (-2..=4).contains(&decade) {
        let v = 10f64.powi(decade);
        if decade < 0 {
            format!("{v:.*}", (-decade) as usize)
        } else {
            format!("{v:.0}")
        }
    } else {
        format!("1e{decade}")
    }
}

fn panel_svg(out: &mut String, p: &Panel, ox: f64, oy: f64, y_name: &str) {
    let pts: Vec<(f64, f64)> = p.series.iter().flat_map(|s| s.points.iter().copied()).filter(|(x, y)| *x > 0.0 && *y > 0.0).collect();
    let _ = writeln!(out, "<g transform=\"translate({ox},{oy})\">");
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"17\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">{}</text>",
        PANEL_W / 2.0,
        xml(&p.title)
    );
    let (pw, ph) = (PANEL_W - MARGIN_L - MARGIN_R, PANEL_H - MARGIN_T - MARGIN_B);
    let _ = writeln!(out, "<rect x=\"{MARGIN_L}\" y=\"{MARGIN_T}\" width=\"{pw}\" height=\"{ph}\" fill=\"white\" stroke=\"#888\"/>");
    if pts.is_empty() {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">no data</text>",
            MARGIN_L + pw / 2.0,
            MARGIN_T + ph / 2.0
        );
        out.push_str("</g>\n");
        return;
    }
    let xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
    let ys: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let ((x0, x1), (y0, y1)) = (x_range(&xs), y_range(&ys));
    // x ticks: powers of two, thinned to at most 8 labels; the axis ends on a tick.
    let step = (((x1 - x0) as i64 + 7) / 8).max(1);
    let x1 = x0 + (((x1 - x0) as i64 + step - 1) / step * step) as f64;
    let px = |x: f64| MARGIN_L + (x.log2() - x0) / (x1 - x0) * pw;
    let py = |y: f64| MARGIN_T + ph - (y.log10() - y0) / (y1 - y0) * ph;
    let mut e = x0 as i64;
    while e <= x1 as i64 {
        let x = MARGIN_L + (e as f64 - x0) / (x1 - x0) * pw;
        let _ = writeln!(out, "<line x1=\"{x:.1}\" y1=\"{MARGIN_T}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#e4e4e4\"/>", MARGIN_T + ph);
        let label = if (0..63).contains(&e) { format_size(1usize << e) } else { format!("2^{e}") };
        let _ = writeln!(
            out,
            "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"10\">{}</text>",
            MARGIN_T + ph + 14.0,
            xml(&label)
        );
        e += step;
    }
    for d in (y0 as i32)..=(y1 as i32) {
        let y = MARGIN_T + ph - (d as f64 - y0) / (y1 - y0) * ph;
        let _ = writeln!(out, "<line x1=\"{MARGIN_L}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#e4e4e4\"/>", MARGIN_L + pw);
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"10\">{}</text>",
            MARGIN_L - 5.0,
            y + 3.5,
            y_label(d)
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\">message size</text>",
        MARGIN_L + pw / 2.0,
        PANEL_H - 6.0
    );
    let _ = writeln!(
        out,
        "<text x=\"14\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" transform=\"rotate(-90 14 {:.1})\">{}</text>",
        MARGIN_T + ph / 2.0,
        MARGIN_T + ph / 2.0,
        xml(y_name)
    );
    for s in &p.series {
        let mut sp: Vec<(f64, f64)> = s.points.iter().copied().filter(|(x, y)| *x > 0.0 && *y > 0.0).collect();
        sp.sort_by(|a, b| a.0.total_cmp(&b.0));
        if sp.is_empty() {
            continue;
        }
        let path: Vec<String> = sp.iter().map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y))).collect();
        let dash = if s.dashed { " stroke-dasharray=\"6 4\"" } else { "" };
        let _ = writeln!(out, "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{dash} points=\"{}\"/>", s.color, path.join(" "));
        for &(x, y) in &sp {
            let _ = writeln!(out, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{}\"/>", px(x), py(y), s.color);
        }
    }
    out.push_str("</g>\n");
}

/// A grid of panels as an SVG document.
pub fn grid(title: &str, y_name: &str, panels: &[Panel]) -> String {
    let cols = COLUMNS.min(panels.len().max(1));
    let rows = panels.len().div_ceil(cols).max(1);
    let (w, h) = (cols as f64 * PANEL_W, HEADER_H + rows as f64 * PANEL_H);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\">"
    );
    let _ = writeln!(out, "<rect width=\"{w}\" height=\"{h}\" fill=\"#fafafa\"/>");
    let _ = writeln!(out, "<text x=\"12\" y=\"22\" font-size=\"16\" font-weight=\"bold\">{}</text>", xml(title));
    let mut legend_x = 12.0;
    let mut seen: Vec<(String, &str, bool)> = Vec::new();
    for s in panels.iter().flat_map(|p| &p.series) {
        if !seen.iter().any(|(n, _, _)| *n == s.name) {
            seen.push((s.name.clone(), s.color, s.dashed));
        }
    }
    for (name, color, dashed) in &seen {
        let dash = if *dashed { " stroke-dasharray=\"6 4\"" } else { "" };
        let _ = writeln!(
            out,
            "<line x1=\"{legend_x}\" y1=\"40\" x2=\"{}\" y2=\"40\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>",
            legend_x + 28.0
        );
        let _ = writeln!(out, "<text x=\"{}\" y=\"44\" font-size=\"12\">{}</text>", legend_x + 34.0, xml(name));
        legend_x += 60.0 + 8.0 * name.len() as f64;
    }
    if panels.is_empty() {
        let _ = writeln!(
            out,
            "<text x=\"12\" y=\"{}\" font-size=\"13\">no operation with more than one size in this run</text>",
            HEADER_H + 30.0
        );
    }
    for (i, p) in panels.iter().enumerate() {
        panel_svg(&mut out, p, (i % cols) as f64 * PANEL_W, HEADER_H + (i / cols) as f64 * PANEL_H, y_name);
    }
    out.push_str("</svg>\n");
    out
}

/// What a plot shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Microseconds per operation.
    Latency,
    /// GB/s.
    Bandwidth,
}

/// The panels of `report` for `metric`: one per operation that ran at more than one size.
pub fn panels(report: &Report, metric: Metric) -> Vec<Panel> {
    let mut ops: Vec<&str> = Vec::new();
    for r in &report.rows {
        if !ops.contains(&r.op.as_str()) {
            ops.push(&r.op);
        }
    }
    let value = |bytes: usize, us: f64| match metric {
        Metric::Latency => Some(us),
        Metric::Bandwidth => gbps(bytes, us),
    };
    let mut out = Vec::new();
    for op in ops {
        let rows: Vec<_> = report.rows.iter().filter(|r| r.op == op && r.bytes > 0).collect();
        if rows.len() < 2 {
            continue;
        }
        let ours: Vec<(f64, f64)> =
            rows.iter().filter_map(|r| r.ours.and_then(|s| value(r.bytes, s.median_us)).map(|v| (r.bytes as f64, v))).collect();
        let mut series = vec![Series { name: "rshmem".into(), points: ours, dashed: false, color: OURS }];
        for (k, a) in report.anchors.iter().enumerate() {
            let theirs: Vec<(f64, f64)> = rows
                .iter()
                .filter_map(|r| match r.anchors.get(k) {
                    Some(AnchorCell::Measured(m)) => value(r.bytes, m.median_us).map(|v| (r.bytes as f64, v)),
                    _ => None,
                })
                .collect();
            if !theirs.is_empty() {
                series.push(Series { name: a.label.clone(), points: theirs, dashed: true, color: ANCHORS[k % ANCHORS.len()] });
            }
        }
        out.push(Panel { title: op.to_string(), series });
    }
    out
}

/// The plot of `report` for `metric`, as an SVG document.
pub fn plot(report: &Report, metric: Metric) -> String {
    let (what, unit) = match metric {
        Metric::Latency => ("latency", "us per operation"),
        Metric::Bandwidth => ("bandwidth", "GB/s"),
    };
    let labels: Vec<&str> = report.anchors.iter().map(|a| a.label.as_str()).collect();
    let vs = if labels.is_empty() { String::new() } else { format!(" vs {}", labels.join(", ")) };
    grid(&format!("rshmem-perf {what}{vs}, {} PEs (medians)", report.n_pes), unit, &panels(report, metric))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{AnchorInfo, Row};
    use crate::stats::Summary;

    fn summary(m: f64) -> Summary {
        Summary { median_us: m, min_us: m, max_us: m }
    }

    fn report() -> Report {
        let mut rows = Vec::new();
        for (i, bytes) in [8usize, 1024, 65536].into_iter().enumerate() {
            rows.push(Row {
                op: "put".into(),
                bytes,
                iters: 1,
                reps: 1,
                ours: Some(summary(0.1 * (i + 1) as f64)),
                anchors: vec![AnchorCell::Measured(summary(0.2 * (i + 1) as f64)), AnchorCell::Skipped("no".into())],
            });
        }
        rows.push(Row {
            op: "barrier".into(),
            bytes: 0,
            iters: 1,
            reps: 1,
            ours: Some(summary(1.0)),
            anchors: vec![AnchorCell::Skipped("x".into()), AnchorCell::Measured(summary(1.0))],
        });
        Report {
            n_pes: 2,
            backend: "b".into(),
            anchors: vec![
                AnchorInfo { label: "nvshmem".into(), describe: "a".into() },
                AnchorInfo { label: "nccl".into(), describe: "b".into() },
            ],
            host: "h".into(),
            load: "0".into(),
            rows,
            left_out: vec![],
            notes: vec![],
        }
    }

    #[test]
    fn one_panel_per_swept_op() {
        let p = panels(&report(), Metric::Bandwidth);
        assert_eq!(p.len(), 1, "barrier has no sizes to plot");
        assert_eq!(p[0].series.len(), 2);
        assert_eq!(p[0].series[0].points[0], (8.0, 0.08));
    }

    #[test]
    fn svg_is_well_formed() {
        for m in [Metric::Latency, Metric::Bandwidth] {
            let s = plot(&report(), m);
            assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
            assert_eq!(s.matches("<polyline").count(), 2);
            assert_eq!(s.matches("<g ").count(), s.matches("</g>").count());
            assert!(s.contains("stroke-dasharray"), "anchor is dashed");
            assert!(s.contains(">8 B<") && s.contains(">32 KiB<"), "x labels are sizes");
            assert!(!s.contains("NaN") && !s.contains("inf"));
        }
        let empty = grid("t <&>", "us", &[]);
        assert!(empty.contains("t &lt;&amp;&gt;") && empty.contains("no operation"));
    }

    #[test]
    fn ranges_are_whole_steps() {
        assert_eq!(x_range(&[8.0, 1024.0]), (3.0, 10.0));
        assert_eq!(x_range(&[8.0]), (2.0, 4.0));
        assert_eq!(y_range(&[0.05, 3.0]), (-2.0, 1.0));
        assert_eq!(y_range(&[10.0]), (1.0, 2.0));
        assert_eq!(y_label(-2), "0.01");
        assert_eq!(y_label(3), "1000");
        assert_eq!(y_label(7), "1e7");
    }
}
