//! A deterministic first-fit allocator over offsets, with coalescing.
//!
//! Every PE runs the same sequence of collective requests through it, so every PE gets
//! the same offsets: that is what makes the heap symmetric.

use std::collections::BTreeMap;

/// First-fit allocator over `0..capacity`.
#[derive(Debug, Clone)]
pub struct FirstFit {
    capacity: usize,
    /// Free blocks: start -> length, never adjacent (coalesced).
    free: BTreeMap<usize, usize>,
    /// Live allocations: start -> length.
    used: BTreeMap<usize, usize>,
}

impl FirstFit {
    /// An allocator with everything free.
    pub fn new(capacity: usize) -> FirstFit {
        let mut free = BTreeMap::new();
        if capacity > 0 {
            free.insert(0, capacity);
        }
        FirstFit { capacity, free, used: BTreeMap::new() }
    }

    /// Total size managed.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes in live allocations.
    pub fn in_use(&self) -> usize {
        self.used.values().sum()
    }

    /// Live allocations, sorted by start.
    pub fn allocations(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.used.iter().map(|(&s, &l)| (s, l))
    }

    /// Size of the allocation starting at `start`.
    pub fn size_of(&self, start: usize) -> Option<usize> {
        self.used.get(&start).copied()
    }

    /// Allocates `size` bytes (at least 1) aligned to `align` (a power of two).
    pub fn alloc(&mut self, size: usize, align: usize) -> Option<usize> {
        debug_assert!(align.is_power_of_two());
        let size = size.max(1);
        let (block, start) = self.free.iter().find_map(|(&bstart, &blen)| {
            let start = bstart.checked_add(align - 1)? & !(align - 1);
            (start.checked_add(size)? <= bstart + blen).then_some((bstart, start))
        })?;
        let blen = self.free.remove(&block).expect("found above");
        if start > block {
            self.free.insert(block, start - block);
        }
        let end = start + size;
        if end < block + blen {
            self.free.insert(end, block + blen - end);
        }
        self.used.insert(start, size);
        Some(start)
    }

    /// Frees the allocation starting at `start`; returns its size, or None if no
    /// allocation starts there.
    pub fn free(&mut self, start: usize) -> Option<usize> {
        let size = self.used.remove(&start)?;
        self.insert_free(start, size);
        Some(size)
    }

    fn insert_free(&mut self, mut start: usize, mut len: usize) {
        if let Some((&ps, &pl)) = self.free.range(..start).next_back() {
            if ps + pl == start {
                self.free.remove(&ps);
                start = ps;
                len += pl;
            }
        }
        if let Some(&nl) = self.free.get(&(start + len)) {
            self.free.remove(&(start + len));
            len += nl;
        }
        self.free.insert(start, len);
    }

    /// Extends the managed range to `new_capacity` (which must not shrink it).
    pub fn grow(&mut self, new_capacity: usize) {
        assert!(new_capacity >= self.capacity, "the heap never shrinks");
        if new_capacity > self.capacity {
            let (start, len) = (self.capacity, new_capacity - self.capacity);
            self.capacity = new_capacity;
            self.insert_free(start, len);
        }
    }

    /// Bytes that would have to be added at the end for `alloc(size, align)` to succeed.
    pub fn shortfall(&self, size: usize, align: usize) -> usize {
        let size = size.max(1);
        // The tail free block (if it touches the end) can be extended.
        let tail_start = match self.free.iter().next_back() {
            Some((&s, &l)) if s + l == self.capacity => s,
            _ => self.capacity,
        };
        // Saturating: a request near 2^64 bytes needs "everything", not a wrapped small number.
        let start = tail_start.saturating_add(align - 1) & !(align - 1);
        start.saturating_add(size).saturating_sub(self.capacity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_reuses_and_coalesces() {
        let mut a = FirstFit::new(1000);
        let x = a.alloc(100, 4).unwrap();
        let y = a.alloc(100, 4).unwrap();
        let z = a.alloc(100, 4).unwrap();
        assert_eq!((x, y, z), (0, 100, 200));
        assert_eq!(a.free(y), Some(100));
        assert_eq!(a.alloc(50, 4), Some(100), "first fit takes the hole");
        assert_eq!(a.free(x), Some(100));
        assert_eq!(a.free(100), Some(50));
        assert_eq!(a.free(z), Some(100));
        assert_eq!(a.free.len(), 1, "everything coalesced: {:?}", a.free);
        assert_eq!(a.free(z), None, "double free is refused");
    }

    #[test]
    fn alignment_and_exhaustion() {
        let mut a = FirstFit::new(4096);
        assert_eq!(a.alloc(1, 1), Some(0));
        assert_eq!(a.alloc(8, 1024), Some(1024));
        assert_eq!(a.alloc(4096, 8), None);
        assert_eq!(a.shortfall(4096, 8), 1032);
        a.grow(8192 + 1032);
        assert!(a.alloc(4096, 8).is_some());
        assert_eq!(a.alloc(usize::MAX - 8, 16), None);
        assert!(a.shortfall(usize::MAX - 8, 16) > 1 << 60, "huge requests do not wrap");
        assert!(a.shortfall(8, 1 << 63) >= 1 << 62, "huge alignments do not wrap");
    }

    #[test]
    fn deterministic_across_instances() {
        let ops: Vec<(bool, usize)> = (0..500).map(|i| (i % 3 != 0, (i * 7919) % 300 + 1)).collect();
        let run = || {
            let mut a = FirstFit::new(1 << 20);
            let mut live = Vec::new();
            let mut trace = Vec::new();
            for &(is_alloc, n) in &ops {
                if is_alloc || live.is_empty() {
                    let o = a.alloc(n, 16).unwrap();
                    live.push(o);
                    trace.push(o);
                } else {
                    let o = live.remove(n % live.len());
                    a.free(o).unwrap();
                }
            }
            trace
        };
        assert_eq!(run(), run());
    }
}
