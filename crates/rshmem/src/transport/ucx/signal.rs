//! Signalled puts as one active message: the data and the update of a signal word
//! travel together, and the target's handler writes the data, then the word.
//!
//! The library's own synchronization over the network (a collective's inbox posts, its
//! barrier and arrival counters) would otherwise cost a put, then an atomic on the
//! signal word, each a message, and over UCX's tcp transport each an atomic whose
//! reply or acknowledgement comes back as a third. One message per signal is what
//! Open MPI's collectives send over the same link.
//!
//! A message is [`HEADER`] bytes (data offset, signal offset, value, operation: four
//! little-endian words) and the data. The handler runs inside `ucp_worker_progress` of
//! the target (its waiting thread or its progress thread), which then wakes the PE's
//! waiters. It checks both ranges against the heap segments this PE registered before
//! it writes: a malformed message is logged and dropped, never written.

use super::ffi;
use super::Worker;
use crate::error::{Error, Result};
use crate::heap::words::shared;
use crate::transport::AmoOp;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;

/// The active message id of signalled puts (the staged protocol, on its own worker,
/// uses 17 and 18).
pub(super) const AM_SIGNAL_PUT: u32 = 19;

/// Bytes before the data: data offset, signal offset, value, operation.
const HEADER: usize = 32;

/// Most data one signalled put carries (eager, one message); larger ones go as a put,
/// a fence and a posted atomic.
pub(super) const MAX_DATA: usize = 1 << 20;

/// Operation codes of the header's fourth word.
const OP_SET: u64 = 1;
const OP_ADD: u64 = 2;

/// Where this PE's signalled puts land: its heap, within the segments it registered.
pub(super) struct Sink {
    base: usize,
    /// Registered segments of this PE's heap (offset, length).
    segments: RwLock<Vec<(usize, usize)>>,
}

impl Sink {
    /// A sink into the heap at `base`, with no segment yet.
    pub(super) fn new(base: usize) -> Sink {
        Sink { base, segments: RwLock::new(Vec::new()) }
    }

    /// Accepts messages into `len` bytes at heap offset `offset` from now on.
    pub(super) fn add_segment(&self, offset: usize, len: usize) {
        self.segments.write().unwrap_or_else(|p| p.into_inner()).push((offset, len));
    }

    /// Whether `len` bytes at `offset` lie inside one registered segment.
    fn holds(&self, offset: usize, len: usize) -> bool {
        let segs = self.segments.read().unwrap_or_else(|p| p.into_inner());
        offset.checked_add(len).is_some_and(|end| segs.iter().any(|&(o, l)| offset >= o && end <= o + l))
    }

    /// Registers the handler on `w` (before any peer can send).
    pub(super) fn register(&self, w: &Worker) -> Result<()> {
        let mut p: ffi::ucp_am_handler_param_t = super::zeroed();
        p.field_mask = ffi::UCP_AM_HANDLER_PARAM_FIELD_ID
            | ffi::UCP_AM_HANDLER_PARAM_FIELD_FLAGS
            | ffi::UCP_AM_HANDLER_PARAM_FIELD_CB
            | ffi::UCP_AM_HANDLER_PARAM_FIELD_ARG;
        p.id = AM_SIGNAL_PUT;
        p.flags = ffi::UCP_AM_FLAG_WHOLE_MSG;
        p.cb = Some(on_signal_put);
        p.arg = self as *const Sink as *mut c_void;
        // SAFETY: live worker; the sink is boxed by its transport and outlives the worker
        // (the transport destroys the worker in Drop, before its fields go).
        let st = unsafe { (w.ucp.ucp_worker_set_am_recv_handler)(w.worker, &p) };
        w.check("init: ucp_worker_set_am_recv_handler (signalled puts)", st)
    }
}

/// The operation code of a signal update (`Set` or `FetchAdd`), or None for others.
pub(super) fn op_code(op: AmoOp) -> Option<u64> {
    match op {
        AmoOp::Set => Some(OP_SET),
        AmoOp::FetchAdd => Some(OP_ADD),
        _ => None,
    }
}

/// The message: header, then `data`.
pub(super) fn encode(offset: usize, data: &[u8], sig_offset: usize, value: u64, op: u64) -> Vec<u8> {
    let mut buf = Vec::with_capacity(HEADER + data.len());
    for w in [offset as u64, sig_offset as u64, value, op] {
        buf.extend_from_slice(&w.to_le_bytes());
    }
    buf.extend_from_slice(data);
    buf
}

/// Sends `msg` ([`encode`]) to `ep` (PE `pe`) and waits until UCX is done with it.
pub(super) fn send(w: &Worker, ep: ffi::ucp_ep_h, pe: usize, msg: &[u8]) -> Result<()> {
    if ep.is_null() {
        return Err(Error::Transport { call: "ucx", detail: format!("the UCX transport does not serve PE {pe}"), pe: w.my_pe });
    }
    let mut param = ffi::ucp_request_param_t::empty();
    param.op_attr_mask = ffi::UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = ffi::UCP_AM_SEND_FLAG_EAGER;
    // SAFETY: live endpoint; `msg` is readable and outlives the wait below (UCX is done
    // with it when the request completes).
    let started =
        w.gated(|| unsafe { (w.ucp.ucp_am_send_nbx)(ep, AM_SIGNAL_PUT, std::ptr::null(), 0, msg.as_ptr().cast(), msg.len(), &param) });
    w.wait(started, || format!("signalled put of {} bytes to PE {pe}", msg.len() - HEADER))
}

/// The handler: writes the data, then updates the signal word (release: whoever sees
/// the word sees the data).
unsafe extern "C" fn on_signal_put(
    arg: *mut c_void,
    _header: *const c_void,
    _header_length: usize,
    data: *mut c_void,
    length: usize,
    param: *const ffi::ucp_am_recv_param_t,
) -> ffi::ucs_status_t {
    // SAFETY: `arg` is the Sink registered with this handler, alive while the worker is.
    let sink = unsafe { &*(arg as *const Sink) };
    // SAFETY: UCX passes a valid parameter block.
    let attr = unsafe { (*param).recv_attr };
    if attr & ffi::UCP_AM_RECV_ATTR_FLAG_RNDV != 0 || data.is_null() || length < HEADER {
        tracing::error!("a signalled put of {length} bytes arrived without its data or header; dropped");
        return ffi::UCS_OK;
    }
    // SAFETY: with the data flag (eager), `data` holds `length` bytes during the callback.
    let msg = unsafe { std::slice::from_raw_parts(data as *const u8, length) };
    let word = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&msg[8 * i..8 * i + 8]);
        u64::from_le_bytes(b)
    };
    let (offset, sig_offset, value, op) = (word(0) as usize, word(1) as usize, word(2), word(3));
    let body = &msg[HEADER..];
    if !sink.holds(offset, body.len()) || !sink.holds(sig_offset, 8) || !sig_offset.is_multiple_of(8) || !(op == OP_SET || op == OP_ADD) {
        tracing::error!(
            "a signalled put ({} bytes at offset {offset:#x}, signal at {sig_offset:#x}, operation {op}) falls outside this PE's registered heap or is malformed; dropped",
            body.len()
        );
        return ffi::UCS_OK;
    }
    // SAFETY: the range lies in a registered (so mapped) segment of this PE's heap;
    // the message does not overlap it.
    unsafe { std::ptr::copy_nonoverlapping(body.as_ptr(), (sink.base + offset) as *mut u8, body.len()) };
    // SAFETY: an 8-aligned word of a registered segment, mapped while the worker lives.
    let w: &AtomicU64 = unsafe { shared(sink.base + sig_offset) };
    if op == OP_SET {
        w.store(value, Ordering::Release);
    } else {
        w.fetch_add(value, Ordering::AcqRel);
    }
    ffi::UCS_OK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_header_then_data_and_the_sink_checks_ranges() {
        let m = encode(0x40, b"abc", 0x10, 7, OP_ADD);
        assert_eq!(m.len(), HEADER + 3);
        assert_eq!(&m[..8], &0x40u64.to_le_bytes());
        assert_eq!(&m[24..32], &OP_ADD.to_le_bytes());
        assert_eq!(&m[HEADER..], b"abc");
        let s = Sink::new(0);
        assert!(!s.holds(0, 8), "no segment yet");
        s.add_segment(0, 4096);
        assert!(s.holds(4088, 8) && !s.holds(4089, 8) && !s.holds(usize::MAX, 2));
        assert_eq!(op_code(AmoOp::Set), Some(OP_SET));
        assert_eq!(op_code(AmoOp::FetchXor), None);
    }
}
