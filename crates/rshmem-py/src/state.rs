//! The PE's runtime handle and the table of its symmetric allocations.
//!
//! Python has one runtime per process (`rshmem.init()`), so the handle lives in a
//! process-wide slot. Calls clone the handle out of it and never hold a lock while they
//! run: a PE waiting for a signal must not keep its other threads from sending one.
//!
//! Allocations are byte allocations ([`rshmem::Sym<u8>`]) keyed by their address; arrays
//! and tensors are views of them, found by address ([`find`]). A finalized runtime keeps
//! its allocations mapped until the process ends, since NumPy and PyTorch views of them
//! may outlive `finalize`.

use crate::errors::{argument, failure, to_py};
use pyo3::prelude::*;
use rshmem::{Ctx, Sym, SymType, Team};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

/// Lifecycle of the process's runtime.
enum Phase {
    Uninitialized,
    Running(Ctx),
    Finalized,
}

static PHASE: Mutex<Phase> = Mutex::new(Phase::Uninitialized);
/// Live allocations, by address.
static ALLOCATIONS: Mutex<BTreeMap<usize, Sym<u8>>> = Mutex::new(BTreeMap::new());
/// Allocations of a finalized runtime, kept mapped for views that outlive it.
static KEPT: Mutex<Vec<Sym<u8>>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The runtime handle, for call `call`.
pub fn ctx(call: &str) -> PyResult<Ctx> {
    match &*lock(&PHASE) {
        Phase::Running(c) => Ok(c.clone()),
        Phase::Uninitialized => Err(failure(call, "rshmem is not initialized: call rshmem.init() first")),
        Phase::Finalized => Err(failure(call, "rshmem was finalized in this process (a runtime cannot be started twice)")),
    }
}

/// `(base, size)` of the live allocation that holds `addr`.
pub fn find(addr: usize) -> Option<(usize, usize)> {
    let table = lock(&ALLOCATIONS);
    let (&base, sym) = table.range(..=addr).next_back()?;
    (addr < base + sym.len()).then_some((base, sym.len()))
}

/// A typed view of `len` elements at `addr`, which must lie in one live allocation
/// (the Python half has checked; this names `arg` if not).
pub fn view<T: SymType>(call: &str, arg: &'static str, addr: usize, len: usize, pe: usize) -> PyResult<Sym<T>> {
    let table = lock(&ALLOCATIONS);
    let Some((&base, sym)) = table.range(..=addr).next_back() else {
        return Err(argument(call, arg, format!("{addr:#x} is not in a symmetric allocation"), pe));
    };
    sym.view::<T>(addr - base, len).map_err(|e| to_py(e, call))
}

/// Starts the runtime (collective); a second call does nothing.
#[pyfunction]
fn init(py: Python<'_>) -> PyResult<()> {
    {
        let phase = lock(&PHASE);
        match &*phase {
            Phase::Running(_) => return Ok(()),
            Phase::Finalized => return Err(failure("init", "rshmem was finalized in this process; it cannot be started again")),
            Phase::Uninitialized => {}
        }
    }
    // Python has no `tracing` subscriber of its own: rshmem's log lines go to stderr.
    rshmem::log::install();
    let c = py.detach(rshmem::init).map_err(|e| to_py(e, "init"))?;
    *lock(&PHASE) = Phase::Running(c);
    Ok(())
}

/// Whether the runtime is running.
#[pyfunction]
fn initialized() -> bool {
    matches!(&*lock(&PHASE), Phase::Running(_))
}

/// Finalizes the runtime (collective).
#[pyfunction]
fn finalize(py: Python<'_>) -> PyResult<()> {
    let c = match std::mem::replace(&mut *lock(&PHASE), Phase::Finalized) {
        Phase::Running(c) => c,
        Phase::Finalized => return Ok(()),
        Phase::Uninitialized => {
            *lock(&PHASE) = Phase::Uninitialized;
            return Err(failure("finalize", "rshmem is not initialized"));
        }
    };
    let all: Vec<Sym<u8>> = std::mem::take(&mut *lock(&ALLOCATIONS)).into_values().collect();
    lock(&KEPT).extend(all);
    py.detach(move || c.finalize()).map_err(|e| to_py(e, "finalize"))
}

/// Ends every PE of the job with `code`.
#[pyfunction]
fn global_exit(code: i32) -> PyResult<()> {
    ctx("global_exit")?.global_exit(code)
}

/// This PE's number.
#[pyfunction]
fn my_pe() -> PyResult<usize> {
    Ok(ctx("my_pe")?.my_pe())
}

/// Number of PEs.
#[pyfunction]
fn n_pes() -> PyResult<usize> {
    Ok(ctx("n_pes")?.n_pes())
}

/// This PE's CUDA device ordinal, or -1 on a CPU PE.
#[pyfunction]
fn gpu_ordinal() -> PyResult<i64> {
    let c = ctx("gpu_ordinal")?;
    Ok(c.gpu().map(|g| g.ordinal() as i64).unwrap_or(-1))
}

/// Allocates `nbytes` zeroed bytes on every PE (collective); returns the address.
#[pyfunction]
fn malloc(py: Python<'_>, call: &str, nbytes: usize, align: usize) -> PyResult<usize> {
    let c = ctx(call)?;
    let sym = py.detach(|| c.alloc_aligned::<u8>(nbytes.max(1), align)).map_err(|e| to_py(e, call))?;
    let addr = sym.addr();
    lock(&ALLOCATIONS).insert(addr, sym);
    Ok(addr)
}

/// Frees the allocation that starts at `addr` (collective).
#[pyfunction]
fn free(py: Python<'_>, addr: usize) -> PyResult<()> {
    let c = ctx("free")?;
    let Some(sym) = lock(&ALLOCATIONS).remove(&addr) else {
        let detail = match find(addr) {
            Some((base, _)) => format!("{addr:#x} lies inside the allocation at {base:#x}; free the array that starts it"),
            None => format!("{addr:#x} is not a symmetric allocation (already freed, or never allocated by rshmem)"),
        };
        return Err(argument("free", "x", detail, c.my_pe()));
    };
    py.detach(|| c.free(sym)).map_err(|e| to_py(e, "free"))
}

/// `(base, size)` of the live allocation holding `addr`, or None.
#[pyfunction]
fn find_allocation(addr: usize) -> Option<(usize, usize)> {
    find(addr)
}

/// Where this process reaches `pe`'s copy of symmetric address `addr`: a host address on
/// CPU PEs, a device address on GPU PEs; None when `pe`'s heap is not mapped here.
#[pyfunction]
fn peer_addr(addr: usize, pe: usize) -> PyResult<Option<usize>> {
    let c = ctx("peer_addr")?;
    if pe >= c.n_pes() {
        return Ok(None);
    }
    if let Some(g) = c.gpu() {
        let mapped = c.team_translate_pe(Team::WORLD, pe, Team::SHARED).map_err(|e| to_py(e, "peer_addr"))?.is_some();
        return Ok((mapped && find(addr).is_some()).then(|| g.peer_address(addr as u64, pe) as usize));
    }
    Ok(c.ptr_addr(addr, pe))
}

/// Adds this module's functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(init, m)?)?;
    m.add_function(wrap_pyfunction!(initialized, m)?)?;
    m.add_function(wrap_pyfunction!(finalize, m)?)?;
    m.add_function(wrap_pyfunction!(global_exit, m)?)?;
    m.add_function(wrap_pyfunction!(my_pe, m)?)?;
    m.add_function(wrap_pyfunction!(n_pes, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_ordinal, m)?)?;
    m.add_function(wrap_pyfunction!(malloc, m)?)?;
    m.add_function(wrap_pyfunction!(free, m)?)?;
    m.add_function(wrap_pyfunction!(find_allocation, m)?)?;
    m.add_function(wrap_pyfunction!(peer_addr, m)?)?;
    Ok(())
}
