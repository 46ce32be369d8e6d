//! The allocations the last range checks of a heap found, so that a stream of
//! address-form calls on one buffer (the C ABI's whole traffic) is checked with a few
//! plain loads: no thread-local lookup (a `__tls_get_addr` call in a shared library)
//! and no search of the allocation table.
//!
//! A sequence lock guards the three words: a writer makes the count odd, stores, and
//! makes it even again; a reader that sees the same even count before and after its
//! loads saw one writer's words. Writers that find the lock taken skip the update (it
//! is only a hint), so no thread ever waits here.

use std::sync::atomic::{fence, AtomicU64, AtomicUsize, Ordering};

/// One remembered allocation: (table version, user offset, length), behind a sequence
/// count.
#[derive(Debug, Default)]
pub(super) struct LastHit {
    seq: AtomicUsize,
    version: AtomicU64,
    start: AtomicUsize,
    len: AtomicUsize,
}

impl LastHit {
    /// Whether the remembered allocation belongs to table `version` and holds the
    /// `len` bytes at user offset `off`.
    #[inline(always)]
    pub(super) fn covers(&self, version: u64, off: usize, len: usize) -> bool {
        let s1 = self.seq.load(Ordering::Acquire);
        if s1 & 1 == 1 {
            return false;
        }
        let (v, start, n) = (self.version.load(Ordering::Relaxed), self.start.load(Ordering::Relaxed), self.len.load(Ordering::Relaxed));
        // Orders the loads above before the second read of the count.
        fence(Ordering::Acquire);
        if self.seq.load(Ordering::Relaxed) != s1 || v != version {
            return false;
        }
        off >= start && off.checked_add(len).is_some_and(|e| e <= start + n)
    }

    /// Remembers allocation `[start, start + len)` of table `version`, unless another
    /// thread is writing the hint right now.
    #[inline]
    pub(super) fn remember(&self, version: u64, start: usize, len: usize) {
        let s = self.seq.load(Ordering::Relaxed);
        if s & 1 == 1 || self.seq.compare_exchange(s, s + 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
            return;
        }
        // Orders the odd count before the stores below (a reader that sees a new word
        // then sees the count moved).
        fence(Ordering::Release);
        self.version.store(version, Ordering::Relaxed);
        self.start.store(start, Ordering::Relaxed);
        self.len.store(len, Ordering::Relaxed);
        self.seq.store(s + 2, Ordering::Release);
    }
}

/// The last two allocations range checks found, so that calls that alternate two
/// buffers (a collective's source and dest, a put's dest and its signal word, the C
/// ABI's symmetric source and dest) hit as a stream on one buffer does. A miss replaces
/// the entry that was filled longer ago.
#[derive(Debug, Default)]
pub(super) struct LastHits {
    hits: [LastHit; 2],
    /// Misses so far: the next one fills entry `misses % 2`.
    misses: AtomicUsize,
}

impl LastHits {
    /// Whether one of the remembered allocations belongs to table `version` and holds
    /// the `len` bytes at user offset `off`.
    #[inline(always)]
    pub(super) fn covers(&self, version: u64, off: usize, len: usize) -> bool {
        let [a, b] = &self.hits;
        a.covers(version, off, len) || b.covers(version, off, len)
    }

    /// Remembers allocation `[start, start + len)` of table `version` in place of the
    /// older entry.
    #[inline]
    pub(super) fn remember(&self, version: u64, start: usize, len: usize) {
        let i = self.misses.fetch_add(1, Ordering::Relaxed) % 2;
        self.hits[i].remember(version, start, len);
    }
}

#[cfg(test)]
mod tests {
    use super::{LastHit, LastHits};

    #[test]
    fn two_alternating_allocations_both_stay_remembered() {
        let h = LastHits::default();
        h.remember(3, 0, 64);
        h.remember(3, 4096, 128);
        assert!(h.covers(3, 8, 8) && h.covers(3, 4096 + 120, 8), "both allocations are remembered");
        assert!(!h.covers(3, 64, 8), "nothing between them");
        h.remember(3, 8192, 64);
        assert!(!h.covers(3, 8, 8), "a third allocation replaces the one filled first");
        assert!(h.covers(3, 4096, 8) && h.covers(3, 8192, 8));
        assert!(!h.covers(4, 4096, 8), "a newer table");
    }

    use std::sync::Arc;

    #[test]
    fn covers_only_the_remembered_range_of_its_version() {
        let h = LastHit::default();
        assert!(!h.covers(0, 0, 1), "an empty hint covers nothing (length 0 at offset 0 holds no byte)");
        h.remember(7, 4096, 256);
        assert!(h.covers(7, 4096, 256));
        assert!(h.covers(7, 4100, 8));
        assert!(!h.covers(7, 4096, 257), "one byte past the end");
        assert!(!h.covers(7, 4095, 1), "one byte before the start");
        assert!(!h.covers(8, 4096, 8), "a newer table");
        assert!(!h.covers(7, usize::MAX, 2), "an overflowing range");
    }

    #[test]
    fn readers_never_see_a_torn_hint() {
        // Writers store pairs (v, start = v * 4096, len = 4096); a reader that accepts
        // a range must find it inside the one allocation of that version.
        let h = Arc::new(LastHit::default());
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writers: Vec<_> = (0..2)
            .map(|w| {
                let (h, stop) = (h.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut v = 1 + w;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        h.remember(v, v as usize * 4096, 4096);
                        v += 2;
                    }
                })
            })
            .collect();
        for i in 0..2_000_000u64 {
            let v = 1 + i % 64;
            let off = v as usize * 4096 + 100;
            // Whether this hits depends on scheduling; what must hold is below.
            let _ = h.covers(v, off, 8);
            // A range of version v at another version's place must never be accepted.
            assert!(!h.covers(v, (v as usize + 1) * 4096 + 100, 8), "torn hint accepted at version {v}");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for w in writers {
            w.join().expect("writer");
        }
    }
}
