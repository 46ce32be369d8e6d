//! Transports: how bytes and atomics reach a peer's heap.
//!
//! One trait with uniform parts (after UCX's md/iface/ep split): which peers a transport
//! reaches, how it moves bytes, how it does atomics, how it completes (fence, quiet).
//! The ops layer looks the transport up per peer in [`TransportTable`] and never branches
//! on a transport's name. Offsets are from the peer's heap base, already checked by the
//! heap against the live allocations.

pub mod local;
pub mod notify;

use std::fmt::Debug;
use std::sync::Arc;

/// Atomic memory operations a transport carries out on a word of a peer's heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AmoOp {
    /// Read the word.
    Fetch,
    /// Write `operand`; returns the old value.
    Set,
    /// Write `operand`, returning the old value.
    Swap,
    /// Write `operand` if the word equals `compare`; returns the old value.
    CompareSwap,
    /// Add `operand` (two's complement); returns the old value.
    FetchAdd,
    /// Bitwise and; returns the old value.
    FetchAnd,
    /// Bitwise or; returns the old value.
    FetchOr,
    /// Bitwise xor; returns the old value.
    FetchXor,
}

/// The operations every transport provides. Values of atomics travel as the low
/// `width` bytes of a `u64` (width 1, 2, 4 or 8).
pub trait Transport: Send + Sync + Debug {
    /// Short name for logs.
    fn name(&self) -> &'static str;
    /// Copies `src` into `pe`'s heap at `offset`.
    fn put(&self, pe: usize, offset: usize, src: &[u8]);
    /// Copies `dst.len()` bytes from `pe`'s heap at `offset` into `dst`.
    fn get(&self, pe: usize, offset: usize, dst: &mut [u8]);
    /// Copies `len` bytes from `src_pe`'s heap at `src_offset` to `dst_pe`'s heap at
    /// `dst_offset` (one of them is normally this PE; the collectives move symmetric
    /// data this way without a bounce through a local buffer). The default goes through
    /// a temporary buffer with `get` and `put`.
    fn copy(&self, dst_pe: usize, dst_offset: usize, src_pe: usize, src_offset: usize, len: usize) {
        let mut buf = vec![0u8; len];
        self.get(src_pe, src_offset, &mut buf);
        self.put(dst_pe, dst_offset, &buf);
    }
    /// Atomic store of a `width`-byte word (used by p, signal set).
    fn store_word(&self, pe: usize, offset: usize, width: usize, value: u64);
    /// Atomic load of a `width`-byte word.
    fn load_word(&self, pe: usize, offset: usize, width: usize) -> u64;
    /// Carries out an atomic operation and returns the word's previous value.
    fn amo(&self, pe: usize, offset: usize, width: usize, op: AmoOp, operand: u64, compare: u64) -> u64;
    /// Orders earlier puts and atomics to each PE before later ones to the same PE.
    fn fence(&self);
    /// Completes every earlier operation (to `pe`, or to all PEs when `None`).
    fn quiet(&self, pe: Option<usize>);
    /// A directly usable address of `pe`'s heap byte at `offset`, when it is mapped.
    fn direct_address(&self, pe: usize, offset: usize) -> Option<usize>;
}

/// Which transport serves each PE.
#[derive(Debug, Clone)]
pub struct TransportTable {
    by_pe: Vec<Arc<dyn Transport>>,
}

impl TransportTable {
    /// A table that sends every PE through `t`.
    pub fn uniform(n_pes: usize, t: Arc<dyn Transport>) -> TransportTable {
        TransportTable { by_pe: vec![t; n_pes] }
    }

    /// The transport serving `pe`.
    #[inline]
    pub fn to(&self, pe: usize) -> &dyn Transport {
        &*self.by_pe[pe]
    }

    /// Every distinct transport, for fence and quiet.
    pub fn distinct(&self) -> Vec<Arc<dyn Transport>> {
        let mut out: Vec<Arc<dyn Transport>> = Vec::new();
        for t in &self.by_pe {
            if !out.iter().any(|o| Arc::ptr_eq(o, t)) {
                out.push(t.clone());
            }
        }
        out
    }
}
