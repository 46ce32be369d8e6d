//! On-stream collectives on GPU heaps: the host enqueues one cooperative grid kernel per
//! collective (every block of the grid works on it; see `device/rshmem_device_coll.cuh`),
//! ordered with the stream's other work and capturable in a CUDA graph. Reductions add
//! contributions in team-rank order, so every PE gets bit-identical results.

use super::cuda::Stream;
use super::KernelArg as A;
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::sym::Sym;
use crate::team::Team;
use crate::types::{ReduceOp, SymType};

/// Element types the device reductions take (the code is the kernels' type tag).
pub trait DeviceReduceType: SymType {
    /// Type tag of `rshmemi_stream_reduce`.
    const CODE: i32;
    /// Whether AND, OR and XOR apply.
    const BITWISE: bool;
}

macro_rules! device_reduce {
    ($($t:ty => $code:expr, $bits:expr);*) => { $(impl DeviceReduceType for $t { const CODE: i32 = $code; const BITWISE: bool = $bits; })* };
}
device_reduce!(f32 => 0, false; f64 => 1, false; half::f16 => 2, false; half::bf16 => 3, false; i32 => 4, true; i64 => 5, true; u32 => 6, true; u64 => 7, true);

fn op_code(op: ReduceOp) -> i32 {
    match op {
        ReduceOp::Sum => 0,
        ReduceOp::Prod => 1,
        ReduceOp::Min => 2,
        ReduceOp::Max => 3,
        ReduceOp::And => 4,
        ReduceOp::Or => 5,
        ReduceOp::Xor => 6,
    }
}

impl Ctx {
    fn stream_coll_check<T: SymType>(
        &self,
        call: &'static str,
        team: Team,
        arrays: &[(&Sym<T>, &'static str, usize)],
    ) -> Result<(i32, usize)> {
        let t = self.team_info(call, team)?;
        if self.gpu().is_none() {
            return Err(Error::Unsupported { call, detail: "on-stream collectives need GPU PEs".into() });
        }
        for (s, arg, need) in arrays {
            if s.len() < *need {
                return Err(Error::InvalidArgument {
                    call,
                    arg,
                    detail: format!("has {} elements, the collective needs {need}", s.len()),
                    pe: self.my_pe(),
                });
            }
        }
        Ok((t.slot as i32, t.size))
    }

    /// Enqueues an all-reduce of `nelems` elements over `team` on `stream`: every member's
    /// `dest` receives `op` over all members' `source` (OpenSHMEM `reduce`).
    pub fn reduce_on_stream<T: DeviceReduceType>(
        &self,
        team: Team,
        dest: &Sym<T>,
        source: &Sym<T>,
        nelems: usize,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        self.stream_reduce("reduce_on_stream", 0, team, dest, source, nelems, op, stream)
    }

    /// Enqueues a reduce-scatter: member `i`'s `dest[..nelems]` receives `op` over all
    /// members' `source[i * nelems..(i + 1) * nelems]`.
    pub fn reduce_scatter_on_stream<T: DeviceReduceType>(
        &self,
        team: Team,
        dest: &Sym<T>,
        source: &Sym<T>,
        nelems: usize,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        self.stream_reduce("reduce_scatter_on_stream", 1, team, dest, source, nelems, op, stream)
    }

    /// The engine of both: `kind` 0 is an all-reduce, 1 a reduce-scatter.
    fn stream_reduce<T: DeviceReduceType>(
        &self,
        call: &'static str,
        kind: i32,
        team: Team,
        dest: &Sym<T>,
        source: &Sym<T>,
        nelems: usize,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        if op.is_bitwise() && !T::BITWISE {
            return Err(Error::InvalidArgument {
                call,
                arg: "op",
                detail: format!("{} is not defined for {}", op.name(), T::NAME),
                pe: self.my_pe(),
            });
        }
        let blocks = if kind == 0 { 1 } else { self.team_n_pes(team)? };
        let (slot, _) = self.stream_coll_check(call, team, &[(dest, "dest", nelems), (source, "source", nelems * blocks)])?;
        let args = [
            A::I32(slot),
            A::U64(dest.addr() as u64),
            A::U64(source.addr() as u64),
            A::U64(nelems as u64),
            A::I32(T::CODE),
            A::I32(op_code(op)),
            A::I32(kind),
        ];
        self.gpu().expect("checked").launch_coll_builtin("rshmemi_stream_reduce", stream, &args)
    }

    /// Enqueues a broadcast of `nelems` elements from member `root`'s `source` into every
    /// member's `dest`.
    pub fn broadcast_on_stream<T: SymType>(
        &self,
        team: Team,
        dest: &Sym<T>,
        source: &Sym<T>,
        nelems: usize,
        root: usize,
        stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "broadcast_on_stream";
        let (slot, size) = self.stream_coll_check(CALL, team, &[(dest, "dest", nelems), (source, "source", nelems)])?;
        if root >= size {
            return Err(Error::PeOutOfRange {
                call: CALL,
                arg: "root",
                pe: root as i64,
                n_pes: size,
                team: crate::error::TeamNote(Some(team.raw())),
            });
        }
        let bytes = (nelems * std::mem::size_of::<T>()) as u64;
        let args = [A::I32(slot), A::U64(dest.addr() as u64), A::U64(source.addr() as u64), A::U64(bytes), A::I32(root as i32)];
        self.gpu().expect("checked").launch_coll_builtin("rshmemi_stream_broadcast", stream, &args)
    }

    /// Enqueues an fcollect: every member's `dest` receives all members' `source`
    /// (`nelems` each), in team order.
    pub fn fcollect_on_stream<T: SymType>(&self, team: Team, dest: &Sym<T>, source: &Sym<T>, nelems: usize, stream: &Stream) -> Result<()> {
        const CALL: &str = "fcollect_on_stream";
        let size = self.team_n_pes(team)?;
        let (slot, _) = self.stream_coll_check(CALL, team, &[(dest, "dest", nelems * size), (source, "source", nelems)])?;
        let bytes = (nelems * std::mem::size_of::<T>()) as u64;
        let args = [A::I32(slot), A::U64(dest.addr() as u64), A::U64(source.addr() as u64), A::U64(bytes)];
        self.gpu().expect("checked").launch_coll_builtin("rshmemi_stream_fcollect", stream, &args)
    }

    /// Enqueues an all-to-all: member `i`'s block `j` of `source` lands in member `j`'s
    /// block `i` of `dest` (`nelems` per block).
    pub fn alltoall_on_stream<T: SymType>(&self, team: Team, dest: &Sym<T>, source: &Sym<T>, nelems: usize, stream: &Stream) -> Result<()> {
        const CALL: &str = "alltoall_on_stream";
        let size = self.team_n_pes(team)?;
        let (slot, _) = self.stream_coll_check(CALL, team, &[(dest, "dest", nelems * size), (source, "source", nelems * size)])?;
        let bytes = (nelems * std::mem::size_of::<T>()) as u64;
        let args = [A::I32(slot), A::U64(dest.addr() as u64), A::U64(source.addr() as u64), A::U64(bytes)];
        self.gpu().expect("checked").launch_coll_builtin("rshmemi_stream_alltoall", stream, &args)
    }
}
