//! The local transport: peers whose heaps are mapped into this process take plain loads,
//! stores and CPU atomics.
//!
//! What fence and quiet promise here: a put has reached the target's memory when the call
//! returns (its stores are in this CPU's store order), so `fence` only needs to keep
//! later stores behind earlier ones (a release fence) and `quiet` makes them globally
//! visible before anything later (a full fence).

use super::notify;
use super::{AmoOp, Caps, Transport};
use crate::error::{Error, Result};
use crate::heap::words::{shared, WatchedWord};
use std::sync::atomic::{fence, AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// Transport over mapped shared memory.
#[derive(Debug)]
pub struct LocalTransport {
    my_pe: usize,
    bases: Vec<usize>,
    stride: usize,
}

impl LocalTransport {
    /// PE `my_pe`'s transport over heaps at `bases` (one per PE), each `stride` bytes of
    /// address space.
    pub fn new(my_pe: usize, bases: Vec<usize>, stride: usize) -> LocalTransport {
        LocalTransport { my_pe, bases, stride }
    }

    #[inline]
    fn addr(&self, pe: usize, offset: usize, len: usize) -> usize {
        assert!(offset.checked_add(len).is_some_and(|e| e <= self.stride), "offset {offset:#x}+{len} outside PE {pe}'s heap");
        self.bases[pe] + offset
    }
}

/// `std::ptr::copy` (memmove: the ranges may overlap), with 4 to 16 bytes copied inline
/// as two loads that may overlap each other, then two stores: the word-sized puts and
/// gets of the mapped path then skip the call into the C library's memmove (a fifth of
/// an 8-byte put's time in a profile).
///
/// # Safety
/// As for `std::ptr::copy`: `src` valid for reads and `dst` for writes of `len` bytes.
#[inline(always)]
unsafe fn copy_bytes(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY (every block): the caller's promise covers bytes `0..len`; the loads and
    // stores below touch `0..8` and `len-8..len` (or the 4-byte forms), both inside it,
    // and every load happens before the first store, so overlapping ranges copy as memmove.
    match len {
        8..=16 => unsafe {
            let (a, b) = (src.cast::<u64>().read_unaligned(), src.add(len - 8).cast::<u64>().read_unaligned());
            dst.cast::<u64>().write_unaligned(a);
            dst.add(len - 8).cast::<u64>().write_unaligned(b);
        },
        4..=7 => unsafe {
            let (a, b) = (src.cast::<u32>().read_unaligned(), src.add(len - 4).cast::<u32>().read_unaligned());
            dst.cast::<u32>().write_unaligned(a);
            dst.add(len - 4).cast::<u32>().write_unaligned(b);
        },
        // SAFETY: the caller's promise.
        _ => unsafe { std::ptr::copy(src, dst, len) },
    }
}

macro_rules! with_atomic {
    ($self:ident, $width:expr, $addr:expr, |$a:ident, $t:ident| $body:expr) => {
        match $width {
            1 => {
                // SAFETY: the heap checked the word lies in a live allocation and the ops
                // layer checked its alignment; the heap stays mapped while we run.
                let $a: &AtomicU8 = unsafe { shared($addr) };
                #[allow(dead_code)]
                type $t = u8;
                $body
            }
            2 => {
                // SAFETY: as above.
                let $a: &AtomicU16 = unsafe { shared($addr) };
                #[allow(dead_code)]
                type $t = u16;
                $body
            }
            4 => {
                // SAFETY: as above.
                let $a: &AtomicU32 = unsafe { shared($addr) };
                #[allow(dead_code)]
                type $t = u32;
                $body
            }
            8 => {
                // SAFETY: as above.
                let $a: &AtomicU64 = unsafe { shared($addr) };
                #[allow(dead_code)]
                type $t = u64;
                $body
            }
            w => return Err(Error::Transport { call: "atomic", detail: format!("word width {w} is not 1, 2, 4 or 8"), pe: $self.my_pe }),
        }
    };
}

impl Transport for LocalTransport {
    fn name(&self) -> &'static str {
        "local"
    }

    fn caps(&self) -> Caps {
        Caps { mapped: true }
    }

    #[inline]
    fn put(&self, pe: usize, offset: usize, src: &[u8]) -> Result<()> {
        let dst = self.addr(pe, offset, src.len());
        // SAFETY: `dst..dst+len` lies in PE `pe`'s mapped heap (the heap checked the offset
        // against live allocations, and `addr` against the stride); `src` is a valid slice,
        // and `copy` (memmove) is right even when it overlaps the target.
        unsafe { copy_bytes(src.as_ptr(), dst as *mut u8, src.len()) };
        notify::wake(self.bases[pe]);
        Ok(())
    }

    #[inline]
    fn get(&self, pe: usize, offset: usize, dst: &mut [u8]) -> Result<()> {
        let src = self.addr(pe, offset, dst.len());
        // SAFETY: as for put, with the roles swapped; `dst` is a valid mutable slice.
        unsafe { copy_bytes(src as *const u8, dst.as_mut_ptr(), dst.len()) };
        fence(Ordering::Acquire);
        Ok(())
    }

    #[inline]
    fn copy(&self, dst_pe: usize, dst_offset: usize, src_pe: usize, src_offset: usize, len: usize) -> Result<()> {
        let dst = self.addr(dst_pe, dst_offset, len);
        let src = self.addr(src_pe, src_offset, len);
        // SAFETY: both ranges lie in mapped heaps (the ops layer checked the offsets against
        // the symmetric allocations, `addr` against the stride); `copy` (memmove) is right
        // even when the ranges overlap.
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) };
        notify::wake(self.bases[dst_pe]);
        Ok(())
    }

    #[inline]
    fn store_word(&self, pe: usize, offset: usize, width: usize, value: u64) -> Result<()> {
        let a = self.addr(pe, offset, width);
        with_atomic!(self, width, a, |w, T| w.store(value as T, Ordering::Release));
        notify::wake(self.bases[pe]);
        Ok(())
    }

    fn watched_word(&self, pe: usize, offset: usize, width: usize) -> Option<WatchedWord> {
        let a = self.addr(pe, offset, width);
        // SAFETY: as for `load_word`: the word lies in a live allocation of a heap that
        // stays mapped while we run, and the ops layer checked its alignment.
        unsafe { WatchedWord::at(a, width) }
    }

    #[inline]
    fn load_word(&self, pe: usize, offset: usize, width: usize) -> Result<u64> {
        self.watched_word(pe, offset, width).map(WatchedWord::load).ok_or_else(|| Error::Transport {
            call: "atomic",
            detail: format!("word width {width} is not 1, 2, 4 or 8"),
            pe: self.my_pe,
        })
    }

    #[allow(clippy::unnecessary_cast)]
    fn amo(&self, pe: usize, offset: usize, width: usize, op: AmoOp, operand: u64, compare: u64) -> Result<u64> {
        let a = self.addr(pe, offset, width);
        let old = with_atomic!(self, width, a, |w, T| {
            let v = operand as T;
            let o = match op {
                AmoOp::Fetch => w.load(Ordering::SeqCst),
                AmoOp::Set | AmoOp::Swap => w.swap(v, Ordering::SeqCst),
                AmoOp::CompareSwap => match w.compare_exchange(compare as T, v, Ordering::SeqCst, Ordering::SeqCst) {
                    Ok(o) | Err(o) => o,
                },
                AmoOp::FetchAdd => w.fetch_add(v, Ordering::SeqCst),
                AmoOp::FetchAnd => w.fetch_and(v, Ordering::SeqCst),
                AmoOp::FetchOr => w.fetch_or(v, Ordering::SeqCst),
                AmoOp::FetchXor => w.fetch_xor(v, Ordering::SeqCst),
            };
            o as u64
        });
        if op != AmoOp::Fetch {
            notify::wake(self.bases[pe]);
        }
        Ok(old)
    }

    fn fence(&self) -> Result<()> {
        fence(Ordering::Release);
        Ok(())
    }

    fn quiet(&self, _pe: Option<usize>) -> Result<()> {
        fence(Ordering::SeqCst);
        Ok(())
    }

    fn direct_address(&self, pe: usize, offset: usize) -> Option<usize> {
        (pe < self.bases.len() && offset < self.stride).then(|| self.bases[pe] + offset)
    }
}

#[cfg(test)]
mod tests {
    use super::{copy_bytes, LocalTransport};
    use crate::transport::{PolledWord, Transport};

    #[test]
    fn a_polled_word_reads_what_the_transport_stores_at_every_width() {
        // Two "heaps" of 8 KiB in one 8-aligned buffer; the words lie past the header
        // (whose wake words a store's wake reads and clears).
        const HEAP: usize = 8192;
        let mut buf = vec![0u64; 2 * HEAP / 8];
        let base = buf.as_mut_ptr() as usize;
        let t = LocalTransport::new(0, vec![base, base + HEAP], HEAP);
        for (width, off) in [(1usize, 4099usize), (2, 4102), (4, 4108), (8, 4112)] {
            let value = 0xa5a5_5a5a_1234_5678u64 & (u64::MAX >> (64 - 8 * width));
            t.store_word(1, off, width, value).unwrap();
            let w = PolledWord::new(&t, 1, off, width);
            assert!(t.watched_word(1, off, width).is_some(), "width {width}: the mapped heap gives a direct view");
            assert_eq!(w.load().unwrap(), value, "width {width} at {off}");
            assert_eq!(w.load().unwrap(), t.load_word(1, off, width).unwrap());
        }
        assert!(t.watched_word(0, 0, 3).is_none(), "no view of a 3-byte word");
        drop(buf);
    }

    #[test]
    fn copy_bytes_is_memmove_for_every_short_length_and_overlap() {
        for len in 0..=24usize {
            for (from, to) in [(0usize, 32usize), (0, 3), (3, 0), (0, 1), (1, 0), (2, 2)] {
                let init: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37).wrapping_add(11)).collect();
                let mut want = init.clone();
                want.copy_within(from..from + len, to);
                let mut got = init.clone();
                let p = got.as_mut_ptr();
                // SAFETY: both ranges lie inside the 64-byte buffer.
                unsafe { copy_bytes(p.add(from), p.add(to), len) };
                assert_eq!(got, want, "len {len}, from {from} to {to}");
            }
        }
    }
}
