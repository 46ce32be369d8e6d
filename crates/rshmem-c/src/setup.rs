//! Library setup, exit and query routines.

use crate::handle::{team_of, TeamHandle};
use crate::routine::Routine;
use crate::state::{self, bad_arg, fatal, rt, try_rt};
use std::ffi::{c_char, c_int, c_void};

/// Thread levels (`SHMEM_THREAD_*`).
pub const THREAD_SINGLE: c_int = 0;
/// Only the main thread calls OpenSHMEM.
pub const THREAD_FUNNELED: c_int = 1;
/// One thread at a time calls OpenSHMEM.
pub const THREAD_SERIALIZED: c_int = 2;
/// Any thread calls OpenSHMEM at any time (the runtime is `Send + Sync`).
pub const THREAD_MULTIPLE: c_int = 3;

/// `SHMEM_MAJOR_VERSION`.
pub const MAJOR_VERSION: c_int = 1;
/// `SHMEM_MINOR_VERSION`.
pub const MINOR_VERSION: c_int = 6;
/// `SHMEM_VENDOR_STRING`.
pub const VENDOR_STRING: &str = "rshmem";
/// `SHMEM_MAX_NAME_LEN` (bytes, including the terminating NUL).
pub const MAX_NAME_LEN: usize = 256;

c_fn!(init, "init"; fn () = |call| state::initialize(call, THREAD_SINGLE, state::Memory::Default));

c_fn!(init_thread, "init_thread"; fn (requested: c_int, provided: *mut c_int) -> c_int = |call| {
    if !(THREAD_SINGLE..=THREAD_MULTIPLE).contains(&requested) {
        bad_arg(call, "requested", format_args!("{requested} is not a SHMEM_THREAD_* level"));
    }
    state::initialize(call, requested, state::Memory::Default);
    if !provided.is_null() {
        // SAFETY: a non-null `provided` points to an int the caller owns.
        unsafe { *provided = state::thread_level() };
    }
    0
});

c_fn!(query_thread, "query_thread"; fn (provided: *mut c_int) = |call| {
    let _ = rt(call);
    if provided.is_null() {
        bad_arg(call, "provided", "null pointer");
    }
    // SAFETY: non-null, points to an int the caller owns.
    unsafe { *provided = state::thread_level() };
});

c_fn!(query_initialized, "query_initialized"; fn (initialized: *mut c_int) = |call| {
    if initialized.is_null() {
        bad_arg(call, "initialized", "null pointer");
    }
    // SAFETY: non-null, points to an int the caller owns.
    unsafe { *initialized = state::running() as c_int };
});

c_fn!(finalize, "finalize"; fn () = |call| {
    crate::ctx::destroy_all();
    state::finalize(call)
});

c_fn!(global_exit, "global_exit"; fn (status: c_int) -> ! = |_call| match try_rt() {
    Some(c) => c.global_exit(status),
    None => std::process::exit(status),
});

// shmemx_wtime: seconds since a fixed point of this process (the first call), by the
// monotonic clock; only differences mean anything. An extension only: no shmem_ name.
c_fn!(wtime, "wtime", shmemx_only; fn () -> f64 = |_call| {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64()
});

c_fn!(my_pe, "my_pe"; fn () -> c_int = |call| rt(call).my_pe() as c_int);
c_fn!(n_pes, "n_pes"; fn () -> c_int = |call| rt(call).n_pes() as c_int);

c_fn!(pe_accessible, "pe_accessible"; fn (pe: c_int) -> c_int = |call| (pe >= 0 && (pe as usize) < rt(call).n_pes()) as c_int);

c_fn!(addr_accessible, "addr_accessible"; fn (addr: *const c_void, pe: c_int) -> c_int = |call| {
    let c = rt(call);
    (pe >= 0 && c.addr_accessible(addr as usize, pe as usize)) as c_int
});

c_fn!(ptr, "ptr"; fn (dest: *const c_void, pe: c_int) -> *mut c_void = |call| {
    let c = rt(call);
    if pe < 0 || pe as usize >= c.n_pes() {
        return std::ptr::null_mut();
    }
    c.ptr_addr(dest as usize, pe as usize).map_or(std::ptr::null_mut(), |a| a as *mut c_void)
});

c_fn!(team_ptr, "team_ptr"; fn (team: TeamHandle, dest: *const c_void, pe: c_int) -> *mut c_void = |call| {
    let c = rt(call);
    let Some(t) = team_of(team) else { return std::ptr::null_mut() };
    let world = match c.team_layout(t) {
        Ok((start, stride, size)) if pe >= 0 && (pe as usize) < size => start + pe as usize * stride,
        Ok(_) => return std::ptr::null_mut(),
        Err(e) => fatal(call, e),
    };
    c.ptr_addr(dest as usize, world).map_or(std::ptr::null_mut(), |a| a as *mut c_void)
});

c_fn!(info_get_version, "info_get_version"; fn (major: *mut c_int, minor: *mut c_int) = |call| {
    if major.is_null() || minor.is_null() {
        bad_arg(call, if major.is_null() { "major" } else { "minor" }, "null pointer");
    }
    // SAFETY: both non-null and owned by the caller.
    unsafe {
        *major = MAJOR_VERSION;
        *minor = MINOR_VERSION;
    }
});

c_fn!(info_get_name, "info_get_name"; fn (name: *mut c_char) = |call| {
    if name.is_null() {
        bad_arg(call, "name", "null pointer");
    }
    let bytes = VENDOR_STRING.as_bytes();
    // SAFETY: the caller passes room for SHMEM_MAX_NAME_LEN bytes; the vendor string
    // and its NUL are shorter than that.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr() as *const c_char, name, bytes.len());
        *name.add(bytes.len()) = 0;
    }
});

// The deprecated SGI-era names.
c_fn!(start_pes, "start_pes", bare; fn (npes: c_int) = |call| {
    // Initializes once; later calls do nothing. The PE count comes from the launcher.
    let _ = npes;
    state::initialize(call, THREAD_SINGLE, state::Memory::Default)
});
c_fn!(my_pe_old, "_my_pe", bare; fn () -> c_int = |call| rt(call).my_pe() as c_int);
c_fn!(num_pes_old, "_num_pes", bare; fn () -> c_int = |call| rt(call).n_pes() as c_int);

/// The routines of this module, in header order.
pub(crate) const ROUTINES: &[Routine] = routines![
    init,
    init_thread,
    query_thread,
    query_initialized,
    finalize,
    global_exit,
    my_pe,
    n_pes,
    pe_accessible,
    addr_accessible,
    ptr,
    team_ptr,
    info_get_version,
    info_get_name,
    start_pes,
    my_pe_old,
    num_pes_old,
    wtime
];
