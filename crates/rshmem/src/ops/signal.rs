//! Signals: put-with-signal, signal updates, fetch and wait on 64-bit signal words
//! (OpenSHMEM 1.5 `shmem_put_signal`, `shmem_signal_fetch`, `shmem_signal_wait_until`,
//! NVSHMEM's `signal_op`).
//!
//! A signal word is a `u64` in the symmetric heap (or static data), aligned to 8 bytes; an
//! address off the heap, misaligned, past its allocation, or inside the data range of the
//! same put is refused with an error naming the call, the `sig_addr` argument and the PE.
//!
//! **Ordering.** `put_signal` moves the data, fences, then updates the signal word with
//! one atomic: a PE that observes the signal (through [`Ctx::signal_fetch`],
//! [`Ctx::signal_wait_until`] or any wait) observes the data too. The non-blocking form
//! returns once both are issued; on the local transport that means complete, elsewhere
//! `quiet` completes them (the ordering between data and signal holds either way).

use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::sym::Sym;
use crate::transport::AmoOp;
use crate::types::{Cmp, SymType};
use std::time::Duration;

/// How a signal update combines with the signal word (C values as in `shmem.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum SignalOp {
    /// The word becomes the signal value (`SHMEM_SIGNAL_SET`).
    Set = 0,
    /// The signal value is added to the word (`SHMEM_SIGNAL_ADD`).
    Add = 1,
}

impl SignalOp {
    /// The operation with C value `v` (`SHMEM_SIGNAL_SET` = 0, `SHMEM_SIGNAL_ADD` = 1).
    pub fn from_raw(v: i32) -> Option<SignalOp> {
        match v {
            0 => Some(SignalOp::Set),
            1 => Some(SignalOp::Add),
            _ => None,
        }
    }

    fn amo(self) -> AmoOp {
        match self {
            SignalOp::Set => AmoOp::Set,
            SignalOp::Add => AmoOp::FetchAdd,
        }
    }
}

/// Width of a signal word.
const SIG: usize = 8;

impl Ctx {
    /// Checks a signal word on (context-relative) `pe`; returns (world PE, heap offset).
    fn signal_word(&self, call: &'static str, sig_addr: usize, pe: usize) -> Result<(usize, usize)> {
        self.target_word(call, "sig_addr", sig_addr, SIG, "uint64 signal", pe)
    }

    /// The engine of put_signal: checks both ranges before anything moves, then data,
    /// fence, signal. The signal is posted like a non-fetching atomic (complete at
    /// `quiet`, as the data is): over the network the call costs no round trip.
    fn put_signal_bytes(
        &self,
        call: &'static str,
        dest_addr: usize,
        src: &[u8],
        sig_addr: usize,
        signal: u64,
        op: SignalOp,
        pe: usize,
    ) -> Result<()> {
        self.check_store(call)?;
        let (pe, off) = self.target(call, "dest", dest_addr, src.len(), pe)?;
        let (_, sig_off) = self.signal_word(call, sig_addr, pe)?;
        if sig_off + SIG > off && sig_off < off + src.len() {
            return Err(Error::InvalidArgument {
                call,
                arg: "sig_addr",
                detail: format!("signal word {sig_addr:#x} overlaps the data range {dest_addr:#x}+{} bytes", src.len()),
                pe,
            });
        }
        let t = self.to(pe);
        t.put(pe, off, src)
            .and_then(|_| t.fence())
            .and_then(|_| t.amo_post(pe, sig_off, SIG, op.amo(), signal))
            .map_err(|e| e.during(call))?;
        Ok(())
    }

    /// Copies `src` into `dest[index..]` on `pe`, then updates `sig[sig_index]` there with
    /// `op` and `signal`; whoever sees the signal sees the data.
    pub fn put_signal<T: SymType>(
        &self,
        dest: &Sym<T>,
        index: usize,
        src: &[T],
        sig: &Sym<u64>,
        sig_index: usize,
        signal: u64,
        op: SignalOp,
        pe: usize,
    ) -> Result<()> {
        self.put_signal_typed("put_signal", dest, index, src, sig, sig_index, signal, op, pe)
    }

    /// The typed forms' engine: element checks, then [`Ctx::put_signal_bytes`].
    fn put_signal_typed<T: SymType>(
        &self,
        call: &'static str,
        dest: &Sym<T>,
        index: usize,
        src: &[T],
        sig: &Sym<u64>,
        sig_index: usize,
        signal: u64,
        op: SignalOp,
        pe: usize,
    ) -> Result<()> {
        let sig_addr = self.element(call, "sig_addr", sig, sig_index, pe)?;
        let dest_addr = dest.elements(call, "dest", index, src.len(), pe)?;
        self.put_signal_bytes(call, dest_addr, bytemuck::cast_slice(src), sig_addr, signal, op, pe)
    }

    /// Non-blocking [`Ctx::put_signal`]: `src` may be reused on return; `quiet` completes
    /// it (on the local transport it is complete on return).
    pub fn put_signal_nbi<T: SymType>(
        &self,
        dest: &Sym<T>,
        index: usize,
        src: &[T],
        sig: &Sym<u64>,
        sig_index: usize,
        signal: u64,
        op: SignalOp,
        pe: usize,
    ) -> Result<()> {
        self.put_signal_typed("put_signal_nbi", dest, index, src, sig, sig_index, signal, op, pe)
    }

    /// Byte form of [`Ctx::put_signal`] (`putmem_signal`; both addresses symmetric).
    pub fn putmem_signal(&self, dest_addr: usize, src: &[u8], sig_addr: usize, signal: u64, op: SignalOp, pe: usize) -> Result<()> {
        self.put_signal_bytes("putmem_signal", dest_addr, src, sig_addr, signal, op, pe)
    }

    /// Byte form of [`Ctx::put_signal_nbi`] (`putmem_signal_nbi`).
    pub fn putmem_signal_nbi(&self, dest_addr: usize, src: &[u8], sig_addr: usize, signal: u64, op: SignalOp, pe: usize) -> Result<()> {
        self.put_signal_bytes("putmem_signal_nbi", dest_addr, src, sig_addr, signal, op, pe)
    }

    /// Updates `sig[index]` on `pe` with `op` and `signal`, atomically (NVSHMEM
    /// `signal_op`; OpenSHMEM 1.6 `signal_set` / `signal_add`).
    pub fn signal_op(&self, sig: &Sym<u64>, index: usize, signal: u64, op: SignalOp, pe: usize) -> Result<()> {
        self.signal_op_addr(self.element("signal_op", "sig_addr", sig, index, pe)?, signal, op, pe)
    }

    /// Address form of [`Ctx::signal_op`].
    pub fn signal_op_addr(&self, sig_addr: usize, signal: u64, op: SignalOp, pe: usize) -> Result<()> {
        const CALL: &str = "signal_op";
        self.check_store(CALL)?;
        let (pe, off) = self.signal_word(CALL, sig_addr, pe)?;
        self.to(pe).amo_post(pe, off, SIG, op.amo(), signal).map_err(|e| e.during(CALL))?;
        Ok(())
    }

    /// Atomically reads this PE's `sig[index]` (`signal_fetch`).
    pub fn signal_fetch(&self, sig: &Sym<u64>, index: usize) -> Result<u64> {
        self.signal_fetch_addr(self.element("signal_fetch", "sig_addr", sig, index, self.my_pe())?)
    }

    /// Address form of [`Ctx::signal_fetch`].
    pub fn signal_fetch_addr(&self, sig_addr: usize) -> Result<u64> {
        let me = self.my_pe();
        let off = self.remote_word("signal_fetch", "sig_addr", sig_addr, SIG, "uint64 signal", me)?;
        self.rt.to(me).load_word(me, off, SIG)
    }

    /// Waits until this PE's `sig[index] <cmp> value` holds; returns the signal value that
    /// satisfied it (`signal_wait_until`). Spins briefly, then sleeps on the heap's futex.
    pub fn signal_wait_until(&self, sig: &Sym<u64>, index: usize, cmp: Cmp, value: u64) -> Result<u64> {
        self.signal_wait_until_addr(self.element("signal_wait_until", "sig_addr", sig, index, self.my_pe())?, cmp, value, None)
    }

    /// [`Ctx::signal_wait_until`] that gives up after `timeout` with [`Error::Timeout`].
    pub fn signal_wait_until_timeout(&self, sig: &Sym<u64>, index: usize, cmp: Cmp, value: u64, timeout: Duration) -> Result<u64> {
        self.signal_wait_until_addr(self.element("signal_wait_until", "sig_addr", sig, index, self.my_pe())?, cmp, value, Some(timeout))
    }

    /// Address form of [`Ctx::signal_wait_until`], with an optional deadline.
    pub fn signal_wait_until_addr(&self, sig_addr: usize, cmp: Cmp, value: u64, timeout: Option<Duration>) -> Result<u64> {
        const CALL: &str = "signal_wait_until";
        let me = self.my_pe();
        let off = self.remote_word(CALL, "sig_addr", sig_addr, SIG, "uint64 signal", me)?;
        let word = self.local_word(off, SIG);
        let mut seen = 0;
        self.block(
            CALL,
            timeout,
            || {
                seen = word.load()?;
                Ok(cmp.holds(seen, value))
            },
            || format!("signal at {sig_addr:#x} {cmp:?} {value}"),
        )?;
        Ok(seen)
    }
}
