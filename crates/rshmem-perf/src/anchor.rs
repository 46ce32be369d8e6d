//! The anchors: the same sweep on another implementation, in the same invocation.
//!
//! For CPU PEs the anchor is Open MPI's OpenSHMEM. Its program is ours
//! (`anchors/oshmem_perf.c`, built into this binary); it is compiled with Open MPI's
//! `oshcc` into the results folder and started with `oshrun`. Other `oshcc`/`oshrun`
//! binaries (rshmem's own C ABI builds some under `target/`) are never picked: the tools
//! are taken from `/usr/bin` or from `PATH` entries outside any `target` folder, and
//! `oshrun` must say it is Open MPI's.

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

/// Open MPI's OpenSHMEM, found on this machine.
#[derive(Debug)]
pub struct Oshmem {
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
        Ok(Oshmem { oshcc, oshrun, version, program: None })
    }
}

impl Backend for Oshmem {
    fn label(&self) -> &str {
        "oshmem"
    }

    fn describe(&self) -> String {
        format!("Open MPI OpenSHMEM ({}, {})", self.version, self.oshrun.display())
    }

    fn prepare(&mut self, out: &Path) -> Result<(), String> {
        let dir = out.join("anchor");
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let src = dir.join("oshmem_perf.c");
        let exe = dir.join("oshmem_perf");
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
        let heap = format!("{}M", job.heap_bytes.div_ceil(1 << 20));
        // `--mca osc ^rdma`: without it Open MPI 4.1's OpenSHMEM crashes in shmem_finalize.
        cmd.args(["--allow-run-as-root", "--oversubscribe", "--mca", "osc", "^rdma", "-np"]).arg(job.n_pes.to_string());
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
    fn skips_build_folders() {
        assert!(acceptable_dir(Path::new("/usr/local/bin"), None));
        assert!(!acceptable_dir(Path::new("/work/repo/target/release"), None));
        assert!(!acceptable_dir(Path::new("relative/bin"), None));
        assert!(!acceptable_dir(Path::new("/opt/me"), Some(Path::new("/opt/me"))));
    }

    #[test]
    fn source_speaks_the_protocol() {
        assert!(OSHMEM_SOURCE.contains("RESULT op=%s bytes=%zu iters=%ld reps=%ld median_us="));
        assert!(OSHMEM_SOURCE.contains("SKIP op=%s bytes=%zu reason="));
        for op in crate::ops::OPS {
            let listed = OSHMEM_SOURCE.contains(&format!("{{\"{}\", ", op.name));
            assert!(listed, "the anchor neither runs nor names `{}`", op.name);
        }
        assert!(OSHMEM_SOURCE.contains("{\"reduce_scatter\", \"OpenSHMEM 1.4 has no reduce-scatter\"}"));
    }
}
