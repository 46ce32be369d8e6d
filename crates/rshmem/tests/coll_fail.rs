//! Collectives that go wrong: differing arguments are reported naming the PE (with the
//! full argument check on, and by the always-on check with it off), bad arguments are errors, and a PE that exits or is killed in the
//! middle of a collective ends the job with a message instead of a hang (rshmemrun's message,
//! or mpirun's when the suite runs under it) (tests/pe/coll_fail.rs).

mod common;
use common::*;
use std::time::Instant;

#[test]
fn differing_arguments_name_the_pe() {
    let job = run_env(4, "pe_coll_fail", &["mismatch"], &[("RSHMEM_COLL_CHECK", "1")], 120);
    job.assert_all(4, &names(&[&["mismatch"], &["1", "2", "3", "4", "5", "6", "7", "8", "teams_still_work"]]));
    for (pe, case, message) in [
        (3, 1, "reduce: argument `nreduce` differs between PEs: PE 1 passed 8, PE 0 passed 7"),
        (0, 2, "broadcast: argument `PE_root` differs between PEs: PE 2 passed 1, PE 0 passed 0"),
        (1, 3, "reduce: argument `op` differs between PEs: PE 3 passed max, PE 0 passed sum"),
        (2, 4, "reduce: argument `type` differs between PEs: PE 1 passed i32, PE 0 passed i64"),
        (2, 5, "fcollect: argument `(collective called)` differs between PEs: PE 2 passed fcollect, PE 0 passed broadcast"),
        (2, 7, "broadcast: argument `PE_root`: PE 99 is out of range"),
        (0, 7, "broadcast: argument `(arguments)` differs between PEs: PE 2 passed arguments it rejected"),
        (3, 8, "fcollectmem: argument `nbytes` differs between PEs: PE 3 passed 16, PE 2 passed 8"),
    ] {
        let detail = job.check(pe, &format!("mismatch.{case}")).detail;
        assert!(detail.starts_with(message), "mismatch {case} on PE {pe}: `{detail}`, expected `{message}`");
    }
}

/// Asserts the outcome of `pe_coll_fail cheap` (tests/pe/coll_fail.rs): every PE's errors
/// name the call and the PEs, and the argument with both values where both PEs failed.
fn assert_cheap(job: &Job, what: &str) {
    job.assert_all(
        4,
        &names(&[&["cheap"], &["1", "2", "3", "4", "5", "world_still_works", "broadcast_still_works", "fcollect_still_works"]]),
    );
    let detail = |pe: usize, case: usize| job.check(pe, &format!("cheap.{case}")).detail;
    let expect = |pe: usize, case: usize, message: &str| {
        let d = detail(pe, case);
        assert!(d.starts_with(message), "{what}: PE {pe}, case {case}: `{d}`, expected `{message}`");
    };
    // The named messages, worded as the full check words them (this PE as the reference).
    expect(0, 1, "reduce: argument `nreduce` differs between PEs: PE 1 passed 8, PE 0 passed 7");
    expect(2, 2, "broadcast: argument `PE_root` differs between PEs: PE 0 passed 1, PE 2 passed 0");
    expect(3, 4, "fcollectmem: argument `nbytes` differs between PEs: PE 2 passed 16, PE 3 passed 8");
    expect(0, 5, "alltoall: argument `element bytes (alltoall: block bytes)` differs between PEs: PE 3 passed 16, PE 0 passed 8");
    let d = detail(1, 1);
    assert!(d.starts_with("reduce: argument `nreduce` differs between PEs: PE ") && d.contains("PE 1 passed 8"), "{what}: {d}");
    // PE 2, alone with root 1, names a PE it waited for and itself: with both values when
    // that PE failed too, else with its own arguments.
    let d = detail(2, 3);
    assert!(d.starts_with("broadcast: argument `") && (d.contains("PE 2 passed 1") || d.contains("PE_root 1")), "{what}: {d}");
}

#[test]
fn differing_arguments_are_errors_without_the_full_check() {
    // Unset means off in a release build (in a debug build it means the full check, which
    // `differing_arguments_name_the_pe` covers); 0 is off in either.
    let settings: &[&str] = if cfg!(debug_assertions) { &["0"] } else { &["", "0"] };
    for &check in settings {
        let job = run_env(4, "pe_coll_fail", &["cheap"], &[("RSHMEM_COLL_CHECK", check), ("RSHMEM_WAIT_WARN", "20")], 120);
        assert_cheap(&job, &format!("RSHMEM_COLL_CHECK={check}"));
    }
    // Every algorithm carries the check (on both transports when the suite runs over UCX).
    for algo in ["broadcast=tree,fcollect=ring,reduce=ring", "reduce=rsag", "broadcast=hier,fcollect=hier,reduce=hier"] {
        let env = [("RSHMEM_COLL_CHECK", "0"), ("RSHMEM_COLL_ALGO", algo), ("RSHMEM_WAIT_WARN", "20")];
        assert_cheap(&run_env(4, "pe_coll_fail", &["cheap"], &env, 120), algo);
    }
}

#[test]
fn differing_arguments_are_errors_without_the_full_check_across_hosts() {
    if let Err(e) = rshmem::ucx_available() {
        println!("SKIPPED: hosts apart need UCX: {e}");
        return;
    }
    // Two simulated hosts (RSHMEM_HOST), contiguous and interleaved: the hierarchical
    // algorithms, members over shared memory, leaders over UCX.
    for host_of in ["PE / 2", "PE % 2"] {
        let script = format!("PE=${{RSHMEM_PE:-$PMIX_RANK}}; RSHMEM_HOST=h$(({host_of})) exec \"$0\" \"$@\"");
        let prog = example("pe_coll_fail");
        let args = ["-c", &script, prog.to_str().expect("utf-8 path"), "cheap"];
        let env = [("RSHMEM_TRANSPORT", "auto"), ("UCX_TLS", "tcp"), ("RSHMEM_COLL_CHECK", "0"), ("RSHMEM_WAIT_WARN", "20")];
        let job = run_program_env(4, std::path::Path::new("/bin/sh"), &args, &env, 120);
        assert_cheap(&job, &format!("hosts {host_of}"));
    }
}

#[test]
fn bad_arguments_are_errors_with_and_without_the_check() {
    for check in ["0", "1"] {
        let job = run_env(3, "pe_coll_fail", &["errors"], &[("RSHMEM_COLL_CHECK", check)], 120);
        job.assert_all(3, &names(&[&["error"], &["1", "2", "3", "4", "5", "6", "7", "8", "world_still_works"]]));
        let detail = job.check(1, "error.2").detail;
        assert!(detail.starts_with("reduce: argument `op`: xor is not defined on f64 (on PE 1)"), "{detail}");
    }
}

#[test]
fn pe_exiting_inside_a_collective_ends_the_job() {
    let t = Instant::now();
    // RSHMEM_WAIT_WARN=1: the survivors' waits inside the all-reduce are the futex-backed
    // waits of transport::notify, which log what they wait for after 1 s.
    let job = run_processes_env(4, "pe_coll_fail", &["die"], &[("RSHMEM_WAIT_WARN", "1")], 60);
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(job.code, 7, "the dead PE's status: {}", job.stderr);
    if under_mpirun() {
        // mpirun ends the job itself and names the process and its status.
        assert!(job.stderr.contains("Exit code:    7") && job.stderr.contains(",1],3]"), "{}", job.stderr);
    } else {
        assert!(
            job.stderr.contains("PE 3 (pid") && job.stderr.contains("exited with status 7 before finalize; ending the other 3 PE(s)"),
            "{}",
            job.stderr
        );
    }
    // The warning comes once the wait passes 1 s; a loaded machine may wake later, so the
    // count of seconds it prints is not pinned.
    let warned = job.stderr.lines().any(|l| {
        l.split_once("still waiting after ")
            .and_then(|(_, rest)| rest.split_once(" s for reduce on PE 0 (collective 21 of its team)"))
            .is_some_and(|(secs, _)| secs.parse::<u64>().is_ok_and(|s| s >= 1))
    });
    assert!(warned, "no wait warning from PE 0: {}", job.stderr);
    assert!(secs < 15.0, "job took {secs:.1} s to end");
}

#[test]
fn pe_killed_inside_a_ring_allreduce_ends_the_job() {
    let t = Instant::now();
    let job = run_processes_env(4, "pe_coll_fail", &["kill"], &[("RSHMEM_COLL_ALGO", "reduce=ring")], 60);
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(job.code, 128 + 9, "{}", job.stderr);
    if under_mpirun() {
        assert!(job.stderr.contains("process rank 3 with PID") && job.stderr.contains("signal 9"), "{}", job.stderr);
    } else {
        assert!(
            job.stderr.contains("PE 3 (pid") && job.stderr.contains("was killed by signal 9 (SIGKILL) before finalize"),
            "{}",
            job.stderr
        );
    }
    assert!(secs < 15.0, "job took {secs:.1} s to end");
}

#[test]
fn unknown_algorithm_fails_init() {
    let job = run_env(2, "pe_coll_fail", &["errors"], &[("RSHMEM_COLL_ALGO", "reduce=fast")], 60);
    assert_ne!(job.code, 0);
    assert!(
        job.stderr.contains("RSHMEM_COLL_ALGO")
            && job.stderr.contains("`fast` is not an algorithm of reduce (valid: oneshot, rsag, ring, hier, push)"),
        "{}",
        job.stderr
    );
}
