//! The user heap in GPU memory: one device address reservation holding every local
//! peer's heap one `stride` apart, filled with CUDA VMM allocations that each PE creates,
//! exports as a file descriptor, and passes to its peers over the bootstrap, which map
//! them at the same offset of their own reservation.

use super::cuda::{Cuda, DevPtr};
use crate::bootstrap::Bootstrap;
use crate::error::Result;
use crate::heap::{align_up, DeviceMemory};
use cudarc::driver::sys::CUmemGenericAllocationHandle;
use std::sync::{Arc, Mutex};

/// Device-side user heaps of every local PE, as mapped in this process.
#[derive(Debug)]
pub struct DeviceHeap {
    cuda: Arc<Cuda>,
    va: DevPtr,
    stride: usize,
    n_pes: usize,
    my_pe: usize,
    granularity: usize,
    mapped: Mutex<Vec<(DevPtr, usize, CUmemGenericAllocationHandle)>>,
    /// Whether each PE's heap is mapped here (peers of this host).
    peers: Vec<bool>,
}

impl DeviceHeap {
    /// Reserves device address space for `n_pes` heaps of up to `max_user` bytes; the
    /// heaps of the PEs marked in `peers` are mapped as they grow.
    pub fn new(cuda: Arc<Cuda>, n_pes: usize, my_pe: usize, max_user: usize, peers: Vec<bool>) -> Result<DeviceHeap> {
        let granularity = cuda.granularity()?;
        let stride = align_up(max_user, granularity);
        let va = cuda.reserve(stride * n_pes, granularity)?;
        Ok(DeviceHeap { cuda, va, stride, n_pes, my_pe, granularity, mapped: Mutex::new(Vec::new()), peers })
    }

    /// Device address (in this process) of `pe`'s heap.
    pub fn base(&self, pe: usize) -> DevPtr {
        self.va + (pe * self.stride) as DevPtr
    }

    /// Distance between consecutive PEs' heaps.
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// The CUDA context.
    pub fn cuda(&self) -> &Arc<Cuda> {
        &self.cuda
    }

    /// Collectively maps `len` more bytes at heap offset `offset` on every PE.
    pub fn add(&self, boot: &mut dyn Bootstrap, offset: usize, len: usize) -> Result<()> {
        let len = align_up(len, self.granularity);
        self.cuda.bind()?;
        let (handle, fd) = self.cuda.create_exportable(len)?;
        let mine = self.base(self.my_pe) + offset as DevPtr;
        self.cuda.map(mine, len, handle)?;
        self.cuda.zero(mine, len)?;
        let mut mapped = self.mapped.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        mapped.push((mine, len, handle));
        let fds = boot.allgather_fd_from(rustix::fd::AsFd::as_fd(&fd), &self.peers)?;
        for (pe, peer_fd) in fds.iter().enumerate() {
            let Some(peer_fd) = peer_fd.as_ref().filter(|_| pe != self.my_pe) else { continue };
            let h = self.cuda.import(peer_fd)?;
            let at = self.base(pe) + offset as DevPtr;
            self.cuda.map(at, len, h)?;
            mapped.push((at, len, h));
        }
        tracing::debug!(pe = self.my_pe, offset, len, "device heap segment mapped on {} PEs", self.peers.iter().filter(|&&m| m).count());
        Ok(())
    }
}

impl DeviceMemory for DeviceHeap {
    fn commit(&self, boot: &mut dyn Bootstrap, offset: usize, len: usize) -> Result<()> {
        self.add(boot, offset, len)
    }

    fn user_base(&self, pe: usize) -> usize {
        self.base(pe) as usize
    }
}

impl Drop for DeviceHeap {
    fn drop(&mut self) {
        let _ = self.cuda.bind();
        let _ = self.cuda.synchronize();
        for (va, len, h) in self.mapped.lock().unwrap_or_else(std::sync::PoisonError::into_inner).drain(..) {
            self.cuda.unmap(va, len, h);
        }
        self.cuda.unreserve(self.va, self.stride * self.n_pes);
    }
}
