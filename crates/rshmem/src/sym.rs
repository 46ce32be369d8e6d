//! Typed symmetric allocations.
//!
//! [`Sym<T>`] is `len` values of `T` at the same offset of every PE's symmetric heap.
//! It is created and freed collectively ([`Ctx::alloc`], [`Ctx::free`]).
//!
//! **Free and Drop.** Freeing symmetric memory is a collective operation (every PE must
//! free the same allocation, after a barrier), which a destructor cannot promise: a PE
//! that unwinds from an error would enter a barrier its peers never reach. So dropping a
//! `Sym` does *not* free it; its space stays allocated until [`Ctx::free`] is called or the
//! runtime ends. A `Sym` keeps the runtime (and so the mapping) alive, so its accessors
//! are memory-safe even after the `Ctx` handle is gone.
//!
//! **Local access.** Peers may write a PE's symmetric memory at any time, so a plain
//! `&[T]` over it would be a data race under Rust's rules. `Sym` offers copies
//! ([`Sym::read`], [`Sym::to_vec`]), writes ([`Sym::write`], [`Sym::copy_from`]) and an
//! `unsafe` view ([`Sym::local_slice`]) for code that has synchronized (barrier, wait,
//! quiet) and knows no peer writes meanwhile.

use crate::ctx::{Ctx, Runtime};
use crate::error::{Error, Result};
use crate::types::{SymType, WordType};
use std::marker::PhantomData;

/// Alignment of reallocated blocks (as `malloc`'s).
const MIN_REALLOC_ALIGN: usize = 16;
use std::sync::Arc;

/// A symmetric allocation of `len` values of `T`.
pub struct Sym<T: SymType> {
    pub(crate) rt: Arc<Runtime>,
    addr: usize,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: SymType> std::fmt::Debug for Sym<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sym<{}>[{}] at {:#x}", T::NAME, self.len, self.addr)
    }
}

impl<T: SymType> Sym<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Address of element 0 in this PE (the symmetric address used by the mem forms).
    pub fn addr(&self) -> usize {
        self.addr
    }

    /// Address of element `i` in this PE.
    pub fn addr_of(&self, i: usize) -> usize {
        self.addr + i * std::mem::size_of::<T>()
    }

    /// Size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    fn check_index(&self, call: &'static str, index: usize, count: usize) -> Result<()> {
        self.elements(call, "index", index, count, self.rt.my_pe).map(|_| ())
    }

    /// Address of element `index` after checking that elements `index..index + count` lie
    /// inside this allocation; `arg` and `pe` name the argument and PE in the error. Every
    /// typed operation (RMA, AMO, signal, wait, test) goes through it: the heap's range
    /// check alone would accept an index just past the end, whose address is the start of
    /// the next allocation.
    pub(crate) fn elements(&self, call: &'static str, arg: &'static str, index: usize, count: usize, pe: usize) -> Result<usize> {
        if index.checked_add(count).is_some_and(|e| e <= self.len) {
            Ok(self.addr_of(index))
        } else {
            Err(Error::OutOfBounds {
                call,
                arg,
                addr: self.addr_of(index.min(self.len)),
                len: count.saturating_mul(std::mem::size_of::<T>()),
                detail: format!("elements {index}..{} are past the end of a {}-element allocation", index.saturating_add(count), self.len),
                pe,
            })
        }
    }

    fn my_offset(&self, i: usize) -> usize {
        self.rt.heap.offset_of(self.addr_of(i)).expect("a live Sym lies in the symmetric heap")
    }

    /// Copies element `i` out of this PE's memory (an atomic load for word types is
    /// available as [`Sym::load`]).
    pub fn read(&self, i: usize) -> Result<T> {
        self.check_index("Sym::read", i, 1)?;
        let mut v = [T::zeroed()];
        self.rt.to(self.rt.my_pe).get(self.rt.my_pe, self.my_offset(i), bytemuck::cast_slice_mut(&mut v));
        Ok(v[0])
    }

    /// Copies this PE's elements out.
    pub fn to_vec(&self) -> Vec<T> {
        let mut v = vec![T::zeroed(); self.len];
        self.rt.to(self.rt.my_pe).get(self.rt.my_pe, self.my_offset(0), bytemuck::cast_slice_mut(&mut v));
        v
    }

    /// Writes element `i` of this PE's memory.
    pub fn write(&self, i: usize, value: T) -> Result<()> {
        self.copy_from(i, &[value])
    }

    /// Writes `values` into this PE's memory starting at element `i`.
    pub fn copy_from(&self, i: usize, values: &[T]) -> Result<()> {
        self.check_index("Sym::copy_from", i, values.len())?;
        self.rt.to(self.rt.my_pe).put(self.rt.my_pe, self.my_offset(i), bytemuck::cast_slice(values));
        Ok(())
    }

    /// Sets every element of this PE's memory to `value`.
    pub fn fill(&self, value: T) {
        let v = vec![value; self.len];
        self.rt.to(self.rt.my_pe).put(self.rt.my_pe, self.my_offset(0), bytemuck::cast_slice(&v));
    }

    /// A view of this PE's elements.
    ///
    /// # Safety
    /// No peer (or other thread) may write these elements while the slice lives: the
    /// program must have synchronized (barrier, wait, quiet) so that it knows none does.
    pub unsafe fn local_slice(&self) -> &[T] {
        assert!(!self.rt.heap.is_device(), "Sym::local_slice: the heap is in GPU memory; copy with to_vec or use it from a kernel");
        // SAFETY: `addr..addr+len*size` is a live allocation of the mapped heap, aligned for
        // T (allocations are 16-aligned), kept mapped by `self.rt`; the caller rules out
        // concurrent writers.
        unsafe { std::slice::from_raw_parts(self.addr as *const T, self.len) }
    }

    /// A mutable view of this PE's elements.
    ///
    /// # Safety
    /// As for [`Sym::local_slice`], and no other view of these elements may be alive.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn local_slice_mut(&self) -> &mut [T] {
        assert!(!self.rt.heap.is_device(), "Sym::local_slice_mut: the heap is in GPU memory; write with copy_from or from a kernel");
        // SAFETY: as in `local_slice`; the caller rules out aliasing views.
        unsafe { std::slice::from_raw_parts_mut(self.addr as *mut T, self.len) }
    }
}

impl<T: WordType> Sym<T> {
    /// Atomically loads element `i` of this PE's memory (for flags peers update).
    pub fn load(&self, i: usize) -> Result<T> {
        self.check_index("Sym::load", i, 1)?;
        Ok(T::from_bits(self.rt.to(self.rt.my_pe).load_word(self.rt.my_pe, self.my_offset(i), T::WIDTH)))
    }

    /// Atomically stores element `i` of this PE's memory (and wakes local waiters).
    pub fn store(&self, i: usize, value: T) -> Result<()> {
        self.check_index("Sym::store", i, 1)?;
        self.rt.to(self.rt.my_pe).store_word(self.rt.my_pe, self.my_offset(i), T::WIDTH, value.to_bits());
        Ok(())
    }
}

impl Ctx {
    /// Allocates `len` zeroed elements of `T` on every PE (collective; every PE must ask
    /// for the same `len`).
    pub fn alloc<T: SymType>(&self, len: usize) -> Result<Sym<T>> {
        self.alloc_aligned(len, std::mem::align_of::<T>())
    }

    /// Allocates `len` zeroed elements aligned to `align` bytes (collective).
    pub fn alloc_aligned<T: SymType>(&self, len: usize, align: usize) -> Result<Sym<T>> {
        // An overflowing size asks for "everything": the collective check then still runs on
        // every PE (a mismatch is reported everywhere) and the request fails as exhausted.
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        let addr = self.malloc_bytes("alloc", bytes, align)?;
        let s = Sym { rt: self.rt.clone(), addr, len, _t: PhantomData };
        s.fill(T::zeroed());
        crate::coll::barrier::barrier_all(&self.rt, "alloc")?;
        Ok(s)
    }

    /// Allocates and fills each PE's part with `init` (collective).
    pub fn alloc_from<T: SymType>(&self, init: &[T]) -> Result<Sym<T>> {
        let s = self.alloc::<T>(init.len())?;
        s.copy_from(0, init)?;
        crate::coll::barrier::barrier_all(&self.rt, "alloc_from")?;
        Ok(s)
    }

    /// Frees a symmetric allocation (collective: every PE frees the same one; a barrier
    /// precedes the free so no peer still uses it).
    pub fn free<T: SymType>(&self, sym: Sym<T>) -> Result<()> {
        self.free_bytes("free", sym.addr)
    }

    /// Byte-level collective allocation (used by the C ABI's `shmem_malloc` family).
    /// Returns the local address. The memory is not zeroed.
    pub fn malloc_bytes(&self, call: &'static str, size: usize, align: usize) -> Result<usize> {
        crate::ops::order::quiet_all(&self.rt);
        let before = self.rt.heap.capacity();
        let addr = {
            let mut boot = self.rt.boot();
            self.rt.heap.alloc(&mut **boot, call, size, align)?
        };
        #[cfg(feature = "cuda")]
        if let Some(g) = &self.rt.gpu {
            let after = self.rt.heap.capacity();
            if after != before {
                g.set_heap_size(after)?;
            }
        }
        #[cfg(not(feature = "cuda"))]
        let _ = before;
        Ok(addr)
    }

    /// Resizes a symmetric allocation (collective; every PE passes the same allocation and
    /// size): a new allocation receives this PE's first `min(old, new)` bytes and the old
    /// one is freed. Returns the new address.
    pub fn realloc_bytes(&self, call: &'static str, addr: usize, size: usize) -> Result<usize> {
        let old = self.rt.heap.size_of(addr).ok_or_else(|| Error::InvalidArgument {
            call,
            arg: "ptr",
            detail: format!("{addr:#x} is not the start of a live symmetric allocation"),
            pe: self.my_pe(),
        })?;
        let new = self.malloc_bytes(call, size, MIN_REALLOC_ALIGN)?;
        let keep = old.min(size);
        if keep > 0 {
            let me = self.my_pe();
            let (from, to) = (self.rt.heap.offset_of(addr).expect("live"), self.rt.heap.offset_of(new).expect("live"));
            let mut bytes = vec![0u8; keep];
            self.rt.to(me).get(me, from, &mut bytes);
            self.rt.to(me).put(me, to, &bytes);
        }
        self.free_bytes(call, addr)?;
        Ok(new)
    }

    /// Resizes `sym` to `len` elements (collective), keeping this PE's first
    /// `min(old, new)` elements; new elements are zero.
    pub fn realloc<T: SymType>(&self, sym: Sym<T>, len: usize) -> Result<Sym<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| Error::InvalidArgument {
            call: "realloc",
            arg: "len",
            detail: format!("{len} elements of {} overflow", T::NAME),
            pe: self.my_pe(),
        })?;
        let grown = Sym { rt: self.rt.clone(), addr: 0, len, _t: PhantomData };
        let addr = self.realloc_bytes("realloc", sym.addr, bytes)?;
        let out = Sym { addr, ..grown };
        if len > sym.len {
            out.copy_from(sym.len, &vec![T::zeroed(); len - sym.len])?;
        }
        crate::coll::barrier::barrier_all(&self.rt, "realloc")?;
        Ok(out)
    }

    /// Byte-level collective free.
    pub fn free_bytes(&self, call: &'static str, addr: usize) -> Result<()> {
        crate::ops::order::quiet_all(&self.rt);
        let mut boot = self.rt.boot();
        self.rt.heap.free(&mut **boot, call, addr)
    }

    /// Size of the live allocation starting at `addr`, if any.
    pub fn allocation_size(&self, addr: usize) -> Option<usize> {
        self.rt.heap.size_of(addr)
    }

    /// A directly usable address of `sym`'s element 0 on `pe`, when `pe`'s heap is mapped
    /// into this process (OpenSHMEM `shmem_ptr`).
    pub fn ptr<T: SymType>(&self, sym: &Sym<T>, pe: usize) -> Option<*mut T> {
        self.ptr_addr(sym.addr, pe).map(|a| a as *mut T)
    }

    /// Whether `addr` is symmetric (in the heap or the static segment) and `pe` a PE of
    /// the job, so that OpenSHMEM routines on this PE can reach `addr` on `pe`, by pointer
    /// or through a transport (OpenSHMEM `shmem_addr_accessible`).
    pub fn addr_accessible(&self, addr: usize, pe: usize) -> bool {
        pe < self.n_pes() && self.rt.heap.offset_of(addr).is_some()
    }

    /// Address form of [`Ctx::ptr`].
    pub fn ptr_addr(&self, addr: usize, pe: usize) -> Option<usize> {
        if pe >= self.n_pes() {
            return None;
        }
        let off = self.rt.heap.offset_of(addr)?;
        self.rt.to(pe).direct_address(pe, off)
    }
}
