//! `oshcc` / `oshc++`: compile and link an OpenSHMEM program against rshmem's libshmem.
//!
//! Runs the C compiler (`OSHCC_CC`, default `cc`) or, when called as `oshc++`, the C++
//! compiler (`OSHCXX_CXX`, default `c++`) with `-I<dir>/include` added, and when linking
//! `-L<dir> -lshmem -Wl,-rpath,<dir>`, where `<dir>` is the directory of this executable
//! (`target/release` after `cargo build --release`). `--showme` prints the command
//! instead of running it.
//!
//! Cargo leaves `libshmem.so`/`libshmem.a` only in `deps/` when the library was built as
//! a dependency rather than asked for (`cargo build --bins`, `cargo test`): `oshcc` then
//! places the fresh copies beside itself. When there is no library at all, or no
//! headers, it says what to build instead of letting the linker fail.

#[path = "common/mod.rs"]
mod common;

use common::{place_libraries, LIBRARIES, NO_LINK};
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What is missing for compiling (`headers`) and linking (`library`), as a message.
fn missing(dir: &Path, link: bool) -> Option<String> {
    let headers = dir.join("include").join("shmem.h");
    let what = if !headers.exists() {
        format!("the OpenSHMEM headers are not in {}", dir.join("include").display())
    } else if link && !LIBRARIES.iter().any(|l| dir.join(l).exists()) {
        format!("libshmem.so (or libshmem.a) is not in {}", dir.display())
    } else {
        return None;
    };
    let profile = if dir.ends_with("debug") { "" } else { " --release" };
    Some(format!("{what}: build it with `cargo build{profile} -p rshmem-c` (or `cargo build{profile}`) in the rshmem workspace"))
}

fn main() {
    let invoked = std::env::args_os().next().map(PathBuf::from).unwrap_or_default();
    let name = invoked.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let cxx = name.contains("++") || name.contains("cxx");
    let exe = std::env::current_exe().unwrap_or_else(|e| {
        eprintln!("{name}: cannot find my own path: {e}");
        std::process::exit(2)
    });
    let dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    let compiler = if cxx {
        std::env::var_os("OSHCXX_CXX").unwrap_or_else(|| "c++".into())
    } else {
        std::env::var_os("OSHCC_CC").unwrap_or_else(|| "cc".into())
    };
    let mut showme = false;
    let mut user: Vec<OsString> = Vec::new();
    for a in std::env::args_os().skip(1) {
        if a == "--showme" || a == "-showme" {
            showme = true;
        } else {
            user.push(a);
        }
    }
    let link = !user.iter().any(|a| NO_LINK.iter().any(|f| a == f));
    place_libraries(&dir);
    if !showme {
        if let Some(why) = missing(&dir, link) {
            eprintln!("{name}: {why}");
            std::process::exit(1);
        }
    }
    let mut args: Vec<OsString> = vec![format!("-I{}", dir.join("include").display()).into()];
    args.extend(user);
    if link {
        args.push(format!("-L{}", dir.display()).into());
        args.push("-lshmem".into());
        args.push(format!("-Wl,-rpath,{}", dir.display()).into());
    }
    if showme {
        let shown: Vec<String> = std::iter::once(compiler).chain(args).map(|a| a.to_string_lossy().into_owned()).collect();
        println!("{}", shown.join(" "));
        return;
    }
    let err = Command::new(&compiler).args(&args).exec();
    eprintln!("{name}: cannot run {}: {err}", compiler.to_string_lossy());
    std::process::exit(127)
}
