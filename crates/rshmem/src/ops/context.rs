//! Communication contexts (OpenSHMEM `shmem_ctx_*`).
//!
//! Every [`Ctx`] value is a context: [`crate::init`] returns the default one, and
//! [`Ctx::create_ctx`] / [`Ctx::team_create_ctx`] make more. The context forms of every
//! RMA, AMO, signal, fence and quiet call are simply the methods of the returned `Ctx`.
//! Clones of a `Ctx` share its context.
//!
//! **Completion domains.** A context carries its own transport table, made by
//! [`TransportTable::for_context`]: each transport may open an instance for the context
//! with completion state of its own ([`Transport::open_context`]), so `quiet` on one
//! context waits only for the operations issued through it, never for another's. A
//! remote transport opens an endpoint set per context there. The local (mapped)
//! transport completes every operation before its call returns, so it has no state to
//! keep apart and shares one instance: there, quiet on any context is a memory fence.
//!
//! **Team contexts.** A context made from a team takes PE numbers relative to that team
//! in every operation (a PE outside it is an error naming the team). Collectives, locks
//! and waits are not context operations and keep world numbering.
//!
//! **Options.** `SERIALIZED` and `PRIVATE` tell the transport that one thread at a time
//! (or only the creator) uses the context; the local transport is safe for any number of
//! threads either way. `NOSTORE` promises that the context issues no stores: puts, AMOs
//! that update memory and signals through it are refused with an error.

use crate::ctx::{Ctx, CtxOptions};
use crate::error::{Error, Result, TeamNote};
use crate::team::Team;
use crate::transport::{ContextSpec, Transport, TransportTable};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The members of a team context's team, in world numbers (fixed for the team's life).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TeamView {
    pub(crate) team: Team,
    pub(crate) start: usize,
    pub(crate) stride: usize,
    pub(crate) size: usize,
}

/// What makes a context: its number, team and transport instances.
pub(crate) struct CtxDomain {
    /// 0 for the default context; never reused within a runtime.
    pub(crate) id: u32,
    /// The team whose numbering the context uses (None: the world, untranslated).
    pub(crate) team: Option<TeamView>,
    /// The transport instance serving each world PE for this context.
    pub(crate) transports: TransportTable,
    /// Its distinct instances, for fence and quiet.
    pub(crate) distinct: Vec<Arc<dyn Transport>>,
}

impl CtxDomain {
    /// The default context over the runtime's transports.
    pub(crate) fn default_context(transports: &TransportTable) -> CtxDomain {
        CtxDomain { id: 0, team: None, transports: transports.clone(), distinct: transports.distinct() }
    }
}

impl CtxOptions {
    /// C value of `SHMEM_CTX_SERIALIZED`.
    pub const SERIALIZED: i64 = 1;
    /// C value of `SHMEM_CTX_PRIVATE`.
    pub const PRIVATE: i64 = 1 << 1;
    /// C value of `SHMEM_CTX_NOSTORE`.
    pub const NOSTORE: i64 = 1 << 2;

    /// The options whose C bit mask is `bits`; None if it holds an unknown bit.
    pub fn from_bits(bits: i64) -> Option<CtxOptions> {
        (bits & !(Self::SERIALIZED | Self::PRIVATE | Self::NOSTORE) == 0).then_some(CtxOptions {
            serialized: bits & Self::SERIALIZED != 0,
            private: bits & Self::PRIVATE != 0,
            nostore: bits & Self::NOSTORE != 0,
        })
    }

    /// The C bit mask of these options.
    pub fn bits(self) -> i64 {
        let bit = |on: bool, b: i64| if on { b } else { 0 };
        bit(self.serialized, Self::SERIALIZED) | bit(self.private, Self::PRIVATE) | bit(self.nostore, Self::NOSTORE)
    }
}

impl Ctx {
    /// Creates a communication context over the world team (`shmem_ctx_create`). Not
    /// collective. Its operations complete independently of other contexts'.
    pub fn create_ctx(&self, options: CtxOptions) -> Result<Ctx> {
        self.open_ctx("create_ctx", None, options)
    }

    /// Creates a context whose PE numbers are relative to `team` (`shmem_team_create_ctx`).
    /// This PE must be a member of `team`.
    pub fn team_create_ctx(&self, team: Team, options: CtxOptions) -> Result<Ctx> {
        const CALL: &str = "team_create_ctx";
        let t = self.team_info(CALL, team)?;
        self.open_ctx(CALL, Some(TeamView { team, start: t.start, stride: t.stride, size: t.size }), options)
    }

    fn open_ctx(&self, call: &'static str, team: Option<TeamView>, options: CtxOptions) -> Result<Ctx> {
        let id = self.rt.next_ctx_id.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |i| i.checked_add(1)).map_err(|_| {
            Error::Unsupported { call, detail: format!("all {} context numbers of PE {} are used", u32::MAX, self.my_pe()) }
        })?;
        let spec = ContextSpec { id, serialized: options.serialized, private: options.private, nostore: options.nostore };
        let transports = self.rt.transports.for_context(spec);
        let distinct = transports.distinct();
        Ok(Ctx { rt: self.rt.clone(), options, domain: Arc::new(CtxDomain { id, team, transports, distinct }) })
    }

    /// Destroys this context (`shmem_ctx_destroy`): completes its operations (quiet), then
    /// drops the handle; its transport instances close when the last clone is gone. The
    /// default context cannot be destroyed (it lives as long as the runtime).
    pub fn destroy_ctx(self) -> Result<()> {
        if self.is_default_ctx() {
            return Err(Error::InvalidArgument {
                call: "destroy_ctx",
                arg: "ctx",
                detail: "the default context cannot be destroyed".into(),
                pe: self.my_pe(),
            });
        }
        self.quiet();
        Ok(())
    }

    /// This context's number on this PE (0 for the default context; never reused).
    pub fn ctx_id(&self) -> u32 {
        self.domain.id
    }

    /// Whether this is the default context (or a clone of it).
    pub fn is_default_ctx(&self) -> bool {
        self.domain.id == 0
    }

    /// The team whose PE numbers this context uses (`shmem_ctx_get_team`).
    pub fn ctx_team(&self) -> Team {
        self.domain.team.map_or(Team::WORLD, |t| t.team)
    }

    /// The transport instance of this context that reaches world PE `pe`.
    #[inline]
    pub(crate) fn to(&self, pe: usize) -> &dyn Transport {
        self.domain.transports.to(pe)
    }

    /// Checks a PE number of this context's team and returns its world number.
    #[inline]
    pub(crate) fn target_pe(&self, call: &'static str, pe: usize) -> Result<usize> {
        match &self.domain.team {
            None => self.check_pe(call, pe).map(|_| pe),
            Some(t) if pe < t.size => Ok(t.start + pe * t.stride),
            Some(t) => Err(Error::PeOutOfRange { call, arg: "pe", pe: pe as i64, n_pes: t.size, team: TeamNote(Some(t.team.raw())) }),
        }
    }

    /// [`Ctx::target_pe`] and the remote byte range; returns (world PE, heap offset).
    #[inline]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_bits_round_trip() {
        for bits in 0..8 {
            assert_eq!(CtxOptions::from_bits(bits).unwrap().bits(), bits);
        }
        assert_eq!(CtxOptions::from_bits(CtxOptions::NOSTORE), Some(CtxOptions { nostore: true, ..Default::default() }));
        assert_eq!(CtxOptions::from_bits(8), None);
        assert_eq!(CtxOptions::from_bits(-1), None);
    }
}
