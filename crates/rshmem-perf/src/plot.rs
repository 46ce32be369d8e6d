//! The SVG plots, drawn with `plotters`: a grid of panels, one per operation swept over
//! sizes, each with rshmem's curve (solid) and every anchor's (dashed) on log-log axes
//! (message size on x, latency or bandwidth on y).

use crate::report::{AnchorCell, Report};
use crate::sizes::format_size;
use crate::stats::gbps;
use plotters::coord::combinators::IntoLogRange;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

/// One curve.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend name.
    pub name: String,
    /// (x, y) points; those with a non-positive coordinate are not drawn.
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed (an anchor).
    pub dashed: bool,
    /// Stroke colour.
    pub color: RGBColor,
}

/// One panel of the grid.
#[derive(Debug, Clone)]
pub struct Panel {
    /// Title (the operation).
    pub title: String,
    /// Its curves.
    pub series: Vec<Series>,
}

/// What a plot shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Microseconds per operation.
    Latency,
    /// GB/s.
    Bandwidth,
}

const PANEL: (u32, u32) = (380, 260);
const COLUMNS: usize = 3;
const HEADER: u32 = 40;
const OURS: RGBColor = RGBColor(0x1f, 0x5f, 0xbf);
/// Colours of the anchors' curves, in anchor order.
const ANCHORS: [RGBColor; 3] = [RGBColor(0xd9, 0x74, 0x1c), RGBColor(0x2a, 0x9d, 0x4b), RGBColor(0x9b, 0x3f, 0xb5)];

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

/// A log axis from `base^lo` to `base^hi`, a hair wider so that the end powers (which
/// plotters finds by rounding a logarithm) are ticks.
fn log_axis(base: f64, lo: f64, hi: f64) -> plotters::coord::combinators::LogCoord<f64> {
    (base.powf(lo) * 0.999..base.powf(hi) * 1.001).log_scale().base(base).into()
}

/// A y tick label: plain for 0.001 to 99999, else in e notation.
fn y_label(v: f64) -> String {
    if (1e-3..1e5).contains(&v) {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.0e}")
    }
}

/// An x tick label: the size (powers of two are whole sizes).
fn x_label(v: f64) -> String {
    if v >= 1.0 && v < 2f64.powi(63) {
        format_size(v.round() as usize)
    } else {
        format!("{v:e}")
    }
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type DrawResult<T> = Result<T, DrawingAreaErrorKind<<SVGBackend<'static> as DrawingBackend>::ErrorType>>;

/// Draws panel `p` into `area`, its y axis named `y_name`.
fn draw_panel(area: &Area, p: &Panel, y_name: &str) -> DrawResult<()> {
    let positive = |pts: &[(f64, f64)]| -> Vec<(f64, f64)> {
        let mut v: Vec<(f64, f64)> = pts.iter().copied().filter(|(x, y)| *x > 0.0 && *y > 0.0).collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    };
    let all: Vec<(f64, f64)> = p.series.iter().flat_map(|s| positive(&s.points)).collect();
    if all.is_empty() {
        area.titled(&p.title, ("sans-serif", 14))?.draw_text("no data", &("sans-serif", 12).into(), (150, 100))?;
        return Ok(());
    }
    let xs: Vec<f64> = all.iter().map(|p| p.0).collect();
    let ys: Vec<f64> = all.iter().map(|p| p.1).collect();
    let ((x0, x1), (y0, y1)) = (x_range(&xs), y_range(&ys));
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, ("sans-serif", 14))
        .margin(6)
        .x_label_area_size(32)
        .y_label_area_size(48)
        .build_cartesian_2d(log_axis(2.0, x0, x1), log_axis(10.0, y0, y1))?;
    chart
        .configure_mesh()
        .x_labels(8)
        .y_labels(5)
        .x_label_formatter(&|x| x_label(*x))
        .y_label_formatter(&|y| y_label(*y))
        .x_desc("message size")
        .y_desc(y_name)
        .label_style(("sans-serif", 10))
        .draw()?;
    for s in &p.series {
        let pts = positive(&s.points);
        let style = s.color.stroke_width(2);
        if s.dashed {
            chart
                .draw_series(DashedLineSeries::new(pts.clone(), 6, 4, style))?
                .label(&s.name)
                .legend(move |(x, y)| DashedPathElement::new([(x, y), (x + 20, y)], 4, 3, style));
        } else {
            chart
                .draw_series(LineSeries::new(pts.clone(), style))?
                .label(&s.name)
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
        }
        chart.draw_series(pts.iter().map(|&(x, y)| Circle::new((x, y), 2, s.color.filled())))?;
    }
    chart.configure_series_labels().position(SeriesLabelPosition::UpperLeft).background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
    Ok(())
}

/// A grid of panels as an SVG document, titled `title`, the y axes named `y_name`.
pub fn grid(title: &str, y_name: &str, panels: &[Panel]) -> Result<String, String> {
    let cols = COLUMNS.min(panels.len().max(1));
    let rows = panels.len().div_ceil(cols).max(1);
    let size = (cols as u32 * PANEL.0, HEADER + rows as u32 * PANEL.1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        let draw = || -> DrawResult<()> {
            root.fill(&WHITE)?;
            let (head, body) = root.split_vertically(HEADER);
            head.draw_text(title, &("sans-serif", 16).into(), (12, 12))?;
            if panels.is_empty() {
                body.draw_text("no operation with more than one size in this run", &("sans-serif", 13).into(), (12, 20))?;
            }
            for (area, p) in body.split_evenly((rows, cols)).iter().zip(panels) {
                draw_panel(area, p, y_name)?;
            }
            root.present()
        };
        draw().map_err(|e| format!("cannot draw {title}: {e}"))?;
    }
    Ok(svg)
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
pub fn plot(report: &Report, metric: Metric) -> Result<String, String> {
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
                ..Default::default()
            });
        }
        rows.push(Row {
            op: "barrier".into(),
            bytes: 0,
            iters: 1,
            reps: 1,
            ours: Some(summary(1.0)),
            anchors: vec![AnchorCell::Skipped("x".into()), AnchorCell::Measured(summary(1.0))],
            ..Default::default()
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
            notes: vec![],
            rounds: 1,
            binding: vec![],
        }
    }

    #[test]
    fn one_panel_per_swept_op() {
        let p = panels(&report(), Metric::Bandwidth);
        assert_eq!(p.len(), 1, "barrier has no sizes to plot");
        assert_eq!(p[0].series.len(), 2);
        assert_eq!(p[0].series[0].points[0], (8.0, 0.08));
        assert!(!p[0].series[0].dashed && p[0].series[1].dashed, "rshmem solid, the anchor dashed");
    }

    /// The texts of an SVG document's `<text>` elements.
    fn texts(svg: &str) -> Vec<&str> {
        svg.split("<text").skip(1).filter_map(|t| t.split_once('>')?.1.split_once("</text>").map(|(x, _)| x.trim())).collect()
    }

    #[test]
    fn svg_has_a_titled_panel_with_both_curves_and_size_labels() {
        for m in [Metric::Latency, Metric::Bandwidth] {
            let s = plot(&report(), m).expect("draws");
            assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"), "{s}");
            let t = texts(&s);
            assert!(t.contains(&"put") && !t.contains(&"barrier"), "one panel, titled by its operation: {t:?}");
            assert!(t.contains(&"rshmem") && t.contains(&"nvshmem") && !t.contains(&"nccl"), "a legend entry per curve drawn: {t:?}");
            assert!(t.contains(&"8 B") && t.contains(&"32 KiB"), "x labels are sizes: {t:?}");
            assert!(t.contains(&"message size") && t.iter().any(|x| x.starts_with("rshmem-perf")), "{t:?}");
            assert!(s.matches("<polyline").count() >= 2, "a curve each");
            assert!(!s.contains("NaN") && !s.contains("inf"));
        }
        let empty = grid("t <&>", "us", &[]).expect("draws");
        assert!(empty.contains("t &lt;&amp;&gt;") && empty.contains("no operation"), "{empty}");
    }

    #[test]
    fn ranges_are_whole_steps() {
        assert_eq!(x_range(&[8.0, 1024.0]), (3.0, 10.0));
        assert_eq!(x_range(&[8.0]), (2.0, 4.0));
        assert_eq!(y_range(&[0.05, 3.0]), (-2.0, 1.0));
        assert_eq!(y_range(&[10.0]), (1.0, 2.0));
        assert_eq!(y_label(0.01), "0.01");
        assert_eq!(y_label(1000.0), "1000");
        assert_eq!(y_label(1e7), "1e7");
        assert_eq!(x_label(65536.0), "64 KiB");
    }
}
