//! The C host API for GPU PEs (`rshmemx_cuda.h`): GPU init, GPU-heap allocation, the
//! stream-ordered calls on a raw `cudaStream_t`, the on-stream collectives, device team
//! handles, collective (cooperative) launch, buffer registration, host RMA whose local
//! side is device memory, and the registration of the program's own copies of the
//! device state (nvcc-built code, modules it loads).
//!
//! Every routine here calls the Rust runtime's GPU API (`rshmem::ops::on_stream`,
//! `rshmem::coll::gpu`, `rshmem::gpu`); none reimplements it. Names follow NVSHMEM's
//! host API with the `rshmemx_` prefix (`rshmemx_putmem_on_stream` for
//! `nvshmemx_putmem_on_stream`), so a compatibility header maps one onto the other.
//! Streams, modules and kernels cross the ABI as the driver's handle types (a
//! `cudaStream_t` is a `CUstream`), so the header needs no CUDA header.
//!
//! Everything here acts on the GPU API's runtime (`crate::state::gpu_side`): GPU PEs
//! started over `shmem_init`'s CPU PEs when a program started them that way
//! (`rshmemx_cuda_init_with_shmem`), else the one runtime of the process.
//!
//! Errors end the job with a message naming the call and the argument, as the rest of
//! the C ABI does; team routines return nonzero for `SHMEM_TEAM_INVALID`.

use crate::handle::{team_of, TeamHandle};
use crate::meet::{cuda_init_mpi_comm, cuda_init_uniqueid};
use crate::routine::Routine;
use crate::state::{bad_arg, bytes_of, fatal, gpu_side, pe_arg, try_gpu_side, OrExit};
use rshmem::gpu::cuda::{BorrowedStream, Stream as CuStream};
use rshmem::gpu::Gpu;
use rshmem::{Ctx, ReduceOp, SignalOp, Team};
use std::ffi::{c_int, c_ulong, c_void};
use std::sync::{Arc, Mutex};

/// A CUDA stream as the ABI passes it (`cudaStream_t`, `CUstream`); null is the legacy
/// default stream.
pub type Stream = *mut c_void;
/// A module the program loaded with the driver API (`CUmodule`).
pub type CuModule = *mut c_void;

/// Grid or block dimensions (laid out as CUDA's `dim3`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Dim3 {
    /// Extent in x.
    pub x: u32,
    /// Extent in y.
    pub y: u32,
    /// Extent in z.
    pub z: u32,
}

/// The device header's function that returns the address (and size) of its file's
/// `rshmem_state` on device `device`, or null.
pub type StateAddressFn = Option<unsafe extern "C" fn(c_int, *mut c_ulong) -> *mut c_void>;
/// The device header's function that turns a kernel's host function into its driver
/// handle (`cudaGetFuncBySymbol`), or null.
pub type FunctionOfFn = Option<unsafe extern "C" fn(*const c_void) -> *mut c_void>;

/// What the nvcc-built files of the program registered (one entry per file; files of an
/// `-rdc` program share one state, which is attached once).
static CUDART: Mutex<Vec<(StateAddressFn, FunctionOfFn)>> = Mutex::new(Vec::new());
/// Device buffers the program registered: (address, length).
static BUFFERS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// The runtime of the GPU API (`crate::state::gpu_side`: GPU PEs started over
/// `shmem_init`'s CPU PEs, else the one runtime) and its GPU, or the end of the job naming
/// `call`.
pub(crate) fn gpu_rt(call: &str) -> (&'static Ctx, &'static Arc<Gpu>) {
    let c = gpu_side(call);
    match c.gpu() {
        Some(g) => (c, g),
        None => fatal(call, "this PE has no GPU heap: start the library with rshmemx_cuda_init (or RSHMEM_DEVICE=gpu) for GPU PEs"),
    }
}

/// The program's stream as the runtime takes it.
fn stream_of(c: &Ctx, s: Stream) -> BorrowedStream {
    // SAFETY: the C contract: `s` is a live stream of this PE's device's primary context
    // (or null, the legacy default stream), live for the call.
    unsafe { CuStream::borrow_raw(s as _, c.my_pe()) }
}

/// The team behind a handle for an on-stream call; `None` for `SHMEM_TEAM_INVALID`.
fn team_arg(h: TeamHandle) -> Option<Team> {
    team_of(h)
}

/// Attaches every registered file's state copy (after init, and at each registration
/// once the runtime runs).
fn attach_registered(call: &'static str) {
    let Some(c) = try_gpu_side() else { return };
    let Some(g) = c.gpu() else { return };
    let hooks = CUDART.lock().unwrap_or_else(|p| p.into_inner()).clone();
    for (state, _) in hooks {
        attach_one(call, g, state);
    }
}

fn attach_one(call: &str, g: &Gpu, state: StateAddressFn) {
    let Some(f) = state else { return };
    let mut size: c_ulong = 0;
    // SAFETY: the device header's function: it calls cudart for its file's symbol.
    let addr = unsafe { f(g.ordinal() as c_int, &mut size) };
    if addr.is_null() {
        fatal(call, "cudart could not find a file's rshmem_state (cudaGetSymbolAddress failed): was it built for this GPU's architecture?");
    }
    g.attach_state(addr as u64, size as usize).or_exit(call);
}

c_fn!(cudart_register, "cudart_register", rshmemx; fn (state_address: StateAddressFn, function_of: FunctionOfFn) -> c_int = |call| {
    CUDART.lock().unwrap_or_else(|p| p.into_inner()).push((state_address, function_of));
    crate::state::on_started(attach_registered);
    if let Some(g) = try_gpu_side().and_then(|c| c.gpu()) {
        attach_one(call, g, state_address);
    }
    0
});

c_fn!(cuda_init, "cuda_init", rshmemx; fn () -> c_int = |call| {
    crate::state::initialize(call, crate::setup::THREAD_SINGLE, crate::state::Memory::Gpu);
    0
});

c_fn!(cuda_init_thread, "cuda_init_thread", rshmemx; fn (requested: c_int, provided: *mut c_int) -> c_int = |call| {
    if !(crate::setup::THREAD_SINGLE..=crate::setup::THREAD_MULTIPLE).contains(&requested) {
        bad_arg(call, "requested", format_args!("{requested} is not a SHMEM_THREAD_* level"));
    }
    crate::state::initialize(call, requested, crate::state::Memory::Gpu);
    if !provided.is_null() {
        // SAFETY: a non-null `provided` points to an int the caller owns.
        unsafe { *provided = crate::state::thread_level() };
    }
    0
});

c_fn!(cuda_device, "cuda_device", rshmemx; fn () -> c_int = |call| {
    gpu_side(call).gpu().map_or(-1, |g| g.ordinal() as c_int)
});

c_fn!(cumodule_init, "cumodule_init", rshmemx; fn (module: CuModule) -> c_int = |call| {
    let (_, g) = gpu_rt(call);
    if module.is_null() {
        bad_arg(call, "module", "null module");
    }
    // SAFETY: the C contract: a live module of this PE's device's primary context.
    unsafe { g.attach_module(module as _) }.or_exit(call);
    0
});

c_fn!(cumodule_finalize, "cumodule_finalize", rshmemx; fn (module: CuModule) -> c_int = |call| {
    let (_, g) = gpu_rt(call);
    if module.is_null() {
        bad_arg(call, "module", "null module");
    }
    // SAFETY: as for cumodule_init.
    let (addr, _) = unsafe { g.module_state(module as _) }.or_exit(call);
    if g.detach_state(addr) { 0 } else { bad_arg(call, "module", "was not initialized with rshmemx_cumodule_init") }
});

c_fn!(team_device, "team_device", rshmemx; fn (team: TeamHandle) -> c_int = |call| {
    let c = gpu_side(call);
    match team_arg(team) {
        Some(t) => c.device_team(t).or_exit(call),
        None => -1,
    }
});

// ---- GPU heap ----

c_fn!(cuda_malloc, "cuda_malloc", rshmemx; fn (size: usize) -> *mut c_void = |call| {
    let (c, _) = gpu_rt(call);
    crate::memory::allocate(call, c, size, crate::memory::MALLOC_ALIGN, false)
});
c_fn!(cuda_calloc, "cuda_calloc", rshmemx; fn (count: usize, size: usize) -> *mut c_void = |call| {
    let (c, _) = gpu_rt(call);
    crate::memory::allocate(call, c, bytes_of(call, count, size), crate::memory::MALLOC_ALIGN, true)
});
c_fn!(cuda_align, "cuda_align", rshmemx; fn (alignment: usize, size: usize) -> *mut c_void = |call| {
    let (c, _) = gpu_rt(call);
    crate::memory::aligned(call, c, alignment, size)
});
c_fn!(cuda_free, "cuda_free", rshmemx; fn (ptr: *mut c_void) = |call| {
    let (c, _) = gpu_rt(call);
    crate::memory::release(call, c, ptr)
});

c_fn!(buffer_register, "buffer_register", rshmemx; fn (addr: *mut c_void, length: usize) -> c_int = |call| {
    let (_, g) = gpu_rt(call);
    if addr.is_null() || length == 0 {
        bad_arg(call, "addr", format_args!("{addr:?} with length {length}: a buffer needs an address and a length"));
    }
    if !g.is_device_pointer(addr as u64) || !g.is_device_pointer(addr as u64 + length as u64 - 1) {
        bad_arg(call, "addr", format_args!("{addr:?}..+{length} is not device memory of this PE's GPU"));
    }
    let mut list = BUFFERS.lock().unwrap_or_else(|p| p.into_inner());
    let a = addr as usize;
    if list.iter().any(|&(s, l)| a < s + l && s < a + length) {
        bad_arg(call, "addr", format_args!("{addr:?}..+{length} overlaps a registered buffer"));
    }
    list.push((a, length));
    0
});

c_fn!(buffer_unregister, "buffer_unregister", rshmemx; fn (addr: *mut c_void) -> c_int = |call| {
    let _ = gpu_side(call);
    let mut list = BUFFERS.lock().unwrap_or_else(|p| p.into_inner());
    let before = list.len();
    list.retain(|&(s, _)| s != addr as usize);
    if list.len() == before { bad_arg(call, "addr", format_args!("{addr:?} is not a registered buffer")) } else { 0 }
});

// `rshmemx_ptr`: the address of `dest` on `pe` that this PE's kernels may use (NVSHMEM's
// host-side `nvshmem_ptr`): the peer's device memory as mapped on this GPU, or null.
c_fn!(ptr, "ptr", rshmemx; fn (dest: *const c_void, pe: c_int) -> *mut c_void = |call| {
    let c = gpu_side(call);
    match usize::try_from(pe) {
        Ok(pe) => c.device_ptr_addr(dest as usize, pe).map_or(std::ptr::null_mut(), |a| a as *mut c_void),
        Err(_) => std::ptr::null_mut(),
    }
});

// ---- host RMA whose local side may be device memory ----

/// Whether local buffer `p` is device memory (registered, or known to the driver as such).
fn local_is_device(g: &Gpu, p: *const c_void) -> bool {
    let a = p as usize;
    BUFFERS.lock().unwrap_or_else(|e| e.into_inner()).iter().any(|&(s, l)| a >= s && a < s + l) || g.is_device_pointer(a as u64)
}

/// `rshmemx_putmem`/`_nbi` (`relay` None) and `rshmemx_relay_putmem` (the relay PE, a
/// C argument): host memory goes as `shmem_putmem` (or `Ctx::relay_putmem`); device memory
/// goes by one device copy to a peer whose GPU heap is mapped here, else is staged through
/// the host (blocking either way, so the nbi form completes early, as it may). The relay
/// form works on CPU PEs too.
unsafe fn put_any(call: &str, dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int, relay: Option<c_int>) {
    let c = gpu_side(call);
    let pe = pe_arg(call, c, pe);
    let relay = relay.map(|r| relay_arg(call, c, r));
    let g = match relay {
        None => Some(gpu_rt(call).1),
        Some(_) => c.gpu(),
    };
    if nelems == 0 {
        return;
    }
    let put = |src: &[u8]| match relay {
        None => c.putmem(dest as usize, src, pe),
        Some(r) => c.relay_putmem(dest as usize, src, pe, r),
    };
    let Some(g) = g.filter(|g| local_is_device(g, source)) else {
        // SAFETY: host memory of `nelems` bytes (the routine's contract).
        return put(unsafe { crate::state::local(call, "source", source, nelems) }).or_exit(call);
    };
    if relay.is_none() {
        if let Some(remote) = c.device_range_addr("putmem", "dest", dest as usize, nelems, pe).or_exit(call) {
            return g.copy_device(remote as u64, source as u64, nelems).or_exit(call);
        }
    }
    let mut staged = vec![0u8; nelems];
    g.read_device(&mut staged, source as u64).or_exit(call);
    put(&staged).or_exit(call)
}

/// `rshmemx_getmem`/`_nbi` and `rshmemx_relay_getmem`, the reverse of [`put_any`].
unsafe fn get_any(call: &str, dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int, relay: Option<c_int>) {
    let c = gpu_side(call);
    let pe = pe_arg(call, c, pe);
    let relay = relay.map(|r| relay_arg(call, c, r));
    let g = match relay {
        None => Some(gpu_rt(call).1),
        Some(_) => c.gpu(),
    };
    if nelems == 0 {
        return;
    }
    let get = |dst: &mut [u8]| match relay {
        None => c.getmem(dst, source as usize, pe),
        Some(r) => c.relay_getmem(dst, source as usize, pe, r),
    };
    let Some(g) = g.filter(|g| local_is_device(g, dest)) else {
        // SAFETY: room for `nelems` bytes at `dest` (the routine's contract).
        return get(unsafe { crate::state::local_mut(call, "dest", dest, nelems) }).or_exit(call);
    };
    if relay.is_none() {
        if let Some(remote) = c.device_range_addr("getmem", "source", source as usize, nelems, pe).or_exit(call) {
            return g.copy_device(dest as u64, remote as u64, nelems).or_exit(call);
        }
    }
    let mut staged = vec![0u8; nelems];
    get(&mut staged).or_exit(call);
    g.write_device(dest as u64, &staged).or_exit(call)
}

/// The relay PE argument of the relay routines (a negative one ends the job, naming it).
fn relay_arg(call: &str, c: &rshmem::Ctx, relay_pe: c_int) -> usize {
    usize::try_from(relay_pe).unwrap_or_else(|_| crate::state::bad_pe(call, "relay_pe", relay_pe.into(), c.n_pes()))
}

c_fn!(putmem, "putmem", rshmemx; fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) = |call| put_any(call, dest, source, nelems, pe, None));
c_fn!(putmem_nbi, "putmem_nbi", rshmemx; fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) = |call| put_any(call, dest, source, nelems, pe, None));
c_fn!(getmem, "getmem", rshmemx; fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) = |call| get_any(call, dest, source, nelems, pe, None));
c_fn!(getmem_nbi, "getmem_nbi", rshmemx; fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) = |call| get_any(call, dest, source, nelems, pe, None));
c_fn!(relay_putmem, "relay_putmem", rshmemx; fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int, relay_pe: c_int) = |call| put_any(call, dest, source, nelems, pe, Some(relay_pe)));
c_fn!(relay_getmem, "relay_getmem", rshmemx; fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int, relay_pe: c_int) = |call| get_any(call, dest, source, nelems, pe, Some(relay_pe)));

// ---- stream-ordered RMA, signals, waits, ordering ----

/// Put of `bytes` on `stream`.
fn put_on_stream(call: &str, dest: *mut c_void, source: *const c_void, bytes: usize, pe: c_int, stream: Stream) {
    let (c, _) = gpu_rt(call);
    let pe = pe_arg(call, c, pe);
    if bytes > 0 && source.is_null() {
        bad_arg(call, "source", format_args!("null pointer for {bytes} bytes"));
    }
    c.putmem_on_stream(dest as usize, source as u64, bytes, pe, &stream_of(c, stream)).or_exit(call)
}

/// Get of `bytes` on `stream`.
fn get_on_stream(call: &str, dest: *mut c_void, source: *const c_void, bytes: usize, pe: c_int, stream: Stream) {
    let (c, _) = gpu_rt(call);
    let pe = pe_arg(call, c, pe);
    if bytes > 0 && dest.is_null() {
        bad_arg(call, "dest", format_args!("null pointer for {bytes} bytes"));
    }
    c.getmem_on_stream(dest as u64, source as usize, bytes, pe, &stream_of(c, stream)).or_exit(call)
}

/// A `SHMEM_SIGNAL_*` operation argument.
pub(crate) fn signal_op(call: &str, sig_op: c_int) -> SignalOp {
    match sig_op {
        x if x == SignalOp::Set as c_int => SignalOp::Set,
        x if x == SignalOp::Add as c_int => SignalOp::Add,
        _ => bad_arg(call, "sig_op", format_args!("{sig_op} is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD")),
    }
}

/// Signal update on `stream` (after what the stream holds before it).
fn signal_on_stream(call: &'static str, sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int, stream: Stream) {
    let (c, _) = gpu_rt(call);
    let pe = pe_arg(call, c, pe);
    let op = signal_op(call, sig_op);
    let sig = c.sym_at::<u64>(call, "sig_addr", sig_addr as usize, 1).or_exit(call);
    c.signal_on_stream(&sig, 0, signal, op, pe, &stream_of(c, stream)).or_exit(call)
}

/// Put, then signal, on `stream`: the signal lands after the data (stream order).
fn put_signal_on_stream(
    call: &'static str,
    dest: *mut c_void,
    source: *const c_void,
    bytes: usize,
    sig_addr: *mut u64,
    signal: u64,
    sig_op: c_int,
    pe: c_int,
    stream: Stream,
) {
    put_on_stream(call, dest, source, bytes, pe, stream);
    signal_on_stream(call, sig_addr, signal, sig_op, pe, stream)
}

c_fn!(putmem_on_stream, "putmem_on_stream", rshmemx; fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int, stream: Stream) = |call| put_on_stream(call, dest, source, nelems, pe, stream));
c_fn!(putmem_nbi_on_stream, "putmem_nbi_on_stream", rshmemx; fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int, stream: Stream) = |call| put_on_stream(call, dest, source, nelems, pe, stream));
c_fn!(getmem_on_stream, "getmem_on_stream", rshmemx; fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int, stream: Stream) = |call| get_on_stream(call, dest, source, nelems, pe, stream));
c_fn!(getmem_nbi_on_stream, "getmem_nbi_on_stream", rshmemx; fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int, stream: Stream) = |call| get_on_stream(call, dest, source, nelems, pe, stream));
c_fn!(putmem_signal_on_stream, "putmem_signal_on_stream", rshmemx;
    fn (dest: *mut c_void, source: *const c_void, nelems: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int, stream: Stream) =
    |call| put_signal_on_stream(call, dest, source, nelems, sig_addr, signal, sig_op, pe, stream));
c_fn!(putmem_signal_nbi_on_stream, "putmem_signal_nbi_on_stream", rshmemx;
    fn (dest: *mut c_void, source: *const c_void, nelems: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int, stream: Stream) =
    |call| put_signal_on_stream(call, dest, source, nelems, sig_addr, signal, sig_op, pe, stream));
c_fn!(signal_op_on_stream, "signal_op_on_stream", rshmemx; fn (sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int, stream: Stream) =
    |call| signal_on_stream(call, sig_addr, signal, sig_op, pe, stream));
c_fn!(signal_wait_until_on_stream, "signal_wait_until_on_stream", rshmemx; fn (sig_addr: *mut u64, cmp: c_int, cmp_value: u64, stream: Stream) = |call| {
    let (c, _) = gpu_rt(call);
    let cmp = crate::p2p::cmp_arg(call, cmp);
    let sig = c.sym_at::<u64>(call, "sig_addr", sig_addr as usize, 1).or_exit(call);
    c.wait_until_on_stream(&sig, 0, cmp, cmp_value, &stream_of(c, stream)).or_exit(call)
});
c_fn!(quiet_on_stream, "quiet_on_stream", rshmemx; fn (stream: Stream) = |call| {
    let (c, _) = gpu_rt(call);
    c.quiet_on_stream(&stream_of(c, stream)).or_exit(call)
});

/// Barrier over a team on `stream`; nonzero for `SHMEM_TEAM_INVALID`.
fn barrier_on_stream(call: &str, team: Option<Team>, stream: Stream) -> c_int {
    let (c, _) = gpu_rt(call);
    let Some(t) = team else { return -1 };
    c.barrier_on_stream(t, &stream_of(c, stream)).or_exit(call);
    0
}

c_fn!(barrier_all_on_stream, "barrier_all_on_stream", rshmemx; fn (stream: Stream) = |call| {
    barrier_on_stream(call, Some(Team::WORLD), stream);
});
// A sync (no completion of earlier puts required) is served by the barrier, which is stronger.
c_fn!(sync_all_on_stream, "sync_all_on_stream", rshmemx; fn (stream: Stream) = |call| {
    barrier_on_stream(call, Some(Team::WORLD), stream);
});
c_fn!(barrier_on_stream, "barrier_on_stream", rshmemx; fn (team: TeamHandle, stream: Stream) -> c_int = |call| barrier_on_stream(call, team_arg(team), stream));
c_fn!(team_sync_on_stream, "team_sync_on_stream", rshmemx; fn (team: TeamHandle, stream: Stream) -> c_int = |call| barrier_on_stream(call, team_arg(team), stream));

// ---- on-stream collectives ----

/// The pieces of an on-stream collective: the runtime, team, stream and the two arrays.
fn coll_args<T: rshmem::SymType>(
    call: &'static str,
    team: TeamHandle,
    dest: *mut c_void,
    dest_len: usize,
    source: *const c_void,
    source_len: usize,
) -> Option<(&'static Ctx, Team, rshmem::Sym<T>, rshmem::Sym<T>)> {
    let (c, _) = gpu_rt(call);
    let t = team_arg(team)?;
    let d = c.sym_at::<T>(call, "dest", dest as usize, dest_len).or_exit(call);
    let s = c.sym_at::<T>(call, "source", source as usize, source_len).or_exit(call);
    Some((c, t, d, s))
}

/// Broadcast (`kind` 0), fcollect (1) or all-to-all (2) of `nelems` elements of `T`.
fn move_on_stream<T: rshmem::SymType>(
    call: &'static str,
    kind: u8,
    team: TeamHandle,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    root: c_int,
    stream: Stream,
) -> c_int {
    let Some(size) = team_arg(team).map(|t| gpu_side(call).team_n_pes(t).or_exit(call)) else { return -1 };
    let (d_len, s_len) = match kind {
        0 => (nelems, nelems),
        1 => (nelems * size, nelems),
        _ => (nelems * size, nelems * size),
    };
    let Some((c, t, d, s)) = coll_args::<T>(call, team, dest, d_len, source, s_len) else { return -1 };
    let st = stream_of(c, stream);
    match kind {
        0 => {
            if root < 0 {
                bad_arg(call, "PE_root", format_args!("{root} is negative"));
            }
            c.broadcast_on_stream(t, &d, &s, nelems, root as usize, &st)
        }
        1 => c.fcollect_on_stream(t, &d, &s, nelems, &st),
        _ => c.alltoall_on_stream(t, &d, &s, nelems, &st),
    }
    .or_exit(call);
    0
}

/// All-reduce (`scatter` false) or reduce-scatter of `nreduce` elements of `T`.
fn reduce_on_stream<T: rshmem::coll::gpu::DeviceReduceType>(
    call: &'static str,
    scatter: bool,
    op: ReduceOp,
    team: TeamHandle,
    dest: *mut T,
    source: *const T,
    nreduce: usize,
    stream: Stream,
) -> c_int {
    let Some(size) = team_arg(team).map(|t| gpu_side(call).team_n_pes(t).or_exit(call)) else { return -1 };
    let s_len = if scatter { nreduce * size } else { nreduce };
    let Some((c, t, d, s)) = coll_args::<T>(call, team, dest as *mut c_void, nreduce, source as *const c_void, s_len) else { return -1 };
    let st = stream_of(c, stream);
    if scatter { c.reduce_scatter_on_stream(t, &d, &s, nreduce, op, &st) } else { c.reduce_on_stream(t, &d, &s, nreduce, op, &st) }
        .or_exit(call);
    0
}

c_fn!(broadcastmem_on_stream, "broadcastmem_on_stream", rshmemx;
    fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize, PE_root: c_int, stream: Stream) -> c_int =
    |call| move_on_stream::<u8>(call, 0, team, dest, source, nelems, PE_root, stream));
c_fn!(fcollectmem_on_stream, "fcollectmem_on_stream", rshmemx;
    fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize, stream: Stream) -> c_int =
    |call| move_on_stream::<u8>(call, 1, team, dest, source, nelems, 0, stream));
c_fn!(alltoallmem_on_stream, "alltoallmem_on_stream", rshmemx;
    fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize, stream: Stream) -> c_int =
    |call| move_on_stream::<u8>(call, 2, team, dest, source, nelems, 0, stream));

/// The typed stream-ordered RMA and data-moving collectives, per RMA type.
macro_rules! stream_typed {
    ($(($n:ident, $t:ty)),* $(,)?) => {
        $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            const SIZE: usize = std::mem::size_of::<T>();
            c_fn!(put_on_stream, $n => "put_on_stream", rshmemx;
                fn (dest: *mut T, source: *const T, nelems: usize, pe: c_int, stream: Stream) =
                |call| super::put_on_stream(call, dest as _, source as _, bytes_of(call, nelems, SIZE), pe, stream));
            c_fn!(put_nbi_on_stream, $n => "put_nbi_on_stream", rshmemx;
                fn (dest: *mut T, source: *const T, nelems: usize, pe: c_int, stream: Stream) =
                |call| super::put_on_stream(call, dest as _, source as _, bytes_of(call, nelems, SIZE), pe, stream));
            c_fn!(get_on_stream, $n => "get_on_stream", rshmemx;
                fn (dest: *mut T, source: *const T, nelems: usize, pe: c_int, stream: Stream) =
                |call| super::get_on_stream(call, dest as _, source as _, bytes_of(call, nelems, SIZE), pe, stream));
            c_fn!(get_nbi_on_stream, $n => "get_nbi_on_stream", rshmemx;
                fn (dest: *mut T, source: *const T, nelems: usize, pe: c_int, stream: Stream) =
                |call| super::get_on_stream(call, dest as _, source as _, bytes_of(call, nelems, SIZE), pe, stream));
            c_fn!(p_on_stream, $n => "p_on_stream", rshmemx;
                fn (dest: *mut T, value: T, pe: c_int, stream: Stream) = |call| {
                    let (c, _) = gpu_rt(call);
                    let pe = pe_arg(call, c, pe);
                    c.p_on_stream(dest as usize, &value.to_le_bytes(), pe, &stream_of(c, stream)).or_exit(call)
                });
            c_fn!(put_signal_on_stream, $n => "put_signal_on_stream", rshmemx;
                fn (dest: *mut T, source: *const T, nelems: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int, stream: Stream) =
                |call| super::put_signal_on_stream(call, dest as _, source as _, bytes_of(call, nelems, SIZE), sig_addr, signal, sig_op, pe, stream));
            c_fn!(put_signal_nbi_on_stream, $n => "put_signal_nbi_on_stream", rshmemx;
                fn (dest: *mut T, source: *const T, nelems: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int, stream: Stream) =
                |call| super::put_signal_on_stream(call, dest as _, source as _, bytes_of(call, nelems, SIZE), sig_addr, signal, sig_op, pe, stream));
            c_fn!(broadcast_on_stream, $n => "broadcast_on_stream", rshmemx;
                fn (team: TeamHandle, dest: *mut T, source: *const T, nelems: usize, PE_root: c_int, stream: Stream) -> c_int =
                |call| move_on_stream::<T>(call, 0, team, dest as _, source as _, nelems, PE_root, stream));
            c_fn!(fcollect_on_stream, $n => "fcollect_on_stream", rshmemx;
                fn (team: TeamHandle, dest: *mut T, source: *const T, nelems: usize, stream: Stream) -> c_int =
                |call| move_on_stream::<T>(call, 1, team, dest as _, source as _, nelems, 0, stream));
            c_fn!(alltoall_on_stream, $n => "alltoall_on_stream", rshmemx;
                fn (team: TeamHandle, dest: *mut T, source: *const T, nelems: usize, stream: Stream) -> c_int =
                |call| move_on_stream::<T>(call, 2, team, dest as _, source as _, nelems, 0, stream));
            pub(crate) const ROUTINES: &[Routine] = routines![
                put_on_stream, put_nbi_on_stream, get_on_stream, get_nbi_on_stream, p_on_stream,
                put_signal_on_stream, put_signal_nbi_on_stream, broadcast_on_stream, fcollect_on_stream, alltoall_on_stream
            ];
        }
        )*
        /// The typed stream routines, by type.
        pub(crate) const TYPED: &[&[Routine]] = &[$($n::ROUTINES),*];
    };
}
/// [`stream_typed`] over the RMA types and the 16-bit floats of GPU code.
macro_rules! stream_typed_with_16_bit_floats {
    ($($types:tt)*) => { stream_typed!($($types)*, (half, ::half::f16), (bfloat16, ::half::bf16)); };
}
rshmem::rma_types!(stream_typed_with_16_bit_floats);

/// The on-stream reductions per type and operator (`TYPENAME_OP_reduce_on_stream`,
/// `TYPENAME_OP_reducescatter_on_stream`): the element types the device reductions
/// compute, as C names them.
///
/// Also `ROUTINES`: every type's reductions, then every type's reduce-scatters (header order).
macro_rules! reduce_typed {
    ($bits:tt: $(($n:ident, $t:ty)),* $(,)?) => {
        $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            reduce_typed!(@ops $n; $bits);
        }
        )*
        /// Their routines, in header order.
        pub(crate) const ROUTINES: &[&[Routine]] = &[$($n::reduce::ROUTINES,)* $($n::scatter::ROUTINES,)*];
    };
    (@ops $n:ident; arith) => {
        reduce_typed!(@op $n;
            sum, Sum, "sum_reduce_on_stream", "sum_reducescatter_on_stream";
            prod, Prod, "prod_reduce_on_stream", "prod_reducescatter_on_stream";
            min, Min, "min_reduce_on_stream", "min_reducescatter_on_stream";
            max, Max, "max_reduce_on_stream", "max_reducescatter_on_stream");
    };
    (@ops $n:ident; bitwise) => {
        reduce_typed!(@op $n;
            sum, Sum, "sum_reduce_on_stream", "sum_reducescatter_on_stream";
            prod, Prod, "prod_reduce_on_stream", "prod_reducescatter_on_stream";
            min, Min, "min_reduce_on_stream", "min_reducescatter_on_stream";
            max, Max, "max_reduce_on_stream", "max_reducescatter_on_stream";
            and, And, "and_reduce_on_stream", "and_reducescatter_on_stream";
            or, Or, "or_reduce_on_stream", "or_reducescatter_on_stream";
            xor, Xor, "xor_reduce_on_stream", "xor_reducescatter_on_stream");
    };
    (@op $n:ident; $($o:ident, $op:ident, $red:literal, $scat:literal);*) => {
        pub(crate) mod reduce {
            use super::*;
            $(c_fn!($o, $n => $red, rshmemx;
                fn (team: TeamHandle, dest: *mut T, source: *const T, nreduce: usize, stream: Stream) -> c_int =
                |call| reduce_on_stream::<T>(call, false, ReduceOp::$op, team, dest, source, nreduce, stream));)*
            pub(crate) const ROUTINES: &[Routine] = routines![$($o),*];
        }
        pub(crate) mod scatter {
            use super::*;
            $(c_fn!($o, $n => $scat, rshmemx;
                fn (team: TeamHandle, dest: *mut T, source: *const T, nreduce: usize, stream: Stream) -> c_int =
                |call| reduce_on_stream::<T>(call, true, ReduceOp::$op, team, dest, source, nreduce, stream));)*
            pub(crate) const ROUTINES: &[Routine] = routines![$($o),*];
        }
    };
}

/// Reductions of floating-point types (no bitwise operators).
pub(crate) mod reduce_float {
    use super::*;
    reduce_typed!(arith: (float, f32), (double, f64), (half, ::half::f16), (bfloat16, ::half::bf16));
}

/// Reductions of the 32- and 64-bit integer types.
pub(crate) mod reduce_int {
    use super::*;
    reduce_typed!(bitwise: (int, i32), (long, i64), (longlong, i64), (uint, u32), (ulong, u64), (ulonglong, u64),
        (int32, i32), (int64, i64), (uint32, u32), (uint64, u64), (size, u64), (ptrdiff, i64));
}

// ---- collective launch ----

/// The driver handle of kernel `func` (its host function), through the registered files.
fn function_of(call: &str, func: *const c_void) -> cudarc_function {
    if func.is_null() {
        bad_arg(call, "func", "null kernel");
    }
    let hooks = CUDART.lock().unwrap_or_else(|p| p.into_inner()).clone();
    for (_, f) in hooks {
        let Some(f) = f else { continue };
        // SAFETY: the device header's function: it asks cudart for the kernel's handle.
        let h = unsafe { f(func) };
        if !h.is_null() {
            return h as cudarc_function;
        }
    }
    bad_arg(call, "func", "not a kernel of a file that includes rshmem_device.cuh (cudaGetFuncBySymbol found none)")
}

/// The driver's kernel handle type.
#[allow(non_camel_case_types)]
type cudarc_function = rshmem::gpu::cuda::Function;

fn dims(d: Dim3) -> (u32, u32, u32) {
    (d.x.max(1), d.y.max(1), d.z.max(1))
}

c_fn!(collective_launch, "collective_launch", rshmemx;
    fn (func: *const c_void, gridDims: Dim3, blockDims: Dim3, args: *mut *mut c_void, sharedMem: usize, stream: Stream) -> c_int = |call| {
    let (c, g) = gpu_rt(call);
    let f = function_of(call, func);
    // SAFETY: the C contract: `args` holds the kernel's parameters, as cudaLaunchKernel takes them.
    unsafe { g.launch_collective(f, dims(gridDims), dims(blockDims), args, sharedMem, &stream_of(c, stream)) }.or_exit(call);
    0
});

c_fn!(collective_launch_query_gridsize, "collective_launch_query_gridsize", rshmemx;
    fn (func: *const c_void, blockDims: Dim3, args: *mut *mut c_void, sharedMem: usize, gridsize: *mut c_int) -> c_int = |call| {
    let _ = args;
    let (_, g) = gpu_rt(call);
    if gridsize.is_null() {
        bad_arg(call, "gridsize", "null pointer");
    }
    let f = function_of(call, func);
    let (x, y, z) = dims(blockDims);
    // SAFETY: function_of resolved `func` to a kernel of this PE's context.
    let n = unsafe { g.max_collective_grid(f, x * y * z, sharedMem) }.or_exit(call);
    // SAFETY: non-null, points to an int the caller owns.
    unsafe { *gridsize = n.min(c_int::MAX as usize) as c_int };
    0
});

/// Setup, registration, teams and memory, in header order.
pub(crate) const SETUP: &[Routine] = routines![
    cuda_init,
    cuda_init_thread,
    cuda_init_uniqueid,
    cuda_init_mpi_comm,
    cuda_device,
    cudart_register,
    cumodule_init,
    cumodule_finalize,
    team_device,
    cuda_malloc,
    cuda_calloc,
    cuda_align,
    cuda_free,
    buffer_register,
    buffer_unregister,
    ptr
];
/// Host RMA whose local side may be device memory.
pub(crate) const HOST_RMA: &[Routine] = routines![putmem, putmem_nbi, getmem, getmem_nbi, relay_putmem, relay_getmem];
/// Untyped stream-ordered routines.
pub(crate) const STREAM: &[Routine] = routines![
    putmem_on_stream,
    putmem_nbi_on_stream,
    getmem_on_stream,
    getmem_nbi_on_stream,
    putmem_signal_on_stream,
    putmem_signal_nbi_on_stream,
    signal_op_on_stream,
    signal_wait_until_on_stream,
    quiet_on_stream,
    barrier_all_on_stream,
    sync_all_on_stream,
    barrier_on_stream,
    team_sync_on_stream
];
/// Untyped on-stream collectives and the collective launch.
pub(crate) const COLL: &[Routine] =
    routines![broadcastmem_on_stream, fcollectmem_on_stream, alltoallmem_on_stream, collective_launch, collective_launch_query_gridsize];
