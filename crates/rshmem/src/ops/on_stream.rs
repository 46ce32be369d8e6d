//! The stream-ordered host API: puts, signals, waits, quiet and barriers enqueued on a
//! CUDA stream, so they order with the kernels around them and can be captured into a
//! CUDA graph (copies and memory operations are capturable stream work).

use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::gpu::cuda::Stream;
use crate::gpu::KernelArg;
use crate::ops::signal::SignalOp;
use crate::runtime::teams::Team;
use crate::sym::Sym;
use crate::types::{Cmp, SymType};

impl Ctx {
    /// This PE's GPU, or an error naming `call` on a CPU PE.
    pub(crate) fn gpu_or_err(&self, call: &'static str) -> Result<&std::sync::Arc<crate::gpu::Gpu>> {
        self.gpu().ok_or(Error::Unsupported { call, detail: "this PE has no GPU heap (stream-ordered calls need GPU PEs)".into() })
    }

    /// Enqueues on `stream` a copy of `nelems` elements from this PE's `src[src_index..]`
    /// to `dest[dest_index..]` on `pe` (copy engine, through the peer mapping: `pe` must be
    /// mapped, see [`Ctx::engine_reaches`]; [`Ctx::get_on_stream`] is the other direction).
    pub fn put_on_stream<T: SymType>(
        &self,
        dest: &Sym<T>,
        dest_index: usize,
        src: &Sym<T>,
        src_index: usize,
        nelems: usize,
        pe: usize,
        stream: &Stream,
    ) -> Result<()> {
        self.copy_engine_on_stream("put_on_stream", true, (dest, dest_index), (src, src_index), nelems, pe, stream)
    }

    /// Enqueues on `stream` a copy of `bytes` bytes from `source`, any memory of this
    /// process the device reaches (symmetric, `cudaMalloc`ed, registered or pinned host
    /// memory), to the symmetric address `dest` on `pe` (copy engine, peer mapping).
    pub fn putmem_on_stream(&self, dest: usize, source: u64, bytes: usize, pe: usize, stream: &Stream) -> Result<()> {
        const CALL: &str = "putmem_on_stream";
        let g = self.gpu_or_err(CALL)?;
        self.remote(CALL, "dest", dest, bytes, pe)?;
        self.check_copy_engine(CALL, pe)?;
        if bytes == 0 {
            return Ok(());
        }
        g.cuda.bind()?;
        g.cuda.copy_async(g.peer_address(dest as u64, pe), source, bytes, stream)
    }

    /// Enqueues on `stream` a copy of `bytes` bytes from the symmetric address `source`
    /// on `pe` into `dest`, any memory of this process the device reaches.
    pub fn getmem_on_stream(&self, dest: u64, source: usize, bytes: usize, pe: usize, stream: &Stream) -> Result<()> {
        const CALL: &str = "getmem_on_stream";
        let g = self.gpu_or_err(CALL)?;
        self.remote(CALL, "source", source, bytes, pe)?;
        self.check_copy_engine(CALL, pe)?;
        if bytes == 0 {
            return Ok(());
        }
        g.cuda.bind()?;
        g.cuda.copy_async(dest, g.peer_address(source as u64, pe), bytes, stream)
    }

    /// Enqueues on `stream` a store of one element (`value`: its 1, 2, 4 or 8 bytes) at
    /// the symmetric address `dest` on `pe`: a device fill or a stream memory write,
    /// both capturable into a graph (the value travels in the enqueued operation).
    pub fn p_on_stream(&self, dest: usize, value: &[u8], pe: usize, stream: &Stream) -> Result<()> {
        const CALL: &str = "p_on_stream";
        let g = self.gpu_or_err(CALL)?;
        let width = value.len();
        self.remote_word(CALL, "dest", dest, width.max(1), "element", pe)?;
        self.check_copy_engine(CALL, pe)?;
        let at = g.peer_address(dest as u64, pe);
        g.cuda.bind()?;
        match *value {
            [a] => g.cuda.memset_async(at, u32::from(a), 1, 1, stream),
            [a, b] => g.cuda.memset_async(at, u32::from(u16::from_le_bytes([a, b])), 2, 1, stream),
            [a, b, c, d] => g.cuda.memset_async(at, u32::from_le_bytes([a, b, c, d]), 4, 1, stream),
            [a, b, c, d, e, f, h, i] => stream.write_value64(at, u64::from_le_bytes([a, b, c, d, e, f, h, i])),
            _ => Err(Error::InvalidArgument {
                call: CALL,
                arg: "value",
                detail: format!("{width} bytes: elements of 1, 2, 4 or 8 bytes"),
                pe: self.my_pe(),
            }),
        }
    }

    /// The symmetric allocation of `len` elements at `addr` of this PE's heap, for callers
    /// that hold addresses (the C ABI): an error naming `call` and `arg` unless the range
    /// lies in the symmetric heap.
    pub fn sym_at<T: SymType>(&self, call: &'static str, arg: &'static str, addr: usize, len: usize) -> Result<Sym<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| Error::InvalidArgument {
            call,
            arg,
            detail: format!("{len} elements of {} overflow", T::NAME),
            pe: self.my_pe(),
        })?;
        self.rt.heap.check_range(call, arg, addr, bytes.max(1), self.my_pe())?;
        Ok(Sym::new(self.rt.clone(), addr, len))
    }

    /// Enqueues on `stream` a signal update of `sig[index]` on `pe`: `Set` as a stream
    /// memory write through the peer mapping, `Add` as a one-thread atomic kernel.
    pub fn signal_on_stream(&self, sig: &Sym<u64>, index: usize, value: u64, op: SignalOp, pe: usize, stream: &Stream) -> Result<()> {
        const CALL: &str = "signal_on_stream";
        let g = self.gpu_or_err(CALL)?;
        let addr = sig.addr_of(index);
        self.remote_word(CALL, "sig_addr", addr, 8, "u64", pe)?;
        g.cuda.bind()?;
        match op {
            SignalOp::Set => stream.write_value64(g.peer_address(addr as u64, pe), value),
            SignalOp::Add => g.launch_builtin(
                "rshmemi_stream_signal",
                Some(stream),
                &[KernelArg::U64(addr as u64), KernelArg::U64(value), KernelArg::I32(1), KernelArg::I32(pe as i32)],
            ),
        }
    }

    /// Enqueues on `stream` a wait until `ivar[index] <cmp> value` (a stream memory
    /// operation for `Ge` and `Eq`, a one-thread kernel otherwise).
    pub fn wait_until_on_stream(&self, ivar: &Sym<u64>, index: usize, cmp: Cmp, value: u64, stream: &Stream) -> Result<()> {
        const CALL: &str = "wait_until_on_stream";
        let g = self.gpu_or_err(CALL)?;
        let addr = ivar.addr_of(index);
        self.remote_word(CALL, "ivar", addr, 8, "u64", self.my_pe())?;
        g.cuda.bind()?;
        match cmp {
            Cmp::Ge => stream.wait_value64(addr as u64, value, true),
            Cmp::Eq => stream.wait_value64(addr as u64, value, false),
            _ => g.launch_builtin(
                "rshmemi_stream_wait",
                Some(stream),
                &[KernelArg::U64(addr as u64), KernelArg::I32(cmp as i32), KernelArg::U64(value)],
            ),
        }
    }

    /// Enqueues on `stream` a system-wide fence: stream work before it is visible to
    /// every PE before stream work after it.
    pub fn quiet_on_stream(&self, stream: &Stream) -> Result<()> {
        let g = self.gpu_or_err("quiet_on_stream")?;
        g.launch_builtin("rshmemi_stream_quiet", Some(stream), &[])
    }

    /// Enqueues on `stream` a barrier over `team` (quiet included), run by the device.
    /// Every member must enqueue it.
    pub fn barrier_on_stream(&self, team: Team, stream: &Stream) -> Result<()> {
        const CALL: &str = "barrier_on_stream";
        let g = self.gpu_or_err(CALL)?;
        let t = self.team_info(CALL, team)?;
        g.launch_builtin("rshmemi_stream_barrier", Some(stream), &[KernelArg::I32(t.slot as i32)])
    }

    /// [`Ctx::barrier_on_stream`] over every PE.
    pub fn barrier_all_on_stream(&self, stream: &Stream) -> Result<()> {
        self.barrier_on_stream(Team::WORLD, stream)
    }

    /// The team handle kernels use (`rshmem_team_t`) for `team`.
    pub fn device_team(&self, team: Team) -> Result<i32> {
        Ok(self.team_info("device_team", team)?.slot as i32)
    }
}
