//! Builds the C and C++ test programs in `tests/c` with `oshcc`/`oshc++` (warnings are
//! errors, C11 and C++11, pedantic) and runs each under `oshrun` on 2 and 4 PEs with a
//! timeout; a program passes by its exit status. Also checks that bad arguments end the
//! job with a message naming the routine and the argument, that `shmem.h` is
//! warning-clean under clang too, and that every routine `shmem.h` declares is exported.

#[path = "../../rshmem/tests/common/mpirun.rs"]
mod mpirun;
use mpirun::mpirun;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

const C_FLAGS: &[&str] = &["-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O1", "-pthread"];
const CXX_FLAGS: &[&str] = &["-std=c++11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O1", "-pthread"];
/// Seconds a job may run before the launcher ends it.
const JOB_TIMEOUT: &str = "120";

fn bin_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_BIN_EXE_oshcc")).parent().expect("bin dir").to_path_buf();
    static SHARED_LIB: std::sync::Once = std::sync::Once::new();
    SHARED_LIB.call_once(|| place_shared_lib(&dir));
    dir
}

/// `cargo test` builds `libshmem.so` in `deps/` but (unlike `cargo build`) does not copy
/// it beside the binaries, where `oshcc` links it from: `oshcc` places the fresh one
/// there whenever it runs (here with `--showme`, before any test looks for it).
fn place_shared_lib(dir: &Path) {
    let out = Command::new(dir.join("oshcc")).arg("--showme").output().expect("run oshcc --showme");
    assert!(out.status.success(), "{}", text(&out));
    let target = dir.join("libshmem.so");
    assert!(target.exists(), "{} is missing: build the crate first", target.display());
}

fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("c")
}

fn out_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c-programs");
    std::fs::create_dir_all(&d).expect("create output dir");
    d
}

fn text(o: &Output) -> String {
    format!("--- stdout\n{}\n--- stderr\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Compiles `tests/c/<file>` and returns the program's path.
fn build(file: &str) -> PathBuf {
    build_with(file, &[])
}

/// [`build`] with more compiler arguments after the source (include folders, libraries).
fn build_with(file: &str, extra: &[String]) -> PathBuf {
    let cxx = file.ends_with(".cpp");
    let stem = Path::new(file).file_stem().expect("stem").to_string_lossy().into_owned();
    let exe = out_dir().join(stem);
    let driver = bin_dir().join(if cxx { "oshc++" } else { "oshcc" });
    let out = Command::new(&driver)
        .args(if cxx { CXX_FLAGS } else { C_FLAGS })
        .arg("-o")
        .arg(&exe)
        .arg(sources().join(file))
        .args(extra)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", driver.display()));
    assert!(out.status.success(), "{} {file} failed:\n{}", driver.display(), text(&out));
    exe
}

/// Runs `exe` as `n` PEs under `oshrun`, or under Open MPI's `mpirun` (the PMIx
/// bootstrap) when the suite runs with `RSHMEM_TEST_LAUNCHER=mpirun`.
fn oshrun(exe: &Path, n: usize, args: &[&str]) -> Output {
    let mut cmd = if std::env::var("RSHMEM_TEST_LAUNCHER").is_ok_and(|v| v == "mpirun") {
        let mut c = mpirun();
        c.args(["--timeout", JOB_TIMEOUT, "-np", &n.to_string()]);
        c.env_remove("RSHMEM_LAUNCHER_SOCK");
        c
    } else {
        let mut c = Command::new(env!("CARGO_BIN_EXE_oshrun"));
        c.args(["-np", &n.to_string(), "--timeout", JOB_TIMEOUT]);
        c
    };
    cmd.arg(exe).args(args).output().expect("run the launcher")
}

/// Runs one test program on each PE count.
fn program(file: &str, pes: &[usize]) {
    let exe = build(file);
    for &n in pes {
        let out = oshrun(&exe, n, &[]);
        assert!(out.status.success(), "{file} on {n} PEs exited with {:?}:\n{}", out.status.code(), text(&out));
    }
}

/// Every program in `tests/c`, so that none is forgotten.
const PROGRAMS: &[&str] = &[
    "setup.c",
    "memory.c",
    "rma.c",
    "p2p.c",
    "teams.c",
    "amo.c",
    "signals.c",
    "locks.c",
    "contexts.c",
    "active_set.c",
    "coll.c",
    "threads.c",
    "profiling.c",
    "cxx.cpp",
    "bad_args.c",
    "reduce_types.c",
    "generics.c",
    "sync_team.c",
    "pshmem_longdouble.c",
    "fairness.c",
    "ctx_invalid.c",
    "zero_length.c",
    "global_exit.c",
    "align.c",
    "host_memory.c",
    "shmemx.c",
    "cxx_conform.cpp",
    "sessions.c",
    "relay.c",
    "uniqueid.c",
    "mpi_comm.c",
    "gpu_over_cpu.c",
];

#[test]
fn every_program_is_listed() {
    let mut found: Vec<String> = std::fs::read_dir(sources())
        .expect("tests/c")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".c") || n.ends_with(".cpp"))
        .collect();
    found.sort();
    let mut listed: Vec<String> = PROGRAMS.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed, "tests/c and PROGRAMS differ");
}

/// NVSHMEM's GPU PEs over shmem_init's CPU PEs (`rshmemx_cuda_init_with_shmem`): without
/// a GPU every PE gets 1 and a message naming the PEs without one, and the CPU PEs run on;
/// with one, the GPU PEs start and finalize while the CPU PEs run on.
#[test]
fn gpu_pes_over_cpu_pes() {
    let exe = build("gpu_over_cpu.c");
    let out = oshrun(&exe, 2, &[]);
    let all = text(&out);
    assert!(out.status.success(), "gpu_over_cpu on 2 PEs exited with {:?}:\n{all}", out.status.code());
    if all.contains("no GPU PEs, CPU PEs ran on") {
        for pe in 0..2 {
            let want = format!("rshmem: PE {pe}: rshmemx_cuda_init_with_shmem: no GPU PEs can start: PEs 0, 1 see no CUDA device");
            assert!(all.contains(&want), "PE {pe}'s message is missing ({want}):\n{all}");
        }
    } else {
        assert!(all.contains("gpu_over_cpu: 2 PEs, GPU PEs started and finalized"), "no verdict line:\n{all}");
    }
}

#[test]
fn setup() {
    program("setup.c", &[2, 4]);
}

#[test]
fn memory() {
    program("memory.c", &[2, 4]);
}

#[test]
fn rma() {
    program("rma.c", &[2, 4]);
}

#[test]
fn p2p() {
    program("p2p.c", &[2, 4]);
}

#[test]
fn teams() {
    program("teams.c", &[2, 4]);
}

#[test]
fn amo() {
    program("amo.c", &[2, 4]);
}

#[test]
fn signals() {
    program("signals.c", &[2, 4]);
}

#[test]
fn locks() {
    program("locks.c", &[2, 4]);
}

#[test]
fn contexts() {
    program("contexts.c", &[2, 4]);
}

#[test]
fn active_set() {
    program("active_set.c", &[2, 3, 4]);
}

#[test]
fn coll() {
    program("coll.c", &[2, 3, 4]);
}

#[test]
fn threads() {
    program("threads.c", &[2, 4]);
}

#[test]
fn profiling() {
    program("profiling.c", &[2]);
}

#[test]
fn cxx() {
    program("cxx.cpp", &[2, 4]);
}

/// Issue 18, item 1: long double and complex reductions, scans and to_all forms.
#[test]
fn reduce_types() {
    program("reduce_types.c", &[2, 3, 4]);
}

/// Item 2: the C11 generics accept int32_t/int64_t bitwise atomics and int8_t..int64_t
/// bitwise reductions.
#[test]
fn generics() {
    program("generics.c", &[2, 3]);
}

/// Item 3: `shmem_sync(team)` beside the deprecated four-argument form.
#[test]
fn sync_team() {
    program("sync_team.c", &[2, 3]);
}

/// Item 4: the profiling names of long double p/g.
#[test]
fn pshmem_longdouble() {
    program("pshmem_longdouble.c", &[2]);
}

/// Item 5: the _any routines return every satisfied index in turn.
#[test]
fn fairness() {
    program("fairness.c", &[2]);
}

/// Item 6: quiet and fence on SHMEM_CTX_INVALID do nothing.
#[test]
fn ctx_invalid() {
    program("ctx_invalid.c", &[2]);
}

/// Item 7: zero-length transfers and collectives with null pointers do nothing.
#[test]
fn zero_length() {
    program("zero_length.c", &[2, 3]);
}

/// Item 8: `shmem_global_exit(status)` ends the job with `status`, 0 included.
#[test]
fn global_exit_status_is_the_jobs() {
    let exe = build("global_exit.c");
    for status in [0, 7] {
        let out = oshrun(&exe, 2, &[&status.to_string()]);
        assert_eq!(out.status.code(), Some(status), "global_exit({status}):\n{}", text(&out));
    }
}

/// No launcher: the program makes a unique id, forks its PEs, and they meet over TCP
/// (`shmemx_get_uniqueid`, `shmemx_init_uniqueid`). The launcher's variables are removed,
/// so nothing but the id tells the PEs where to meet.
#[test]
fn uniqueid_job_without_a_launcher() {
    let exe = build("uniqueid.c");
    for n in [1, 3] {
        let mut cmd = Command::new("timeout");
        cmd.args(["120", &exe.to_string_lossy(), &n.to_string()]).env("RSHMEM_BOOTSTRAP_TIMEOUT", "60");
        for v in ["RSHMEM_LAUNCHER_SOCK", "RSHMEM_PE", "RSHMEM_NPES", "RSHMEM_JOB_KEY", "PMIX_RANK", "PMIX_NAMESPACE", "RANK", "WORLD_SIZE"]
        {
            cmd.env_remove(v);
        }
        let out = cmd.output().expect("run uniqueid");
        assert!(out.status.success(), "uniqueid with {n} PEs exited with {:?}:\n{}", out.status.code(), text(&out));
        let want = format!("uniqueid: {n} PEs met through the id and checked");
        assert!(String::from_utf8_lossy(&out.stdout).contains(&want), "no `{want}`:\n{}", text(&out));
    }
    // Misuse ends the process with a message naming the call and the argument.
    for (case, words) in [
        ("bad-id", &["shmemx_init_uniqueid", "argument `id`", "rshmem-tcp1"][..]),
        ("bad-rank", &["shmemx_init_uniqueid", "argument `rank`", "not in [0, 2)"][..]),
        ("not-maker", &["shmemx_init_uniqueid", "argument `rank`", "made the id"][..]),
    ] {
        let out = Command::new("timeout").args(["60", &exe.to_string_lossy(), case]).output().expect("run uniqueid");
        let all = text(&out);
        assert!(!out.status.success() && out.status.code() != Some(3) && out.status.code() != Some(124), "case {case}:\n{all}");
        for w in words {
            assert!(all.contains(w), "case {case}: message does not contain `{w}`:\n{all}");
        }
    }
}

/// Open MPI's compile (`what` = "compile") or link flags from `mpicc --showme`, for the
/// programs that include `mpi.h`. Its include folder holds its own shmem.h: oshcc's folder
/// comes first, and MPI's is searched after the system's (-idirafter), so that only mpi.h
/// comes from it.
fn mpi_flags(what: &str) -> Vec<String> {
    let out = Command::new("mpicc").arg(format!("--showme:{what}")).output().expect("mpicc --showme");
    let flags = String::from_utf8_lossy(&out.stdout).split_whitespace().map(str::to_string).collect::<Vec<_>>();
    flags.into_iter().map(|f| f.strip_prefix("-I").map_or(f.clone(), |d| format!("-idirafter{d}"))).collect()
}

/// The PEs of an MPI communicator (`shmemx_init_mpi_comm`) whose order reverses
/// MPI_COMM_WORLD's, under Open MPI's mpirun; MPI is looked up at run time.
#[test]
fn mpi_communicator_start() {
    if !have("mpicc") || !have("mpirun") {
        println!("SKIPPED: no mpicc/mpirun (apt install openmpi-bin libopenmpi-dev)");
        return;
    }
    let mut extra = mpi_flags("compile");
    extra.extend(mpi_flags("link"));
    let exe = build_with("mpi_comm.c", &extra);
    for n in [2, 3] {
        let mut cmd = mpirun();
        cmd.args(["--timeout", JOB_TIMEOUT, "-np", &n.to_string()]).arg(&exe);
        cmd.env_remove("RSHMEM_LAUNCHER_SOCK").env("RSHMEM_BOOTSTRAP_TIMEOUT", "60");
        let out = cmd.output().expect("run mpirun");
        assert!(out.status.success(), "mpi_comm on {n} ranks exited with {:?}:\n{}", out.status.code(), text(&out));
        let want = format!("mpi_comm: {n} PEs from a reversed communicator, checked");
        assert!(String::from_utf8_lossy(&out.stdout).contains(&want), "no `{want}`:\n{}", text(&out));
    }
}

/// Item 9: alignments below the minimum round up to it.
#[test]
fn align() {
    program("align.c", &[2]);
}

/// Item 10: a plain C program stores to its symmetric memory from the host. On a GPU
/// host this is the check that C programs get host memory by default.
#[test]
fn host_memory() {
    program("host_memory.c", &[2]);
}

/// `rshmemx_relay_putmem` / `_getmem` on CPU PEs, every pair through the staged UCX
/// protocol (skipped, saying why, where libucp cannot be loaded).
#[test]
fn relay() {
    if let Err(e) = rshmem::ucx_available() {
        println!("SKIPPED: relays need the staged UCX protocol: {e}");
        return;
    }
    let exe = build("relay.c");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_oshrun"));
    cmd.args(["-np", "3", "--timeout", JOB_TIMEOUT]).arg(&exe);
    cmd.env("RSHMEM_TRANSPORT", "ucx").env("RSHMEM_UCX_PROTOCOL", "am").env("UCX_TLS", "tcp");
    let out = cmd.output().expect("run oshrun");
    assert!(out.status.success(), "relay.c on 3 PEs exited with {:?}:\n{}", out.status.code(), text(&out));
}

/// The shmemx.h extensions.
#[test]
fn shmemx() {
    program("shmemx.c", &[2, 3]);
}

/// OpenSHMEM 1.6 sessions: hints that change no result.
#[test]
fn sessions() {
    program("sessions.c", &[2]);
}

/// The C++ overloads of items 1 to 3.
#[test]
fn cxx_conform() {
    program("cxx_conform.cpp", &[2, 3]);
}

/// The bad-argument cases of `bad_args.c` and what each message must name.
const BAD: &[(&str, &[&str])] = &[
    ("pe", &["shmem_long_put", "`pe`", "PE 2 is out of range"]),
    ("negative_pe", &["shmem_long_p", "`pe`", "PE -1"]),
    ("not_symmetric", &["shmem_long_put", "`dest`", "not in the symmetric heap"]),
    ("past_end", &["shmem_long_put", "`dest`", "past the end"]),
    ("stride", &["shmem_long_iput", "`dst`"]),
    ("cmp", &["shmem_long_wait_until", "`cmp`"]),
    ("null_source", &["shmem_long_put", "`source`", "null"]),
    ("align", &["shmem_align", "`alignment`"]),
    ("free", &["shmem_free", "`ptr`"]),
    ("ctx", &["shmem_ctx_long_p", "`ctx`", "SHMEM_CTX_INVALID"]),
    ("misaligned", &["shmem_int_atomic_add", "`dest`", "aligned"]),
    ("sig_op", &["shmem_long_put_signal", "`sig_op`"]),
    ("unlock", &["shmem_clear_lock", "`lock`"]),
    ("psync", &["shmem_barrier", "`pSync`", "null"]),
    ("active_set", &["shmem_barrier", "`PE_size`"]),
];

#[test]
fn bad_arguments_end_the_job_with_a_message() {
    let exe = build("bad_args.c");
    for (case, words) in BAD {
        let out = oshrun(&exe, 2, &[case]);
        let all = text(&out);
        assert!(!out.status.success(), "case {case} succeeded:\n{all}");
        assert_ne!(out.status.code(), Some(3), "case {case} returned from the bad call:\n{all}");
        assert_ne!(out.status.code(), Some(124), "case {case} hung:\n{all}");
        for w in *words {
            assert!(all.contains(w), "case {case}: message does not contain `{w}`:\n{all}");
        }
    }
}

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Serializes the tests that write generated sources.
static GENERATED: Mutex<()> = Mutex::new(());

#[test]
fn header_is_warning_clean_under_clang() {
    if !have("clang") {
        assert!(std::env::var_os("CI").is_none(), "clang is missing in CI (.ci/run installs it)");
        eprintln!("clang not installed: skipping the clang header check");
        return;
    }
    let _g = GENERATED.lock().unwrap_or_else(|p| p.into_inner());
    for file in PROGRAMS {
        let uses_mpi = *file == "mpi_comm.c";
        if uses_mpi && !have("mpicc") {
            continue;
        }
        let cxx = file.ends_with(".cpp");
        let (driver, env, compiler) = if cxx { ("oshc++", "OSHCXX_CXX", "clang++") } else { ("oshcc", "OSHCC_CC", "clang") };
        let out = Command::new(bin_dir().join(driver))
            .env(env, compiler)
            .args(if cxx { CXX_FLAGS } else { C_FLAGS })
            .arg("-fsyntax-only")
            .arg(sources().join(file))
            .args(if uses_mpi { mpi_flags("compile") } else { Vec::new() })
            .output()
            .expect("run clang");
        assert!(out.status.success(), "{compiler} {file}:\n{}", text(&out));
    }
}

/// Every routine `shmem.h`, `pshmem.h` and `shmemx.h` declare.
fn all_declared() -> Vec<String> {
    let mut declared = shmem::header::declared_functions();
    declared.extend(shmem::header::profiling_functions());
    declared.extend(shmem::header::extension_functions());
    declared.extend(shmem::header::cuda_functions());
    declared
}

/// A C file that takes the address of every routine `shmem.h` declares: it links only if
/// libshmem exports them all.
#[test]
fn every_declared_routine_is_exported() {
    let _g = GENERATED.lock().unwrap_or_else(|p| p.into_inner());
    let declared = all_declared();
    let mut src = String::from(
        "#include <shmem.h>\n#include <pshmem.h>\n#include <shmemx.h>\n#include <rshmemx_cuda.h>\n#include <stdio.h>\ntypedef void (*fn_t)(void);\nstatic const fn_t all[] = {\n",
    );
    for f in &declared {
        src.push_str(&format!("    (fn_t){f},\n"));
    }
    src.push_str(
        "};\nint main(void) {\n    size_t n = 0;\n    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) n += all[i] != 0;\n",
    );
    src.push_str("    printf(\"%zu\\n\", n);\n    return 0;\n}\n");
    let dir = out_dir();
    let c = dir.join("all_routines.c");
    std::fs::write(&c, src).expect("write all_routines.c");
    let exe = dir.join("all_routines");
    let out = Command::new(bin_dir().join("oshcc")).args(C_FLAGS).arg("-o").arg(&exe).arg(&c).output().expect("oshcc");
    assert!(out.status.success(), "linking every declared routine failed:\n{}", text(&out));
    let run = Command::new(&exe).output().expect("run all_routines");
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), declared.len().to_string(), "{}", text(&run));
}

/// `rshmemx_cuda.h` compiles as C and as C++ without the CUDA headers (CI has none), with
/// `shmem.h` and `shmemx.h` beside it, and its stream type is the one `cudaStream_t` is.
#[test]
fn rshmemx_cuda_h_compiles_as_c_and_cxx() {
    let dir = out_dir();
    let src = "#include <rshmemx_cuda.h>\n#include <shmemx.h>\n\
               struct CUstream_st;\ntypedef struct CUstream_st *cudaStream_t;\n\
               int use(cudaStream_t s, float *d, const float *x) {\n\
               rshmemx_dim3 g = {1, 1, 1};\n    (void)g;\n\
               rshmemx_float_put_on_stream(d, x, 4, 1, s);\n\
               return rshmemx_float_sum_reduce_on_stream(SHMEM_TEAM_WORLD, d, x, 4, s);\n}\n";
    let inc = format!("-I{}", bin_dir().join("include").display());
    for (name, compiler, flags) in [("cuda_h.c", "cc", C_FLAGS), ("cuda_h.cpp", "c++", CXX_FLAGS)] {
        let file = dir.join(name);
        std::fs::write(&file, src).expect("write source");
        let out = Command::new(compiler).args(flags).arg(&inc).arg("-fsyntax-only").arg(&file).output().expect("run the compiler");
        assert!(out.status.success(), "{compiler} {name}:\n{}", text(&out));
    }
}

/// No routine is exported that the header does not declare (nm lists the library's
/// dynamic symbols).
#[test]
fn every_exported_routine_is_declared() {
    let lib = bin_dir().join("libshmem.so");
    let out = Command::new("nm").args(["-D", "--defined-only"]).arg(&lib).output().expect("run nm (binutils)");
    assert!(out.status.success(), "nm {}:\n{}", lib.display(), text(&out));
    let declared = all_declared();
    let listing = String::from_utf8_lossy(&out.stdout);
    let mut undeclared = Vec::new();
    let mut count = 0;
    for line in listing.lines() {
        let mut parts = line.split_whitespace().rev();
        let (Some(name), Some(kind)) = (parts.next(), parts.next()) else { continue };
        if kind != "T" {
            continue;
        }
        let ours = name.starts_with("shmem_")
            || name.starts_with("pshmem_")
            || name.starts_with("shmemx_")
            || name.starts_with("rshmemx_")
            || ["start_pes", "_my_pe", "_num_pes", "shmalloc", "shfree", "shrealloc", "shmemalign"].contains(&name);
        if ours {
            count += 1;
            if !declared.iter().any(|d| d == name) {
                undeclared.push(name.to_string());
            }
        }
    }
    assert!(undeclared.is_empty(), "exported but not declared in shmem.h or pshmem.h: {undeclared:?}");
    assert_eq!(count, declared.len(), "exported routines vs declared routines");
}
