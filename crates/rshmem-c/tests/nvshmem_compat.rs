//! The NVSHMEM source-compatibility layer (`compat/nvshmem`), without nvcc or a GPU:
//! its README lists exactly the public names its headers define (read from the headers
//! through the C preprocessor, device pass and host pass), and the headers and
//! libnvshmem_host's source compile as C and C++ host code with gcc/g++.
//!
//! `RSHMEM_BLESS=1 cargo test -p rshmem-c --test nvshmem_compat` rewrites the README's list.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn compat() -> PathBuf {
    crate_dir().join("compat/nvshmem")
}

fn device_dir() -> PathBuf {
    crate_dir().join("../rshmem/device")
}

/// Whether the C host API for GPU PEs (`rshmemx_cuda.h`, another part of the project) is here.
fn have_cuda_host_api() -> bool {
    crate_dir().join("include/rshmemx_cuda.h").exists()
}

/// A folder searched after the real include folder, with an empty `rshmemx_cuda.h`, so that
/// the preprocessor can list names where that header is absent (preprocessing only).
fn fallback_include() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rshmem-nvshmem-compat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create a temporary folder");
    std::fs::write(dir.join("rshmemx_cuda.h"), "/* empty: preprocessing only */\n").expect("write the stand-in");
    dir
}

/// `-I` for the compatibility headers, rshmem's device headers and the C ABI's headers.
fn include_args(cmd: &mut Command) -> &mut Command {
    for dir in [compat().join("include"), device_dir(), crate_dir().join("include")] {
        cmd.arg("-I").arg(dir);
    }
    cmd
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(out.status.success(), "{what} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// `cpp` over nvshmemx.h (which includes everything) with `defines`; `macros` lists the
/// macros instead of the text.
fn preprocess(defines: &[&str], macros: bool, fallback: &Path) -> String {
    let mut cmd = Command::new("cpp");
    cmd.args(["-P", "-x", "c++", "-std=c++17"]);
    if macros {
        cmd.arg("-dM");
    }
    include_args(cmd.args(defines)).arg("-idirafter").arg(fallback).arg(compat().join("include/nvshmemx.h"));
    run(&mut cmd, "cpp")
}

fn identifiers(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let start = i;
            if bytes[i].is_ascii_alphabetic() || bytes[i] == b'_' {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                if start > 0 && (bytes[start - 1].is_ascii_alphanumeric()) {
                    continue;
                }
                return Some((&text[start..i], text[i..].trim_start()));
            }
            i += 1;
        }
        None
    })
}

/// The NVSHMEM functions, constants and types the layer defines.
fn covered() -> (BTreeSet<String>, BTreeSet<String>) {
    let fallback = fallback_include();
    let device = ["-D__CUDACC__", "-D__CUDACC_RTC__", "-D__CUDA_ARCH__=900", "-D__CUDA_FP16_TYPES_EXIST__", "-D__CUDA_BF16_TYPES_EXIST__"];
    let mut functions = BTreeSet::new();
    let mut others = BTreeSet::new();
    for text in [preprocess(&device, false, &fallback), preprocess(&[], false, &fallback)] {
        for (id, rest) in identifiers(&text) {
            if !(id.starts_with("nvshmem_") || id.starts_with("nvshmemx_") || id.starts_with("NVSHMEM")) {
                continue;
            }
            if rest.starts_with('(') && !id.starts_with("NVSHMEM") {
                functions.insert(id.to_string());
            } else {
                others.insert(id.to_string());
            }
        }
    }
    for text in [preprocess(&device, true, &fallback), preprocess(&[], true, &fallback)] {
        for line in text.lines() {
            if let Some(name) = line.strip_prefix("#define ").and_then(|l| l.split([' ', '(']).next()) {
                if name.starts_with("NVSHMEM") {
                    others.insert(name.to_string());
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&fallback);
    (functions, others)
}

const TYPES: &[&str] = &[
    "float",
    "double",
    "char",
    "schar",
    "short",
    "int",
    "long",
    "longlong",
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "ulonglong",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "size",
    "ptrdiff",
    "half",
    "bfloat16",
];
const OPS: &[&str] = &["sum", "prod", "min", "max", "and", "or", "xor"];

/// `nvshmem_int_p` -> `nvshmem_TYPE_p`, `nvshmemx_float_sum_reduce_block` ->
/// `nvshmemx_TYPE_OP_reduce_block`, `nvshmem_put64` -> `nvshmem_putSIZE`.
fn pattern(name: &str) -> String {
    let mut parts: Vec<String> = name.split('_').map(str::to_string).collect();
    if parts.len() > 2 && TYPES.contains(&parts[1].as_str()) {
        parts[1] = "TYPE".into();
        if parts.len() > 3 && OPS.contains(&parts[2].as_str()) {
            parts[2] = "OP".into();
        }
    }
    for p in parts.iter_mut() {
        for base in ["put", "get"] {
            if let Some(bits) = p.strip_prefix(base) {
                if ["8", "16", "32", "64", "128"].contains(&bits) {
                    *p = format!("{base}SIZE");
                }
            }
        }
    }
    parts.join("_")
}

/// The README block: one line per pattern, with how many names it stands for.
fn names_block(functions: &BTreeSet<String>, others: &BTreeSet<String>) -> String {
    let mut by_pattern: BTreeMap<String, usize> = BTreeMap::new();
    for f in functions {
        *by_pattern.entry(pattern(f)).or_default() += 1;
    }
    let mut block = String::from("Functions (pattern: how many names):\n\n```text\n");
    for (p, n) in &by_pattern {
        block += &format!("{p}: {n}\n");
    }
    block += "```\n\nConstants, types and macros:\n\n```text\n";
    for o in others {
        block += &format!("{o}\n");
    }
    block + "```\n"
}

const BEGIN: &str = "<!-- covered names: generated by tests/nvshmem_compat.rs -->\n";
const END: &str = "<!-- end of covered names -->\n";

#[test]
fn the_readme_lists_the_names_the_headers_define() {
    let (functions, others) = covered();
    for must in [
        "nvshmem_my_pe",
        "nvshmem_malloc",
        "nvshmem_uint64_atomic_fetch_add",
        "nvshmemx_putmem_nbi_block",
        "nvshmem_int_put_signal_nbi",
        "nvshmem_half_p",
        "nvshmem_bfloat16_g",
        "nvshmemx_half_put_block",
        "nvshmemx_bfloat16_put_signal_nbi_warp",
    ] {
        assert!(functions.contains(must), "{must} is not defined by the compatibility headers");
    }
    assert!(functions.len() > 1000, "only {} NVSHMEM functions found: the preprocessor pass lost the device API", functions.len());
    let block = names_block(&functions, &others);
    let path = compat().join("README.md");
    let readme = std::fs::read_to_string(&path).expect("read compat/nvshmem/README.md");
    let (head, rest) = readme.split_once(BEGIN).expect("README.md has the covered-names marker");
    let (_, tail) = rest.split_once(END).expect("README.md has the end marker");
    let want = format!("{head}{BEGIN}{block}{END}{tail}");
    if std::env::var_os("RSHMEM_BLESS").is_some() {
        std::fs::write(&path, &want).expect("write README.md");
        return;
    }
    assert!(
        readme == want,
        "compat/nvshmem/README.md's list of covered names is out of date: run \
         `RSHMEM_BLESS=1 cargo test -p rshmem-c --test nvshmem_compat`"
    );
}

fn compile(compiler: &str, args: &[&str], file: &Path) {
    let mut cmd = Command::new(compiler);
    include_args(cmd.args(args).args(["-fsyntax-only", "-Wall", "-Wextra", "-Werror"])).arg(file);
    run(&mut cmd, &format!("{compiler} {}", file.display()));
}

#[test]
fn the_headers_compile_as_c_and_cpp_host_code() {
    if !have_cuda_host_api() {
        eprintln!(
            "skipped: crates/rshmem-c/include/rshmemx_cuda.h (the C host API for GPU PEs) is absent, and the \
             compatibility layer's host side is written on it"
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("rshmem-nvshmem-cc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create a temporary folder");
    let program = "#include <nvshmem.h>\n#include <nvshmemx.h>\n\
        int main(void) {\n    nvshmem_init();\n    int *p = (int *)nvshmem_malloc(sizeof(int));\n    \
        nvshmem_int_p(p, nvshmem_my_pe(), (nvshmem_my_pe() + 1) % nvshmem_n_pes());\n    nvshmem_barrier_all();\n    \
        nvshmemx_barrier_all_on_stream(0);\n    nvshmem_free(p);\n    nvshmem_finalize();\n    return 0;\n}\n";
    let c = dir.join("program.c");
    let cpp = dir.join("program.cpp");
    std::fs::write(&c, program).expect("write program.c");
    std::fs::write(&cpp, program).expect("write program.cpp");
    compile("gcc", &["-std=c99"], &c);
    compile("gcc", &["-std=c11"], &compat().join("src/nvshmem_host.c"));
    compile("g++", &["-std=c++11"], &cpp);
    compile("g++", &["-std=c++17"], &cpp);
    let _ = std::fs::remove_dir_all(&dir);
}
