//! Symmetric allocation: `alloc`, `free`, `realloc` and their byte forms (the C ABI's
//! `shmem_malloc` family), `ptr` and `addr_accessible`.
//!
//! Allocation is collective over the world: every PE asks for the same size in the same
//! order, the heap agrees on the offset (growing on every PE together), and a barrier
//! ends the call so that no PE writes a peer's new memory before the peer has it.

use crate::coll::barrier::barrier_all;
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::sym::Sym;
use crate::types::SymType;

/// Alignment of reallocated blocks (as `malloc`'s).
const MIN_REALLOC_ALIGN: usize = 16;

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
        let s = Sym::new(self.rt.clone(), addr, len);
        s.fill(T::zeroed())?;
        barrier_all(&self.rt, "alloc")?;
        Ok(s)
    }

    /// Allocates and fills each PE's part with `init` (collective).
    pub fn alloc_from<T: SymType>(&self, init: &[T]) -> Result<Sym<T>> {
        let s = self.alloc::<T>(init.len())?;
        s.copy_from(0, init)?;
        barrier_all(&self.rt, "alloc_from")?;
        Ok(s)
    }

    /// Frees a symmetric allocation (collective: every PE frees the same one; a barrier
    /// precedes the free so no peer still uses it).
    pub fn free<T: SymType>(&self, sym: Sym<T>) -> Result<()> {
        self.free_bytes("free", sym.addr())
    }

    /// Byte-level collective allocation (used by the C ABI's `shmem_malloc` family).
    /// Returns the local address. The memory is not zeroed.
    pub fn malloc_bytes(&self, call: &'static str, size: usize, align: usize) -> Result<usize> {
        self.rt.quiet_all()?;
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
            let from = self.rt.heap.check_range(call, "ptr", addr, keep, me)?;
            let to = self.rt.heap.check_range(call, "ptr", new, keep, me)?;
            self.rt.to(me).copy(me, to, me, from, keep)?;
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
        let addr = self.realloc_bytes("realloc", sym.addr(), bytes)?;
        let out = Sym::new(self.rt.clone(), addr, len);
        if len > sym.len() {
            out.copy_from(sym.len(), &vec![T::zeroed(); len - sym.len()])?;
        }
        barrier_all(&self.rt, "realloc")?;
        Ok(out)
    }

    /// Byte-level collective free.
    pub fn free_bytes(&self, call: &'static str, addr: usize) -> Result<()> {
        self.rt.quiet_all()?;
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
        self.ptr_addr(sym.addr(), pe).map(|a| a as *mut T)
    }

    /// Whether `addr` is symmetric (in the heap or the static segment) and `pe` a PE of
    /// the job, so that OpenSHMEM routines on this PE can reach `addr` on `pe`, by pointer
    /// or through a transport (OpenSHMEM `shmem_addr_accessible`).
    pub fn addr_accessible(&self, addr: usize, pe: usize) -> bool {
        pe < self.n_pes() && self.rt.heap.offset_of(addr).is_some()
    }

    /// The address of symmetric `addr` on `pe` as this PE's kernels may use it: for a GPU
    /// heap, the peer's device memory as mapped on this PE's GPU (NVSHMEM's host-side
    /// `nvshmem_ptr`); for host memory, as [`Ctx::ptr_addr`]. None when `pe` is reached
    /// only through a transport.
    pub fn device_ptr_addr(&self, addr: usize, pe: usize) -> Option<usize> {
        if pe >= self.n_pes() {
            return None;
        }
        let off = self.rt.heap.offset_of(addr)?;
        let t = self.rt.to(pe);
        t.device_address(pe, off).map(|a| a as usize).or_else(|| t.direct_address(pe, off))
    }

    /// The device address of the symmetric range `[addr, addr + len)` on `pe`, after the
    /// checks an RMA call makes of it (`call` and `arg` name it in the error: PE in range,
    /// the range inside one allocation); `Ok(None)` when `pe`'s device memory is not mapped
    /// on this PE's GPU (host heaps, peers reached through a transport).
    pub fn device_range_addr(&self, call: &'static str, arg: &'static str, addr: usize, len: usize, pe: usize) -> Result<Option<usize>> {
        let (pe, off) = self.target(call, arg, addr, len, pe)?;
        Ok(self.rt.to(pe).device_address(pe, off).map(|a| a as usize))
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
