//! `rshmem-nvcc`: compile and link a CUDA program that uses rshmem's device API
//! (`rshmem_device.cuh`) and its C host API (`rshmemx_cuda.h`) with nvcc.
//!
//! Runs nvcc (`RSHMEM_NVCC`, else `$CUDA_HOME/bin/nvcc`, else `nvcc` on `PATH`, else
//! `/usr/local/cuda/bin/nvcc`) with `-I<dir>/include`, `-rdc=true` (unless the command
//! line says `-rdc=false`) and `-arch=sm_90` (unless it names an architecture), and when
//! linking `-L<dir> -lshmem -Xlinker -rpath,<dir>` plus, for `-rdc` programs, the device
//! library `librshmem_device.a` (the program's one `rshmem_state`), where `<dir>` is the
//! directory of this executable (`target/release`). The device library is built with the
//! same nvcc and architecture flags from `include/rshmem_device_state.cu` the first time a
//! link needs it, into `<dir>/rshmem-device/<architecture>/`. A `-cubin`, `-ptx` or
//! `-fatbin` build (a module for `cuModuleLoad` and `rshmemx_cumodule_init`, whose source
//! defines `RSHMEM_CUBIN` before the device header) gets no `-rdc`. `--showme` prints the
//! command instead of running it.

#[path = "common/mod.rs"]
mod common;

use common::{place_libraries, LIBRARIES, NO_LINK};
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The nvcc to run.
fn find_nvcc() -> PathBuf {
    if let Some(p) = std::env::var_os("RSHMEM_NVCC") {
        return p.into();
    }
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        let p = Path::new(&home).join("bin").join("nvcc");
        if p.exists() {
            return p;
        }
    }
    let on_path = std::env::var_os("PATH").and_then(|path| std::env::split_paths(&path).map(|d| d.join("nvcc")).find(|p| p.exists()));
    on_path.unwrap_or_else(|| PathBuf::from("/usr/local/cuda/bin/nvcc"))
}

/// Whether argument `a` (or the pair `a b`) turns relocatable device code off.
fn rdc_off(args: &[String]) -> bool {
    args.iter().enumerate().any(|(i, a)| {
        let value = |flag: &str| a.strip_prefix(flag).map(|v| v.trim_start_matches('=').to_string());
        let v = value("-rdc").or_else(|| value("--relocatable-device-code"));
        match v {
            Some(v) if v.is_empty() => args.get(i + 1).is_some_and(|n| n == "false"),
            Some(v) => v == "false",
            None => false,
        }
    })
}

/// The architecture flags of the command line (`-arch`, `-gencode`, `-code` and their long
/// forms, with their values), or none.
fn arch_flags(args: &[String]) -> Vec<String> {
    const FLAGS: &[&str] = &["-arch", "--gpu-architecture", "-gencode", "--generate-code", "-code", "--gpu-code"];
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if let Some(f) = FLAGS.iter().find(|f| a == *f || a.starts_with(&format!("{f}="))) {
            out.push(a.clone());
            if a == f {
                if let Some(v) = args.get(i + 1) {
                    out.push(v.clone());
                    i += 1;
                }
            }
        }
        i += 1;
    }
    out
}

/// The device library for `arch`, built on first use (or when its source is newer).
fn device_library(nvcc: &Path, dir: &Path, arch: &[String]) -> Result<PathBuf, String> {
    let key: String = arch.join("_").chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let lib_dir = dir.join("rshmem-device").join(key);
    let lib = lib_dir.join("librshmem_device.a");
    let src = dir.join("include").join("rshmem_device_state.cu");
    let newer = |a: &Path, b: &Path| {
        let m = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        m(a) >= m(b)
    };
    if lib.exists() && newer(&lib, &src) && newer(&lib, &dir.join("include").join("rshmem_device_types.cuh")) {
        return Ok(lib_dir);
    }
    std::fs::create_dir_all(&lib_dir).map_err(|e| format!("cannot create {}: {e}", lib_dir.display()))?;
    let obj = lib_dir.join(format!("rshmem_device_state.{}.o", std::process::id()));
    let status = Command::new(nvcc)
        .args(arch)
        .arg("-rdc=true")
        .arg(format!("-I{}", dir.join("include").display()))
        .arg("-c")
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", nvcc.display()))?;
    if !status.success() {
        return Err(format!("building the device library from {} failed", src.display()));
    }
    let tmp = lib_dir.join(format!(".librshmem_device.{}.a", std::process::id()));
    let status = Command::new("ar").arg("rcs").arg(&tmp).arg(&obj).status().map_err(|e| format!("cannot run ar: {e}"))?;
    let _ = std::fs::remove_file(&obj);
    if !status.success() {
        return Err("ar failed to make librshmem_device.a".into());
    }
    std::fs::rename(&tmp, &lib).map_err(|e| format!("cannot place {}: {e}", lib.display()))?;
    Ok(lib_dir)
}

fn fail(msg: impl std::fmt::Display, code: i32) -> ! {
    eprintln!("rshmem-nvcc: {msg}");
    std::process::exit(code)
}

fn main() {
    let exe = std::env::current_exe().unwrap_or_else(|e| fail(format_args!("cannot find my own path: {e}"), 2));
    let dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    let mut showme = false;
    let mut user: Vec<String> = Vec::new();
    for a in std::env::args_os().skip(1) {
        if a == "--showme" || a == "-showme" {
            showme = true;
        } else {
            user.push(a.to_string_lossy().into_owned());
        }
    }
    // A cubin, PTX or fatbin is a module for the driver API (cuModuleLoad), whole-program.
    let module = user.iter().any(|a| a == "-cubin" || a == "-ptx" || a == "-fatbin");
    let link = !module && !user.iter().any(|a| NO_LINK.iter().any(|f| a == f));
    place_libraries(&dir);
    if !dir.join("include").join("rshmem_device.cuh").exists() {
        fail(
            format_args!(
                "the rshmem headers are not in {}: build them with `cargo build --release -p rshmem-c`",
                dir.join("include").display()
            ),
            1,
        );
    }
    if link && !LIBRARIES.iter().any(|l| dir.join(l).exists()) {
        fail(format_args!("libshmem.so (or libshmem.a) is not in {}: build it with `cargo build --release -p rshmem-c`", dir.display()), 1);
    }
    let nvcc = find_nvcc();
    let rdc = !module && !rdc_off(&user);
    let mut arch = arch_flags(&user);
    let mut args: Vec<OsString> = vec![format!("-I{}", dir.join("include").display()).into()];
    if arch.is_empty() {
        arch = vec!["-arch=sm_90".into()];
        args.push("-arch=sm_90".into());
    }
    if rdc && !user.iter().any(|a| a.starts_with("-rdc") || a.starts_with("--relocatable-device-code")) {
        args.push("-rdc=true".into());
    }
    args.extend(user.iter().map(OsString::from));
    if link {
        if rdc {
            let lib_dir = if showme {
                dir.join("rshmem-device").join("<architecture>")
            } else {
                device_library(&nvcc, &dir, &arch).unwrap_or_else(|e| fail(e, 1))
            };
            args.push(format!("-L{}", lib_dir.display()).into());
            args.push("-lrshmem_device".into());
        }
        args.push(format!("-L{}", dir.display()).into());
        args.push("-lshmem".into());
        args.push("-Xlinker".into());
        args.push(format!("-rpath,{}", dir.display()).into());
    }
    if showme {
        let shown: Vec<String> = std::iter::once(nvcc.into_os_string()).chain(args).map(|a| a.to_string_lossy().into_owned()).collect();
        println!("{}", shown.join(" "));
        return;
    }
    let err = Command::new(&nvcc).args(&args).exec();
    fail(format_args!("cannot run {}: {err}", nvcc.display()), 127)
}
