//! Open MPI's `mpirun` for the test suites (shared with rshmem-c's through `#[path]`).

use std::process::Command;

/// `mpirun` as root, oversubscribing, with a session directory of its own: two mpiruns of
/// one test binary starting at once raced to create the shared /tmp/ompi.HOST.UID, and
/// one failed ("File exists").
pub fn mpirun() -> Command {
    static JOBS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = JOBS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let session = std::env::temp_dir().join(format!("rshmem-test-mpirun-tmp-{}-{k}", std::process::id()));
    let _ = std::fs::create_dir_all(&session);
    let mut c = Command::new("mpirun");
    c.args(["--allow-run-as-root", "--oversubscribe", "--mca", "orte_tmpdir_base"]).arg(session);
    c
}
