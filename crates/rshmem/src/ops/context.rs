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

use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::runtime::context::{CtxDomain, CtxOptions, TeamView};
use crate::runtime::teams::Team;
use crate::transport::ContextSpec;
use std::sync::atomic::Ordering;
use std::sync::Arc;

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
        self.quiet()?;
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
}
