//! Two hosts on one machine: two network namespaces joined by a veth pair, even PEs in
//! one, odd PEs in the other, every pair of PEs talking through UCX over TCP on the veth
//! link (`RSHMEM_TRANSPORT=ucx`). A 4-PE job across them runs the RMA, AMO and collective
//! test programs. Then the collectives again with the default transport and each
//! namespace named as a host (`RSHMEM_HOST`): PEs of one namespace share memory, the
//! decision tree picks the hierarchical algorithms (checked), and only the leaders'
//! steps cross the link. Needs root, iproute2 and UCX (CI has all three); elsewhere it is
//! skipped with the reason printed.

mod common;
use common::*;
use std::process::Command;

/// The two namespaces and their link; removed on drop.
struct Hosts {
    names: [String; 2],
    devs: [String; 2],
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| format!("ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

impl Hosts {
    fn create() -> Result<Hosts, String> {
        // The tests of this file run at once: each pair gets its own names.
        static PAIRS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let k = PAIRS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = std::process::id();
        let h = Hosts {
            names: [format!("rshmem-{id}-{k}a"), format!("rshmem-{id}-{k}b")],
            devs: [format!("rv{id}{k}a"), format!("rv{id}{k}b")],
        };
        for n in &h.names {
            ip(&["netns", "add", n])?;
        }
        ip(&["link", "add", &h.devs[0], "type", "veth", "peer", "name", &h.devs[1]])?;
        for (i, (n, d)) in h.names.iter().zip(&h.devs).enumerate() {
            let addr = format!("10.123.{}.{}/24", (id + k) % 200, i + 1);
            ip(&["link", "set", d, "netns", n])?;
            ip(&["-n", n, "addr", "add", &addr, "dev", d])?;
            ip(&["-n", n, "link", "set", d, "up"])?;
            ip(&["-n", n, "link", "set", "lo", "up"])?;
        }
        Ok(h)
    }

    /// A wrapper that runs its arguments as a PE in namespace PE mod 2.
    fn wrapper(&self) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("{}-pe.sh", self.names[0]));
        let script = format!(
            "#!/bin/sh\nif [ $((RSHMEM_PE % 2)) = 0 ]; then ns={}; dev={}; else ns={}; dev={}; fi\nexec ip netns exec $ns env UCX_NET_DEVICES=$dev RSHMEM_HOST=$ns \"$@\"\n",
            self.names[0], self.devs[0], self.names[1], self.devs[1]
        );
        std::fs::write(&p, script).expect("write wrapper");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod wrapper");
        p
    }

    /// Bytes received on the first namespace's end of the link.
    fn rx_bytes(&self) -> u64 {
        let path = format!("/sys/class/net/{}/statistics/rx_bytes", self.devs[0]);
        let out = Command::new("ip").args(["netns", "exec", &self.names[0], "cat", &path]).output().expect("ip netns exec");
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(0)
    }
    /// Takes the second namespace's end of the link down (`up: false`) or up again.
    fn set_link(&self, up: bool) {
        ip(&["-n", &self.names[1], "link", "set", &self.devs[1], if up { "up" } else { "down" }]).expect("ip link set");
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = ip(&["netns", "del", n]);
        }
    }
}

/// A 2-PE job (one PE per namespace) of `pe_launch transfer` over UCX: once both PEs have
/// moved data, `fault` runs; returns the job and the seconds from the fault to the end.
fn transfer_with_fault(hosts: &Hosts, env: &[(&str, &str)], fault: impl FnOnce()) -> (Job, f64) {
    use std::io::BufRead;
    let wrapper = hosts.wrapper();
    let prog = example("pe_launch");
    let mut child = rshmemrun_command(2, &wrapper, &[prog.to_str().expect("utf-8 path"), "transfer"], env, 240)
        .into_command()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start rshmemrun");
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let stderr = child.stderr.take().expect("piped");
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(stderr), &mut s);
        s
    });
    let started = std::time::Instant::now();
    loop {
        match rx.recv_timeout(std::time::Duration::from_secs(120)) {
            Ok(l) if l.contains("round 1 ") => break,
            Ok(_) => {}
            Err(_) => {
                let _ = child.kill();
                panic!("no transfer round within {:.0} s: {}", started.elapsed().as_secs_f64(), err_reader.join().unwrap_or_default());
            }
        }
    }
    fault();
    let t = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            break s;
        }
        if t.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the job did not end within 60 s of the fault");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let secs = t.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(wrapper);
    let job =
        Job { code: status.code().unwrap_or(-1), stdout: reader.join().unwrap_or_default(), stderr: err_reader.join().unwrap_or_default() };
    (job, secs)
}

#[test]
fn link_down_or_killed_pe_over_ucx_ends_the_job() {
    let Some(hosts) = hosts_or_skip() else { return };
    let ucx = [("RSHMEM_TRANSPORT", "ucx"), ("UCX_TLS", "tcp")];
    // The link goes down under 64 MiB puts: nothing fails at once (TCP retransmits for
    // minutes), every PE blocks in UCX, and the hang limit ends the job.
    let limit = 5.0;
    let env = [ucx[0], ucx[1], ("RSHMEM_HANG_TIMEOUT", "5")];
    let (job, secs) = transfer_with_fault(&hosts, &env, || hosts.set_link(false));
    hosts.set_link(true);
    assert_eq!(job.code, 124, "{}", job.stderr);
    assert!(job.stderr.contains("no progress for 5.0 s (RSHMEM_HANG_TIMEOUT)") && job.stderr.contains(": UCX "), "{}", job.stderr);
    assert!(secs < limit + 5.0, "ended {secs:.1} s after the link went down");
    println!("link down: the job ended {secs:.2} s after the fault (RSHMEM_HANG_TIMEOUT={limit})\n{}", job.stderr);
    // A PE killed during a 256 MiB put: the launcher ends the other at once.
    let pids = std::env::temp_dir().join(format!("rshmem-netns-pids-{}", std::process::id()));
    std::fs::create_dir_all(&pids).expect("pid dir");
    let env = [
        ucx[0],
        ucx[1],
        ("RSHMEM_TEST_PID_DIR", pids.to_str().expect("utf-8")),
        ("RSHMEM_TEST_TRANSFER_MB", "256"),
        ("RSHMEM_SYMMETRIC_SIZE", "512M"),
    ];
    let (job, secs) = transfer_with_fault(&hosts, &env, || {
        let pid: i32 = std::fs::read_to_string(pids.join("pe1")).expect("PE 1's pid").trim().parse().expect("pid");
        rustix::process::kill_process(rustix::process::Pid::from_raw(pid).expect("pid"), rustix::process::Signal::KILL).expect("kill PE 1");
    });
    let _ = std::fs::remove_dir_all(&pids);
    // Two ends are right, whichever comes first: the launcher sees PE 1 die and ends PE
    // 0, or PE 0's transfer to PE 1 fails (UCX sees the connection go) and PE 0 ends the
    // job with that error. Either way the job ends at once, saying why.
    let killed = job.code == 128 + 9
        && job.stderr.contains("PE 1 (pid")
        && job.stderr.contains("was killed by signal 9 (SIGKILL) before finalize; ending the other 1 PE(s)");
    let failed = job.code != 0 && job.stderr.contains("put of 268435456 bytes to PE 1") && job.stderr.contains("aborted the job");
    assert!(killed || failed, "exit code {}: {}", job.code, job.stderr);
    assert!(secs < 10.0, "ended {secs:.1} s after PE 1 was killed");
    println!("PE killed mid-transfer: the job ended {secs:.2} s after the kill\n{}", job.stderr);
}

/// The two namespaces, or `None` (the reason printed) where they cannot be made.
fn hosts_or_skip() -> Option<Hosts> {
    if let Some(why) = skip_reason() {
        println!("SKIPPED: {why}");
        return None;
    }
    Some(Hosts::create().expect("set up two network namespaces"))
}

fn skip_reason() -> Option<String> {
    if !rustix::process::getuid().is_root() {
        return Some("creating network namespaces needs root".into());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("iproute2 (`ip`) is not installed".into());
    }
    rshmem::ucx_available().err().map(|e| format!("UCX is not loadable: {e}"))
}

#[test]
fn four_pes_across_two_namespaces_over_ucx_tcp() {
    let Some(hosts) = hosts_or_skip() else { return };
    let wrapper = hosts.wrapper();
    let before = hosts.rx_bytes();
    let ucx = [("RSHMEM_TRANSPORT", "ucx"), ("UCX_TLS", "tcp")];
    let by_host = [("RSHMEM_TRANSPORT", "auto"), ("UCX_TLS", "tcp")];
    for (name, args, checks, env) in [
        ("pe_rma", &[][..], rma_checks(), &ucx),
        ("pe_amo", &["table"][..], amo_table_checks(), &ucx),
        ("pe_coll", &[][..], coll_checks(false), &ucx),
        ("pe_coll", &["expect-hier"][..], coll_checks(true), &by_host),
    ] {
        let prog = example(name);
        let mut full: Vec<&str> = vec![prog.to_str().expect("utf-8 path")];
        full.extend_from_slice(args);
        // Always rshmemrun: under mpirun the PEs would have to reach its PMIx server over
        // the root namespace's loopback TCP, which another network namespace does not have.
        let job = rshmemrun_command(4, &wrapper, &full, env, 240).run();
        job.assert_all(4, &checks);
        if args == ["expect-hier"] {
            let plan = job.check(0, "hier.plan").detail;
            assert_eq!(plan, "the decision tree picks the hierarchical forms on hosts [[0, 2], [1, 3]]", "{name}");
        }
    }
    let moved = hosts.rx_bytes() - before;
    // The programs move megabytes between the namespaces; a few KiB would mean the
    // traffic did not cross the link.
    assert!(moved > 1 << 20, "only {moved} bytes crossed the veth link");
    println!("{moved} bytes crossed the veth link between the two namespaces");
    let _ = std::fs::remove_file(wrapper);
}
