//! The verdict lines of the multi-PE test programs: written by [`super::Check`] in the
//! programs, read by the harness (`tests/common`), one definition of the format for both.
//!
//! ```text
//! RSHMEM-CHECK pe=1 program=pe_rma name=double.put result=pass count=2 detail="put of 37 elements from PE 0"
//! RSHMEM-SUMMARY pe=1 program=pe_rma checks=297 failed=0 result=pass
//! ```
//!
//! A check line names the PE, the program, the check (a name without spaces, quotes or
//! `=`), its result, how many times the program evaluated it, and a detail: what was
//! checked, or for a failure what was seen. The detail is in double quotes with `\"`,
//! `\\` and `\n` escaped, so that every verdict is one line. A PE prints one summary line
//! last: how many check lines it printed and how many of them failed; the harness counts
//! the check lines it read against it, so that a lost line is noticed.
#![allow(dead_code)]

use std::fmt;

/// The first word of a check line.
pub const CHECK: &str = "RSHMEM-CHECK";
/// The first word of a summary line.
pub const SUMMARY: &str = "RSHMEM-SUMMARY";
/// Longest detail a line carries (longer ones are cut, saying so).
pub const MAX_DETAIL: usize = 1500;

/// One check of one PE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The PE that made the check.
    pub pe: usize,
    /// The test program.
    pub program: String,
    /// The check's name.
    pub name: String,
    /// Whether every evaluation of the check held.
    pub passed: bool,
    /// How many times the program evaluated it.
    pub count: u64,
    /// What was checked; for a failure, what was seen.
    pub detail: String,
}

/// The last line of a PE: its number of check lines and failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The PE.
    pub pe: usize,
    /// The test program.
    pub program: String,
    /// Check lines the PE printed.
    pub checks: usize,
    /// How many of them failed.
    pub failed: usize,
}

/// A parsed verdict line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A check line.
    Check(Verdict),
    /// A summary line.
    Summary(Summary),
}

/// Whether `name` can name a check: not empty, no spaces, quotes or `=`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c == '"' || c == '=' || c == '\\')
}

fn result(passed: bool) -> &'static str {
    if passed {
        "pass"
    } else {
        "fail"
    }
}

/// `s` in double quotes, escaped, cut to [`MAX_DETAIL`] characters.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(MAX_DETAIL) + 2);
    out.push('"');
    for (i, c) in s.chars().enumerate() {
        if i == MAX_DETAIL {
            out.push_str(" [cut]");
            break;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "{CHECK} pe={} program={} name={} result={} count={} detail={}",
            self.pe,
            self.program,
            self.name,
            result(self.passed),
            self.count,
            quote(&self.detail)
        )
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "{SUMMARY} pe={} program={} checks={} failed={} result={}",
            self.pe,
            self.program,
            self.checks,
            self.failed,
            result(self.failed == 0)
        )
    }
}

/// The `key=value` fields after the first word; a value is a bare word or a quoted string.
fn fields(mut rest: &str) -> Option<Vec<(&str, String)>> {
    let mut out = Vec::new();
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Some(out);
        }
        let (key, after) = rest.split_once('=')?;
        if let Some(quoted) = after.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let end = loop {
                match chars.next()? {
                    (i, '"') => break i,
                    (_, '\\') => value.push(match chars.next()?.1 {
                        'n' => '\n',
                        'r' => '\r',
                        c => c,
                    }),
                    (_, c) => value.push(c),
                }
            };
            out.push((key, value));
            rest = &quoted[end + 1..];
        } else {
            let end = after.find(' ').unwrap_or(after.len());
            out.push((key, after[..end].to_string()));
            rest = &after[end..];
        }
    }
}

/// The verdict `line` holds, or None for any other line (or a damaged verdict line).
pub fn parse(line: &str) -> Option<Line> {
    let (head, rest) = line.trim_end().split_once(' ')?;
    let fields = fields(rest)?;
    let get = |k: &str| fields.iter().find(|(key, _)| *key == k).map(|(_, v)| v.as_str());
    let number = |k: &str| get(k)?.parse::<u64>().ok();
    let pass = match get("result")? {
        "pass" => true,
        "fail" => false,
        _ => return None,
    };
    let (pe, program) = (number("pe")? as usize, get("program")?.to_string());
    match head {
        CHECK => Some(Line::Check(Verdict {
            pe,
            program,
            name: get("name")?.to_string(),
            passed: pass,
            count: number("count")?,
            detail: get("detail")?.to_string(),
        })),
        SUMMARY => {
            let summary = Summary { pe, program, checks: number("checks")? as usize, failed: number("failed")? as usize };
            (pass == (summary.failed == 0)).then_some(Line::Summary(summary))
        }
        _ => None,
    }
}
