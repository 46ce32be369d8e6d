//! The host API on GPU heaps: the transport for mapped peers whose user heap is in GPU
//! memory. Runtime-area offsets (host shared memory) go to the local transport; user-heap
//! offsets are copied with the copy engine, and atomics run as a one-thread kernel.

use super::local::LocalTransport;
use super::{notify, AmoOp, Caps, Transport};
use crate::error::Result;
use crate::gpu::cuda::DevPtr;
use crate::gpu::Gpu;
use crate::heap::words::WatchedWord;
use std::sync::Arc;

/// Transport for mapped peers whose user heap is device memory.
#[derive(Debug)]
pub struct DeviceTransport {
    host: LocalTransport,
    host_bases: Vec<usize>,
    gpu: Arc<Gpu>,
    sys_size: usize,
}

impl DeviceTransport {
    /// Wraps the runtime-area transport.
    pub fn new(host: LocalTransport, host_bases: Vec<usize>, gpu: Arc<Gpu>, sys_size: usize) -> DeviceTransport {
        DeviceTransport { host, host_bases, gpu, sys_size }
    }

    fn dev(&self, pe: usize, offset: usize) -> Option<DevPtr> {
        (offset >= self.sys_size).then(|| self.gpu.heap.base(pe) + (offset - self.sys_size) as DevPtr)
    }
}

impl Transport for DeviceTransport {
    fn name(&self) -> &'static str {
        "local+cuda"
    }

    fn caps(&self) -> Caps {
        // Device memory is not host-addressable: peers are reached by copies, not pointers.
        Caps { mapped: false }
    }

    fn put(&self, pe: usize, offset: usize, src: &[u8]) -> Result<()> {
        match self.dev(pe, offset) {
            None => self.host.put(pe, offset, src),
            Some(d) => {
                self.gpu.cuda.bind()?;
                self.gpu.cuda.htod(d, src)?;
                notify::wake(self.host_bases[pe]);
                Ok(())
            }
        }
    }

    fn put_gather(&self, pe: usize, pieces: &[(usize, &[u8])]) -> Result<()> {
        let dev: Option<Vec<(DevPtr, &[u8])>> = pieces.iter().map(|&(offset, b)| self.dev(pe, offset).map(|d| (d, b))).collect();
        let Some(dev) = dev else {
            // Some piece lies in the host part of the heap: one at a time, in order.
            return pieces.iter().try_for_each(|&(offset, b)| self.put(pe, offset, b));
        };
        self.gpu.cuda.bind()?;
        self.gpu.cuda.htod_many(&dev)?;
        notify::wake(self.host_bases[pe]);
        Ok(())
    }

    fn get(&self, pe: usize, offset: usize, dst: &mut [u8]) -> Result<()> {
        match self.dev(pe, offset) {
            None => self.host.get(pe, offset, dst),
            Some(d) => {
                self.gpu.cuda.bind()?;
                self.gpu.cuda.dtoh(dst, d)
            }
        }
    }

    fn store_word(&self, pe: usize, offset: usize, width: usize, value: u64) -> Result<()> {
        match self.dev(pe, offset) {
            None => self.host.store_word(pe, offset, width, value),
            Some(_) => self.put(pe, offset, &value.to_le_bytes()[..width]),
        }
    }

    fn load_word(&self, pe: usize, offset: usize, width: usize) -> Result<u64> {
        match self.dev(pe, offset) {
            None => self.host.load_word(pe, offset, width),
            Some(_) => {
                let mut b = [0u8; 8];
                self.get(pe, offset, &mut b[..width])?;
                Ok(u64::from_le_bytes(b))
            }
        }
    }

    fn amo(&self, pe: usize, offset: usize, width: usize, op: AmoOp, operand: u64, compare: u64) -> Result<u64> {
        match self.dev(pe, offset) {
            None => self.host.amo(pe, offset, width, op, operand, compare),
            Some(_) if width < 4 && op == AmoOp::Fetch => self.load_word(pe, offset, width),
            Some(_) if width < 4 && op == AmoOp::Set => {
                // The GPU's atomics are 4 and 8 bytes wide: a word of 1 or 2 bytes (p and g
                // of small types through the staged protocol) is read or written by a copy,
                // one access of so few bytes. Set's old value is not asked for.
                self.store_word(pe, offset, width, operand).map(|_| 0)
            }
            Some(d) => {
                let r = self.gpu.host_amo(d, width, op.code() as i32, operand, compare);
                notify::wake(self.host_bases[pe]);
                r
            }
        }
    }

    fn fence(&self) -> Result<()> {
        self.host.fence()
    }

    fn quiet(&self, pe: Option<usize>) -> Result<()> {
        self.host.quiet(pe)
    }

    fn device_address(&self, pe: usize, offset: usize) -> Option<u64> {
        self.dev(pe, offset)
    }

    fn watched_word(&self, pe: usize, offset: usize, width: usize) -> Option<WatchedWord> {
        // Host-memory parts only: a GPU word is read with a copy (`load_word`).
        match self.dev(pe, offset) {
            None => self.host.watched_word(pe, offset, width),
            Some(_) => None,
        }
    }

    fn direct_address(&self, pe: usize, offset: usize) -> Option<usize> {
        // Device memory is not host-addressable; kernels use `Gpu::device_ptr`.
        match self.dev(pe, offset) {
            None => self.host.direct_address(pe, offset),
            Some(_) => None,
        }
    }
}
