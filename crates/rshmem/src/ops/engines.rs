//! Engine-explicit operations, host side: which engine reaches which PE, and the
//! host-initiated copy-engine transfers on a stream.
//!
//! The device API (`rshmem_device_engines.cuh`) lets a kernel pick the engine that moves its
//! bytes: the SM's own stores (`rshmem_putmem_nbi` on mapped peers), the copy engine
//! (`rshmemx_ce_*`, carried out by this PE's host proxy with `Cuda::copy_engine_async`,
//! no SM spent on the bytes) or the remote transport (`rshmemx_remote_*`, through the proxy and UCX even
//! where a mapping exists). [`Ctx::engine_reaches`] says beforehand which of them reach a
//! PE, so a program can choose instead of stopping a kernel with a device error. On the
//! host, [`Ctx::put_on_stream`] and [`Ctx::get_on_stream`] are the copy engine's transfers,
//! ordered with the stream's kernels.

use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::gpu::cuda::Stream;
use crate::sym::Sym;
use crate::types::SymType;

/// What moves the bytes of a device-initiated transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The calling threads' loads and stores through the peer mapping.
    Sm,
    /// The GPU's copy engine, driven by this PE's host proxy (`rshmemx_ce_*`).
    CopyEngine,
    /// The remote transport (UCX, staged through host memory), driven by the host proxy
    /// (`rshmemx_remote_*`).
    Remote,
}

impl Ctx {
    /// Whether `engine` reaches `pe` from this PE's kernels: the SM and the copy engine reach
    /// mapped peers of a GPU PE (itself included); the remote engine reaches the peers that
    /// have a remote transport (other hosts, or every peer with `RSHMEM_REMOTE_ENGINE=ucx` or
    /// `RSHMEM_TRANSPORT=ucx`), never the PE itself. False for CPU PEs and PEs out of range.
    pub fn engine_reaches(&self, engine: Engine, pe: usize) -> bool {
        if pe >= self.n_pes() || self.gpu().is_none() {
            return false;
        }
        let Some(proxy) = self.rt.proxy.as_ref() else { return false };
        match engine {
            Engine::Sm | Engine::CopyEngine => !proxy.serves(pe),
            Engine::Remote => proxy.reaches_remote(pe),
        }
    }

    /// Checks that the copy engine reaches `pe` for `call`.
    pub(crate) fn check_copy_engine(&self, call: &'static str, pe: usize) -> Result<()> {
        if self.engine_reaches(Engine::CopyEngine, pe) {
            return Ok(());
        }
        Err(Error::Unsupported {
            call,
            detail: format!("the copy engine of PE {} does not reach PE {pe}: it copies between mapped GPU heaps only", self.my_pe()),
        })
    }

    /// Enqueues on `stream` a copy-engine copy of `nelems` elements from `src[src_index..]`
    /// on `pe` into this PE's `dest[dest_index..]` (through the peer mapping; `pe` must be
    /// mapped, see [`Ctx::engine_reaches`]). Complete when the stream reaches it.
    #[allow(clippy::too_many_arguments)]
    pub fn get_on_stream<T: SymType>(
        &self,
        dest: &Sym<T>,
        dest_index: usize,
        src: &Sym<T>,
        src_index: usize,
        nelems: usize,
        pe: usize,
        stream: &Stream,
    ) -> Result<()> {
        self.copy_engine_on_stream("get_on_stream", false, (src, src_index), (dest, dest_index), nelems, pe, stream)
    }

    /// The copy engine's transfer on `stream` between `remote` on `pe` and `local` on this
    /// PE (`put`: local to remote), checked for `call`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn copy_engine_on_stream<T: SymType>(
        &self,
        call: &'static str,
        put: bool,
        (remote, remote_index): (&Sym<T>, usize),
        (local, local_index): (&Sym<T>, usize),
        nelems: usize,
        pe: usize,
        stream: &Stream,
    ) -> Result<()> {
        let g = self.gpu_or_err(call)?;
        let n = nelems * std::mem::size_of::<T>();
        let (r_arg, l_arg) = if put { ("dest", "source") } else { ("source", "dest") };
        self.remote(call, r_arg, remote.addr_of(remote_index), n, pe)?;
        self.remote(call, l_arg, local.addr_of(local_index), n, self.my_pe())?;
        self.check_copy_engine(call, pe)?;
        g.cuda.bind()?;
        let (r, l) = (g.peer_address(remote.addr_of(remote_index) as u64, pe), local.addr_of(local_index) as u64);
        let (dst, src) = if put { (r, l) } else { (l, r) };
        g.cuda.copy_engine_async(dst, src, n, stream)
    }
}
