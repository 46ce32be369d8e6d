//! `rshmem._rshmem`: the native half of the `rshmem` Python package.
//!
//! Everything here works on plain integers (addresses, byte counts, PE numbers, team
//! handles, stream handles); the Python half (`python/rshmem/`) turns arrays and tensors
//! into them, checks the arguments against the Python names, and documents the API. The
//! calls go through rshmem's public Rust API ([`rshmem::Ctx`]), with the interpreter
//! released while they run, so a PE blocked in a wait does not stop the PE's other Python
//! threads.
//!
//! * [`state`]: the runtime handle and the table of symmetric allocations.
//! * [`calls`]: host-side calls (RMA, signals, atomics, ordering, teams, collectives).
//! * [`stream`]: stream-ordered calls on GPU PEs (CUDA streams from PyTorch or raw).
//! * [`dlpack`]: DLPack capsules, so NumPy, PyTorch and others view symmetric memory
//!   without copies.
//! * [`errors`]: rshmem errors as Python exceptions.

mod calls;
mod dlpack;
mod errors;
mod state;
mod stream;

use pyo3::prelude::*;

/// The native module; the `rshmem` package imports it and re-exports a checked API.
#[pymodule]
fn _rshmem(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("WORLD", rshmem::Team::WORLD.raw())?;
    m.add("SHARED", rshmem::Team::SHARED.raw())?;
    m.add("INVALID", rshmem::Team::INVALID.raw())?;
    m.add_function(wrap_pyfunction!(errors::set_exception_types, m)?)?;
    state::register(m)?;
    calls::register(m)?;
    stream::register(m)?;
    dlpack::register(m)?;
    Ok(())
}
