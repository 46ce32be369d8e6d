//! Message sizes: parsing (`64K`, `1M`, `1GiB`), printing, and the sweep from begin to end.

/// Parses a byte count: a number with an optional K, M or G suffix (powers of 1024;
/// `KB`, `KiB`, `B` spellings are accepted too).
pub fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits_end);
    if num.is_empty() {
        return Err(format!("`{text}` is not a size (expected a number with an optional K, M or G suffix)"));
    }
    let value: usize = num.parse().map_err(|e| format!("`{text}`: {e}"))?;
    let shift = match suffix.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        other => return Err(format!("`{text}`: unknown size suffix `{other}` (use K, M or G)")),
    };
    value.checked_mul(1usize << shift).ok_or_else(|| format!("`{text}` is too large"))
}

/// Formats a byte count the short way: `8 B`, `64 KiB`, `1 MiB`; sizes that are not a
/// whole number of the unit stay in bytes.
pub fn format_size(bytes: usize) -> String {
    const UNITS: [(usize, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in UNITS {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{} {name}", bytes / unit);
        }
    }
    format!("{bytes} B")
}

/// The sizes `begin, begin*factor, ...` up to and including `end`.
pub fn sweep(begin: usize, end: usize, factor: usize) -> Result<Vec<usize>, String> {
    if begin == 0 {
        return Err("--begin must be at least 1 byte".into());
    }
    if factor < 2 {
        return Err(format!("--factor must be at least 2 (got {factor})"));
    }
    if end < begin {
        return Err(format!("--end ({}) is smaller than --begin ({})", format_size(end), format_size(begin)));
    }
    let mut sizes = Vec::new();
    let mut s = begin;
    while s <= end {
        sizes.push(s);
        match s.checked_mul(factor) {
            Some(next) => s = next,
            None => break,
        }
    }
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_suffixes() {
        assert_eq!(parse_size("8").unwrap(), 8);
        assert_eq!(parse_size("64K").unwrap(), 65536);
        assert_eq!(parse_size("64k").unwrap(), 65536);
        assert_eq!(parse_size("1M").unwrap(), 1 << 20);
        assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size("2 MB").unwrap(), 2 << 20);
        assert_eq!(parse_size("16B").unwrap(), 16);
    }

    #[test]
    fn rejects_bad_sizes() {
        assert!(parse_size("").is_err());
        assert!(parse_size("K").is_err());
        assert!(parse_size("12X").unwrap_err().contains("suffix"));
        assert!(parse_size("-4").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
    }

    #[test]
    fn formats_sizes() {
        assert_eq!(format_size(8), "8 B");
        assert_eq!(format_size(1024), "1 KiB");
        assert_eq!(format_size(1536), "1536 B");
        assert_eq!(format_size(64 << 20), "64 MiB");
        assert_eq!(format_size(1 << 30), "1 GiB");
        assert_eq!(format_size(0), "0 B");
    }

    #[test]
    fn sweeps_inclusive() {
        assert_eq!(sweep(8, 64, 2).unwrap(), vec![8, 16, 32, 64]);
        assert_eq!(sweep(8, 100, 4).unwrap(), vec![8, 32]);
        assert_eq!(sweep(8, 8, 2).unwrap(), vec![8]);
        assert!(sweep(0, 8, 2).is_err());
        assert!(sweep(8, 4, 2).is_err());
        assert!(sweep(8, 64, 1).is_err());
        assert_eq!(sweep(1 << 62, usize::MAX, 4).unwrap().len(), 1);
    }
}
