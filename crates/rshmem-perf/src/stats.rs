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

/// How far apart the medians of a case's interleaved rounds are: the fastest and the
/// slowest round's median.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Rounds that measured the case.
    pub rounds: usize,
    /// The fastest round's median, in microseconds per operation.
    pub min_us: f64,
    /// The slowest round's median.
    pub max_us: f64,
}

impl Spread {
    /// Half the range of the round medians over `median_us`, in percent (`±` that much);
    /// `None` without a positive median.
    pub fn percent(&self, median_us: f64) -> Option<f64> {
        (median_us > 0.0).then(|| (self.max_us - self.min_us) / 2.0 / median_us * 100.0)
    }
}

/// Combines the summaries of one case's rounds: the median of the round medians, the
/// fastest and slowest repetition of all rounds (so one round gives back its own
/// summary), and the spread of the round medians. `None` for no round.
pub fn over_rounds(rounds: &[Summary]) -> Option<(Summary, Spread)> {
    let medians: Vec<f64> = rounds.iter().map(|r| r.median_us).collect();
    let mid = Summary::of(&medians)?;
    let min_us = rounds.iter().map(|r| r.min_us).fold(f64::INFINITY, f64::min);
    let max_us = rounds.iter().map(|r| r.max_us).fold(f64::NEG_INFINITY, f64::max);
    let spread = Spread { rounds: rounds.len(), min_us: mid.min_us, max_us: mid.max_us };
    Some((Summary { median_us: mid.median_us, min_us, max_us }, spread))
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
    fn rounds_take_the_median_of_medians() {
        let round = |m: f64| Summary { median_us: m, min_us: m - 0.5, max_us: m + 1.0 };
        // One round: its own summary, no spread.
        let (one, sp) = over_rounds(&[round(2.0)]).unwrap();
        assert_eq!(one, round(2.0));
        assert_eq!((sp.rounds, sp.min_us, sp.max_us, sp.percent(2.0)), (1, 2.0, 2.0, Some(0.0)));
        // Three rounds: the middle median; the extremes of every repetition; the spread of
        // the medians (half of 4.0 - 2.0 over 3.0: 33%).
        let (s, sp) = over_rounds(&[round(4.0), round(2.0), round(3.0)]).unwrap();
        assert_eq!((s.median_us, s.min_us, s.max_us), (3.0, 1.5, 5.0));
        assert_eq!((sp.rounds, sp.min_us, sp.max_us), (3, 2.0, 4.0));
        assert_eq!(sp.percent(s.median_us).map(|p| p.round()), Some(33.0));
        // Two rounds: the mean of the two medians.
        assert_eq!(over_rounds(&[round(1.0), round(2.0)]).unwrap().0.median_us, 1.5);
        assert!(over_rounds(&[]).is_none());
        assert_eq!(sp.percent(0.0), None);
    }

    #[test]
    fn bandwidth() {
        assert_eq!(gbps(1000, 1.0), Some(1.0));
        assert_eq!(gbps(1 << 20, 100.0).map(|g| (g * 1000.0).round()), Some(10486.0));
        assert_eq!(gbps(0, 1.0), None);
        assert_eq!(gbps(8, 0.0), None);
    }
}
