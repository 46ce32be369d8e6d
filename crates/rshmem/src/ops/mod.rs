//! The one-sided operations: semantics, argument checks, type tables. Each family in its
//! own file; all are methods of [`crate::Ctx`].

pub mod alloc;
pub mod amo;
pub mod context;
#[cfg(feature = "cuda")]
pub mod engines;
pub mod lock;
#[cfg(feature = "cuda")]
pub mod on_stream;
pub mod order;
pub mod p2p;
pub mod relay;
pub mod rma;
pub mod signal;
