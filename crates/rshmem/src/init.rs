//! Start-up: the one place a PE's runtime is built.
//!
//! In order: configuration (the environment, read once), bootstrap (who am I, how many),
//! hosts (who shares memory with whom), the symmetric heap (host or GPU memory), the
//! transport table (the same construction for CPU and GPU PEs: mapped peers through the
//! local or device transport, the others through UCX), the GPU runtime and proxy where
//! the PE has a GPU, the team table; then a barrier. Nothing below this module knows of
//! the others' existence beyond the layer under it.

use crate::bootstrap::status::Watcher;
use crate::bootstrap::{self, Bootstrap};
#[cfg(not(feature = "cuda"))]
use crate::config::Device;
#[cfg(feature = "cuda")]
use crate::config::RemoteEngine;
use crate::config::{Config, UcxProtocol};
use crate::ctx::Ctx;
#[cfg(not(feature = "cuda"))]
use crate::error::Error;
use crate::error::Result;
use crate::heap::layout::SysLayout;
use crate::heap::{StaticSegment, SymmetricHeap, UserMemory};
use crate::runtime::hosts::Hosts;
use crate::runtime::teams::TeamTable;
use crate::runtime::{Runtime, RuntimeParts};
use crate::transport::local::LocalTransport;
use crate::transport::ucx::staged::StagedTransport;
use crate::transport::ucx::{UcxTransport, Waits};
use crate::transport::{Transport, TransportTable};
use std::sync::Arc;

/// Starts the runtime: a collective call over every PE of the job.
///
/// Under `rshmemrun` the PEs meet through the launcher, under `mpirun`/`srun` through
/// PMIx, under torchrun through TCP; a program started on its own runs as a single PE.
/// Under `rshmemrun --pes-per-process K` a process hosts K PEs: each of K threads calls
/// `init` (the first caller becomes the process's first PE, and so on), or the program
/// calls [`run_local_pes`].
pub fn init() -> Result<Ctx> {
    init_with(InitOptions::default())
}

/// What [`init_with`] may add to a plain [`init`].
#[derive(Default)]
pub struct InitOptions {
    /// The program's static data, made symmetric (the C ABI's globals).
    pub statics: Option<StaticSegment>,
    /// Settings to use instead of reading the environment (`None`: `Config::from_env`).
    pub config: Option<Config>,
    /// Which of this process's PEs this is (`0..local_pes()`), under
    /// `rshmemrun --pes-per-process`; `None`: the next one not taken yet.
    pub local_index: Option<usize>,
    /// The bootstrap to join through instead of the one the configuration names: the
    /// in-process job of [`run_pes`], or a program's own (a `Bootstrap` over its MPI
    /// communicator, say).
    pub bootstrap: Option<Box<dyn Bootstrap>>,
}

impl std::fmt::Debug for InitOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InitOptions")
            .field("statics", &self.statics)
            .field("config", &self.config.is_some())
            .field("local_index", &self.local_index)
            .finish()
    }
}

/// [`init`] with options.
pub fn init_with(options: InitOptions) -> Result<Ctx> {
    let config = match options.config {
        Some(c) => c,
        None => Config::from_env()?,
    };
    let boot = match options.bootstrap {
        Some(b) => b,
        None => bootstrap::from_config(&config, options.local_index)?,
    };
    let my_pe = boot.rank();
    build(config, boot, options.statics).map_err(|e| e.on_pe(my_pe))
}

/// How many PEs this process hosts: `K` under `rshmemrun --pes-per-process K`, else 1.
pub fn local_pes() -> Result<usize> {
    Ok(Config::from_env()?.launcher_local_pes.unwrap_or(1).max(1))
}

/// Runs `f` on every PE this process hosts ([`local_pes`]), each a thread with its own
/// [`Ctx`], and returns their results in order. With one PE (any launcher, or none) `f`
/// runs on a thread of its own too. A PE whose thread panics ends the job through the
/// launcher, as a process PE would.
pub fn run_local_pes<R, F>(f: F) -> Result<Vec<R>>
where
    R: Send,
    F: Fn(Ctx) -> R + Sync,
{
    let config = Config::from_env()?;
    let k = config.launcher_local_pes.unwrap_or(1).max(1);
    // The launcher's core binding gives this process one core per PE: each PE's thread
    // takes its own before it initializes (else the PEs' threads float over the cores).
    let cores = config.thread_cpus.as_deref().map(bootstrap::binding::parse_cpu_list).filter(|c| c.len() == k);
    let options = |i| InitOptions { config: Some(config.clone()), local_index: Some(i), ..Default::default() };
    run_threads(k, &f, options, None, cores.as_deref())
}

/// Runs a job of `n` PEs that are threads of this process, each running `f` with its own
/// [`Ctx`] (PE `i` is thread `i`), and returns their results in PE order once all have
/// returned. The PEs meet through memory of the process (no launcher, no sockets); their
/// heaps are shared memory like those of process PEs, so everything works as it does
/// between processes, including GPU PEs (which then share the process's CUDA context:
/// see the README's "Several PEs in one process" for the rules that brings).
///
/// A PE that panics fails the job: every other PE's waits end with an error naming it,
/// and `run_pes` returns an error once every thread has ended. `global_exit` ends the
/// process (the whole job). Settings come from the environment, as for [`init`].
pub fn run_pes<R, F>(n: usize, f: F) -> Result<Vec<R>>
where
    R: Send,
    F: Fn(Ctx) -> R + Sync,
{
    run_pes_with(n, Config::from_env()?, f)
}

/// [`run_pes`] with the settings given.
pub fn run_pes_with<R, F>(n: usize, config: Config, f: F) -> Result<Vec<R>>
where
    R: Send,
    F: Fn(Ctx) -> R + Sync,
{
    if n == 0 {
        return Err(crate::Error::InvalidArgument { call: "run_pes", arg: "n", detail: "a job needs at least one PE".into(), pe: 0 });
    }
    let job = bootstrap::threads::ThreadJob::new(n);
    let options = |i: usize| InitOptions { config: Some(config.clone()), bootstrap: Some(Box::new(job.member(i))), ..Default::default() };
    run_threads(n, &f, options, Some(&job), None)
}

/// Starts `k` threads, thread `i` initializing with `options(i)` and running `f`; joins
/// them. With `job` (an in-process job), a thread that fails or panics fails the job, so
/// that the others' waits end instead of waiting for it. With `cores`, thread `i` first
/// binds itself to `cores[i]`.
fn run_threads<R, F>(
    k: usize,
    f: &F,
    options: impl Fn(usize) -> InitOptions,
    job: Option<&Arc<bootstrap::threads::ThreadJob>>,
    cores: Option<&[usize]>,
) -> Result<Vec<R>>
where
    R: Send,
    F: Fn(Ctx) -> R + Sync,
{
    let outcomes: Vec<std::thread::Result<Result<R>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..k)
            .map(|i| {
                let opts = options(i);
                let core = cores.and_then(|c| c.get(i).copied());
                std::thread::Builder::new().name(format!("rshmem-pe-{i}")).spawn_scoped(scope, move || {
                    if let Some(core) = core {
                        if let Err(e) = bootstrap::binding::bind_this_thread(core) {
                            tracing::warn!(thread = i, core, "could not bind the PE's thread to its core: {e}");
                        }
                    }
                    let ctx = init_with(opts);
                    if let (Err(e), Some(job)) = (&ctx, job) {
                        job.fail(format!("PE {i} could not start: {e}"));
                    }
                    ctx.map(f)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => {
                    let r = h.join();
                    if let (Err(_), Some(job)) = (&r, job) {
                        job.fail("a PE's thread panicked".into());
                    }
                    r
                }
                Err(e) => {
                    if let Some(job) = job {
                        job.fail(format!("a PE thread could not start: {e}"));
                    }
                    Ok(Err(crate::Error::os("start a PE thread", e)))
                }
            })
            .collect()
    });
    let mut results = Vec::with_capacity(k);
    for (i, o) in outcomes.into_iter().enumerate() {
        match o {
            Ok(Ok(r)) => results.push(r),
            Ok(Err(e)) => return Err(e),
            Err(panic) => {
                let what = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
                return Err(crate::Error::Bootstrap(format!("PE {i} panicked: {}", what.unwrap_or_default())));
            }
        }
    }
    Ok(results)
}

/// Builds the runtime of this PE over `boot`.
fn build(config: Config, mut boot: Box<dyn Bootstrap>, statics: Option<StaticSegment>) -> Result<Ctx> {
    let (my_pe, n_pes) = (boot.rank(), boot.size());
    let watcher = Watcher::new(boot.status_board(), my_pe, config.hang_timeout, boot.job_failure());
    crate::transport::notify::init_barriers();
    let sys = SysLayout::new(config.max_teams);
    let hosts = Hosts::exchange(&config, &mut *boot)?;
    let shared = hosts.shared_team(my_pe);
    let remote = hosts.remote(my_pe);
    let cuda = open_gpu(&config, my_pe, hosts.local_rank(my_pe))?;
    // PEs that share this PE's GPU from this process (thread PEs): their kernels run at
    // once, so a cooperative grid of one of them must leave room for the others'.
    let placement = gpu_placement(&mut *boot, &hosts, cuda.as_ref().map(gpu_identity).transpose()?)?;
    let parts = match cuda {
        None => {
            let heap = SymmetricHeap::create(
                &mut *boot,
                sys,
                config.symmetric_size,
                config.max_heap(),
                statics,
                UserMemory::Host,
                hosts.mapped.clone(),
            )?;
            let local: Arc<dyn Transport> = Arc::new(LocalTransport::new(my_pe, heap.bases(), heap.stride()));
            let (transports, _) = transport_table(&config, &watcher, &mut *boot, &heap, local, (&remote, &remote), false)?;
            Parts {
                heap,
                transports,
                #[cfg(feature = "cuda")]
                gpu: None,
                #[cfg(feature = "cuda")]
                proxy: None,
            }
        }
        #[cfg(feature = "cuda")]
        Some(cuda) => gpu_parts(&config, &watcher, &mut *boot, sys, statics, &hosts, cuda, placement)?,
        #[cfg(not(feature = "cuda"))]
        Some(never) => match (never, placement).0 {},
    };
    let teams = TeamTable::new(my_pe, n_pes, sys.max_teams, shared);
    let forced = config.coll_algo;
    let rt = Runtime::new(RuntimeParts {
        config,
        boot,
        heap: parts.heap,
        transports: parts.transports,
        host_of: hosts.domain,
        teams,
        forced,
        watcher,
        #[cfg(feature = "cuda")]
        gpu: parts.gpu,
        #[cfg(feature = "cuda")]
        proxy: parts.proxy,
    });
    if tracing::enabled!(tracing::Level::DEBUG) {
        let reach: Vec<&str> = (0..n_pes).map(|pe| rt.to(pe).name()).collect();
        tracing::debug!(pe = my_pe, n_pes, heap = ?rt.heap, transports = ?reach, "rshmem initialized");
    }
    rt.boot().barrier()?;
    Ok(Ctx::new(rt))
}

/// Collective: how many PEs of this job run in this process on this PE's GPU (`gpu`: its
/// ordinal and UUID, `None` for a CPU PE), this one included, and whether every PE this one
/// maps uses the same GPU (by UUID, so processes that number their GPUs differently agree).
fn gpu_placement(boot: &mut dyn Bootstrap, hosts: &Hosts, gpu: Option<(usize, [u8; 16])>) -> Result<(usize, bool)> {
    let me = boot.rank();
    let (ordinal, uuid) = gpu.map_or((u64::MAX, [0u8; 16]), |(o, u)| (o as u64, u));
    let mut mine = Vec::with_capacity(32);
    mine.extend_from_slice(&u64::from(std::process::id()).to_le_bytes());
    mine.extend_from_slice(&ordinal.to_le_bytes());
    mine.extend_from_slice(&uuid);
    let all = boot.allgather(&mine)?;
    let mapped = |pe: usize| hosts.mapped[pe] || pe == me;
    let sharers = all.iter().enumerate().filter(|&(pe, b)| mapped(pe) && b[..16] == mine[..16]).count();
    let one_device = gpu.is_some() && all.iter().enumerate().all(|(pe, b)| !mapped(pe) || b[16..] == mine[16..]);
    Ok((sharers, one_device))
}

/// The ordinal and UUID of this PE's GPU.
#[cfg(feature = "cuda")]
fn gpu_identity(c: &Arc<crate::gpu::cuda::Cuda>) -> Result<(usize, [u8; 16])> {
    Ok((c.ordinal, c.uuid()?))
}

/// Without the `cuda` feature there is no GPU.
#[cfg(not(feature = "cuda"))]
fn gpu_identity(c: &std::convert::Infallible) -> Result<(usize, [u8; 16])> {
    match *c {}
}

/// The heap, transports and GPU pieces of a PE.
struct Parts {
    heap: SymmetricHeap,
    transports: TransportTable,
    #[cfg(feature = "cuda")]
    gpu: Option<Arc<crate::gpu::Gpu>>,
    #[cfg(feature = "cuda")]
    proxy: Option<crate::transport::proxy::Proxy>,
}

/// The transport table: `mapped` (the local or device transport) for this host's PEs, a
/// UCX transport for the others (`remote[pe]`): UCX RMA on host heaps, or the staged
/// active-message protocol (always on GPU heaps, `staged`, or by `RSHMEM_UCX_PROTOCOL=am`).
/// The UCX transport connects to the PEs of `serve` (at least those of `remote`; the GPU
/// proxy's remote engine may want more) and is returned beside the table.
fn transport_table(
    config: &Config,
    watcher: &Watcher,
    boot: &mut dyn Bootstrap,
    heap: &SymmetricHeap,
    mapped: Arc<dyn Transport>,
    (remote, serve): (&[bool], &[bool]),
    staged: bool,
) -> Result<(TransportTable, Option<Arc<dyn Transport>>)> {
    let n_pes = remote.len();
    if !serve.iter().any(|&r| r) {
        return Ok((TransportTable::uniform(n_pes, mapped), None));
    }
    let base = heap.base(heap.my_pe());
    let waits = Waits {
        poll_window: config.ucx_poll,
        watcher: watcher.clone(),
        helper_cpus: crate::bootstrap::binding::configured_spare_cpus(config),
    };
    let ucx: Arc<dyn Transport> = if staged || config.ucx_protocol == UcxProtocol::Am {
        let reaches = (0..n_pes).map(|pe| heap.is_mapped(pe)).collect();
        let t = Arc::new(StagedTransport::new(boot, base, serve, waits, (mapped.clone(), reaches), heap.stride())?);
        heap.set_segment_hook(boot, t.clone())?;
        t
    } else {
        let t = Arc::new(UcxTransport::new(boot, base, serve, waits)?);
        heap.set_segment_hook(boot, t.clone())?;
        t
    };
    let table = TransportTable::new((0..n_pes).map(|pe| if remote[pe] { ucx.clone() } else { mapped.clone() }).collect());
    Ok((table, Some(ucx)))
}

/// This PE's GPU, when `RSHMEM_DEVICE` and the machine give it one.
#[cfg(feature = "cuda")]
fn open_gpu(config: &Config, my_pe: usize, local_rank: usize) -> Result<Option<Arc<crate::gpu::cuda::Cuda>>> {
    crate::gpu::open_for_pe(config.device, my_pe, local_rank)
}

/// Without the `cuda` feature a PE is a CPU PE; `RSHMEM_DEVICE=gpu` is an error.
#[cfg(not(feature = "cuda"))]
fn open_gpu(config: &Config, my_pe: usize, _local_rank: usize) -> Result<Option<std::convert::Infallible>> {
    if config.device == Device::Gpu {
        return Err(Error::Unsupported {
            call: "init",
            detail: format!("RSHMEM_DEVICE=gpu, but rshmem was built without its `cuda` feature (PE {my_pe})"),
        });
    }
    Ok(None)
}

/// A GPU PE: the user heap in device memory, the device transport for this host's PEs,
/// the staged UCX protocol and the host proxy for the others.
#[cfg(feature = "cuda")]
fn gpu_parts(
    config: &Config,
    watcher: &Watcher,
    boot: &mut dyn Bootstrap,
    sys: SysLayout,
    statics: Option<StaticSegment>,
    hosts: &Hosts,
    cuda: Arc<crate::gpu::cuda::Cuda>,
    (sharers, one_device): (usize, bool),
) -> Result<Parts> {
    use crate::gpu::{memory::DeviceHeap, state::DeviceSysLayout, Gpu, GpuSetup};
    use crate::transport::{device::DeviceTransport, proxy};
    let (my_pe, n_pes) = (boot.rank(), boot.size());
    let max_user = crate::heap::align_up(config.max_heap(), crate::heap::SEGMENT_ALIGN);
    let dev = Arc::new(DeviceHeap::new(cuda.clone(), n_pes, my_pe, max_user, hosts.mapped.clone())?);
    let user = UserMemory::Device(dev.clone());
    let heap = SymmetricHeap::create(boot, sys, config.symmetric_size, config.max_heap(), statics, user, hosts.mapped.clone())?;
    let layout = DeviceSysLayout::new(sys.max_teams, n_pes, config.gpu_coll_sets);
    let sys_base = heap.alloc(boot, "init", layout.size, 4096)? as u64;
    let setup = GpuSetup {
        my_pe,
        n_pes,
        heap_size: heap.capacity(),
        sys_base,
        max_teams: sys.max_teams,
        debug: config.device_checks(),
        wait_timeout_ns: config.device_wait_timeout.map_or(0, |d| d.as_nanos().min(u64::MAX as u128) as u64),
        coll_proto: config.gpu_coll_proto,
        coll_sets: config.gpu_coll_sets,
        sharers,
        one_device,
        overlap_launch: config.gpu_overlap_launch,
    };
    let g = Gpu::new(cuda, dev, setup, config.kernel_cache())?;
    g.set_team(0, Some((0, 1, n_pes)))?;
    g.set_team(1, Some(hosts.shared_team(my_pe)))?;
    g.preload()?;
    let host = LocalTransport::new(my_pe, heap.bases(), heap.stride());
    let mapped: Arc<dyn Transport> = Arc::new(DeviceTransport::new(host, heap.bases(), g.clone(), sys.size));
    // Peers of other hosts (and every peer under RSHMEM_TRANSPORT=ucx) go through the
    // staged UCX protocol, and the device API's operations on them through this PE's
    // host proxy. The proxy runs on every GPU PE: it also carries out the device API's
    // copy-engine and remote-engine requests (rshmem_device_engines.cuh), the latter over
    // the same UCX transport, which RSHMEM_REMOTE_ENGINE=ucx connects to every peer.
    let remote = hosts.remote(my_pe);
    let serve: Vec<bool> = match config.remote_engine {
        RemoteEngine::Auto => remote.clone(),
        RemoteEngine::Ucx => (0..n_pes).map(|pe| pe != my_pe).collect(),
    };
    let area = heap.alloc(boot, "init", proxy::device_area_size(n_pes), 256)? as u64;
    let (transports, ucx) = transport_table(config, watcher, boot, &heap, mapped, (&remote, &serve), true)?;
    let engine = ucx.map(|t| (t, serve));
    let proxy = proxy::Proxy::start(g.clone(), transports.clone(), &remote, engine, area, sys.size, config)?;
    Ok(Parts { heap, transports, gpu: Some(g), proxy: Some(proxy) })
}
