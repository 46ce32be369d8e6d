//! # libshmem: the OpenSHMEM C ABI over rshmem
//!
//! This crate builds `libshmem.so` and `libshmem.a`, which export the OpenSHMEM 1.5 C
//! routines and the 1.6 additions over the Rust runtime, plus `oshcc`/`oshc++` (compiler
//! wrappers) and `oshrun` (the launcher). Each routine is written once, by the macros of
//! [`routine`], which define its exported names and describe it; `include/shmem.h`,
//! `pshmem.h` and `shmemx.h` are generated from those descriptions by [`header`].
//!
//! OpenSHMEM keeps its state in globals; so does this crate (`state`): one runtime per
//! process, contexts and teams as handles. A bad argument prints a message naming the
//! routine and the argument and ends the job (`shmem_global_exit`); routines whose
//! failure the specification defines (a team split, an allocation the heap cannot hold)
//! return that failure instead. Global and static C variables are made symmetric at init
//! (`statics`).
//!
//! Layers, each importing only those before it in this list:
//! `table` (types), `handle` (handle values), `routine` (the description and its
//! macros), `statics`, `state` (the runtime, errors, argument checks), `c_arith`, `ctx`
//! (contexts), `reduce`; then the routine modules (`setup`, `memory`, `teams`, `rma`,
//! `longdouble` above `rma`, `amo`, `p2p`, `signal` above `p2p`, `order`, `sync`, `lock`, `coll`,
//! `active_set`, `cache`), then `cuda` (the GPU host API of `rshmemx_cuda.h`, over
//! `memory`, `p2p` and the runtime's GPU layer) and `cuda_host` (its forms of the host
//! routines, over `cuda` and `teams`), and on top `header`, which reads them all.
#![warn(missing_docs)]
// The C routines take raw pointers by contract (the OpenSHMEM specification says what
// each must point to); every one is `unsafe extern "C"`.
#![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]

// First: the macros that every routine module uses.
#[macro_use]
pub mod routine;

mod active_set;
mod amo;
mod c_arith;
mod cache;
mod coll;
mod ctx;
mod cuda;
mod cuda_host;
mod handle;
pub mod header;
mod lock;
mod longdouble;
mod meet;
mod memory;
mod order;
mod p2p;
mod reduce;
mod rma;
pub mod setup;
mod signal;
mod state;
mod statics;
mod sync;
pub mod table;
pub mod teams;
