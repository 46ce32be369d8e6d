//! rshmem errors as Python exceptions.
//!
//! The exception classes are defined in Python (`rshmem/_errors.py`, so that they can
//! derive from both `rshmem.Error` and the matching built-in exception) and handed to
//! this module once at import ([`set_exception_types`]). Each carries `call`, `arg` and
//! `pe` attributes besides its message.

use pyo3::exceptions::{PyRuntimeError, PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use rshmem::Error;

/// `rshmem.Error`, `rshmem.ArgumentError`, `rshmem.TimeoutError`.
static TYPES: PyOnceLock<[Py<PyType>; 3]> = PyOnceLock::new();

/// Called once by the package: the exception classes to raise.
#[pyfunction]
pub fn set_exception_types(py: Python<'_>, base: Py<PyType>, argument: Py<PyType>, timeout: Py<PyType>) {
    let _ = TYPES.set(py, [base, argument, timeout]);
}

/// Which class an error maps to: 0 the base, 1 a bad argument, 2 a timeout.
fn kind(e: &Error) -> usize {
    match e {
        Error::PeOutOfRange { .. }
        | Error::NotSymmetric { .. }
        | Error::OutOfBounds { .. }
        | Error::Misaligned { .. }
        | Error::CollectiveMismatch { .. }
        | Error::InvalidTeam { .. }
        | Error::InvalidArgument { .. } => 1,
        Error::Timeout { .. } => 2,
        _ => 0,
    }
}

/// The argument and PE an error names, when it names them.
fn arg_and_pe(e: &Error) -> (Option<&'static str>, Option<i64>) {
    match e {
        Error::PeOutOfRange { arg, pe, .. } => (Some(arg), Some(*pe)),
        Error::NotSymmetric { arg, pe, .. } | Error::OutOfBounds { arg, pe, .. } | Error::Misaligned { arg, pe, .. } => {
            (Some(arg), Some(*pe as i64))
        }
        Error::CollectiveMismatch { arg, pe, .. } | Error::InvalidTeam { arg, pe, .. } | Error::InvalidArgument { arg, pe, .. } => {
            (Some(arg), Some(*pe as i64))
        }
        Error::Timeout { pe, .. }
        | Error::Gpu { pe, .. }
        | Error::Cuda { pe, .. }
        | Error::Nvrtc { pe, .. }
        | Error::Transport { pe, .. } => (None, Some(*pe as i64)),
        _ => (None, None),
    }
}

/// The Python exception for `e`, raised by the Python call `call` (`put`, `reduce`, ...).
pub fn to_py(e: Error, call: &str) -> PyErr {
    let (arg, pe) = arg_and_pe(&e);
    raise(kind(&e), call, arg, pe, format!("rshmem.{call}: {e}"))
}

/// An argument error found by the native module itself.
pub fn argument(call: &str, arg: &'static str, detail: impl std::fmt::Display, pe: usize) -> PyErr {
    raise(1, call, Some(arg), Some(pe as i64), format!("rshmem.{call}: argument `{arg}`: {detail} (on PE {pe})"))
}

/// A failure that is no argument's fault (no runtime, no GPU, ...).
pub fn failure(call: &str, detail: impl std::fmt::Display) -> PyErr {
    raise(0, call, None, None, format!("rshmem.{call}: {detail}"))
}

/// Builds exception class `k` (see [`kind`]) with its attributes.
fn raise(k: usize, call: &str, arg: Option<&str>, pe: Option<i64>, msg: String) -> PyErr {
    Python::attach(|py| match TYPES.get(py) {
        Some(types) => match types[k].bind(py).call1((msg.clone(), call, arg, pe)) {
            Ok(v) => PyErr::from_value(v),
            Err(err) => err,
        },
        None => match k {
            1 => PyValueError::new_err(msg),
            2 => PyTimeoutError::new_err(msg),
            _ => PyRuntimeError::new_err(msg),
        },
    })
}
