//! Virtual-memory plumbing for the symmetric heap: one reserved range, shared segments
//! mapped into it at fixed places. The only module that calls `mmap`.

use crate::error::{Error, Result};
use rustix::fd::{AsFd, OwnedFd};
use rustix::mm::{MapFlags, ProtFlags};
use std::ffi::c_void;

/// A reserved, inaccessible range of virtual addresses (unmapped on drop).
#[derive(Debug)]
pub struct Reservation {
    base: usize,
    len: usize,
}

impl Reservation {
    /// Reserves `len` bytes of address space without committing memory.
    pub fn new(len: usize) -> Result<Reservation> {
        // SAFETY: an anonymous PROT_NONE mapping at an address of the kernel's choosing
        // touches no existing memory.
        let ptr =
            unsafe { rustix::mm::mmap_anonymous(std::ptr::null_mut(), len, ProtFlags::empty(), MapFlags::PRIVATE | MapFlags::NORESERVE) }
                .map_err(|e| Error::os("reserve symmetric address space", e))?;
        Ok(Reservation { base: ptr as usize, len })
    }

    /// First address of the range.
    pub fn base(&self) -> usize {
        self.base
    }

    /// Maps `len` bytes of the shared file `fd` (from its offset 0) read-write at
    /// `base() + at`, which must lie inside the reservation and be page aligned.
    pub fn map_shared(&self, at: usize, len: usize, fd: &OwnedFd) -> Result<()> {
        assert!(at.checked_add(len).is_some_and(|end| end <= self.len), "segment outside the reservation");
        // SAFETY: the target range lies inside our own reservation (checked above), which
        // nothing else in the process uses, so MAP_FIXED replaces only reserved pages.
        unsafe {
            rustix::mm::mmap(
                (self.base + at) as *mut c_void,
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED | MapFlags::FIXED,
                fd.as_fd(),
                0,
            )
        }
        .map_err(|e| Error::os("map symmetric heap segment", e))?;
        Ok(())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // SAFETY: the range was mapped by `new` and is owned by this value alone; callers
        // that hold pointers into it hold the heap (and so this value) alive.
        let _ = unsafe { rustix::mm::munmap(self.base as *mut c_void, self.len) };
    }
}

/// Creates a shared memory file of `len` bytes (pages are committed when first touched).
pub fn create_segment(name: &str, len: usize) -> Result<OwnedFd> {
    let fd = rustix::fs::memfd_create(name, rustix::fs::MemfdFlags::CLOEXEC).map_err(|e| Error::os("memfd_create", e))?;
    rustix::fs::ftruncate(&fd, len as u64).map_err(|e| Error::os("ftruncate symmetric segment", e))?;
    Ok(fd)
}
