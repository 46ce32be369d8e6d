//! The lines a benchmark program prints on stdout for the driver (rshmem's PE 0 and the
//! anchor programs alike):
//!
//! ```text
//! INFO free text describing the implementation
//! INFO binding PE 1 cpus 0-1
//! RESULT op=put bytes=8 iters=1000 reps=5 median_us=0.041 min_us=0.040 max_us=0.052
//! SKIP op=reduce_scatter bytes=8 reason=not in OpenSHMEM 1.4
//! ```
//!
//! One line per case of the plan, in plan order: `RESULT` when it was measured, `SKIP`
//! when that implementation has no such operation. Every PE (not only PE 0) prints one
//! `INFO binding` line with the CPUs it may run on (`Cpus_allowed_list` of
//! `/proc/self/status`; a thread PE's own in `/proc/thread-self/status`). Other lines are
//! passed through.

use crate::stats::Summary;

/// A measured case.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// Operation name.
    pub op: String,
    /// Message size in bytes.
    pub bytes: usize,
    /// Iterations per repetition.
    pub iters: usize,
    /// Repetitions.
    pub reps: usize,
    /// Per-operation times over the repetitions.
    pub time: Summary,
}

/// One line of a benchmark program's output.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// A description of the implementation.
    Info(String),
    /// A measured case.
    Result(Measurement),
    /// A case this implementation cannot run, and why.
    Skip {
        /// Operation name.
        op: String,
        /// Message size in bytes.
        bytes: usize,
        /// Why.
        reason: String,
    },
    /// Anything else.
    Other(String),
}

/// What an `INFO` line that says how a PE is bound starts with.
pub const BINDING_PREFIX: &str = "binding PE ";

/// The `INFO` line of PE `pe` allowed to run on `cpus` (a list such as `0-1` or `0,2`).
pub fn binding_line(pe: usize, cpus: &str) -> String {
    format!("INFO {BINDING_PREFIX}{pe} cpus {cpus}")
}

/// The PE and its CPU list of an `INFO` text (the line less `INFO `) that says how a PE
/// is bound; `None` for any other `INFO` text.
pub fn parse_binding(info: &str) -> Option<(usize, String)> {
    let (pe, cpus) = info.strip_prefix(BINDING_PREFIX)?.split_once(" cpus ")?;
    Some((pe.trim().parse().ok()?, cpus.trim().to_string()))
}

/// The value of `Cpus_allowed_list:` in the text of a `/proc/.../status` file.
pub fn cpus_allowed_list(status: &str) -> Option<String> {
    status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).map(|v| v.trim().to_string())
}

/// Formats a measured case as a `RESULT` line.
pub fn result_line(m: &Measurement) -> String {
    format!(
        "RESULT op={} bytes={} iters={} reps={} median_us={:.6} min_us={:.6} max_us={:.6}",
        m.op, m.bytes, m.iters, m.reps, m.time.median_us, m.time.min_us, m.time.max_us
    )
}

fn fields(rest: &str) -> impl Iterator<Item = (&str, &str)> {
    rest.split_whitespace().filter_map(|kv| kv.split_once('='))
}

fn field<'a>(rest: &'a str, key: &str) -> Result<&'a str, String> {
    fields(rest).find(|(k, _)| *k == key).map(|(_, v)| v).ok_or_else(|| format!("no `{key}=`"))
}

fn number<T: std::str::FromStr>(rest: &str, key: &str) -> Result<T, String> {
    let v = field(rest, key)?;
    v.parse().map_err(|_| format!("`{key}={v}` is not a number"))
}

/// Reads one output line. A line that starts like a protocol line but is malformed is an
/// error (it means the two sides disagree on the format).
pub fn parse_line(line: &str) -> Result<Line, String> {
    let line = line.trim_end();
    let (head, rest) = line.split_once(' ').unwrap_or((line, ""));
    let bad = |why: String| format!("malformed `{head}` line ({why}): `{line}`");
    match head {
        "INFO" => Ok(Line::Info(rest.trim().to_string())),
        "RESULT" => {
            let parsed = (|| -> Result<Measurement, String> {
                let sample = |k| number::<f64>(rest, k);
                let time = Summary { median_us: sample("median_us")?, min_us: sample("min_us")?, max_us: sample("max_us")? };
                if ![time.median_us, time.min_us, time.max_us].iter().all(|t| t.is_finite() && *t >= 0.0) {
                    return Err("times must be finite and non-negative".into());
                }
                Ok(Measurement {
                    op: field(rest, "op")?.to_string(),
                    bytes: number(rest, "bytes")?,
                    iters: number(rest, "iters")?,
                    reps: number(rest, "reps")?,
                    time,
                })
            })();
            parsed.map(Line::Result).map_err(bad)
        }
        "SKIP" => {
            let reason = rest.split_once("reason=").map(|(_, r)| r.trim().to_string()).unwrap_or_default();
            let op = field(rest, "op").map_err(bad)?.to_string();
            let bytes = number(rest, "bytes").map_err(bad)?;
            Ok(Line::Skip { op, bytes, reason })
        }
        _ => Ok(Line::Other(line.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_round_trip() {
        let m = Measurement {
            op: "put".into(),
            bytes: 65536,
            iters: 100,
            reps: 5,
            time: Summary { median_us: 1.5, min_us: 1.25, max_us: 3.0 },
        };
        assert_eq!(parse_line(&result_line(&m)).unwrap(), Line::Result(m));
    }

    #[test]
    fn parses_c_style_lines() {
        let l = parse_line("RESULT op=g bytes=8 iters=10 reps=3 median_us=0.05 min_us=0.04 max_us=1e-1\n").unwrap();
        let Line::Result(m) = l else { panic!("{l:?}") };
        assert_eq!((m.op.as_str(), m.bytes, m.iters, m.reps), ("g", 8, 10, 3));
        assert_eq!(m.time.max_us, 0.1);
        assert_eq!(
            parse_line("SKIP op=reduce_scatter bytes=64 reason=not in OpenSHMEM 1.4").unwrap(),
            Line::Skip { op: "reduce_scatter".into(), bytes: 64, reason: "not in OpenSHMEM 1.4".into() }
        );
        assert_eq!(parse_line("INFO Open MPI 4.1.4").unwrap(), Line::Info("Open MPI 4.1.4".into()));
        assert_eq!(parse_line("hello").unwrap(), Line::Other("hello".into()));
    }

    #[test]
    fn binding_lines() {
        let line = binding_line(1, "0-1");
        assert_eq!(line, "INFO binding PE 1 cpus 0-1");
        let Line::Info(text) = parse_line(&line).unwrap() else { panic!() };
        assert_eq!(parse_binding(&text), Some((1, "0-1".to_string())));
        // The C anchor's line, and lines that are not about binding.
        assert_eq!(parse_binding("binding PE 12 cpus 3,5"), Some((12, "3,5".to_string())));
        assert_eq!(parse_binding("Open MPI OpenSHMEM 4.1.4"), None);
        assert_eq!(parse_binding("binding PE x cpus 1"), None);
        let status = "Name:\tperf\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed_list:\t0\n";
        assert_eq!(cpus_allowed_list(status).as_deref(), Some("0-1"));
        assert_eq!(cpus_allowed_list("Name: x"), None);
    }

    #[test]
    fn rejects_malformed() {
        assert!(parse_line("RESULT op=put bytes=8").unwrap_err().contains("malformed `RESULT` line (no `"));
        assert!(parse_line("RESULT op=put bytes=x iters=1 reps=1 median_us=1 min_us=1 max_us=1").is_err());
        assert!(parse_line("RESULT op=put bytes=8 iters=1 reps=1 median_us=nan min_us=1 max_us=1").is_err());
        assert!(parse_line("SKIP bytes=8").is_err());
    }
}
