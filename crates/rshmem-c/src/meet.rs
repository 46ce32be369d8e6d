//! Starting without a launcher: a C program's PEs meet through a unique id that the program
//! hands around itself, or through an MPI communicator.
//!
//! * `shmemx_get_uniqueid` (rank 0): listens on a TCP port of this host and writes the
//!   meeting point as text (`rshmem-tcp1 ADDRESS KEY`, at most [`UNIQUEID_LEN`] bytes with
//!   its NUL). The program sends that text to the other processes however it likes (MPI, a
//!   file, torch's store); then every process calls `shmemx_init_uniqueid(id, rank, npes)`
//!   (`rshmemx_cuda_init_uniqueid` for GPU PEs) and they meet over TCP
//!   (`rshmem::bootstrap::tcp`). Rank 0 must be the process that made the id.
//! * `shmemx_init_mpi_comm(&comm)` (`rshmemx_cuda_init_mpi_comm`): the communicator's rank
//!   0 makes an id and broadcasts it over the communicator; its ranks become the PEs. MPI is
//!   the program's own: its routines are looked up in the process at run time (Open MPI's
//!   handles are pointers, MPICH's and its relatives' are ints), so libshmem needs no MPI to
//!   build or load.

use crate::routine::Routine;
use crate::state::{self, bad_arg, fatal, Memory};
use rshmem::bootstrap::tcp::{Rendezvous, TcpBootstrap, UniqueId};
use rshmem::bootstrap::Bootstrap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::net::TcpListener;
use std::sync::{Mutex, PoisonError};

/// Bytes a unique id's text takes at most, its NUL included (`SHMEMX_UNIQUEID_LEN`).
pub const UNIQUEID_LEN: usize = 128;

/// The id this process made and the listener its rank 0 meets the others on.
static MADE: Mutex<Option<(UniqueId, TcpListener)>> = Mutex::new(None);

/// The settings of this process (the environment), or the end of the job.
fn config(call: &str) -> rshmem::Config {
    rshmem::Config::from_env().unwrap_or_else(|e| fatal(call, e))
}

/// Makes a new id on this host (`RSHMEM_BOOTSTRAP_PORT`, else a free port) and keeps its
/// listener for [`join`]; returns its text.
fn make_id(call: &str) -> String {
    let port = match config(call).bootstrap_port {
        Some(p) => u16::try_from(p).unwrap_or_else(|_| fatal(call, format_args!("RSHMEM_BOOTSTRAP_PORT={p} is not a port"))),
        None => 0,
    };
    let (id, listener) = UniqueId::for_this_host(port).unwrap_or_else(|e| fatal(call, e));
    let text = id.to_text();
    assert!(text.len() < UNIQUEID_LEN, "{call}: the id `{text}` is longer than SHMEMX_UNIQUEID_LEN");
    *MADE.lock().unwrap_or_else(PoisonError::into_inner) = Some((id, listener));
    text
}

/// The TCP bootstrap of rank `rank` of `npes` meeting at `text`.
fn join(call: &str, text: &str, rank: c_int, npes: c_int) -> rshmem::Result<Box<dyn Bootstrap>> {
    if npes < 1 {
        bad_arg(call, "npes", format_args!("{npes}: a job has at least one PE"));
    }
    if rank < 0 || rank >= npes {
        bad_arg(call, "rank", format_args!("{rank} is not in [0, {npes})"));
    }
    let id = UniqueId::from_text(text).unwrap_or_else(|e| bad_arg(call, "id", e));
    let rendezvous = if rank == 0 {
        let mut made = MADE.lock().unwrap_or_else(PoisonError::into_inner);
        match made.take() {
            Some((mine, listener)) if mine == id => Rendezvous::Listen(listener),
            other => {
                *made = other;
                bad_arg(call, "rank", "rank 0 must be the process that made the id with shmemx_get_uniqueid");
            }
        }
    } else {
        Rendezvous::Connect(vec![id.addr])
    };
    let boot = TcpBootstrap::join(rendezvous, &id.key, rank as usize, npes as usize, config(call).bootstrap_timeout)?;
    Ok(Box::new(boot))
}

/// The text of the id at `id` (a NUL-terminated string).
///
/// # Safety
/// `id` is null or points to a NUL-terminated string.
unsafe fn id_text(call: &str, id: *const c_char) -> String {
    if id.is_null() {
        bad_arg(call, "id", "null pointer");
    }
    // SAFETY: non-null and NUL-terminated (the caller's contract).
    let text = unsafe { CStr::from_ptr(id) };
    text.to_str().unwrap_or_else(|_| bad_arg(call, "id", "not UTF-8 text")).to_string()
}

/// Starts the library as rank `rank` of `npes` meeting at the id `id` points to.
///
/// # Safety
/// As [`id_text`].
unsafe fn init_uniqueid_as(call: &'static str, memory: Memory, id: *const c_char, rank: c_int, npes: c_int) -> c_int {
    // SAFETY: the caller's contract.
    let text = unsafe { id_text(call, id) };
    state::initialize_with(call, crate::setup::THREAD_SINGLE, memory, Some(&|| join(call, &text, rank, npes)));
    0
}

/// The routines of the program's MPI that a communicator's start needs, found in the
/// process (the program linked MPI): Open MPI's handles are pointers, MPICH's ints.
struct Mpi {
    /// `MPI_Initialized`.
    initialized: InitializedFn,
    /// `MPI_Comm_rank`, `MPI_Comm_size` and `MPI_Bcast` with the handle kinds of this MPI.
    calls: MpiCalls,
}

/// `MPI_Initialized`.
type InitializedFn = unsafe extern "C" fn(*mut c_int) -> c_int;
/// `MPI_Comm_rank` / `MPI_Comm_size` where a communicator is a pointer (Open MPI).
type PtrQueryFn = unsafe extern "C" fn(*mut c_void, *mut c_int) -> c_int;
/// `MPI_Bcast` where handles are pointers.
type PtrBcastFn = unsafe extern "C" fn(*mut c_void, c_int, *mut c_void, c_int, *mut c_void) -> c_int;
/// `MPI_Comm_rank` / `MPI_Comm_size` where a communicator is an int (MPICH).
type IntQueryFn = unsafe extern "C" fn(c_int, *mut c_int) -> c_int;
/// `MPI_Bcast` where handles are ints.
type IntBcastFn = unsafe extern "C" fn(*mut c_void, c_int, c_int, c_int, c_int) -> c_int;

/// `MPI_Comm_rank`, `MPI_Comm_size`, `MPI_Bcast` and the `MPI_BYTE` handle.
enum MpiCalls {
    /// Open MPI: communicators and datatypes are pointers.
    Pointers { rank: PtrQueryFn, size: PtrQueryFn, bcast: PtrBcastFn, byte: *mut c_void },
    /// MPICH and its relatives (Intel MPI, MVAPICH, Cray MPICH): handles are ints.
    Ints { rank: IntQueryFn, size: IntQueryFn, bcast: IntBcastFn },
}

/// MPICH's `MPI_BYTE` (its `mpi.h` defines it as this constant).
const MPICH_MPI_BYTE: c_int = 0x4c00_010d;

/// A symbol of the process, or null.
fn symbol(name: &CStr) -> *mut c_void {
    // SAFETY: dlsym with RTLD_DEFAULT only looks the NUL-terminated name up.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

impl Mpi {
    /// The program's MPI, or the end of the job when the process has none.
    fn find(call: &str) -> Mpi {
        let need = |name: &CStr| {
            let p = symbol(name);
            if p.is_null() {
                fatal(
                    call,
                    format_args!(
                        "{} is not in this process: link the program with MPI to start from a communicator",
                        name.to_string_lossy()
                    ),
                );
            }
            p
        };
        let (initialized, rank, size, bcast) =
            (need(c"MPI_Initialized"), need(c"MPI_Comm_rank"), need(c"MPI_Comm_size"), need(c"MPI_Bcast"));
        let ompi_byte = symbol(c"ompi_mpi_byte");
        // SAFETY (each transmute): the symbols are MPI's routines of these names, whose C
        // signatures these are, with this MPI's handle kinds (pointers where Open MPI's
        // `ompi_mpi_byte` exists, ints otherwise).
        unsafe {
            let calls = if ompi_byte.is_null() {
                MpiCalls::Ints {
                    rank: std::mem::transmute::<*mut c_void, IntQueryFn>(rank),
                    size: std::mem::transmute::<*mut c_void, IntQueryFn>(size),
                    bcast: std::mem::transmute::<*mut c_void, IntBcastFn>(bcast),
                }
            } else {
                MpiCalls::Pointers {
                    rank: std::mem::transmute::<*mut c_void, PtrQueryFn>(rank),
                    size: std::mem::transmute::<*mut c_void, PtrQueryFn>(size),
                    bcast: std::mem::transmute::<*mut c_void, PtrBcastFn>(bcast),
                    byte: ompi_byte,
                }
            };
            Mpi { initialized: std::mem::transmute::<*mut c_void, InitializedFn>(initialized), calls }
        }
    }
}

/// Starts the library with the ranks of the MPI communicator at `comm` as PEs.
///
/// # Safety
/// `comm` is null or points to an `MPI_Comm` of the program's MPI.
unsafe fn init_mpi_comm_as(call: &'static str, memory: Memory, comm: *const c_void) -> c_int {
    if comm.is_null() {
        bad_arg(call, "comm", "null pointer (pass the address of an MPI_Comm)");
    }
    let mpi = Mpi::find(call);
    let mut up = 0;
    // SAFETY: MPI_Initialized writes the int.
    unsafe { (mpi.initialized)(&mut up) };
    if up == 0 {
        fatal(call, "MPI is not initialized: call MPI_Init first");
    }
    let (mut rank, mut size) = (0, 0);
    let mut buf = [0u8; UNIQUEID_LEN];
    let failed = |what: &str, rc: c_int| fatal(call, format_args!("{what} on the communicator failed (MPI error {rc})"));
    // SAFETY (every MPI call below): `comm` points to a communicator of this MPI (the
    // caller's contract), read as this MPI's handle kind; the outputs are locals, the
    // broadcast buffer is UNIQUEID_LEN bytes on every rank.
    unsafe {
        let check = |what: &str, rc: c_int| {
            if rc != 0 {
                failed(what, rc)
            }
        };
        match mpi.calls {
            MpiCalls::Pointers { rank: r, size: s, .. } => {
                let c = *(comm as *const *mut c_void);
                check("MPI_Comm_rank", r(c, &mut rank));
                check("MPI_Comm_size", s(c, &mut size));
            }
            MpiCalls::Ints { rank: r, size: s, .. } => {
                let c = *(comm as *const c_int);
                check("MPI_Comm_rank", r(c, &mut rank));
                check("MPI_Comm_size", s(c, &mut size));
            }
        }
        if rank == 0 && !state::running() {
            let text = make_id(call);
            buf[..text.len()].copy_from_slice(text.as_bytes());
        }
        let rc = match mpi.calls {
            MpiCalls::Pointers { bcast, byte, .. } => {
                bcast(buf.as_mut_ptr().cast(), UNIQUEID_LEN as c_int, byte, 0, *(comm as *const *mut c_void))
            }
            MpiCalls::Ints { bcast, .. } => {
                bcast(buf.as_mut_ptr().cast(), UNIQUEID_LEN as c_int, MPICH_MPI_BYTE, 0, *(comm as *const c_int))
            }
        };
        check("MPI_Bcast", rc);
    }
    if buf[0] == 0 {
        // Rank 0 runs the library already: so does every rank (init is collective).
        return 0;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(UNIQUEID_LEN);
    let text = String::from_utf8_lossy(&buf[..end]).into_owned();
    state::initialize_with(call, crate::setup::THREAD_SINGLE, memory, Some(&|| join(call, &text, rank, size)));
    0
}

c_fn!(get_uniqueid, "get_uniqueid", shmemx_only; fn (id: *mut c_char, len: usize) -> c_int = |call| {
    if id.is_null() {
        bad_arg(call, "id", "null pointer");
    }
    if len < UNIQUEID_LEN {
        bad_arg(call, "len", format_args!("{len} bytes: an id needs SHMEMX_UNIQUEID_LEN ({UNIQUEID_LEN})"));
    }
    let text = make_id(call);
    // SAFETY: `id` has `len` >= UNIQUEID_LEN writable bytes (the caller's contract); the
    // text is shorter than that, so its NUL fits too.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), id.cast::<u8>(), text.len());
        *id.add(text.len()) = 0;
    }
    0
});

c_fn!(init_uniqueid, "init_uniqueid", shmemx_only; fn (id: *const c_char, rank: c_int, npes: c_int) -> c_int = |call| {
    init_uniqueid_as(call, Memory::Default, id, rank, npes)
});

c_fn!(init_mpi_comm, "init_mpi_comm", shmemx_only; fn (comm: *const c_void) -> c_int = |call| {
    init_mpi_comm_as(call, Memory::Default, comm)
});

c_fn!(cuda_init_uniqueid, "cuda_init_uniqueid", rshmemx; fn (id: *const c_char, rank: c_int, npes: c_int) -> c_int = |call| {
    init_uniqueid_as(call, Memory::Gpu, id, rank, npes)
});

c_fn!(cuda_init_mpi_comm, "cuda_init_mpi_comm", rshmemx; fn (comm: *const c_void) -> c_int = |call| {
    init_mpi_comm_as(call, Memory::Gpu, comm)
});

/// The `shmemx_` starts without a launcher, in header order.
pub(crate) const ROUTINES: &[Routine] = routines![get_uniqueid, init_uniqueid, init_mpi_comm];
