//! The one error type of rshmem.
//!
//! Every variant names the call that failed, the argument at fault and, where one is
//! involved, the PE, so that a message read in a log of a thousand PEs says what to fix.

use std::fmt;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Errors returned by rshmem calls.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A PE number outside `0..n_pes` (of the world or of a team).
    #[error("{call}: argument `{arg}`: PE {pe} is out of range (valid PEs are 0..{n_pes}){team}")]
    PeOutOfRange {
        /// The API call.
        call: &'static str,
        /// The argument that held the PE.
        arg: &'static str,
        /// The PE given.
        pe: i64,
        /// The number of PEs it had to be below.
        n_pes: usize,
        /// Team context, empty for the world.
        team: TeamNote,
    },
    /// An address that is not inside this PE's symmetric heap (or other symmetric segment).
    #[error("{call}: argument `{arg}`: address {addr:#x} is not in the symmetric heap (heap is {base:#x}..{end:#x}) (target PE {pe})")]
    NotSymmetric {
        /// The API call.
        call: &'static str,
        /// The argument that held the address.
        arg: &'static str,
        /// The address given.
        addr: usize,
        /// Start of the user heap on this PE.
        base: usize,
        /// End of the user heap on this PE.
        end: usize,
        /// The target PE.
        pe: usize,
    },
    /// A range that starts inside an allocation but runs past its end (or starts in free space).
    #[error("{call}: argument `{arg}`: range {addr:#x}+{len} bytes {detail} (target PE {pe})")]
    OutOfBounds {
        /// The API call.
        call: &'static str,
        /// The argument that held the address.
        arg: &'static str,
        /// Start of the range.
        addr: usize,
        /// Length in bytes.
        len: usize,
        /// What is wrong with it.
        detail: String,
        /// The target PE.
        pe: usize,
    },
    /// An atomic or wait target that is not aligned to its size.
    #[error("{call}: argument `{arg}`: address {addr:#x} is not aligned to {align} bytes, as a {ty} atomic needs (target PE {pe})")]
    Misaligned {
        /// The API call.
        call: &'static str,
        /// The argument at fault.
        arg: &'static str,
        /// The address given.
        addr: usize,
        /// The alignment required.
        align: usize,
        /// The type name.
        ty: &'static str,
        /// The target PE.
        pe: usize,
    },
    /// The symmetric heap cannot hold the request, even after growing to its limit.
    #[error("{call}: argument `size`: cannot allocate {requested} bytes: symmetric heap exhausted ({in_use} bytes in use, limit {limit} bytes; raise RSHMEM_MAX_SYMMETRIC_SIZE) on PE {pe}")]
    HeapExhausted {
        /// The API call.
        call: &'static str,
        /// Bytes asked for.
        requested: usize,
        /// Bytes in use.
        in_use: usize,
        /// The heap's size limit.
        limit: usize,
        /// This PE.
        pe: usize,
    },
    /// A collective call whose arguments differ between PEs.
    #[error("{call}: argument `{arg}` differs between PEs: PE {pe} passed {value}, PE {reference_pe} passed {reference}")]
    CollectiveMismatch {
        /// The API call.
        call: &'static str,
        /// The argument that differs.
        arg: &'static str,
        /// A PE whose value differs.
        pe: usize,
        /// Its value.
        value: String,
        /// The PE compared against: the team's first PE under `RSHMEM_COLL_CHECK=1`, the
        /// PE that reports it for the always-on check.
        reference_pe: usize,
        /// Its value.
        reference: String,
    },
    /// A team handle that was destroyed, or never valid.
    #[error("{call}: argument `{arg}`: {what} (on PE {pe})")]
    InvalidTeam {
        /// The API call.
        call: &'static str,
        /// The argument at fault.
        arg: &'static str,
        /// What is wrong with the handle.
        what: &'static str,
        /// This PE.
        pe: usize,
    },
    /// An argument value that is not allowed (a zero stride, a negative count, ...).
    #[error("{call}: argument `{arg}`: {detail} (on PE {pe})")]
    InvalidArgument {
        /// The API call.
        call: &'static str,
        /// The argument at fault.
        arg: &'static str,
        /// What is wrong.
        detail: String,
        /// This PE.
        pe: usize,
    },
    /// A wait that passed its deadline.
    #[error("{call}: timed out after {secs:.3} s waiting for {what} (on PE {pe})")]
    Timeout {
        /// The API call.
        call: &'static str,
        /// What the call waited for.
        what: String,
        /// Seconds waited.
        secs: f64,
        /// This PE.
        pe: usize,
    },
    /// The bootstrap (launcher, PMIx) failed or a peer went away.
    #[error("bootstrap: {0}")]
    Bootstrap(String),
    /// Something the library does not do (yet) on this configuration.
    #[error("{call}: {detail}")]
    Unsupported {
        /// The API call.
        call: &'static str,
        /// What is missing.
        detail: String,
    },
    /// A CUDA driver, NVRTC or GPU-side failure.
    #[error("{call}: {detail} (on PE {pe})")]
    Gpu {
        /// The CUDA call or rshmem operation.
        call: &'static str,
        /// What went wrong (the driver's error name, the compiler's log, ...).
        detail: String,
        /// This PE.
        pe: usize,
    },
    /// A CUDA driver call failed; its typed result code is the source
    /// (`cudarc::driver::DriverError`, holding the `CUresult`).
    #[cfg(feature = "cuda")]
    #[error("{call}: {source} (on PE {pe})")]
    Cuda {
        /// The driver call.
        call: &'static str,
        /// The driver's result code.
        #[source]
        source: cudarc::driver::DriverError,
        /// This PE.
        pe: usize,
    },
    /// An NVRTC call failed; its typed result code is the source (`nvrtcResult`). A failed
    /// compilation is a [`Error::Gpu`] carrying the compiler's log instead.
    #[cfg(feature = "cuda")]
    #[error("{call}: {source} (on PE {pe})")]
    Nvrtc {
        /// The NVRTC call.
        call: &'static str,
        /// NVRTC's result code.
        #[source]
        source: cudarc::nvrtc::result::NvrtcError,
        /// This PE.
        pe: usize,
    },
    /// A remote-transport (UCX) call failed.
    #[error("{call}: {detail} (on PE {pe})")]
    Transport {
        /// The transport call or rshmem operation.
        call: &'static str,
        /// What went wrong (the library's status text, what was being done).
        detail: String,
        /// This PE.
        pe: usize,
    },
    /// An operating-system call failed.
    #[error("{call}: {source}")]
    Os {
        /// What the library was doing.
        call: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Wraps an OS error with the operation it came from.
    pub fn os(call: &'static str, source: impl Into<std::io::Error>) -> Self {
        Error::Os { call, source: source.into() }
    }

    /// The same error, saying it happened on PE `pe` where it had no PE yet (errors from
    /// reading the configuration, before the bootstrap knew the PE's number).
    pub fn on_pe(self, pe: usize) -> Self {
        match self {
            Error::InvalidArgument { call, arg, detail, pe: 0 } => Error::InvalidArgument { call, arg, detail, pe },
            other => other,
        }
    }

    /// A transport error, attributed to the API call `call` that issued the operation
    /// (other errors are returned unchanged).
    pub fn during(self, call: &'static str) -> Self {
        match self {
            Error::Transport { call: op, detail, pe } if op != call => Error::Transport { call, detail: format!("{op}: {detail}"), pe },
            other => other,
        }
    }
}

/// The team a PE number was relative to, rendered as ` in team N` (empty for the world).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TeamNote(pub Option<u32>);

impl fmt::Display for TeamNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(t) => write!(f, " in team {t}"),
            None => Ok(()),
        }
    }
}
