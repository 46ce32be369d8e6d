//! The anchors: the same sweep on another implementation, in the same invocation.
//!
//! For CPU PEs there are two, both running our program `anchors/oshmem_perf.c` (built
//! into this binary), compiled into the results folder:
//!
//! * `oshmem`: Open MPI's OpenSHMEM, compiled with Open MPI's `oshcc` and started with
//!   its `oshrun`. Other `oshcc`/`oshrun` binaries (rshmem's own C ABI builds some under
//!   `target/`) are never picked for it: the tools are taken from `/usr/bin` or from
//!   `PATH` entries outside any `target` folder, and `oshrun` must say it is Open MPI's.
//! * `libshmem`: rshmem's own C ABI (crate `rshmem-c`), the same program compiled with
//!   rshmem's `oshcc` and started with rshmem's `oshrun`, found next to this binary or in
//!   its target folder ([`find_rshmem_tools`]): what a C program gets from rshmem, beside
//!   what the Rust API gets.

use crate::backend::{Backend, JobSpec};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The anchor program's source.
pub const OSHMEM_SOURCE: &str = include_str!("../anchors/oshmem_perf.c");

/// How to get the anchor when it is missing.
pub const OSHMEM_INSTALL_HINT: &str = "apt-get install openmpi-bin libopenmpi-dev";

/// Whether a PATH entry may hold the anchor's tools: not a build folder of ours.
fn acceptable_dir(dir: &Path, own_dir: Option<&Path>) -> bool {
    dir.is_absolute() && !dir.components().any(|c| c.as_os_str() == "target") && own_dir != Some(dir)
}

/// Finds Open MPI's `name` (`oshcc`, `oshrun`): `/usr/bin/NAME` first, then `PATH`
/// entries that are not build folders.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let system = Path::new("/usr/bin").join(name);
    if system.is_file() {
        return Some(system);
    }
    let own = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf));
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).filter(|d| acceptable_dir(d, own.as_deref())).map(|d| d.join(name)).find(|p| p.is_file())
}

/// Whether `shmem.h` is in an include folder of `oshcc` (`--showme:incdirs`): Debian's
/// openmpi-bin brings the wrapper, libopenmpi-dev the headers.
pub fn header_present(oshcc: &Path) -> bool {
    let Ok(out) = Command::new(oshcc).arg("--showme:incdirs").output() else {
        return false;
    };
    String::from_utf8_lossy(&out.stdout).split_whitespace().any(|d| Path::new(d).join("shmem.h").is_file())
}

/// How to build rshmem's C tools when they are missing.
pub const LIBSHMEM_BUILD_HINT: &str = "cargo build --release -p rshmem-c";

/// Whether `dir` holds rshmem's C tools: `oshcc`, `oshrun` and `include/shmem.h` (its
/// `oshcc` places the library beside itself when it runs).
fn has_rshmem_tools(dir: &Path) -> bool {
    dir.join("oshcc").is_file() && dir.join("oshrun").is_file() && dir.join("include").join("shmem.h").is_file()
}

/// The folders where rshmem's C tools may be for a binary in `exe_dir`: that folder, its
/// parent when it is a `deps` or `examples` folder of a profile, and the `release` and
/// `debug` profiles of the `target` folder it is in.
pub fn rshmem_tool_dirs(exe_dir: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![exe_dir.to_path_buf()];
    if exe_dir.file_name().is_some_and(|n| n == "deps" || n == "examples") {
        dirs.extend(exe_dir.parent().map(Path::to_path_buf));
    }
    if let Some(target) = exe_dir.ancestors().find(|a| a.file_name().is_some_and(|n| n == "target")) {
        dirs.extend(["release", "debug"].map(|p| target.join(p)));
    }
    dirs.dedup();
    dirs
}

/// The folder with rshmem's own `oshcc` and `oshrun` (crate `rshmem-c`), looked for
/// around this binary ([`rshmem_tool_dirs`]).
pub fn find_rshmem_tools() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    rshmem_tool_dirs(exe.parent()?).into_iter().find(|d| has_rshmem_tools(d))
}

/// Which OpenSHMEM runs the anchor program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Open MPI's OpenSHMEM (the `oshmem` column).
    OpenMpi,
    /// rshmem's C ABI, libshmem (the `libshmem` column).
    Libshmem,
}

/// The anchor program on an OpenSHMEM library found on this machine.
#[derive(Debug)]
pub struct Oshmem {
    flavor: Flavor,
    oshcc: PathBuf,
    oshrun: PathBuf,
    version: String,
    program: Option<PathBuf>,
}

impl Oshmem {
    /// Looks for Open MPI's `oshcc` and `oshrun`; the error says what is missing and how
    /// to install it.
    pub fn detect() -> Result<Oshmem, String> {
        let missing = |what: &str| format!("{what}; install it with `{OSHMEM_INSTALL_HINT}`");
        let oshcc = find_tool("oshcc").ok_or_else(|| missing("Open MPI's oshcc was not found"))?;
        let oshrun = find_tool("oshrun").ok_or_else(|| missing("Open MPI's oshrun was not found"))?;
        let out = Command::new(&oshrun).arg("--version").output().map_err(|e| format!("cannot run {}: {e}", oshrun.display()))?;
        let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        if !(text.contains("OpenRTE") || text.contains("Open MPI")) {
            return Err(missing(&format!("{} is not Open MPI's oshrun", oshrun.display())));
        }
        let version = text.lines().next().unwrap_or("").trim().to_string();
        if !header_present(&oshcc) {
            return Err(missing(&format!("Open MPI's shmem.h is not in the include folders of {}", oshcc.display())));
        }
        Ok(Oshmem { flavor: Flavor::OpenMpi, oshcc, oshrun, version, program: None })
    }

    /// Looks for rshmem's own `oshcc` and `oshrun` ([`find_rshmem_tools`]); the error says
    /// how to build them.
    pub fn detect_libshmem() -> Result<Oshmem, String> {
        let dir = find_rshmem_tools().ok_or_else(|| {
            let exe = std::env::current_exe().ok();
            let dirs = exe.as_deref().and_then(Path::parent).map(rshmem_tool_dirs).unwrap_or_default();
            let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
            format!(
                "rshmem's oshcc, oshrun and include/shmem.h were not found in {}; build them with `{LIBSHMEM_BUILD_HINT}`",
                dirs.join(", ")
            )
        })?;
        let version = format!("rshmem-c, {}", dir.display());
        Ok(Oshmem { flavor: Flavor::Libshmem, oshcc: dir.join("oshcc"), oshrun: dir.join("oshrun"), version, program: None })
    }

    /// Which library it runs on.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }
}

/// Open MPI's byte transports for a run whose rshmem side has `RSHMEM_TRANSPORT` set to
/// `transport`: when rshmem's PEs reach each other over the network (`ucx`), Open MPI's
/// collectives, which run over its MPI layer, go over TCP too (`--mca btl tcp,self`),
/// so that both sides' collectives cross the same link. (Its puts, gets and atomics go
/// through UCX either way, and `UCX_TLS` reaches both sides.) Otherwise Open MPI keeps
/// its shared-memory transport.
pub fn network_btl(transport: Option<&str>) -> Option<&'static str> {
    (transport == Some("ucx")).then_some("tcp,self")
}

impl Backend for Oshmem {
    fn label(&self) -> &str {
        match self.flavor {
            Flavor::OpenMpi => "oshmem",
            Flavor::Libshmem => "libshmem",
        }
    }

    fn describe(&self) -> String {
        match self.flavor {
            Flavor::OpenMpi => format!("Open MPI OpenSHMEM ({}, {})", self.version, self.oshrun.display()),
            Flavor::Libshmem => format!("rshmem's C ABI libshmem ({})", self.version),
        }
    }

    fn prepare(&mut self, out: &Path) -> Result<(), String> {
        let dir = out.join("anchor");
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        // The same source, one copy and one program per library.
        let stem = match self.flavor {
            Flavor::OpenMpi => "oshmem_perf",
            Flavor::Libshmem => "libshmem_perf",
        };
        let src = dir.join(format!("{stem}.c"));
        let exe = dir.join(stem);
        std::fs::write(&src, OSHMEM_SOURCE).map_err(|e| format!("cannot write {}: {e}", src.display()))?;
        let res = Command::new(&self.oshcc)
            .arg("-O2")
            .arg("-o")
            .arg(&exe)
            .arg(&src)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.oshcc.display()))?;
        if !res.status.success() {
            return Err(format!(
                "{} failed to compile {}:\n{}",
                self.oshcc.display(),
                src.display(),
                String::from_utf8_lossy(&res.stderr).trim_end()
            ));
        }
        self.program = Some(exe);
        Ok(())
    }

    fn command(&self, job: &JobSpec) -> Result<Command, String> {
        let program = self.program.as_ref().ok_or("the anchor program was not compiled (prepare was not called)")?;
        let mut cmd = Command::new(&self.oshrun);
        if self.flavor == Flavor::Libshmem {
            // rshmem's oshrun; CPU PEs, the heap as rshmem's own PEs get it (its default,
            // grown on demand by the collective allocations).
            cmd.env("RSHMEM_DEVICE", "cpu").arg("-np").arg(job.n_pes.to_string()).arg(program).arg(&job.plan);
            return Ok(cmd);
        }
        let heap = format!("{}M", job.heap_bytes.div_ceil(1 << 20));
        // `--mca osc ^rdma`: without it Open MPI 4.1's OpenSHMEM crashes in shmem_finalize.
        cmd.args(["--allow-run-as-root", "--oversubscribe", "--mca", "osc", "^rdma"]);
        if let Some(btl) = network_btl(std::env::var("RSHMEM_TRANSPORT").ok().as_deref()) {
            cmd.args(["--mca", "btl", btl]);
        }
        cmd.arg("-np").arg(job.n_pes.to_string());
        // Open MPI 4.1 reads the heap size from SMA_SYMMETRIC_SIZE (it ignores the
        // specification's SHMEM_SYMMETRIC_SIZE, which later versions read): set both.
        for var in ["SMA_SYMMETRIC_SIZE", "SHMEM_SYMMETRIC_SIZE"] {
            cmd.arg("-x").arg(format!("{var}={heap}"));
        }
        cmd.arg(program).arg(&job.plan);
        Ok(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collectives_cross_the_network_when_rshmem_does() {
        assert_eq!(network_btl(Some("ucx")), Some("tcp,self"));
        assert_eq!(network_btl(Some("local")), None);
        assert_eq!(network_btl(None), None);
    }

    #[test]
    fn skips_build_folders() {
        assert!(acceptable_dir(Path::new("/usr/local/bin"), None));
        assert!(!acceptable_dir(Path::new("/work/repo/target/release"), None));
        assert!(!acceptable_dir(Path::new("relative/bin"), None));
        assert!(!acceptable_dir(Path::new("/opt/me"), Some(Path::new("/opt/me"))));
    }

    #[test]
    fn looks_for_rshmem_tools_in_the_target_folder() {
        let dirs = rshmem_tool_dirs(Path::new("/w/target/release/deps"));
        let want: Vec<PathBuf> = ["/w/target/release/deps", "/w/target/release", "/w/target/debug"].iter().map(PathBuf::from).collect();
        assert_eq!(dirs, want, "the profile folder once");
        assert_eq!(rshmem_tool_dirs(Path::new("/opt/bin")), vec![PathBuf::from("/opt/bin")]);
        assert!(!has_rshmem_tools(Path::new("/nonexistent")));
    }

    #[test]
    fn source_speaks_the_protocol() {
        assert!(OSHMEM_SOURCE.contains("RESULT op=%s bytes=%zu iters=%ld reps=%ld median_us="));
        assert!(OSHMEM_SOURCE.contains("SKIP op=%s bytes=%zu reason="));
        assert!(OSHMEM_SOURCE.contains("INFO binding PE %d cpus %s"));
        for op in crate::ops::OPS {
            let listed = OSHMEM_SOURCE.contains(&format!("{{\"{}\", ", op.name));
            assert!(listed, "the anchor neither runs nor names `{}`", op.name);
        }
        assert!(OSHMEM_SOURCE.contains("{\"reduce_scatter\", \"OpenSHMEM 1.4 has no reduce-scatter\"}"));
    }
}
