//! On-stream collectives on GPU heaps: the host enqueues one cooperative grid kernel per
//! collective (every block of the grid works on it; see `device/rshmem_device_coll.cuh`),
//! ordered with the stream's other work and capturable in a CUDA graph. Reductions add
//! contributions in team-rank order, so every PE gets bit-identical results.
//!
//! Each call gets its number on the team at enqueue time (a host counter per team slot),
//! and the protocol from the decision tree (`coll::gpu_select`), both passed to the kernel.
//! So calls on one team need no barrier between them, and calls on different streams may
//! run at the same time (up to `RSHMEM_GPU_COLL_SETS` of them), as long as every PE
//! enqueues the team's collectives in the same order. Calls captured into a CUDA graph
//! instead take their number from the team's device counter when they run (as device-scope
//! calls do), so every replay is a new call: replay a graph on every PE the same number
//! of times, and do not let a replay overlap other collectives on the same team.

use super::gpu_select::{self, GpuProto, GpuScope};
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::gpu::cuda::Stream;
use crate::gpu::KernelArg as A;
use crate::runtime::teams::Team;
use crate::sym::Sym;
use crate::types::{ReduceOp, SymType};
use std::sync::atomic::Ordering;

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

/// What an on-stream call needs after its checks.
struct StreamCall {
    slot: i32,
    size: usize,
    /// Some member is reached only through the proxy.
    remote: bool,
}

impl Ctx {
    /// Forces the protocol of this PE's later on-stream collectives (`GpuProto::Auto`:
    /// `RSHMEM_GPU_COLL_PROTO`, else the decision tree). Every PE of a team must make
    /// the same choice before the team's next call. Device-scope calls take their
    /// protocol as an argument (`RSHMEMX_PROTO_*`) or from `RSHMEM_GPU_COLL_PROTO`.
    pub fn set_gpu_coll_proto(&self, proto: GpuProto) -> Result<()> {
        let g = self.gpu().ok_or(Error::Unsupported { call: "set_gpu_coll_proto", detail: "GPU collectives need GPU PEs".into() })?;
        g.coll_proto.store(proto.code(), Ordering::Relaxed);
        Ok(())
    }

    /// The protocol an on-stream collective moving `bytes` per pair of PEs on `team`
    /// uses now (what the decision tree and any forcing give).
    pub fn gpu_coll_proto(&self, team: Team, bytes: usize) -> Result<GpuProto> {
        const CALL: &str = "gpu_coll_proto";
        let t = self.team_info(CALL, team)?;
        let g = self.gpu().ok_or(Error::Unsupported { call: CALL, detail: "GPU collectives need GPU PEs".into() })?;
        let has_sets = t.slot < g.coll_host_seq.lock().unwrap_or_else(|p| p.into_inner()).len();
        Ok(self.stream_proto(g, has_sets, t.size, self.team_remote(&t), bytes))
    }

    /// Whether the device API reaches some member of `t` through the host proxy (another
    /// host, or every peer under `RSHMEM_TRANSPORT=ucx`), which makes its collectives take
    /// the proxy protocol (the device's `rshmemi_proxied` answers the same).
    fn team_remote(&self, t: &crate::runtime::teams::TeamInfo) -> bool {
        self.rt.proxy.as_ref().is_some_and(|p| (0..t.size).any(|i| p.serves(t.world_pe(i))))
    }

    fn stream_proto(&self, g: &crate::gpu::Gpu, has_sets: bool, size: usize, remote: bool, bytes: usize) -> GpuProto {
        let mut forced = GpuProto::from_code(g.coll_proto.load(Ordering::Relaxed));
        if forced == GpuProto::Auto {
            // RSHMEM_GPU_COLL_PROTO (the device state carries the same).
            forced = self.rt.config.gpu_coll_proto;
        }
        gpu_select::gpu_proto(bytes, size, has_sets, remote, GpuScope::Warps, forced)
    }

    fn stream_coll_check<T: SymType>(
        &self,
        call: &'static str,
        team: Team,
        arrays: &[(&Sym<T>, &'static str, usize)],
    ) -> Result<StreamCall> {
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
        Ok(StreamCall { slot: t.slot as i32, size: t.size, remote: self.team_remote(&t) })
    }

    /// A team of one PE: every on-stream collective is then a copy of `bytes` from
    /// `source` to `dest` (nothing when they are the same array), which a plain copy
    /// kernel does without the collective's protocol (as NCCL copies for a communicator of
    /// one rank). Returns whether it did; overlapping arrays that are not the same go to
    /// the collective kernel.
    fn one_member_copy(&self, c: &StreamCall, dest: usize, source: usize, bytes: usize, stream: &Stream) -> Result<bool> {
        if c.size != 1 || c.remote {
            return Ok(false);
        }
        if bytes == 0 || dest == source {
            return Ok(true);
        }
        if dest < source + bytes && source < dest + bytes {
            return Ok(false);
        }
        let g = self.gpu().expect("checked");
        g.stream_copy(dest as u64, source as u64, bytes, stream)?;
        Ok(true)
    }

    /// Numbers the call, picks its protocol and launches `kernel` with `args` followed
    /// by (proto, seq). `all_reduce`: the call is an all-reduce (whose simple form may
    /// split the block among the members: each PE's grid then works on its share).
    fn stream_launch(&self, kernel: &str, c: &StreamCall, bytes: usize, all_reduce: bool, stream: &Stream, args: &[A]) -> Result<()> {
        let g = self.gpu().expect("checked");
        let slot = c.slot as usize;
        // Teams without synchronization sets are numbered 0: the kernel then uses the team
        // barrier. Calls captured into a graph are numbered 0 too: each replay then takes
        // the team's device counter at run time (like a device-scope call), so replays
        // never reuse a number; they must not overlap other collectives on the team.
        let capturing = stream.is_capturing()?;
        let (proto, seq) = {
            let mut seqs = g.coll_host_seq.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let proto = self.stream_proto(g, slot < seqs.len(), c.size, c.remote, bytes);
            let seq = match seqs.get_mut(slot) {
                Some(s) if !capturing => {
                    *s += 1;
                    *s
                }
                _ => 0,
            };
            (proto, seq)
        };
        // Every on-stream dest is symmetric (a `Sym`).
        let work = if all_reduce && proto == GpuProto::Simple && gpu_select::simple_reduce_splits(c.size, g.one_device(), true) {
            bytes.div_ceil(c.size)
        } else {
            bytes
        };
        let blocks = gpu_select::stream_blocks(proto, work, crate::gpu::COLL_THREADS, g.grid_blocks()?);
        let mut all = args.to_vec();
        all.push(A::I32(proto.code()));
        all.push(A::U64(seq));
        // Grid barriers (simple protocol, device numbering) need every block resident: a
        // cooperative launch. LL and LL128 blocks work independently.
        let cooperative = seq == 0 || proto == GpuProto::Simple;
        g.launch_coll_builtin(kernel, stream, blocks, cooperative, &all)
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
    #[allow(clippy::too_many_arguments)]
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
        let c = self.stream_coll_check(call, team, &[(dest, "dest", nelems), (source, "source", nelems * blocks)])?;
        if self.one_member_copy(&c, dest.addr(), source.addr(), nelems * std::mem::size_of::<T>(), stream)? {
            return Ok(());
        }
        let args = [
            A::I32(c.slot),
            A::U64(dest.addr() as u64),
            A::U64(source.addr() as u64),
            A::U64(nelems as u64),
            A::I32(T::CODE),
            A::I32(op_code(op)),
            A::I32(kind),
        ];
        self.stream_launch("rshmemi_stream_reduce", &c, nelems * std::mem::size_of::<T>(), kind == 0, stream, &args)
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
        let c = self.stream_coll_check(CALL, team, &[(dest, "dest", nelems), (source, "source", nelems)])?;
        if root >= c.size {
            return Err(Error::PeOutOfRange {
                call: CALL,
                arg: "root",
                pe: root as i64,
                n_pes: c.size,
                team: crate::error::TeamNote(Some(team.raw())),
            });
        }
        self.stream_move(0, &c, dest, source, nelems, root, stream)
    }

    /// Enqueues an fcollect: every member's `dest` receives all members' `source`
    /// (`nelems` each), in team order.
    pub fn fcollect_on_stream<T: SymType>(&self, team: Team, dest: &Sym<T>, source: &Sym<T>, nelems: usize, stream: &Stream) -> Result<()> {
        const CALL: &str = "fcollect_on_stream";
        let size = self.team_n_pes(team)?;
        let c = self.stream_coll_check(CALL, team, &[(dest, "dest", nelems * size), (source, "source", nelems)])?;
        self.stream_move(1, &c, dest, source, nelems, 0, stream)
    }

    /// Enqueues an all-to-all: member `i`'s block `j` of `source` lands in member `j`'s
    /// block `i` of `dest` (`nelems` per block).
    pub fn alltoall_on_stream<T: SymType>(&self, team: Team, dest: &Sym<T>, source: &Sym<T>, nelems: usize, stream: &Stream) -> Result<()> {
        const CALL: &str = "alltoall_on_stream";
        let size = self.team_n_pes(team)?;
        let c = self.stream_coll_check(CALL, team, &[(dest, "dest", nelems * size), (source, "source", nelems * size)])?;
        self.stream_move(2, &c, dest, source, nelems, 0, stream)
    }

    /// Broadcast (0), fcollect (1) or all-to-all (2) of `nelems` per pair of PEs.
    #[allow(clippy::too_many_arguments)]
    fn stream_move<T: SymType>(
        &self,
        kind: i32,
        c: &StreamCall,
        dest: &Sym<T>,
        source: &Sym<T>,
        nelems: usize,
        root: usize,
        stream: &Stream,
    ) -> Result<()> {
        let bytes = nelems * std::mem::size_of::<T>();
        if self.one_member_copy(c, dest.addr(), source.addr(), bytes, stream)? {
            return Ok(());
        }
        let args = [
            A::I32(c.slot),
            A::U64(dest.addr() as u64),
            A::U64(source.addr() as u64),
            A::U64(bytes as u64),
            A::I32(kind),
            A::I32(root as i32),
        ];
        self.stream_launch("rshmemi_stream_move", c, bytes, false, stream, &args)
    }
}
