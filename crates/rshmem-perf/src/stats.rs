//! Statistics over repetitions: each repetition gives one time per operation; the
//! reported figure is their median, with the minimum and maximum beside it.

/// Median, minimum and maximum of the per-operation times of a case's repetitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Median, in microseconds per operation.
    pub median_us: f64,
    /// Fastest repetition.
    pub min_us: f64,
    /// Slowest repetition.
    pub max_us: f64,
}

impl Summary {
    /// Summarizes `samples` (microseconds per operation); `None` when there are none or
    /// one is not a finite, non-negative number.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|s| !s.is_finite() || *s < 0.0) {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_by(f64::total_cmp);
        let mid = v.len() / 2;
        let median_us = if v.len() % 2 == 1 { v[mid] } else { (v[mid - 1] + v[mid]) / 2.0 };
        Some(Summary { median_us, min_us: v[0], max_us: v[v.len() - 1] })
    }
}

/// Bandwidth in GB/s (10^9 bytes per second) of `bytes` moved in `us` microseconds;
/// `None` for no payload or no time.
pub fn gbps(bytes: usize, us: f64) -> Option<f64> {
    (bytes > 0 && us > 0.0).then(|| bytes as f64 / us / 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_and_even() {
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median_us, s.min_us, s.max_us), (2.0, 1.0, 3.0));
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.median_us, 2.5);
        assert_eq!(Summary::of(&[7.5]).unwrap().median_us, 7.5);
    }

    #[test]
    fn median_ignores_outlier() {
        let s = Summary::of(&[1.0, 1.1, 100.0, 0.9, 1.05]).unwrap();
        assert_eq!(s.median_us, 1.05);
        assert_eq!(s.max_us, 100.0);
    }

    #[test]
    fn rejects_empty_and_nan() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
        assert!(Summary::of(&[-1.0]).is_none());
    }

    #[test]
    fn bandwidth() {
        assert_eq!(gbps(1000, 1.0), Some(1.0));
        assert_eq!(gbps(1 << 20, 100.0).map(|g| (g * 1000.0).round()), Some(10486.0));
        assert_eq!(gbps(0, 1.0), None);
        assert_eq!(gbps(8, 0.0), None);
    }
}
