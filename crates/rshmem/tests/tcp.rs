//! The TCP bootstrap (src/bootstrap/tcp.rs) in real jobs: N processes started the way
//! torchrun starts them (`RANK`, `WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`, no launcher
//! of ours), running the ring, RMA, AMO and heap-growth programs (the last passes every
//! new segment's descriptor through /proc), and a killed PE and `global_exit` ending the
//! whole job. Every job runs under a deadline and is killed past it.

mod common;
use common::*;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port nobody listens on right now (the OS's pick for port 0).
fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0)).expect("bind port 0").local_addr().expect("local_addr").port()
}

/// Runs `example` as `n` processes with torchrun's environment, like torchrun would: each
/// process's output is collected, the job's status is the first non-zero one, and every
/// process still running after `timeout` is killed (status 124).
fn tcp_job(n: usize, example_name: &str, args: &[&str], env: &[(&str, &str)], timeout: Duration) -> Job {
    let dir = std::env::temp_dir().join(format!("rshmem-tcp-test-{}-{}", std::process::id(), free_port()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (master, ours) = (free_port(), free_port());
    let mut children: Vec<Child> = (0..n)
        .map(|rank| {
            let mut cmd = Command::new(example(example_name));
            cmd.args(args)
                .env_remove("RSHMEM_LAUNCHER_SOCK")
                .env_remove("PMIX_RANK")
                .env_remove("PMIX_NAMESPACE")
                .env("RANK", rank.to_string())
                .env("LOCAL_RANK", rank.to_string())
                .env("WORLD_SIZE", n.to_string())
                .env("MASTER_ADDR", "127.0.0.1")
                .env("MASTER_PORT", master.to_string())
                .env("RSHMEM_BOOTSTRAP_PORT", ours.to_string())
                .env("RSHMEM_BOOTSTRAP_TIMEOUT", "60")
                .stdin(Stdio::null())
                .stdout(std::fs::File::create(dir.join(format!("{rank}.out"))).expect("stdout file"))
                .stderr(std::fs::File::create(dir.join(format!("{rank}.err"))).expect("stderr file"));
            for (k, v) in env {
                cmd.env(k, v);
            }
            cmd.spawn().expect("start a PE")
        })
        .collect();
    let deadline = Instant::now() + timeout;
    let mut codes: Vec<Option<i32>> = vec![None; n];
    while codes.iter().any(|c| c.is_none()) {
        for (c, child) in codes.iter_mut().zip(children.iter_mut()) {
            if c.is_none() {
                if let Some(status) = child.try_wait().expect("try_wait") {
                    *c = Some(status.code().unwrap_or(-1));
                }
            }
        }
        if Instant::now() >= deadline {
            for (c, child) in codes.iter_mut().zip(children.iter_mut()) {
                if c.is_none() {
                    let _ = child.kill();
                    let _ = child.wait();
                    *c = Some(124);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let read = |name: String| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    let job = Job {
        code: codes.iter().map(|c| c.expect("finished")).find(|&c| c != 0).unwrap_or(0),
        stdout: (0..n).map(|r| read(format!("{r}.out"))).collect(),
        stderr: (0..n).map(|r| format!("--- PE {r}\n{}", read(format!("{r}.err")))).collect(),
    };
    let _ = std::fs::remove_dir_all(&dir);
    job
}

#[test]
fn ring_rma_and_amo_over_the_tcp_bootstrap() {
    for n in [2, 3] {
        let job = tcp_job(n, "ring", &[], &[], Duration::from_secs(120));
        job.assert_ok();
        assert!(job.stdout.contains(&format!("ring of {n} PEs: all data arrived intact")), "{}", job.stdout);
    }
    tcp_job(2, "pe_rma", &[], &[], Duration::from_secs(120)).assert_all(2, &rma_checks());
    tcp_job(3, "pe_amo", &["table"], &[], Duration::from_secs(120)).assert_all(3, &amo_table_checks());
}

#[test]
fn heap_growth_passes_descriptors_through_proc_over_tcp() {
    // A 2 MiB initial heap that must grow: every new segment's descriptor goes through
    // allgather_fd, i.e. (pid, fd) over TCP and /proc/<pid>/fd/<fd>.
    let env = [("RSHMEM_SYMMETRIC_SIZE", "2M"), ("RSHMEM_MAX_SYMMETRIC_SIZE", "96M")];
    let job = tcp_job(2, "pe_heap", &[], &env, Duration::from_secs(120));
    job.assert_passed(2);
}

#[test]
fn a_killed_pe_and_global_exit_end_a_tcp_job() {
    // PE 2 kills itself while the others wait in a barrier: PE 0 sees its connection
    // close before finalize and ends every PE, well before the deadline.
    let started = Instant::now();
    let job = tcp_job(3, "pe_launch", &["die"], &[], Duration::from_secs(60));
    assert_ne!(job.code, 0, "{}", job.stdout);
    assert_ne!(job.code, 124, "the job ended by itself\n{}", job.stderr);
    assert!(job.stderr.contains("PE 2 closed its bootstrap connection before finalize"), "{}", job.stderr);
    assert!(started.elapsed() < Duration::from_secs(50));
    // global_exit(7) on PE 1 ends every PE with status 7.
    let job = tcp_job(3, "pe_launch", &["global-exit"], &[], Duration::from_secs(60));
    assert_eq!(job.code, 7, "{}\n{}", job.stdout, job.stderr);
    assert!(job.stderr.contains("global_exit(7) called on PE 1"), "{}", job.stderr);
}

#[test]
fn a_torchrun_environment_without_a_master_is_an_error() {
    let out = Command::new(example("ring"))
        .env_remove("RSHMEM_LAUNCHER_SOCK")
        .env_remove("MASTER_ADDR")
        .env("RANK", "0")
        .env("WORLD_SIZE", "2")
        .env("MASTER_PORT", "29500")
        .output()
        .expect("start ring");
    let job = finish(out);
    assert_ne!(job.code, 0, "{}", job.stdout);
    assert!(job.stderr.contains("MASTER_ADDR is not"), "{}", job.stderr);
    // WORLD_SIZE 1 is a single PE.
    let out = Command::new(example("ring")).env_remove("RSHMEM_LAUNCHER_SOCK").env("RANK", "0").env("WORLD_SIZE", "1").output();
    finish(out.expect("start ring")).assert_ok();
}
