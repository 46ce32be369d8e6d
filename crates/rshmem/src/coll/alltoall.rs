//! alltoall and alltoalls: member `i` sends its `j`-th block of `source` to member `j`,
//! where it becomes the `i`-th block of `dest`.
//!
//! alltoalls moves strided elements: element `m` of the block for member `j` is
//! `source[(j * nelems + m) * sst]` and lands in `dest[(i * nelems + m) * dst]` on `j`
//! (strides count elements; 1 is contiguous). alltoall is the contiguous case.
//!
//! One algorithm (direct): every member waits until all have entered (over the network,
//! teams of up to 16 say so into each other's inboxes instead of being polled), writes
//! each block straight into its receiver's dest, then adds one to the receiver's ARRIVE
//! counter (a posted add);
//! it returns once its own `n - 1` blocks have arrived. Each member starts with its right
//! neighbour and goes around, so writers spread over the receivers. `dest` and `source`
//! must not overlap.

use super::session::{Kind, Session};
use super::{bytes_of, overlap, overlap_error, sym_range, Overlap};
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::runtime::teams::Team;
use crate::sym::Sym;
use crate::types::SymType;

impl Ctx {
    /// Exchanges `nelems` elements with every member of `team`: block `j` of `source`
    /// goes to member `j`, block `i` of `dest` comes from member `i` (OpenSHMEM
    /// `shmem_TYPENAME_alltoall`). `source` and `dest` hold `n * nelems` elements.
    pub fn alltoall<T: SymType>(&self, team: Team, dest: &Sym<T>, source: &Sym<T>, nelems: usize) -> Result<()> {
        let nbytes = bytes_of("alltoall", "nelems", nelems, std::mem::size_of::<T>(), self.my_pe())?;
        self.alltoall_engine("alltoall", Kind::Alltoall, team, dest.addr(), source.addr(), nbytes, 1, 1, 1)
    }

    /// Byte form of [`Ctx::alltoall`] (`shmem_alltoallmem`): blocks of `nbytes` bytes.
    pub fn alltoallmem(&self, team: Team, dest_addr: usize, src_addr: usize, nbytes: usize) -> Result<()> {
        self.alltoall_engine("alltoallmem", Kind::Alltoall, team, dest_addr, src_addr, nbytes, 1, 1, 1)
    }

    /// Strided exchange: `nelems` elements per member, `dst` and `sst` elements apart in
    /// `dest` and `source` (OpenSHMEM `shmem_TYPENAME_alltoalls`; strides >= 1).
    pub fn alltoalls<T: SymType>(&self, team: Team, dest: &Sym<T>, source: &Sym<T>, dst: usize, sst: usize, nelems: usize) -> Result<()> {
        self.alltoall_engine("alltoalls", Kind::Alltoalls, team, dest.addr(), source.addr(), std::mem::size_of::<T>(), dst, sst, nelems)
    }

    /// Byte form of [`Ctx::alltoalls`] (`shmem_alltoallsmem`): elements are bytes.
    pub fn alltoallsmem(&self, team: Team, dest_addr: usize, src_addr: usize, dst: usize, sst: usize, nelems: usize) -> Result<()> {
        self.alltoall_engine("alltoallsmem", Kind::Alltoalls, team, dest_addr, src_addr, 1, dst, sst, nelems)
    }

    /// Address form of [`Ctx::alltoalls`] with elements of `elem_size` bytes (the C ABI's
    /// typed and sized variants).
    pub fn alltoalls_addr(
        &self,
        team: Team,
        dest_addr: usize,
        src_addr: usize,
        dst: usize,
        sst: usize,
        nelems: usize,
        elem_size: usize,
    ) -> Result<()> {
        self.alltoall_engine("alltoalls", Kind::Alltoalls, team, dest_addr, src_addr, elem_size, dst, sst, nelems)
    }

    /// The engine: `nelems` elements of `elem` bytes per member, strides `dst`, `sst`.
    fn alltoall_engine(
        &self,
        call: &'static str,
        kind: Kind,
        team: Team,
        dest: usize,
        src: usize,
        elem: usize,
        dst: usize,
        sst: usize,
        nelems: usize,
    ) -> Result<()> {
        let rt = &*self.rt;
        let t = self.team_info(call, team)?;
        let (me, n) = (rt.my_pe, t.size);
        let local = (|| {
            if dst == 0 || sst == 0 {
                return Err(Error::InvalidArgument { call, arg: "dst/sst", detail: "strides must be at least 1".into(), pe: me });
            }
            let count = bytes_of(call, "nelems", nelems, n, me)?;
            let span = |stride: usize| {
                if count == 0 {
                    Some(0)
                } else {
                    (count - 1).checked_mul(stride).and_then(|v| v.checked_add(1)).and_then(|v| v.checked_mul(elem))
                }
            };
            let overflow =
                || Error::InvalidArgument { call, arg: "nelems", detail: format!("{nelems} elements at these strides overflow"), pe: me };
            let (dspan, sspan) = (span(dst).ok_or_else(overflow)?, span(sst).ok_or_else(overflow)?);
            let d = sym_range(rt, call, "dest", dest, dspan)?;
            let s = sym_range(rt, call, "source", src, sspan)?;
            if overlap(d, dspan, s, sspan) != Overlap::Disjoint {
                return Err(overlap_error(call, "dest and source overlap", me));
            }
            Ok((d, s))
        })();
        let mut s = Session::begin(rt, &t, call);
        let (d, so) = *local.as_ref().unwrap_or(&(usize::MAX, usize::MAX));
        s.check(kind, [elem as u64, nelems as u64, dst as u64, sst as u64, d as u64, so as u64], local.is_ok())?;
        let (d, so) = local?;
        if nelems == 0 || elem == 0 {
            return Ok(());
        }
        run(&mut s, d, so, elem, dst, sst, nelems)
    }
}

/// Direct exchange (see the module documentation).
fn run(s: &mut Session<'_>, dest: usize, src: usize, elem: usize, dst: usize, sst: usize, nelems: usize) -> Result<()> {
    let (me, n) = (s.me(), s.n());
    let send = |s: &Session<'_>, j: usize| -> Result<()> {
        let (dbase, sbase) = (dest + me * nelems * dst * elem, src + j * nelems * sst * elem);
        if dst == 1 && sst == 1 {
            s.copy(j, dbase, me, sbase, nelems * elem)?;
        } else {
            for m in 0..nelems {
                s.copy(j, dbase + m * dst * elem, me, sbase + m * sst * elem, elem)?;
            }
        }
        Ok(())
    };
    if n > 1 {
        // Every member must have entered (finished with its dest of the last call)
        // before this PE writes into it.
        s.enter_all()?;
    }
    send(s, me)?;
    for d in 1..n {
        let j = (me + d) % n;
        if dst == 1 && sst == 1 {
            s.push_arrive(j, dest + me * nelems * elem, src + j * nelems * elem, nelems * elem)?;
        } else {
            send(s, j)?;
            s.fence(j)?;
            s.arrive(j)?;
        }
    }
    if n > 1 {
        s.wait_arrivals(n as u64 - 1)?;
    }
    Ok(())
}
