//! Run-time compilation of kernels with NVRTC, with the device header supplied in memory
//! and the resulting cubins cached on disk per GPU architecture.

use crate::error::{Error, Result};
use cudarc::nvrtc::sys;
use std::ffi::{c_char, CString};
use std::hash::{Hash, Hasher};

/// The device API header, as shipped in the crate.
pub const DEVICE_HEADER: &str = include_str!("../../device/rshmem_device.cuh");

/// Every header kernels may include, by include name (supplied to NVRTC in memory).
pub const DEVICE_HEADERS: &[(&str, &str)] = &[
    ("rshmem_device.cuh", DEVICE_HEADER),
    ("rshmem_device_types.cuh", include_str!("../../device/rshmem_device_types.cuh")),
    ("rshmem_device_proxy.cuh", include_str!("../../device/rshmem_device_proxy.cuh")),
    ("rshmem_device_coll.cuh", include_str!("../../device/rshmem_device_coll.cuh")),
    ("rshmem_device_typed.cuh", include_str!("../../device/rshmem_device_typed.cuh")),
    ("rshmem_device_engines.cuh", include_str!("../../device/rshmem_device_engines.cuh")),
    ("rshmem_moe.cuh", include_str!("../../device/rshmem_moe.cuh")),
];

fn nvrtc_check(r: sys::nvrtcResult, call: &'static str, pe: usize) -> Result<()> {
    if r == sys::nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(Error::Nvrtc { call, source: cudarc::nvrtc::result::NvrtcError(r), pe })
    }
}

/// Compiles `src` for `arch` (e.g. `sm_90`) with the device header available as
/// `#include "rshmem_device.cuh"`, returning a cubin. Uses the on-disk cache under
/// `cache` (see `Config::kernel_cache`).
pub fn compile(src: &str, name: &str, arch: &str, options: &[String], cache: &std::path::Path, pe: usize) -> Result<Vec<u8>> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (src, DEVICE_HEADERS, arch, options, env!("CARGO_PKG_VERSION")).hash(&mut h);
    let path = cache.join("kernels").join(arch).join(format!("{name}-{:016x}.cubin", h.finish()));
    if let Ok(bin) = std::fs::read(&path) {
        tracing::debug!(path = %path.display(), "kernel cache hit");
        return Ok(bin);
    }
    if !nvrtc_present() {
        return Err(Error::Gpu {
            call: "nvrtc",
            detail: "libnvrtc could not be loaded (is the CUDA toolkit's lib directory on the library path?)".into(),
            pe,
        });
    }
    let bin = compile_uncached(src, name, arch, options, pe)?;
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, &bin).is_ok() {
            let _ = std::fs::rename(&tmp, &path);
        }
    }
    Ok(bin)
}

/// Whether libnvrtc can be loaded.
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { sys::is_culib_present() }
}

fn compile_uncached(src: &str, name: &str, arch: &str, options: &[String], pe: usize) -> Result<Vec<u8>> {
    let c_src = CString::new(src).map_err(|_| Error::Gpu { call: "nvrtc", detail: "NUL in kernel source".into(), pe })?;
    let c_string = |what: &str, text: &str| {
        CString::new(text).map_err(|_| Error::InvalidArgument {
            call: "Gpu::compile",
            arg: "source",
            detail: format!("the {what} holds a NUL byte"),
            pe,
        })
    };
    let c_name = c_string("kernel name", &format!("{name}.cu"))?;
    let hdrs: Vec<CString> = DEVICE_HEADERS.iter().map(|(_, text)| c_string("device header", text)).collect::<Result<_>>()?;
    let hdr_names: Vec<CString> = DEVICE_HEADERS.iter().map(|(name, _)| c_string("device header name", name)).collect::<Result<_>>()?;
    let headers: Vec<*const c_char> = hdrs.iter().map(|h| h.as_ptr()).collect();
    let include_names: Vec<*const c_char> = hdr_names.iter().map(|h| h.as_ptr()).collect();
    let mut opts: Vec<CString> = vec![c_string("architecture", &format!("--gpu-architecture={arch}"))?, c_string("option", "-std=c++17")?];
    for o in options {
        opts.push(c_string("option", o)?);
    }
    let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
    let mut prog: sys::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: all strings are NUL-terminated and outlive the program; arrays have the
    // lengths passed; the program is destroyed below on every path.
    unsafe {
        nvrtc_check(
            sys::nvrtcCreateProgram(
                &mut prog,
                c_src.as_ptr(),
                c_name.as_ptr(),
                headers.len() as i32,
                headers.as_ptr(),
                include_names.as_ptr(),
            ),
            "nvrtcCreateProgram",
            pe,
        )?;
        let r = sys::nvrtcCompileProgram(prog, opt_ptrs.len() as i32, opt_ptrs.as_ptr());
        let result = if r != sys::nvrtcResult::NVRTC_SUCCESS {
            let mut n = 0usize;
            let _ = sys::nvrtcGetProgramLogSize(prog, &mut n);
            let mut log = vec![0u8; n.max(1)];
            let _ = sys::nvrtcGetProgramLog(prog, log.as_mut_ptr() as *mut c_char);
            let log = String::from_utf8_lossy(&log).trim_end_matches('\0').to_string();
            Err(Error::Gpu { call: "nvrtcCompileProgram", detail: format!("{r:?} compiling {name}:\n{log}"), pe })
        } else {
            let mut n = 0usize;
            nvrtc_check(sys::nvrtcGetCUBINSize(prog, &mut n), "nvrtcGetCUBINSize", pe).and_then(|_| {
                let mut bin = vec![0u8; n];
                nvrtc_check(sys::nvrtcGetCUBIN(prog, bin.as_mut_ptr() as *mut c_char), "nvrtcGetCUBIN", pe).map(|_| bin)
            })
        };
        let _ = sys::nvrtcDestroyProgram(&mut prog);
        result
    }
}
