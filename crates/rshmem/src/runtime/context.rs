//! What makes a communication context: its options, number, team and transport
//! instances. Creating contexts is `ops::context`; the handle is [`crate::Ctx`].

use super::teams::Team;
use crate::transport::{Transport, TransportTable};
use std::sync::Arc;

/// Options of a communication context (OpenSHMEM `SHMEM_CTX_*`; C bits in
/// [`CtxOptions::from_bits`]). See `ops::context` for what each changes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CtxOptions {
    /// Only one thread at a time uses the context.
    pub serialized: bool,
    /// Only the creating thread uses the context.
    pub private: bool,
    /// The context issues no stores: puts, updating AMOs and signals through it are
    /// refused; quiet has nothing of its own to wait for.
    pub nostore: bool,
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
