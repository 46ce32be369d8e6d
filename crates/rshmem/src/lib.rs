//! # rshmem
//!
//! An OpenSHMEM-style PGAS communication library: every PE (process) holds a symmetric
//! heap, and any PE reads, writes and updates any other's with one-sided operations.
//!
//! ```no_run
//! let ctx = rshmem::init()?;
//! let (me, n) = (ctx.my_pe(), ctx.n_pes());
//! let inbox = ctx.alloc::<u64>(1)?;
//! ctx.p(&inbox, 0, me as u64 + 1, (me + 1) % n)?;
//! ctx.barrier_all()?;
//! assert_eq!(inbox.read(0)?, ((me + n - 1) % n) as u64 + 1);
//! # Ok::<(), rshmem::Error>(())
//! ```
//!
//! # Layers
//!
//! Each layer imports only those below it (checked by `tests/layers.rs`):
//!
//! ```text
//!  init, device_header          start-up: builds a Runtime, returns its Ctx; the generated
//!                               part of the device header
//!  team, moe                    team splits (collective), MoE dispatch/combine
//!  ops/*, coll/*                operations: RMA, atomics, signals, waits, locks, contexts,
//!                               allocation, on-stream calls; collectives (CPU and GPU)
//!  ctx, sym                     the handle (Ctx) and typed allocations (Sym)
//!  runtime                      the state of one PE: teams, hosts, contexts, locks
//!  transport                    local, device, UCX, staged UCX; the GPU proxy
//!  gpu                          CUDA driver, NVRTC, device memory and state, kernels
//!  heap                         reservation, segments, allocator, address translation
//!  bootstrap                    launcher rendezvous, PMIx, single PE
//!  config, error, types, log    the environment table, the error type, the type tables
//! ```
#![warn(missing_docs)]
// OpenSHMEM calls carry many arguments (strided RMA, array waits); the API mirrors them.
#![allow(clippy::too_many_arguments)]

pub mod bootstrap;
pub mod coll;
pub mod config;
mod ctx;
#[cfg(feature = "cuda")]
pub mod device_header;
pub mod error;
#[cfg(feature = "cuda")]
pub mod gpu;
pub(crate) mod heap;
mod init;
pub mod log;
pub mod moe;
pub(crate) mod ops;
pub(crate) mod runtime;
mod sym;
pub(crate) mod team;
pub(crate) mod transport;
pub mod types;

/// The README's Rust examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;

pub use coll::{BroadcastAlgo, GatherAlgo, Plan, ReduceAlgo, ReduceScatterAlgo};
pub use config::Config;
pub use ctx::Ctx;
pub use error::{Error, Result};
pub use heap::StaticSegment;
pub use init::{init, init_with, local_pes, run_local_pes, run_pes, run_pes_with, InitOptions};
#[cfg(feature = "cuda")]
pub use ops::engines::Engine;
pub use ops::p2p::WaitMode;
pub use ops::signal::SignalOp;
pub use runtime::context::CtxOptions;
pub use runtime::teams::{Team, TeamConfig};
pub use sym::Sym;
pub use transport::ucx::available as ucx_available;
pub use types::{BitwiseAmo, Cmp, ExtendedAmo, ReduceDtype, ReduceOp, ReduceType, StandardAmo, SymType, SyncWord, WordType};
