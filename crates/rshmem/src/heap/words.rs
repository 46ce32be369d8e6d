//! Atomic views of words in mapped shared memory.
//!
//! Peers update flags, counters and signals in each other's heaps at any time; under
//! Rust's memory model such words must be accessed atomically. This module is the one
//! place that turns a heap address into an atomic reference.

use std::sync::atomic::{AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// Atomic types that may overlay a word of shared memory.
///
/// # Safety
/// Implementors must have the size and alignment of the word they overlay and be valid
/// for any bit pattern (true of the integer atomics).
pub unsafe trait SharedAtomic: Sync + 'static {}

// SAFETY: integer atomics have the size and alignment of their integer and accept any bits.
unsafe impl SharedAtomic for AtomicU8 {}
// SAFETY: as above.
unsafe impl SharedAtomic for AtomicU16 {}
// SAFETY: as above.
unsafe impl SharedAtomic for AtomicU32 {}
// SAFETY: as above.
unsafe impl SharedAtomic for AtomicU64 {}
// SAFETY: as above.
unsafe impl SharedAtomic for AtomicI8 {}
// SAFETY: as above.
unsafe impl SharedAtomic for AtomicI16 {}
// SAFETY: as above.
unsafe impl SharedAtomic for AtomicI32 {}
// SAFETY: as above.
unsafe impl SharedAtomic for AtomicI64 {}

/// Views the word at `addr` as an atomic.
///
/// # Safety
/// `addr` must be aligned for `A` and lie in memory that stays mapped for `'a` (the
/// symmetric heap, which lives as long as the runtime that owns it).
pub unsafe fn shared<'a, A: SharedAtomic>(addr: usize) -> &'a A {
    debug_assert!(addr.is_multiple_of(std::mem::align_of::<A>()), "misaligned shared word {addr:#x}");
    // SAFETY: the caller guarantees alignment and that the memory stays mapped; A accepts
    // any bit pattern and concurrent access through atomics is sound.
    unsafe { &*(addr as *const A) }
}

/// A 1-, 2-, 4- or 8-byte word of a mapped heap, read with plain atomic loads: what a wait
/// on this PE's own memory polls, without a call through the transport per poll.
#[derive(Clone, Copy, Debug)]
pub enum WatchedWord {
    /// A 1-byte word.
    W1(&'static AtomicU8),
    /// A 2-byte word.
    W2(&'static AtomicU16),
    /// A 4-byte word.
    W4(&'static AtomicU32),
    /// An 8-byte word.
    W8(&'static AtomicU64),
}

impl WatchedWord {
    /// The word at `addr`, `width` bytes wide; None for another width.
    ///
    /// # Safety
    /// As for [`shared`]: `addr` aligned to `width`, in memory that stays mapped while the
    /// value is used (the symmetric heap, for the life of its runtime).
    pub unsafe fn at(addr: usize, width: usize) -> Option<WatchedWord> {
        // SAFETY: the caller's promise, for each width.
        unsafe {
            Some(match width {
                1 => WatchedWord::W1(shared(addr)),
                2 => WatchedWord::W2(shared(addr)),
                4 => WatchedWord::W4(shared(addr)),
                8 => WatchedWord::W8(shared(addr)),
                _ => return None,
            })
        }
    }

    /// The word's value (an acquire load), zero-extended.
    #[inline]
    pub fn load(self) -> u64 {
        match self {
            WatchedWord::W1(a) => u64::from(a.load(Ordering::Acquire)),
            WatchedWord::W2(a) => u64::from(a.load(Ordering::Acquire)),
            WatchedWord::W4(a) => u64::from(a.load(Ordering::Acquire)),
            WatchedWord::W8(a) => a.load(Ordering::Acquire),
        }
    }
}
