//! Typed symmetric allocations.
//!
//! [`Sym<T>`] is `len` values of `T` at the same offset of every PE's symmetric heap.
//! It is created and freed collectively (`Ctx::alloc`, `Ctx::free`: `ops::alloc`).
//!
//! **Free and Drop.** Freeing symmetric memory is a collective operation (every PE must
//! free the same allocation, after a barrier), which a destructor cannot promise: a PE
//! that unwinds from an error would enter a barrier its peers never reach. So dropping a
//! `Sym` does *not* free it; its space stays allocated until `Ctx::free` is called or the
//! runtime ends. A `Sym` keeps the runtime (and so the mapping) alive, so its accessors
//! are memory-safe even after the `Ctx` handle is gone.
//!
//! **Local access.** Peers may write a PE's symmetric memory at any time, so a plain
//! `&[T]` over it would be a data race under Rust's rules. `Sym` offers copies
//! ([`Sym::read`], [`Sym::to_vec`]), writes ([`Sym::write`], [`Sym::copy_from`]) and an
//! `unsafe` view ([`Sym::local_slice`]) for code that has synchronized (barrier, wait,
//! quiet) and knows no peer writes meanwhile.

use crate::error::{Error, Result};
use crate::runtime::Runtime;
use crate::types::{SymType, WordType};
use std::marker::PhantomData;
use std::sync::Arc;

/// A symmetric allocation of `len` values of `T`.
pub struct Sym<T: SymType> {
    pub(crate) rt: Arc<Runtime>,
    addr: usize,
    len: usize,
    /// Heap offset of element 0 (`None`: not in the heap, which the range checks report).
    offset: Option<usize>,
    /// The heap's free count when the handle was made (see [`Sym::offset_while_live`]).
    frees: u64,
    _t: PhantomData<T>,
}

impl<T: SymType> Sym<T> {
    /// The handle on `len` elements at `addr` of `rt`'s heap (an allocation just made, or
    /// a range just checked to lie inside a live one).
    pub(crate) fn new(rt: Arc<Runtime>, addr: usize, len: usize) -> Sym<T> {
        let frees = rt.heap.frees();
        let offset = rt.heap.offset_of(addr);
        Sym { rt, addr, len, offset, frees, _t: PhantomData }
    }

    /// Heap offset of element `index` (which [`Sym::elements`] accepted) for an operation
    /// of `rt`, when the range check may be skipped: the handle belongs to `rt` and no
    /// allocation has been freed since it was made, so its allocation is still live.
    #[inline]
    pub(crate) fn offset_while_live(&self, rt: &Arc<Runtime>, index: usize) -> Option<usize> {
        let off = self.offset?;
        (Arc::ptr_eq(&self.rt, rt) && self.rt.heap.frees() == self.frees).then(|| off + index * std::mem::size_of::<T>())
    }
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

    /// Heap offset of element `i` (which `check_index` accepted, or the end).
    fn my_offset(&self, call: &'static str, i: usize) -> Result<usize> {
        let addr = self.addr_of(i);
        self.rt.heap.offset_of(addr).ok_or_else(|| self.rt.invalid(call, "self", format!("{addr:#x} is not in this PE's heap")))
    }

    /// Copies element `i` out of this PE's memory (an atomic load for word types is
    /// available as [`Sym::load`]).
    pub fn read(&self, i: usize) -> Result<T> {
        self.check_index("Sym::read", i, 1)?;
        let mut v = [T::zeroed()];
        let me = self.rt.my_pe;
        self.rt.to(me).get(me, self.my_offset("Sym::read", i)?, bytemuck::cast_slice_mut(&mut v))?;
        Ok(v[0])
    }

    /// Copies this PE's elements out.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut v = vec![T::zeroed(); self.len];
        let me = self.rt.my_pe;
        self.rt.to(me).get(me, self.my_offset("Sym::to_vec", 0)?, bytemuck::cast_slice_mut(&mut v))?;
        Ok(v)
    }

    /// Writes element `i` of this PE's memory.
    pub fn write(&self, i: usize, value: T) -> Result<()> {
        self.copy_from(i, &[value])
    }

    /// Writes `values` into this PE's memory starting at element `i`.
    pub fn copy_from(&self, i: usize, values: &[T]) -> Result<()> {
        self.check_index("Sym::copy_from", i, values.len())?;
        let me = self.rt.my_pe;
        self.rt.to(me).put(me, self.my_offset("Sym::copy_from", i)?, bytemuck::cast_slice(values))
    }

    /// Sets every element of this PE's memory to `value`.
    pub fn fill(&self, value: T) -> Result<()> {
        let v = vec![value; self.len];
        let me = self.rt.my_pe;
        self.rt.to(me).put(me, self.my_offset("Sym::fill", 0)?, bytemuck::cast_slice(&v))
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

impl<T: SymType> Sym<T> {
    /// A typed view of `len` values of `U` that starts `byte_offset` bytes into this
    /// allocation, for code that reinterprets raw symmetric memory (language bindings that
    /// allocate bytes and hand out arrays of any element type). The range must lie inside
    /// the allocation and be aligned for `U`. Freeing a view frees the allocation it
    /// starts (only a view at offset 0 starts one).
    pub fn view<U: SymType>(&self, byte_offset: usize, len: usize) -> Result<Sym<U>> {
        let (size, align) = (std::mem::size_of::<U>(), std::mem::align_of::<U>());
        let end = len.checked_mul(size).and_then(|b| b.checked_add(byte_offset));
        if end.is_none_or(|e| e > self.size_bytes()) {
            return Err(Error::OutOfBounds {
                call: "Sym::view",
                arg: "len",
                addr: self.addr.saturating_add(byte_offset),
                len: len.saturating_mul(size),
                detail: format!("runs past the end of a {}-byte allocation", self.size_bytes()),
                pe: self.rt.my_pe,
            });
        }
        let addr = self.addr + byte_offset;
        if !addr.is_multiple_of(align) {
            return Err(Error::Misaligned { call: "Sym::view", arg: "byte_offset", addr, align, ty: U::NAME, pe: self.rt.my_pe });
        }
        // The view lies inside this handle's allocation, so it is live exactly as long.
        let offset = self.offset.map(|o| o + byte_offset);
        Ok(Sym { rt: self.rt.clone(), addr, len, offset, frees: self.frees, _t: PhantomData })
    }
}

impl<T: WordType> Sym<T> {
    /// Atomically loads element `i` of this PE's memory (for flags peers update).
    pub fn load(&self, i: usize) -> Result<T> {
        self.check_index("Sym::load", i, 1)?;
        let me = self.rt.my_pe;
        Ok(T::from_bits(self.rt.to(me).load_word(me, self.my_offset("Sym::load", i)?, T::WIDTH)?))
    }

    /// Atomically stores element `i` of this PE's memory (and wakes local waiters).
    pub fn store(&self, i: usize, value: T) -> Result<()> {
        self.check_index("Sym::store", i, 1)?;
        let me = self.rt.my_pe;
        self.rt.to(me).store_word(me, self.my_offset("Sym::store", i)?, T::WIDTH, value.to_bits())
    }
}
