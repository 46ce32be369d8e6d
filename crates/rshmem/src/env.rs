//! The environment variables rshmem reads: one table, one place.
//!
//! Each entry names the variable, its default and what it does; the README carries the
//! same table. Sizes accept the suffixes K, M, G (powers of 1024).

use crate::error::{Error, Result};
use std::time::Duration;

/// One documented environment variable.
#[derive(Debug, Clone, Copy)]
pub struct EnvVar {
    /// The variable's name.
    pub name: &'static str,
    /// Its default, as text.
    pub default: &'static str,
    /// What it controls.
    pub help: &'static str,
}

/// Every variable rshmem reads. Launcher-internal variables (set by `rshmemrun` for its
/// PEs) are listed too, marked as such.
pub const ENV_TABLE: &[EnvVar] = &[
    EnvVar { name: "RSHMEM_SYMMETRIC_SIZE", default: "256M", help: "initial size of the user symmetric heap per PE" },
    EnvVar {
        name: "RSHMEM_MAX_SYMMETRIC_SIZE",
        default: "32G",
        help: "largest size the symmetric heap may grow to per PE (virtual space is reserved up front; memory is committed on demand)",
    },
    EnvVar {
        name: "RSHMEM_MAX_TEAMS",
        default: "4096",
        help: "number of team slots per PE (each 40 KiB of address space: synchronization words and collective staging, committed only when used)",
    },
    EnvVar {
        name: "RSHMEM_LOG",
        default: "warn",
        help: "log filter (tracing-subscriber syntax: error, warn, info, debug, trace, or per-module rules)",
    },
    EnvVar {
        name: "RSHMEM_WAIT_WARN",
        default: "30",
        help: "seconds a wait may block before a warning names the call and PE (0 = never warn)",
    },
    EnvVar { name: "RSHMEM_SPIN", default: "2000", help: "polls a waiting PE spins before it sleeps on a futex" },
    EnvVar {
        name: "RSHMEM_COLL_ALGO",
        default: "auto",
        help: "force collective algorithms: comma-separated collective=algorithm pairs, e.g. `reduce=ring,broadcast=tree`; \
               barrier=dissem|dissem:K (radix K)|hier, broadcast=direct|tree|hier, fcollect=direct|ring|hier, \
               collect=direct|ring|hier, alltoall=direct, reduce=oneshot|rsag|ring|hier, reduce_scatter=direct|ring, scan=direct \
               (see coll::select)",
    },
    EnvVar {
        name: "RSHMEM_COLL_CHECK",
        default: "1 in debug builds, 0 in release builds",
        help: "1: every collective first checks that all PEs passed the same sizes, root, type, operator and buffers, \
               and reports the PE that differs; 0: no check",
    },
    EnvVar {
        name: "RSHMEM_DEVICE",
        default: "auto",
        help: "PE kind: auto (GPU PEs when a CUDA driver and GPU are present), cpu, or gpu (fail without one)",
    },
    EnvVar {
        name: "RSHMEM_DEVICE_DEBUG",
        default: "0",
        help: "1: device calls check PE range and heap bounds and trap with a message (always on in debug builds)",
    },
    EnvVar {
        name: "RSHMEM_DEVICE_WAIT_TIMEOUT",
        default: "60",
        help: "seconds a device-side wait may spin before it traps with a message naming the call and PE (0: never)",
    },
    EnvVar {
        name: "RSHMEM_GPU_COLL_PROTO",
        default: "auto",
        help: "protocol of GPU collectives (device scopes and on-stream): auto (by size: LL, LL128, simple; see coll::gpu_select), \
               simple, ll, ll128 or proxy (always used on teams with members behind the GPU proxy); a message a forced \
               LL protocol cannot carry uses simple",
    },
    EnvVar {
        name: "RSHMEM_GPU_COLL_SETS",
        default: "4",
        help: "synchronization and scratch sets per team for GPU collectives (1-64): up to this many on-stream collectives \
               may run on one team at once (each set costs 64 KiB per PE of device memory per numbering space, for the first 4 team slots)",
    },
    EnvVar {
        name: "RSHMEM_TRANSPORT",
        default: "auto",
        help: "auto (mapped peers through shared memory, unmapped ones through UCX), local, or ucx (UCX for every pair of distinct PEs; UCX_TLS picks UCX's transports)",
    },
    EnvVar {
        name: "RSHMEM_HOST",
        default: "(the machine's hostname)",
        help: "the host this PE counts as on: with RSHMEM_TRANSPORT=auto, PEs of different hosts reach each other through UCX \
               and the collectives work host by host (tests make one machine act as several hosts this way); only PEs of one host map each other's heaps",
    },
    EnvVar {
        name: "RSHMEM_UCX_PROTOCOL",
        default: "rma",
        help: "how host heaps use UCX: rma (UCX put/get/atomics on registered memory) or am (active messages that the target's progress thread carries out: the staged protocol GPU heaps always use)",
    },
    EnvVar {
        name: "RSHMEM_UCX_POLL_US",
        default: "50",
        help: "microseconds a UCX worker keeps polling after its last event (the progress thread) or while a request is young (a thread waiting for it) \
               before it sleeps on the worker's event descriptor until traffic arrives (0: sleep at once)",
    },
    EnvVar { name: "RSHMEM_CACHE_DIR", default: "~/.cache/rshmem", help: "where compiled kernels are cached (per GPU architecture)" },
    EnvVar { name: "RSHMEM_LAUNCHER_SOCK", default: "(set by rshmemrun)", help: "launcher rendezvous socket; unset means PMIx (when PMIX_RANK or PMIX_NAMESPACE is set) or a single PE" },
    EnvVar { name: "RSHMEM_JOB_KEY", default: "(set by rshmemrun)", help: "secret job key presented to the launcher" },
    EnvVar { name: "RSHMEM_PE", default: "(set by rshmemrun)", help: "this process's PE number" },
    EnvVar { name: "RSHMEM_NPES", default: "(set by rshmemrun)", help: "number of PEs in the job" },
];

/// Settings read from the environment at init.
#[derive(Debug, Clone)]
pub struct Config {
    /// Initial user heap size in bytes.
    pub symmetric_size: usize,
    /// Largest user heap size in bytes.
    pub max_symmetric_size: usize,
    /// Team slots per PE.
    pub max_teams: usize,
    /// Warn after a wait blocks this long (None: never).
    pub wait_warn: Option<Duration>,
    /// Polls before sleeping.
    pub spin: u32,
    /// Forced collective algorithms, if any (the text of `RSHMEM_COLL_ALGO`).
    pub coll_algo: Option<String>,
    /// Whether collectives check their arguments across PEs.
    pub coll_check: bool,
    /// `RSHMEM_DEVICE`: auto, cpu or gpu.
    pub device: String,
    /// Device-side argument checks.
    pub device_debug: bool,
    /// Device waits trap after this many seconds (0: never).
    pub device_wait_timeout: u64,
    /// `RSHMEM_TRANSPORT`: auto, local or ucx.
    pub transport: String,
    /// `RSHMEM_GPU_COLL_PROTO`: the forced GPU collective protocol (Auto: none).
    pub gpu_coll_proto: crate::coll::gpu_select::GpuProto,
    /// `RSHMEM_GPU_COLL_SETS`: GPU collective synchronization sets per team.
    pub gpu_coll_sets: usize,
    /// `RSHMEM_HOST`: the host this PE counts as on.
    pub host: String,
    /// `RSHMEM_UCX_PROTOCOL`: rma or am.
    pub ucx_protocol: String,
}

impl Config {
    /// Reads the table's variables, with defaults for those unset.
    pub fn from_env() -> Result<Config> {
        let symmetric_size = size_var("RSHMEM_SYMMETRIC_SIZE")?;
        let max_symmetric_size = size_var("RSHMEM_MAX_SYMMETRIC_SIZE")?.max(symmetric_size);
        let max_teams = number_var("RSHMEM_MAX_TEAMS")?.max(2);
        if max_teams > crate::team::MAX_TEAM_SLOTS as u64 {
            return Err(Error::InvalidArgument {
                call: "init",
                arg: "RSHMEM_MAX_TEAMS",
                detail: format!("{max_teams} is more than the {} team slots supported", crate::team::MAX_TEAM_SLOTS),
                pe: 0,
            });
        }
        let max_teams = max_teams as usize;
        let warn = number_var("RSHMEM_WAIT_WARN")?;
        let spin = number_var("RSHMEM_SPIN")? as u32;
        let coll_algo = std::env::var("RSHMEM_COLL_ALGO").ok().filter(|s| !s.is_empty() && s != "auto");
        let coll_check = match std::env::var("RSHMEM_COLL_CHECK").ok().as_deref().map(str::trim) {
            None | Some("") => cfg!(debug_assertions),
            Some("1") => true,
            Some("0") => false,
            Some(other) => {
                return Err(Error::InvalidArgument {
                    call: "init",
                    arg: "RSHMEM_COLL_CHECK",
                    detail: format!("`{other}` is not 0 or 1"),
                    pe: 0,
                })
            }
        };
        let device = raw("RSHMEM_DEVICE").trim().to_ascii_lowercase();
        if !["auto", "cpu", "gpu"].contains(&device.as_str()) {
            return Err(Error::InvalidArgument {
                call: "init",
                arg: "RSHMEM_DEVICE",
                detail: format!("`{device}` is not auto, cpu or gpu"),
                pe: 0,
            });
        }
        let transport = raw("RSHMEM_TRANSPORT").trim().to_ascii_lowercase();
        if !["auto", "local", "ucx"].contains(&transport.as_str()) {
            return Err(Error::InvalidArgument {
                call: "init",
                arg: "RSHMEM_TRANSPORT",
                detail: format!("`{transport}` is not auto, local or ucx"),
                pe: 0,
            });
        }
        let ucx_protocol = raw("RSHMEM_UCX_PROTOCOL").trim().to_ascii_lowercase();
        if !["rma", "am"].contains(&ucx_protocol.as_str()) {
            return Err(Error::InvalidArgument {
                call: "init",
                arg: "RSHMEM_UCX_PROTOCOL",
                detail: format!("`{ucx_protocol}` is not rma or am"),
                pe: 0,
            });
        }
        let device_debug = cfg!(debug_assertions) || number_var("RSHMEM_DEVICE_DEBUG")? != 0;
        let device_wait_timeout = number_var("RSHMEM_DEVICE_WAIT_TIMEOUT")?;
        let (gpu_coll_proto, gpu_coll_sets) = gpu_coll_settings()?;
        let host = std::env::var("RSHMEM_HOST")
            .ok()
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_string());
        Ok(Config {
            gpu_coll_proto,
            gpu_coll_sets,
            transport,
            host,
            ucx_protocol,
            device,
            device_debug,
            device_wait_timeout,
            symmetric_size,
            max_symmetric_size,
            max_teams,
            wait_warn: (warn > 0).then(|| Duration::from_secs(warn)),
            spin,
            coll_algo,
            coll_check,
        })
    }
}

/// `RSHMEM_UCX_POLL_US`, checked (the UCX transport reads it when it opens its worker).
pub fn ucx_poll_window() -> Result<Duration> {
    Ok(Duration::from_micros(number_var("RSHMEM_UCX_POLL_US")?))
}

/// `RSHMEM_GPU_COLL_PROTO` and `RSHMEM_GPU_COLL_SETS`, checked (the GPU layer reads them
/// when it lays out the device runtime area).
pub fn gpu_coll_settings() -> Result<(crate::coll::gpu_select::GpuProto, usize)> {
    let proto = crate::coll::gpu_select::GpuProto::parse(&raw("RSHMEM_GPU_COLL_PROTO"))?;
    let sets = number_var("RSHMEM_GPU_COLL_SETS")?;
    if !(1..=64).contains(&sets) {
        return Err(Error::InvalidArgument {
            call: "init",
            arg: "RSHMEM_GPU_COLL_SETS",
            detail: format!("{sets} is not between 1 and 64"),
            pe: 0,
        });
    }
    Ok((proto, sets as usize))
}

fn default_of(name: &str) -> &'static str {
    ENV_TABLE.iter().find(|v| v.name == name).map(|v| v.default).unwrap_or("")
}

fn raw(name: &'static str) -> String {
    std::env::var(name).ok().filter(|s| !s.trim().is_empty()).unwrap_or_else(|| default_of(name).to_string())
}

fn number_var(name: &'static str) -> Result<u64> {
    let text = raw(name);
    text.trim().parse::<u64>().map_err(|_| Error::InvalidArgument {
        call: "init",
        arg: name,
        detail: format!("`{text}` is not a whole number"),
        pe: 0,
    })
}

fn size_var(name: &'static str) -> Result<usize> {
    let text = raw(name);
    parse_size(&text).ok_or_else(|| Error::InvalidArgument {
        call: "init",
        arg: name,
        detail: format!("`{text}` is not a size (examples: 4096, 64M, 2G)"),
        pe: 0,
    })
}

/// Parses `123`, `64K`, `64M`, `2G` (also `KB`, `MiB`, case-insensitive) into bytes.
pub fn parse_size(text: &str) -> Option<usize> {
    let t = text.trim().to_ascii_uppercase();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits_end);
    let n: usize = num.parse().ok()?;
    let mult: usize = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("64k"), Some(64 << 10));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("3MiB"), Some(3 << 20));
        assert_eq!(parse_size("12Q"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn every_default_parses() {
        for v in ENV_TABLE {
            if v.name.ends_with("_SIZE") {
                assert!(parse_size(v.default).is_some(), "{}", v.name);
            }
        }
    }
}
