//! The GPU driver layer of GPU PEs: the CUDA driver ([`cuda`]), run-time compilation
//! ([`nvrtc`]), the user heap in device memory ([`memory`]), the device state every module
//! receives ([`state`]) and [`Gpu`], which compiles, loads and launches kernels.
//!
//! It sits between the heap (whose device memory it provides) and the transports (the
//! device transport and the proxy use it); the GPU APIs built on it live above the ops:
//! the stream-ordered operations in `ops::on_stream`, the GPU collectives in `coll::gpu`.
//!
//! Detection goes through cudarc with dynamic loading: nothing CUDA is needed to build,
//! and a machine without a driver or a GPU runs CPU PEs (with a log line). A PE uses the
//! GPU of the context current at init (a program's `cudaSetDevice`), else local GPU
//! `local rank mod count`; several PEs may share a GPU.
//!
//! Kernels are CUDA C++ that includes `rshmem_device.cuh`; [`Gpu::compile`] compiles them
//! with NVRTC (cached per architecture), loads them and writes the device state
//! (`rshmem_state`: PE numbers, heap and peer bases, teams) into each module. The state is
//! rewritten into every live module when the heap grows. Programs built with nvcc attach
//! their own copies of the state ([`Gpu::attach_state`], [`Gpu::attach_module`]), which
//! receive every rewrite too.

pub mod cuda;
pub mod memory;
pub mod nvrtc;
pub mod state;

use crate::config::{Device, GpuProto};
use crate::error::{Error, Result};
use cuda::{Cuda, DevPtr, RawModule, Stream};
use memory::DeviceHeap;
use state::{DeviceState, DeviceSysLayout, DeviceTeam};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Source of the runtime's own kernels.
const BUILTIN_SOURCE: &str = include_str!("../../device/rshmem_builtin.cu");
/// Source of the on-stream collective kernels.
const COLL_BUILTIN_SOURCE: &str = include_str!("../../device/rshmem_coll_builtin.cu");

/// Threads per block of the on-stream collective kernels.
pub const COLL_THREADS: usize = 512;

/// Opens this PE's GPU if the configuration (`RSHMEM_DEVICE`) asks for one and the
/// machine has one: the device of the context current on the calling thread when the
/// program chose one (`cudaSetDevice` before rshmem's init), else local GPU
/// `local_rank mod count` (`local_rank`: this PE's number among the PEs of its host).
pub fn open_for_pe(choice: Device, pe: usize, local_rank: usize) -> Result<Option<Arc<Cuda>>> {
    if choice == Device::Cpu {
        return Ok(None);
    }
    let count = cuda::device_count();
    if count == 0 {
        let why = if cuda::driver_present() { "the CUDA driver reports no GPU" } else { "no CUDA driver (libcuda) was found" };
        if choice == Device::Gpu {
            return Err(Error::Gpu { call: "init", detail: format!("RSHMEM_DEVICE=gpu but {why}"), pe });
        }
        if pe == 0 {
            tracing::info!("{why}: running CPU PEs");
        }
        return Ok(None);
    }
    let ordinal = match cuda::current_device() {
        Some((ordinal, primary)) => {
            if !primary {
                tracing::warn!(pe, ordinal, "the current CUDA context is not the device's primary context: rshmem uses the primary one");
            }
            ordinal
        }
        None => local_rank % count,
    };
    let c = Cuda::open(ordinal, pe)?;
    tracing::info!(pe, ordinal, name = %c.name().unwrap_or_default(), "GPU PE");
    Ok(Some(Arc::new(c)))
}

/// A kernel argument (passed by value).
#[derive(Debug, Clone, Copy)]
pub enum KernelArg {
    /// `int`.
    I32(i32),
    /// `unsigned int`.
    U32(u32),
    /// `long long`.
    I64(i64),
    /// `unsigned long long` or any pointer (device address).
    U64(u64),
    /// `float`.
    F32(f32),
    /// `double`.
    F64(f64),
}

impl KernelArg {
    fn bytes(self) -> [u8; 8] {
        let mut b = [0u8; 8];
        match self {
            KernelArg::I32(v) => b[..4].copy_from_slice(&v.to_le_bytes()),
            KernelArg::U32(v) => b[..4].copy_from_slice(&v.to_le_bytes()),
            KernelArg::I64(v) => b.copy_from_slice(&v.to_le_bytes()),
            KernelArg::U64(v) => b.copy_from_slice(&v.to_le_bytes()),
            KernelArg::F32(v) => b[..4].copy_from_slice(&v.to_le_bytes()),
            KernelArg::F64(v) => b.copy_from_slice(&v.to_le_bytes()),
        }
        b
    }
}

/// Grid, block and shared memory of a launch.
#[derive(Debug, Clone, Copy)]
pub struct LaunchConfig {
    /// Blocks.
    pub grid: (u32, u32, u32),
    /// Threads per block.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory bytes.
    pub shared_mem: u32,
    /// Cooperative launch (all blocks co-resident; needed for grid-wide synchronization).
    pub cooperative: bool,
}

impl LaunchConfig {
    /// `blocks` x `threads`, no shared memory, not cooperative.
    pub fn new(blocks: u32, threads: u32) -> LaunchConfig {
        LaunchConfig { grid: (blocks, 1, 1), block: (threads, 1, 1), shared_mem: 0, cooperative: false }
    }
}

struct ModuleInner {
    raw: RawModule,
    state_addr: Option<DevPtr>,
    /// Kernel handles looked up so far (name, `CUfunction` as an address): a launch then
    /// costs one driver call, not two (thread PEs' launches contend for the context).
    functions: Mutex<Vec<(String, usize)>>,
}

impl ModuleInner {
    /// The handle of kernel `name`, looked up once.
    fn function(&self, cuda: &Cuda, name: &str) -> Result<cudarc::driver::sys::CUfunction> {
        let mut known = self.functions.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, f)) = known.iter().find(|(n, _)| n == name) {
            return Ok(*f as cudarc::driver::sys::CUfunction);
        }
        let f = cuda.function(&self.raw, name)?;
        known.push((name.to_string(), f as usize));
        Ok(f)
    }
}

/// A loaded module of kernels.
pub struct Module {
    inner: Arc<ModuleInner>,
    gpu: Arc<Gpu>,
    name: String,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Module({})", self.name)
    }
}

impl Module {
    /// Launches kernel `kernel` on `stream` (the PE's default stream when None).
    ///
    /// # Safety
    /// `args` must match the kernel's parameters in number and kind (each is passed in an
    /// 8-byte slot), and the kernel must only touch memory it may.
    pub unsafe fn launch(&self, kernel: &str, cfg: LaunchConfig, stream: Option<&Stream>, args: &[KernelArg]) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { self.launch_as(kernel, cfg, stream, args, false) }
    }

    /// [`Module::launch`]; `overlapped`: through [`cuda::Cuda::launch_overlapped`] (not for
    /// cooperative launches; the kernel starts with `rshmemi_stream_entry()`).
    ///
    /// # Safety
    /// As for [`Module::launch`].
    unsafe fn launch_as(
        &self,
        kernel: &str,
        cfg: LaunchConfig,
        stream: Option<&Stream>,
        args: &[KernelArg],
        overlapped: bool,
    ) -> Result<()> {
        let g = &self.gpu;
        g.cuda.bind()?;
        let f = self.inner.function(&g.cuda, kernel)?;
        let mut storage: Vec<[u8; 8]> = args.iter().map(|a| a.bytes()).collect();
        let mut params: Vec<*mut std::ffi::c_void> = storage.iter_mut().map(|b| b.as_mut_ptr() as *mut std::ffi::c_void).collect();
        let stream = stream.unwrap_or(&g.stream);
        // SAFETY (both): one 8-byte slot per argument, alive until the launch call returns
        // (the driver copies parameters at launch); the caller vouches for the kernel.
        if overlapped && !cfg.cooperative {
            return unsafe { g.cuda.launch_overlapped(f, cfg.grid, cfg.block, cfg.shared_mem, stream, &mut params) };
        }
        unsafe { g.cuda.launch(f, cfg.grid, cfg.block, cfg.shared_mem, stream, &mut params, cfg.cooperative) }
    }

    /// How many blocks of `threads` threads of kernel `kernel` this PE may launch so that
    /// all run at once beside the other PEs of this process on the GPU (its share of
    /// what fits on the multiprocessors; at least 1): a grid whose blocks wait for each
    /// other must not be larger.
    pub fn resident_blocks(&self, kernel: &str, threads: u32) -> Result<usize> {
        let g = &self.gpu;
        g.cuda.bind()?;
        let f = self.inner.function(&g.cuda, kernel)?;
        // SAFETY: f was just resolved in this module, loaded in this PE's context.
        Ok(unsafe { g.max_collective_grid(f, threads, 0)? }.max(1))
    }

    /// The module's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// One PE's GPU runtime.
pub struct Gpu {
    pub(crate) cuda: Arc<Cuda>,
    pub(crate) heap: Arc<DeviceHeap>,
    state: Mutex<DeviceState>,
    modules: Mutex<Vec<Weak<ModuleInner>>>,
    /// Copies of `rshmem_state` in the program's own code (nvcc-built kernels, modules it
    /// loaded): written like the modules' at every change.
    attached: Mutex<Vec<DevPtr>>,
    builtins: OnceLock<std::result::Result<Arc<ModuleInner>, String>>,
    coll_builtins: OnceLock<std::result::Result<Arc<ModuleInner>, String>>,
    layout: DeviceSysLayout,
    arch: String,
    stream: Stream,
    /// Host atomics run here, beside (not behind) kernels on the PE's streams: a kernel
    /// waiting for a word that a peer's atomic (carried out by this PE's host threads)
    /// will change must not block that atomic.
    amo_stream: Stream,
    amo_lock: Mutex<()>,
    /// Host memory kernels may write results into, read after them without a copy
    /// ([`Gpu::with_results`]). Allocated at init: allocating page-locked memory later
    /// waits for every stream of the context, those of the other PEs of this process too.
    results: Mutex<cuda::PinnedHost>,
    me: Weak<Gpu>,
    /// Host numbering of on-stream collectives per team slot (see gpu/coll.rs).
    pub(crate) coll_host_seq: Mutex<Vec<u64>>,
    /// Protocol forced for on-stream collectives (`GpuProto::code`; 0: the decision tree).
    pub(crate) coll_proto: std::sync::atomic::AtomicI32,
    /// Where compiled kernels are cached.
    cache: std::path::PathBuf,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("ordinal", &self.cuda.ordinal).field("arch", &self.arch).finish()
    }
}

/// 32-bit words of [`Gpu::with_results`].
pub const RESULT_WORDS: usize = 4096;

/// What the runtime tells the GPU layer at init.
#[derive(Debug, Clone, Copy)]
pub struct GpuSetup {
    /// This PE.
    pub my_pe: usize,
    /// PEs.
    pub n_pes: usize,
    /// Bytes of user heap mapped now.
    pub heap_size: usize,
    /// Device runtime area (an allocation in this PE's heap).
    pub sys_base: DevPtr,
    /// Team slots.
    pub max_teams: usize,
    /// Check PE range and heap bounds in device calls.
    pub debug: bool,
    /// Device waits trap after this long (0: never).
    pub wait_timeout_ns: u64,
    /// The GPU collectives' forced protocol (`RSHMEM_GPU_COLL_PROTO`).
    pub coll_proto: GpuProto,
    /// Synchronization sets per team (`RSHMEM_GPU_COLL_SETS`).
    pub coll_sets: usize,
    /// PEs of this process on this GPU, this one included (thread PEs share it).
    pub sharers: usize,
    /// Every PE this one maps uses this PE's GPU (the same device, by UUID).
    pub one_device: bool,
    /// Launch on-stream kernels overlapped with their stream's previous kernel
    /// (`RSHMEM_GPU_OVERLAP_LAUNCH`; see [`cuda::Cuda::launch_overlapped`]).
    pub overlap_launch: bool,
}

impl Gpu {
    /// Builds the GPU runtime over a mapped device heap.
    pub fn new(cuda: Arc<Cuda>, heap: Arc<DeviceHeap>, s: GpuSetup, cache: std::path::PathBuf) -> Result<Arc<Gpu>> {
        cuda.bind()?;
        cuda.set_sharers(s.sharers);
        cuda.set_overlap_launch(s.overlap_launch)?;
        let (maj, min) = cuda.compute_capability()?;
        let layout = DeviceSysLayout::new(s.max_teams, s.n_pes, s.coll_sets);
        let state = DeviceState {
            my_pe: s.my_pe as i32,
            n_pes: s.n_pes as i32,
            heap_base: heap.base(s.my_pe),
            heap_size: s.heap_size as u64,
            peers_base: heap.base(0),
            stride: heap.stride() as u64,
            sys_base: s.sys_base,
            sys_size: layout.size as u64,
            teams: s.sys_base + layout.teams as u64,
            max_teams: s.max_teams as i32,
            debug: s.debug as i32,
            wait_timeout_ns: s.wait_timeout_ns,
            epochs: s.sys_base + layout.epochs as u64,
            counters: s.sys_base + layout.counters as u64,
            coll_seq: s.sys_base + layout.coll_seq as u64,
            coll_done: s.sys_base + layout.coll_done as u64,
            coll_arrive: s.sys_base + layout.coll_arrive as u64,
            coll_gridbar: s.sys_base + layout.coll_gridbar as u64,
            coll_data: s.sys_base + layout.coll_data as u64,
            coll_slot_bytes: state::GPU_COLL_SLOT_BYTES as u64,
            coll_ll_max: state::LL_MAX as u64,
            coll_ll128_max: state::LL128_MAX as u64,
            coll_teams: layout.coll_teams as i32,
            coll_sets: layout.coll_sets as i32,
            coll_proto: s.coll_proto.code(),
            one_device: s.one_device as i32,
            ..DeviceState::default()
        };
        // Collective words start at zero (peers write them only after init's barrier).
        let (off, _) = layout.coll_area();
        cuda.zero(s.sys_base + off as u64, layout.size - off)?;
        let stream = cuda.stream()?;
        let amo_stream = cuda.stream()?;
        let results = Mutex::new(cuda.pinned_host(RESULT_WORDS * 4)?);
        Ok(Arc::new_cyclic(|me| Gpu {
            cuda,
            heap,
            state: Mutex::new(state),
            modules: Mutex::new(Vec::new()),
            attached: Mutex::new(Vec::new()),
            builtins: OnceLock::new(),
            coll_builtins: OnceLock::new(),
            layout,
            arch: format!("sm_{maj}{min}"),
            stream,
            amo_stream,
            amo_lock: Mutex::new(()),
            results,
            me: me.clone(),
            coll_host_seq: Mutex::new(vec![0; layout.coll_teams]),
            coll_proto: std::sync::atomic::AtomicI32::new(0),
            cache,
        }))
    }

    /// The GPU architecture kernels are built for (`sm_90` on an H100/H200).
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// CUDA device ordinal of this PE.
    pub fn ordinal(&self) -> usize {
        self.cuda.ordinal
    }

    /// Number of multiprocessors.
    pub fn sm_count(&self) -> Result<usize> {
        self.cuda.sm_count()
    }

    /// PEs of this process that run on this GPU, this one included: thread PEs share the
    /// GPU's context and run their kernels at the same time.
    pub fn sharers(&self) -> usize {
        self.cuda.sharers()
    }

    /// Whether every PE this one maps uses this PE's GPU (the device state's `one_device`).
    pub fn one_device(&self) -> bool {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner).one_device != 0
    }

    /// The most blocks a grid-scope (cooperative) launch of this PE should have: the
    /// multiprocessors divided among the PEs of this process on this GPU. Their grids run
    /// at the same time, and a grid barrier needs every block of its grid resident: with
    /// one block per multiprocessor and PE, all of them fit together. The on-stream
    /// collectives keep to it; kernels of the program that call grid-scope functions
    /// should too.
    pub fn grid_blocks(&self) -> Result<usize> {
        Ok((self.sm_count()? / self.sharers()).max(1))
    }

    /// The device's name.
    pub fn device_name(&self) -> String {
        self.cuda.name().unwrap_or_default()
    }

    /// This PE's default stream.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// A new stream.
    pub fn new_stream(&self) -> Result<Stream> {
        self.cuda.bind()?;
        self.cuda.stream()
    }

    /// Runs `f` with this PE's result memory: [`RESULT_WORDS`] 32-bit words of host memory
    /// that kernels reach at [`cuda::PinnedHost::device`], held for the call (one user at a
    /// time).
    pub fn with_results<R>(&self, f: impl FnOnce(&cuda::PinnedHost) -> R) -> R {
        f(&self.results.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// Waits for all of this PE's GPU work (see [`Cuda::synchronize`]: with thread PEs
    /// on the device, the streams of this PE only); a device-side error (a failed check,
    /// a timed-out wait) surfaces here.
    pub fn synchronize(&self) -> Result<()> {
        self.cuda.bind()?;
        self.cuda.synchronize()
    }

    /// An event timer.
    pub fn timer(&self) -> Result<cuda::Timer> {
        self.cuda.bind()?;
        cuda::Timer::new(self.cuda.pe())
    }

    /// Enqueues a copy-engine copy of `n` bytes between device addresses on `stream`.
    pub fn cuda_copy_async(&self, dst: DevPtr, src: DevPtr, n: usize, stream: &Stream) -> Result<()> {
        self.cuda.bind()?;
        self.cuda.copy_async(dst, src, n, stream)
    }

    /// Whether `ptr` is device memory of this PE's GPU (as the driver knows it).
    pub fn is_device_pointer(&self, ptr: DevPtr) -> bool {
        self.cuda.bind().is_ok() && self.cuda.is_device_pointer(ptr)
    }

    /// Copies device memory at `src` (any allocation of this PE's context) into `dst`,
    /// complete on return. Ordered as `cudaMemcpy` is: after the work the program queued
    /// on the legacy default stream (a kernel or an asynchronous `cudaMemset` that fills
    /// `src`).
    pub fn read_device(&self, dst: &mut [u8], src: DevPtr) -> Result<()> {
        self.cuda.bind()?;
        self.cuda.dtoh_in_order(dst, src)
    }

    /// Copies `src` into device memory at `dst`, complete on return, ordered as
    /// [`Gpu::read_device`] is (a `cudaMemset` of `dst` queued before lands before it).
    pub fn write_device(&self, dst: DevPtr, src: &[u8]) -> Result<()> {
        self.cuda.bind()?;
        self.cuda.htod_in_order(dst, src)
    }

    /// Copies `n` bytes of device memory (this PE's, or a mapped peer's) from `src` to
    /// `dst` with the copy engine, complete on return, ordered as [`Gpu::read_device`] is.
    pub fn copy_device(&self, dst: DevPtr, src: DevPtr, n: usize) -> Result<()> {
        self.cuda.bind()?;
        self.cuda.copy_in_order(dst, src, n)
    }

    /// The device address of `pe`'s copy of a symmetric address of this PE (for kernels).
    pub fn peer_address(&self, addr: DevPtr, pe: usize) -> DevPtr {
        self.heap.base(pe) + (addr - self.heap.base(self.cuda.pe()))
    }

    /// Compiles CUDA C++ `source` (which may `#include "rshmem_device.cuh"`) with NVRTC,
    /// loads it and writes the device state into it. `options` go to NVRTC.
    ///
    /// A module load waits for the kernels running on the device's context. PEs that
    /// are threads of one process share that context, so with them ([`Gpu::sharers`] > 1)
    /// every PE should load its modules before any PE launches a kernel that waits for
    /// peers (load, then `barrier_all`), as the test programs do: otherwise a kernel
    /// waiting for a PE that is still loading waits until the device wait timeout.
    pub fn compile(&self, name: &str, source: &str, options: &[String]) -> Result<Module> {
        let inner = self.load(name, source, options)?;
        Ok(Module { inner, gpu: self.me.upgrade().expect("gpu alive"), name: name.to_string() })
    }

    fn load(&self, name: &str, source: &str, options: &[String]) -> Result<Arc<ModuleInner>> {
        self.cuda.bind()?;
        let bin = nvrtc::compile(source, name, &self.arch, options, &self.cache, self.cuda.pe())?;
        let raw = self.cuda.load_module(&bin)?;
        let state_addr = match self.cuda.global(&raw, "rshmem_state")? {
            None => None,
            Some((addr, size)) => {
                state_size_matches("load module", &format!("`{name}`"), size, self.cuda.pe())?;
                Some(addr)
            }
        };
        let inner = Arc::new(ModuleInner { raw, state_addr, functions: Mutex::new(Vec::new()) });
        if let Some(addr) = state_addr {
            let st = *self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            self.cuda.htod(addr, bytemuck::bytes_of(&st))?;
        }
        let mut mods = self.modules.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        mods.retain(|w| w.strong_count() > 0);
        mods.push(Arc::downgrade(&inner));
        Ok(inner)
    }

    fn write_state_everywhere(&self) -> Result<()> {
        self.cuda.bind()?;
        let st = *self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for m in self.modules.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter().filter_map(|w| w.upgrade()) {
            if let Some(addr) = m.state_addr {
                self.cuda.htod(addr, bytemuck::bytes_of(&st))?;
            }
        }
        for &addr in self.attached.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter() {
            self.cuda.htod(addr, bytemuck::bytes_of(&st))?;
        }
        Ok(())
    }

    /// Writes the device state into a copy of `rshmem_state` of the program's own code
    /// (a symbol of nvcc-built kernels, found with `cudaGetSymbolAddress`) now and at every
    /// later change of the state. `size` is the symbol's size, checked against the
    /// runtime's. Attaching an address twice keeps one entry.
    pub fn attach_state(&self, addr: DevPtr, size: usize) -> Result<()> {
        state_size_matches("attach state", "the program's rshmem_state", size, self.cuda.pe())?;
        self.cuda.bind()?;
        let st = *self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut attached = self.attached.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        self.cuda.htod(addr, bytemuck::bytes_of(&st))?;
        if !attached.contains(&addr) {
            attached.push(addr);
        }
        Ok(())
    }

    /// Stops writing the state at `addr`; whether it was attached.
    pub fn detach_state(&self, addr: DevPtr) -> bool {
        let mut attached = self.attached.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let before = attached.len();
        attached.retain(|&a| a != addr);
        attached.len() != before
    }

    /// Attaches the `rshmem_state` of a module the program loaded itself (`cuModuleLoad`
    /// of a cubin built from the device header): an error if the module has none.
    ///
    /// # Safety
    /// `module` must be a live module of this PE's device's primary context.
    pub unsafe fn attach_module(&self, module: cuda::Module) -> Result<DevPtr> {
        self.cuda.bind()?;
        let (addr, size) = self.module_state(module)?;
        self.attach_state(addr, size)?;
        Ok(addr)
    }

    /// The `rshmem_state` of a module the program loaded, found by name (as the header
    /// defines it for NVRTC and `-rdc` builds, or as a per-file static of other nvcc
    /// builds).
    ///
    /// # Safety
    /// As for [`Gpu::attach_module`].
    pub unsafe fn module_state(&self, module: cuda::Module) -> Result<(DevPtr, usize)> {
        for name in ["rshmem_state", "_ZL12rshmem_state"] {
            // SAFETY: the caller vouches for the module.
            if let Some(found) = unsafe { self.cuda.global_of_raw(module, name)? } {
                return Ok(found);
            }
        }
        Err(Error::Gpu {
            call: "attach module",
            detail: "the module has no rshmem_state: it was not built from rshmem_device.cuh".into(),
            pe: self.cuda.pe(),
        })
    }

    /// The largest grid of kernel `f` (`threads` per block, `shared` bytes of dynamic
    /// shared memory) whose blocks are all resident at once beside the grids of the other
    /// PEs of this process on this GPU: what a collective (cooperative) launch allows.
    ///
    /// # Safety
    /// `f` must be a kernel of this PE's context.
    pub unsafe fn max_collective_grid(&self, f: cuda::Function, threads: u32, shared: usize) -> Result<usize> {
        self.cuda.bind()?;
        // SAFETY: the caller's contract: f is a kernel of this context.
        let per_sm = unsafe { self.cuda.blocks_per_sm(f, threads, shared)? };
        Ok(per_sm * self.sm_count()? / self.sharers())
    }

    /// Launches the program's kernel `f` as a cooperative grid on `stream`, after checking
    /// that the grid fits ([`Gpu::max_collective_grid`]).
    ///
    /// # Safety
    /// `f` must be a kernel of this PE's context and `args` its parameters, as
    /// `cuLaunchCooperativeKernel` takes them (one pointer per parameter).
    pub unsafe fn launch_collective(
        &self,
        f: cuda::Function,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        args: *mut *mut std::ffi::c_void,
        shared: usize,
        stream: &Stream,
    ) -> Result<()> {
        let threads = block.0.saturating_mul(block.1).saturating_mul(block.2);
        let blocks = grid.0 as usize * grid.1 as usize * grid.2 as usize;
        // SAFETY: this function's contract: f is a kernel of this context.
        let max = unsafe { self.max_collective_grid(f, threads, shared)? };
        if blocks == 0 || threads == 0 || blocks > max {
            return Err(Error::InvalidArgument {
                call: "collective_launch",
                arg: "grid",
                detail: format!(
                    "{blocks} blocks of {threads} threads: a collective launch takes 1..={max} blocks of this kernel on this GPU (see collective_launch_query_gridsize)"
                ),
                pe: self.cuda.pe(),
            });
        }
        let shared = u32::try_from(shared).map_err(|_| Error::InvalidArgument {
            call: "collective_launch",
            arg: "sharedMem",
            detail: format!("{shared} bytes of shared memory"),
            pe: self.cuda.pe(),
        })?;
        // SAFETY: the caller vouches for f and args (the parameter array cuLaunch reads).
        unsafe { self.cuda.launch_raw(f, grid, block, shared, stream, args, true) }
    }

    /// Changes the device state (of every loaded module and every later one).
    pub(crate) fn update_state(&self, f: impl FnOnce(&mut DeviceState)) -> Result<()> {
        f(&mut self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        self.write_state_everywhere()
    }

    /// Tells every loaded module the heap's new mapped size (after growth).
    pub(crate) fn set_heap_size(&self, bytes: usize) -> Result<()> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner).heap_size = bytes as u64;
        self.write_state_everywhere()
    }

    /// Publishes (or clears) team slot `slot` for device-side team calls. Clearing also
    /// zeroes the slot's barrier epoch and counters so the next team starts fresh.
    pub(crate) fn set_team(&self, slot: usize, team: Option<(usize, usize, usize)>) -> Result<()> {
        self.cuda.bind()?;
        let st = *self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let entry = match team {
            Some((start, stride, size)) => DeviceTeam { start: start as i32, stride: stride as i32, size: size as i32, valid: 1 },
            None => DeviceTeam::default(),
        };
        self.cuda.htod(st.teams + (slot * std::mem::size_of::<DeviceTeam>()) as u64, bytemuck::bytes_of(&entry))?;
        if team.is_none() {
            self.cuda.zero(st.epochs + (slot * 8) as u64, 8)?;
            self.cuda.zero(st.counters + (slot * state::MAX_ROUNDS * 8) as u64, state::MAX_ROUNDS * 8)?;
            for (off, len) in self.layout.coll_ranges(slot) {
                self.cuda.zero(st.sys_base + off as u64, len)?;
            }
            if let Some(seq) = self.coll_host_seq.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_mut(slot) {
                *seq = 0;
            }
        }
        Ok(())
    }

    /// Loads the runtime's own kernels now, before any user kernel runs: the host-side
    /// atomics that peers' proxies ask for must never wait for a module load.
    ///
    /// With thread PEs on the device the on-stream collectives' kernels load now too: a
    /// module load waits for the kernels running on the context, which the other PEs of
    /// the process share, and one of those may be a collective waiting for this PE.
    pub(crate) fn preload(&self) -> Result<()> {
        self.builtins()?;
        if self.sharers() > 1 {
            self.coll_builtins()?;
        }
        Ok(())
    }

    /// The runtime's own kernels, compiled on first use.
    fn builtins(&self) -> Result<Arc<ModuleInner>> {
        self.builtins
            .get_or_init(|| self.load("rshmem_builtin", BUILTIN_SOURCE, &[]).map_err(|e| e.to_string()))
            .clone()
            .map_err(|detail| Error::Gpu { call: "rshmem builtin kernels", detail, pe: self.cuda.pe() })
    }

    /// The runtime's on-stream collective kernels, compiled on first use.
    fn coll_builtins(&self) -> Result<Arc<ModuleInner>> {
        self.coll_builtins
            .get_or_init(|| self.load("rshmem_coll_builtin", COLL_BUILTIN_SOURCE, &[]).map_err(|e| e.to_string()))
            .clone()
            .map_err(|detail| Error::Gpu { call: "rshmem collective kernels", detail, pe: self.cuda.pe() })
    }

    /// Launches an on-stream collective kernel of the runtime as a grid (cooperative when
    /// it synchronizes the grid) of
    /// `blocks` blocks of [`COLL_THREADS`] threads (the grid works on one collective).
    pub(crate) fn launch_coll_builtin(
        &self,
        kernel: &str,
        stream: &Stream,
        blocks: usize,
        cooperative: bool,
        args: &[KernelArg],
    ) -> Result<()> {
        let inner = self.coll_builtins()?;
        let m = Module { inner, gpu: self.me.upgrade().expect("gpu alive"), name: "rshmem_coll_builtin".into() };
        let cfg = LaunchConfig { grid: (blocks.max(1) as u32, 1, 1), block: (COLL_THREADS as u32, 1, 1), shared_mem: 0, cooperative };
        let overlapped = !cooperative && self.may_overlap(blocks.max(1))?;
        // SAFETY: callers in gpu/coll.rs pass the argument kinds of the kernels in
        // device/rshmem_coll_builtin.cu, with addresses the heap checked; each kernel there
        // starts with rshmemi_stream_entry.
        unsafe { m.launch_as(kernel, cfg, Some(stream), args, overlapped) }
    }

    /// Whether an on-stream kernel of `blocks` blocks may be launched overlapped with its
    /// stream's previous kernel ([`cuda::Cuda::launch_overlapped`]). Such a kernel holds its
    /// blocks while it waits for the previous one, so that is allowed only while every
    /// thread PE on this GPU can have two such kernels resident beside each other at one
    /// block per multiprocessor: a PE's waiting kernel then never keeps another PE's
    /// running one (which the first may wait for) off the GPU.
    fn may_overlap(&self, blocks: usize) -> Result<bool> {
        Ok(self.cuda.overlap_launch() && 2 * self.sharers() * blocks <= self.sm_count()?)
    }

    pub(crate) fn launch_builtin(&self, kernel: &str, stream: Option<&Stream>, args: &[KernelArg]) -> Result<()> {
        self.launch_builtin_grid(kernel, LaunchConfig::new(1, 1), stream, args)
    }

    /// [`Gpu::launch_builtin`] with `cfg`'s grid (not cooperative).
    fn launch_builtin_grid(&self, kernel: &str, cfg: LaunchConfig, stream: Option<&Stream>, args: &[KernelArg]) -> Result<()> {
        let inner = self.builtins()?;
        let m = Module { inner, gpu: self.me.upgrade().expect("gpu alive"), name: "rshmem_builtin".into() };
        let overlapped = stream.is_some() && self.may_overlap(cfg.grid.0 as usize)?;
        // SAFETY: the callers in this crate pass the argument kinds of the builtin kernels'
        // signatures (device/rshmem_builtin.cu), with device addresses the heap checked;
        // each kernel there starts with rshmemi_stream_entry.
        unsafe { m.launch_as(kernel, cfg, stream, args, overlapped) }
    }

    /// Copies `n` bytes of device memory from `src` to `dst` on `stream`: up to 16 MiB with
    /// a kernel of the runtime (a block of 512 threads per 32 KiB, at most this PE's share
    /// of the SMs), whose launch costs the host less than a driver copy; above, with the
    /// driver's copy, which moved 1343-1503 GB/s at 64 MiB-1 GiB on an H100 where SM copy
    /// loops moved 1185-1418 (`experiments/copy_unroll.cu`). The ranges must not overlap.
    pub(crate) fn stream_copy(&self, dst: DevPtr, src: DevPtr, n: usize, stream: &Stream) -> Result<()> {
        if n > 16 << 20 {
            return self.cuda.copy_async(dst, src, n, stream);
        }
        let blocks = n.div_ceil(32 << 10).clamp(1, self.grid_blocks()?);
        let cfg = LaunchConfig::new(blocks as u32, 512);
        self.launch_builtin_grid(
            "rshmemi_stream_copy",
            cfg,
            Some(stream),
            &[KernelArg::U64(dst), KernelArg::U64(src), KernelArg::U64(n as u64)],
        )
    }

    /// A host-initiated atomic on device memory: a one-thread kernel, then a copy back.
    pub(crate) fn host_amo(&self, addr: DevPtr, width: usize, op: i32, operand: u64, compare: u64) -> Result<u64> {
        if width != 4 && width != 8 {
            // Refused here: the kernel would trap, and a trap ends the GPU context.
            return Err(Error::InvalidArgument {
                call: "atomic on device memory",
                arg: "width",
                detail: format!("{width} bytes at {addr:#x}: the GPU's atomics are 4 or 8 bytes wide"),
                pe: self.cuda.pe(),
            });
        }
        let _g = self.amo_lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let out = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner).sys_base + self.layout.scratch as u64;
        self.launch_builtin(
            "rshmemi_host_amo",
            Some(&self.amo_stream),
            &[
                KernelArg::U64(addr),
                KernelArg::I32(width as i32),
                KernelArg::I32(op),
                KernelArg::U64(operand),
                KernelArg::U64(compare),
                KernelArg::U64(out),
            ],
        )?;
        self.amo_stream.synchronize()?;
        let mut b = [0u8; 8];
        self.cuda.dtoh(&mut b, out)?;
        Ok(u64::from_le_bytes(b))
    }
}

/// An error unless a `rshmem_state` of `size` bytes (in `what`) has the runtime's layout.
fn state_size_matches(call: &'static str, what: &str, size: usize, pe: usize) -> Result<()> {
    let want = std::mem::size_of::<DeviceState>();
    if size == want {
        return Ok(());
    }
    Err(Error::Gpu {
        call,
        detail: format!("rshmem_state is {size} bytes in {what} but {want} in the runtime: header and library differ"),
        pe,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn collective_kernels_are_bounded_to_the_threads_they_launch_with() {
        let define = format!("#define RSHMEMI_COLL_THREADS {}\n", super::COLL_THREADS);
        assert!(super::COLL_BUILTIN_SOURCE.contains(&define), "rshmem_coll_builtin.cu must say: {define}");
        assert_eq!(super::COLL_BUILTIN_SOURCE.matches("__launch_bounds__(RSHMEMI_COLL_THREADS)").count(), 2);
    }
}
