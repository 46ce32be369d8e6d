//! Reductions: all-reduce (`reduce`), reduce-scatter, and the sum scans, over the
//! reduction type table ([`crate::types::ReduceType`]) and operators
//! ([`crate::types::ReduceOp`]; AND/OR/XOR only on integers).
//!
//! * `reduce(team, dest, source, nreduce, op)`: every member's `dest[i]` is the `op` of
//!   all members' `source[i]` (OpenSHMEM `shmem_TYPENAME_OP_reduce`). `dest` and `source`
//!   may be the same buffer; partial overlap is an error. Algorithms:
//!   [one-shot](super::reduce_oneshot), [reduce-scatter + all-gather](super::reduce_rsag),
//!   [ring](super::reduce_ring), [hierarchical](super::reduce_hier), chosen by
//!   [`super::select::reduce`].
//! * `reduce_scatter(team, dest, source, nreduce, op)`: `source` holds `n` blocks of
//!   `nreduce` elements; member `i`'s `dest` (`nreduce` elements) is the `op` of block `i`
//!   of every member's `source` (NVSHMEM `reducescatter`). Buffers must not overlap.
//!   Algorithms: [direct](super::reduce_scatter_direct) and [ring](super::reduce_ring).
//! * `sum_inscan` / `sum_exscan`: member `i`'s `dest` is the sum of `source` over members
//!   `0..=i` / `0..i` (zero on member 0), OpenSHMEM 1.6. In place allowed. Algorithm:
//!   [direct](super::scan).
//!
//! The order in which contributions are combined is documented in [`crate::coll`].

use super::select::{self, ReduceAlgo, ReduceScatterAlgo, Shape};
use super::session::{Kind, Session};
use super::{
    bytes_of, overlap, overlap_error, reduce_hier, reduce_oneshot, reduce_push, reduce_ring, reduce_rsag, reduce_scatter_direct, scan,
    sym_range, Overlap,
};
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::runtime::teams::Team;
use crate::sym::Sym;
use crate::types::{ReduceDtype, ReduceOp, ReduceType};

impl Ctx {
    /// All-reduce: `dest[i]` on every member of `team` becomes `op` over every member's
    /// `source[i]`, for `i < nreduce` (OpenSHMEM `shmem_TYPENAME_OP_reduce`). `dest` may
    /// be `source` (in place). Collective.
    pub fn reduce<T: ReduceType>(&self, team: Team, dest: &Sym<T>, source: &Sym<T>, nreduce: usize, op: ReduceOp) -> Result<()> {
        self.reduce_typed::<T>(team, dest.addr(), source.addr(), nreduce, op)
    }

    /// Address form of [`Ctx::reduce`] with the element type given by tag (the C ABI).
    pub fn reduce_addr(
        &self,
        team: Team,
        dest_addr: usize,
        src_addr: usize,
        nreduce: usize,
        dtype: ReduceDtype,
        op: ReduceOp,
    ) -> Result<()> {
        crate::with_reduce_type!(dtype, T => self.reduce_typed::<T>(team, dest_addr, src_addr, nreduce, op))
    }

    /// Reduce-scatter: member `i`'s `dest` (`nreduce` elements) becomes `op` over block `i`
    /// (elements `i*nreduce ..`) of every member's `source` (`n * nreduce` elements).
    pub fn reduce_scatter<T: ReduceType>(&self, team: Team, dest: &Sym<T>, source: &Sym<T>, nreduce: usize, op: ReduceOp) -> Result<()> {
        self.reduce_scatter_typed::<T>(team, dest.addr(), source.addr(), nreduce, op)
    }

    /// Address form of [`Ctx::reduce_scatter`].
    pub fn reduce_scatter_addr(
        &self,
        team: Team,
        dest_addr: usize,
        src_addr: usize,
        nreduce: usize,
        dtype: ReduceDtype,
        op: ReduceOp,
    ) -> Result<()> {
        crate::with_reduce_type!(dtype, T => self.reduce_scatter_typed::<T>(team, dest_addr, src_addr, nreduce, op))
    }

    /// Inclusive prefix sum: member `i`'s `dest` becomes the sum of `source` over members
    /// `0..=i` (OpenSHMEM 1.6 `shmem_TYPENAME_sum_inscan`). In place allowed.
    pub fn sum_inscan<T: ReduceType>(&self, team: Team, dest: &Sym<T>, source: &Sym<T>, nelems: usize) -> Result<()> {
        self.scan_typed::<T>(team, dest.addr(), source.addr(), nelems, false)
    }

    /// Exclusive prefix sum: member `i`'s `dest` becomes the sum of `source` over members
    /// `0..i`, zero on member 0 (OpenSHMEM 1.6 `shmem_TYPENAME_sum_exscan`).
    pub fn sum_exscan<T: ReduceType>(&self, team: Team, dest: &Sym<T>, source: &Sym<T>, nelems: usize) -> Result<()> {
        self.scan_typed::<T>(team, dest.addr(), source.addr(), nelems, true)
    }

    /// Address form of the sum scans (`exclusive`: exscan).
    pub fn sum_scan_addr(
        &self,
        team: Team,
        dest_addr: usize,
        src_addr: usize,
        nelems: usize,
        dtype: ReduceDtype,
        exclusive: bool,
    ) -> Result<()> {
        crate::with_reduce_type!(dtype, T => self.scan_typed::<T>(team, dest_addr, src_addr, nelems, exclusive))
    }

    fn reduce_typed<T: ReduceType>(&self, team: Team, dest: usize, src: usize, nreduce: usize, op: ReduceOp) -> Result<()> {
        const CALL: &str = "reduce";
        let rt = &*self.rt;
        let t = self.team_info(CALL, team)?;
        let (me, n) = (rt.my_pe, t.size);
        let sz = std::mem::size_of::<T>();
        let local = (|| {
            supports::<T>(CALL, op, me)?;
            let nbytes = bytes_of(CALL, "nreduce", nreduce, sz, me)?;
            let d = sym_range(rt, CALL, "dest", dest, nbytes)?;
            let s = sym_range(rt, CALL, "source", src, nbytes)?;
            if overlap(d, nbytes, s, nbytes) == Overlap::Partial {
                return Err(overlap_error(CALL, "dest and source overlap partly (they must be the same buffer or disjoint)", me));
            }
            Ok((d, s))
        })();
        let mut s = Session::begin(rt, &t, CALL);
        let mapped = s.mapped();
        let hier = s.spans_hosts();
        let nbytes = nreduce.saturating_mul(sz);
        let algo = select::reduce(&rt.forced, Shape { team_size: n, bytes: nbytes, mapped, hier });
        let (d, so) = *local.as_ref().unwrap_or(&(usize::MAX, usize::MAX));
        check_reduction::<T>(&mut s, Kind::Reduce, op, nreduce, (d, so), algo as u64, local.is_ok())?;
        let (d, so) = local?;
        if nreduce == 0 {
            return Ok(());
        }
        if n == 1 {
            s.copy(0, d, 0, so, nbytes)?;
            return Ok(());
        }
        tracing::trace!(team = team.raw(), nreduce, ty = T::NAME, ?op, ?algo, "reduce");
        match algo {
            ReduceAlgo::OneShot => reduce_oneshot::run::<T>(&mut s, d, so, nreduce, op),
            ReduceAlgo::RsAg => reduce_rsag::run::<T>(&mut s, d, so, nreduce, op),
            ReduceAlgo::Ring => reduce_ring::allreduce::<T>(&mut s, d, so, nreduce, op),
            ReduceAlgo::Hier => {
                let hosts = s.hosts();
                reduce_hier::run::<T>(&mut s, &hosts, d, so, nreduce, op)
            }
            ReduceAlgo::Push => reduce_push::run::<T>(&mut s, d, so, nreduce, op),
        }
    }

    fn reduce_scatter_typed<T: ReduceType>(&self, team: Team, dest: usize, src: usize, nreduce: usize, op: ReduceOp) -> Result<()> {
        const CALL: &str = "reduce_scatter";
        let rt = &*self.rt;
        let t = self.team_info(CALL, team)?;
        let (me, n) = (rt.my_pe, t.size);
        let sz = std::mem::size_of::<T>();
        let local = (|| {
            supports::<T>(CALL, op, me)?;
            let nbytes = bytes_of(CALL, "nreduce", nreduce, sz, me)?;
            let total = bytes_of(CALL, "nreduce", nbytes, n, me)?;
            let d = sym_range(rt, CALL, "dest", dest, nbytes)?;
            let s = sym_range(rt, CALL, "source", src, total)?;
            if overlap(d, nbytes, s, total) != Overlap::Disjoint {
                return Err(overlap_error(CALL, "dest and source overlap", me));
            }
            Ok((d, s))
        })();
        let mut s = Session::begin(rt, &t, CALL);
        let mapped = s.mapped();
        let nbytes = nreduce.saturating_mul(sz);
        let algo = select::reduce_scatter(&rt.forced, Shape { team_size: n, bytes: nbytes.saturating_mul(n), mapped, hier: false });
        let (d, so) = *local.as_ref().unwrap_or(&(usize::MAX, usize::MAX));
        check_reduction::<T>(&mut s, Kind::ReduceScatter, op, nreduce, (d, so), algo as u64, local.is_ok())?;
        let (d, so) = local?;
        if nreduce == 0 {
            return Ok(());
        }
        if n == 1 {
            s.copy(0, d, 0, so, nbytes)?;
            return Ok(());
        }
        tracing::trace!(team = team.raw(), nreduce, ty = T::NAME, ?op, ?algo, "reduce_scatter");
        match algo {
            ReduceScatterAlgo::Direct => reduce_scatter_direct::run::<T>(&mut s, d, so, nreduce, op),
            ReduceScatterAlgo::Ring => reduce_ring::reduce_scatter::<T>(&mut s, d, so, nreduce, op),
        }
    }

    fn scan_typed<T: ReduceType>(&self, team: Team, dest: usize, src: usize, nelems: usize, exclusive: bool) -> Result<()> {
        let call = if exclusive { "sum_exscan" } else { "sum_inscan" };
        let rt = &*self.rt;
        let t = self.team_info(call, team)?;
        let (me, n) = (rt.my_pe, t.size);
        let sz = std::mem::size_of::<T>();
        let local = (|| {
            let nbytes = bytes_of(call, "nelems", nelems, sz, me)?;
            let d = sym_range(rt, call, "dest", dest, nbytes)?;
            let s = sym_range(rt, call, "source", src, nbytes)?;
            if overlap(d, nbytes, s, nbytes) == Overlap::Partial {
                return Err(overlap_error(call, "dest and source overlap partly (they must be the same buffer or disjoint)", me));
            }
            Ok((d, s))
        })();
        let mut s = Session::begin(rt, &t, call);
        let (d, so) = *local.as_ref().unwrap_or(&(usize::MAX, usize::MAX));
        let kind = if exclusive { Kind::Exscan } else { Kind::Inscan };
        s.check(kind, [T::DTYPE as u64, nelems as u64, d as u64, so as u64], local.is_ok())?;
        let (d, so) = local?;
        if nelems == 0 {
            return Ok(());
        }
        if n == 1 {
            if exclusive {
                s.put_mine(d, &vec![T::ZERO; nelems])?;
            } else {
                s.copy(0, d, 0, so, nelems * sz)?;
            }
            return Ok(());
        }
        scan::run::<T>(&s, d, so, nelems, exclusive)
    }
}

fn supports<T: ReduceType>(call: &'static str, op: ReduceOp, pe: usize) -> Result<()> {
    if T::DTYPE.supports(op) {
        Ok(())
    } else {
        Err(Error::InvalidArgument { call, arg: "op", detail: format!("{} is not defined on {}", op.name(), T::NAME), pe })
    }
}

/// The cross-PE argument check shared by reduce and reduce_scatter.
fn check_reduction<T: ReduceType>(
    s: &mut Session,
    kind: Kind,
    op: ReduceOp,
    nreduce: usize,
    (dest, source): (usize, usize),
    algo: u64,
    local_ok: bool,
) -> Result<()> {
    s.check(kind, [T::DTYPE as u64, op as u64, nreduce as u64, dest as u64, source as u64, algo], local_ok)
}
