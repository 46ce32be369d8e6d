//! The launcher (rshmemrun itself, whichever launcher the rest of the suite runs under):
//! real processes, exit codes, dead PEs, timeouts, refused connections.

mod common;
use common::*;
use std::os::unix::process::ExitStatusExt;
use std::time::Instant;

#[test]
fn ring_runs_on_1_2_4_8_pes() {
    for n in [1, 2, 4, 8] {
        let job = run_rshmemrun_env(n, "ring", &[], &[], 120);
        job.assert_ok();
        assert!(job.stdout.contains(&format!("ring of {n} PEs: all data arrived intact")), "{}", job.stdout);
        assert_eq!(job.stdout.matches("checked").count(), n, "every PE reports: {}", job.stdout);
    }
}

#[test]
fn program_without_launcher_is_one_pe() {
    let out = std::process::Command::new(example("ring")).env_remove("RSHMEM_LAUNCHER_SOCK").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("ring of 1 PEs"));
}

#[test]
fn dead_pe_ends_the_others_and_is_named() {
    let t = Instant::now();
    let job = run_rshmemrun_env(4, "pe_launch", &["die"], &[], 120);
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(job.code, 128 + 9, "exit code is the dead PE's (SIGKILL): {}", job.stderr);
    assert!(job.stderr.contains("PE 2 (pid"), "names the PE: {}", job.stderr);
    assert!(job.stderr.contains("was killed by signal 9 (SIGKILL) before finalize"), "says how: {}", job.stderr);
    assert!(job.stderr.contains("ending the other 3 PE(s)"), "{}", job.stderr);
    // The survivors sit in a barrier for 60 s unless ended; the job must end far sooner.
    assert!(secs < 10.0, "job took {secs:.1} s to end");
}

#[test]
fn nonzero_exit_status_is_forwarded() {
    let job = run_rshmemrun_env(3, "pe_launch", &["exit3"], &[], 120);
    assert_eq!(job.code, 3, "{}", job.stderr);
    assert!(job.stderr.contains("PE 1 (pid") && job.stderr.contains("exited with status 3"), "{}", job.stderr);
}

#[test]
fn timeout_ends_a_hung_job() {
    let t = Instant::now();
    let job = run_rshmemrun_env(2, "pe_launch", &["hang"], &[], 2);
    assert_eq!(job.code, 124, "{}", job.stderr);
    assert!(job.stderr.contains("exceeded --timeout 2 s"), "{}", job.stderr);
    assert!(t.elapsed().as_secs_f64() < 8.0);
}

#[test]
fn wrong_key_is_refused() {
    let job = run_rshmemrun_env(2, "pe_launch", &["wrong-key"], &[], 120);
    assert_ne!(job.code, 0);
    assert!(job.stderr.contains("wrong job key"), "{}", job.stderr);
}

#[test]
fn output_can_be_tagged() {
    let out =
        std::process::Command::new(rshmemrun()).args(["-n", "2", "--tag-output", "--timeout", "60"]).arg(example("ring")).output().unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.lines().all(|l| l.starts_with("[PE 0] ") || l.starts_with("[PE 1] ")), "{s}");
}

#[test]
fn exit_right_after_finalize_is_clean() {
    // PE 0 exits while the others still run: its Finalize frame and its exit reach the
    // launcher by different threads, and the launcher must not call that a death.
    for _ in 0..8 {
        let job = run_rshmemrun_env(4, "pe_launch", &["linger"], &[], 120);
        assert_eq!(job.code, 0, "{}", job.stderr);
        assert!(!job.stderr.contains("before finalize"), "{}", job.stderr);
    }
}

// ----- issue 24: liveness, launcher death, output, rendezvous hardening -----

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Where launchers make their rendezvous directories.
fn rendezvous_base() -> PathBuf {
    std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|p| p.is_dir()).unwrap_or_else(std::env::temp_dir)
}

/// The rendezvous directories of launcher `pid`.
fn dirs_of(pid: u32) -> Vec<PathBuf> {
    let prefix = format!("rshmem-{pid}-");
    std::fs::read_dir(rendezvous_base())
        .map(|d| d.flatten().filter(|e| e.file_name().to_string_lossy().starts_with(&prefix)).map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// Polls `done` every 20 ms until it holds; panics with `what` after `limit`.
fn wait_for(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let t = Instant::now();
    while !done() {
        assert!(t.elapsed() < limit, "gave up after {:.0} s waiting for {what}", limit.as_secs_f64());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether process `pid` is gone (a zombie counts as gone: it runs no code).
fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Waits for a spawned launcher, killing it (and failing) after `limit`.
fn wait_child(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            return s;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("the launcher did not end within {:.0} s", limit.as_secs_f64());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Collects a stream's lines on a thread, each with the time since `t0` it arrived.
fn timed_lines(stream: impl std::io::Read + Send + 'static, t0: Instant) -> std::thread::JoinHandle<Vec<(Duration, String)>> {
    std::thread::spawn(move || BufReader::new(stream).lines().map_while(Result::ok).map(|l| (t0.elapsed(), l)).collect())
}

#[test]
fn stopped_pe_ends_the_job_within_the_hang_limit_with_a_report() {
    let limit = 3.0;
    let t0 = Instant::now();
    // Shared memory even in the suite's UCX pass: a waiter names the member that has not
    // entered the barrier by reading the epoch words of the peers it maps (over UCX it
    // names the partner whose signal it waits for instead).
    let env = [("RSHMEM_HANG_TIMEOUT", "3"), ("RSHMEM_TRANSPORT", "local")];
    let mut child = rshmemrun_command(4, &example("pe_launch"), &["stop"], &env, 60)
        .into_command()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start rshmemrun");
    let err = timed_lines(child.stderr.take().expect("piped"), t0);
    let out = timed_lines(child.stdout.take().expect("piped"), t0);
    let status = wait_child(&mut child, Duration::from_secs(60));
    let ended = t0.elapsed();
    let (err, _) = (err.join().expect("stderr"), out.join().expect("stdout"));
    let text: String = err.iter().map(|(_, l)| format!("{l}\n")).collect();
    assert_eq!(status.code(), Some(124), "{text}");
    assert!(text.contains("no progress for 3.0 s (RSHMEM_HANG_TIMEOUT): PE(s) 3 stopped"), "{text}");
    assert!(text.contains("PE 3 (pid") && text.contains(", stopped for "), "the stopped PE is named: {text}");
    for pe in 0..3 {
        let line = format!("PE {pe} (pid");
        let waits = format!("barrier_all on PE {pe} (waiting for PE 3, which has not entered barrier 1 of its team");
        assert!(text.contains(&line) && text.contains(&waits), "PE {pe} waits for PE 3 by name: {text}");
    }
    // PE 3 stops about 0.1 s after init; the whole job, start-up included, ends well
    // within the limit plus two seconds.
    assert!(ended.as_secs_f64() < limit + 2.0 + 1.0, "the job took {:.1} s", ended.as_secs_f64());
    println!("hang limit {limit} s: job ended after {:.2} s in all\n{text}", ended.as_secs_f64());
}

#[test]
fn waits_name_the_missing_pe_and_the_launcher_notices_a_stopped_pe() {
    // No hang limit: the warnings say who is missing; --timeout ends the job.
    // Shared memory even in the UCX pass (see the test above).
    let job = run_rshmemrun_env(4, "pe_launch", &["stop"], &[("RSHMEM_WAIT_WARN", "1"), ("RSHMEM_TRANSPORT", "local")], 4);
    assert_eq!(job.code, 124, "{}", job.stderr);
    for pe in 0..3 {
        let warn = format!("barrier_all on PE {pe} (waiting for PE 3, which has not entered barrier 1");
        assert!(job.stderr.contains(&warn), "PE {pe} names PE 3: {}", job.stderr);
    }
    assert!(job.stderr.contains("PE 3 (pid") && job.stderr.contains("has been stopped for 1 s"), "{}", job.stderr);
}

#[test]
fn pe_spinning_outside_rshmem_is_reported_running() {
    let job = run_rshmemrun_env(3, "pe_launch", &["spin"], &[("RSHMEM_HANG_TIMEOUT", "2")], 60);
    assert_eq!(job.code, 124, "{}", job.stderr);
    assert!(job.stderr.contains("blocked; ending the job. Who waits on whom:"), "{}", job.stderr);
    assert!(
        job.stderr.lines().any(|l| l.contains("PE 2 (pid") && l.contains("running") && l.ends_with("not blocked in rshmem")),
        "{}",
        job.stderr
    );
    assert!(job.stderr.contains("barrier_all on PE 0 (waiting for PE 2"), "{}", job.stderr);
}

#[test]
fn killed_launcher_leaves_no_directory_and_no_pe() {
    let pid_dir = std::env::temp_dir().join(format!("rshmem-test-pids-{}", std::process::id()));
    for (sig, name) in [
        (rustix::process::Signal::INT, "SIGINT"),
        (rustix::process::Signal::TERM, "SIGTERM"),
        (rustix::process::Signal::HUP, "SIGHUP"),
        (rustix::process::Signal::KILL, "SIGKILL"),
    ] {
        let _ = std::fs::remove_dir_all(&pid_dir);
        std::fs::create_dir_all(&pid_dir).unwrap();
        let dir_env = pid_dir.to_str().unwrap();
        let mut child = rshmemrun_command(4, &example("pe_launch"), &["pids"], &[("RSHMEM_TEST_PID_DIR", dir_env)], 120)
            .into_command()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start rshmemrun");
        let launcher = child.id();
        wait_for(Duration::from_secs(30), "every PE to write its pid", || (0..4).all(|pe| pid_dir.join(format!("pe{pe}")).exists()));
        let pids: Vec<u32> = (0..4).map(|pe| std::fs::read_to_string(pid_dir.join(format!("pe{pe}"))).unwrap().parse().unwrap()).collect();
        // Even PEs join (and wait in init for the odd ones, which never call it).
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(dirs_of(launcher).len(), 1, "{name}: the job's directory exists while it starts");
        rustix::process::kill_process(rustix::process::Pid::from_raw(launcher as i32).unwrap(), sig).unwrap();
        let status = wait_child(&mut child, Duration::from_secs(15));
        let mut stderr = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        wait_for(Duration::from_secs(10), &format!("every PE to end after the launcher got {name}"), || {
            pids.iter().all(|&p| process_gone(p))
        });
        wait_for(Duration::from_secs(10), &format!("the directory to go after {name}"), || dirs_of(launcher).is_empty());
        if sig == rustix::process::Signal::KILL {
            assert_eq!(status.signal(), Some(9), "{stderr}");
        } else {
            assert_eq!(status.code(), Some(128 + sig.as_raw()), "{name}: {stderr}");
            assert!(stderr.contains(&format!("({name}); ending PE(s) 0, 1, 2, 3")), "{name}: {stderr}");
        }
    }
    let _ = std::fs::remove_dir_all(&pid_dir);
}

#[test]
fn stale_directory_of_a_gone_launcher_is_removed() {
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let stale = rendezvous_base().join(format!("rshmem-{dead}-5ca1ab1e"));
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("lock"), b"").unwrap();
    std::fs::write(stale.join("rendezvous.sock"), b"").unwrap();
    run_rshmemrun_env(1, "ring", &[], &[], 60).assert_ok();
    assert!(!stale.exists(), "{} left behind", stale.display());
}

#[test]
fn two_pes_printing_10000_lines_each_keep_every_line_whole() {
    let n = 10_000;
    let job = run_rshmemrun_env(2, "pe_launch", &["lines", &n.to_string()], &[], 120);
    job.assert_ok();
    let mut seen = [vec![false; n], vec![false; n]];
    for line in job.stderr.lines() {
        let mut w = line.split(' ');
        let (Some("PE"), Some(pe), Some("line"), Some(i), Some(xs), Some("end"), None) =
            (w.next(), w.next(), w.next(), w.next(), w.next(), w.next(), w.next())
        else {
            panic!("a line not whole: `{line}`");
        };
        let (pe, i): (usize, usize) = (pe.parse().unwrap(), i.parse().unwrap());
        assert!(xs.len() == i % 97 && xs.bytes().all(|b| b == b'x'), "a line not whole: `{line}`");
        assert!(!seen[pe][i], "line {i} of PE {pe} twice");
        seen[pe][i] = true;
    }
    assert!(seen.iter().all(|s| s.iter().all(|&x| x)), "lines missing");
}

#[test]
fn last_line_of_a_killed_pe_is_flushed_with_a_mark() {
    for tag in [false, true] {
        let mut cmd = rshmemrun_command(3, &example("pe_launch"), &["partial"], &[], 60).into_command();
        if tag {
            cmd = Command::new(rshmemrun());
            cmd.args(["-n", "3", "--tag-output", "--timeout", "60"]).arg(example("pe_launch")).arg("partial");
        }
        let job = finish(cmd.output().unwrap());
        assert_eq!(job.code, 137, "{}", job.stderr);
        let prefix = if tag { "[PE 1] " } else { "" };
        let marked = format!("{prefix}unfinished line [rshmemrun: PE 1 was killed by signal 9 (SIGKILL) mid-line]");
        assert!(job.stdout.lines().any(|l| l == marked), "{}", job.stdout);
    }
}

#[test]
fn pes_exiting_without_finalize_lose_no_output() {
    let job = run_rshmemrun_env(4, "pe_launch", &["no-finalize"], &[], 60);
    assert_eq!(job.code, 0, "{}", job.stderr);
    for pe in 0..4 {
        assert!(job.stdout.contains(&format!("PE {pe} done without finalize")), "{}", job.stdout);
    }
}

#[test]
fn pe_leaving_without_finalize_ends_peers_blocked_on_it() {
    let job = run_rshmemrun_env(3, "pe_launch", &["leave"], &[], 60);
    assert_eq!(job.code, 1, "{}", job.stderr);
    // Over UCX a blocked PE's next operation on PE 0 may fail before the launcher sees the
    // others blocked (PE 0's endpoint is gone): then that PE ends the job naming PE 0
    // (an operation on PE 0, or a signalled put to it, such as the barrier's arrival).
    let ucx = std::env::var("RSHMEM_TRANSPORT").is_ok_and(|t| t == "ucx");
    let names_pe0 = job.stderr.contains("on PE 0 at offset") || job.stderr.contains("to PE 0 failed");
    if ucx && names_pe0 && job.stderr.contains("aborted the job") {
        return;
    }
    assert!(job.stderr.contains("exited without finalize (status 0) and the other PEs are blocked; ending PE(s) 1, 2"), "{}", job.stderr);
    assert!(job.stderr.contains("barrier_all on PE 1 (waiting for PE 0"), "{}", job.stderr);
}

#[test]
fn silent_and_oversized_connections_do_not_hold_up_start_up() {
    let mut child = rshmemrun_command(2, &example("pe_launch"), &["timed-init"], &[("RSHMEM_TEST_INIT_DELAY_MS", "1500")], 60)
        .into_command()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start rshmemrun");
    let launcher = child.id();
    wait_for(Duration::from_secs(10), "the rendezvous socket", || dirs_of(launcher).iter().any(|d| d.join("rendezvous.sock").exists()));
    let sock = dirs_of(launcher).into_iter().find(|d| d.join("rendezvous.sock").exists()).unwrap().join("rendezvous.sock");
    // One connection that says nothing, one whose header claims a 1 GiB hello.
    let silent = std::os::unix::net::UnixStream::connect(&sock).expect("connect");
    let mut big = std::os::unix::net::UnixStream::connect(&sock).expect("connect");
    let mut header = (1u32 << 30).to_le_bytes().to_vec();
    header.push(1);
    big.write_all(&header).unwrap();
    let status = wait_child(&mut child, Duration::from_secs(60));
    let job = finish(std::process::Output { status, stdout: read_all(child.stdout.take()), stderr: read_all(child.stderr.take()) });
    drop(silent);
    job.assert_ok();
    for pe in 0..2 {
        let ms: u64 = job
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("PE {pe} init took ")).and_then(|r| r.strip_suffix(" ms")).and_then(|v| v.parse().ok()))
            .unwrap_or_else(|| panic!("PE {pe} reports: {}", job.stdout));
        // The hello timeout is 10 s: a launcher that served the silent connection first
        // would have held init that long.
        assert!(ms < 1000, "PE {pe}: init took {ms} ms beside a silent connection");
        println!("PE {pe}: init took {ms} ms beside a silent and an oversized connection");
    }
    assert!(job.stderr.contains("sent no valid hello (a Hello frame claims 1073741824 bytes, more than the 256"), "{}", job.stderr);
}

fn read_all(s: Option<impl std::io::Read>) -> Vec<u8> {
    let mut v = Vec::new();
    if let Some(mut s) = s {
        let _ = s.read_to_end(&mut v);
    }
    v
}

#[test]
fn log_colour_only_when_asked_or_on_a_terminal() {
    let plain = run_rshmemrun_env(2, "ring", &[], &[("RSHMEM_LOG", "debug")], 60);
    plain.assert_ok();
    assert!(plain.stderr.contains("rshmem initialized") && !plain.stderr.contains('\x1b'), "{}", plain.stderr);
    let coloured = run_rshmemrun_env(2, "ring", &[], &[("RSHMEM_LOG", "debug"), ("RSHMEM_LOG_COLOR", "always")], 60);
    coloured.assert_ok();
    assert!(coloured.stderr.contains("\x1b["), "{}", coloured.stderr);
}

#[test]
fn help_starts_with_what_the_launcher_is() {
    for flag in ["--help", "-h"] {
        let out = std::process::Command::new(rshmemrun()).arg(flag).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "rshmemrun {flag}: {:?}\n{text}", out.status);
        let first = text.lines().next().unwrap_or("");
        assert!(first.starts_with("rshmemrun: the launcher of rshmem jobs on one host"), "first line of rshmemrun {flag}: {first}");
        assert!(!text.contains(env!("CARGO_PKG_DESCRIPTION")), "not the crate's description: {text}");
        assert!(text.contains("Usage: rshmemrun"), "rshmemrun {flag} gives the usage: {text}");
    }
}

/// The CPU list a PE started with `--bind-to POLICY` (or `RSHMEM_BIND_TO`) runs on, per PE.
fn bound_cpus(n: usize, flag: Option<&str>, env: Option<&str>) -> Vec<String> {
    let mut cmd = std::process::Command::new(rshmemrun());
    if let Some(p) = flag {
        cmd.args(["--bind-to", p]);
    }
    match env {
        Some(p) => cmd.env("RSHMEM_BIND_TO", p),
        None => cmd.env_remove("RSHMEM_BIND_TO"),
    };
    let out = cmd
        .args([
            "-n",
            &n.to_string(),
            "--tag-output",
            "--timeout",
            "60",
            "sh",
            "-c",
            "grep Cpus_allowed_list /proc/self/status; echo cpus=$RSHMEM_HOST_CPUS",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mine = rshmem::bootstrap::binding::allowed_cpus();
    assert!(text.contains(&format!("cpus={}", mine.len())), "every PE learns the launcher's CPU count: {text}");
    (0..n)
        .map(|pe| {
            let line =
                text.lines().find(|l| l.starts_with(&format!("[PE {pe}] Cpus_allowed_list:"))).unwrap_or_else(|| panic!("PE {pe}: {text}"));
            line.rsplit(['\t', ' ']).next().unwrap().to_string()
        })
        .collect()
}

#[test]
fn thread_pes_bind_each_to_its_own_core() {
    let cpus = rshmem::bootstrap::binding::allowed_cpus();
    let all = rshmem::bootstrap::binding::format_cpu_list(&cpus);
    let n = 4;
    let run = |bind: &str| {
        let out = std::process::Command::new(rshmemrun())
            .env_remove("RSHMEM_BIND_TO")
            .args(["--bind-to", bind, "-n", &n.to_string(), "--pes-per-process", "2", "--timeout", "60"])
            .arg(example("pe_launch"))
            .arg("cores")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        (0..n)
            .map(|pe| {
                let prefix = format!("PE {pe} cpus ");
                text.lines()
                    .find_map(|l| l.split_once(&prefix).map(|(_, c)| c.trim().to_string()))
                    .unwrap_or_else(|| panic!("PE {pe}: {text}"))
            })
            .collect::<Vec<_>>()
    };
    // core: each PE's thread on its own core, as process PEs are (round robin).
    for (pe, got) in run("core").iter().enumerate() {
        assert_eq!(*got, cpus[pe % cpus.len()].to_string(), "thread PE {pe} under --bind-to core");
    }
    // none: the threads keep the launcher's whole mask.
    assert!(run("none").iter().all(|c| *c == all), "thread PEs under --bind-to none");
}

/// What `RSHMEM_SPARE_CPUS` a one-PE job started with `--bind-to POLICY` sees.
fn spare_cpus_seen(policy: &str) -> String {
    let out = std::process::Command::new(rshmemrun())
        .env_remove("RSHMEM_BIND_TO")
        .args(["--bind-to", policy, "-n", "1", "--timeout", "60", "sh", "-c", "echo \"spare=[$RSHMEM_SPARE_CPUS]\""])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    text.lines().find_map(|l| l.strip_prefix("spare=[")?.strip_suffix(']').map(str::to_string)).unwrap_or_else(|| panic!("{text}"))
}

#[test]
fn pes_learn_the_cpus_no_pe_is_bound_to() {
    let cpus = rshmem::bootstrap::binding::allowed_cpus();
    // One PE on the first CPU: the others are spare (the GPU proxy thread runs there).
    assert_eq!(spare_cpus_seen("core"), rshmem::bootstrap::binding::format_cpu_list(&cpus[1..]), "under --bind-to core");
    // Unbound PEs may run anywhere: nothing is spare.
    assert_eq!(spare_cpus_seen("none"), "", "under --bind-to none");
}

#[test]
fn pes_are_bound_as_asked() {
    let cpus = rshmem::bootstrap::binding::allowed_cpus();
    let all = rshmem::bootstrap::binding::format_cpu_list(&cpus);
    // core: PE i on the i-th allowed CPU (round robin past the last).
    let n = cpus.len() + 1;
    let core = bound_cpus(n, Some("core"), None);
    for (pe, got) in core.iter().enumerate() {
        assert_eq!(*got, cpus[pe % cpus.len()].to_string(), "PE {pe} under --bind-to core");
    }
    // auto binds per core when the PEs fit, and not when they do not.
    assert_eq!(bound_cpus(cpus.len(), None, None), core[..cpus.len()].to_vec());
    assert!(bound_cpus(n, None, None).iter().all(|c| *c == all), "oversubscribed PEs stay free");
    // none, by flag or by RSHMEM_BIND_TO; the flag wins over the variable.
    assert!(bound_cpus(1, Some("none"), None).iter().all(|c| *c == all));
    assert!(bound_cpus(1, None, Some("none")).iter().all(|c| *c == all));
    assert_eq!(bound_cpus(1, Some("core"), Some("none")), vec![cpus[0].to_string()]);
    // A policy that does not exist is refused by name.
    let out = std::process::Command::new(rshmemrun()).args(["--bind-to", "socket", "-n", "1", "true"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("`socket` is not auto, none, core or numa"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What `CUDA_DEVICE_MAX_CONNECTIONS` a PE process of `rshmemrun -n 2 ARGS` starts with,
/// given the launcher's own value.
fn cuda_queues(args: &[&str], mine: Option<&str>) -> String {
    let mut cmd = std::process::Command::new(rshmemrun());
    match mine {
        Some(v) => cmd.env("CUDA_DEVICE_MAX_CONNECTIONS", v),
        None => cmd.env_remove("CUDA_DEVICE_MAX_CONNECTIONS"),
    };
    let out = cmd
        .args(["-n", "2", "--timeout", "60"])
        .args(args)
        .args(["sh", "-c", "echo queues=[$CUDA_DEVICE_MAX_CONNECTIONS]"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    text.lines().find_map(|l| l.strip_prefix("queues=")).unwrap_or_else(|| panic!("no line from the PE: {text}")).to_string()
}

#[test]
fn thread_pes_get_32_cuda_queues_unless_the_user_set_them() {
    // Thread PEs share one CUDA context; their kernels wait for each other's, which the
    // default 8 hardware queues can serialize into a deadlock.
    assert_eq!(cuda_queues(&["--pes-per-process", "2"], None), "[32]");
    assert_eq!(cuda_queues(&["--pes-per-process", "2"], Some("4")), "[4]", "the user's setting wins");
    assert_eq!(cuda_queues(&[], None), "[]", "a process of one PE keeps CUDA's default");
}
