//! A bootstrap over TCP: rank 0 listens, every other rank connects to it.
//!
//! It serves launchers that hand each process only its rank, the job size and a meeting
//! point, such as PyTorch's `torchrun` ([`TcpBootstrap::from_torchrun_env`]: `RANK`,
//! `WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`), and programs that make the meeting point
//! themselves: rank 0 creates a [`UniqueId`] (address, port, job key) with
//! [`UniqueId::create`], the program hands its text form to the other ranks however it
//! likes (MPI, a file, a key-value store), and every rank calls [`TcpBootstrap::join`].
//!
//! * Rendezvous: each rank presents the job key, its rank and the job size; rank 0 admits
//!   one connection per rank and welcomes everyone once all have joined (connections with
//!   another key are refused and do not disturb the job). Every step has a deadline.
//! * Collectives run through rank 0 (a star): allgather, barrier (an empty allgather).
//!   Frames are the launcher's ([`super::protocol`]), without descriptors.
//! * Descriptors: TCP cannot carry them, so ranks of one host take each other's through
//!   `/proc/<pid>/fd` or `pidfd_getfd` ([`super::peer_fd`]), as under PMIx.
//! * Failure ends the job: a reader thread per connection watches it. When a rank's
//!   connection closes before it finalized (it died), rank 0 tells every other rank to
//!   abort; when rank 0's closes, the others abort. `abort` on any rank ends every rank.

use super::protocol::{self, Frame, Kind};
use super::Bootstrap;
use crate::config::Config;
use crate::error::{Error, Result};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Default rendezvous deadline (`RSHMEM_BOOTSTRAP_TIMEOUT`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Prefix of a [`UniqueId`]'s text form.
const ID_PREFIX: &str = "rshmem-tcp1";

/// Where and how a TCP job meets: rank 0's address and the key every rank presents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniqueId {
    /// The address rank 0 listens on (what the others connect to).
    pub addr: SocketAddr,
    /// The job key; connections that present another key are refused.
    pub key: String,
}

impl UniqueId {
    /// Made on rank 0: listens on `bind` (port 0 picks a free port) under a fresh random
    /// key. Keep the listener and pass it to [`TcpBootstrap::join`] as
    /// [`Rendezvous::Listen`]; hand the id ([`UniqueId::to_text`]) to the other ranks.
    /// When `bind` is an unspecified address (`0.0.0.0`), the id carries `advertise`
    /// instead, so that other hosts know where to connect.
    pub fn create(bind: SocketAddr, advertise: Option<IpAddr>) -> Result<(UniqueId, TcpListener)> {
        let listener = TcpListener::bind(bind).map_err(|e| Error::Bootstrap(format!("unique id: cannot listen on {bind}: {e}")))?;
        let mut addr = listener.local_addr().map_err(|e| Error::os("unique id: local_addr", e))?;
        if let Some(ip) = advertise {
            addr.set_ip(ip);
        }
        Ok((UniqueId { addr, key: random_key()? }, listener))
    }

    /// Made on rank 0 of a job that may span hosts: listens on every address of this host
    /// at `port` (0 picks a free one) and advertises [`host_address`], the address the
    /// others connect to. What the C ABI's `shmemx_get_uniqueid` makes.
    pub fn for_this_host(port: u16) -> Result<(UniqueId, TcpListener)> {
        UniqueId::create(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port), Some(host_address()))
    }

    /// Text form: `rshmem-tcp1 ADDRESS KEY` (e.g. `rshmem-tcp1 10.0.0.5:29501 9f3c...`).
    pub fn to_text(&self) -> String {
        format!("{ID_PREFIX} {} {}", self.addr, self.key)
    }

    /// Parses [`UniqueId::to_text`]'s form.
    pub fn from_text(text: &str) -> Result<UniqueId> {
        let bad =
            |why: &str| Error::InvalidArgument { call: "UniqueId::from_text", arg: "text", detail: format!("`{text}`: {why}"), pe: 0 };
        let mut parts = text.split_whitespace();
        if parts.next() != Some(ID_PREFIX) {
            return Err(bad(&format!("does not start with `{ID_PREFIX}`")));
        }
        let addr = parts.next().ok_or_else(|| bad("no address"))?.parse::<SocketAddr>().map_err(|e| bad(&format!("address: {e}")))?;
        let key = parts.next().ok_or_else(|| bad("no key"))?.to_string();
        if parts.next().is_some() {
            return Err(bad("trailing text"));
        }
        Ok(UniqueId { addr, key })
    }
}

/// This host's address for other hosts: the source address of its default route (a UDP
/// socket connected to a documentation address: nothing is sent), else the first
/// non-loopback address its name resolves to, else loopback (a job of one host).
pub fn host_address() -> IpAddr {
    let routed = std::net::UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))
        .and_then(|s| s.connect((Ipv4Addr::new(192, 0, 2, 1), 9)).and_then(|()| s.local_addr()))
        .map(|a| a.ip())
        .ok()
        .filter(|ip| !ip.is_unspecified() && !ip.is_loopback());
    if let Some(ip) = routed {
        return ip;
    }
    let name = rustix::system::uname().nodename().to_string_lossy().into_owned();
    let named = (name.as_str(), 0u16).to_socket_addrs().ok().and_then(|mut a| a.find(|a| !a.ip().is_loopback()).map(|a| a.ip()));
    named.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST))
}

/// A random job key: 16 bytes from the OS, in hex.
fn random_key() -> Result<String> {
    let mut b = [0u8; 16];
    let mut got = 0;
    while got < b.len() {
        got += rustix::rand::getrandom(&mut b[got..], rustix::rand::GetRandomFlags::empty()).map_err(|e| Error::os("getrandom", e))?;
    }
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// How this rank meets the others.
#[derive(Debug)]
pub enum Rendezvous {
    /// Rank 0: accept the others on this listener.
    Listen(TcpListener),
    /// Any other rank: connect to rank 0 at one of these addresses (tried in turn).
    Connect(Vec<SocketAddr>),
}

/// What the reader threads hand the rank's own calls.
enum Event {
    /// A frame from rank `from` (rank 0 for members).
    Frame { from: usize, frame: Frame },
}

/// Rank 0's connections, one per other rank (index `rank - 1`), for writing.
type Links = Arc<Vec<Mutex<TcpStream>>>;

enum Role {
    Root { links: Links, finalized: Arc<Vec<AtomicBool>> },
    Member { root: Mutex<TcpStream> },
}

/// A rank of a job that meets over TCP.
pub struct TcpBootstrap {
    rank: usize,
    size: usize,
    role: Role,
    events: Receiver<Event>,
    /// Set once this rank has finalized: its connections may close quietly after that.
    finalized: Arc<AtomicBool>,
    timeout: Duration,
}

impl std::fmt::Debug for TcpBootstrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpBootstrap").field("rank", &self.rank).field("size", &self.size).finish()
    }
}

/// Whether the configuration (the environment) looks like a torchrun worker's (`RANK`
/// set and `WORLD_SIZE` above 1): then [`TcpBootstrap::from_torchrun_env`] is the
/// bootstrap.
pub fn torchrun_env_present(config: &Config) -> bool {
    config.torch_rank.is_some() && config.torch_world_size.is_some_and(|n| n > 1)
}

impl TcpBootstrap {
    /// Joins a job described by torchrun's environment (read into `config`): `RANK` of
    /// `WORLD_SIZE`, rank 0 on `MASTER_ADDR`. torchrun's own store holds `MASTER_PORT`, so
    /// rank 0 listens on `RSHMEM_BOOTSTRAP_PORT` (default `MASTER_PORT + 1`). The job key
    /// is made from `TORCHELASTIC_RUN_ID`, the address, the port and the size.
    pub fn from_torchrun_env(config: &Config) -> Result<TcpBootstrap> {
        let need = |name: &str| Error::Bootstrap(format!("RANK and WORLD_SIZE are set (a torchrun-style launch) but {name} is not"));
        let rank = config.torch_rank.ok_or_else(|| Error::Bootstrap("RANK is not set".into()))?;
        let size = config.torch_world_size.ok_or_else(|| Error::Bootstrap("WORLD_SIZE is not set".into()))?;
        let host = config.master_addr.clone().ok_or_else(|| need("MASTER_ADDR"))?;
        let master_port = config.master_port.ok_or_else(|| need("MASTER_PORT"))?;
        let master_port = u16::try_from(master_port).map_err(|_| Error::Bootstrap(format!("MASTER_PORT={master_port} is not a port")))?;
        let port = match config.bootstrap_port {
            Some(p) => u16::try_from(p).map_err(|_| Error::Bootstrap(format!("RSHMEM_BOOTSTRAP_PORT={p} is not a port")))?,
            None => master_port
                .checked_add(1)
                .ok_or_else(|| Error::Bootstrap("MASTER_PORT is 65535, so MASTER_PORT + 1 is no port: set RSHMEM_BOOTSTRAP_PORT".into()))?,
        };
        let timeout = config.bootstrap_timeout;
        if rank >= size {
            return Err(Error::Bootstrap(format!("RANK={rank} is not below WORLD_SIZE={size}")));
        }
        let run_id = config.torchelastic_run_id.clone().unwrap_or_default();
        let key = format!("torchrun/{run_id}/{host}:{master_port}/{size}");
        let addrs: Vec<SocketAddr> = (host.as_str(), port)
            .to_socket_addrs()
            .map_err(|e| Error::Bootstrap(format!("PE {rank}: cannot resolve MASTER_ADDR={host}: {e}")))?
            .collect();
        if addrs.is_empty() {
            return Err(Error::Bootstrap(format!("PE {rank}: MASTER_ADDR={host} resolves to no address")));
        }
        let rendezvous = if rank == 0 { Rendezvous::Listen(listen_on(&addrs, port)?) } else { Rendezvous::Connect(addrs) };
        TcpBootstrap::join(rendezvous, &key, rank, size, timeout)
    }

    /// Meets the other ranks: rank 0 passes the listener ([`Rendezvous::Listen`]), the
    /// others rank 0's addresses; every rank passes the same `key` and `size`. Fails after
    /// `timeout` if the job is not complete by then, naming the ranks still missing.
    pub fn join(rendezvous: Rendezvous, key: &str, rank: usize, size: usize, timeout: Duration) -> Result<TcpBootstrap> {
        if size == 0 || rank >= size {
            return Err(Error::Bootstrap(format!("TCP bootstrap: rank {rank} of {size} ranks")));
        }
        let deadline = Instant::now() + timeout;
        let (tx, events) = channel();
        let finalized = Arc::new(AtomicBool::new(false));
        let role = match rendezvous {
            Rendezvous::Listen(listener) => {
                if rank != 0 {
                    return Err(Error::Bootstrap(format!("TCP bootstrap: rank {rank} was given the listener; only rank 0 listens")));
                }
                let streams = accept_all(&listener, key, size, deadline)?;
                let mut readers = Vec::with_capacity(streams.len());
                for s in &streams {
                    readers.push(s.try_clone().map_err(|e| Error::os("TCP bootstrap: clone a connection", e))?);
                }
                let links: Links = Arc::new(streams.into_iter().map(Mutex::new).collect());
                let done: Arc<Vec<AtomicBool>> = Arc::new((1..size).map(|_| AtomicBool::new(false)).collect());
                for (i, stream) in readers.into_iter().enumerate() {
                    let (tx, links, done) = (tx.clone(), links.clone(), done.clone());
                    std::thread::Builder::new()
                        .name(format!("rshmem-tcp-{}", i + 1))
                        .spawn(move || root_reader(i + 1, stream, tx, links, done))
                        .map_err(|e| Error::os("TCP bootstrap: start a reader thread", e))?;
                }
                for l in links.iter() {
                    send(&l.lock().unwrap_or_else(|p| p.into_inner()), Kind::Welcome, &[])
                        .map_err(|e| Error::Bootstrap(format!("PE 0: welcome: {e}")))?;
                }
                Role::Root { links, finalized: done }
            }
            Rendezvous::Connect(addrs) => {
                if rank == 0 {
                    return Err(Error::Bootstrap("TCP bootstrap: rank 0 must listen (Rendezvous::Listen), not connect".into()));
                }
                let stream = connect(&addrs, key, rank, size, deadline)?;
                let reader = stream.try_clone().map_err(|e| Error::os("TCP bootstrap: clone a connection", e))?;
                let fin = finalized.clone();
                std::thread::Builder::new()
                    .name("rshmem-tcp-0".into())
                    .spawn(move || member_reader(rank, size, reader, tx, fin))
                    .map_err(|e| Error::os("TCP bootstrap: start a reader thread", e))?;
                Role::Member { root: Mutex::new(stream) }
            }
        };
        tracing::debug!(rank, size, "TCP bootstrap joined");
        Ok(TcpBootstrap { rank, size, role, events, finalized, timeout })
    }

    /// The next frame from the reader threads.
    fn next(&self, waiting_for: &str) -> Result<(usize, Frame)> {
        match self.events.recv() {
            Ok(Event::Frame { from, frame }) => Ok((from, frame)),
            Err(_) => Err(Error::Bootstrap(format!("PE {}: the bootstrap connections closed while waiting for {waiting_for}", self.rank))),
        }
    }
}

/// Sends one frame (no descriptors).
fn send(stream: &TcpStream, kind: Kind, payload: &[u8]) -> std::io::Result<()> {
    protocol::send_frame(stream.as_fd(), kind, payload, &[])
}

/// Rank 0's listener on `addrs` (MASTER_ADDR resolved) and `port`: the first address
/// that binds; when none is an address of this machine, the wildcard address.
fn listen_on(addrs: &[SocketAddr], port: u16) -> Result<TcpListener> {
    let mut last = None;
    for a in addrs {
        match TcpListener::bind(a) {
            Ok(l) => return Ok(l),
            Err(e) if e.kind() == ErrorKind::AddrNotAvailable => last = Some(e),
            Err(e) => return Err(bind_error(*a, e)),
        }
    }
    let any: SocketAddr =
        if addrs.iter().all(|a| a.is_ipv6()) { (Ipv6Addr::UNSPECIFIED, port).into() } else { (Ipv4Addr::UNSPECIFIED, port).into() };
    tracing::debug!(?last, %any, "MASTER_ADDR is not an address of this machine: listening on the wildcard address");
    TcpListener::bind(any).map_err(|e| bind_error(any, e))
}

fn bind_error(a: SocketAddr, e: std::io::Error) -> Error {
    Error::Bootstrap(format!(
        "PE 0: cannot listen on {a} for the TCP bootstrap: {e}{}",
        if e.kind() == ErrorKind::AddrInUse { " (choose another port with RSHMEM_BOOTSTRAP_PORT)" } else { "" }
    ))
}

/// Hello payload: key, rank, size, pid.
fn hello(key: &str, rank: usize, size: usize) -> Vec<u8> {
    protocol::encode_list(&[
        key.as_bytes().to_vec(),
        (rank as u32).to_le_bytes().to_vec(),
        (size as u32).to_le_bytes().to_vec(),
        std::process::id().to_le_bytes().to_vec(),
    ])
}

/// Parses a hello: (key, rank, size).
fn parse_hello(payload: &[u8]) -> Option<(Vec<u8>, usize, usize)> {
    let items = protocol::decode_list(payload).ok()?;
    if items.len() != 4 || items[1].len() != 4 || items[2].len() != 4 {
        return None;
    }
    let num = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize;
    Some((items[0].clone(), num(&items[1]), num(&items[2])))
}

/// Rank 0: accepts one connection per other rank before `deadline`.
fn accept_all(listener: &TcpListener, key: &str, size: usize, deadline: Instant) -> Result<Vec<TcpStream>> {
    let mut joined: Vec<Option<TcpStream>> = (1..size).map(|_| None).collect();
    listener.set_nonblocking(true).map_err(|e| Error::os("TCP bootstrap: listener", e))?;
    while joined.iter().any(|s| s.is_none()) {
        let now = Instant::now();
        if now >= deadline {
            let missing: Vec<String> = joined.iter().enumerate().filter(|(_, s)| s.is_none()).map(|(i, _)| (i + 1).to_string()).collect();
            return Err(Error::Bootstrap(format!(
                "PE 0: TCP bootstrap: PEs {} did not join within the rendezvous deadline (RSHMEM_BOOTSTRAP_TIMEOUT)",
                missing.join(", ")
            )));
        }
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
            Err(e) => return Err(Error::os("TCP bootstrap: accept", e)),
        };
        let admit = || -> std::io::Result<Option<(usize, Vec<u8>)>> {
            stream.set_nonblocking(false)?;
            stream.set_nodelay(true)?;
            // A connection gets a few seconds to introduce itself.
            stream.set_read_timeout(Some(
                deadline.saturating_duration_since(Instant::now()).clamp(Duration::from_millis(1), Duration::from_secs(10)),
            ))?;
            let f = protocol::recv_frame(stream.as_fd(), size)?;
            if f.kind != Kind::Hello {
                return Ok(None);
            }
            Ok(parse_hello(&f.payload).map(|(k, r, n)| {
                let refusal = if k != key.as_bytes() {
                    Some("job key does not match".to_string())
                } else if n != size {
                    Some(format!("it says the job has {n} PEs, PE 0 has {size}"))
                } else if r == 0 || r >= size {
                    Some(format!("rank {r} is not in 1..{size}"))
                } else {
                    None
                };
                (r, refusal.map(String::into_bytes).unwrap_or_default())
            }))
        };
        match admit() {
            Ok(Some((r, refusal))) if refusal.is_empty() => {
                if joined[r - 1].is_some() {
                    let _ = send(&stream, Kind::Refused, b"another process already joined as this rank");
                    return Err(Error::Bootstrap(format!("PE 0: TCP bootstrap: two processes joined as PE {r}")));
                }
                let _ = stream.set_read_timeout(None);
                joined[r - 1] = Some(stream);
            }
            Ok(Some((r, refusal))) => {
                tracing::warn!(rank = r, reason = %String::from_utf8_lossy(&refusal), "TCP bootstrap: refused a connection");
                let _ = send(&stream, Kind::Refused, &refusal);
            }
            // Not one of ours (no hello, a bad frame, silence): drop it.
            Ok(None) | Err(_) => {}
        }
    }
    Ok(joined.into_iter().map(|s| s.expect("every rank joined")).collect())
}

/// Any other rank: connects to rank 0 (retrying until it listens), introduces itself and
/// waits for the welcome that comes once every rank has joined.
fn connect(addrs: &[SocketAddr], key: &str, rank: usize, size: usize, deadline: Instant) -> Result<TcpStream> {
    let stream = loop {
        let mut last = None;
        let mut made = None;
        for a in addrs {
            match TcpStream::connect_timeout(a, Duration::from_secs(1)) {
                Ok(s) => {
                    made = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        if let Some(s) = made {
            break s;
        }
        if Instant::now() >= deadline {
            return Err(Error::Bootstrap(format!(
                "PE {rank}: cannot reach PE 0 at {} for the TCP bootstrap before the rendezvous deadline: {}",
                addrs.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(" or "),
                last.map(|e| e.to_string()).unwrap_or_default()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let lost = |e: std::io::Error| Error::Bootstrap(format!("PE {rank}: TCP bootstrap rendezvous with PE 0: {e}"));
    stream.set_nodelay(true).map_err(lost)?;
    send(&stream, Kind::Hello, &hello(key, rank, size)).map_err(lost)?;
    stream.set_read_timeout(Some(deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1)))).map_err(lost)?;
    let reply = protocol::recv_frame(stream.as_fd(), size).map_err(|e| {
        if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) {
            Error::Bootstrap(format!(
                "PE {rank}: TCP bootstrap: the job was not complete within the rendezvous deadline (RSHMEM_BOOTSTRAP_TIMEOUT)"
            ))
        } else {
            lost(e)
        }
    })?;
    stream.set_read_timeout(None).map_err(lost)?;
    match reply.kind {
        Kind::Welcome => Ok(stream),
        Kind::Refused => Err(Error::Bootstrap(format!("PE {rank}: PE 0 refused it: {}", String::from_utf8_lossy(&reply.payload)))),
        k => Err(Error::Bootstrap(format!("PE {rank}: unexpected reply {k:?} from PE 0"))),
    }
}

/// Abort payload: i32 code, then the message.
fn abort_payload(code: i32, msg: &str) -> Vec<u8> {
    let mut p = code.to_le_bytes().to_vec();
    p.extend_from_slice(msg.as_bytes());
    p
}

fn parse_abort(p: &[u8]) -> (i32, String) {
    let code = p.get(..4).map(|b| i32::from_le_bytes(b.try_into().expect("4 bytes"))).unwrap_or(1);
    (code, String::from_utf8_lossy(p.get(4..).unwrap_or_default()).into_owned())
}

/// Set by the first thread of this process that ends the job from rank 0.
static ROOT_ENDING: AtomicBool = AtomicBool::new(false);

/// Rank 0 ends the job: every other rank is told to abort, then this process exits. The
/// first cause wins: a rank that exits on the abort closes its connection, and its reader
/// (another thread) must not end the process first with "closed its connection" and status 1.
fn root_abort(links: &Links, skip: Option<usize>, code: i32, msg: &str) -> ! {
    if ROOT_ENDING.swap(true, Ordering::SeqCst) {
        // Another thread is ending the process with the first cause; wait for its exit.
        loop {
            std::thread::park();
        }
    }
    let payload = abort_payload(code, msg);
    for (i, l) in links.iter().enumerate() {
        if skip != Some(i + 1) {
            let _ = send(&l.lock().unwrap_or_else(|p| p.into_inner()), Kind::Abort, &payload);
        }
    }
    crate::log::line(&format!("rshmem: PE 0 ends the job ({code}): {msg}"));
    std::process::exit(if code == 0 { 1 } else { code })
}

/// Rank 0's reader of rank `from`'s connection.
fn root_reader(from: usize, stream: TcpStream, tx: Sender<Event>, links: Links, done: Arc<Vec<AtomicBool>>) {
    let size = done.len() + 1;
    loop {
        match protocol::recv_frame(stream.as_fd(), size) {
            Ok(f) if f.kind == Kind::Abort => {
                let (code, msg) = parse_abort(&f.payload);
                root_abort(&links, Some(from), code, &format!("PE {from} aborted: {msg}"));
            }
            Ok(f) => {
                if f.kind == Kind::Finalize {
                    done[from - 1].store(true, Ordering::SeqCst);
                }
                if tx.send(Event::Frame { from, frame: f }).is_err() {
                    return;
                }
            }
            Err(e) => {
                if done[from - 1].load(Ordering::SeqCst) {
                    return;
                }
                root_abort(&links, Some(from), 1, &format!("PE {from} closed its bootstrap connection before finalize (it died?): {e}"));
            }
        }
    }
}

/// A member's reader of its connection to rank 0.
fn member_reader(rank: usize, size: usize, stream: TcpStream, tx: Sender<Event>, finalized: Arc<AtomicBool>) {
    loop {
        match protocol::recv_frame(stream.as_fd(), size) {
            Ok(f) if f.kind == Kind::Abort => {
                let (code, msg) = parse_abort(&f.payload);
                crate::log::line(&format!("rshmem: PE {rank}: the job ends ({code}): {msg}"));
                std::process::exit(if code == 0 { 1 } else { code });
            }
            Ok(f) => {
                if tx.send(Event::Frame { from: 0, frame: f }).is_err() {
                    return;
                }
            }
            Err(e) => {
                if finalized.load(Ordering::SeqCst) {
                    return;
                }
                crate::log::line(&format!("rshmem: PE {rank}: lost the bootstrap connection to PE 0 before finalize (it died?): {e}"));
                std::process::exit(1);
            }
        }
    }
}

impl Bootstrap for TcpBootstrap {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn allgather(&mut self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        match &self.role {
            Role::Root { links, .. } => {
                let mut got: Vec<Option<Vec<u8>>> = vec![None; self.size];
                got[0] = Some(mine.to_vec());
                while got.iter().any(|g| g.is_none()) {
                    let (from, f) = self.next("an allgather")?;
                    match f.kind {
                        Kind::Allgather if got[from].is_none() => got[from] = Some(f.payload),
                        Kind::Allgather => {
                            return Err(Error::Bootstrap(format!("PE 0: allgather: PE {from} contributed twice to one round")))
                        }
                        Kind::Finalize => {
                            return Err(Error::Bootstrap(format!(
                                "PE 0: allgather: PE {from} finalized while PE 0 waits for it in a bootstrap collective"
                            )))
                        }
                        k => return Err(Error::Bootstrap(format!("PE 0: allgather: unexpected {k:?} from PE {from}"))),
                    }
                }
                let all: Vec<Vec<u8>> = got.into_iter().map(|g| g.expect("complete")).collect();
                let payload = protocol::encode_list(&all);
                for (i, l) in links.iter().enumerate() {
                    send(&l.lock().unwrap_or_else(|p| p.into_inner()), Kind::AllgatherResult, &payload)
                        .map_err(|e| Error::Bootstrap(format!("PE 0: allgather: sending to PE {}: {e}", i + 1)))?;
                }
                Ok(all)
            }
            Role::Member { root } => {
                send(&root.lock().unwrap_or_else(|p| p.into_inner()), Kind::Allgather, mine)
                    .map_err(|e| Error::Bootstrap(format!("PE {}: allgather: lost PE 0: {e}", self.rank)))?;
                let (_, f) = self.next("an allgather")?;
                if f.kind != Kind::AllgatherResult {
                    return Err(Error::Bootstrap(format!("PE {}: allgather: unexpected {:?} from PE 0", self.rank, f.kind)));
                }
                let list = protocol::decode_list(&f.payload).map_err(|e| Error::Bootstrap(format!("PE {}: allgather: {e}", self.rank)))?;
                if list.len() != self.size {
                    return Err(Error::Bootstrap(format!("allgather returned {} entries for {} PEs", list.len(), self.size)));
                }
                Ok(list)
            }
        }
    }
    fn allgather_fd(&mut self, fd: BorrowedFd<'_>) -> Result<Vec<OwnedFd>> {
        let all = vec![true; self.size];
        Ok(self.allgather_fd_from(fd, &all)?.into_iter().flatten().collect())
    }
    fn allgather_fd_from(&mut self, fd: BorrowedFd<'_>, from: &[bool]) -> Result<Vec<Option<OwnedFd>>> {
        super::peer_fd::allgather_fd_by_pid(self, "TCP", fd, from)
    }
    fn finalize(&mut self) -> Result<()> {
        if self.finalized.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        match &self.role {
            Role::Member { root } => send(&root.lock().unwrap_or_else(|p| p.into_inner()), Kind::Finalize, &[])
                .map_err(|e| Error::Bootstrap(format!("PE {}: finalize: lost PE 0: {e}", self.rank))),
            Role::Root { finalized, .. } => {
                // Rank 0 stays until every rank has said goodbye, so that none sees its
                // connection close first and takes it for a death.
                let until = Instant::now() + self.timeout;
                while !finalized.iter().all(|f| f.load(Ordering::SeqCst)) {
                    match self.events.recv_timeout(until.saturating_duration_since(Instant::now())) {
                        Ok(Event::Frame { frame, from }) if frame.kind != Kind::Finalize => {
                            return Err(Error::Bootstrap(format!("PE 0: finalize: unexpected {:?} from PE {from}", frame.kind)))
                        }
                        Ok(_) => {}
                        Err(RecvTimeoutError::Timeout) => {
                            let missing: Vec<String> = finalized
                                .iter()
                                .enumerate()
                                .filter(|(_, f)| !f.load(Ordering::SeqCst))
                                .map(|(i, _)| (i + 1).to_string())
                                .collect();
                            return Err(Error::Bootstrap(format!("PE 0: finalize: PEs {} did not finalize in time", missing.join(", "))));
                        }
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                Ok(())
            }
        }
    }
    fn abort(&mut self, code: i32, msg: &str) -> ! {
        match &self.role {
            Role::Root { links, .. } => root_abort(links, None, code, &format!("PE 0 aborted: {msg}")),
            Role::Member { root } => {
                let _ = send(&root.lock().unwrap_or_else(|p| p.into_inner()), Kind::Abort, &abort_payload(code, msg));
                crate::log::line(&format!("rshmem: PE {} aborts the job ({code}): {msg}", self.rank));
                std::process::exit(if code == 0 { 1 } else { code })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn localhost() -> SocketAddr {
        (Ipv4Addr::LOCALHOST, 0).into()
    }

    #[test]
    fn unique_ids_round_trip_as_text() {
        let (id, _l) = UniqueId::create(localhost(), None).unwrap();
        assert_eq!(id.addr.ip(), IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_ne!(id.addr.port(), 0);
        assert_eq!(id.key.len(), 32);
        assert_eq!(UniqueId::from_text(&id.to_text()).unwrap(), id);
        let v6 = UniqueId { addr: "[::1]:29501".parse().unwrap(), key: "k".into() };
        assert_eq!(UniqueId::from_text(&v6.to_text()).unwrap(), v6);
        for bad in ["", "rshmem-tcp1", "other 127.0.0.1:1 k", "rshmem-tcp1 nothost k", "rshmem-tcp1 127.0.0.1:1 k extra"] {
            assert!(UniqueId::from_text(bad).is_err(), "{bad}");
        }
    }

    /// An id for other hosts listens on every address and carries one they can reach (not
    /// the unspecified address), and a rank joins through it.
    #[test]
    fn ids_for_this_host_advertise_a_reachable_address() {
        let (id, listener) = UniqueId::for_this_host(0).unwrap();
        assert!(!id.addr.ip().is_unspecified(), "{id:?}");
        assert!(listener.local_addr().unwrap().ip().is_unspecified());
        assert_eq!(UniqueId::from_text(&id.to_text()).unwrap(), id);
        let t = Duration::from_secs(20);
        let key = id.key.clone();
        let root = std::thread::spawn(move || TcpBootstrap::join(Rendezvous::Listen(listener), &key, 0, 2, t).unwrap());
        let mut member = TcpBootstrap::join(Rendezvous::Connect(vec![id.addr]), &id.key, 1, 2, t).unwrap();
        let mut root = root.join().unwrap();
        let other = std::thread::spawn(move || member.allgather(b"1").unwrap());
        assert_eq!(root.allgather(b"0").unwrap(), vec![b"0".to_vec(), b"1".to_vec()]);
        assert_eq!(other.join().unwrap(), vec![b"0".to_vec(), b"1".to_vec()]);
    }

    /// Three ranks as threads of this process: allgather, barrier, a refused stranger,
    /// finalize.
    #[test]
    fn three_ranks_allgather_and_finalize() {
        let (id, listener) = UniqueId::create(localhost(), None).unwrap();
        let t = Duration::from_secs(20);
        let key = id.key.clone();
        let root = std::thread::spawn(move || TcpBootstrap::join(Rendezvous::Listen(listener), &key, 0, 3, t).unwrap());
        // A stranger with another key is refused and does not disturb the job.
        let refused = connect(&[id.addr], "wrong", 1, 3, Instant::now() + t).unwrap_err().to_string();
        assert!(refused.contains("job key does not match"), "{refused}");
        let members: Vec<_> = (1..3)
            .map(|r| {
                let id = id.clone();
                std::thread::spawn(move || {
                    let mut b = TcpBootstrap::join(Rendezvous::Connect(vec![id.addr]), &id.key, r, 3, t).unwrap();
                    let all = b.allgather(&[r as u8; 3][..r]).unwrap();
                    b.barrier().unwrap();
                    let again = b.allgather(b"x").unwrap();
                    b.finalize().unwrap();
                    (all, again)
                })
            })
            .collect();
        let mut root = root.join().unwrap();
        let all = root.allgather(b"").unwrap();
        assert_eq!(all, vec![vec![], vec![1], vec![2, 2]]);
        root.barrier().unwrap();
        assert_eq!(root.allgather(b"x").unwrap().len(), 3);
        root.finalize().unwrap();
        for m in members {
            let (a, again) = m.join().unwrap();
            assert_eq!(a, all);
            assert_eq!(again, vec![b"x".to_vec(); 3]);
        }
    }

    #[test]
    fn a_missing_rank_fails_the_rendezvous_by_name() {
        let (id, listener) = UniqueId::create(localhost(), None).unwrap();
        let e = TcpBootstrap::join(Rendezvous::Listen(listener), &id.key, 0, 3, Duration::from_millis(300)).unwrap_err().to_string();
        assert!(e.contains("PEs 1, 2 did not join"), "{e}");
        // Nobody listens on a closed listener's port.
        let e = TcpBootstrap::join(Rendezvous::Connect(vec![id.addr]), &id.key, 1, 2, Duration::from_millis(300)).unwrap_err().to_string();
        assert!(e.contains("cannot reach PE 0"), "{e}");
    }
}
