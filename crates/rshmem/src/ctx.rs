//! The handle on a PE's runtime, [`Ctx`], and the checks every operation starts with.
//!
//! A `Ctx` is an `Arc` of the PE's [`Runtime`] plus one communication context. The
//! operation families add their methods to it in their own modules (`ops::rma`,
//! `ops::amo`, `coll::reduce`, `team`, ...); this file holds only what all of them share:
//! the PE numbers, the translation of a context's PE numbers, and the address checks.

use crate::error::{Error, Result, TeamNote};
use crate::runtime::context::{CtxDomain, CtxOptions};
use crate::runtime::teams::{Team, TeamRef};
use crate::runtime::Runtime;
use crate::sym::Sym;
use crate::transport::Transport;
use crate::types::{SymType, WordType};
use std::sync::Arc;

/// A handle on the rshmem runtime: the entry point of every operation.
///
/// Each `Ctx` value is a communication context (OpenSHMEM `shmem_ctx_t`): `init` returns
/// the default context, [`Ctx::create_ctx`] and [`Ctx::team_create_ctx`] make more.
/// Cloning is cheap and shares the runtime and the context. The runtime finalizes
/// (a collective barrier) when the last handle and the last symmetric allocation are
/// dropped, or at [`Ctx::finalize`]; a PE that panics before that aborts the job instead,
/// so that its peers are ended rather than left waiting.
#[derive(Clone)]
pub struct Ctx {
    pub(crate) rt: Arc<Runtime>,
    pub(crate) options: CtxOptions,
    pub(crate) domain: Arc<CtxDomain>,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("pe", &self.rt.my_pe)
            .field("n_pes", &self.rt.n_pes)
            .field("ctx_id", &self.domain.id)
            .field("team", &self.domain.team)
            .field("options", &self.options)
            .finish()
    }
}

impl Ctx {
    /// The default context of a new runtime.
    pub(crate) fn new(rt: Runtime) -> Ctx {
        let domain = Arc::new(CtxDomain::default_context(&rt.transports));
        Ctx { rt: Arc::new(rt), options: CtxOptions::default(), domain }
    }

    /// This PE's number in the world team.
    #[inline]
    pub fn my_pe(&self) -> usize {
        self.rt.my_pe
    }

    /// Number of PEs in the world team.
    #[inline]
    pub fn n_pes(&self) -> usize {
        self.rt.n_pes
    }

    /// This context's options.
    pub fn options(&self) -> CtxOptions {
        self.options
    }

    /// Finalizes the runtime now (collective): completes this PE's operations, meets every
    /// PE in a barrier, then tells the launcher this PE finished cleanly. Later operations
    /// through any handle may find their peers gone; call this last.
    pub fn finalize(self) -> Result<()> {
        self.rt.finalize()
    }

    /// This runtime's bootstrap, lent to a second runtime of the same PEs: pass it as
    /// [`crate::InitOptions::bootstrap`] to [`crate::init_with`] (an OpenSHMEM program's CPU
    /// PEs, and NVSHMEM's GPU PEs started over them). The two runtimes share the one
    /// bootstrap, which is sound because their collective calls happen in program order on
    /// every PE (see the module `runtime::lent`). Finalize the second runtime before this
    /// one: the lent bootstrap's finalize leaves this runtime's bootstrap running.
    pub fn lend_bootstrap(&self) -> Box<dyn crate::bootstrap::Bootstrap> {
        Box::new(crate::runtime::lent::LentBootstrap::new(self.rt.clone()))
    }

    /// Ends the whole job with `code` (OpenSHMEM `global_exit`).
    pub fn global_exit(&self, code: i32) -> ! {
        let msg = format!("global_exit({code}) called on PE {}", self.rt.my_pe);
        self.rt.abort(code, &msg)
    }

    /// This PE's GPU runtime, when it runs as a GPU PE (its heap is in GPU memory).
    #[cfg(feature = "cuda")]
    pub fn gpu(&self) -> Option<&Arc<crate::gpu::Gpu>> {
        self.rt.gpu.as_ref()
    }

    /// Whether this PE's symmetric heap lives in GPU memory.
    pub fn heap_is_device(&self) -> bool {
        self.rt.heap.is_device()
    }

    /// The name of the transport that reaches world PE `pe`: `local` (mapped shared
    /// memory), `local+cuda` (mapped GPU memory), `ucx` (UCX RMA), `ucx-am` (UCX active
    /// messages, the staged protocol).
    pub fn transport_name(&self, pe: usize) -> Result<&'static str> {
        self.check_pe("transport_name", pe)?;
        Ok(self.rt.to(pe).name())
    }

    /// Symmetric heap statistics: (bytes in use, bytes of address space reserved per PE).
    pub fn heap_usage(&self) -> (usize, usize) {
        (self.rt.heap.in_use(), self.rt.heap.user_limit() - self.rt.heap.user_base())
    }

    // ----- checks shared by every operation -----

    /// Checks that `pe` is a valid world PE for `call`.
    #[inline(always)]
    pub(crate) fn check_pe(&self, call: &'static str, pe: usize) -> Result<()> {
        if pe < self.rt.n_pes {
            Ok(())
        } else {
            Err(Error::PeOutOfRange { call, arg: "pe", pe: pe as i64, n_pes: self.rt.n_pes, team: Default::default() })
        }
    }

    /// The team behind handle `team` on this PE.
    pub(crate) fn team_info(&self, call: &'static str, team: Team) -> Result<TeamRef<'_>> {
        self.rt.teams.get(call, team, self.rt.my_pe)
    }

    /// The transport instance of this context that reaches world PE `pe`.
    #[inline]
    pub(crate) fn to(&self, pe: usize) -> &dyn Transport {
        self.domain.transports.to(pe)
    }

    /// Checks a PE number of this context's team and returns its world number.
    #[inline(always)]
    pub(crate) fn target_pe(&self, call: &'static str, pe: usize) -> Result<usize> {
        match &self.domain.team {
            None => self.check_pe(call, pe).map(|_| pe),
            Some(t) if pe < t.size => Ok(t.start + pe * t.stride),
            Some(t) => Err(Error::PeOutOfRange { call, arg: "pe", pe: pe as i64, n_pes: t.size, team: TeamNote(Some(t.team.raw())) }),
        }
    }

    /// [`Ctx::target_pe`] and the remote byte range; returns (world PE, heap offset).
    #[inline(always)]
    pub(crate) fn target(&self, call: &'static str, arg: &'static str, addr: usize, len: usize, pe: usize) -> Result<(usize, usize)> {
        let pe = self.target_pe(call, pe)?;
        Ok((pe, self.remote(call, arg, addr, len, pe)?))
    }

    /// [`Ctx::target_pe`] and the alignment and range of a `width`-byte word; returns
    /// (world PE, heap offset).
    #[inline]
    pub(crate) fn target_word(
        &self,
        call: &'static str,
        arg: &'static str,
        addr: usize,
        width: usize,
        ty: &'static str,
        pe: usize,
    ) -> Result<(usize, usize)> {
        let pe = self.target_pe(call, pe)?;
        Ok((pe, self.remote_word(call, arg, addr, width, ty, pe)?))
    }

    /// Checks world PE `pe` and the remote byte range `[addr, addr+len)`; returns its heap
    /// offset (operations use the context-relative [`Ctx::target`]).
    #[inline(always)]
    pub(crate) fn remote(&self, call: &'static str, arg: &'static str, addr: usize, len: usize, pe: usize) -> Result<usize> {
        self.check_pe(call, pe)?;
        self.rt.heap.check_range(call, arg, addr, len, pe)
    }

    /// Checks `pe`, alignment and range of a `width`-byte word at `addr` (world PE numbers;
    /// operations use the context-relative [`Ctx::target_word`]).
    #[inline]
    pub(crate) fn remote_word(
        &self,
        call: &'static str,
        arg: &'static str,
        addr: usize,
        width: usize,
        ty: &'static str,
        pe: usize,
    ) -> Result<usize> {
        self.check_pe(call, pe)?;
        if !addr.is_multiple_of(width) {
            return Err(Error::Misaligned { call, arg, addr, align: width, ty, pe });
        }
        self.rt.heap.check_range(call, arg, addr, width, pe)
    }

    /// Address of `sym[index]`, checked against the allocation's length (`pe` only shapes
    /// the error): an index past the end never reaches a neighbouring allocation.
    #[inline]
    pub(crate) fn element<T: SymType>(
        &self,
        call: &'static str,
        arg: &'static str,
        sym: &Sym<T>,
        index: usize,
        pe: usize,
    ) -> Result<usize> {
        sym.elements(call, arg, index, 1, pe)
    }

    /// [`Ctx::target`] for elements `index..index + count` of `sym`: (world PE, heap
    /// offset). The handle's own bounds check (an error names argument `index`) stands in
    /// for the heap's range check (argument `arg`) while its allocation is known to be
    /// live ([`Sym::offset_while_live`]).
    #[inline(always)]
    pub(crate) fn sym_target<T: SymType>(
        &self,
        call: &'static str,
        arg: &'static str,
        sym: &Sym<T>,
        index: usize,
        count: usize,
        pe: usize,
    ) -> Result<(usize, usize)> {
        let addr = sym.elements(call, "index", index, count, pe)?;
        let world = self.target_pe(call, pe)?;
        match sym.offset_while_live(&self.rt, index) {
            Some(off) => Ok((world, off)),
            None => Ok((world, self.remote_cold(call, arg, addr, count * std::mem::size_of::<T>(), world)?)),
        }
    }

    /// [`Ctx::target_word`] for `sym[index]`, as [`Ctx::sym_target`] does for a range
    /// (an error of the handle's bounds check names `arg`); the remembered offset also
    /// needs the word aligned, else the heap checks it and names the misalignment.
    #[inline(always)]
    pub(crate) fn sym_word_target<T: WordType>(
        &self,
        call: &'static str,
        arg: &'static str,
        sym: &Sym<T>,
        index: usize,
        pe: usize,
    ) -> Result<(usize, usize)> {
        let addr = sym.elements(call, arg, index, 1, pe)?;
        let world = self.target_pe(call, pe)?;
        match sym.offset_while_live(&self.rt, index).filter(|off| off.is_multiple_of(T::WIDTH)) {
            Some(off) => Ok((world, off)),
            None => Ok((world, self.remote_word_cold::<T>(call, arg, addr, world)?)),
        }
    }

    /// [`Ctx::remote`] out of line, for the handle forms' rare path (an allocation freed
    /// since the handle was made): inlined, the heap's check bloats their hot path.
    #[cold]
    #[inline(never)]
    fn remote_cold(&self, call: &'static str, arg: &'static str, addr: usize, len: usize, pe: usize) -> Result<usize> {
        self.remote(call, arg, addr, len, pe)
    }

    /// [`Ctx::remote_word`] for a `T` out of line (see [`Ctx::remote_cold`]).
    #[cold]
    #[inline(never)]
    fn remote_word_cold<T: WordType>(&self, call: &'static str, arg: &'static str, addr: usize, pe: usize) -> Result<usize> {
        self.remote_word(call, arg, addr, T::WIDTH, T::NAME, pe)
    }

    /// Refuses a store (put, updating AMO, signal) through a NOSTORE context.
    #[inline]
    pub(crate) fn check_store(&self, call: &'static str) -> Result<()> {
        if self.options.nostore {
            Err(Error::InvalidArgument {
                call,
                arg: "ctx",
                detail: format!("context {} was created with NOSTORE and may not issue puts, updating atomics or signals", self.domain.id),
                pe: self.my_pe(),
            })
        } else {
            Ok(())
        }
    }
}
