//! The launcher side of the rendezvous: what `rshmemrun` (and `oshrun`) run.
//!
//! It starts N PEs on this host, listens on a Unix socket in a fresh private directory
//! (mode 0700), admits only connections from the same user (`SO_PEERCRED`) that present
//! the job's random key, serves the bootstrap collectives (allgather, descriptor
//! allgather), and watches the PEs: when one dies before finalize it ends the others
//! and says which PE died and how. All of it runs as one event loop fed by small
//! threads (accept, one reader per PE, one waiter per child).

use super::protocol::{self, Frame, Kind};
use rustix::fd::{AsFd, OwnedFd};
use rustix::process::{Pid, Signal};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// What to launch and how.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// Number of PEs.
    pub n_pes: usize,
    /// End the job after this long.
    pub timeout: Option<Duration>,
    /// Prefix every output line with `[PE i]`.
    pub tag_output: bool,
    /// Program to run as each PE.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Extra environment for the PEs.
    pub env: Vec<(OsString, OsString)>,
    /// Name used in the launcher's own messages (`rshmemrun`, `oshrun`).
    pub name: String,
}

/// Grace between SIGTERM and SIGKILL when ending PEs.
const KILL_GRACE: Duration = Duration::from_millis(1000);
/// How long a connecting process has to present its key.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

enum Event {
    Hello { pe: usize, stream: UnixStream },
    Refused(String),
    Frame { pe: usize, frame: Frame },
    Disconnected { pe: usize },
    Exited { pe: usize, status: ExitStatus },
}

enum Contribution {
    Bytes(Vec<u8>),
    Fd(OwnedFd),
}

#[derive(Default)]
struct PeState {
    pid: u32,
    stream: Option<UnixStream>,
    connected: bool,
    finalized: bool,
    exited: Option<ExitStatus>,
    /// The reader saw the socket close: every frame the PE sent has been handled.
    disconnected: bool,
    /// An exit reported before the PE's last frames were read (judged once they are).
    exit_seen: Option<(ExitStatus, Instant)>,
    pending: Option<Contribution>,
}

/// A fresh private directory holding the rendezvous socket; removed on drop.
struct PrivateDir(PathBuf);

impl PrivateDir {
    fn create(key: &str) -> std::io::Result<PrivateDir> {
        let base = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|p| p.is_dir()).unwrap_or_else(std::env::temp_dir);
        let dir = base.join(format!("rshmem-{}-{}", std::process::id(), &key[..8]));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        Ok(PrivateDir(dir))
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Names the signal numbers a PE usually dies of.
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return format!("signal {sig}"),
    };
    format!("signal {sig} ({name})")
}

/// Describes how a process ended, for messages.
pub fn describe(status: &ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(s)) => format!("was killed by {}", signal_name(s)),
        _ => "ended".to_string(),
    }
}

/// The shell-style exit code of a status (128 + signal for a signal).
fn exit_code(status: &ExitStatus) -> i32 {
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

fn random_key() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    rustix::rand::getrandom(&mut bytes, rustix::rand::GetRandomFlags::empty())?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn keys_equal(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn accept_loop(listener: UnixListener, key: String, n_pes: usize, events: Sender<Event>) {
    let uid = rustix::process::getuid();
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        let verdict = (|| -> Result<usize, String> {
            let cred = rustix::net::sockopt::socket_peercred(&stream).map_err(|e| format!("no peer credentials: {e}"))?;
            if cred.uid != uid {
                return Err(format!("process {} of user {} is not this job's user", cred.pid.as_raw_nonzero(), cred.uid.as_raw()));
            }
            stream.set_read_timeout(Some(HELLO_TIMEOUT)).map_err(|e| e.to_string())?;
            let hello = protocol::recv_frame(stream.as_fd()).map_err(|e| format!("no hello: {e}"))?;
            stream.set_read_timeout(None).map_err(|e| e.to_string())?;
            let (k, pe, _pid) =
                (hello.kind == Kind::Hello).then(|| protocol::decode_hello(&hello.payload)).flatten().ok_or("malformed hello")?;
            if !keys_equal(&k, &key) {
                return Err(format!("process {} presented a wrong job key", cred.pid.as_raw_nonzero()));
            }
            if pe as usize >= n_pes {
                return Err(format!("PE {pe} is out of range for {n_pes} PEs"));
            }
            Ok(pe as usize)
        })();
        match verdict {
            Ok(pe) => {
                if events.send(Event::Hello { pe, stream }).is_err() {
                    return;
                }
            }
            Err(why) => {
                let _ = protocol::send_frame(stream.as_fd(), Kind::Refused, why.as_bytes(), &[]);
                if events.send(Event::Refused(why)).is_err() {
                    return;
                }
            }
        }
    }
}

fn reader_loop(pe: usize, stream: UnixStream, events: Sender<Event>) {
    loop {
        match protocol::recv_frame(stream.as_fd()) {
            Ok(frame) => {
                if events.send(Event::Frame { pe, frame }).is_err() {
                    return;
                }
            }
            Err(_) => {
                let _ = events.send(Event::Disconnected { pe });
                return;
            }
        }
    }
}

fn forward_lines(pe: usize, input: impl std::io::Read, to_stderr: bool) {
    let reader = BufReader::new(input);
    for line in reader.split(b'\n') {
        let Ok(line) = line else { return };
        let mut text = format!("[PE {pe}] ").into_bytes();
        text.extend_from_slice(&line);
        text.push(b'\n');
        if to_stderr {
            let _ = std::io::stderr().lock().write_all(&text);
        } else {
            let _ = std::io::stdout().lock().write_all(&text);
        }
    }
}

/// The running job: its PEs and the decisions of the event loop.
struct Job {
    name: String,
    pes: Vec<PeState>,
    exit: i32,
    ending_since: Option<Instant>,
}

impl Job {
    fn say(&self, msg: &str) {
        eprintln!("{}: {msg}", self.name);
    }

    fn live(&self) -> impl Iterator<Item = (usize, &PeState)> {
        self.pes.iter().enumerate().filter(|(_, p)| p.exited.is_none() && p.exit_seen.is_none())
    }

    fn unfinished(&self) -> bool {
        self.pes.iter().any(|p| p.exited.is_none())
    }

    fn signal_live(&self, sig: Signal) {
        for (_, p) in self.live() {
            if let Some(pid) = Pid::from_raw(p.pid as i32) {
                let _ = rustix::process::kill_process(pid, sig);
            }
        }
    }

    /// Starts ending every PE still running (SIGTERM now, SIGKILL after the grace).
    fn end_all(&mut self, code: i32) {
        if self.exit == 0 {
            self.exit = code;
        }
        if self.ending_since.is_none() {
            self.ending_since = Some(Instant::now());
            self.signal_live(Signal::TERM);
        }
    }

    fn any_connected(&self) -> bool {
        self.pes.iter().any(|p| p.connected)
    }

    /// Serves a bootstrap round once every PE has contributed to it.
    fn try_complete_round(&mut self) {
        if self.ending_since.is_some() || !self.pes.iter().all(|p| p.pending.is_some()) {
            return;
        }
        let contributions: Vec<Contribution> = self.pes.iter_mut().map(|p| p.pending.take().expect("checked")).collect();
        let all_bytes = contributions.iter().all(|c| matches!(c, Contribution::Bytes(_)));
        let all_fds = contributions.iter().all(|c| matches!(c, Contribution::Fd(_)));
        if !(all_bytes || all_fds) {
            let kinds: Vec<String> = contributions
                .iter()
                .enumerate()
                .map(|(pe, c)| format!("PE {pe}: {}", if matches!(c, Contribution::Fd(_)) { "descriptor exchange" } else { "allgather" }))
                .collect();
            let why = format!("PEs made different bootstrap calls ({})", kinds.join(", "));
            self.say(&why);
            for p in &self.pes {
                if let Some(s) = &p.stream {
                    let _ = protocol::send_frame(s.as_fd(), Kind::Failed, why.as_bytes(), &[]);
                }
            }
            return;
        }
        if all_bytes {
            let items: Vec<Vec<u8>> = contributions
                .into_iter()
                .map(|c| match c {
                    Contribution::Bytes(b) => b,
                    Contribution::Fd(_) => unreachable!("checked"),
                })
                .collect();
            let payload = protocol::encode_list(&items);
            for p in &self.pes {
                if let Some(s) = &p.stream {
                    let _ = protocol::send_frame(s.as_fd(), Kind::AllgatherResult, &payload, &[]);
                }
            }
        } else {
            let fds: Vec<OwnedFd> = contributions
                .into_iter()
                .map(|c| match c {
                    Contribution::Fd(f) => f,
                    Contribution::Bytes(_) => unreachable!("checked"),
                })
                .collect();
            for p in &self.pes {
                if let Some(s) = &p.stream {
                    for fd in &fds {
                        let _ = protocol::send_frame(s.as_fd(), Kind::FdResult, &[], &[fd.as_fd()]);
                    }
                }
            }
        }
    }

    fn on_frame(&mut self, pe: usize, mut frame: Frame) {
        match frame.kind {
            Kind::Allgather => self.pes[pe].pending = Some(Contribution::Bytes(frame.payload)),
            Kind::AllgatherFd => match frame.fds.pop() {
                Some(fd) => self.pes[pe].pending = Some(Contribution::Fd(fd)),
                None => {
                    self.say(&format!("PE {pe} sent a descriptor exchange without a descriptor; ending the job"));
                    self.end_all(1);
                }
            },
            Kind::Finalize => self.pes[pe].finalized = true,
            Kind::Abort => {
                let code = frame.payload.get(..4).map(|b| i32::from_le_bytes(b.try_into().expect("4"))).unwrap_or(1);
                let msg = String::from_utf8_lossy(frame.payload.get(4..).unwrap_or_default()).to_string();
                self.say(&format!("PE {pe} aborted the job (code {code}): {msg}"));
                self.end_all(if code == 0 { 1 } else { code });
            }
            other => {
                self.say(&format!("PE {pe} sent an unexpected {other:?}; ending the job"));
                self.end_all(1);
            }
        }
        self.try_complete_round();
    }

    /// A child exited. Its reader may still hold frames it sent before exiting (its
    /// Finalize, say): judge the exit only once the reader has seen the socket close.
    fn on_child_exit(&mut self, pe: usize, status: ExitStatus) {
        let p = &mut self.pes[pe];
        if p.connected && !p.disconnected {
            p.exit_seen = Some((status, Instant::now()));
        } else {
            self.on_exit(pe, status);
        }
    }

    fn on_disconnect(&mut self, pe: usize) {
        let p = &mut self.pes[pe];
        p.disconnected = true;
        p.stream = None;
        if let Some((status, _)) = p.exit_seen.take() {
            self.on_exit(pe, status);
        }
    }

    /// Exits whose socket stayed open (a forked child holds it) are judged after a grace.
    fn judge_stale_exits(&mut self) {
        let stale: Vec<(usize, ExitStatus)> = self
            .pes
            .iter()
            .enumerate()
            .filter_map(|(pe, p)| p.exit_seen.filter(|(_, t)| t.elapsed() > Duration::from_secs(1)).map(|(s, _)| (pe, s)))
            .collect();
        for (pe, status) in stale {
            self.pes[pe].exit_seen = None;
            self.on_exit(pe, status);
        }
    }

    fn on_exit(&mut self, pe: usize, status: ExitStatus) {
        let p = &mut self.pes[pe];
        p.exited = Some(status);
        p.stream = None;
        let (pid, connected, finalized) = (p.pid, p.connected, p.finalized);
        let code = exit_code(&status);
        let others_running = self.live().count() > 0;
        if self.ending_since.is_some() {
            return;
        }
        let died = !status.success() && !finalized;
        let left_early = status.success() && !finalized && (connected || self.any_connected()) && others_running;
        if died || left_early {
            let how = describe(&status);
            let what = if connected { "before finalize" } else { "before joining the job" };
            let running = self.live().count();
            self.say(&format!("PE {pe} (pid {pid}) {how} {what}; ending the other {running} PE(s)"));
            self.end_all(if code == 0 { 1 } else { code });
        } else if code != 0 && self.exit == 0 {
            self.exit = code;
        }
    }
}

/// Runs a job to completion and returns the launcher's exit code: the first non-zero
/// status of a PE, 124 on timeout, 0 when every PE succeeded.
pub fn run(opts: &LaunchOptions) -> std::io::Result<i32> {
    if opts.n_pes == 0 {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "need at least one PE (-n)"));
    }
    let key = random_key()?;
    let dir = PrivateDir::create(&key)?;
    let sock_path = dir.0.join("rendezvous.sock");
    let listener = UnixListener::bind(&sock_path)?;
    let (tx, rx) = channel::<Event>();
    {
        let (tx, key, n) = (tx.clone(), key.clone(), opts.n_pes);
        std::thread::spawn(move || accept_loop(listener, key, n, tx));
    }
    let mut job = Job { name: opts.name.clone(), pes: (0..opts.n_pes).map(|_| PeState::default()).collect(), exit: 0, ending_since: None };
    let mut forwarders = Vec::new();
    for pe in 0..opts.n_pes {
        let mut cmd = Command::new(&opts.program);
        cmd.args(&opts.args)
            .env("RSHMEM_LAUNCHER_SOCK", &sock_path)
            .env("RSHMEM_JOB_KEY", &key)
            .env("RSHMEM_PE", pe.to_string())
            .env("RSHMEM_NPES", opts.n_pes.to_string())
            .envs(opts.env.iter().map(|(k, v)| (k, v)))
            .stdin(if pe == 0 { Stdio::inherit() } else { Stdio::null() });
        if opts.tag_output {
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
        let mut child: Child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                job.say(&format!("cannot start PE {pe} ({}): {e}", Path::new(&opts.program).display()));
                job.end_all(127);
                // The PEs already started are ended below by the event loop.
                job.pes.truncate(pe);
                break;
            }
        };
        job.pes[pe].pid = child.id();
        if let Some(out) = child.stdout.take() {
            forwarders.push(std::thread::spawn(move || forward_lines(pe, out, false)));
        }
        if let Some(err) = child.stderr.take() {
            forwarders.push(std::thread::spawn(move || forward_lines(pe, err, true)));
        }
        let tx = tx.clone();
        std::thread::spawn(move || {
            if let Ok(status) = child.wait() {
                let _ = tx.send(Event::Exited { pe, status });
            }
        });
    }
    let started = Instant::now();
    while job.unfinished() {
        job.judge_stale_exits();
        let mut wait = Duration::from_millis(200);
        if let Some(t) = opts.timeout {
            wait = wait.min(t.saturating_sub(started.elapsed()).max(Duration::from_millis(1)));
        }
        match rx.recv_timeout(wait) {
            Ok(Event::Hello { pe, stream }) => {
                if pe >= job.pes.len() || job.pes[pe].connected {
                    let why = format!("PE {pe} is already connected");
                    let _ = protocol::send_frame(stream.as_fd(), Kind::Refused, why.as_bytes(), &[]);
                    job.say(&format!("refused a connection: {why}"));
                    continue;
                }
                if protocol::send_frame(stream.as_fd(), Kind::Welcome, &[], &[]).is_ok() {
                    if let Ok(reader) = stream.try_clone() {
                        let events = tx.clone();
                        std::thread::spawn(move || reader_loop(pe, reader, events));
                    }
                    job.pes[pe].stream = Some(stream);
                    job.pes[pe].connected = true;
                }
            }
            Ok(Event::Refused(why)) => job.say(&format!("refused a connection: {why}")),
            Ok(Event::Frame { pe, frame }) => job.on_frame(pe, frame),
            Ok(Event::Disconnected { pe }) => job.on_disconnect(pe),
            Ok(Event::Exited { pe, status }) => job.on_child_exit(pe, status),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if let Some(t) = opts.timeout {
            if started.elapsed() >= t && job.ending_since.is_none() {
                let running: Vec<String> = job.live().map(|(pe, _)| pe.to_string()).collect();
                job.say(&format!("job exceeded --timeout {} s; ending PE(s) {}", t.as_secs_f64(), running.join(", ")));
                job.end_all(124);
                job.exit = 124;
            }
        }
        if let Some(since) = job.ending_since {
            if since.elapsed() >= KILL_GRACE {
                job.signal_live(Signal::KILL);
            }
        }
    }
    for f in forwarders {
        let _ = f.join();
    }
    drop(dir);
    Ok(job.exit)
}
