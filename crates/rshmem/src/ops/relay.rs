//! Relayed puts and gets (after ACLSHMEM's `relay_put/get_nbi`): the bytes travel to a
//! third PE, the relay, whose runtime carries them on to the final PE with its own means
//! (its network links, or its mapping when the final PE shares its host). A job spreads
//! traffic over several paths this way, or reaches a PE through another that shares its
//! host.
//!
//! The request reaches the relay through the staged UCX protocol
//! (`transport::ucx::staged`): CPU PEs with `RSHMEM_UCX_PROTOCOL=am`, GPU PEs always, to
//! the peers the transport table sends through UCX or, on GPU PEs, the peers the remote
//! engine reaches (`RSHMEM_REMOTE_ENGINE=ucx`: every peer). The host forms here return once
//! the data is at the final PE (a put) or here (a get). The device API's
//! `rshmemx_relay_putmem_nbi` goes through the host proxy to the same protocol.

use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::sym::Sym;
use crate::transport::Transport;
use crate::types::SymType;

impl Ctx {
    /// Copies `src` to `dest[index..]` on `pe` through `relay_pe`: the relay's runtime
    /// carries the bytes on. Returns once they are at `pe`. `pe`, `relay_pe` and this PE
    /// must be three different PEs; the relay must be reached by the staged UCX protocol
    /// (see the module notes).
    pub fn relay_put<T: SymType>(&self, dest: &Sym<T>, index: usize, src: &[T], pe: usize, relay_pe: usize) -> Result<()> {
        let addr = dest.elements("relay_put", "index", index, src.len(), pe)?;
        self.relay_bytes("relay_put", addr, RelayDir::Put(bytemuck::cast_slice(src)), pe, relay_pe)
    }

    /// Copies `dest.len()` elements from `src[index..]` on `pe` into `dest` through
    /// `relay_pe` (the relay fetches them and sends them on). Preconditions as for
    /// [`Ctx::relay_put`].
    pub fn relay_get<T: SymType>(&self, dest: &mut [T], src: &Sym<T>, index: usize, pe: usize, relay_pe: usize) -> Result<()> {
        let addr = src.elements("relay_get", "index", index, dest.len(), pe)?;
        self.relay_bytes("relay_get", addr, RelayDir::Get(bytemuck::cast_slice_mut(dest)), pe, relay_pe)
    }

    /// Byte form of [`Ctx::relay_put`] at a symmetric address.
    pub fn relay_putmem(&self, dest_addr: usize, src: &[u8], pe: usize, relay_pe: usize) -> Result<()> {
        self.relay_bytes("relay_putmem", dest_addr, RelayDir::Put(src), pe, relay_pe)
    }

    /// Byte form of [`Ctx::relay_get`] at a symmetric address.
    pub fn relay_getmem(&self, dest: &mut [u8], src_addr: usize, pe: usize, relay_pe: usize) -> Result<()> {
        self.relay_bytes("relay_getmem", src_addr, RelayDir::Get(dest), pe, relay_pe)
    }

    fn relay_bytes(&self, call: &'static str, addr: usize, dir: RelayDir<'_>, pe: usize, relay_pe: usize) -> Result<()> {
        let (arg, len) = match &dir {
            RelayDir::Put(s) => ("dest", s.len()),
            RelayDir::Get(d) => ("source", d.len()),
        };
        let (pe, off) = self.target(call, arg, addr, len, pe)?;
        let relay = self.target_pe(call, relay_pe)?;
        let me = self.my_pe();
        let bad = |detail: String| Error::InvalidArgument { call, arg: "relay_pe", detail, pe: me };
        if relay == pe {
            return Err(bad(format!("the relay PE {relay} is the final PE itself")));
        }
        if relay == me || pe == me {
            return Err(bad(format!("PE {me} cannot relay to itself or through itself (final PE {pe}, relay PE {relay})")));
        }
        if len == 0 {
            return Ok(());
        }
        let t = self.relay_transport(call, relay)?;
        let done = match dir {
            RelayDir::Put(src) => t.relay_put(relay, pe, off, src).and_then(|_| t.quiet(Some(relay))),
            RelayDir::Get(dst) => t.relay_get(relay, pe, off, dst),
        };
        done.map_err(|e| e.during(call))
    }

    /// The transport that relays through `relay`: the table's (a staged UCX peer) or the
    /// GPU remote engine's.
    fn relay_transport(&self, call: &'static str, relay: usize) -> Result<&dyn Transport> {
        #[cfg(feature = "cuda")]
        let engine = self.rt.proxy.as_ref().and_then(|p| p.remote_engine());
        #[cfg(not(feature = "cuda"))]
        let engine = None;
        if let Some(t) = self.domain.transports.relay_path(relay, engine) {
            return Ok(t);
        }
        Err(Error::Unsupported {
            call,
            detail: format!(
                "PE {relay} is not reached by the staged UCX protocol from PE {}: relays need it (CPU PEs: RSHMEM_UCX_PROTOCOL=am with \
                 the relay on another host or RSHMEM_TRANSPORT=ucx; GPU PEs: a relay on another host or RSHMEM_REMOTE_ENGINE=ucx)",
                self.my_pe()
            ),
        })
    }
}

/// Which way a relayed transfer goes, with its local buffer.
enum RelayDir<'a> {
    Put(&'a [u8]),
    Get(&'a mut [u8]),
}
