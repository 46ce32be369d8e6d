//! The staged protocol over UCX active messages: the transport for peers whose heap UCX
//! cannot touch itself (GPU heaps: the UCX builds here are not CUDA-aware), and, with
//! `RSHMEM_UCX_PROTOCOL=am`, for host heaps too (so CPU runs test the same code).
//!
//! Every operation is a message to the target PE (`ucp_am_send_nbx`, eager protocol, one
//! buffer: an 80-byte header then the payload). The target's handler only queues what
//! arrives; its progress thread (or any of its threads waiting on UCX) carries the queued
//! requests out with the PE's own transport for itself (`me`: the local transport for a
//! host heap, the CUDA copy/atomic transport for a GPU heap, which copies host to device
//! and runs atomics as a one-thread kernel) and answers each with a reply message.
//!
//! Ordering: UCX documents no ordering of active messages on an endpoint (multi-lane
//! transports may reorder them), so every request carries a sequence number per
//! (origin, target) pair, and the target carries requests out strictly in that order,
//! holding back any that arrive early. So operations from one PE to another take effect
//! in issue order: `fence` has nothing to add.
//!
//! Completion: `put`, `store_word` and the non-fetching atomics return once the message
//! is handed to UCX (the payload is copied into the message); the target acknowledges
//! each, and `quiet` waits until every acknowledgement is in. `get`, `load_word` and the
//! fetching atomics wait for their reply.
//!
//! Relays ([`Transport::relay_put`], `relay_get`): the request goes to the relay PE, whose
//! progress thread carries it on to the final PE with its own means (this protocol when it
//! serves that PE, else its mapped transport) and answers the origin only once the final
//! PE has acknowledged the forwarded put (or replied to the forwarded get). Nothing in
//! the relay waits inside the progress loop, so two relays through each other cannot
//! deadlock. A relayed put is complete at the origin's `quiet` (which waits for the relay
//! PE's acknowledgement); it is not ordered with direct requests to the final PE.

use super::ffi;
use super::{connect, zeroed, Waits, Worker};
use crate::bootstrap::status::WaitWatch;
use crate::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::heap::SegmentHook;
use crate::transport::{AmoOp, Caps, Transport};
use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Active message id of requests.
const AM_REQUEST: u32 = 17;
/// Active message id of replies.
const AM_REPLY: u32 = 18;
/// Header words at the front of every message.
const HEADER_WORDS: usize = 10;
/// Header bytes.
const HEADER: usize = HEADER_WORDS * 8;
/// Largest payload of one message; larger puts and gets travel as several.
pub const MAX_PIECE: usize = 256 << 10;

/// What a message asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Put = 1,
    Get = 2,
    Amo = 3,
    Reply = 4,
    /// A put the receiving (relay) PE carries on to PE `width`.
    RelayPut = 5,
    /// A get the receiving (relay) PE fetches from PE `width` and returns.
    RelayGet = 6,
    /// Several puts in one message: `width` pieces, each an offset word, a length word
    /// and the bytes padded to whole words ([`gather`], [`scatter`]).
    PutV = 7,
}

impl Kind {
    fn from(v: u64) -> Option<Kind> {
        Some(match v {
            1 => Kind::Put,
            2 => Kind::Get,
            3 => Kind::Amo,
            4 => Kind::Reply,
            5 => Kind::RelayPut,
            6 => Kind::RelayGet,
            7 => Kind::PutV,
            _ => return None,
        })
    }
}

/// The header of a message (ten little-endian words).
#[derive(Debug, Clone, Copy)]
struct Header {
    kind: Kind,
    /// The sending PE.
    src: usize,
    /// Requests: sequence number from `src` to this target.
    seq: u64,
    /// Request id the reply answers (0: an acknowledgement only).
    id: u64,
    offset: u64,
    len: u64,
    width: u64,
    /// Requests: the atomic operation; replies: status (0 ok, else an error text follows).
    op: u64,
    operand: u64,
    compare: u64,
}

impl Header {
    fn encode(&self, payload: &[u8]) -> Vec<u8> {
        let words =
            [self.kind as u64, self.src as u64, self.seq, self.id, self.offset, self.len, self.width, self.op, self.operand, self.compare];
        let mut buf = Vec::with_capacity(HEADER + payload.len());
        for w in words {
            buf.extend_from_slice(&w.to_le_bytes());
        }
        buf.extend_from_slice(payload);
        buf
    }

    fn decode(msg: &[u8]) -> Option<Header> {
        if msg.len() < HEADER {
            return None;
        }
        let w = |i: usize| u64::from_le_bytes(msg[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        Some(Header {
            kind: Kind::from(w(0))?,
            src: w(1) as usize,
            seq: w(2),
            id: w(3),
            offset: w(4),
            len: w(5),
            width: w(6),
            op: w(7),
            operand: w(8),
            compare: w(9),
        })
    }
}

/// Appends one piece of a [`Kind::PutV`] message to `msg`.
fn gather(msg: &mut Vec<u8>, offset: usize, bytes: &[u8]) {
    msg.extend_from_slice(&(offset as u64).to_le_bytes());
    msg.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    msg.extend_from_slice(bytes);
    msg.resize(msg.len().next_multiple_of(8), 0);
}

/// Bytes one piece of `len` bytes takes in a [`Kind::PutV`] message.
fn gathered_size(len: usize) -> usize {
    16 + len.next_multiple_of(8)
}

/// The `count` pieces of a [`Kind::PutV`] message, each checked to lie in `0..span`.
fn scatter(msg: &[u8], count: usize, span: usize) -> std::result::Result<Vec<(usize, &[u8])>, String> {
    let mut pieces = Vec::with_capacity(count);
    let mut at = 0usize;
    for i in 0..count {
        let word = |k: usize| msg.get(k..k + 8).map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")) as usize);
        let (Some(offset), Some(len)) = (word(at), word(at + 8)) else {
            return Err(format!("piece {i} of {count}: the message ends in its header"));
        };
        let Some(bytes) = len.checked_add(at + 16).and_then(|end| msg.get(at + 16..end)) else {
            return Err(format!("piece {i} of {count}: {len} bytes run past the message"));
        };
        if offset.checked_add(len).is_none_or(|end| end > span) {
            return Err(format!("piece {i} of {count}: {len} bytes at offset {offset:#x} lie outside the heap"));
        }
        pieces.push((offset, bytes));
        at += gathered_size(len);
    }
    if at != msg.len() {
        return Err(format!("{} bytes after the last of {count} pieces", msg.len().saturating_sub(at)));
    }
    Ok(pieces)
}

/// A reply: status 0 and the data, or an error text.
type Reply = std::result::Result<Vec<u8>, String>;

/// What the message handler fills (its argument; lives as long as the worker).
struct Mailbox {
    /// Requests received, not yet carried out.
    inbox: Mutex<Vec<(Header, Vec<u8>)>>,
    /// Replies by request id.
    replies: Mutex<HashMap<u64, Reply>>,
    /// Acknowledgements received from each PE.
    acked: Vec<AtomicU64>,
    /// The first refusal a target acknowledged (or a message this PE could not read).
    failure: Mutex<Option<String>>,
}

/// Requests held back until their turn, and the next sequence number due from each PE.
struct ServeState {
    next: Vec<u64>,
    held: BTreeMap<(usize, u64), (Header, Vec<u8>)>,
}

impl ServeState {
    fn new(n_pes: usize) -> ServeState {
        ServeState { next: vec![0; n_pes], held: BTreeMap::new() }
    }

    /// Admits what arrived and returns, in order, every request whose turn has come
    /// (per origin, the next sequence numbers without a gap); the rest stays held.
    fn take_ready(&mut self, arrived: Vec<(Header, Vec<u8>)>) -> Vec<(Header, Vec<u8>)> {
        for (h, data) in arrived {
            if h.src < self.next.len() && h.seq >= self.next[h.src] {
                self.held.insert((h.src, h.seq), (h, data));
            } else {
                tracing::error!("staged UCX: dropped a request from PE {} with sequence number {} (stale or no such PE)", h.src, h.seq);
            }
        }
        let mut ready = Vec::new();
        for src in 0..self.next.len() {
            while let Some(m) = self.held.remove(&(src, self.next[src])) {
                self.next[src] += 1;
                ready.push(m);
            }
        }
        ready
    }
}

/// A relayed request this PE carried on to its final PE as its own request `id`: once the
/// final PE has answered it, the answer goes to `origin` as the reply to `origin_id` (0 for
/// a put: its acknowledgement). Each relayed request waits for exactly its own answer, so
/// relays through each other never wait on one another.
#[derive(Debug)]
struct Relayed {
    origin: usize,
    origin_id: u64,
    id: u64,
}

struct Shared {
    w: Worker,
    mail: Box<Mailbox>,
    eps: Vec<ffi::ucp_ep_h>,
    /// This PE's own transport: carries out requests on its heap (and relayed requests
    /// to the PEs of `me_reaches`, whose heaps it maps).
    me: Arc<dyn Transport>,
    /// The PEs `me` reaches.
    me_reaches: Vec<bool>,
    /// Relayed requests waiting for the final PE's answer.
    relayed: Mutex<Vec<Relayed>>,
    /// Bytes of each PE's heap span; requests beyond it are refused.
    span: usize,
    /// Next sequence number to each PE.
    next_seq: Vec<AtomicU64>,
    /// Requests sent to each PE that its acknowledgement answers (not a reply).
    unacked_sent: Vec<AtomicU64>,
    next_id: AtomicU64,
    serve: Mutex<ServeState>,
    closed: AtomicBool,
}

// SAFETY: the worker is in UCS_THREAD_MODE_MULTI (UCX serializes calls on it); endpoints
// are used only through it; everything else is behind locks or atomic.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

/// The message handler: queues requests, files replies. Runs inside `ucp_worker_progress`.
unsafe extern "C" fn on_message(
    arg: *mut c_void,
    _header: *const c_void,
    _header_length: usize,
    data: *mut c_void,
    length: usize,
    param: *const ffi::ucp_am_recv_param_t,
) -> ffi::ucs_status_t {
    // SAFETY: `arg` is the Mailbox registered with this handler, alive while the worker is.
    let mail = unsafe { &*(arg as *const Mailbox) };
    // SAFETY: UCX passes a valid parameter block.
    let attr = unsafe { (*param).recv_attr };
    if attr & ffi::UCP_AM_RECV_ATTR_FLAG_RNDV != 0 || data.is_null() {
        let mut f = mail.failure.lock().unwrap_or_else(|p| p.into_inner());
        f.get_or_insert_with(|| "a staged UCX message arrived by rendezvous, which the protocol does not use".into());
        return ffi::UCS_OK;
    }
    // SAFETY: with the data flag (eager), `data` holds `length` bytes during the callback.
    let msg = unsafe { std::slice::from_raw_parts(data as *const u8, length) };
    let Some(h) = Header::decode(msg) else {
        let mut f = mail.failure.lock().unwrap_or_else(|p| p.into_inner());
        f.get_or_insert_with(|| format!("a staged UCX message of {length} bytes could not be read"));
        return ffi::UCS_OK;
    };
    let payload = msg[HEADER..].to_vec();
    if h.kind == Kind::Reply {
        let reply = if h.op == 0 { Ok(payload) } else { Err(String::from_utf8_lossy(&payload).into_owned()) };
        if h.id == 0 {
            if let Err(e) = reply {
                mail.failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
            }
            if let Some(a) = mail.acked.get(h.src) {
                a.fetch_add(1, Ordering::Release);
            }
        } else {
            mail.replies.lock().unwrap_or_else(|p| p.into_inner()).insert(h.id, reply);
        }
    } else {
        mail.inbox.lock().unwrap_or_else(|p| p.into_inner()).push((h, payload));
    }
    ffi::UCS_OK
}

impl Shared {
    fn my_pe(&self) -> usize {
        self.w.my_pe
    }

    /// Sends one message to `pe` and waits until UCX is done with the buffer.
    fn send(&self, pe: usize, am: u32, buf: &[u8]) -> Result<()> {
        let ep = self.eps[pe];
        if ep.is_null() {
            return Err(Error::Transport {
                call: "ucx-am",
                detail: format!("the staged UCX transport does not serve PE {pe}"),
                pe: self.my_pe(),
            });
        }
        let mut param = ffi::ucp_request_param_t::empty();
        param.op_attr_mask = ffi::UCP_OP_ATTR_FIELD_FLAGS;
        param.flags = ffi::UCP_AM_SEND_FLAG_EAGER;
        // SAFETY: live endpoint; `buf` is readable and outlives the wait below (UCX is
        // done with it when the request completes).
        let started =
            self.w.gated(|| unsafe { (self.w.ucp.ucp_am_send_nbx)(ep, am, std::ptr::null(), 0, buf.as_ptr().cast(), buf.len(), &param) });
        self.w.wait(started, || format!("active message of {} bytes to PE {pe}", buf.len()))
    }

    /// Carries out the requests whose turn has come; returns how many.
    fn service(&self) -> u32 {
        let Ok(mut st) = self.serve.try_lock() else { return 0 };
        let arrived = std::mem::take(&mut *self.mail.inbox.lock().unwrap_or_else(|p| p.into_inner()));
        let answered = self.answer_relayed();
        if arrived.is_empty() && st.held.is_empty() {
            return answered;
        }
        let ready = st.take_ready(arrived);
        for (h, data) in &ready {
            self.execute(*h, data);
        }
        ready.len() as u32 + answered
    }

    /// Answers the origins of relayed requests whose final PE has answered; returns how many.
    fn answer_relayed(&self) -> u32 {
        let mut list = self.relayed.lock().unwrap_or_else(|p| p.into_inner());
        if list.is_empty() {
            return 0;
        }
        let mut done = Vec::new();
        let mut replies = self.mail.replies.lock().unwrap_or_else(|p| p.into_inner());
        list.retain(|r| match replies.remove(&r.id) {
            Some(answer) => {
                done.push((r.origin, r.origin_id, answer));
                false
            }
            None => true,
        });
        drop(replies);
        drop(list);
        let n = done.len() as u32;
        for (origin, id, answer) in done {
            self.reply(origin, id, 0, answer);
        }
        n
    }

    /// Sends `answer` to `to` as the reply to its request `id` (0: an acknowledgement).
    fn reply(&self, to: usize, id: u64, offset: u64, answer: Reply) {
        let mut reply =
            Header { kind: Kind::Reply, src: self.my_pe(), seq: 0, id, offset, len: 0, width: 0, op: 0, operand: 0, compare: 0 };
        let body = match answer {
            Ok(b) => b,
            Err(e) => {
                tracing::error!("{e}");
                reply.op = 1;
                e.into_bytes()
            }
        };
        reply.len = body.len() as u64;
        if let Err(e) = self.send(to, AM_REPLY, &reply.encode(&body)) {
            // The requester waits for this reply; say why it will not come.
            tracing::error!("staged reply to PE {to} lost: {e}");
            self.mail.failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e.to_string());
        }
    }

    /// Carries a relayed request on to its final PE (`h.width`). `Ok(None)`: answered
    /// later, by [`Shared::answer_relayed`]; `Ok(Some(data))`: complete now (through the
    /// mapped transport), to be answered at once with `data`.
    fn relay(&self, h: Header, data: &[u8]) -> std::result::Result<Option<Vec<u8>>, String> {
        let (me, origin, to) = (self.my_pe(), h.src, h.width as usize);
        let (offset, len) = (h.offset as usize, h.len as usize);
        if to >= self.eps.len() || to == me || to == origin {
            return Err(format!(
                "PE {me} refused to relay a request of PE {origin} to PE {to}: the final PE must be another PE than the relay and the origin"
            ));
        }
        let put = h.kind == Kind::RelayPut;
        if !self.eps[to].is_null() {
            // A put asks for a reply too (not the counted acknowledgement of `quiet`).
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let (kind, payload) = if put { (Kind::Put, data) } else { (Kind::Get, &[][..]) };
            self.post(to, kind, offset, len, 0, payload, id).map_err(|e| e.to_string())?;
            let origin_id = if put { 0 } else { h.id };
            self.relayed.lock().unwrap_or_else(|p| p.into_inner()).push(Relayed { origin, origin_id, id });
            return Ok(None);
        }
        if !self.me_reaches[to] {
            return Err(format!("PE {me} cannot relay to PE {to}: neither this protocol nor a mapping reaches it from here"));
        }
        let done = if put {
            self.me.put(to, offset, data).and_then(|_| self.me.quiet(Some(to))).map(|_| Vec::new())
        } else {
            let mut buf = vec![0u8; len];
            self.me.get(to, offset, &mut buf).map(|_| buf)
        };
        done.map(Some).map_err(|e| e.to_string())
    }

    /// Carries out one request on this PE's heap (or relays it) and answers it.
    fn execute(&self, h: Header, data: &[u8]) {
        let my_pe = self.my_pe();
        let (offset, len) = (h.offset as usize, h.len as usize);
        let answer: Reply = if h.kind == Kind::PutV {
            match scatter(data, h.width as usize, self.span) {
                Ok(pieces) => self.me.put_gather(my_pe, &pieces).map(|_| Vec::new()).map_err(|e| e.to_string()),
                Err(e) => Err(format!("PE {my_pe} refused a staged gathered put from PE {}: {e}", h.src)),
            }
        } else if offset.checked_add(len).is_none_or(|end| end > self.span) {
            Err(format!("PE {my_pe} refused a staged request from PE {}: {len} bytes at offset {offset:#x} lie outside its heap", h.src))
        } else {
            match h.kind {
                Kind::Put if data.len() == len => self.me.put(my_pe, offset, data).map(|_| Vec::new()).map_err(|e| e.to_string()),
                Kind::Get => {
                    let mut buf = vec![0u8; len];
                    self.me.get(my_pe, offset, &mut buf).map(|_| buf).map_err(|e| e.to_string())
                }
                Kind::Amo if [1, 2, 4, 8].contains(&h.width) && len == h.width as usize => match AmoOp::from_code(h.op) {
                    Some(op) => self
                        .me
                        .amo(my_pe, offset, len, op, h.operand, h.compare)
                        .map(|v| v.to_le_bytes().to_vec())
                        .map_err(|e| e.to_string()),
                    None => Err(format!("PE {my_pe}: staged atomic from PE {} has unknown operation {}", h.src, h.op)),
                },
                Kind::RelayPut | Kind::RelayGet if h.kind == Kind::RelayGet || data.len() == len => match self.relay(h, data) {
                    Ok(None) => return,
                    Ok(Some(b)) => Ok(b),
                    Err(e) => Err(e),
                },
                k => Err(format!("PE {my_pe}: malformed staged {k:?} request from PE {}", h.src)),
            }
        };
        self.reply(h.src, h.id, h.offset, answer);
    }

    /// Drives UCX and this PE's requests until `f` has a value (or the hang limit passes).
    fn wait_until<T>(&self, mut f: impl FnMut() -> Option<T>) -> Result<T> {
        let _driving = self.w.standby.drive();
        let mut pace = super::Pace::new();
        let mut watch = WaitWatch::new(&self.w.watcher);
        let describe = || format!("a reply of the staged UCX protocol on PE {}", self.w.my_pe);
        loop {
            if let Some(v) = f() {
                self.service();
                return Ok(v);
            }
            let found = self.w.progress() + self.service();
            if !self.w.idle(found, &mut pace) {
                continue;
            }
            if let Err(end) = watch.tick(&describe) {
                return Err(Error::Transport { call: "ucx-am", detail: watch.end_message(&end, &describe()), pe: self.my_pe() });
            }
        }
    }

    /// Sends a request without waiting: `id` 0 asks for an acknowledgement (counted in
    /// `unacked_sent`), any other for a reply filed under `id`.
    #[allow(clippy::too_many_arguments)]
    fn post(&self, pe: usize, kind: Kind, offset: usize, len: usize, width: usize, data: &[u8], id: u64) -> Result<()> {
        self.post_op(
            pe,
            Header {
                kind,
                src: self.my_pe(),
                seq: 0,
                id,
                offset: offset as u64,
                len: len as u64,
                width: width as u64,
                op: 0,
                operand: 0,
                compare: 0,
            },
            data,
        )
    }

    /// [`Shared::post`] of a whole header (its `seq` and `src` are filled in here).
    fn post_op(&self, pe: usize, mut h: Header, data: &[u8]) -> Result<()> {
        if self.closed.load(Ordering::Relaxed) {
            return Err(Error::Transport {
                call: "ucx-am",
                detail: format!("staged {:?} to PE {pe} after finalize", h.kind),
                pe: self.my_pe(),
            });
        }
        if h.id == 0 {
            self.unacked_sent[pe].fetch_add(1, Ordering::Relaxed);
        }
        h.src = self.my_pe();
        h.seq = self.next_seq[pe].fetch_add(1, Ordering::Relaxed);
        self.send(pe, AM_REQUEST, &h.encode(data))
    }

    /// Sends a request; with `reply`, waits for and returns the answer.
    #[allow(clippy::too_many_arguments)]
    fn request(
        &self,
        pe: usize,
        kind: Kind,
        offset: usize,
        len: usize,
        width: usize,
        op: u64,
        operand: u64,
        compare: u64,
        data: &[u8],
        reply: bool,
    ) -> Result<Option<Vec<u8>>> {
        let fail = |detail: String| Error::Transport { call: "ucx-am", detail, pe: self.my_pe() };
        let id = if reply { self.next_id.fetch_add(1, Ordering::Relaxed) } else { 0 };
        let h = Header { kind, src: 0, seq: 0, id, offset: offset as u64, len: len as u64, width: width as u64, op, operand, compare };
        self.post_op(pe, h, data)?;
        if !reply {
            return Ok(None);
        }
        let answer = self.wait_until(|| self.mail.replies.lock().unwrap_or_else(|p| p.into_inner()).remove(&id))?;
        answer.map(Some).map_err(|e| fail(format!("staged {kind:?} to PE {pe} at offset {offset:#x} failed: {e}")))
    }

    /// The failure a peer reported for a request that needed no reply, if any.
    fn check_failure(&self) -> Result<()> {
        match self.mail.failure.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(e) => Err(Error::Transport { call: "ucx-am", detail: format!("a staged UCX operation failed: {e}"), pe: self.my_pe() }),
            None => Ok(()),
        }
    }

    /// A request whose answer must hold `expect` bytes, and the answer.
    #[allow(clippy::too_many_arguments)]
    fn ask(
        &self,
        pe: usize,
        kind: Kind,
        offset: usize,
        len: usize,
        width: usize,
        op: u64,
        operand: u64,
        compare: u64,
        expect: usize,
    ) -> Result<Vec<u8>> {
        let data = self.request(pe, kind, offset, len, width, op, operand, compare, &[], true)?.unwrap_or_default();
        if data.len() != expect {
            let detail = format!("staged {kind:?} from PE {pe} returned {} of {expect} bytes", data.len());
            return Err(Error::Transport { call: "ucx-am", detail, pe: self.my_pe() });
        }
        Ok(data)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if !self.closed.swap(true, Ordering::SeqCst) {
            self.w.close_endpoints(&self.eps, true);
        }
        // SAFETY: the last reference is gone: the progress thread has ended and no
        // operation runs; endpoints are closed.
        unsafe { self.w.destroy() };
    }
}

/// The staged transport: every operation is an active message the target carries out.
pub struct StagedTransport {
    s: Arc<Shared>,
    progress: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for StagedTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagedTransport").field("my_pe", &self.s.my_pe()).field("n_pes", &self.s.eps.len()).finish()
    }
}

impl StagedTransport {
    /// Collective: opens UCX with active messages, registers the handlers, connects to
    /// the PEs in `serve` and starts the progress thread. `me` carries out peers'
    /// requests on this PE's heap, and relayed ones on the PEs it reaches (the flags beside
    /// it); `span` bounds the offsets accepted (one PE's heap span).
    pub fn new(
        boot: &mut dyn Bootstrap,
        my_base: usize,
        serve: &[bool],
        waits: Waits,
        me: (Arc<dyn Transport>, Vec<bool>),
        span: usize,
    ) -> Result<StagedTransport> {
        let (me, me_reaches) = me;
        let n_pes = boot.size();
        let mail = Box::new(Mailbox {
            inbox: Mutex::new(Vec::new()),
            replies: Mutex::new(HashMap::new()),
            acked: (0..n_pes).map(|_| AtomicU64::new(0)).collect(),
            failure: Mutex::new(None),
        });
        let arg = &*mail as *const Mailbox as *mut c_void;
        let register = |w: &Worker| -> Result<()> {
            for id in [AM_REQUEST, AM_REPLY] {
                let mut p: ffi::ucp_am_handler_param_t = zeroed();
                p.field_mask = ffi::UCP_AM_HANDLER_PARAM_FIELD_ID
                    | ffi::UCP_AM_HANDLER_PARAM_FIELD_FLAGS
                    | ffi::UCP_AM_HANDLER_PARAM_FIELD_CB
                    | ffi::UCP_AM_HANDLER_PARAM_FIELD_ARG;
                p.id = id;
                p.flags = ffi::UCP_AM_FLAG_WHOLE_MSG;
                p.cb = Some(on_message);
                p.arg = arg;
                // SAFETY: live worker; the mailbox outlives it (both owned by Shared,
                // which destroys the worker in Drop before the box is freed).
                let st = unsafe { (w.ucp.ucp_worker_set_am_recv_handler)(w.worker, &p) };
                w.check("init: ucp_worker_set_am_recv_handler", st)?;
            }
            Ok(())
        };
        let (w, eps, _bases) = connect(boot, my_base, serve, waits, ffi::UCP_FEATURE_AM, register)?;
        let my_pe = w.my_pe;
        let s = Arc::new(Shared {
            w,
            mail,
            eps,
            me,
            me_reaches,
            relayed: Mutex::new(Vec::new()),
            span,
            next_seq: (0..n_pes).map(|_| AtomicU64::new(0)).collect(),
            unacked_sent: (0..n_pes).map(|_| AtomicU64::new(0)).collect(),
            next_id: AtomicU64::new(1),
            serve: Mutex::new(ServeState::new(n_pes)),
            closed: AtomicBool::new(false),
        });
        let t = s.clone();
        let handle = std::thread::Builder::new()
            .name(format!("rshmem-ucx-am-pe{my_pe}"))
            .spawn(move || t.w.run(&|| t.service()))
            .map_err(|e| Error::os("start the staged UCX progress thread", e))?;
        tracing::debug!(pe = my_pe, "staged UCX transport up");
        Ok(StagedTransport { s, progress: Mutex::new(Some(handle)) })
    }

    fn stop_progress(&self) {
        self.s.w.stop.store(true, Ordering::Release);
        if let Some(h) = self.progress.lock().unwrap_or_else(|p| p.into_inner()).take() {
            super::end_thread(h, self.s.w.my_pe);
        }
    }

    fn close(&self, boot: &mut dyn Bootstrap) -> Result<()> {
        if self.s.closed.load(Ordering::SeqCst) {
            return Ok(());
        }
        self.quiet(None)?;
        // Every PE has its acknowledgements: no request is in flight to or from anyone
        // once all have met here, so the endpoints may close.
        boot.barrier()?;
        self.s.closed.store(true, Ordering::SeqCst);
        self.s.w.close_endpoints(&self.s.eps, false);
        boot.barrier()
    }
}

impl Drop for StagedTransport {
    fn drop(&mut self) {
        self.stop_progress();
    }
}

impl Transport for StagedTransport {
    fn name(&self) -> &'static str {
        "ucx-am"
    }

    fn caps(&self) -> Caps {
        Caps { mapped: false }
    }

    fn put(&self, pe: usize, offset: usize, src: &[u8]) -> Result<()> {
        for (i, piece) in src.chunks(MAX_PIECE).enumerate() {
            let at = offset + i * MAX_PIECE;
            self.s.request(pe, Kind::Put, at, piece.len(), 0, 0, 0, 0, piece, false)?;
        }
        Ok(())
    }

    fn put_gather(&self, pe: usize, pieces: &[(usize, &[u8])]) -> Result<()> {
        // As few messages as the pieces fit in (up to MAX_PIECE bytes each); a piece too
        // large for one goes as a put of its own. Messages to a PE take effect in order.
        let mut msg = Vec::new();
        let mut count = 0usize;
        let flush = |msg: &mut Vec<u8>, count: &mut usize| -> Result<()> {
            if *count > 0 {
                self.s.request(pe, Kind::PutV, 0, msg.len(), *count, 0, 0, 0, msg, false)?;
            }
            msg.clear();
            *count = 0;
            Ok(())
        };
        for &(offset, bytes) in pieces {
            let size = gathered_size(bytes.len());
            if size > MAX_PIECE {
                flush(&mut msg, &mut count)?;
                self.put(pe, offset, bytes)?;
                continue;
            }
            if msg.len() + size > MAX_PIECE {
                flush(&mut msg, &mut count)?;
            }
            gather(&mut msg, offset, bytes);
            count += 1;
        }
        flush(&mut msg, &mut count)
    }

    fn get(&self, pe: usize, offset: usize, dst: &mut [u8]) -> Result<()> {
        for (i, piece) in dst.chunks_mut(MAX_PIECE).enumerate() {
            let at = offset + i * MAX_PIECE;
            piece.copy_from_slice(&self.s.ask(pe, Kind::Get, at, piece.len(), 0, 0, 0, 0, piece.len())?);
        }
        Ok(())
    }

    fn store_word(&self, pe: usize, offset: usize, width: usize, value: u64) -> Result<()> {
        self.s.request(pe, Kind::Amo, offset, width, width, AmoOp::Set.code() as u64, value, 0, &[], false).map(|_| ())
    }

    fn load_word(&self, pe: usize, offset: usize, width: usize) -> Result<u64> {
        self.amo(pe, offset, width, AmoOp::Fetch, 0, 0)
    }

    fn amo(&self, pe: usize, offset: usize, width: usize, op: AmoOp, operand: u64, compare: u64) -> Result<u64> {
        if ![1, 2, 4, 8].contains(&width) {
            let detail = format!("word width {width} is not 1, 2, 4 or 8");
            return Err(Error::Transport { call: "ucx-am atomic", detail, pe: self.s.my_pe() });
        }
        let data = self.s.ask(pe, Kind::Amo, offset, width, width, op.code() as u64, operand, compare, 8)?;
        Ok(data.iter().rev().fold(0u64, |v, &b| (v << 8) | u64::from(b)))
    }

    fn fence(&self) -> Result<()> {
        // Requests from this PE to each target take effect in issue order (sequence
        // numbers, see the module text), so there is nothing to wait for.
        Ok(())
    }

    fn quiet(&self, pe: Option<usize>) -> Result<()> {
        let s = &self.s;
        let pes: Vec<usize> = match pe {
            Some(p) => vec![p],
            None => (0..s.eps.len()).collect(),
        };
        for p in pes {
            let sent = s.unacked_sent[p].load(Ordering::Relaxed);
            if sent == 0 {
                continue;
            }
            s.wait_until(|| (s.mail.acked[p].load(Ordering::Acquire) >= sent).then_some(()))?;
        }
        s.check_failure()
    }

    fn direct_address(&self, _pe: usize, _offset: usize) -> Option<usize> {
        None
    }

    fn relay_put(&self, relay_pe: usize, pe: usize, offset: usize, src: &[u8]) -> Result<()> {
        for (i, piece) in src.chunks(MAX_PIECE).enumerate() {
            let at = offset + i * MAX_PIECE;
            self.s.request(relay_pe, Kind::RelayPut, at, piece.len(), pe, 0, 0, 0, piece, false)?;
        }
        Ok(())
    }

    fn relay_get(&self, relay_pe: usize, pe: usize, offset: usize, dst: &mut [u8]) -> Result<()> {
        for (i, piece) in dst.chunks_mut(MAX_PIECE).enumerate() {
            let at = offset + i * MAX_PIECE;
            piece.copy_from_slice(&self.s.ask(relay_pe, Kind::RelayGet, at, piece.len(), pe, 0, 0, 0, piece.len())?);
        }
        Ok(())
    }

    fn relays(&self, relay_pe: usize) -> bool {
        self.s.eps.get(relay_pe).is_some_and(|ep| !ep.is_null())
    }
}

impl SegmentHook for StagedTransport {
    fn segment_added(&self, _boot: &mut dyn Bootstrap, _offset: usize, _len: usize) -> Result<()> {
        // Nothing to register: the target copies into its own heap.
        Ok(())
    }

    fn finalize(&self, boot: &mut dyn Bootstrap) -> Result<()> {
        self.close(boot)
    }

    fn heap_closing(&self) {
        self.stop_progress();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip() {
        let h = Header { kind: Kind::Amo, src: 3, seq: 77, id: 9, offset: 0x1234, len: 8, width: 8, op: 4, operand: 5, compare: 6 };
        let buf = h.encode(b"xyz");
        let d = Header::decode(&buf).expect("decodes");
        assert_eq!(
            (d.kind, d.src, d.seq, d.id, d.offset, d.len, d.width, d.op, d.operand, d.compare),
            (Kind::Amo, 3, 77, 9, 0x1234, 8, 8, 4, 5, 6)
        );
        assert_eq!(&buf[HEADER..], b"xyz");
        assert!(Header::decode(&buf[..HEADER - 1]).is_none());
        let mut bad = buf.clone();
        bad[0] = 99;
        assert!(Header::decode(&bad).is_none(), "an unknown kind is refused");
    }

    fn req(src: usize, seq: u64) -> (Header, Vec<u8>) {
        (Header { kind: Kind::Put, src, seq, id: 0, offset: 0, len: 1, width: 0, op: 0, operand: 0, compare: 0 }, vec![seq as u8])
    }

    #[test]
    fn gathered_puts_round_trip_and_out_of_heap_pieces_are_refused() {
        let mut msg = Vec::new();
        gather(&mut msg, 0x100, b"abc");
        gather(&mut msg, 0x200, &[7u8; 16]);
        gather(&mut msg, 0x300, b"");
        assert_eq!(msg.len(), gathered_size(3) + gathered_size(16) + gathered_size(0));
        let pieces = scatter(&msg, 3, 0x1000).unwrap();
        assert_eq!(pieces, vec![(0x100, &b"abc"[..]), (0x200, &[7u8; 16][..]), (0x300, &b""[..])]);
        let e = scatter(&msg, 3, 0x20f).unwrap_err();
        assert!(e.contains("piece 1 of 3") && e.contains("outside the heap"), "{e}");
        let e = scatter(&msg, 4, 0x1000).unwrap_err();
        assert!(e.contains("piece 3 of 4"), "{e}");
        let e = scatter(&msg, 2, 0x1000).unwrap_err();
        assert!(e.contains("after the last of 2 pieces"), "{e}");
        let e = scatter(&msg[..18], 1, 0x1000).unwrap_err();
        assert!(e.contains("run past the message"), "{e}");
    }

    #[test]
    fn requests_are_carried_out_in_sequence_per_origin() {
        let mut st = ServeState::new(3);
        // PE 1's 2 and 1 arrive before its 0; PE 2's 0 is on time.
        let ready = st.take_ready(vec![req(1, 2), req(2, 0), req(1, 1)]);
        assert_eq!(ready.iter().map(|(h, _)| (h.src, h.seq)).collect::<Vec<_>>(), vec![(2, 0)]);
        let ready = st.take_ready(vec![req(1, 0), req(2, 2)]);
        assert_eq!(ready.iter().map(|(h, _)| (h.src, h.seq)).collect::<Vec<_>>(), vec![(1, 0), (1, 1), (1, 2)]);
        assert_eq!(st.held.len(), 1, "PE 2's request 2 waits for its 1");
        let ready = st.take_ready(vec![req(2, 1), req(1, 0)]);
        assert_eq!(ready.iter().map(|(h, _)| (h.src, h.seq)).collect::<Vec<_>>(), vec![(2, 1), (2, 2)], "a replayed old number is dropped");
        assert!(st.held.is_empty());
        assert!(st.take_ready(vec![req(9, 0)]).is_empty(), "no such PE");
    }
}
