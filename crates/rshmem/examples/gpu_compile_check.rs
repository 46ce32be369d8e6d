//! Compiles the runtime's and the examples' kernels with NVRTC for an architecture
//! (default sm_90), without a GPU: `gpu_compile_check [arch]`. Needs libnvrtc only.

use rshmem::gpu::nvrtc;

const SOURCES: &[(&str, &str)] = &[
    ("rshmem_builtin", include_str!("../device/rshmem_builtin.cu")),
    ("rshmem_coll_builtin", include_str!("../device/rshmem_coll_builtin.cu")),
    ("coll", include_str!("gpu/coll.cu")),
    ("suite", include_str!("gpu/suite.cu")),
    ("rshmem_perf", include_str!("../../rshmem-perf/src/gpu/perf.cu")),
    ("proxy", include_str!("gpu/proxy.cu")),
    ("rshmem_moe", include_str!("../device/rshmem_moe.cu")),
];

fn main() {
    let arch = std::env::args().nth(1).unwrap_or_else(|| "sm_90".into());
    let dir = std::env::temp_dir().join(format!("rshmem-compile-check-{}", std::process::id()));
    std::env::set_var("RSHMEM_CACHE_DIR", &dir);
    let mut failed = 0;
    for (name, src) in SOURCES {
        match nvrtc::compile(src, name, &arch, &[], 0) {
            Ok(bin) => println!("ok   {name}: {} bytes of cubin for {arch}", bin.len()),
            Err(e) => {
                failed += 1;
                println!("FAIL {name}: {e}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::process::exit(if failed == 0 { 0 } else { 1 });
}
