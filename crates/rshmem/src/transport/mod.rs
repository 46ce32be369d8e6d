//! Transports: how bytes and atomics reach a peer's heap.
//!
//! One trait with uniform parts (after UCX's md/iface/ep split): what a transport can do
//! ([`Transport::caps`], after `uct_iface_query`), how it moves bytes, how it does
//! atomics, how it completes (fence, quiet). Every operation returns a `Result`: a UCX or
//! CUDA failure at run time is an [`crate::Error`] naming the operation, the PE and the
//! cause, never a panic. The ops layer looks the transport up per peer in
//! [`TransportTable`] and asks its capabilities, never its name. Offsets are from the
//! peer's heap base, already checked by the heap against the live allocations.
//!
//! | transport | file | reaches |
//! |---|---|---|
//! | local | `local.rs` | peers whose host heap is mapped here: loads, stores, CPU atomics |
//! | device | `device.rs` | mapped peers whose user heap is GPU memory: copies, an atomic kernel |
//! | UCX | `ucx/mod.rs` | peers on other hosts: UCX RMA and atomics on registered memory |
//! | staged UCX | `ucx/staged.rs` | peers on other hosts: active messages the target carries out |
//! | proxy | `proxy.rs` | (not a `Transport`) the host thread that carries out GPU-initiated requests for unmapped peers over the table |

#[cfg(feature = "cuda")]
pub mod device;
pub mod local;
pub mod notify;
#[cfg(feature = "cuda")]
pub mod proxy;
pub mod ucx;

use crate::error::Result;
use crate::heap::words::WatchedWord;

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

impl AmoOp {
    /// Every operation, in code order.
    pub const ALL: [AmoOp; 8] =
        [AmoOp::Fetch, AmoOp::Set, AmoOp::Swap, AmoOp::CompareSwap, AmoOp::FetchAdd, AmoOp::FetchAnd, AmoOp::FetchOr, AmoOp::FetchXor];

    /// Its number on the wire and in device code (the staged UCX protocol's requests, the
    /// GPU proxy ring's `RSHMEMI_AMO_*`, the runtime's atomic kernel): 0..=7 in
    /// declaration order.
    pub fn code(self) -> u32 {
        self as u32
    }

    /// The operation with number `code`, if any.
    pub fn from_code(code: u64) -> Option<AmoOp> {
        usize::try_from(code).ok().and_then(|i| AmoOp::ALL.get(i).copied())
    }
}

/// What a transport can do, so that the layers above choose by capability rather than
/// by name (in the spirit of UCX's `uct_iface_query`). It holds what the layers above
/// ask; a new question gets its field together with the code that asks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Peers' heaps are mapped here: [`Transport::direct_address`] answers, and a load or
    /// store by pointer reaches them (the collectives read peers in place).
    pub mapped: bool,
}

/// A word of a PE's heap that a wait polls: a plain atomic view where the heap is mapped
/// here ([`Transport::watched_word`]: one load per poll, no call through the transport;
/// a ping-pong's legs are a few dozen nanoseconds each), else a load through the
/// transport (a GPU heap's word, a peer behind the network).
pub(crate) struct PolledWord<'a> {
    watched: Option<WatchedWord>,
    t: &'a dyn Transport,
    pe: usize,
    off: usize,
    width: usize,
}

impl<'a> PolledWord<'a> {
    /// The `width`-byte word at `off` in `pe`'s heap, read through `t` (`pe`'s transport).
    #[inline]
    pub(crate) fn new(t: &'a dyn Transport, pe: usize, off: usize, width: usize) -> PolledWord<'a> {
        PolledWord { watched: t.watched_word(pe, off, width), t, pe, off, width }
    }

    /// The word's value, zero-extended.
    #[inline]
    pub(crate) fn load(&self) -> Result<u64> {
        match self.watched {
            Some(w) => Ok(w.load()),
            None => self.t.load_word(self.pe, self.off, self.width),
        }
    }
}

/// The operations every transport provides. Values of atomics travel as the low
/// `width` bytes of a `u64` (width 1, 2, 4 or 8). Every operation returns an error
/// naming itself, the PEs and the cause when the transport fails.
pub trait Transport: Send + Sync + Debug {
    /// Short name for logs.
    fn name(&self) -> &'static str;
    /// What this transport can do.
    fn caps(&self) -> Caps;
    /// Copies `src` into `pe`'s heap at `offset`.
    fn put(&self, pe: usize, offset: usize, src: &[u8]) -> Result<()>;
    /// Copies `dst.len()` bytes from `pe`'s heap at `offset` into `dst`.
    fn get(&self, pe: usize, offset: usize, dst: &mut [u8]) -> Result<()>;
    /// Puts each `(offset, bytes)` of `pieces` into `pe`'s heap, in order: what a
    /// [`Transport::put`] of each does. Transports with a cost per message override it to
    /// carry many pieces at once (the staged UCX protocol sends one message for many, the
    /// device transport synchronizes once); strided puts and the GPU proxy's runs of small
    /// puts use it.
    fn put_gather(&self, pe: usize, pieces: &[(usize, &[u8])]) -> Result<()> {
        pieces.iter().try_for_each(|&(offset, bytes)| self.put(pe, offset, bytes))
    }
    /// Copies `len` bytes from `src_pe`'s heap at `src_offset` to `dst_pe`'s heap at
    /// `dst_offset` (one of them is normally this PE; the collectives move symmetric
    /// data this way without a bounce through a local buffer). The default goes through
    /// a temporary buffer with `get` and `put`.
    fn copy(&self, dst_pe: usize, dst_offset: usize, src_pe: usize, src_offset: usize, len: usize) -> Result<()> {
        let mut buf = vec![0u8; len];
        self.get(src_pe, src_offset, &mut buf)?;
        self.put(dst_pe, dst_offset, &buf)
    }
    /// A get that may still be in flight when it returns: `quiet` completes it. The
    /// default is [`Transport::get`], complete on return.
    ///
    /// # Safety
    /// `dst` must stay valid for writes of `len` bytes, and unread and unwritten by
    /// anyone else, until the next `quiet` of this transport returns.
    unsafe fn get_nbi(&self, pe: usize, offset: usize, dst: *mut u8, len: usize) -> Result<()> {
        // SAFETY: the caller's promise covers the whole call.
        self.get(pe, offset, unsafe { std::slice::from_raw_parts_mut(dst, len) })
    }
    /// Atomic store of a `width`-byte word (used by p, signal set).
    fn store_word(&self, pe: usize, offset: usize, width: usize, value: u64) -> Result<()>;
    /// Atomic load of a `width`-byte word.
    fn load_word(&self, pe: usize, offset: usize, width: usize) -> Result<u64>;
    /// Carries out an atomic operation and returns the word's previous value.
    fn amo(&self, pe: usize, offset: usize, width: usize, op: AmoOp, operand: u64, compare: u64) -> Result<u64>;
    /// An atomic update whose previous value nobody reads (OpenSHMEM's non-fetching
    /// atomics: add, inc, and, or, xor, set): like a put, it is complete at `quiet` and
    /// ordered by `fence`. The default carries it out at once with [`Transport::amo`];
    /// a remote transport may return before the target has applied it.
    fn amo_post(&self, pe: usize, offset: usize, width: usize, op: AmoOp, operand: u64) -> Result<()> {
        self.amo(pe, offset, width, op, operand, 0).map(drop)
    }
    /// A non-fetching atomic on one of the library's own synchronization words (barrier
    /// and arrival counters): like [`Transport::amo_post`], ordered by `fence`, but no
    /// later `quiet` waits for it, since nobody but the PE that waits for the count on
    /// the target needs it to land (a barrier_all's quiet would otherwise flush the
    /// previous barrier's signals, a round trip over the network). The default is
    /// [`Transport::amo_post`].
    fn signal_post(&self, pe: usize, offset: usize, width: usize, op: AmoOp, operand: u64) -> Result<()> {
        self.amo_post(pe, offset, width, op, operand)
    }
    /// Writes `data` at `offset` of `pe`'s heap, then updates the 8-byte word at
    /// `sig_offset` with `op` (`Set` or `FetchAdd`) and `value`: whoever sees the word
    /// updated sees the data. For the library's own messages (a collective's inbox
    /// posts), like [`Transport::signal_post`]: no later `quiet` waits for it, and `fence`
    /// does not order it with this PE's other operations. A network transport may send
    /// both as one message. The default puts, fences and posts the signal.
    fn signal_put(&self, pe: usize, offset: usize, data: &[u8], sig_offset: usize, op: AmoOp, value: u64) -> Result<()> {
        self.put(pe, offset, data)?;
        self.fence()?;
        self.signal_post(pe, sig_offset, 8, op, value)
    }
    /// Orders earlier puts and atomics to each PE before later ones to the same PE.
    fn fence(&self) -> Result<()>;
    /// Completes every earlier operation (to `pe`, or to all PEs when `None`).
    fn quiet(&self, pe: Option<usize>) -> Result<()>;
    /// A directly usable address of `pe`'s heap byte at `offset`, when it is mapped.
    fn direct_address(&self, pe: usize, offset: usize) -> Option<usize>;
    /// The `width`-byte word of `pe`'s heap at `offset` as a plain atomic view, where the
    /// heap is mapped here and a load needs nothing of the transport (None by default):
    /// waits poll it directly.
    fn watched_word(&self, pe: usize, offset: usize, width: usize) -> Option<WatchedWord> {
        let _ = (pe, offset, width);
        None
    }
    /// What this PE's polling waits drive so that peers' operations on this PE are
    /// carried out at once (see [`notify::Drive`]); None (the default) where the
    /// transport needs no thread of this PE for that.
    fn driver(&self) -> Option<Arc<dyn notify::Drive>> {
        None
    }
    /// The address of `pe`'s heap byte at `offset` as this PE's kernels see it, when it is
    /// device memory they can load from and store to (None by default: host heaps, and
    /// peers only a proxy reaches).
    fn device_address(&self, pe: usize, offset: usize) -> Option<u64> {
        let _ = (pe, offset);
        None
    }
    /// Whether [`Transport::relay_put`] and [`Transport::relay_get`] reach `relay_pe`
    /// (false by default: only the staged UCX protocol relays).
    fn relays(&self, relay_pe: usize) -> bool {
        let _ = relay_pe;
        false
    }
    /// Sends `src` to `relay_pe`, which carries it on to `pe`'s heap at `offset` with its
    /// own means. Complete at `quiet` (of `relay_pe`); not ordered with direct operations
    /// on `pe`.
    fn relay_put(&self, relay_pe: usize, pe: usize, offset: usize, src: &[u8]) -> Result<()> {
        let _ = (pe, offset, src);
        Err(crate::Error::Unsupported {
            call: "relay_put",
            detail: format!("the {} transport does not relay (to PE {relay_pe})", self.name()),
        })
    }
    /// Reads `dst.len()` bytes of `pe`'s heap at `offset` through `relay_pe`.
    fn relay_get(&self, relay_pe: usize, pe: usize, offset: usize, dst: &mut [u8]) -> Result<()> {
        let _ = (pe, offset, dst);
        Err(crate::Error::Unsupported {
            call: "relay_get",
            detail: format!("the {} transport does not relay (to PE {relay_pe})", self.name()),
        })
    }
    /// The instance that carries the operations of a new communication context, with
    /// completion state of its own: its `quiet` waits only for operations issued through
    /// it, never for another context's. Dropping it closes the context's resources.
    ///
    /// `None` (the default) shares `self`: right for transports whose operations are
    /// complete when their call returns (the local transport), where quiet has nothing to
    /// wait for in any context.
    fn open_context(&self, spec: ContextSpec) -> Option<Arc<dyn Transport>> {
        let _ = spec;
        None
    }
}

/// What a transport learns of a communication context it opens an instance for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextSpec {
    /// The context's number on this PE (0 is the default context; never reused).
    pub id: u32,
    /// Only one thread at a time issues operations (no locking needed on the instance).
    pub serialized: bool,
    /// Only the creating thread issues operations.
    pub private: bool,
    /// The context issues no stores: quiet and fence need not track puts or updates.
    pub nostore: bool,
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

    /// A table with `by_pe[pe]` serving `pe`.
    pub fn new(by_pe: Vec<Arc<dyn Transport>>) -> TransportTable {
        TransportTable { by_pe }
    }

    /// The transport serving `pe`.
    #[inline]
    pub fn to(&self, pe: usize) -> &dyn Transport {
        &*self.by_pe[pe]
    }

    /// The transport that relays through `relay` (see [`Transport::relay_put`]): this
    /// table's for `relay`, else `engine` (a GPU PE's remote engine), if either relays.
    pub fn relay_path<'a>(&'a self, relay: usize, engine: Option<&'a dyn Transport>) -> Option<&'a dyn Transport> {
        let table = self.to(relay);
        if table.relays(relay) {
            return Some(table);
        }
        engine.filter(|t| t.relays(relay))
    }

    /// The table of a new context: every transport replaced by the instance it opens for
    /// `spec` (or shared, when it opens none). See [`Transport::open_context`].
    pub fn for_context(&self, spec: ContextSpec) -> TransportTable {
        let opened: Vec<(Arc<dyn Transport>, Arc<dyn Transport>)> =
            self.distinct().into_iter().map(|t| (t.clone(), t.open_context(spec).unwrap_or(t))).collect();
        let by_pe = self
            .by_pe
            .iter()
            .map(|t| opened.iter().find(|(orig, _)| Arc::ptr_eq(orig, t)).map(|(_, inst)| inst.clone()).expect("listed as distinct"))
            .collect();
        TransportTable { by_pe }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A transport that only counts quiets, and opens a fresh instance per context.
    #[derive(Debug, Default)]
    struct Counting {
        quiets: AtomicUsize,
        opened: std::sync::Mutex<Vec<Arc<Counting>>>,
    }

    impl Transport for Counting {
        fn name(&self) -> &'static str {
            "counting"
        }
        fn caps(&self) -> Caps {
            Caps { mapped: false }
        }
        fn put(&self, _: usize, _: usize, _: &[u8]) -> Result<()> {
            Ok(())
        }
        fn get(&self, _: usize, _: usize, _: &mut [u8]) -> Result<()> {
            Ok(())
        }
        fn store_word(&self, _: usize, _: usize, _: usize, _: u64) -> Result<()> {
            Ok(())
        }
        fn load_word(&self, _: usize, _: usize, _: usize) -> Result<u64> {
            Ok(0)
        }
        fn amo(&self, _: usize, _: usize, _: usize, _: AmoOp, _: u64, _: u64) -> Result<u64> {
            Ok(0)
        }
        fn fence(&self) -> Result<()> {
            Ok(())
        }
        fn quiet(&self, _: Option<usize>) -> Result<()> {
            self.quiets.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
        fn direct_address(&self, _: usize, _: usize) -> Option<usize> {
            None
        }
        fn open_context(&self, _: ContextSpec) -> Option<Arc<dyn Transport>> {
            let inst = Arc::new(Counting::default());
            self.opened.lock().unwrap().push(inst.clone());
            Some(inst)
        }
    }

    fn spec(id: u32) -> ContextSpec {
        ContextSpec { id, serialized: false, private: false, nostore: false }
    }

    #[test]
    fn a_context_quiets_only_its_own_instance() {
        let base = Arc::new(Counting::default());
        let table = TransportTable::uniform(4, base.clone());
        let a = table.for_context(spec(1));
        let b = table.for_context(spec(2));
        assert_eq!(a.distinct().len(), 1, "one instance serves every PE of a context");
        for t in a.distinct() {
            t.quiet(None).unwrap();
        }
        let opened = base.opened.lock().unwrap();
        assert_eq!(opened.len(), 2);
        assert_eq!(opened[0].quiets.load(Ordering::SeqCst), 1, "context a's instance was quieted");
        assert_eq!(opened[1].quiets.load(Ordering::SeqCst), 0, "context b's was not");
        assert_eq!(base.quiets.load(Ordering::SeqCst), 0, "nor the default context's");
        assert!(!Arc::ptr_eq(&a.by_pe[0], &b.by_pe[3]));
    }

    #[test]
    fn transports_without_contexts_are_shared() {
        let local: Arc<dyn Transport> = Arc::new(local::LocalTransport::new(0, vec![0, 1 << 20], 1 << 20));
        let table = TransportTable::uniform(2, local.clone());
        let ctx = table.for_context(spec(7));
        assert!(Arc::ptr_eq(&ctx.by_pe[1], &local));
    }

    #[test]
    fn every_atomic_has_a_code() {
        for op in AmoOp::ALL {
            assert_eq!(AmoOp::from_code(op.code().into()), Some(op));
        }
        assert_eq!(AmoOp::from_code(8), None);
    }
}
