//! The process-wide runtime behind the C ABI: OpenSHMEM keeps its state in globals, so
//! this module holds the [`rshmem::Ctx`] of the process, its start and end, the
//! error path (print a message naming the routine and the argument, then end the job
//! with `shmem_global_exit`) and the checks of common arguments. It sits below every
//! routine module and imports none of them.
//!
//! A second slot holds NVSHMEM's GPU PEs when a program starts them on top of CPU PEs
//! (`shmem_init`, then `nvshmemx_init_attr(NVSHMEMX_INIT_WITH_SHMEM)`,
//! [`initialize_gpu_over_cpu`]): a second runtime of the same PEs over the first one's
//! lent bootstrap. The GPU API (`crate::cuda`) acts on [`gpu_side`], which is that runtime
//! when it runs and the one runtime otherwise; the `shmem_*` routines act on [`rt`].

use rshmem::config::Device;
use rshmem::Ctx;
use std::ffi::{c_int, c_void};
use std::fmt::Display;
use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

const UNINITIALIZED: u8 = 0;
const RUNNING: u8 = 1;
const FINALIZED: u8 = 2;

static PHASE: AtomicU8 = AtomicU8::new(UNINITIALIZED);
static RUNTIME: OnceLock<Ctx> = OnceLock::new();
static INIT: Mutex<()> = Mutex::new(());
static THREAD_LEVEL: AtomicI32 = AtomicI32::new(0);
/// The GPU PEs started over the CPU PEs of [`RUNTIME`] (see [`initialize_gpu_over_cpu`]).
static GPU_RUNTIME: OnceLock<Ctx> = OnceLock::new();
/// The phase of [`GPU_RUNTIME`]: [`UNINITIALIZED`] while the GPU API acts on [`RUNTIME`].
static GPU_PHASE: AtomicU8 = AtomicU8::new(UNINITIALIZED);

/// The runtime for routine `call`; ends the process with a message when the library is
/// not initialized (or already finalized).
#[inline]
pub(crate) fn rt(call: &str) -> &'static Ctx {
    if PHASE.load(Ordering::Acquire) == RUNNING {
        if let Some(c) = RUNTIME.get() {
            return c;
        }
    }
    not_running(call)
}

#[cold]
fn not_running(call: &str) -> ! {
    let why = match PHASE.load(Ordering::Acquire) {
        FINALIZED => "called after shmem_finalize",
        _ => "called before shmem_init",
    };
    rshmem::log::line(&format!("rshmem: {call}: {why}"));
    std::process::exit(1)
}

/// Whether the library is initialized and not finalized.
pub(crate) fn running() -> bool {
    PHASE.load(Ordering::Acquire) == RUNNING
}

/// The runtime if it is running (for routines that may be called at any time).
pub(crate) fn try_rt() -> Option<&'static Ctx> {
    running().then(|| RUNTIME.get()).flatten()
}

/// The runtime of the GPU API (`rshmemx_cuda_*`, NVSHMEM's names) for routine `call`: the
/// separate GPU runtime when [`initialize_gpu_over_cpu`] started one, else the one runtime
/// ([`rt`]). Ends the process with a message after that runtime's finalize.
#[inline]
pub(crate) fn gpu_side(call: &str) -> &'static Ctx {
    match GPU_PHASE.load(Ordering::Acquire) {
        RUNNING => GPU_RUNTIME.get().expect("a running GPU runtime is set"),
        FINALIZED => gpu_side_finalized(call),
        _ => rt(call),
    }
}

#[cold]
fn gpu_side_finalized(call: &str) -> ! {
    rshmem::log::line(&format!("rshmem: {call}: called after the GPU PEs were finalized (nvshmem_finalize / rshmemx_cuda_finalize)"));
    std::process::exit(1)
}

/// [`gpu_side`] if it is running (for routines that may be called at any time).
pub(crate) fn try_gpu_side() -> Option<&'static Ctx> {
    match GPU_PHASE.load(Ordering::Acquire) {
        RUNNING => GPU_RUNTIME.get(),
        FINALIZED => None,
        _ => try_rt(),
    }
}

/// Whether the GPU API acts on a runtime of its own, separate from `shmem_*`'s.
pub(crate) fn gpu_is_separate() -> bool {
    GPU_PHASE.load(Ordering::Acquire) == RUNNING
}

/// Where an init puts the PEs' heaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Memory {
    /// `shmem_init`: host memory unless `RSHMEM_DEVICE=gpu` (see [`init_options`]).
    Default,
    /// `rshmemx_cuda_init`: GPU PEs, the heap in GPU memory (an error without a GPU).
    Gpu,
}

/// Starts the runtime once (`shmem_init`, `shmem_init_thread`, `start_pes`,
/// `rshmemx_cuda_init`); later calls do nothing, except that a GPU init after the runtime
/// started with host memory is an error. A call after `shmem_finalize` is an error.
pub(crate) fn initialize(call: &'static str, thread_level: c_int, memory: Memory) {
    initialize_with(call, thread_level, memory, None)
}

/// Makes the bootstrap of a start without a launcher (`crate::meet`): run under the init
/// lock, and only when the runtime is not running yet.
pub(crate) type MakeBootstrap<'a> = &'a dyn Fn() -> rshmem::Result<Box<dyn rshmem::bootstrap::Bootstrap>>;

/// [`initialize`], meeting the other PEs through the bootstrap `boot` makes instead of
/// the one the environment names.
pub(crate) fn initialize_with(call: &'static str, thread_level: c_int, memory: Memory, boot: Option<MakeBootstrap>) {
    let _guard = INIT.lock().unwrap_or_else(|p| p.into_inner());
    match PHASE.load(Ordering::Acquire) {
        RUNNING => {
            if memory == Memory::Gpu && !gpu_is_separate() && !RUNTIME.get().is_some_and(|c| c.heap_is_device()) {
                fatal(call, "the library already runs with CPU PEs (host memory; shmem_init came first): call rshmemx_cuda_init before any other init");
            }
            return;
        }
        FINALIZED => fatal(call, "the library was finalized; OpenSHMEM cannot be initialized again"),
        _ => {}
    }
    // A C program has no `tracing` subscriber of its own: rshmem's log lines go to stderr.
    rshmem::log::install();
    let statics = match crate::statics::make_symmetric() {
        Ok(s) => s,
        Err(e) => fatal(call, format_args!("cannot make the program's global variables symmetric: {e}")),
    };
    let options = init_options(statics, memory).and_then(|mut o| {
        if let Some(make) = boot {
            o.bootstrap = Some(make()?);
        }
        Ok(o)
    });
    let ctx = match options.and_then(rshmem::init_with) {
        Ok(c) => c,
        Err(e) => fatal(call, e),
    };
    THREAD_LEVEL.store(thread_level, Ordering::Relaxed);
    let _ = RUNTIME.set(ctx);
    PHASE.store(RUNNING, Ordering::Release);
    // Started hooks (the nvcc-built code's state copies) run now that there is a GPU.
    for hook in STARTED.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        hook(call);
    }
}

/// Starts GPU PEs for the GPU API on top of the running runtime
/// (`nvshmemx_init_attr(NVSHMEMX_INIT_WITH_SHMEM)` after `shmem_init`): collective. When
/// the running runtime's PEs are GPU PEs already (`RSHMEM_DEVICE=gpu`), or GPU PEs were
/// started this way before, nothing happens and the GPU API acts on what runs. Otherwise a
/// second runtime of the same PEs starts with the settings of `rshmemx_cuda_init` over the
/// first one's lent bootstrap ([`rshmem::Ctx::lend_bootstrap`]) and takes the GPU API.
///
/// Every PE first says whether it sees a GPU and the PEs compare answers over the lent
/// bootstrap, so a job where some PE has none fails on every PE at the same point, with an
/// error naming those PEs, and the first runtime's bootstrap stays in step.
pub(crate) fn initialize_gpu_over_cpu(call: &'static str) -> Result<(), String> {
    let _guard = INIT.lock().unwrap_or_else(|p| p.into_inner());
    if PHASE.load(Ordering::Acquire) != RUNNING {
        return Err("shmem_init has not started the library (or it was finalized): call shmem_init first".into());
    }
    let cpu = RUNTIME.get().expect("running implies a runtime");
    match GPU_PHASE.load(Ordering::Acquire) {
        RUNNING => return Ok(()),
        FINALIZED => return Err("the GPU PEs started over shmem_init's were finalized; they cannot start again".into()),
        _ if cpu.heap_is_device() => return Ok(()),
        _ => {}
    }
    let mut boot = cpu.lend_bootstrap();
    let has_gpu = rshmem::gpu::cuda::device_count() > 0;
    let answers = boot.allgather(&[u8::from(has_gpu)]).map_err(|e| e.to_string())?;
    let without: Vec<String> = answers.iter().enumerate().filter(|(_, a)| a.first() != Some(&1)).map(|(pe, _)| pe.to_string()).collect();
    if !without.is_empty() {
        return Err(format!(
            "no GPU PEs can start: {} {} no CUDA device (or no CUDA driver); the CPU PEs shmem_init started keep running",
            if without.len() == 1 { "PE" } else { "PEs" },
            without.join(", ") + if without.len() == 1 { " sees" } else { " see" }
        ));
    }
    let options = init_options(None, Memory::Gpu).map(|mut o| {
        o.bootstrap = Some(boot);
        o
    });
    let ctx = options.and_then(rshmem::init_with).map_err(|e| e.to_string())?;
    let _ = GPU_RUNTIME.set(ctx);
    GPU_PHASE.store(RUNNING, Ordering::Release);
    for hook in STARTED.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        hook(call);
    }
    Ok(())
}

/// Ends the separate GPU runtime (`nvshmem_finalize`, `rshmemx_cuda_finalize`) when one
/// runs, leaving the CPU PEs running: collective; later calls do nothing. Returns false
/// when the GPU API acts on the one runtime, which the caller then finalizes as
/// `shmem_finalize` does.
pub(crate) fn finalize_gpu_side(call: &'static str) -> bool {
    let _guard = INIT.lock().unwrap_or_else(|p| p.into_inner());
    match GPU_PHASE.load(Ordering::Acquire) {
        RUNNING => {
            finalize_separate_gpu(call);
            true
        }
        FINALIZED => true,
        _ => false,
    }
}

/// Finalizes the separate GPU runtime; the caller holds the init lock and saw it running.
fn finalize_separate_gpu(call: &'static str) {
    let ctx = GPU_RUNTIME.get().expect("running implies a runtime").clone();
    if let Err(e) = ctx.finalize() {
        fatal(call, e);
    }
    GPU_PHASE.store(FINALIZED, Ordering::Release);
}

/// What other modules run once the runtime started (`crate::cuda` attaches the program's
/// device-state copies).
static STARTED: Mutex<Vec<fn(&'static str)>> = Mutex::new(Vec::new());

/// Runs `hook` after every successful init (and now, when the runtime already runs).
pub(crate) fn on_started(hook: fn(&'static str)) {
    let mut hooks = STARTED.lock().unwrap_or_else(|p| p.into_inner());
    if !hooks.contains(&hook) {
        hooks.push(hook);
    }
}

/// What the C ABI asks of rshmem's start: the program's globals made symmetric, and CPU
/// PEs (host memory) unless `RSHMEM_DEVICE=gpu` asks for GPU memory. An OpenSHMEM C
/// program stores to what `shmem_malloc` returns from the host, so GPU memory must be
/// its explicit choice, never what `RSHMEM_DEVICE=auto` finds on the machine.
fn init_options(statics: Option<rshmem::StaticSegment>, memory: Memory) -> rshmem::Result<rshmem::InitOptions> {
    let mut config = c_config(rshmem::Config::from_env()?);
    if memory == Memory::Gpu {
        config.device = Device::Gpu;
    }
    Ok(rshmem::InitOptions { statics, config: Some(config), ..Default::default() })
}

/// The settings of a C program: as read from the environment, with `RSHMEM_DEVICE=auto`
/// meaning CPU PEs (see [`init_options`]).
fn c_config(mut config: rshmem::Config) -> rshmem::Config {
    if config.device == Device::Auto {
        config.device = Device::Cpu;
    }
    config
}

/// Ends the runtime (`shmem_finalize`): collective; later calls do nothing. The caller
/// has destroyed the contexts it created. GPU PEs started over this runtime's CPU PEs
/// and still running are finalized first.
pub(crate) fn finalize(call: &'static str) {
    let _guard = INIT.lock().unwrap_or_else(|p| p.into_inner());
    if PHASE.load(Ordering::Acquire) != RUNNING {
        return;
    }
    // GPU PEs started over these CPU PEs go first: their runtime uses this one's bootstrap.
    if GPU_PHASE.load(Ordering::Acquire) == RUNNING {
        finalize_separate_gpu(call);
    }
    let ctx = RUNTIME.get().expect("running implies a runtime").clone();
    if let Err(e) = ctx.finalize() {
        fatal(call, e);
    }
    PHASE.store(FINALIZED, Ordering::Release);
}

/// The thread level `shmem_init_thread` provided.
pub(crate) fn thread_level() -> c_int {
    THREAD_LEVEL.load(Ordering::Relaxed)
}

/// Prints `rshmem: PE p: call: msg` and ends the whole job (`shmem_global_exit(1)`), or
/// the process when the library is not running.
#[cold]
pub(crate) fn fatal(call: &str, msg: impl Display) -> ! {
    // Runtime errors start with the Rust call's name; skip it when it repeats ours.
    let text = msg.to_string();
    let msg = text.strip_prefix(call).and_then(|m| m.strip_prefix(": ")).unwrap_or(&text);
    match try_rt() {
        Some(c) => {
            rshmem::log::line(&format!("rshmem: PE {}: {call}: {msg}", c.my_pe()));
            c.global_exit(1)
        }
        None => {
            rshmem::log::line(&format!("rshmem: {call}: {msg}"));
            std::process::exit(1)
        }
    }
}

/// Unwraps a runtime result, or reports the error for the C routine `call` and exits.
pub(crate) trait OrExit<T> {
    /// The value, or [`fatal`].
    fn or_exit(self, call: &str) -> T;
}

impl<T> OrExit<T> for rshmem::Result<T> {
    #[inline]
    fn or_exit(self, call: &str) -> T {
        match self {
            Ok(v) => v,
            Err(e) => fatal(call, e),
        }
    }
}

/// A PE number argument. Negative numbers are refused here; the runtime checks the upper
/// bound against the context's team (the world, or a team context's team).
#[inline]
pub(crate) fn pe_arg(call: &str, ctx: &Ctx, pe: c_int) -> usize {
    if pe >= 0 {
        return pe as usize;
    }
    bad_pe(call, "pe", pe as i64, ctx.n_pes())
}

#[cold]
pub(crate) fn bad_pe(call: &str, arg: &'static str, pe: i64, n_pes: usize) -> ! {
    fatal(call, format_args!("argument `{arg}`: PE {pe} is out of range (valid PEs are 0..{n_pes})"))
}

/// An argument that is not allowed.
#[cold]
pub(crate) fn bad_arg(call: &str, arg: &str, detail: impl Display) -> ! {
    fatal(call, format_args!("argument `{arg}`: {detail}"))
}

/// `nelems * size` in bytes, or an error naming `nelems`.
#[inline]
pub(crate) fn bytes_of(call: &str, nelems: usize, size: usize) -> usize {
    nelems.checked_mul(size).unwrap_or_else(|| bad_arg(call, "nelems", format_args!("{nelems} elements of {size} bytes overflow")))
}

/// A local buffer argument as bytes. A null pointer is allowed only with length 0.
///
/// # Safety
/// `p` must point to `len` readable bytes (the OpenSHMEM routine's contract).
#[inline]
pub(crate) unsafe fn local<'a>(call: &str, arg: &str, p: *const c_void, len: usize) -> &'a [u8] {
    if len == 0 {
        return &[];
    }
    if p.is_null() {
        bad_arg(call, arg, format_args!("null pointer for {len} bytes"));
    }
    // SAFETY: non-null, and the caller promises `len` readable bytes.
    unsafe { std::slice::from_raw_parts(p as *const u8, len) }
}

/// A local output buffer as bytes. A null pointer is allowed only with length 0.
///
/// # Safety
/// `p` must point to `len` writable bytes not otherwise borrowed during the call.
#[inline]
pub(crate) unsafe fn local_mut<'a>(call: &str, arg: &str, p: *mut c_void, len: usize) -> &'a mut [u8] {
    if len == 0 {
        return &mut [];
    }
    if p.is_null() {
        bad_arg(call, arg, format_args!("null pointer for {len} bytes"));
    }
    // SAFETY: non-null, and the caller promises `len` writable bytes.
    unsafe { std::slice::from_raw_parts_mut(p as *mut u8, len) }
}

/// A stride argument (`dst`, `sst`): at least 1.
#[inline]
pub(crate) fn stride_arg(call: &str, arg: &str, s: isize) -> usize {
    if s >= 1 {
        s as usize
    } else {
        bad_arg(call, arg, format_args!("stride {s} is not at least 1"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(value: &'static str) -> Device {
        rshmem::Config::from_lookup(&|name| (name == "RSHMEM_DEVICE").then(|| value.to_string())).expect("valid").device
    }

    /// Issue 18, item 10: a C program runs as a CPU PE unless `RSHMEM_DEVICE=gpu`.
    #[test]
    fn c_programs_get_host_memory_unless_they_ask_for_the_gpu() {
        let c_device =
            |v| c_config(rshmem::Config::from_lookup(&|name| (name == "RSHMEM_DEVICE").then(|| String::from(v))).expect("valid")).device;
        assert_eq!(c_device("auto"), Device::Cpu, "the default must not pick a GPU for a C program");
        assert_eq!(c_device(""), Device::Cpu, "unset means auto");
        assert_eq!(c_device("cpu"), Device::Cpu);
        assert_eq!(c_device("gpu"), Device::Gpu);
        // The Rust API keeps its default: GPU PEs where a GPU is present.
        assert_eq!(device("auto"), Device::Auto);
    }
}
