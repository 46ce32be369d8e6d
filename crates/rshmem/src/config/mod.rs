//! Configuration: every environment variable rshmem reads, in one typed table.
//!
//! Each row of [`config_table!`] below names a field of [`Config`], its type, the kind of
//! value (a parser from [`kinds`]), the variable, its default and what it does. One
//! generic reader ([`Config::from_lookup`]) fills every field, so no other module reads
//! the environment: [`Config::from_env`] runs once at init and the layers below receive
//! the values they need. [`table`] lists the rows for documentation; the README's table
//! is generated from it (`config::markdown_table`, checked by a test).

pub mod choices;
pub mod coll_algo;
pub mod kinds;

pub use choices::{BindTo, Device, GpuProto, LogColor, RemoteEngine, TransportMode, UcxProtocol};
pub use coll_algo::Forced;
pub use kinds::{parse_size, Choice};

use crate::error::{Error, Result};
use kinds::Kind;
use std::path::PathBuf;
use std::time::Duration;

/// Who sets a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// A setting for users.
    User,
    /// Set by rshmem's launchers for the PEs they start.
    Launcher,
    /// Another program's variable that rshmem reads (PMIx, Open MPI, Slurm, XDG, CUDA).
    Foreign,
}

/// One row of the table, for documentation.
#[derive(Debug, Clone)]
pub struct Var {
    /// The variable's name.
    pub name: &'static str,
    /// What kind of value it takes.
    pub kind: String,
    /// Its default, as the documentation shows it.
    pub default: &'static str,
    /// Who sets it.
    pub scope: Scope,
    /// What it controls.
    pub help: &'static str,
}

/// Reads one variable: its text through `lookup` (blank or unset: the default text), then
/// the kind's parser; a parse error names the variable.
fn read<T>(lookup: &dyn Fn(&str) -> Option<String>, name: &'static str, default: &str, kind: Kind<T>) -> Result<T> {
    let text = lookup(name).filter(|v| !v.trim().is_empty()).unwrap_or_else(|| default.to_string());
    (kind.parse)(&text).map_err(|detail| Error::InvalidArgument { call: "init", arg: name, detail, pe: 0 })
}

/// Defines [`Config`] (one field per row), [`Config::from_lookup`] and [`table`].
macro_rules! config_table {
    ($( $field:ident : $ty:ty = $kind:expr, $name:literal, $scope:ident, default $default:literal $(shown $shown:literal)?, $help:literal; )*) => {
        /// Settings read from the environment at init: one field per variable of [`table`].
        #[derive(Debug, Clone)]
        pub struct Config {
            $( #[doc = concat!("`", $name, "`: ", $help)] pub $field: $ty, )*
        }

        impl Config {
            /// Reads every variable through `lookup` (a variable's text, or `None` when
            /// unset); blank or unset variables take their defaults.
            pub fn from_lookup(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Config> {
                Ok(Config { $( $field: read(lookup, $name, $default, $kind)?, )* })
            }
        }

        /// Every variable rshmem reads, in documentation order.
        pub fn table() -> Vec<Var> {
            vec![ $( Var {
                name: $name,
                kind: ($kind.name)(),
                default: config_table!(@shown $default $($shown)?),
                scope: Scope::$scope,
                help: $help,
            }, )* ]
        }
    };
    (@shown $d:literal) => { $d };
    (@shown $d:literal $s:literal) => { $s };
}

config_table! {
    symmetric_size: usize = kinds::size(), "RSHMEM_SYMMETRIC_SIZE", User, default "256M",
        "initial size of the user symmetric heap per PE";
    max_symmetric_size: usize = kinds::size(), "RSHMEM_MAX_SYMMETRIC_SIZE", User, default "32G",
        "largest size the heap may grow to (address space is reserved up front, memory committed on demand)";
    max_teams: usize = kinds::number_in::<2, 48640>(), "RSHMEM_MAX_TEAMS", User, default "4096",
        "team slots per PE (teams alive at once; each takes 40 KiB of address space per PE for synchronization words and collective staging, committed only when used)";
    log: String = Kind { name: || "filter".into(), parse: |t| Ok(t.trim().to_string()) }, "RSHMEM_LOG", User, default "warn",
        "log filter of `rshmem::log::install` and of the C and Python entry points (`error`, `warn`, `info`, `debug`, `trace`, or per-module rules)";
    log_color: LogColor = kinds::choice::<LogColor>(), "RSHMEM_LOG_COLOR", User, default "auto",
        "ANSI colours in log lines: `auto` (only when stderr is a terminal; rshmemrun decides for its PEs from its own stderr), `always`, `never`";
    wait_warn: Option<Duration> = kinds::seconds_or_never(), "RSHMEM_WAIT_WARN", User, default "30",
        "seconds a wait may block before a warning names the call, the PE and the PE it waits for (0: never); rshmemrun also reports a PE stopped this long, and a job whose every PE has been blocked this long";
    hang_timeout: Option<Duration> = kinds::fractional_seconds_or_never(), "RSHMEM_HANG_TIMEOUT", User, default "0",
        "seconds (fractions allowed) a PE may stay blocked in rshmem, or stopped, before the job ends with a report of who waits on whom (status 124; 0: never). Under rshmemrun the launcher enforces it for the whole job (from its own environment); elsewhere each wait fails on its own";
    bind_to: BindTo = kinds::choice::<BindTo>(), "RSHMEM_BIND_TO", User, default "auto",
        "how rshmemrun and oshrun bind PEs to CPUs when `--bind-to` is not given: `core` (each PE on a CPU of its own, round robin over the CPUs the launcher may use), `numa` (on that CPU's NUMA node), `none`, `auto` (`core` when the PEs fit on those CPUs, else `none`)";
    spin: u32 = kinds::number::<u32>(), "RSHMEM_SPIN", User, default "2000",
        "polls a waiting PE spins before it sleeps on a futex (and again after each wake that found its condition false, when the PE has a CPU of its own)";
    coll_algo: Forced = coll_algo::kind(), "RSHMEM_COLL_ALGO", User, default "auto",
        "force collective algorithms: comma-separated `collective=algorithm` pairs, e.g. `reduce=ring,broadcast=tree` (values in the Collectives section)";
    coll_check: Option<bool> = Kind { name: || "0 or 1".into(), parse: |t| if t.trim().is_empty() { Ok(None) } else { (kinds::flag().parse)(t).map(Some) } },
        "RSHMEM_COLL_CHECK", User, default "" shown "1 in debug builds, 0 in release",
        "1: every collective first checks that all PEs passed the same sizes, root, type, operator and buffers and reports the PE that differs, before any data moves. Always on whatever this says: the cheap check of the argument code carried in the collectives' synchronization words (Collectives section)";
    transport: TransportMode = kinds::choice::<TransportMode>(), "RSHMEM_TRANSPORT", User, default "auto",
        "`auto`: mapped peers through shared memory, unmapped ones through UCX; `local`; `ucx`: every pair of distinct PEs through UCX (libucp loaded at run time; `UCX_TLS=tcp` or `sm` picks its transports). Fails at init with a clear message when libucp.so.0 is missing";
    host: Option<String> = kinds::text(), "RSHMEM_HOST", User, default "" shown "the machine's hostname",
        "the host this PE counts as on. With `RSHMEM_TRANSPORT=auto`, PEs of different hosts reach each other through UCX (never through shared memory) and the collectives work host by host (`coll::select`: local step first, then across hosts); tests make one machine act as several hosts this way";
    ucx_protocol: UcxProtocol = kinds::choice::<UcxProtocol>(), "RSHMEM_UCX_PROTOCOL", User, default "rma",
        "how host heaps use UCX: `rma` (UCX put/get/atomics on registered memory) or `am` (active messages carried out by the target's progress thread: the staged protocol GPU heaps always use, since the UCX builds here cannot touch GPU memory)";
    ucx_poll: Duration = kinds::micros(), "RSHMEM_UCX_POLL_US", User, default "50",
        "microseconds a UCX worker keeps polling after its last event (the progress thread) or while a request is young (a thread waiting for it) before it sleeps on the worker's event descriptor until traffic arrives (0: sleep at once)";
    remote_engine: RemoteEngine = kinds::choice::<RemoteEngine>(), "RSHMEM_REMOTE_ENGINE", User, default "auto",
        "which peers the device API's remote engine (`rshmemx_remote_*`: always through the host proxy and UCX) reaches: `auto` (peers that have a UCX transport anyway: other hosts, or every peer under `RSHMEM_TRANSPORT=ucx`), `ucx` (every peer: GPU PEs also connect the staged UCX transport to mapped peers; needs libucp.so.0). Elsewhere a remote-engine call stops the kernel with a message naming the call and the PE";
    device: Device = kinds::choice::<Device>(), "RSHMEM_DEVICE", User, default "auto",
        "`auto`: GPU PEs when a CUDA driver and a GPU are present, else CPU PEs (for OpenSHMEM C programs `auto` means `cpu`); `cpu`; `gpu` (fails without one)";
    device_debug: bool = kinds::flag(), "RSHMEM_DEVICE_DEBUG", User, default "0" shown "0 (1 in debug builds)",
        "1: device calls check PE range and heap bounds and stop the kernel with a message naming the call and PE";
    device_wait_timeout: Option<Duration> = kinds::seconds_or_never(), "RSHMEM_DEVICE_WAIT_TIMEOUT", User, default "60",
        "seconds a device-side wait may spin before it stops the kernel with a message (0: never)";
    gpu_coll_proto: GpuProto = kinds::choice::<GpuProto>(), "RSHMEM_GPU_COLL_PROTO", User, default "auto",
        "protocol of GPU collectives (device scopes and on-stream): `auto` (by size: LL up to 4 KiB per pair of PEs, LL128 up to 60 KiB, then simple; see `coll/gpu_select.rs`), `simple`, `ll`, `ll128`, `proxy` (puts between team barriers; always used on teams with members behind the GPU proxy); a message a forced LL protocol cannot carry uses simple";
    gpu_coll_sets: usize = kinds::number_in::<1, 64>(), "RSHMEM_GPU_COLL_SETS", User, default "4",
        "synchronization and scratch sets per team for GPU collectives (1-64): back-to-back collectives need no barrier, and up to this many on-stream collectives may run on one team at once (64 KiB of device memory per set, per PE, per numbering space, for the first 4 team slots)";
    moe_fp8_one_pass: usize = kinds::number::<usize>(), "RSHMEM_MOE_FP8_ONE_PASS_TOKENS", User, default "1024",
        "FP8 MoE dispatch of at least this many tokens, on a layer whose every PE is mapped, quantizes and sends in one pass (a warp per token quantizes its row once and stores it into each chosen expert's rows); fewer tokens quantize first and send in batches of (token, choice) pairs spread over every block, which keeps more of the GPU busy (0: always one pass)";
    gpu_overlap_launch: bool = kinds::flag(), "RSHMEM_GPU_OVERLAP_LAUNCH", User, default "1",
        "1: the runtime's on-stream kernels (collectives, copies, signal, wait, quiet, barrier) are launched with programmatic dependent launch on GPUs of compute capability 9.0 and newer, so that the next call's kernel is scheduled while the previous one still runs (each waits for its predecessor before it starts its work: stream order is kept; on an H100, 8 B on-stream collectives of 8 thread PEs took 17 µs instead of 21, of 2 thread PEs 8.3 instead of 9.4: `bash scripts/gpu-session.sh launch`); 0: plain launches";
    proxy_staging: usize = kinds::size_in::<{ 256 << 10 }, { 1 << 30 }>(), "RSHMEM_PROXY_STAGING", User, default "4M",
        "pinned host memory each GPU PE's proxy stages its network transfers through (256K-1G): a device put to a peer on another host is copied into it in four pieces, each sent while the GPU copies the next, so a put of up to a quarter of it goes out as one transport put; gets and relayed transfers go in pieces of the whole";
    cache_dir: Option<PathBuf> = kinds::path(), "RSHMEM_CACHE_DIR", User, default "" shown "$XDG_CACHE_HOME/rshmem or ~/.cache/rshmem",
        "where kernels compiled with NVRTC are cached, per GPU architecture";
    launcher_sock: Option<PathBuf> = kinds::path(), "RSHMEM_LAUNCHER_SOCK", Launcher, default "" shown "set by rshmemrun",
        "the launcher's rendezvous socket; unset means PMIx (when `PMIX_RANK` or `PMIX_NAMESPACE` is set) or a single PE";
    job_key: Option<String> = kinds::text(), "RSHMEM_JOB_KEY", Launcher, default "" shown "set by rshmemrun",
        "secret job key presented to the launcher";
    launcher_pe: Option<usize> = kinds::maybe_number(), "RSHMEM_PE", Launcher, default "" shown "set by rshmemrun",
        "this process's PE number";
    launcher_npes: Option<usize> = kinds::maybe_number(), "RSHMEM_NPES", Launcher, default "" shown "set by rshmemrun",
        "number of PEs in the job";
    launcher_local_pes: Option<usize> = kinds::maybe_number(), "RSHMEM_LOCAL_PES", Launcher, default "" shown "set by rshmemrun",
        "PEs this process hosts (`rshmemrun --pes-per-process`), numbered from `RSHMEM_PE`";
    thread_cpus: Option<String> = kinds::text(), "RSHMEM_THREAD_CPUS", Launcher, default "" shown "set by rshmemrun",
        "the core of each PE of this process, in PE order (`rshmemrun --pes-per-process` with core binding): each PE's thread binds itself to its own";
    spare_cpus: Option<String> = kinds::text(), "RSHMEM_SPARE_CPUS", Launcher, default "" shown "set by rshmemrun",
        "CPUs of this host that no PE is bound to (a CPU list; set when `rshmemrun` binds every PE and cores are left over): each GPU PE's proxy thread and each PE's UCX progress thread run there rather than on their PE's core, which the PE's own thread keeps busy (waiting for its GPU, or computing)";
    host_cpus: Option<usize> = kinds::maybe_number(), "RSHMEM_HOST_CPUS", Launcher, default "" shown "set by rshmemrun",
        "the number of CPUs the launcher's PEs on this host share (the launcher's own CPUs): with more PEs on the host than this, waits yield their core sooner. Unset: the CPUs this process may use (which binding narrows to its own)";
    bootstrap_port: Option<usize> = kinds::maybe_number(), "RSHMEM_BOOTSTRAP_PORT", User, default "" shown "MASTER_PORT + 1",
        "TCP port PE 0 listens on for the TCP bootstrap of torchrun-style jobs (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set; torchrun's own store holds MASTER_PORT)";
    bootstrap_timeout: Duration = kinds::seconds(), "RSHMEM_BOOTSTRAP_TIMEOUT", User, default "120",
        "seconds the TCP bootstrap's rendezvous (and PE 0's wait for every PE's finalize) may take before init fails naming the PEs missing";
    pmix_rank: bool = kinds::presence(), "PMIX_RANK", Foreign, default "" shown "set by PMIx launchers",
        "join the job through PMIx (when `RSHMEM_LAUNCHER_SOCK` is unset)";
    pmix_namespace: bool = kinds::presence(), "PMIX_NAMESPACE", Foreign, default "" shown "set by PMIx launchers",
        "join the job through PMIx (when `RSHMEM_LAUNCHER_SOCK` is unset)";
    ompi_size: Option<usize> = kinds::maybe_number(), "OMPI_COMM_WORLD_SIZE", Foreign, default "" shown "set by Open MPI",
        "above 1 without PMIx variables (or without libpmix) is an error: a multi-process launch that rshmem cannot join";
    slurm_tasks: Option<usize> = kinds::maybe_number(), "SLURM_STEP_NUM_TASKS", Foreign, default "" shown "set by srun",
        "above 1 without PMIx variables is an error naming `srun --mpi=pmix`";
    torch_rank: Option<usize> = kinds::maybe_number(), "RANK", Foreign, default "" shown "set by torchrun",
        "with `WORLD_SIZE` above 1: join the job through the TCP bootstrap as this rank";
    torch_world_size: Option<usize> = kinds::maybe_number(), "WORLD_SIZE", Foreign, default "" shown "set by torchrun",
        "number of PEs of a torchrun-style job";
    master_addr: Option<String> = kinds::text(), "MASTER_ADDR", Foreign, default "" shown "set by torchrun",
        "host of rank 0, where the TCP bootstrap meets";
    master_port: Option<usize> = kinds::maybe_number(), "MASTER_PORT", Foreign, default "" shown "set by torchrun",
        "torchrun's store port; the TCP bootstrap listens on the next one unless `RSHMEM_BOOTSTRAP_PORT` is set";
    torchelastic_run_id: Option<String> = kinds::text(), "TORCHELASTIC_RUN_ID", Foreign, default "" shown "set by torchrun",
        "part of the TCP bootstrap's job key, so that two jobs on one address never meet";
    xdg_cache_home: Option<PathBuf> = kinds::path(), "XDG_CACHE_HOME", Foreign, default "" shown "unset",
        "base of the kernel cache when `RSHMEM_CACHE_DIR` is unset";
    home: Option<PathBuf> = kinds::path(), "HOME", Foreign, default "" shown "the user's home",
        "base of the kernel cache (`~/.cache/rshmem`) when neither `RSHMEM_CACHE_DIR` nor `XDG_CACHE_HOME` is set";
    xdg_runtime_dir: Option<PathBuf> = kinds::path(), "XDG_RUNTIME_DIR", Foreign, default "" shown "the temp dir",
        "where rshmemrun makes its private rendezvous directory";
    cuda_module_loading: Option<String> = kinds::text(), "CUDA_MODULE_LOADING", Foreign, default "" shown "EAGER (set by rshmem when unset)",
        "CUDA's module loading; rshmem sets `EAGER` for GPU PEs unless the user set it (a lazily loaded kernel can wait behind a spinning one)";
    cuda_device_max_connections: Option<String> = kinds::text(), "CUDA_DEVICE_MAX_CONNECTIONS", Foreign, default "" shown "32 (set by rshmem when unset)",
        "hardware work queues of a CUDA context; rshmem sets 32 for GPU PEs unless the user set it (with CUDA's 8, streams of several thread PEs share queues, and a kernel waiting for a peer holds up the peer's kernel queued behind it)";
}

impl Config {
    /// Reads the process environment (the only place rshmem does).
    pub fn from_env() -> Result<Config> {
        Config::from_lookup(&|name| std::env::var(name).ok())
    }

    /// The defaults (an empty environment).
    pub fn defaults() -> Config {
        Config::from_lookup(&|_| None).expect("every default parses")
    }

    /// Whether collectives check their arguments across PEs (`RSHMEM_COLL_CHECK`, by
    /// default on in debug builds).
    pub fn coll_check(&self) -> bool {
        self.coll_check.unwrap_or(cfg!(debug_assertions))
    }

    /// Whether device calls check their arguments (always in debug builds).
    pub fn device_checks(&self) -> bool {
        self.device_debug || cfg!(debug_assertions)
    }

    /// The largest user heap: `RSHMEM_MAX_SYMMETRIC_SIZE`, at least the initial size.
    pub fn max_heap(&self) -> usize {
        self.max_symmetric_size.max(self.symmetric_size)
    }

    /// The host name this PE counts as on: `RSHMEM_HOST`, else the machine's hostname.
    pub fn host_name(&self) -> String {
        self.host.clone().unwrap_or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_string())
    }

    /// Where compiled kernels are cached: `RSHMEM_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/rshmem`, else `~/.cache/rshmem`, else a folder under /tmp.
    pub fn kernel_cache(&self) -> PathBuf {
        if let Some(d) = &self.cache_dir {
            return d.clone();
        }
        if let Some(d) = &self.xdg_cache_home {
            return d.join("rshmem");
        }
        match &self.home {
            Some(h) => h.join(".cache").join("rshmem"),
            None => std::env::temp_dir().join("rshmem-cache"),
        }
    }
}

/// Sets the CUDA driver's environment for GPU PEs before its first `cuInit` in this
/// process, where the user did not set it:
/// - `CUDA_MODULE_LOADING=EAGER`: with lazy loading, the first launch of a kernel may wait
///   for the kernels already running in the context: a proxy thread launching the atomic
///   kernel for a peer while this PE's own kernel spins on that peer would deadlock.
/// - `CUDA_DEVICE_MAX_CONNECTIONS=32` (CUDA's largest; its default is 8): streams share
///   the context's hardware queues, and thread PEs of one process share one context. With
///   8 queues, 8 thread PEs' streams land on shared queues, where a kernel that waits for
///   a peer keeps the peer's kernel queued behind it from starting (seen on the H200:
///   8 thread PEs' collectives timed out with 8 queues and passed with 32).
///
/// The GPU driver layer calls this before it initializes CUDA.
pub fn prepare_cuda_environment() {
    for (name, value) in [("CUDA_MODULE_LOADING", "EAGER"), ("CUDA_DEVICE_MAX_CONNECTIONS", "32")] {
        if std::env::var_os(name).is_none() {
            std::env::set_var(name, value);
        }
    }
}

/// The table as Markdown rows (`| variable | default | meaning |`), as the README shows
/// it between its `env-table` markers.
pub fn markdown_table() -> String {
    let mut out = String::from("| variable | default | meaning |\n|---|---|---|\n");
    for v in table() {
        let who = match v.scope {
            Scope::User => "",
            Scope::Launcher => " (launcher-internal)",
            Scope::Foreign => " (read, not ours)",
        };
        out += &format!("| `{}`{who} | {} | {} |\n", v.name, v.default, v.help);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_parses() {
        let c = Config::defaults();
        assert_eq!(c.symmetric_size, 256 << 20);
        assert_eq!(c.device, Device::Auto);
        assert_eq!(c.wait_warn, Some(Duration::from_secs(30)));
        assert_eq!(c.launcher_sock, None);
        assert!(!c.pmix_rank);
    }

    #[test]
    fn bad_values_name_the_variable() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
        };
        let e = Config::from_lookup(&env(&[("RSHMEM_DEVICE", "tpu")])).unwrap_err().to_string();
        assert!(e.contains("RSHMEM_DEVICE") && e.contains("`tpu` is not auto, cpu or gpu"), "{e}");
        let e = Config::from_lookup(&env(&[("RSHMEM_SYMMETRIC_SIZE", "lots")])).unwrap_err().to_string();
        assert!(e.contains("RSHMEM_SYMMETRIC_SIZE") && e.contains("not a size"), "{e}");
        let e = Config::from_lookup(&env(&[("RSHMEM_PROXY_STAGING", "64K")])).unwrap_err().to_string();
        assert!(e.contains("RSHMEM_PROXY_STAGING") && e.contains("65536 bytes is not between 262144 and 1073741824"), "{e}");
        assert_eq!(Config::from_lookup(&env(&[("RSHMEM_PROXY_STAGING", "16M")])).unwrap().proxy_staging, 16 << 20);
        let e = Config::from_lookup(&env(&[("RSHMEM_GPU_COLL_SETS", "0")])).unwrap_err().to_string();
        assert!(e.contains("RSHMEM_GPU_COLL_SETS") && e.contains("not between 1 and 64"), "{e}");
        let c = Config::from_lookup(&env(&[("RSHMEM_TRANSPORT", " UCX "), ("PMIX_RANK", "0"), ("RSHMEM_WAIT_WARN", "0")])).unwrap();
        assert_eq!((c.transport, c.pmix_rank, c.wait_warn), (TransportMode::Ucx, true, None));
    }

    #[test]
    fn the_team_limit_matches_the_team_slot_layout() {
        let max = table().into_iter().find(|v| v.name == "RSHMEM_MAX_TEAMS").unwrap().kind;
        assert_eq!(max, format!("number, 2-{}", crate::heap::layout::MAX_TEAM_SLOTS));
    }

    #[test]
    fn names_are_unique() {
        let t = table();
        for (i, v) in t.iter().enumerate() {
            assert!(t[..i].iter().all(|w| w.name != v.name), "{} twice", v.name);
        }
    }
}
