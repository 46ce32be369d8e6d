//! The launcher side of the rendezvous: what `rshmemrun` (and `oshrun`) run.
//!
//! It starts N PEs on this host, listens on a Unix socket in a fresh private directory
//! (mode 0700), admits only connections from the same user (`SO_PEERCRED`) that present
//! the job's random key, serves the bootstrap collectives (allgather, descriptor
//! allgather), and watches the PEs: when one dies before finalize it ends the others
//! and says which PE died and how. All of it runs as one event loop fed by small
//! threads (accept and one handshake per connection, one reader per PE, one waiter per
//! child, output forwarders, signals).
//!
//! What else it guarantees:
//! - **Liveness.** Every PE gets the job's status board ([`super::status`]) with its
//!   welcome and publishes there what its long waits wait for; the launcher reads the
//!   board and each PE's process state (`/proc/PID/stat`). With a hang limit
//!   (`RSHMEM_HANG_TIMEOUT`) a PE blocked or stopped that long ends the job with a report
//!   of who waits on whom. Without one, a PE stopped for `RSHMEM_WAIT_WARN` seconds, or
//!   every PE blocked that long, is reported once.
//! - **No leftovers.** PEs get the parent-death signal (SIGKILL) between fork and exec,
//!   so none outlives the launcher, however it ends. SIGINT, SIGTERM and SIGHUP end the
//!   PEs and remove the directory; the directory goes as soon as every PE has connected,
//!   a small watcher (`sh`) removes it if the launcher is killed before that, and a new
//!   launcher removes directories whose launcher is gone (their lock is free).
//! - **Whole lines.** PE output always goes through the launcher, one line buffer per PE
//!   and stream, and out with one write per batch of whole lines; the last unfinished line
//!   of a PE is flushed at its end, marked when the PE died.
//! - **Hardened rendezvous.** Each connection says hello on its own thread (a silent one
//!   holds nobody up and is dropped after [`HELLO_TIMEOUT`]); frames longer than their
//!   kind allows are refused before they are read.

use super::binding::BindTo;
use super::protocol::{self, Frame, Kind};
use super::status::{self, Board};
use crate::config::{Config, LogColor};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::process::{Pid, Signal};
use std::ffi::OsString;
use std::fs::File;
use std::io::{IsTerminal, Read};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
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
    /// PEs per process (`--pes-per-process`; at least 1): process `j` hosts PEs
    /// `j*K .. (j+1)*K` as threads (the program calls `init` from K threads, or
    /// `rshmem::run_local_pes`); the last process may host fewer.
    pub pes_per_process: usize,
    /// How the PEs are bound to CPUs (`--bind-to`; `None`: `RSHMEM_BIND_TO`'s policy;
    /// see [`super::binding`]).
    pub bind_to: Option<BindTo>,
}

/// Grace between SIGTERM and SIGKILL when ending PEs.
const KILL_GRACE: Duration = Duration::from_millis(1000);
/// How long a connecting process has to present its key.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// Most connections saying hello at once; more are refused at once.
const MAX_HANDSHAKES: usize = 64;
/// How often the event loop looks at the PEs (board, process state, timeouts).
const TICK: Duration = Duration::from_millis(100);
/// After a PE left without finalize, the others are ended once all of them have been
/// blocked in rshmem this long (nothing can come of the job any more).
const BLOCKED_AFTER: Duration = Duration::from_secs(1);
/// How long output forwarders may take to drain after the last PE ended.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);
/// Longest line kept whole; a longer one goes out in pieces of this size.
const MAX_LINE: usize = 1 << 20;
/// Job exit code for a job ended by its time or hang limit.
const TIMED_OUT: i32 = 124;

enum Event {
    Hello { pe: usize, stream: UnixStream },
    Refused(String),
    Frame { pe: usize, frame: Frame },
    Disconnected { pe: usize, error: Option<String> },
    Exited { pe: usize, status: ExitStatus },
    Signal(i32),
}

enum Contribution {
    Bytes(Vec<u8>),
    Fd(OwnedFd),
}

/// A PE's exit status, for the output forwarders that must know how it ended.
#[derive(Default)]
struct ExitSlot {
    status: Mutex<Option<ExitStatus>>,
    set: Condvar,
}

impl ExitSlot {
    fn put(&self, s: ExitStatus) {
        *self.status.lock().unwrap_or_else(|p| p.into_inner()) = Some(s);
        self.set.notify_all();
    }

    fn wait(&self, limit: Duration) -> Option<ExitStatus> {
        let g = self.status.lock().unwrap_or_else(|p| p.into_inner());
        let (g, _) = self.set.wait_timeout_while(g, limit, |s| s.is_none()).unwrap_or_else(|p| p.into_inner());
        *g
    }
}

/// What the launcher has seen of one PE's liveness.
#[derive(Default)]
struct Watch {
    /// First tick at which the process was seen stopped (state T or t).
    stopped_since: Option<Instant>,
    /// The published wait (its start on the board) and the first tick it was seen.
    wait: Option<(u64, Instant)>,
    /// First tick at which the PE was seen waiting in a bootstrap exchange.
    boot_since: Option<Instant>,
    /// Reported as stopped (once per stop).
    told_stopped: bool,
}

impl Watch {
    /// How long the PE has been blocked in rshmem, as the launcher observed it.
    fn blocked_for(&self, now: Instant) -> Option<Duration> {
        let wait = self.wait.map(|(_, t)| now - t);
        let boot = self.boot_since.map(|t| now - t);
        wait.max(boot)
    }

    fn stopped_for(&self, now: Instant) -> Option<Duration> {
        self.stopped_since.map(|t| now - t)
    }
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
    exit_slot: Arc<ExitSlot>,
    watch: Watch,
}

/// A process's state letter and CPU time from `/proc/PID/stat`.
struct ProcStat {
    state: char,
    cpu: Duration,
}

fn proc_stat(pid: u32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    let hz = rustix::param::clock_ticks_per_second().max(1);
    Some(ProcStat { state, cpu: Duration::from_secs_f64(ticks as f64 / hz as f64) })
}

fn describe_state(c: char) -> &'static str {
    match c {
        'R' => "running",
        'S' => "sleeping",
        'D' => "in uninterruptible sleep",
        'T' => "stopped",
        't' => "stopped by a debugger",
        'Z' => "exited",
        _ => "in an unknown state",
    }
}

/// The rendezvous directory: `rshmem-PID-KEY/` under `$XDG_RUNTIME_DIR` or the temp
/// directory, mode 0700, holding the socket and a lock file the launcher keeps locked
/// for its life. Removed on drop, on [`RendezvousDir::remove`], by the watcher process
/// when the launcher dies first, or by the next launcher that finds its lock free.
struct RendezvousDir {
    path: PathBuf,
    removed: bool,
    _lock: File,
    /// The write end of the watcher's stdin: when it closes (the launcher is gone,
    /// however it ended) the watcher removes the directory.
    watcher: Option<(Child, ChildStdin)>,
}

/// Whether `name` is a rendezvous directory's (`rshmem-PID-XXXXXXXX`, also `.new` while
/// being made): returns the launcher's pid and whether it is the `.new` form.
fn rendezvous_name(name: &str) -> Option<(i32, bool)> {
    let rest = name.strip_prefix("rshmem-")?;
    let (rest, new) = match rest.strip_suffix(".new") {
        Some(r) => (r, true),
        None => (rest, false),
    };
    let (pid, key) = rest.split_once('-')?;
    let ok = key.len() == 8 && key.bytes().all(|b| b.is_ascii_hexdigit()) && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| pid.parse().ok().map(|p| (p, new))).flatten()
}

fn process_alive(pid: i32) -> bool {
    match Pid::from_raw(pid) {
        Some(p) => !matches!(rustix::process::test_kill_process(p), Err(rustix::io::Errno::SRCH)),
        None => false,
    }
}

impl RendezvousDir {
    /// Where rendezvous directories go: `$XDG_RUNTIME_DIR`, else the temp dir.
    fn base(config: &Config) -> PathBuf {
        config.xdg_runtime_dir.clone().filter(|p| p.is_dir()).unwrap_or_else(std::env::temp_dir)
    }

    /// Makes the directory: under a `.new` name first, locked, then renamed, so that a
    /// directory under its final name always has a held lock while its launcher lives.
    fn create(config: &Config, key: &str) -> std::io::Result<RendezvousDir> {
        let base = Self::base(config);
        remove_stale(&base);
        let name = format!("rshmem-{}-{}", std::process::id(), &key[..8]);
        let tmp = base.join(format!("{name}.new"));
        std::fs::DirBuilder::new().mode(0o700).create(&tmp)?;
        let lock = File::create(tmp.join("lock"))?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive)?;
        let path = base.join(name);
        std::fs::rename(&tmp, &path)?;
        let watcher = Self::watcher(&path)
            .map_err(|e| tracing::debug!("no watcher for {}: {e}; a new launcher removes it if this one is killed", path.display()))
            .ok();
        Ok(RendezvousDir { path, removed: false, _lock: lock, watcher })
    }

    /// A shell that removes the directory once its stdin closes, immune to the signals
    /// that end the job (its own process group, INT/TERM/HUP ignored).
    fn watcher(path: &Path) -> std::io::Result<(Child, ChildStdin)> {
        let mut child = Command::new("/bin/sh")
            .args(["-c", "trap '' INT TERM HUP; read -r _ignored; rm -rf -- \"$1\"", "rshmem-cleanup"])
            .arg(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        let stdin = child.stdin.take().expect("piped");
        Ok((child, stdin))
    }

    /// Removes the directory now (idempotent) and lets the watcher go.
    fn remove(&mut self) {
        if !self.removed {
            self.removed = true;
            if let Err(e) = std::fs::remove_dir_all(&self.path) {
                tracing::debug!("removing {}: {e}", self.path.display());
            }
        }
        if let Some((mut child, stdin)) = self.watcher.take() {
            drop(stdin);
            let _ = child.wait();
        }
    }
}

impl Drop for RendezvousDir {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Removes the rendezvous directories under `base` whose launcher is gone: a final-named
/// one whose lock is free, a `.new` one whose launcher process no longer exists. Only
/// this user's directories are looked at.
fn remove_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    let uid = rustix::process::getuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, new)) = name.to_str().and_then(rendezvous_name) else { continue };
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else { continue };
        if !meta.is_dir() || meta.uid() != uid {
            continue;
        }
        let stale = if new {
            !process_alive(pid)
        } else {
            match File::open(entry.path().join("lock")) {
                Ok(f) => rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok(),
                Err(_) => !process_alive(pid),
            }
        };
        if stale && std::fs::remove_dir_all(entry.path()).is_ok() {
            tracing::info!("removed {}, left by launcher {pid} that is gone", entry.path().display());
        }
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

/// One connection's hello: same user, the job's key, a PE in range, within the timeout.
fn handshake(stream: &UnixStream, key: &str, n_pes: usize, timeout: Duration) -> Result<usize, String> {
    let cred = rustix::net::sockopt::socket_peercred(stream).map_err(|e| format!("no peer credentials: {e}"))?;
    let pid = cred.pid.as_raw_nonzero();
    if cred.uid != rustix::process::getuid() {
        return Err(format!("process {pid} of user {} is not this job's user", cred.uid.as_raw()));
    }
    stream.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    let hello = protocol::recv_frame(stream.as_fd(), n_pes).map_err(|e| match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            format!("connection from pid {pid} sent no hello within {} s; ignored", timeout.as_secs_f64())
        }
        _ => format!("connection from pid {pid} sent no valid hello ({e}); ignored"),
    })?;
    stream.set_read_timeout(None).map_err(|e| e.to_string())?;
    let (k, pe, _pid) = (hello.kind == Kind::Hello)
        .then(|| protocol::decode_hello(&hello.payload))
        .flatten()
        .ok_or_else(|| format!("connection from pid {pid} sent a malformed hello; ignored"))?;
    if !keys_equal(&k, key) {
        return Err(format!("process {pid} presented a wrong job key"));
    }
    if pe as usize >= n_pes {
        return Err(format!("PE {pe} is out of range for {n_pes} PEs"));
    }
    Ok(pe as usize)
}

/// Accepts connections and gives each its own handshake thread, so that a connection
/// that says nothing holds up nobody else.
fn accept_loop(listener: UnixListener, key: String, n_pes: usize, events: Sender<Event>) {
    let busy = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        if busy.load(Ordering::Acquire) >= MAX_HANDSHAKES {
            let why = format!("more than {MAX_HANDSHAKES} connections are saying hello at once; refused one");
            let _ = protocol::send_frame(stream.as_fd(), Kind::Refused, why.as_bytes(), &[]);
            if events.send(Event::Refused(why)).is_err() {
                return;
            }
            continue;
        }
        busy.fetch_add(1, Ordering::AcqRel);
        let (key, events, busy) = (key.clone(), events.clone(), busy.clone());
        std::thread::spawn(move || {
            let event = match handshake(&stream, &key, n_pes, HELLO_TIMEOUT) {
                Ok(pe) => Event::Hello { pe, stream },
                Err(why) => {
                    let _ = protocol::send_frame(stream.as_fd(), Kind::Refused, why.as_bytes(), &[]);
                    Event::Refused(why)
                }
            };
            busy.fetch_sub(1, Ordering::AcqRel);
            let _ = events.send(event);
        });
    }
}

fn reader_loop(pe: usize, n_pes: usize, stream: UnixStream, events: Sender<Event>) {
    loop {
        match protocol::recv_frame(stream.as_fd(), n_pes) {
            Ok(frame) => {
                if events.send(Event::Frame { pe, frame }).is_err() {
                    return;
                }
            }
            Err(e) => {
                let error = (e.kind() == std::io::ErrorKind::InvalidData).then(|| e.to_string());
                let _ = events.send(Event::Disconnected { pe, error });
                return;
            }
        }
    }
}

/// The launcher's stdout or stderr, written only in whole lines, one writer at a time.
#[derive(Clone, Copy)]
enum Sink {
    Stdout,
    Stderr,
}

static STDOUT_LOCK: Mutex<()> = Mutex::new(());
static STDERR_LOCK: Mutex<()> = Mutex::new(());

impl Sink {
    /// Writes `bytes` with as few `write` calls as the kernel allows (one, for a pipe
    /// or terminal), while no other forwarder or message writes to the same stream.
    fn write(self, bytes: &[u8]) {
        let (lock, out, err) = match self {
            Sink::Stdout => (&STDOUT_LOCK, Some(std::io::stdout()), None),
            Sink::Stderr => (&STDERR_LOCK, None, Some(std::io::stderr())),
        };
        let _g = lock.lock().unwrap_or_else(|p| p.into_inner());
        let fd: BorrowedFd<'_> = match (&out, &err) {
            (Some(o), _) => o.as_fd(),
            (_, Some(e)) => e.as_fd(),
            _ => unreachable!("one of the two"),
        };
        let mut rest = bytes;
        while !rest.is_empty() {
            match rustix::io::write(fd, rest) {
                Ok(0) => return,
                Ok(n) => rest = &rest[n..],
                Err(rustix::io::Errno::INTR) | Err(rustix::io::Errno::AGAIN) => continue,
                Err(_) => return,
            }
        }
    }
}

/// Forwards one stream of one PE: collects what it writes in a line buffer and passes on
/// whole lines only (tagged `[PE i] ` when asked). At the end, an unfinished last line is
/// passed on too, marked when the PE died.
struct Forwarder {
    /// The PEs of the process ("PE 3", or "PEs 4-7" for thread PEs).
    label: String,
    sink: Sink,
    tag: bool,
    launcher: String,
    /// Whether the next byte passed on starts a line (a piece of an overlong line does not).
    at_line_start: bool,
}

impl Forwarder {
    fn emit(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            if self.tag && self.at_line_start {
                out.extend_from_slice(format!("[{}] ", self.label).as_bytes());
            }
            out.extend_from_slice(line);
            self.at_line_start = line.ends_with(b"\n");
        }
    }

    fn run(mut self, mut input: impl Read, exit: Arc<ExitSlot>) {
        let mut pending: Vec<u8> = Vec::new();
        let mut chunk = vec![0u8; 64 << 10];
        loop {
            let n = match input.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            pending.extend_from_slice(&chunk[..n]);
            let whole = match pending.iter().rposition(|&b| b == b'\n') {
                Some(i) => i + 1,
                None if pending.len() >= MAX_LINE => pending.len(),
                None => continue,
            };
            let mut out = Vec::with_capacity(whole + 64);
            let rest = pending.split_off(whole);
            self.emit(&pending, &mut out);
            pending = rest;
            self.sink.write(&out);
        }
        if pending.is_empty() && self.at_line_start {
            return;
        }
        // The PE closed its output mid-line: pass the piece on, with a mark when it died.
        let mut out = Vec::new();
        self.emit(&pending, &mut out);
        let status = exit.wait(Duration::from_secs(2));
        match status {
            Some(s) if !s.success() => {
                out.extend_from_slice(format!(" [{}: {} {} mid-line]\n", self.launcher, self.label, describe(&s)).as_bytes())
            }
            _ => out.push(b'\n'),
        }
        self.sink.write(&out);
    }
}

/// The running job: its PEs and the decisions of the event loop.
struct Job {
    name: String,
    pes: Vec<PeState>,
    exit: i32,
    ending_since: Option<Instant>,
    board: Board,
    /// `RSHMEM_HANG_TIMEOUT`.
    hang_limit: Option<Duration>,
    /// `RSHMEM_WAIT_WARN`: when to report a stopped PE or a job where every PE is blocked.
    warn_after: Option<Duration>,
    /// Every PE blocked for `warn_after` was reported (until one is not blocked).
    told_blocked: bool,
    /// PEs that exited cleanly without finalize while others ran.
    departed: Vec<usize>,
    last_tick: Instant,
    /// `RSHMEM_BIND_TO`: the binding policy when the options name none.
    bind_to: BindTo,
}

impl Job {
    fn say(&self, msg: &str) {
        Sink::Stderr.write(format!("{}: {msg}\n", self.name).as_bytes());
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
                if sig == Signal::TERM {
                    // A stopped PE acts on SIGTERM only once continued.
                    let _ = rustix::process::kill_process(pid, Signal::CONT);
                }
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
                // The job's status is the PE's, 0 included (shmem_global_exit(0)).
                self.end_all(code);
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
        self.pes[pe].exit_slot.put(status);
        let p = &mut self.pes[pe];
        if p.connected && !p.disconnected {
            p.exit_seen = Some((status, Instant::now()));
        } else {
            self.on_exit(pe, status);
        }
    }

    fn on_disconnect(&mut self, pe: usize, error: Option<String>) {
        if let Some(e) = error {
            if self.ending_since.is_none() && self.pes[pe].exited.is_none() {
                self.say(&format!("PE {pe} sent a bad frame ({e}); ending the job"));
                self.end_all(1);
            }
        }
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
        if died {
            let how = describe(&status);
            let what = if connected { "before finalize" } else { "before joining the job" };
            let running = self.live().count();
            self.say(&format!("PE {pe} (pid {pid}) {how} {what}; ending the other {running} PE(s)"));
            self.end_all(if code == 0 { 1 } else { code });
        } else if left_early {
            // The others may be about to exit as well (a program that skips finalize on
            // every PE): they are ended only once nothing can come of them (see
            // `check_departed`), so that none of their output is cut off.
            tracing::debug!("PE {pe} exited without finalize; the others go on while they make progress");
            self.departed.push(pe);
            self.check_departed(Instant::now());
        } else if code != 0 && self.exit == 0 {
            self.exit = code;
        }
    }

    /// After a PE left without finalize: ends the job once every other PE is blocked in
    /// rshmem (for [`BLOCKED_AFTER`]), or waits in a bootstrap exchange the departed PE
    /// never joined.
    fn check_departed(&mut self, now: Instant) {
        if self.departed.is_empty() || self.ending_since.is_some() {
            return;
        }
        let gone = self.departed.iter().any(|&d| self.pes[d].pending.is_none());
        let in_round = self.live().any(|(_, p)| p.pending.is_some());
        let all_blocked = self.live().all(|(_, p)| p.watch.blocked_for(now).is_some_and(|d| d >= BLOCKED_AFTER));
        if self.live().count() == 0 || !((in_round && gone) || all_blocked) {
            return;
        }
        let left: Vec<String> = self.departed.iter().map(|&d| format!("PE {d} (pid {})", self.pes[d].pid)).collect();
        let running: Vec<String> = self.live().map(|(pe, _)| pe.to_string()).collect();
        self.say(&format!(
            "{} exited without finalize (status 0) and the other PEs are blocked; ending PE(s) {}:",
            left.join(", "),
            running.join(", ")
        ));
        self.report(now);
        self.end_all(1);
    }

    /// Reads the board and the process states: the launcher's view of each live PE.
    fn observe(&mut self, now: Instant) {
        // A launcher that was itself stopped (a job suspended from the shell) has not
        // observed anything in between: start the observations over.
        let gap = now - self.last_tick;
        self.last_tick = now;
        let reset = gap > Duration::from_secs(1);
        for pe in 0..self.pes.len() {
            let p = &self.pes[pe];
            if p.exited.is_some() {
                continue;
            }
            let stat = proc_stat(p.pid);
            let record = self.board.read(pe);
            let pending = p.pending.is_some();
            let w = &mut self.pes[pe].watch;
            if reset {
                *w = Watch { told_stopped: w.told_stopped, ..Watch::default() };
            }
            let stopped = stat.as_ref().is_some_and(|s| s.state == 'T' || s.state == 't');
            if stopped {
                w.stopped_since.get_or_insert(now);
            } else {
                w.stopped_since = None;
                w.told_stopped = false;
            }
            match record.filter(|r| r.waiters > 0) {
                Some(r) => {
                    if w.wait.is_none_or(|(since, _)| since != r.since_ns) {
                        w.wait = Some((r.since_ns, now));
                    }
                }
                None => w.wait = None,
            }
            if pending {
                w.boot_since.get_or_insert(now);
            } else {
                w.boot_since = None;
            }
        }
    }

    /// One line per live PE: its process, what it waits for, for how long.
    fn report(&self, now: Instant) {
        let now_ns = status::monotonic_ns();
        for (pe, p) in self.live() {
            let stat = proc_stat(p.pid);
            let mut process = match &stat {
                Some(s) => format!("pid {}, {}", p.pid, describe_state(s.state)),
                None => format!("pid {}", p.pid),
            };
            if let Some(d) = p.watch.stopped_for(now) {
                process.push_str(&format!(" for {:.1} s", d.as_secs_f64()));
            }
            if let Some(s) = &stat {
                process.push_str(&format!(", {:.1} s of CPU", s.cpu.as_secs_f64()));
            }
            let record = self.board.read(pe).filter(|r| r.waiters > 0);
            let doing = match (&record, &p.pending) {
                (Some(r), _) => {
                    format!("{} for {:.1} s", r.text, Duration::from_nanos(now_ns.saturating_sub(r.since_ns)).as_secs_f64())
                }
                (None, Some(_)) => format!(
                    "in a bootstrap exchange (init, allocation or team creation) for {:.1} s, waiting for the PEs that have not joined it",
                    p.watch.boot_since.map(|t| now - t).unwrap_or_default().as_secs_f64()
                ),
                (None, None) if !p.connected => "has not joined the job (not yet in init)".to_string(),
                (None, None) => "not blocked in rshmem".to_string(),
            };
            self.say(&format!("  PE {pe} ({process}): {doing}"));
        }
    }

    /// Liveness: the hang limit, and the reports without one.
    fn check_liveness(&mut self, now: Instant) {
        if self.ending_since.is_some() {
            return;
        }
        self.check_departed(now);
        if self.ending_since.is_some() {
            return;
        }
        let stopped: Vec<(usize, Duration)> = self.live().filter_map(|(pe, p)| p.watch.stopped_for(now).map(|d| (pe, d))).collect();
        let blocked: Vec<(usize, Duration)> = self.live().filter_map(|(pe, p)| p.watch.blocked_for(now).map(|d| (pe, d))).collect();
        if let Some(limit) = self.hang_limit {
            let over = |v: &[(usize, Duration)]| v.iter().filter(|(_, d)| *d >= limit).map(|(pe, _)| *pe).collect::<Vec<_>>();
            let (stopped_over, blocked_over) = (over(&stopped), over(&blocked));
            if !stopped_over.is_empty() || !blocked_over.is_empty() {
                let list = |v: &[usize]| v.iter().map(|pe| pe.to_string()).collect::<Vec<_>>().join(", ");
                let mut cause = Vec::new();
                if !stopped_over.is_empty() {
                    cause.push(format!("PE(s) {} stopped", list(&stopped_over)));
                }
                if !blocked_over.is_empty() {
                    cause.push(format!("PE(s) {} blocked", list(&blocked_over)));
                }
                self.say(&format!(
                    "no progress for {:.1} s (RSHMEM_HANG_TIMEOUT): {}; ending the job. Who waits on whom:",
                    limit.as_secs_f64(),
                    cause.join(", ")
                ));
                self.report(now);
                self.end_all(TIMED_OUT);
                self.exit = TIMED_OUT;
                return;
            }
        }
        let Some(warn) = self.warn_after else { return };
        for (pe, d) in stopped {
            if d >= warn && !self.pes[pe].watch.told_stopped {
                self.pes[pe].watch.told_stopped = true;
                let waiting: Vec<String> = blocked.iter().map(|(pe, _)| pe.to_string()).collect();
                let others = if waiting.is_empty() { String::new() } else { format!("; PE(s) {} wait in rshmem", waiting.join(", ")) };
                self.say(&format!(
                    "PE {pe} (pid {}) has been stopped for {:.0} s (SIGSTOP or a debugger){others}; RSHMEM_HANG_TIMEOUT ends such a job",
                    self.pes[pe].pid,
                    d.as_secs_f64()
                ));
            }
        }
        let live = self.live().count();
        let all_blocked = live > 0 && blocked.len() == live && blocked.iter().all(|(_, d)| *d >= warn);
        if all_blocked && !self.told_blocked {
            self.told_blocked = true;
            self.say(&format!("every PE has been blocked in rshmem for {:.0} s or more; who waits on whom:", warn.as_secs_f64()));
            self.report(now);
        } else if !all_blocked {
            self.told_blocked = false;
        }
    }
}

/// Where a PE process runs (`binding`'s plan for it).
#[derive(Clone, Copy)]
struct PeCpus<'a> {
    /// The process's mask, if it is bound.
    process: Option<&'a [usize]>,
    /// Each thread PE's core, in PE order, when its threads bind themselves.
    threads: Option<&'a [usize]>,
    /// The host's CPUs no PE is bound to (`RSHMEM_SPARE_CPUS`).
    spare: &'a [usize],
}

/// CUDA's setting for the number of hardware queues a process's streams map onto.
const CUDA_QUEUES: &str = "CUDA_DEVICE_MAX_CONNECTIONS";

/// Starts the process of PEs `pes` (one PE, or several as threads): output piped to the
/// forwarders, the parent-death signal set between fork and exec (so that even a PE
/// killed with the launcher before it reached init does not survive it), and bound to
/// `where_to.process` when given (a mask the kernel refuses leaves the process unbound).
fn spawn_pe(
    opts: &LaunchOptions,
    pes: std::ops::Range<usize>,
    where_to: PeCpus<'_>,
    sock_path: &Path,
    key: &str,
    log_color: &str,
) -> std::io::Result<Child> {
    let pe = pes.start;
    let mut cmd = Command::new(&opts.program);
    cmd.args(&opts.args)
        .env("RSHMEM_LAUNCHER_SOCK", sock_path)
        .env("RSHMEM_JOB_KEY", key)
        .env("RSHMEM_PE", pe.to_string())
        .env("RSHMEM_NPES", opts.n_pes.to_string())
        .env("RSHMEM_LOCAL_PES", pes.len().to_string())
        .env("RSHMEM_LOG_COLOR", log_color)
        .envs(opts.env.iter().map(|(k, v)| (k, v)))
        .stdin(if pe == 0 { Stdio::inherit() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.env("RSHMEM_HOST_CPUS", super::binding::allowed_cpus().len().max(1).to_string());
    // Several PEs as threads of one process share its CUDA context, and each PE's kernels
    // wait for its peers' kernels. CUDA maps the process's streams onto 8 hardware
    // queues by default, so a waiting kernel could sit ahead of a peer's kernel in one
    // queue and never let it start: on an H100, 8 thread PEs' MoE check hung in its
    // first dispatch in 3 of 6 runs, and passed 5 of 5 with 32 queues. The user's own
    // setting wins.
    if pes.len() > 1 && std::env::var_os(CUDA_QUEUES).is_none() && !opts.env.iter().any(|(k, _)| k == CUDA_QUEUES) {
        cmd.env(CUDA_QUEUES, "32");
    }
    match where_to.threads {
        // In PE order, one entry per PE (not a CPU list: cores may repeat).
        Some(t) => cmd.env("RSHMEM_THREAD_CPUS", t.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")),
        None => cmd.env_remove("RSHMEM_THREAD_CPUS"),
    };
    if where_to.spare.is_empty() {
        cmd.env_remove("RSHMEM_SPARE_CPUS");
    } else {
        cmd.env("RSHMEM_SPARE_CPUS", super::binding::format_cpu_list(where_to.spare));
    }
    let launcher = rustix::process::getpid();
    let mask = where_to.process.map(super::binding::cpu_set);
    // SAFETY: the closure runs in the child between fork and exec and makes only
    // async-signal-safe system calls (prctl, getppid, sched_setaffinity on a mask made
    // before the fork); it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if let Some(m) = &mask {
                let _ = rustix::thread::sched_setaffinity(None, m);
            }
            rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
            // The launcher may have died before the signal was armed.
            if rustix::process::getppid() != Some(launcher) {
                return Err(rustix::io::Errno::SRCH.into());
            }
            Ok(())
        });
    }
    cmd.spawn()
}

/// The `RSHMEM_LOG_COLOR` the PEs get: the launcher decides `auto` once, from its own
/// stderr, because the PEs' stderr is a pipe to the launcher.
fn pe_log_color(config: &Config) -> &'static str {
    match config.log_color {
        LogColor::Always => "always",
        LogColor::Never => "never",
        LogColor::Auto if std::io::stderr().is_terminal() => "always",
        LogColor::Auto => "never",
    }
}

/// Turns SIGINT, SIGTERM and SIGHUP into events of the job's loop; the handle stops that.
fn forward_signals(events: Sender<Event>) -> std::io::Result<signal_hook::iterator::Handle> {
    let mut signals =
        signal_hook::iterator::Signals::new([signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP])?;
    let handle = signals.handle();
    std::thread::spawn(move || {
        for sig in signals.forever() {
            if events.send(Event::Signal(sig)).is_err() {
                return;
            }
        }
    });
    Ok(handle)
}

/// Where the PEs meet the launcher: the socket, the job's key and the log colour they get.
struct Rendezvous<'a> {
    sock_path: &'a Path,
    key: &'a str,
    log_color: &'a str,
}

/// Forwards a started process's stdout and stderr (one thread per stream, counted in
/// `open_streams` while it runs) and waits for it, sending `Exited` for each of its PEs.
fn watch_process(
    mut child: Child,
    pes: std::ops::Range<usize>,
    opts: &LaunchOptions,
    slot: Arc<ExitSlot>,
    events: Sender<Event>,
    open_streams: &Arc<AtomicUsize>,
) {
    let label = if pes.len() == 1 { format!("PE {}", pes.start) } else { format!("PEs {}-{}", pes.start, pes.end - 1) };
    let streams: [(Option<Box<dyn Read + Send>>, Sink); 2] = [
        (child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>), Sink::Stdout),
        (child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>), Sink::Stderr),
    ];
    for (stream, sink) in streams {
        let Some(stream) = stream else { continue };
        let f = Forwarder { label: label.clone(), sink, tag: opts.tag_output, launcher: opts.name.clone(), at_line_start: true };
        let (slot, open) = (slot.clone(), open_streams.clone());
        open.fetch_add(1, Ordering::AcqRel);
        std::thread::spawn(move || {
            f.run(stream, slot);
            open.fetch_sub(1, Ordering::AcqRel);
        });
    }
    std::thread::spawn(move || {
        if let Ok(status) = child.wait() {
            // Every PE of the process ended with it.
            for pe in pes {
                let _ = events.send(Event::Exited { pe, status });
            }
        }
    });
}

/// Lets the forwarders pass on what the PEs wrote last, for at most [`DRAIN_LIMIT`] (a
/// PE's own child may hold its output open: do not wait for that forever).
fn drain_output(open_streams: &AtomicUsize) {
    let drained = Instant::now();
    while open_streams.load(Ordering::Acquire) > 0 && drained.elapsed() < DRAIN_LIMIT {
        std::thread::sleep(Duration::from_millis(5));
    }
}

impl Job {
    fn new(opts: &LaunchOptions, config: &Config) -> std::io::Result<Job> {
        let warn_after = config.wait_warn.map_or(30, |d| d.as_secs());
        Ok(Job {
            name: opts.name.clone(),
            pes: (0..opts.n_pes).map(|_| PeState::default()).collect(),
            exit: 0,
            ending_since: None,
            board: Board::create(opts.n_pes)?,
            hang_limit: config.hang_timeout,
            warn_after: (warn_after > 0).then(|| Duration::from_secs(warn_after)),
            told_blocked: false,
            departed: Vec::new(),
            last_tick: Instant::now(),
            bind_to: config.bind_to,
        })
    }

    /// Starts the job's processes, `opts.pes_per_process` PEs each. When one cannot be
    /// started, the job ends with 127 and only the PEs already started remain in it.
    fn start_pes(&mut self, opts: &LaunchOptions, rendezvous: &Rendezvous, events: &Sender<Event>, open_streams: &Arc<AtomicUsize>) {
        let per = opts.pes_per_process.max(1);
        let policy = opts.bind_to.unwrap_or(self.bind_to);
        let binding = super::binding::plan(policy, opts.n_pes, per);
        let allowed = super::binding::allowed_cpus();
        let threads = super::binding::thread_cores_with(policy, opts.n_pes, per, &allowed);
        let spare = super::binding::spare_cpus(&binding, &allowed);
        for (j, pe) in (0..opts.n_pes).step_by(per).enumerate() {
            let pes = pe..(pe + per).min(opts.n_pes);
            let cpus = binding.get(j).cloned().flatten();
            let thread_cpus = threads.get(j).cloned().flatten();
            let child = match spawn_pe(
                opts,
                pes.clone(),
                PeCpus { process: cpus.as_deref(), threads: thread_cpus.as_deref(), spare: &spare },
                rendezvous.sock_path,
                rendezvous.key,
                rendezvous.log_color,
            ) {
                Ok(c) => c,
                Err(e) => {
                    self.say(&format!("cannot start PE {pe} ({}): {e}", Path::new(&opts.program).display()));
                    self.end_all(127);
                    // The PEs already started are ended by the event loop.
                    self.pes.truncate(pe);
                    break;
                }
            };
            for p in pes.clone() {
                self.pes[p].pid = child.id();
            }
            let slot = self.pes[pe].exit_slot.clone();
            watch_process(child, pes, opts, slot, events.clone(), open_streams);
        }
    }

    /// Admits PE `pe`'s connection (welcome with the status board, then a reader thread)
    /// unless that PE is already connected. Returns false when it refused the connection.
    fn on_hello(&mut self, pe: usize, stream: UnixStream, n_pes: usize, events: &Sender<Event>, dir: &mut RendezvousDir) -> bool {
        if pe >= self.pes.len() || self.pes[pe].connected {
            let why = format!("PE {pe} is already connected");
            let _ = protocol::send_frame(stream.as_fd(), Kind::Refused, why.as_bytes(), &[]);
            self.say(&format!("refused a connection: {why}"));
            return false;
        }
        if protocol::send_frame(stream.as_fd(), Kind::Welcome, &[], &[self.board.fd()]).is_ok() {
            if let Ok(reader) = stream.try_clone() {
                let (events, n) = (events.clone(), n_pes);
                std::thread::spawn(move || reader_loop(pe, n, reader, events));
            }
            self.pes[pe].stream = Some(stream);
            self.pes[pe].connected = true;
        }
        // Everyone is in: nobody needs the socket's name any more.
        if self.pes.iter().all(|p| p.connected) {
            dir.remove();
        }
        true
    }

    /// The launcher received signal `sig`: end the job with 128 + `sig`.
    fn on_signal(&mut self, sig: i32) {
        let running: Vec<String> = self.live().map(|(pe, _)| pe.to_string()).collect();
        if self.ending_since.is_none() {
            self.say(&format!("received {}; ending PE(s) {}", signal_name(sig), running.join(", ")));
        }
        self.end_all(128 + sig);
        self.exit = 128 + sig;
    }

    /// The checks after each event: liveness once per tick, the job's `--timeout`, and
    /// SIGKILL for PEs still running a grace period after the job began to end.
    fn enforce_limits(&mut self, timeout: Option<Duration>, started: Instant) {
        let now = Instant::now();
        if now - self.last_tick >= TICK {
            self.observe(now);
            self.check_liveness(now);
        }
        if let Some(t) = timeout {
            if started.elapsed() >= t && self.ending_since.is_none() {
                let running: Vec<String> = self.live().map(|(pe, _)| pe.to_string()).collect();
                self.say(&format!("job exceeded --timeout {} s; ending PE(s) {}", t.as_secs_f64(), running.join(", ")));
                self.end_all(TIMED_OUT);
                self.exit = TIMED_OUT;
            }
        }
        if let Some(since) = self.ending_since {
            if since.elapsed() >= KILL_GRACE {
                self.signal_live(Signal::KILL);
            }
        }
    }

    /// The event loop: serves the PEs' connections and frames and reacts to their exits
    /// and to signals until every PE has exited.
    fn run_events(&mut self, opts: &LaunchOptions, rx: &Receiver<Event>, events: &Sender<Event>, dir: &mut RendezvousDir) {
        let timeout = opts.timeout;
        let started = Instant::now();
        while self.unfinished() {
            self.judge_stale_exits();
            let mut wait = TICK;
            if let Some(t) = timeout {
                wait = wait.min(t.saturating_sub(started.elapsed()).max(Duration::from_millis(1)));
            }
            match rx.recv_timeout(wait) {
                Ok(Event::Hello { pe, stream }) => {
                    if !self.on_hello(pe, stream, opts.n_pes, events, dir) {
                        continue;
                    }
                }
                Ok(Event::Refused(why)) => self.say(&format!("refused a connection: {why}")),
                Ok(Event::Frame { pe, frame }) => self.on_frame(pe, frame),
                Ok(Event::Disconnected { pe, error }) => self.on_disconnect(pe, error),
                Ok(Event::Exited { pe, status }) => self.on_child_exit(pe, status),
                Ok(Event::Signal(sig)) => self.on_signal(sig),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            self.enforce_limits(timeout, started);
        }
    }
}

/// Runs a job to completion and returns the launcher's exit code: the first non-zero
/// status of a PE, 124 on timeout or hang limit, 128 + N when signal N ended the
/// launcher, 0 when every PE succeeded.
///
/// While it runs, SIGINT, SIGTERM and SIGHUP end the job (the PEs, then the directory)
/// instead of the process; they stay caught (and ignored) after it returns, so a caller
/// should exit then, as `rshmemrun` and `oshrun` do.
pub fn run(opts: &LaunchOptions) -> std::io::Result<i32> {
    if opts.n_pes == 0 {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "need at least one PE (-n)"));
    }
    let config = Config::from_env().map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    let log_color = pe_log_color(&config);
    let (tx, rx) = channel::<Event>();
    // Signals first: from here on, an interrupted launcher cleans up.
    let signal_handle = forward_signals(tx.clone())?;
    let key = random_key()?;
    let mut dir = RendezvousDir::create(&config, &key)?;
    let sock_path = dir.path.join("rendezvous.sock");
    let listener = UnixListener::bind(&sock_path)?;
    {
        let (tx, key, n) = (tx.clone(), key.clone(), opts.n_pes);
        std::thread::spawn(move || accept_loop(listener, key, n, tx));
    }
    let mut job = Job::new(opts, &config)?;
    let open_streams = Arc::new(AtomicUsize::new(0));
    job.start_pes(opts, &Rendezvous { sock_path: &sock_path, key: &key, log_color }, &tx, &open_streams);
    job.run_events(opts, &rx, &tx, &mut dir);
    drain_output(&open_streams);
    dir.remove();
    signal_handle.close();
    Ok(job.exit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silent_connection_is_named_and_ignored() {
        let (a, b) = UnixStream::pair().unwrap();
        let why = handshake(&a, "k", 2, Duration::from_millis(100)).unwrap_err();
        let me = std::process::id();
        assert_eq!(why, format!("connection from pid {me} sent no hello within 0.1 s; ignored"));
        drop(b);
    }

    #[test]
    fn rendezvous_names_are_recognized() {
        assert_eq!(rendezvous_name("rshmem-1234-0a1b2c3d"), Some((1234, false)));
        assert_eq!(rendezvous_name("rshmem-1234-0a1b2c3d.new"), Some((1234, true)));
        assert_eq!(rendezvous_name("rshmem-netns-pe-12.sh"), None);
        assert_eq!(rendezvous_name("rshmem-1234-0a1b2c3"), None);
        assert_eq!(rendezvous_name("rshmem--0a1b2c3d"), None);
    }

    #[test]
    fn forwarder_keeps_lines_whole_and_tags_them() {
        let mut f = Forwarder { label: "PE 3".into(), sink: Sink::Stderr, tag: true, launcher: "t".into(), at_line_start: true };
        let mut out = Vec::new();
        f.emit(b"a\nbc", &mut out);
        f.emit(b"d\n", &mut out);
        assert_eq!(out, b"[PE 3] a\n[PE 3] bcd\n");
    }

    #[test]
    fn stale_directories_go_and_live_ones_stay() {
        let base = std::env::temp_dir().join(format!("rshmem-stale-test-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        // A launcher that is gone: its lock is free.
        let gone = base.join("rshmem-999999-0a1b2c3d");
        std::fs::create_dir_all(&gone).unwrap();
        File::create(gone.join("lock")).unwrap();
        // One that lives: this process holds its lock.
        let live = base.join("rshmem-1-0a1b2c3e");
        std::fs::create_dir_all(&live).unwrap();
        let held = File::create(live.join("lock")).unwrap();
        rustix::fs::flock(&held, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
        remove_stale(&base);
        assert!(!gone.exists() && live.exists());
        drop(held);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
