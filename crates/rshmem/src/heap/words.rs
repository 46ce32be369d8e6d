//! Atomic views of words in mapped shared memory.
//!
//! Peers update flags, counters and signals in each other's heaps at any time; under
//! Rust's memory model such words must be accessed atomically. This module is the one
//! place that turns a heap address into an atomic reference.

use std::sync::atomic::{AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicU16, AtomicU32, AtomicU64, AtomicU8};

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
