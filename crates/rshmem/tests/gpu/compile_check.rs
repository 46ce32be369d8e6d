//! Compiles the runtime's and the GPU test programs' kernels with NVRTC for an architecture
//! (default sm_90), without a GPU: `gpu_compile_check [arch [cache-dir [names]]]` (names:
//! comma-separated sources to compile, default all). Needs libnvrtc
//! only. A verdict line per source (`nvrtc.NAME`). With a cache folder the cubins stay
//! there, under the names the runtime looks for: a GPU host given that folder as
//! `RSHMEM_CACHE_DIR` starts without compiling (the scripts/gpu-bundle.sh bundle does this).

#[path = "../support/mod.rs"]
mod support;

use rshmem::gpu::nvrtc;
use support::Check;

const SOURCES: &[(&str, &str)] = &[
    ("rshmem_builtin", include_str!("../../device/rshmem_builtin.cu")),
    ("rshmem_coll_builtin", include_str!("../../device/rshmem_coll_builtin.cu")),
    ("coll", include_str!("coll.cu")),
    ("suite", include_str!("suite.cu")),
    ("rshmem_perf", include_str!("../../../rshmem-perf/src/gpu/perf.cu")),
    ("proxy", include_str!("proxy.cu")),
    ("engines", include_str!("engines.cu")),
    ("rshmem_moe", include_str!("../../device/rshmem_moe.cu")),
];

fn main() {
    let arch = std::env::args().nth(1).unwrap_or_else(|| "sm_90".into());
    let keep = std::env::args().nth(2).map(std::path::PathBuf::from);
    let only: Option<Vec<String>> = std::env::args().nth(3).map(|l| l.split(',').map(str::to_string).collect());
    let dir = keep.clone().unwrap_or_else(|| std::env::temp_dir().join(format!("rshmem-compile-check-{}", std::process::id())));
    // No runtime here: the verdicts are PE 0's.
    let mut ck = Check::immediate("gpu_compile_check", 0);
    for (name, src) in SOURCES {
        if only.as_ref().is_some_and(|o| !o.iter().any(|n| n == name)) {
            continue;
        }
        let r = nvrtc::compile(src, name, &arch, &[], &dir, 0);
        let detail = match &r {
            Ok(bin) => format!("{} bytes of cubin for {arch}", bin.len()),
            Err(e) => e.to_string(),
        };
        ck.ok(&format!("nvrtc.{name}"), r.is_ok(), detail);
    }
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    std::process::exit(if ck.finish() { 0 } else { 1 });
}
