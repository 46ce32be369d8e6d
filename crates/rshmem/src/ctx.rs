//! The runtime and its handle, [`Ctx`].
//!
//! [`init`] builds the runtime: bootstrap, symmetric heap, transport table, predefined
//! teams. A `Ctx` is a handle on it; every operation is a method of `Ctx`. Several `Ctx`
//! handles (made with `Ctx::create_ctx`, see `ops::context`) share one runtime and differ
//! only in their communication context: ordering and completion domain, options, team.
//! There are no hidden globals: the C ABI keeps its own.

use crate::bootstrap::{self, Bootstrap};
use crate::env::Config;
use crate::error::{Error, Result};
use crate::heap::layout::SysLayout;
use crate::heap::{SymmetricHeap, UserMemory};
use crate::ops::context::CtxDomain;
use crate::ops::lock::HeldLocks;
use crate::team::TeamTable;
use crate::transport::local::LocalTransport;
use crate::transport::notify::WaitPolicy;
use crate::transport::ucx::staged::StagedTransport;
use crate::transport::ucx::UcxTransport;
use crate::transport::{Transport, TransportTable};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// State shared by every handle of one PE's runtime.
pub(crate) struct Runtime {
    pub(crate) my_pe: usize,
    pub(crate) n_pes: usize,
    pub(crate) config: Config,
    boot: Mutex<Box<dyn Bootstrap>>,
    pub(crate) heap: SymmetricHeap,
    pub(crate) transports: TransportTable,
    /// The host (shared-memory domain) of every PE: PEs with the same number reach each
    /// other through mapped memory (see `host_transports`).
    pub(crate) host_of: Vec<usize>,
    pub(crate) teams: TeamTable,
    pub(crate) coll: crate::coll::CollConfig,
    /// Number of the next communication context (0 is the default context).
    pub(crate) next_ctx_id: AtomicU32,
    /// Distributed locks this PE holds.
    pub(crate) locks: HeldLocks,
    #[cfg(feature = "cuda")]
    pub(crate) gpu: Option<Arc<crate::gpu::Gpu>>,
    /// The GPU PE's host proxy, when some peers are reached through it.
    #[cfg(feature = "cuda")]
    pub(crate) proxy: Option<crate::gpu::proxy::Proxy>,
    finalized: AtomicBool,
}

impl Runtime {
    pub(crate) fn boot(&self) -> MutexGuard<'_, Box<dyn Bootstrap>> {
        self.boot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The transport that reaches `pe`.
    #[inline]
    pub(crate) fn to(&self, pe: usize) -> &dyn Transport {
        self.transports.to(pe)
    }

    /// How waits behave: spin count, hang warning, optional deadline.
    pub(crate) fn wait_policy(&self, timeout: Option<Duration>) -> WaitPolicy {
        WaitPolicy { spin: self.config.spin, deadline: timeout.map(|t| Instant::now() + t), warn_after: self.config.wait_warn }
    }

    /// Barrier over the world, then says goodbye to the bootstrap. Idempotent.
    fn finalize(&self) -> Result<()> {
        if self.finalized.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        crate::coll::barrier::barrier_all(self, "finalize")?;
        // The proxy finishes what kernels left in its ring before the transports close.
        #[cfg(feature = "cuda")]
        if let Some(p) = &self.proxy {
            p.stop();
        }
        let mut boot = self.boot();
        self.heap.finalize_hook(&mut **boot)?;
        boot.finalize()
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if !self.finalized.load(Ordering::SeqCst) {
            if std::thread::panicking() {
                let msg = format!("PE {} panicked before finalize", self.my_pe);
                self.boot().abort(1, &msg);
            }
            if let Err(e) = self.finalize() {
                eprintln!("rshmem: PE {}: finalize failed: {e}", self.my_pe);
            }
        }
    }
}

/// Options of a communication context (OpenSHMEM `SHMEM_CTX_*`; C bits in
/// [`CtxOptions::from_bits`]). See `ops::context` for what each changes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CtxOptions {
    /// Only one thread at a time uses the context.
    pub serialized: bool,
    /// Only the creating thread uses the context.
    pub private: bool,
    /// The context issues no stores: puts, updating AMOs and signals through it are
    /// refused; quiet has nothing of its own to wait for.
    pub nostore: bool,
}

/// A handle on the rshmem runtime: the entry point of every operation.
///
/// Each `Ctx` value is a communication context (OpenSHMEM `shmem_ctx_t`): [`init`] returns
/// the default context, [`Ctx::create_ctx`] and [`Ctx::team_create_ctx`] make more.
/// Cloning is cheap and shares the runtime and the context. The runtime finalizes
/// (a collective barrier) when the last handle and the last symmetric allocation are
/// dropped, or at [`Ctx::finalize`]; a PE that panics before that aborts the job instead,
/// so that its peers are ended rather than left waiting.
#[derive(Clone)]
pub struct Ctx {
    pub(crate) rt: Arc<Runtime>,
    pub(crate) options: CtxOptions,
    pub(crate) domain: Arc<CtxDomain>,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("pe", &self.rt.my_pe)
            .field("n_pes", &self.rt.n_pes)
            .field("ctx_id", &self.domain.id)
            .field("team", &self.domain.team)
            .field("options", &self.options)
            .finish()
    }
}

fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("RSHMEM_LOG").unwrap_or_else(|_| EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

/// Starts the runtime: a collective call over every PE of the job.
///
/// Under `rshmemrun` the PEs meet through the launcher; a program started on its own
/// runs as a single PE.
pub fn init() -> Result<Ctx> {
    init_with(InitOptions::default())
}

/// What [`init_with`] may add to a plain [`init`].
#[derive(Debug, Default)]
pub struct InitOptions {
    /// The program's static data, made symmetric (the C ABI's globals).
    pub statics: Option<crate::heap::StaticSegment>,
}

/// [`init`] with options.
pub fn init_with(options: InitOptions) -> Result<Ctx> {
    init_logging();
    let config = Config::from_env()?;
    let mut boot = bootstrap::from_env()?;
    let (my_pe, n_pes) = (boot.rank(), boot.size());
    let forced = crate::coll::Forced::parse(config.coll_algo.as_deref().unwrap_or("")).map_err(|e| at_pe(e, my_pe))?;
    let sys = SysLayout::new(config.max_teams);
    let hosts = Hosts::exchange(&config, &mut *boot)?;
    let shared = hosts.shared_team(my_pe);
    #[cfg(feature = "cuda")]
    let (heap, (transports, host_of), gpu, proxy) = {
        use crate::gpu::{self, DeviceChoice};
        let choice = match config.device.as_str() {
            "cpu" => DeviceChoice::Cpu,
            "gpu" => DeviceChoice::Gpu,
            _ => DeviceChoice::Auto,
        };
        match gpu::open_for_pe(choice, my_pe)? {
            None => {
                let (heap, transports) = host_pes(&config, &mut *boot, sys, options.statics, hosts)?;
                (heap, transports, None, None)
            }
            Some(cuda) => {
                let max_user = crate::heap::align_up(config.max_symmetric_size.max(config.symmetric_size), crate::heap::SEGMENT_ALIGN);
                let dev = Arc::new(gpu::memory::DeviceHeap::new(cuda.clone(), n_pes, my_pe, max_user, hosts.mapped.clone())?);
                let user = UserMemory::Device(dev.clone());
                let heap = SymmetricHeap::create(
                    &mut *boot,
                    sys,
                    config.symmetric_size,
                    config.max_symmetric_size,
                    options.statics,
                    user,
                    hosts.mapped.clone(),
                )?;
                let layout = gpu::state::DeviceSysLayout::new(sys.max_teams, n_pes, crate::env::gpu_coll_settings()?.1);
                let sys_base = heap.alloc(&mut *boot, "init", layout.size, 4096)? as u64;
                let setup = gpu::GpuSetup {
                    my_pe,
                    n_pes,
                    heap_size: heap.capacity(),
                    sys_base,
                    max_teams: sys.max_teams,
                    debug: config.device_debug,
                    wait_timeout_ns: config.device_wait_timeout.saturating_mul(1_000_000_000),
                };
                let g = gpu::Gpu::new(cuda, dev, setup)?;
                g.set_team(0, Some((0, 1, n_pes)))?;
                g.set_team(1, Some(shared))?;
                g.preload()?;
                let host = LocalTransport::new(heap.bases(), heap.stride());
                let t: Arc<dyn Transport> = Arc::new(gpu::transport::DeviceTransport::new(host, heap.bases(), g.clone(), sys.size));
                // Peers of other hosts (and every peer under RSHMEM_TRANSPORT=ucx) go through
                // the staged UCX protocol, and the device API's operations on them through
                // this PE's host proxy.
                let remote = hosts.remote(my_pe);
                if remote.iter().any(|&r| r) {
                    let area = heap.alloc(&mut *boot, "init", gpu::proxy::device_area_size(n_pes), 256)? as u64;
                    let staged = Arc::new(StagedTransport::new(&mut *boot, heap.base(my_pe), &remote, t.clone(), heap.stride())?);
                    heap.set_segment_hook(&mut *boot, staged.clone())?;
                    let staged: Arc<dyn Transport> = staged;
                    let table = TransportTable::new((0..n_pes).map(|pe| if remote[pe] { staged.clone() } else { t.clone() }).collect());
                    let proxy = gpu::proxy::Proxy::start(g.clone(), table.clone(), &remote, area, sys.size)?;
                    (heap, (table, hosts.domain), Some(g), Some(proxy))
                } else {
                    (heap, (TransportTable::uniform(n_pes, t), hosts.domain), Some(g), None)
                }
            }
        }
    };
    #[cfg(not(feature = "cuda"))]
    let (heap, (transports, host_of)) = host_pes(&config, &mut *boot, sys, options.statics, hosts)?;
    let teams = TeamTable::new(my_pe, n_pes, sys.max_teams, shared);
    let coll = crate::coll::CollConfig { forced, check: config.coll_check };
    let domain = Arc::new(CtxDomain::default_context(&transports));
    let rt = Runtime {
        my_pe,
        n_pes,
        config,
        boot: Mutex::new(boot),
        heap,
        transports,
        host_of,
        teams,
        coll,
        next_ctx_id: AtomicU32::new(1),
        locks: HeldLocks::default(),
        #[cfg(feature = "cuda")]
        gpu,
        #[cfg(feature = "cuda")]
        proxy,
        finalized: AtomicBool::new(false),
    };
    tracing::debug!(pe = my_pe, n_pes, heap = ?rt.heap, "rshmem initialized");
    rt.boot().barrier()?;
    Ok(Ctx { rt: Arc::new(rt), options: CtxOptions::default(), domain })
}

/// The transport table of a host heap and the host (shared-memory domain) of every PE:
/// PEs of this PE's host through shared memory, the others through UCX (with UCX's RMA,
/// or with `RSHMEM_UCX_PROTOCOL=am` the staged active-message protocol).
/// CPU PEs: the heap in host memory (same-host peers mapped) and its transports.
fn host_pes(
    config: &Config,
    boot: &mut dyn Bootstrap,
    sys: SysLayout,
    statics: Option<crate::heap::StaticSegment>,
    hosts: Hosts,
) -> Result<(SymmetricHeap, (TransportTable, Vec<usize>))> {
    let heap = SymmetricHeap::create(
        &mut *boot,
        sys,
        config.symmetric_size,
        config.max_symmetric_size,
        statics,
        UserMemory::Host,
        hosts.mapped.clone(),
    )?;
    let transports = host_transports(config, boot, &heap, hosts)?;
    Ok((heap, transports))
}

fn host_transports(config: &Config, boot: &mut dyn Bootstrap, heap: &SymmetricHeap, hosts: Hosts) -> Result<(TransportTable, Vec<usize>)> {
    let n_pes = heap.n_pes();
    let me = heap.my_pe();
    let local: Arc<dyn Transport> = Arc::new(LocalTransport::new(heap.bases(), heap.stride()));
    let remote = hosts.remote(me);
    if !remote.iter().any(|&r| r) {
        return Ok((TransportTable::uniform(n_pes, local), hosts.domain));
    }
    let ucx: Arc<dyn Transport> = if config.ucx_protocol == "am" {
        let staged = Arc::new(StagedTransport::new(boot, heap.base(heap.my_pe()), &remote, local.clone(), heap.stride())?);
        heap.set_segment_hook(boot, staged.clone())?;
        staged
    } else {
        let ucx = Arc::new(UcxTransport::new(boot, heap.base(heap.my_pe()), &remote)?);
        heap.set_segment_hook(boot, ucx.clone())?;
        ucx
    };
    Ok((TransportTable::new((0..n_pes).map(|pe| if remote[pe] { ucx.clone() } else { local.clone() }).collect()), hosts.domain))
}

/// Which PEs share a machine with which.
#[derive(Debug, Clone)]
struct Hosts {
    /// Shared-memory domain of every PE (the first PE of its domain): which peers take
    /// the local transport and how the collectives group PEs.
    domain: Vec<usize>,
    /// Whether this PE maps each PE's heap: only peers that name the same host
    /// (`RSHMEM_HOST`) are mapped, so a job across machines never asks for another
    /// machine's memory.
    mapped: Vec<bool>,
}

impl Hosts {
    /// Exchanges `RSHMEM_HOST` (default: the hostname). `RSHMEM_TRANSPORT=ucx` makes every
    /// PE a domain of its own (peers of one machine stay mapped, but are reached through
    /// UCX), `local` puts every PE in one domain and maps them all.
    fn exchange(config: &Config, boot: &mut dyn Bootstrap) -> Result<Hosts> {
        let (me, n_pes) = (boot.rank(), boot.size());
        let names = boot.allgather(config.host.as_bytes())?;
        // Host number: the first PE that named the same host.
        let by_name: Vec<usize> = (0..n_pes).map(|pe| names.iter().position(|n| *n == names[pe]).unwrap_or(pe)).collect();
        let (domain, mapped) = match config.transport.as_str() {
            "local" => (vec![0; n_pes], vec![true; n_pes]),
            "ucx" => ((0..n_pes).collect(), (0..n_pes).map(|pe| by_name[pe] == by_name[me]).collect()),
            _ => (by_name.clone(), (0..n_pes).map(|pe| by_name[pe] == by_name[me]).collect()),
        };
        Ok(Hosts { domain, mapped })
    }

    /// (start, stride, size) of `me`'s `SHARED` team: the PEs of its domain when they
    /// form a strided set (as block and round-robin placements do), else `me` alone.
    fn shared_team(&self, me: usize) -> (usize, usize, usize) {
        let members: Vec<usize> = (0..self.domain.len()).filter(|&pe| self.domain[pe] == self.domain[me]).collect();
        let stride = if members.len() > 1 { members[1] - members[0] } else { 1 };
        if members.windows(2).all(|w| w[1] - w[0] == stride) {
            (members[0], stride, members.len())
        } else {
            (me, 1, 1)
        }
    }

    /// The peers `me` reaches through the remote transport.
    fn remote(&self, me: usize) -> Vec<bool> {
        (0..self.domain.len()).map(|pe| pe != me && self.domain[pe] != self.domain[me]).collect()
    }
}

/// Puts this PE's number into an init error about an environment variable.
fn at_pe(e: Error, my_pe: usize) -> Error {
    match e {
        Error::InvalidArgument { call, arg, detail, .. } => Error::InvalidArgument { call, arg, detail, pe: my_pe },
        other => other,
    }
}

impl Ctx {
    /// This PE's number in the world team.
    #[inline]
    pub fn my_pe(&self) -> usize {
        self.rt.my_pe
    }

    /// Number of PEs in the world team.
    #[inline]
    pub fn n_pes(&self) -> usize {
        self.rt.n_pes
    }

    /// This context's options.
    pub fn options(&self) -> CtxOptions {
        self.options
    }

    /// Finalizes the runtime now (collective): a barrier over all PEs, then the launcher
    /// is told this PE finished cleanly. Later operations through any handle are errors
    /// only in the sense that peers may be gone; call this last.
    pub fn finalize(self) -> Result<()> {
        self.rt.finalize()
    }

    /// Ends the whole job with `code` (OpenSHMEM `global_exit`).
    pub fn global_exit(&self, code: i32) -> ! {
        let msg = format!("global_exit({code}) called on PE {}", self.rt.my_pe);
        self.rt.boot().abort(code, &msg)
    }

    /// Checks that `pe` is a valid world PE for `call`.
    #[inline]
    pub(crate) fn check_pe(&self, call: &'static str, pe: usize) -> Result<()> {
        if pe < self.rt.n_pes {
            Ok(())
        } else {
            Err(Error::PeOutOfRange { call, arg: "pe", pe: pe as i64, n_pes: self.rt.n_pes, team: Default::default() })
        }
    }

    /// This PE's GPU runtime, when it runs as a GPU PE (its heap is in GPU memory).
    #[cfg(feature = "cuda")]
    pub fn gpu(&self) -> Option<&Arc<crate::gpu::Gpu>> {
        self.rt.gpu.as_ref()
    }

    /// Whether this PE's symmetric heap lives in GPU memory.
    pub fn heap_is_device(&self) -> bool {
        self.rt.heap.is_device()
    }

    /// Symmetric heap statistics: (bytes in use, bytes of address space reserved per PE).
    pub fn heap_usage(&self) -> (usize, usize) {
        (self.rt.heap.in_use(), self.rt.heap.user_limit() - self.rt.heap.user_base())
    }
}
