//! The GPU anchors: NVSHMEM and NCCL, each through a program of ours written from the
//! library's API documentation (`anchors/nvshmem_perf.cu`, `anchors/nccl_perf.cu`, with
//! `anchors/gpu_anchor.h` for the plan and the protocol lines), compiled with nvcc
//! against the library found on this machine (the GPU host's Python wheels by default)
//! and Open MPI's compiler flags, and started with `mpirun -np N`. The NCCL unique id
//! and NVSHMEM's are bootstrapped through MPI.
//!
//! Environment: `NVSHMEM_HOME` / `NCCL_HOME` (the wheel's `nvidia/nvshmem`,
//! `nvidia/nccl` folders by default), `CUDA_HOME` or `PATH` for nvcc. The jobs run with
//! `NVSHMEM_DISABLE_NVLS=1` and `NCCL_NVLS_ENABLE=0`; other `NVSHMEM_*` and `NCCL_*`
//! variables set for rshmem-perf are passed on.

use crate::anchor::find_tool;
use crate::backend::{Backend, JobSpec};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The NVSHMEM anchor's source.
pub const NVSHMEM_SOURCE: &str = include_str!("../../anchors/nvshmem_perf.cu");
/// The NCCL anchor's source.
pub const NCCL_SOURCE: &str = include_str!("../../anchors/nccl_perf.cu");
/// The header both include: plan file, timing summary, protocol lines.
pub const COMMON_HEADER: &str = include_str!("../../anchors/gpu_anchor.h");

/// Where the GPU host's Python wheels keep the libraries.
pub const WHEELS: &str = "/opt/torch/.venv/lib/python3.12/site-packages/nvidia";

/// Which library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    /// NVSHMEM (device-initiated operations, on-stream collectives).
    Nvshmem,
    /// NCCL (on-stream collectives only).
    Nccl,
}

impl Library {
    /// Its label in the table and the files.
    pub fn label(self) -> &'static str {
        match self {
            Library::Nvshmem => "nvshmem",
            Library::Nccl => "nccl",
        }
    }

    fn home_var(self) -> &'static str {
        match self {
            Library::Nvshmem => "NVSHMEM_HOME",
            Library::Nccl => "NCCL_HOME",
        }
    }

    /// The files the library folder must have: its header and its shared library.
    fn needs(self) -> [&'static str; 2] {
        match self {
            Library::Nvshmem => ["include/nvshmem.h", "lib/libnvshmem_host.so.3"],
            Library::Nccl => ["include/nccl.h", "lib/libnccl.so.2"],
        }
    }

    fn source(self) -> &'static str {
        match self {
            Library::Nvshmem => NVSHMEM_SOURCE,
            Library::Nccl => NCCL_SOURCE,
        }
    }
}

/// nvcc: `$CUDA_HOME/bin/nvcc`, then `PATH`, then `/usr/local/cuda/bin/nvcc`.
pub fn find_nvcc() -> Option<PathBuf> {
    let mut c: Vec<PathBuf> = Vec::new();
    if let Some(h) = std::env::var_os("CUDA_HOME") {
        c.push(Path::new(&h).join("bin/nvcc"));
    }
    if let Some(p) = std::env::var_os("PATH") {
        c.extend(std::env::split_paths(&p).map(|d| d.join("nvcc")));
    }
    c.push("/usr/local/cuda/bin/nvcc".into());
    c.into_iter().find(|p| p.is_file())
}

/// The GPU's architecture for nvcc (`sm_90`), from nvidia-smi; `sm_90` when it cannot say.
pub fn gpu_arch() -> String {
    let out = Command::new("nvidia-smi").args(["--query-gpu=compute_cap", "--format=csv,noheader"]).output();
    let cap =
        out.ok().filter(|o| o.status.success()).map(|o| String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").trim().to_string());
    match cap.as_deref().and_then(|c| c.split_once('.')) {
        Some((maj, min)) if !maj.is_empty() && maj.chars().chain(min.chars()).all(|ch| ch.is_ascii_digit()) => format!("sm_{maj}{min}"),
        _ => "sm_90".into(),
    }
}

/// One GPU anchor, found on this machine.
#[derive(Debug)]
pub struct GpuAnchor {
    lib: Library,
    home: PathBuf,
    nvcc: PathBuf,
    mpicxx: PathBuf,
    mpirun: PathBuf,
    arch: String,
    program: Option<PathBuf>,
}

impl GpuAnchor {
    /// Looks for the library, nvcc and Open MPI; the error says what is missing.
    pub fn detect(lib: Library) -> Result<GpuAnchor, String> {
        let home = std::env::var_os(lib.home_var()).map(PathBuf::from).unwrap_or_else(|| Path::new(WHEELS).join(lib.label()));
        for f in lib.needs() {
            if !home.join(f).is_file() {
                return Err(format!(
                    "{} not found: no {} (set {} to the folder with include/ and lib/)",
                    lib.label(),
                    home.join(f).display(),
                    lib.home_var()
                ));
            }
        }
        let nvcc = find_nvcc().ok_or("nvcc not found (set CUDA_HOME or put it on PATH)")?;
        let mpicxx = find_tool("mpicxx").ok_or("Open MPI's mpicxx not found")?;
        let mpirun = find_tool("mpirun").ok_or("Open MPI's mpirun not found")?;
        Ok(GpuAnchor { lib, home, nvcc, mpicxx, mpirun, arch: gpu_arch(), program: None })
    }

    /// The nvcc arguments that build `src` into `exe`, given Open MPI's compile and link
    /// flags (`mpicxx --showme:compile`, `--showme:link`).
    pub fn nvcc_args(&self, src: &Path, exe: &Path, mpi_compile: &[String], mpi_link: &[String]) -> Vec<String> {
        let inc = self.home.join("include").display().to_string();
        let lib = self.home.join("lib").display().to_string();
        let mut a: Vec<String> = vec!["-O2".into(), format!("-arch={}", self.arch)];
        if self.lib == Library::Nvshmem {
            a.push("-rdc=true".into());
        }
        a.push(format!("-I{inc}"));
        a.push(src.display().to_string());
        a.extend(mpi_compile.iter().cloned());
        a.push(format!("-L{lib}"));
        match self.lib {
            Library::Nvshmem => a.extend(["-l:libnvshmem_host.so.3".into(), "-lnvshmem_device".into()]),
            Library::Nccl => a.push("-l:libnccl.so.2".into()),
        }
        a.extend(mpi_link.iter().cloned());
        a.extend(["-Xlinker".into(), "-rpath".into(), "-Xlinker".into(), lib]);
        a.extend(["-o".into(), exe.display().to_string()]);
        a
    }

    /// mpirun's arguments for `job` (after the program name come the program and the plan).
    pub fn mpirun_args(&self, job: &JobSpec, program: &Path, inherited: &[(String, String)]) -> Vec<String> {
        let lib = self.home.join("lib").display().to_string();
        let ld = match std::env::var("LD_LIBRARY_PATH") {
            Ok(old) if !old.is_empty() => format!("{lib}:{old}"),
            _ => lib,
        };
        let mut a: Vec<String> = ["--allow-run-as-root", "--oversubscribe", "-np"].iter().map(|s| s.to_string()).collect();
        a.push(job.n_pes.to_string());
        let mut vars: Vec<(String, String)> =
            vec![("LD_LIBRARY_PATH".into(), ld), ("NVSHMEM_DISABLE_NVLS".into(), "1".into()), ("NCCL_NVLS_ENABLE".into(), "0".into())];
        if self.lib == Library::Nvshmem {
            vars.push(("NVSHMEM_SYMMETRIC_SIZE".into(), job.heap_bytes.to_string()));
        }
        for (k, v) in inherited {
            if !vars.iter().any(|(have, _)| have == k) {
                vars.push((k.clone(), v.clone()));
            }
        }
        for (k, v) in vars {
            a.push("-x".into());
            a.push(format!("{k}={v}"));
        }
        a.push(program.display().to_string());
        a.push(job.plan.display().to_string());
        a
    }
}

/// `NVSHMEM_*` and `NCCL_*` variables of this process (they go on to the anchor jobs).
fn library_vars() -> Vec<(String, String)> {
    std::env::vars().filter(|(k, _)| k.starts_with("NVSHMEM_") || k.starts_with("NCCL_")).collect()
}

fn showme(mpicxx: &Path, what: &str) -> Result<Vec<String>, String> {
    let o = Command::new(mpicxx).arg(format!("--showme:{what}")).output().map_err(|e| format!("cannot run {}: {e}", mpicxx.display()))?;
    if !o.status.success() {
        return Err(format!("{} --showme:{what} failed: {}", mpicxx.display(), String::from_utf8_lossy(&o.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&o.stdout).split_whitespace().map(str::to_string).collect())
}

impl Backend for GpuAnchor {
    fn label(&self) -> &str {
        self.lib.label()
    }

    fn describe(&self) -> String {
        format!("{} ({}), built with {} for {}", self.lib.label(), self.home.display(), self.nvcc.display(), self.arch)
    }

    fn prepare(&mut self, out: &Path) -> Result<(), String> {
        let dir = out.join("anchor");
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let name = format!("{}_perf", self.lib.label());
        let src = dir.join(format!("{name}.cu"));
        let exe = dir.join(&name);
        let log = dir.join(format!("{name}.build.log"));
        for (path, text) in [(&src, self.lib.source()), (&dir.join("gpu_anchor.h"), COMMON_HEADER)] {
            std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        let args = self.nvcc_args(&src, &exe, &showme(&self.mpicxx, "compile")?, &showme(&self.mpicxx, "link")?);
        let res = Command::new(&self.nvcc).args(&args).output().map_err(|e| format!("cannot run {}: {e}", self.nvcc.display()))?;
        let text = format!(
            "{} {}\n{}{}",
            self.nvcc.display(),
            args.join(" "),
            String::from_utf8_lossy(&res.stdout),
            String::from_utf8_lossy(&res.stderr)
        );
        let _ = std::fs::write(&log, &text);
        if !res.status.success() {
            return Err(format!("nvcc failed to compile the {} anchor (log in {}):\n{}", self.lib.label(), log.display(), text.trim_end()));
        }
        self.program = Some(exe);
        Ok(())
    }

    fn command(&self, job: &JobSpec) -> Result<Command, String> {
        let program = self.program.as_ref().ok_or("the anchor program was not compiled (prepare was not called)")?;
        let mut cmd = Command::new(&self.mpirun);
        cmd.args(self.mpirun_args(job, program, &library_vars()));
        Ok(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn anchor(lib: Library) -> GpuAnchor {
        GpuAnchor {
            lib,
            home: Path::new(WHEELS).join(lib.label()),
            nvcc: "/usr/local/cuda/bin/nvcc".into(),
            mpicxx: "/usr/bin/mpicxx".into(),
            mpirun: "/usr/bin/mpirun".into(),
            arch: "sm_90".into(),
            program: None,
        }
    }

    #[test]
    fn nvcc_lines() {
        let mpi_c = vec!["-I/usr/lib/openmpi/include".to_string(), "-pthread".into()];
        let mpi_l = vec!["-L/usr/lib/openmpi/lib".to_string(), "-lmpi".into()];
        let nv = anchor(Library::Nvshmem).nvcc_args(Path::new("/o/nvshmem_perf.cu"), Path::new("/o/nvshmem_perf"), &mpi_c, &mpi_l);
        let line = nv.join(" ");
        assert!(line.starts_with("-O2 -arch=sm_90 -rdc=true -I/opt/torch/"), "{line}");
        assert!(line.contains("/nvidia/nvshmem/include /o/nvshmem_perf.cu -I/usr/lib/openmpi/include -pthread -L"), "{line}");
        assert!(line.contains("-l:libnvshmem_host.so.3 -lnvshmem_device -L/usr/lib/openmpi/lib -lmpi"), "{line}");
        assert!(
            line.ends_with("-Xlinker -rpath -Xlinker /opt/torch/.venv/lib/python3.12/site-packages/nvidia/nvshmem/lib -o /o/nvshmem_perf")
        );
        let nc = anchor(Library::Nccl).nvcc_args(Path::new("a.cu"), Path::new("a"), &[], &[]).join(" ");
        assert!(!nc.contains("-rdc") && nc.contains("nvidia/nccl/include") && nc.contains("-l:libnccl.so.2"), "{nc}");
    }

    #[test]
    fn mpirun_line() {
        let job = JobSpec { plan: "/r/plan.txt".into(), n_pes: 2, heap_bytes: 5 << 30, timeout: Duration::from_secs(9) };
        let inherited = vec![("NCCL_DEBUG".to_string(), "WARN".to_string()), ("NCCL_NVLS_ENABLE".to_string(), "1".to_string())];
        let a = anchor(Library::Nvshmem).mpirun_args(&job, Path::new("/r/anchor/nvshmem_perf"), &inherited);
        let line = a.join(" ");
        assert!(line.starts_with("--allow-run-as-root --oversubscribe -np 2 -x LD_LIBRARY_PATH=/opt/torch/"), "{line}");
        assert!(line.contains("-x NVSHMEM_DISABLE_NVLS=1 -x NCCL_NVLS_ENABLE=0 -x NVSHMEM_SYMMETRIC_SIZE=5368709120"), "{line}");
        assert!(line.contains("-x NCCL_DEBUG=WARN"), "{line}");
        assert!(!line.contains("NCCL_NVLS_ENABLE=1"), "NVLS stays off: {line}");
        assert!(line.ends_with(" /r/anchor/nvshmem_perf /r/plan.txt"), "{line}");
        let n = anchor(Library::Nccl).mpirun_args(&job, Path::new("x"), &[]).join(" ");
        assert!(!n.contains("NVSHMEM_SYMMETRIC_SIZE") && n.contains("NCCL_NVLS_ENABLE=0"), "{n}");
    }

    #[test]
    fn sources_speak_the_protocol() {
        assert!(COMMON_HEADER.contains("RESULT op=%s bytes=%zu iters=%ld reps=%ld median_us=%.6f min_us=%.6f max_us=%.6f"));
        assert!(COMMON_HEADER.contains("SKIP op=%s bytes=%zu reason=%s"));
        for src in [NVSHMEM_SOURCE, NCCL_SOURCE] {
            assert!(src.contains("#include \"gpu_anchor.h\""));
            assert!(src.contains("MPI_Init"));
        }
        // Every GPU operation is either run or said to be missing, by name, in each source.
        for o in crate::ops::GPU_OPS {
            for (lib, src) in [("nvshmem", NVSHMEM_SOURCE), ("nccl", NCCL_SOURCE)] {
                assert!(src.contains(&format!("\"{}\"", o.name)), "the {lib} anchor does not name `{}`", o.name);
            }
        }
        assert!(NCCL_SOURCE.contains("ncclAllReduce") && NCCL_SOURCE.contains("ncclSend") && NCCL_SOURCE.contains("ncclGetUniqueId"));
        assert!(NVSHMEM_SOURCE.contains("nvshmemx_int64_sum_reducescatter_on_stream"));
    }

    #[test]
    fn detect_says_what_is_missing() {
        if !Path::new(WHEELS).exists() && std::env::var_os("NVSHMEM_HOME").is_none() {
            let e = GpuAnchor::detect(Library::Nvshmem).unwrap_err();
            assert!(e.contains("nvshmem not found") && e.contains("NVSHMEM_HOME"), "{e}");
        }
    }
}
