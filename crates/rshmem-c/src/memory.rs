//! Symmetric memory management: `malloc`, `calloc`, `align`, `realloc`, `free`,
//! `malloc_with_hints` and the deprecated `shmalloc` family.
//!
//! Each is collective over the world with the barrier the specification requires:
//! allocation routines barrier on exit, `free` on entry, `realloc` on both; a call that
//! does nothing (size 0, a null pointer) does not synchronize. The helpers take the
//! runtime, so that the GPU API (`rshmemx_cuda_malloc`, ...) allocates on its own.

use crate::routine::Routine;
use crate::state::{bad_arg, bytes_of, rt, OrExit};
use rshmem::{Ctx, Error};
use std::ffi::{c_long, c_void};

/// Alignment of `shmem_malloc` (enough for any C type), and the least alignment of
/// `shmem_align`: a smaller power of two is rounded up to it.
pub const MALLOC_ALIGN: usize = 16;

/// Collective allocation of `size` bytes on `c`'s heap; null when the heap cannot hold it.
pub(crate) fn allocate(call: &'static str, c: &Ctx, size: usize, align: usize, zero: bool) -> *mut c_void {
    if size == 0 {
        return std::ptr::null_mut();
    }
    let addr = match c.malloc_bytes(call, size, align) {
        Ok(a) => a,
        Err(e @ Error::HeapExhausted { .. }) => {
            // Every PE sees the same allocator state, so every PE returns null here.
            tracing::warn!("{call}: {e}");
            return std::ptr::null_mut();
        }
        Err(e) => crate::state::fatal(call, e),
    };
    if zero {
        // Through the transport, so a device-memory heap is zeroed too.
        c.putmem(addr, &vec![0u8; size], c.my_pe()).or_exit(call);
    }
    c.barrier_all().or_exit(call);
    addr as *mut c_void
}

/// Collective free on `c`'s heap with the barrier on entry.
pub(crate) fn release(call: &'static str, c: &Ctx, ptr: *mut c_void) {
    if ptr.is_null() {
        return;
    }
    c.barrier_all().or_exit(call);
    c.free_bytes(call, ptr as usize).or_exit(call)
}

fn reallocate(call: &'static str, ptr: *mut c_void, size: usize) -> *mut c_void {
    let c = rt(call);
    if ptr.is_null() {
        return allocate(call, c, size, MALLOC_ALIGN, false);
    }
    if size == 0 {
        release(call, c, ptr);
        return std::ptr::null_mut();
    }
    c.barrier_all().or_exit(call);
    let new = match c.realloc_bytes(call, ptr as usize, size) {
        Ok(a) => a,
        Err(e @ Error::HeapExhausted { .. }) => {
            tracing::warn!("{call}: {e}");
            return std::ptr::null_mut();
        }
        Err(e) => crate::state::fatal(call, e),
    };
    c.barrier_all().or_exit(call);
    new as *mut c_void
}

/// `shmem_align`: `alignment` must be a power of two. OpenSHMEM asks for a multiple of
/// `sizeof(void *)`; a smaller power of two (1, 2, 4) is rounded up to [`MALLOC_ALIGN`],
/// as other implementations do, since a block aligned to 16 is aligned to each of them.
pub(crate) fn aligned(call: &'static str, c: &Ctx, alignment: usize, size: usize) -> *mut c_void {
    if size == 0 {
        return std::ptr::null_mut();
    }
    if !alignment.is_power_of_two() {
        bad_arg(call, "alignment", format_args!("{alignment} is not a power of two"));
    }
    allocate(call, c, size, alignment.max(MALLOC_ALIGN), false)
}

c_fn!(malloc, "malloc"; fn (size: usize) -> *mut c_void = |call| allocate(call, rt(call), size, MALLOC_ALIGN, false));
c_fn!(malloc_with_hints, "malloc_with_hints"; fn (size: usize, hints: c_long) -> *mut c_void = |call| {
    // Hints (SHMEM_MALLOC_ATOMICS_REMOTE, SHMEM_MALLOC_SIGNAL_REMOTE) change nothing on
    // mapped memory.
    let _ = hints;
    allocate(call, rt(call), size, MALLOC_ALIGN, false)
});
c_fn!(calloc, "calloc"; fn (count: usize, size: usize) -> *mut c_void = |call| allocate(call, rt(call), bytes_of(call, count, size), MALLOC_ALIGN, true));
c_fn!(align, "align"; fn (alignment: usize, size: usize) -> *mut c_void = |call| aligned(call, rt(call), alignment, size));
c_fn!(realloc, "realloc"; fn (ptr: *mut c_void, size: usize) -> *mut c_void = |call| reallocate(call, ptr, size));
c_fn!(free, "free"; fn (ptr: *mut c_void) = |call| release(call, rt(call), ptr));

// The deprecated SGI-era names.
c_fn!(shmalloc, "shmalloc", bare; fn (size: usize) -> *mut c_void = |call| allocate(call, rt(call), size, MALLOC_ALIGN, false));
c_fn!(shfree, "shfree", bare; fn (ptr: *mut c_void) = |call| release(call, rt(call), ptr));
c_fn!(shrealloc, "shrealloc", bare; fn (ptr: *mut c_void, size: usize) -> *mut c_void = |call| reallocate(call, ptr, size));
c_fn!(shmemalign, "shmemalign", bare; fn (alignment: usize, size: usize) -> *mut c_void = |call| aligned(call, rt(call), alignment, size));

/// The routines of this module, in header order.
pub(crate) const ROUTINES: &[Routine] =
    routines![malloc, malloc_with_hints, calloc, align, realloc, free, shmalloc, shfree, shrealloc, shmemalign];
