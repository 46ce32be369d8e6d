//! Broadcast: the root's `source` is copied to `dest` on every member (the root's too).
//!
//! `dest` may be the same buffer as `source` (then the root's copy is skipped); partly
//! overlapping buffers are an error. Algorithms: [pushed](super::broadcast_push),
//! [direct](super::broadcast_direct), [binomial tree](super::broadcast_tree) and
//! [hierarchical](super::broadcast_hier), chosen by [`super::select::broadcast`].

use super::select::{self, BroadcastAlgo, Shape};
use super::session::{Kind, Session};
use super::{broadcast_direct, broadcast_hier, broadcast_push, broadcast_tree, bytes_of, overlap, overlap_error, sym_range, Overlap};
use crate::ctx::Ctx;
use crate::error::{Error, Result, TeamNote};
use crate::runtime::teams::Team;
use crate::sym::Sym;
use crate::types::SymType;

impl Ctx {
    /// Copies `nelems` elements of `source` on team member `root` to `dest` on every
    /// member of `team` (OpenSHMEM `shmem_TYPENAME_broadcast`). Collective over `team`.
    pub fn broadcast<T: SymType>(&self, team: Team, dest: &Sym<T>, source: &Sym<T>, nelems: usize, root: usize) -> Result<()> {
        let nbytes = bytes_of("broadcast", "nelems", nelems, std::mem::size_of::<T>(), self.my_pe())?;
        self.broadcast_bytes("broadcast", team, dest.addr(), source.addr(), nbytes, root, true)
    }

    /// Byte form of [`Ctx::broadcast`] over symmetric addresses (`shmem_broadcastmem`).
    pub fn broadcastmem(&self, team: Team, dest_addr: usize, src_addr: usize, nbytes: usize, root: usize) -> Result<()> {
        self.broadcast_bytes("broadcastmem", team, dest_addr, src_addr, nbytes, root, true)
    }

    /// [`Ctx::broadcastmem`] that leaves the root's `dest` unchanged, as OpenSHMEM 1.4's
    /// active-set `shmem_broadcast32/64` do (the C ABI runs those on the world team when
    /// the active set is the world).
    pub fn broadcastmem_to_others(&self, team: Team, dest_addr: usize, src_addr: usize, nbytes: usize, root: usize) -> Result<()> {
        self.broadcast_bytes("broadcast", team, dest_addr, src_addr, nbytes, root, false)
    }

    /// The broadcasts; `root_dest`: whether the root's `dest` gets the data too.
    #[allow(clippy::too_many_arguments)]
    fn broadcast_bytes(
        &self,
        call: &'static str,
        team: Team,
        dest: usize,
        src: usize,
        nbytes: usize,
        root: usize,
        root_dest: bool,
    ) -> Result<()> {
        let rt = &*self.rt;
        let t = self.team_info(call, team)?;
        let (me, n) = (rt.my_pe, t.size);
        let local = (|| {
            if root >= n {
                return Err(Error::PeOutOfRange { call, arg: "PE_root", pe: root as i64, n_pes: n, team: TeamNote(Some(team.raw())) });
            }
            let d = sym_range(rt, call, "dest", dest, nbytes)?;
            let s = sym_range(rt, call, "source", src, nbytes)?;
            if overlap(d, nbytes, s, nbytes) == Overlap::Partial {
                return Err(overlap_error(call, "dest and source overlap partly (they may only be the same buffer)", me));
            }
            Ok((d, s))
        })();
        let mut s = Session::begin(rt, &t, call);
        let mapped = s.mapped();
        let hier = s.spans_hosts();
        let algo = select::broadcast(&rt.forced, Shape { team_size: n, bytes: nbytes, mapped, hier });
        let (d, so) = *local.as_ref().unwrap_or(&(usize::MAX, usize::MAX));
        s.check(Kind::Broadcast, [nbytes as u64, root as u64, d as u64, so as u64, algo as u64], local.is_ok())?;
        let (mut d, so) = local?;
        if !root_dest && t.my_index == root {
            // Every algorithm writes the root's dest only by copying its source there,
            // which a dest equal to the source skips; readers read the root's source.
            d = so;
        }
        if nbytes == 0 {
            return Ok(());
        }
        if n == 1 {
            s.copy(0, d, 0, so, nbytes)?;
            return Ok(());
        }
        tracing::trace!(call, team = team.raw(), nbytes, root, ?algo, "broadcast");
        match algo {
            BroadcastAlgo::Direct => broadcast_direct::run(&mut s, d, so, nbytes, root),
            BroadcastAlgo::Tree => broadcast_tree::run(&mut s, d, so, nbytes, root),
            BroadcastAlgo::Hier => {
                let hosts = s.hosts();
                broadcast_hier::run(&mut s, &hosts, d, so, nbytes, root)
            }
            BroadcastAlgo::Push => broadcast_push::run(&mut s, d, so, nbytes, root),
        }
    }
}
