//! Compiles the library's C part (`csrc/c_types.c`: `long double` and complex arithmetic,
//! `long double` p/g) with the system's C compiler (any C11 compiler: gcc alone will do),
//! puts the C headers where `oshcc` looks for them: `include/` beside the built binaries
//! (`target/<profile>/include`), and links `oshc++` to `oshcc` there (Cargo cannot name a
//! binary `oshc++`; `oshcc` picks the C++ compiler when called by that name).

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=include");
    println!("cargo:rerun-if-changed=csrc");
    println!("cargo:rerun-if-changed=build.rs");
    cc::Build::new()
        .file("csrc/c_types.c")
        .std("c11")
        .flag("-fvisibility=hidden")
        .warnings(true)
        .extra_warnings(true)
        .compile("rshmem_c_types");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // OUT_DIR is <target>/<profile>/build/<pkg>-<hash>/out.
    let Some(profile_dir) = out.ancestors().nth(3).map(Path::to_path_buf) else { return };
    let include = profile_dir.join("include");
    std::fs::create_dir_all(include.join("mpp")).expect("create include dir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    for name in ["shmem.h", "shmemx.h", "pshmem.h"] {
        let text = std::fs::read(src.join(name)).expect("read header");
        write_if_changed(&include.join(name), &text);
        // OpenSHMEM also promises <mpp/shmem.h> for SGI SHMEM programs.
        if name == "pshmem.h" {
            continue;
        }
        let shim = format!("/* Compatibility path for SGI SHMEM programs. */\n#include \"../{name}\"\n");
        write_if_changed(&include.join("mpp").join(name), shim.as_bytes());
    }
    // The GPU host API and the device headers, for nvcc builds (`rshmem-nvcc`), and the
    // source of the device library (`librshmem_device.a`: the one `rshmem_state` of an
    // `-rdc` program), which `rshmem-nvcc` builds with the nvcc it finds.
    println!("cargo:rerun-if-changed=../rshmem/device");
    write_if_changed(&include.join("rshmemx_cuda.h"), &std::fs::read(src.join("rshmemx_cuda.h")).expect("read header"));
    let device = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rshmem/device");
    for entry in std::fs::read_dir(&device).expect("read device headers").flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "cuh") {
            let text = std::fs::read(&path).expect("read device header");
            write_if_changed(&include.join(entry.file_name()), &text);
        }
    }
    let state_src = Path::new(env!("CARGO_MANIFEST_DIR")).join("csrc").join("rshmem_device_state.cu");
    write_if_changed(&include.join("rshmem_device_state.cu"), &std::fs::read(state_src).expect("read device state source"));
    let cxx = profile_dir.join("oshc++");
    if std::fs::symlink_metadata(&cxx).is_err() {
        let _ = std::os::unix::fs::symlink("oshcc", &cxx);
    }
}

fn write_if_changed(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).ok().as_deref() != Some(bytes) {
        std::fs::write(path, bytes).expect("write header");
    }
}
