//! # libshmem: the OpenSHMEM C ABI over rshmem
//!
//! This crate builds `libshmem.so` and `libshmem.a`, which export the OpenSHMEM 1.5 C
//! routines and the 1.6 additions over the Rust runtime, plus `oshcc`/`oshc++` (compiler
//! wrappers) and `oshrun` (the launcher). `include/shmem.h` is generated from the same
//! type table as the exported functions (see [`table`] and [`header`]).
//!
//! OpenSHMEM keeps its state in globals; so does this crate (`state`): one runtime per
//! process, contexts and teams as handles. A bad argument prints a message naming the
//! routine and the argument and ends the job (`shmem_global_exit`); routines whose
//! failure the specification defines (a team split, an allocation the heap cannot hold)
//! return that failure instead. Global and static C variables are made symmetric at init
//! (`statics`).
#![warn(missing_docs)]
// The C routines take raw pointers by contract (the OpenSHMEM specification says what
// each must point to); every one is `unsafe extern "C"`.
#![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]

#[macro_use]
mod macros;

pub mod header;
pub mod table;

mod active_set;
mod amo;
mod cache;
mod coll;
mod ctx;
mod lock;
mod memory;
mod order;
mod p2p;
mod rma;
pub mod setup;
mod signal;
mod state;
mod statics;
mod sync;
pub mod teams;
