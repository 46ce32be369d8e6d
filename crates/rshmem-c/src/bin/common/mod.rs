//! What the compiler wrappers (`oshcc`, `rshmem-nvcc`) share: the library files they
//! link, placing Cargo's fresh copies beside them, and the flags after which a compiler
//! does not link.

use std::path::Path;

/// The library files the wrappers link.
pub const LIBRARIES: &[&str] = &["libshmem.so", "libshmem.a"];

/// Copies `deps/<lib>` beside the binaries when it is there and newer (or the copy
/// beside them is missing), through a temporary name so that a concurrent link never
/// sees half a file.
pub fn place_libraries(dir: &Path) {
    for lib in LIBRARIES {
        let built = dir.join("deps").join(lib);
        let placed = dir.join(lib);
        let Ok(b) = std::fs::metadata(&built) else { continue };
        let fresh = std::fs::metadata(&placed).is_ok_and(|p| p.len() == b.len() && p.modified().ok() >= b.modified().ok());
        if fresh {
            continue;
        }
        let tmp = dir.join(format!(".{lib}.{}", std::process::id()));
        if std::fs::copy(&built, &tmp).and_then(|_| std::fs::rename(&tmp, &placed)).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// Flags after which the compiler does not link.
pub const NO_LINK: &[&str] = &["-c", "-S", "-E", "-M", "-MM", "-fsyntax-only"];
