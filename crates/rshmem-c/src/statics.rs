//! Symmetric global and static variables.
//!
//! OpenSHMEM makes a C program's globals remotely accessible. At init this module moves
//! the executable's writable data (`.data` and `.bss`, the last writable `PT_LOAD`
//! segment past its RELRO part) into a shared memory file: copy the bytes into a memfd,
//! then map the file over the same addresses (`MAP_SHARED | MAP_FIXED`). The program sees
//! the same memory; the runtime hands the file to every peer, which maps it after this
//! PE's heap (see `rshmem::StaticSegment`), so RMA and atomics on a global reach
//! the peer's copy like any symmetric object.

use rshmem::StaticSegment;
use rustix::fd::OwnedFd;
use std::ffi::{c_int, c_void};

/// The range `[start, end)` to share, page aligned.
#[derive(Debug, Default, Clone, Copy)]
struct Range {
    start: usize,
    end: usize,
}

unsafe extern "C" fn find_data(info: *mut libc::dl_phdr_info, _size: libc::size_t, out: *mut c_void) -> c_int {
    // SAFETY: the dynamic loader passes a valid `dl_phdr_info` for the duration of the
    // callback, and `out` is the `Range` that `writable_data` passed in.
    let (info, out) = unsafe { (&*info, &mut *(out as *mut Range)) };
    // SAFETY: `dlpi_phdr` points to `dlpi_phnum` program headers of this object.
    let phdrs = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
    let bias = info.dlpi_addr as usize;
    let mut relro_end = 0usize;
    for ph in phdrs {
        if ph.p_type == libc::PT_GNU_RELRO {
            relro_end = bias + (ph.p_vaddr + ph.p_memsz) as usize;
        }
    }
    for ph in phdrs {
        if ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_W != 0 {
            let start = bias + ph.p_vaddr as usize;
            let end = start + ph.p_memsz as usize;
            *out = Range { start: start.max(relro_end), end };
        }
    }
    // The first object is the executable: stop after it.
    1
}

fn writable_data() -> Option<Range> {
    let mut r = Range::default();
    // SAFETY: `find_data` matches the callback type and only writes the `Range` it is given.
    unsafe { libc::dl_iterate_phdr(Some(find_data), &mut r as *mut Range as *mut c_void) };
    let page = rustix::param::page_size();
    let start = r.start & !(page - 1);
    let end = r.end.checked_add(page - 1)? & !(page - 1);
    (end > start).then_some(Range { start, end })
}

/// Moves the executable's data into a shared file and returns it as the static segment
/// (`None` when the program has no writable data).
pub(crate) fn make_symmetric() -> rshmem::Result<Option<StaticSegment>> {
    let Some(r) = writable_data() else { return Ok(None) };
    let len = r.end - r.start;
    let fd: OwnedFd = rustix::fs::memfd_create("rshmem-statics", rustix::fs::MemfdFlags::CLOEXEC)
        .map_err(|e| rshmem::Error::os("memfd_create for global variables", e))?;
    rustix::fs::ftruncate(&fd, len as u64).map_err(|e| rshmem::Error::os("ftruncate for global variables", e))?;
    // SAFETY: `[start, end)` is the executable's writable segment, mapped and readable for
    // the whole life of the process; nothing else runs in this process at init (OpenSHMEM
    // requires init before other threads use the library).
    let bytes = unsafe { std::slice::from_raw_parts(r.start as *const u8, len) };
    let mut done = 0;
    while done < len {
        done += rustix::io::pwrite(&fd, &bytes[done..], done as u64).map_err(|e| rshmem::Error::os("copy global variables", e))?;
    }
    // SAFETY: the file now holds exactly the bytes at `[start, end)`, so mapping it over
    // that range (page aligned, owned by the executable, read-write already) changes no
    // value the program sees; only the backing becomes shareable. No other thread writes
    // there between the copy and the map (see above).
    unsafe {
        rustix::mm::mmap(
            r.start as *mut c_void,
            len,
            rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
            rustix::mm::MapFlags::SHARED | rustix::mm::MapFlags::FIXED,
            &fd,
            0,
        )
    }
    .map_err(|e| rshmem::Error::os("map global variables", e))?;
    Ok(Some(StaticSegment { start: r.start, len, fd }))
}
