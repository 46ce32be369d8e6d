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
//! Layers, top down (see the project guide): the API ([`Ctx`], [`Sym`], [`Team`]); `ops`
//! (RMA, atomics, signals, locks, contexts, ordering, point-to-point sync); [`coll`] (collectives) and `team`; `heap` (the
//! symmetric heap); `transport` (mapped peers); `bootstrap` (launcher rendezvous).
#![warn(missing_docs)]
// OpenSHMEM calls carry many arguments (strided RMA, array waits); the API mirrors them.
#![allow(clippy::too_many_arguments)]

pub mod bootstrap;
pub mod coll;
pub mod ctx;
pub mod env;
pub mod error;
#[cfg(feature = "cuda")]
pub mod gpu;
pub mod heap;
pub mod moe;
pub mod ops;
pub mod sym;
pub mod team;
pub mod transport;
pub mod types;

pub use coll::{BroadcastAlgo, GatherAlgo, Plan, ReduceAlgo, ReduceScatterAlgo};
pub use ctx::{init, init_with, Ctx, CtxOptions, InitOptions};
pub use error::{Error, Result};
pub use ops::p2p::WaitMode;
pub use ops::signal::SignalOp;
pub use sym::Sym;
pub use team::{Team, TeamConfig};
pub use types::{BitwiseAmo, Cmp, ExtendedAmo, ReduceDtype, ReduceOp, ReduceType, StandardAmo, SymType, SyncWord, WordType};
