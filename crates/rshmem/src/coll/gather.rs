//! fcollect and collect: every member's `source` block, concatenated in team-rank order,
//! lands in every member's `dest`. fcollect blocks all have the same size; collect
//! blocks may differ per PE (every PE publishes its size first). `dest` and `source` must
//! not overlap. Algorithms: [direct](super::gather_direct), [ring](super::gather_ring) and
//! [hierarchical](super::gather_hier),
//! chosen by [`super::select::fcollect`] / [`super::select::collect`].

use super::select::{self, GatherAlgo, Shape};
use super::session::{Kind, Session};
use super::{bytes_of, gather_direct, gather_hier, gather_push, gather_ring, overlap, overlap_error, sym_range, Overlap};
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::runtime::teams::Team;
use crate::sym::Sym;
use crate::types::SymType;

impl Ctx {
    /// Concatenates `nelems` elements of `source` from every member of `team`, in team
    /// order, into `dest` (`n * nelems` elements) on every member (OpenSHMEM
    /// `shmem_TYPENAME_fcollect`; `nelems` is the same on every PE). Collective.
    pub fn fcollect<T: SymType>(&self, team: Team, dest: &Sym<T>, source: &Sym<T>, nelems: usize) -> Result<()> {
        let nbytes = bytes_of("fcollect", "nelems", nelems, std::mem::size_of::<T>(), self.my_pe())?;
        self.fcollect_bytes("fcollect", team, dest.addr(), source.addr(), nbytes)
    }

    /// Byte form of [`Ctx::fcollect`] (`shmem_fcollectmem`).
    pub fn fcollectmem(&self, team: Team, dest_addr: usize, src_addr: usize, nbytes: usize) -> Result<()> {
        self.fcollect_bytes("fcollectmem", team, dest_addr, src_addr, nbytes)
    }

    /// Concatenates `nelems` elements of `source` from every member of `team` (`nelems`
    /// may differ between PEs), in team order, into `dest` on every member (OpenSHMEM
    /// `shmem_TYPENAME_collect`). `dest` must hold the total. Collective.
    pub fn collect<T: SymType>(&self, team: Team, dest: &Sym<T>, source: &Sym<T>, nelems: usize) -> Result<()> {
        let nbytes = bytes_of("collect", "nelems", nelems, std::mem::size_of::<T>(), self.my_pe())?;
        self.collect_bytes("collect", team, dest.addr(), source.addr(), nbytes)
    }

    /// Byte form of [`Ctx::collect`] (`shmem_collectmem`).
    pub fn collectmem(&self, team: Team, dest_addr: usize, src_addr: usize, nbytes: usize) -> Result<()> {
        self.collect_bytes("collectmem", team, dest_addr, src_addr, nbytes)
    }

    fn fcollect_bytes(&self, call: &'static str, team: Team, dest: usize, src: usize, nbytes: usize) -> Result<()> {
        let rt = &*self.rt;
        let t = self.team_info(call, team)?;
        let (me, n) = (rt.my_pe, t.size);
        let local = (|| {
            let total = bytes_of(call, "nelems", nbytes, n, me)?;
            let d = sym_range(rt, call, "dest", dest, total)?;
            let s = sym_range(rt, call, "source", src, nbytes)?;
            if overlap(d, total, s, nbytes) != Overlap::Disjoint {
                return Err(overlap_error(call, "dest and source overlap", me));
            }
            Ok((d, s))
        })();
        let mut s = Session::begin(rt, &t, call);
        let mapped = s.mapped();
        let hier = s.spans_hosts();
        let algo = select::fcollect(&rt.forced, Shape { team_size: n, bytes: nbytes.saturating_mul(n), mapped, hier });
        let (d, so) = *local.as_ref().unwrap_or(&(usize::MAX, usize::MAX));
        s.check(Kind::Fcollect, [nbytes as u64, d as u64, so as u64, algo as u64], local.is_ok())?;
        let (d, so) = local?;
        if nbytes == 0 {
            return Ok(());
        }
        if n == 1 {
            s.copy(0, d, 0, so, nbytes)?;
            return Ok(());
        }
        let offsets: Vec<usize> = (0..n).map(|i| i * nbytes).collect();
        let sizes = vec![nbytes; n];
        s.publish(1)?;
        tracing::trace!(call, team = team.raw(), nbytes, ?algo, "fcollect");
        match algo {
            GatherAlgo::Direct => {
                s.enter_all()?;
                gather_direct::run(&mut s, d, so, &offsets, &sizes)
            }
            GatherAlgo::Ring => {
                s.signals_to((s.me() + 1) % n);
                s.wait_progress((s.me() + 1) % n, 1)?;
                gather_ring::run(&mut s, d, so, &offsets, &sizes)
            }
            GatherAlgo::Hier => {
                let hosts = s.hosts();
                gather_hier::run(&mut s, &hosts, d, so, (&offsets, &sizes), false)
            }
            GatherAlgo::Push => gather_push::run(&mut s, d, so, nbytes),
        }
    }

    fn collect_bytes(&self, call: &'static str, team: Team, dest: usize, src: usize, nbytes: usize) -> Result<()> {
        let rt = &*self.rt;
        let t = self.team_info(call, team)?;
        let (me, n) = (rt.my_pe, t.size);
        let local = (|| {
            let s = sym_range(rt, call, "source", src, nbytes)?;
            // dest is checked once the total is known (every PE then agrees).
            Ok((rt.heap.offset_of(dest).unwrap_or(usize::MAX), s))
        })();
        let mut s = Session::begin(rt, &t, call);
        let (d, so) = *local.as_ref().unwrap_or(&(usize::MAX, usize::MAX));
        let forced = rt.forced.collect.map_or(0, |a| a as u64 + 1);
        s.check(Kind::Collect, [d as u64, so as u64, forced], local.is_ok())?;
        let (d, so) = local?;
        // Sizes: every member publishes its own, then reads all (this is also the entry
        // signal that lets peers write into its dest).
        s.set_info(nbytes as u64)?;
        s.publish(1)?;
        let mut sizes = Vec::with_capacity(n);
        for i in 0..n {
            if i != s.me() {
                s.wait_progress(i, 1)?;
            }
            sizes.push(s.info(i)? as usize);
        }
        s.consumed(1)?;
        let mut offsets = Vec::with_capacity(n);
        let mut total = Some(0usize);
        for &z in &sizes {
            offsets.push(total.unwrap_or(0));
            total = total.and_then(|t| t.checked_add(z));
        }
        // Every member knows every size and (symmetric) offset, so these verdicts agree.
        let verdict = match total {
            None => Err(Error::InvalidArgument { call, arg: "nelems", detail: "the blocks' total overflows".into(), pe: me }),
            Some(0) => Ok(0),
            Some(t) => rt.heap.check_range(call, "dest", dest, t, me).and_then(|_| {
                if sizes.iter().any(|&z| overlap(d, t, so, z) != Overlap::Disjoint) {
                    Err(overlap_error(call, "dest and source overlap (on some PE)", me))
                } else {
                    Ok(t)
                }
            }),
        };
        if !matches!(verdict, Ok(t) if t > 0) {
            // No blocks will move, so nothing else tells this PE that its peers have read
            // its size: wait for that before its next collect may overwrite it.
            for i in (0..n).filter(|&i| i != s.me()) {
                s.wait_consumed(i, 1)?;
            }
        }
        let total = verdict?;
        if total == 0 {
            return Ok(());
        }
        if n == 1 {
            s.copy(0, d, 0, so, nbytes)?;
            return Ok(());
        }
        let mapped = s.mapped();
        let hier = s.spans_hosts();
        let algo = select::collect(&rt.forced, Shape { team_size: n, bytes: total, mapped, hier });
        tracing::trace!(call, team = team.raw(), nbytes, total, ?algo, "collect");
        match algo {
            // select::collect never picks push (RSHMEM_COLL_ALGO refuses collect=push).
            GatherAlgo::Direct | GatherAlgo::Push => gather_direct::run(&mut s, d, so, &offsets, &sizes),
            GatherAlgo::Ring => gather_ring::run(&mut s, d, so, &offsets, &sizes),
            GatherAlgo::Hier => {
                let hosts = s.hosts();
                gather_hier::run(&mut s, &hosts, d, so, (&offsets, &sizes), true)
            }
        }
    }
}
