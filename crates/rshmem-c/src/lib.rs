//! The OpenSHMEM C ABI over rshmem (work in progress: see the C ABI issue).
#![warn(missing_docs)]
