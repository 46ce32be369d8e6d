//! What `oshcc` needs beside it (issue 24, item 6): the library it places itself from
//! Cargo's `deps/` when only that copy exists, and a message naming the build command
//! when there is none.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_oshcc")).parent().expect("bin dir").to_path_buf()
}

/// A fresh folder laid out like `target/release`, with a copy of `oshcc` in it.
fn fake_target(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("oshcc-{name}")).join("release");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("deps")).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_oshcc"), d.join("oshcc")).unwrap();
    d
}

fn copy_headers(to: &Path) {
    std::fs::create_dir_all(to.join("include")).unwrap();
    for h in ["shmem.h", "shmemx.h", "pshmem.h"] {
        std::fs::copy(bin_dir().join("include").join(h), to.join("include").join(h)).unwrap();
    }
}

#[test]
fn oshcc_names_the_build_command_when_the_library_is_missing() {
    let d = fake_target("missing");
    copy_headers(&d);
    let c = d.join("hello.c");
    std::fs::write(&c, "#include <shmem.h>\nint main(void) { shmem_init(); shmem_finalize(); return 0; }\n").unwrap();
    let out = Command::new(d.join("oshcc")).arg("-o").arg(d.join("hello")).arg(&c).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("libshmem.so (or libshmem.a) is not in") && err.contains("cargo build --release -p rshmem-c"), "{err}");
    std::fs::remove_dir_all(d.join("include")).unwrap();
    let out = Command::new(d.join("oshcc")).arg("-c").arg(&c).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the OpenSHMEM headers are not in"), "{err}");
}

#[test]
fn oshcc_places_the_library_cargo_left_in_deps() {
    let built = bin_dir().join("deps").join("libshmem.so");
    if !built.exists() {
        println!("SKIPPED: {} not built", built.display());
        return;
    }
    let d = fake_target("deps");
    copy_headers(&d);
    std::fs::copy(&built, d.join("deps").join("libshmem.so")).unwrap();
    let out = Command::new(d.join("oshcc")).arg("--showme").output().unwrap();
    assert!(out.status.success());
    assert!(d.join("libshmem.so").exists(), "oshcc placed libshmem.so beside itself");
}

/// `rshmem-nvcc --showme` (no nvcc needed): the include path, -rdc and the default
/// architecture added, the device library and libshmem linked; none of that for a compile
/// only, no -rdc and no device library for a cubin or an explicit -rdc=false.
#[test]
fn rshmem_nvcc_adds_the_nvcc_path_flags() {
    let nvcc = PathBuf::from(env!("CARGO_BIN_EXE_rshmem-nvcc"));
    let show = |args: &[&str]| {
        let out = Command::new(&nvcc).env("RSHMEM_NVCC", "/opt/nvcc-for-test").arg("--showme").args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let link = show(&["app.cu", "-o", "app"]);
    assert!(link.starts_with("/opt/nvcc-for-test -I"), "{link}");
    for want in ["-arch=sm_90", "-rdc=true", "-lrshmem_device", "-lshmem", "-rpath,"] {
        assert!(link.contains(want), "missing {want}: {link}");
    }
    let compile = show(&["-arch=sm_80", "-c", "app.cu"]);
    assert!(!compile.contains("sm_90") && compile.contains("-rdc=true") && !compile.contains("-lshmem"), "{compile}");
    let whole = show(&["-rdc=false", "app.cu"]);
    assert!(!whole.contains("-rdc=true") && !whole.contains("-lrshmem_device") && whole.contains("-lshmem"), "{whole}");
    let cubin = show(&["-cubin", "probe.cu"]);
    assert!(!cubin.contains("-rdc") && !cubin.contains("-lshmem"), "{cubin}");
}
