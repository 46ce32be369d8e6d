//! How the value of a configuration variable is read: one parser per kind of value.
//!
//! A [`Kind`] pairs the name shown in the documentation table with the function that
//! turns the variable's text into the field's type. Enumerations implement [`Choice`]
//! and are read by [`choice`].

use std::path::PathBuf;
use std::time::Duration;

/// How one variable's text becomes a value of type `T`.
pub struct Kind<T> {
    /// What the documentation calls the kind ("size", "seconds", "auto, cpu or gpu", ...).
    pub name: fn() -> String,
    /// The parser; `Err` says what was expected.
    pub parse: fn(&str) -> Result<T, String>,
}

/// An enumeration read from a fixed set of names (case-insensitive).
pub trait Choice: Copy + Sized + 'static {
    /// Every value with its name, in documentation order.
    const CHOICES: &'static [(&'static str, Self)];

    /// The name of this value.
    fn name(self) -> &'static str
    where
        Self: PartialEq,
    {
        Self::CHOICES.iter().find(|(_, v)| *v == self).map_or("?", |(n, _)| n)
    }

    /// The value named `text` (case-insensitive, surrounding blanks ignored).
    fn from_name(text: &str) -> Result<Self, String> {
        let t = text.trim().to_ascii_lowercase();
        Self::CHOICES.iter().find(|(n, _)| *n == t).map(|(_, v)| *v).ok_or_else(|| format!("`{}` is not {}", text.trim(), one_of::<Self>()))
    }
}

/// "a, b or c" for the names of `T`.
fn one_of<T: Choice>() -> String {
    let names: Vec<&str> = T::CHOICES.iter().map(|(n, _)| *n).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.to_string(),
        None => String::new(),
    }
}

/// One of the names of `T`.
pub fn choice<T: Choice>() -> Kind<T> {
    Kind { name: one_of::<T>, parse: T::from_name }
}

/// A size in bytes: `4096`, `64K`, `64M`, `2G` (also `KB`, `MiB`; powers of 1024).
pub fn size() -> Kind<usize> {
    Kind { name: || "size".into(), parse: |t| parse_size(t).ok_or_else(|| format!("`{t}` is not a size (examples: 4096, 64M, 2G)")) }
}

/// A size (as [`size`]) between `LO` and `HI` bytes.
pub fn size_in<const LO: usize, const HI: usize>() -> Kind<usize> {
    Kind {
        name: || format!("size, {LO}-{HI} bytes"),
        parse: |t| {
            (size().parse)(t)
                .and_then(|v| if (LO..=HI).contains(&v) { Ok(v) } else { Err(format!("{v} bytes is not between {LO} and {HI}")) })
        },
    }
}

/// A whole number.
pub fn number<T: std::str::FromStr>() -> Kind<T> {
    Kind { name: || "number".into(), parse: |t| t.trim().parse::<T>().map_err(|_| format!("`{}` is not a whole number", t.trim())) }
}

/// A whole number in `lo..=hi`.
pub fn number_in<const LO: u64, const HI: u64>() -> Kind<usize> {
    Kind {
        name: || format!("number, {LO}-{HI}"),
        parse: |t| match t.trim().parse::<u64>() {
            Ok(v) if (LO..=HI).contains(&v) => Ok(v as usize),
            Ok(v) => Err(format!("{v} is not between {LO} and {HI}")),
            Err(_) => Err(format!("`{}` is not a whole number", t.trim())),
        },
    }
}

/// Whole seconds.
pub fn seconds() -> Kind<Duration> {
    Kind { name: || "seconds".into(), parse: |t| (number::<u64>().parse)(t).map(Duration::from_secs) }
}

/// Whole seconds, where 0 means "never" (`None`).
pub fn seconds_or_never() -> Kind<Option<Duration>> {
    Kind { name: || "seconds (0: never)".into(), parse: |t| (number::<u64>().parse)(t).map(|s| (s > 0).then(|| Duration::from_secs(s))) }
}

/// Seconds, fractions allowed, where 0 means "never" (`None`).
pub fn fractional_seconds_or_never() -> Kind<Option<Duration>> {
    Kind {
        name: || "seconds (0: never)".into(),
        parse: |t| match t.trim().parse::<f64>() {
            Ok(s) if s.is_finite() && s >= 0.0 => Ok((s > 0.0).then(|| Duration::from_secs_f64(s))),
            _ => Err(format!("`{}` is not a number of seconds (0: off)", t.trim())),
        },
    }
}

/// Whole microseconds.
pub fn micros() -> Kind<Duration> {
    Kind { name: || "microseconds".into(), parse: |t| (number::<u64>().parse)(t).map(Duration::from_micros) }
}

/// `0` or `1`.
pub fn flag() -> Kind<bool> {
    Kind {
        name: || "0 or 1".into(),
        parse: |t| match t.trim() {
            "0" => Ok(false),
            "1" => Ok(true),
            other => Err(format!("`{other}` is not 0 or 1")),
        },
    }
}

/// Free text; empty means unset (`None`).
pub fn text() -> Kind<Option<String>> {
    Kind { name: || "text".into(), parse: |t| Ok(Some(t.trim().to_string()).filter(|s| !s.is_empty())) }
}

/// A path; empty means unset (`None`).
pub fn path() -> Kind<Option<PathBuf>> {
    Kind { name: || "path".into(), parse: |t| Ok(Some(t).filter(|s| !s.is_empty()).map(PathBuf::from)) }
}

/// A whole number; empty means unset (`None`).
pub fn maybe_number() -> Kind<Option<usize>> {
    Kind { name: || "number".into(), parse: |t| if t.trim().is_empty() { Ok(None) } else { (number::<usize>().parse)(t).map(Some) } }
}

/// Whether the variable is set to a non-blank value (which is not looked at further).
pub fn presence() -> Kind<bool> {
    Kind { name: || "set or unset".into(), parse: |t| Ok(!t.trim().is_empty()) }
}

/// Parses `123`, `64K`, `64M`, `2G` (also `KB`, `MiB`, case-insensitive) into bytes.
pub fn parse_size(text: &str) -> Option<usize> {
    let t = text.trim().to_ascii_uppercase();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits_end);
    let n: usize = num.parse().ok()?;
    let mult: usize = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("64k"), Some(64 << 10));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("3MiB"), Some(3 << 20));
        assert_eq!(parse_size("12Q"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn numbers_and_flags_say_what_they_expected() {
        assert_eq!((number::<u32>().parse)(" 12 "), Ok(12));
        assert_eq!((number::<u32>().parse)("x"), Err("`x` is not a whole number".into()));
        assert_eq!((number_in::<1, 64>().parse)("65"), Err("65 is not between 1 and 64".into()));
        assert_eq!((flag().parse)("2"), Err("`2` is not 0 or 1".into()));
        assert_eq!((seconds_or_never().parse)("0"), Ok(None));
        assert_eq!((seconds_or_never().parse)("3"), Ok(Some(Duration::from_secs(3))));
        assert_eq!((text().parse)("  "), Ok(None));
    }
}
