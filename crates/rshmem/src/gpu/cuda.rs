//! The CUDA driver glue: every raw driver call rshmem makes lives here, each returning a
//! `Result`. Built on cudarc's `driver::sys` (dynamically loaded), because its safe
//! layer lacks virtual memory management and handle export.

use crate::error::{Error, Result};
use cudarc::driver::sys;
use rustix::fd::{FromRawFd, OwnedFd};
use std::ffi::{c_void, CString};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// A device address.
pub type DevPtr = u64;

/// A module's driver handle (`CUmodule`).
pub type Module = sys::CUmodule;

/// A kernel's driver handle (`CUfunction`, what cudart calls `cudaFunction_t`).
pub type Function = sys::CUfunction;

fn check(r: sys::CUresult, call: &'static str, pe: usize) -> Result<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::Cuda { call, source: cudarc::driver::DriverError(r), pe })
    }
}

/// Whether the CUDA driver library can be loaded on this machine.
pub fn driver_present() -> bool {
    // SAFETY: is_culib_present only tries to dlopen libcuda and reports the outcome.
    unsafe { sys::is_culib_present() }
}

/// Number of CUDA devices (0 when the driver is missing or fails to initialize).
pub fn device_count() -> usize {
    if !driver_present() {
        return 0;
    }
    crate::config::prepare_cuda_environment();
    // SAFETY: cuInit and cuDeviceGetCount take plain values / an out pointer to a local.
    unsafe {
        if sys::cuInit(0) != sys::CUresult::CUDA_SUCCESS {
            return 0;
        }
        let mut n = 0i32;
        if sys::cuDeviceGetCount(&mut n) != sys::CUresult::CUDA_SUCCESS {
            return 0;
        }
        n.max(0) as usize
    }
}

/// The device of the context current on the calling thread, if any: a program that
/// called `cudaSetDevice` (or made a context current) before rshmem's GPU init has one.
/// Also says whether that context is the device's primary context (the one cudart uses
/// and rshmem works in).
pub fn current_device() -> Option<(usize, bool)> {
    if !driver_present() {
        return None;
    }
    crate::config::prepare_cuda_environment();
    // SAFETY: out pointers to locals; a null current context is reported as None.
    unsafe {
        if sys::cuInit(0) != sys::CUresult::CUDA_SUCCESS {
            return None;
        }
        let mut ctx = std::ptr::null_mut();
        if sys::cuCtxGetCurrent(&mut ctx) != sys::CUresult::CUDA_SUCCESS || ctx.is_null() {
            return None;
        }
        let mut dev = 0;
        if sys::cuCtxGetDevice(&mut dev) != sys::CUresult::CUDA_SUCCESS {
            return None;
        }
        let (mut flags, mut active) = (0u32, 0i32);
        let primary = sys::cuDevicePrimaryCtxGetState(dev, &mut flags, &mut active) == sys::CUresult::CUDA_SUCCESS && active != 0 && {
            let mut p = std::ptr::null_mut();
            let same = sys::cuDevicePrimaryCtxRetain(&mut p, dev) == sys::CUresult::CUDA_SUCCESS && p == ctx;
            if !p.is_null() {
                let _ = sys::cuDevicePrimaryCtxRelease_v2(dev);
            }
            same
        };
        Some((dev.max(0) as usize, primary))
    }
}

/// One PE's CUDA device and primary context.
#[derive(Debug)]
pub struct Cuda {
    /// Device ordinal.
    pub ordinal: usize,
    device: sys::CUdevice,
    ctx: sys::CUcontext,
    pe: usize,
    /// The runtime's own stream for host<->device copies. The synchronous copy calls go
    /// through the legacy stream and, from pageable memory, may return before the data
    /// lands or wait for the whole context; copies on this stream, then a sync of it,
    /// are complete on return and independent of the user's streams.
    copy: sys::CUstream,
    /// The streams this PE created (raw handles), which [`Cuda::synchronize`] waits for;
    /// a [`Stream`] leaves the list when it is destroyed.
    streams: Arc<Mutex<Vec<usize>>>,
    /// PEs of this process on this device, this one included (see [`Cuda::synchronize`]).
    sharers: AtomicUsize,
    /// The multiprocessor count, read once (every collective launch asks for it).
    sms: std::sync::OnceLock<usize>,
    /// Whether the driver has `cuMemcpyBatchAsync_v2` (CUDA 13), through which
    /// [`Cuda::copy_engine_async`] asks for a copy engine.
    /// Cleared when the driver refuses such a copy (it then gets the plain one).
    batch_copy: std::sync::atomic::AtomicBool,
    /// Whether [`Cuda::launch_overlapped`] may use programmatic dependent launch: a device of
    /// compute capability 9.0 or newer, `RSHMEM_GPU_OVERLAP_LAUNCH` not 0
    /// ([`Cuda::set_overlap_launch`]); cleared when the driver refuses such a launch.
    overlap_launch: std::sync::atomic::AtomicBool,
}

// SAFETY: a CUDA context handle may be used from any thread once made current there,
// which `bind` does before every use.
unsafe impl Send for Cuda {}
// SAFETY: as above; the driver serializes concurrent use of one context.
unsafe impl Sync for Cuda {}

impl Cuda {
    /// Opens device `ordinal`'s primary context.
    pub fn open(ordinal: usize, pe: usize) -> Result<Cuda> {
        let mut device = 0;
        let mut ctx = std::ptr::null_mut();
        crate::config::prepare_cuda_environment();
        // SAFETY: out pointers to locals; the ordinal is checked by the driver.
        unsafe {
            check(sys::cuInit(0), "cuInit", pe)?;
            check(sys::cuDeviceGet(&mut device, ordinal as i32), "cuDeviceGet", pe)?;
            check(sys::cuDevicePrimaryCtxRetain(&mut ctx, device), "cuDevicePrimaryCtxRetain", pe)?;
        }
        let mut copy = std::ptr::null_mut();
        // SAFETY: the context is current after cuDevicePrimaryCtxRetain + set below; out pointer.
        unsafe {
            check(sys::cuCtxSetCurrent(ctx), "cuCtxSetCurrent", pe)?;
            check(sys::cuStreamCreate(&mut copy, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32), "cuStreamCreate", pe)?;
        }
        let mut version = 0;
        // SAFETY: out pointer to a local.
        let batch_copy = unsafe { sys::cuDriverGetVersion(&mut version) } == sys::CUresult::CUDA_SUCCESS && version >= 13000;
        Ok(Cuda {
            ordinal,
            device,
            ctx,
            pe,
            copy,
            streams: Arc::default(),
            sharers: AtomicUsize::new(1),
            sms: std::sync::OnceLock::new(),
            batch_copy: std::sync::atomic::AtomicBool::new(batch_copy),
            overlap_launch: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Makes the context current on the calling thread.
    pub fn bind(&self) -> Result<()> {
        // Every launch binds: asking first (a thread-local read in the driver) skips the
        // set, which thread PEs sharing the context would otherwise make on every call.
        let mut cur = std::ptr::null_mut();
        // SAFETY: out pointer to a local.
        if unsafe { sys::cuCtxGetCurrent(&mut cur) } == sys::CUresult::CUDA_SUCCESS && cur == self.ctx {
            return Ok(());
        }
        // SAFETY: the context was retained in `open` and lives as long as self.
        check(unsafe { sys::cuCtxSetCurrent(self.ctx) }, "cuCtxSetCurrent", self.pe)
    }

    /// A device attribute.
    pub fn attribute(&self, a: sys::CUdevice_attribute) -> Result<i32> {
        let mut v = 0;
        // SAFETY: out pointer to a local.
        check(unsafe { sys::cuDeviceGetAttribute(&mut v, a, self.device) }, "cuDeviceGetAttribute", self.pe)?;
        Ok(v)
    }

    /// (major, minor) compute capability.
    pub fn compute_capability(&self) -> Result<(i32, i32)> {
        use sys::CUdevice_attribute::*;
        Ok((self.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?, self.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?))
    }

    /// Number of multiprocessors (asked of the driver once).
    pub fn sm_count(&self) -> Result<usize> {
        if let Some(&n) = self.sms.get() {
            return Ok(n);
        }
        let n = self.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as usize;
        Ok(*self.sms.get_or_init(|| n))
    }

    /// The device's UUID: the same GPU has the same one in every process, whatever its
    /// ordinal there.
    pub fn uuid(&self) -> Result<[u8; 16]> {
        let mut u = sys::CUuuid_st { bytes: [0; 16] };
        // SAFETY: out pointer to a local.
        check(unsafe { sys::cuDeviceGetUuid_v2(&mut u, self.device) }, "cuDeviceGetUuid_v2", self.pe)?;
        Ok(u.bytes.map(|b| b as u8))
    }

    /// The device's name.
    pub fn name(&self) -> Result<String> {
        let mut buf = [0 as std::ffi::c_char; 256];
        // SAFETY: the buffer is 256 bytes, as passed.
        check(unsafe { sys::cuDeviceGetName(buf.as_mut_ptr(), 256, self.device) }, "cuDeviceGetName", self.pe)?;
        // SAFETY: the driver wrote a NUL-terminated string into buf.
        Ok(unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
    }

    fn prop(&self) -> sys::CUmemAllocationProp {
        // SAFETY: an all-zero CUmemAllocationProp is a valid "no flags" value.
        let mut p: sys::CUmemAllocationProp = unsafe { MaybeUninit::zeroed().assume_init() };
        p.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        p.requestedHandleTypes = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        p.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        p.location.id = self.ordinal as i32;
        p
    }

    /// Allocation granularity for exportable device memory.
    pub fn granularity(&self) -> Result<usize> {
        let prop = self.prop();
        let mut g = 0usize;
        // SAFETY: prop is a valid property struct; out pointer to a local.
        check(
            unsafe {
                sys::cuMemGetAllocationGranularity(
                    &mut g,
                    &prop,
                    sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_RECOMMENDED,
                )
            },
            "cuMemGetAllocationGranularity",
            self.pe,
        )?;
        Ok(g.max(2 << 20))
    }

    /// Reserves `size` bytes of device virtual address space.
    pub fn reserve(&self, size: usize, align: usize) -> Result<DevPtr> {
        let mut va = 0;
        // SAFETY: out pointer to a local; no fixed address requested.
        check(unsafe { sys::cuMemAddressReserve(&mut va, size, align, 0, 0) }, "cuMemAddressReserve", self.pe)?;
        Ok(va)
    }

    /// Frees a reservation made by [`Cuda::reserve`].
    pub fn unreserve(&self, va: DevPtr, size: usize) {
        // SAFETY: the range was reserved by `reserve` and all mappings in it are gone.
        let _ = unsafe { sys::cuMemAddressFree(va, size) };
    }

    /// Creates `size` bytes of physical device memory and exports it as a file descriptor.
    pub fn create_exportable(&self, size: usize) -> Result<(sys::CUmemGenericAllocationHandle, OwnedFd)> {
        let prop = self.prop();
        let mut h = 0;
        let mut fd: i32 = -1;
        // SAFETY: prop is valid; out pointers to locals; the POSIX-fd export writes an int.
        unsafe {
            check(sys::cuMemCreate(&mut h, size, &prop, 0), "cuMemCreate", self.pe)?;
            check(
                sys::cuMemExportToShareableHandle(
                    &mut fd as *mut i32 as *mut c_void,
                    h,
                    sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                    0,
                ),
                "cuMemExportToShareableHandle",
                self.pe,
            )?;
        }
        // SAFETY: the driver returned a fresh descriptor that we now own.
        Ok((h, unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Imports physical memory another process exported.
    pub fn import(&self, fd: &OwnedFd) -> Result<sys::CUmemGenericAllocationHandle> {
        use rustix::fd::AsRawFd;
        let mut h = 0;
        // SAFETY: for POSIX descriptors the "OS handle" argument is the descriptor value.
        check(
            unsafe {
                sys::cuMemImportFromShareableHandle(
                    &mut h,
                    fd.as_raw_fd() as usize as *mut c_void,
                    sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                )
            },
            "cuMemImportFromShareableHandle",
            self.pe,
        )?;
        Ok(h)
    }

    /// Maps `handle` at `va` (inside a reservation) and grants this device read-write access.
    pub fn map(&self, va: DevPtr, size: usize, handle: sys::CUmemGenericAllocationHandle) -> Result<()> {
        let desc = sys::CUmemAccessDesc {
            location: sys::CUmemLocation { type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: self.ordinal as i32 },
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: va..va+size lies in a reservation of ours and is not yet mapped; desc is valid.
        unsafe {
            check(sys::cuMemMap(va, size, 0, handle, 0), "cuMemMap", self.pe)?;
            check(sys::cuMemSetAccess(va, size, &desc, 1), "cuMemSetAccess", self.pe)?;
        }
        Ok(())
    }

    /// Unmaps a range and releases its handle.
    pub fn unmap(&self, va: DevPtr, size: usize, handle: sys::CUmemGenericAllocationHandle) {
        // SAFETY: the range was mapped by `map` with this handle; no kernel uses it any more.
        unsafe {
            let _ = sys::cuMemUnmap(va, size);
            let _ = sys::cuMemRelease(handle);
        }
    }

    /// Waits for `stream` (the copy stream, or the legacy default stream).
    fn sync_stream(&self, stream: sys::CUstream) -> Result<()> {
        // SAFETY: the copy stream lives as long as self; the legacy stream always exists.
        check(unsafe { sys::cuStreamSynchronize(stream) }, "cuStreamSynchronize", self.pe)
    }

    fn sync_copy(&self) -> Result<()> {
        self.sync_stream(self.copy)
    }

    /// Copy host -> device on `stream`, complete on return.
    fn htod_on(&self, dst: DevPtr, src: &[u8], stream: sys::CUstream) -> Result<()> {
        if src.is_empty() {
            return Ok(());
        }
        // SAFETY: src is a valid slice that outlives the copy (we synchronize before
        // returning); dst is device memory (checked by the caller: the heap, or the driver
        // for user memory).
        check(unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src.as_ptr() as *const c_void, src.len(), stream) }, "cuMemcpyHtoDAsync", self.pe)?;
        self.sync_stream(stream)
    }

    /// Copy device -> host on `stream`, complete on return.
    fn dtoh_on(&self, dst: &mut [u8], src: DevPtr, stream: sys::CUstream) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        // SAFETY: dst is a valid mutable slice that outlives the copy (synchronized
        // below); src is device memory.
        check(unsafe { sys::cuMemcpyDtoHAsync_v2(dst.as_mut_ptr() as *mut c_void, src, dst.len(), stream) }, "cuMemcpyDtoHAsync", self.pe)?;
        self.sync_stream(stream)
    }

    /// Copy host -> device, complete on return (the runtime's copy stream: independent of
    /// the program's streams).
    pub fn htod(&self, dst: DevPtr, src: &[u8]) -> Result<()> {
        self.htod_on(dst, src, self.copy)
    }

    /// Copy device -> host, complete on return (the runtime's copy stream).
    pub fn dtoh(&self, dst: &mut [u8], src: DevPtr) -> Result<()> {
        self.dtoh_on(dst, src, self.copy)
    }

    /// Copies each `(device address, bytes)` host -> device, in order, on the runtime's copy
    /// stream with one synchronization at the end; complete on return.
    pub fn htod_many(&self, pieces: &[(DevPtr, &[u8])]) -> Result<()> {
        for &(dst, src) in pieces.iter().filter(|(_, b)| !b.is_empty()) {
            // SAFETY: each source slice outlives the copies (synchronized below, before the
            // borrow ends); each destination is device memory (the caller's contract, as for
            // `htod`).
            check(
                unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src.as_ptr() as *const c_void, src.len(), self.copy) },
                "cuMemcpyHtoDAsync",
                self.pe,
            )?;
        }
        self.sync_copy()
    }

    /// Starts a copy device -> host on `stream` and returns at once.
    ///
    /// # Safety
    /// Nobody may read, write or free `dst` until `stream` has passed the copy (a later
    /// synchronization of it, or an event recorded after the copy has fired).
    pub unsafe fn dtoh_async(&self, dst: &mut [u8], src: DevPtr, stream: &Stream) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        // SAFETY: dst is writable for its length and left alone until the stream passes the
        // copy (the caller's contract); src is device memory.
        check(
            unsafe { sys::cuMemcpyDtoHAsync_v2(dst.as_mut_ptr() as *mut c_void, src, dst.len(), stream.raw) },
            "cuMemcpyDtoHAsync",
            self.pe,
        )
    }

    /// Copy host -> the program's device memory as `cudaMemcpy` does it: on the legacy
    /// default stream, so after what the program queued there (an asynchronous
    /// `cudaMemset`, a kernel), complete on return.
    pub fn htod_in_order(&self, dst: DevPtr, src: &[u8]) -> Result<()> {
        self.htod_on(dst, src, std::ptr::null_mut())
    }

    /// Copy the program's device memory -> host as `cudaMemcpy` does it (see
    /// [`Cuda::htod_in_order`]).
    pub fn dtoh_in_order(&self, dst: &mut [u8], src: DevPtr) -> Result<()> {
        self.dtoh_on(dst, src, std::ptr::null_mut())
    }

    /// Copy device -> device (this context's memory or a mapped peer's) as `cudaMemcpy`
    /// does it: on the legacy default stream, complete on return.
    pub fn copy_in_order(&self, dst: DevPtr, src: DevPtr, n: usize) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        // SAFETY: both ranges are mapped device memory in this context's address space
        // (the caller's contract); the copy is complete before return.
        check(unsafe { sys::cuMemcpyDtoDAsync_v2(dst, src, n, std::ptr::null_mut()) }, "cuMemcpyDtoDAsync", self.pe)?;
        self.sync_stream(std::ptr::null_mut())
    }

    /// Sets `n` bytes of device memory to zero, complete on return.
    pub fn zero(&self, dst: DevPtr, n: usize) -> Result<()> {
        // SAFETY: dst..dst+n is mapped device memory.
        check(unsafe { sys::cuMemsetD8Async(dst, 0, n, self.copy) }, "cuMemsetD8Async", self.pe)?;
        self.sync_copy()
    }

    /// Asynchronous 2-D device-to-device (or peer-mapped) copy on a stream: `rows` rows of
    /// `width` bytes, row i from `src + i * src_pitch` to `dst + i * dst_pitch`.
    #[allow(clippy::too_many_arguments)]
    pub fn copy2d_async(
        &self,
        dst: DevPtr,
        dst_pitch: usize,
        src: DevPtr,
        src_pitch: usize,
        width: usize,
        rows: usize,
        stream: &Stream,
    ) -> Result<()> {
        // Every field spelled out: the memory-type enum has no zero value, so a zeroed
        // descriptor is not a valid value (Rust refuses `mem::zeroed` of it).
        let d = sys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            srcHost: std::ptr::null(),
            srcDevice: src,
            srcArray: std::ptr::null_mut(),
            srcPitch: src_pitch,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            dstHost: std::ptr::null_mut(),
            dstDevice: dst,
            dstArray: std::ptr::null_mut(),
            dstPitch: dst_pitch,
            WidthInBytes: width,
            Height: rows,
        };
        // SAFETY: both ranges are mapped device memory in this context's address space.
        check(unsafe { sys::cuMemcpy2DAsync_v2(&d, stream.raw) }, "cuMemcpy2DAsync", self.pe)
    }

    /// Asynchronous device-to-device (or peer-mapped) copy on a stream.
    pub fn copy_async(&self, dst: DevPtr, src: DevPtr, n: usize, stream: &Stream) -> Result<()> {
        // SAFETY: both ranges are mapped device memory in this context's address space.
        check(unsafe { sys::cuMemcpyDtoDAsync_v2(dst, src, n, stream.raw) }, "cuMemcpyDtoDAsync", self.pe)
    }

    /// [`Cuda::copy_async`] on a copy engine: a device-to-device `cuMemcpyAsync` whose two
    /// sides are on one GPU behaves as a copy on the SMs (on the H200 it moved 2087 GB/s
    /// alone and 696 GB/s beside a compute kernel on every SM), so this asks the driver for a DMA engine with
    /// `cuMemcpyBatchAsync` and `CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE` (source read in
    /// stream order). Drivers older than CUDA 13 get the plain copy, and so does every
    /// later copy once the driver refuses one (logged once).
    pub fn copy_engine_async(&self, dst: DevPtr, src: DevPtr, n: usize, stream: &Stream) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        if !self.batch_copy.load(Ordering::Relaxed) {
            return self.copy_async(dst, src, n, stream);
        }
        let here = sys::CUmemLocation { type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: self.ordinal as i32 };
        let mut attr = sys::CUmemcpyAttributes {
            srcAccessOrder: sys::CUmemcpySrcAccessOrder::CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
            srcLocHint: here,
            dstLocHint: here,
            flags: sys::CUmemcpyFlags::CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE as u32,
        };
        let (mut d, mut s, mut len, mut first) = (dst, src, n, 0usize);
        // SAFETY: both ranges are mapped device memory in this context's address space (the
        // caller's contract); the arrays are one-element locals the call only reads.
        let r = unsafe { sys::cuMemcpyBatchAsync_v2(&mut d, &mut s, &mut len, 1, &mut attr, &mut first, 1, stream.raw) };
        if r == sys::CUresult::CUDA_SUCCESS {
            return Ok(());
        }
        if self.batch_copy.swap(false, Ordering::Relaxed) {
            tracing::warn!(
                pe = self.pe,
                "cuMemcpyBatchAsync refused a copy-engine copy ({r:?}): copy-engine puts use cuMemcpyAsync from now on"
            );
        }
        self.copy_async(dst, src, n, stream)
    }

    /// Loads a module image (cubin or PTX).
    pub fn load_module(&self, image: &[u8]) -> Result<RawModule> {
        let mut m = std::ptr::null_mut();
        let mut owned = image.to_vec();
        if owned.last() != Some(&0) {
            owned.push(0);
        }
        // SAFETY: the image is a complete cubin/PTX (NUL-terminated for PTX); out pointer.
        check(unsafe { sys::cuModuleLoadData(&mut m, owned.as_ptr() as *const c_void) }, "cuModuleLoadData", self.pe)?;
        Ok(RawModule { raw: m })
    }

    /// A kernel of a module.
    pub fn function(&self, m: &RawModule, name: &str) -> Result<sys::CUfunction> {
        let c = CString::new(name).map_err(|_| Error::Gpu { call: "cuModuleGetFunction", detail: "NUL in name".into(), pe: self.pe })?;
        let mut f = std::ptr::null_mut();
        // SAFETY: module is loaded; name is NUL-terminated.
        check(unsafe { sys::cuModuleGetFunction(&mut f, m.raw, c.as_ptr()) }, "cuModuleGetFunction", self.pe).map_err(|e| Error::Gpu {
            call: "cuModuleGetFunction",
            detail: format!("kernel `{name}`: {e}"),
            pe: self.pe,
        })?;
        Ok(f)
    }

    /// Address and size of a module's global variable.
    pub fn global(&self, m: &RawModule, name: &str) -> Result<Option<(DevPtr, usize)>> {
        let Ok(c) = CString::new(name) else { return Ok(None) };
        let (mut p, mut n) = (0, 0);
        // SAFETY: module is loaded; name is NUL-terminated; out pointers to locals.
        let r = unsafe { sys::cuModuleGetGlobal_v2(&mut p, &mut n, m.raw, c.as_ptr()) };
        if r == sys::CUresult::CUDA_ERROR_NOT_FOUND {
            return Ok(None);
        }
        check(r, "cuModuleGetGlobal", self.pe)?;
        Ok(Some((p, n)))
    }

    /// Address and size of global `name` in a module the program loaded itself
    /// (`cuModuleLoad`), or None when it has none.
    ///
    /// # Safety
    /// `m` must be a live module of this PE's context.
    pub unsafe fn global_of_raw(&self, m: sys::CUmodule, name: &str) -> Result<Option<(DevPtr, usize)>> {
        // A RawModule never unloads its module: wrapping the program's is harmless.
        self.global(&RawModule { raw: m }, name)
    }

    /// How many blocks of kernel `f` (of `threads` threads, `shared` bytes of dynamic
    /// shared memory) fit on one multiprocessor at once.
    ///
    /// # Safety
    /// `f` must be a kernel handle of this PE's context.
    pub unsafe fn blocks_per_sm(&self, f: sys::CUfunction, threads: u32, shared: usize) -> Result<usize> {
        let mut n = 0i32;
        // SAFETY: f is a kernel handle of this context (the caller resolved it); out pointer.
        check(
            unsafe { sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, f, threads as i32, shared) },
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
            self.pe,
        )?;
        Ok(n.max(0) as usize)
    }

    /// Enqueues on `stream` a fill of `count` elements of `width` bytes (1, 2 or 4) at
    /// `dst` with `value` (stream-ordered and capturable).
    pub fn memset_async(&self, dst: DevPtr, value: u32, width: usize, count: usize, stream: &Stream) -> Result<()> {
        // SAFETY: dst..dst+count*width is mapped device memory (the caller checked); the
        // stream is live.
        let r = unsafe {
            match width {
                1 => sys::cuMemsetD8Async(dst, value as u8, count, stream.raw),
                2 => sys::cuMemsetD16Async(dst, value as u16, count, stream.raw),
                4 => sys::cuMemsetD32Async(dst, value, count, stream.raw),
                _ => return Err(Error::Gpu { call: "cuMemsetAsync", detail: format!("no fill of {width}-byte elements"), pe: self.pe }),
            }
        };
        check(r, "cuMemsetAsync", self.pe)
    }

    /// Whether `ptr` is device memory (or host memory the device maps) of this PE's
    /// context, as the driver knows it; false for plain host memory.
    pub fn is_device_pointer(&self, ptr: DevPtr) -> bool {
        let mut kind = 0u32;
        // SAFETY: out pointer to a local of the attribute's type (an unsigned int).
        let r = unsafe {
            sys::cuPointerGetAttribute(
                &mut kind as *mut u32 as *mut c_void,
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                ptr,
            )
        };
        r == sys::CUresult::CUDA_SUCCESS && kind == sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32
    }

    /// Launches a kernel. `params` are pointers to each argument's value.
    ///
    /// # Safety
    /// `params` must hold one pointer per kernel parameter, each to a live value of at
    /// least that parameter's size, and the kernel must only touch memory it may.
    pub unsafe fn launch(
        &self,
        f: sys::CUfunction,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared: u32,
        stream: &Stream,
        params: &mut [*mut c_void],
        cooperative: bool,
    ) -> Result<()> {
        // SAFETY: the caller upholds the contract above.
        unsafe { self.launch_raw(f, grid, block, shared, stream, params.as_mut_ptr(), cooperative) }
    }

    /// [`Cuda::launch`] with the parameter array as the driver takes it.
    ///
    /// # Safety
    /// As for [`Cuda::launch`]: `params` points to one pointer per kernel parameter.
    pub unsafe fn launch_raw(
        &self,
        f: sys::CUfunction,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared: u32,
        stream: &Stream,
        params: *mut *mut c_void,
        cooperative: bool,
    ) -> Result<()> {
        // SAFETY: the caller upholds the contract above; f is a kernel of a loaded module.
        let r = unsafe {
            if cooperative {
                sys::cuLaunchCooperativeKernel(f, grid.0, grid.1, grid.2, block.0, block.1, block.2, shared, stream.raw, params)
            } else {
                sys::cuLaunchKernel(f, grid.0, grid.1, grid.2, block.0, block.1, block.2, shared, stream.raw, params, std::ptr::null_mut())
            }
        };
        check(r, if cooperative { "cuLaunchCooperativeKernel" } else { "cuLaunchKernel" }, self.pe)
    }

    /// Allows (or forbids) [`Cuda::launch_overlapped`]'s programmatic dependent launch;
    /// it is allowed only on devices of compute capability 9.0 and newer.
    pub fn set_overlap_launch(&self, on: bool) -> Result<()> {
        let ok = on && self.compute_capability()?.0 >= 9;
        self.overlap_launch.store(ok, Ordering::Relaxed);
        Ok(())
    }

    /// Whether [`Cuda::launch_overlapped`] uses programmatic dependent launch.
    pub fn overlap_launch(&self) -> bool {
        self.overlap_launch.load(Ordering::Relaxed)
    }

    /// [`Cuda::launch`] (not cooperative) with programmatic dependent launch where allowed
    /// ([`Cuda::overlap_launch`]): the kernel may be scheduled while the stream's previous
    /// kernel still runs, which hides the launch latency of back-to-back calls. Where the
    /// driver refuses it, this and later launches are plain (logged once).
    ///
    /// # Safety
    /// As for [`Cuda::launch`], and the kernel's first statement is
    /// `rshmemi_stream_entry()` (device/rshmem_device.cuh): it waits there for the stream's
    /// previous kernel to complete, so that stream order holds.
    pub unsafe fn launch_overlapped(
        &self,
        f: sys::CUfunction,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared: u32,
        stream: &Stream,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        if self.overlap_launch() {
            // SAFETY: an all-zero launch attribute is a valid value of the C struct; the
            // fields set below are the programmatic-serialization attribute and its value.
            let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
            attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            attr.value.programmaticStreamSerializationAllowed = 1;
            let cfg = sys::CUlaunchConfig {
                gridDimX: grid.0,
                gridDimY: grid.1,
                gridDimZ: grid.2,
                blockDimX: block.0,
                blockDimY: block.1,
                blockDimZ: block.2,
                sharedMemBytes: shared,
                hStream: stream.raw,
                attrs: &mut attr,
                numAttrs: 1,
            };
            // SAFETY: the caller's contract; the config and its one attribute live until
            // the call returns.
            let r = unsafe { sys::cuLaunchKernelEx(&cfg, f, params.as_mut_ptr(), std::ptr::null_mut()) };
            if r == sys::CUresult::CUDA_SUCCESS {
                return Ok(());
            }
            if self.overlap_launch.swap(false, Ordering::Relaxed) {
                tracing::warn!(
                    pe = self.pe,
                    "cuLaunchKernelEx refused a programmatic dependent launch ({r:?}): on-stream kernels launch plainly from now on"
                );
            }
        }
        // SAFETY: the caller's contract.
        unsafe { self.launch(f, grid, block, shared, stream, params, false) }
    }

    /// Creates a non-blocking stream of this PE (one [`Cuda::synchronize`] waits for).
    pub fn stream(&self) -> Result<Stream> {
        let mut s = std::ptr::null_mut();
        // SAFETY: out pointer to a local.
        check(unsafe { sys::cuStreamCreate(&mut s, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32) }, "cuStreamCreate", self.pe)?;
        self.streams.lock().unwrap_or_else(PoisonError::into_inner).push(s as usize);
        Ok(Stream { raw: s, pe: self.pe, registry: Some(Arc::downgrade(&self.streams)) })
    }

    /// Records how many PEs of this process use this device, this one included.
    pub fn set_sharers(&self, n: usize) {
        self.sharers.store(n.max(1), Ordering::Relaxed);
    }

    /// PEs of this process on this device, this one included.
    pub fn sharers(&self) -> usize {
        self.sharers.load(Ordering::Relaxed)
    }

    /// Waits for this PE's GPU work. A PE alone on the device in its process waits for
    /// the whole context (other libraries' streams too, such as PyTorch's). PEs that are
    /// threads of one process share the device's primary context, and a context-wide
    /// wait of one of them would also wait for the others' kernels, which may be waiting
    /// for this PE: such a PE waits for the streams it created and its copy stream.
    pub fn synchronize(&self) -> Result<()> {
        if self.sharers() <= 1 {
            // SAFETY: no arguments; the context is current.
            return check(unsafe { sys::cuCtxSynchronize() }, "cuCtxSynchronize", self.pe);
        }
        self.sync_copy()?;
        // The lock is held across the waits: a stream leaves the list (under it) before it
        // is destroyed, so every handle here is live.
        let streams = self.streams.lock().unwrap_or_else(PoisonError::into_inner);
        for &raw in streams.iter() {
            // SAFETY: a live stream of this context (see above).
            check(unsafe { sys::cuStreamSynchronize(raw as sys::CUstream) }, "cuStreamSynchronize", self.pe)?;
        }
        Ok(())
    }

    /// Page-locked host memory of `size` bytes, zeroed and mapped into the device's
    /// address space (kernels reach it at [`PinnedHost::device`]). Freed on drop.
    pub fn pinned_host(&self, size: usize) -> Result<PinnedHost> {
        let mut p: *mut c_void = std::ptr::null_mut();
        let flags = sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE;
        // SAFETY: out pointer to a local; the context is current (callers bind first).
        check(unsafe { sys::cuMemHostAlloc(&mut p, size.max(1), flags) }, "cuMemHostAlloc", self.pe)?;
        let mut d: sys::CUdeviceptr = 0;
        // SAFETY: `p` was just allocated with DEVICEMAP; out pointer to a local.
        if let Err(e) = check(unsafe { sys::cuMemHostGetDevicePointer_v2(&mut d, p, 0) }, "cuMemHostGetDevicePointer", self.pe) {
            // SAFETY: allocated above, freed once.
            unsafe { sys::cuMemFreeHost(p) };
            return Err(e);
        }
        // SAFETY: `size` bytes at `p` are ours and writable.
        unsafe { std::ptr::write_bytes(p as *mut u8, 0, size) };
        Ok(PinnedHost { host: p as *mut u8, device: d, size })
    }

    /// Error code pending on the context, if a kernel faulted.
    pub fn pe(&self) -> usize {
        self.pe
    }
}

/// Page-locked, device-mapped host memory (see [`Cuda::pinned_host`]).
#[derive(Debug)]
pub struct PinnedHost {
    host: *mut u8,
    device: DevPtr,
    size: usize,
}
// SAFETY: plain memory owned by this value; who reads and writes it when is the users'
// protocol (atomics or volatile accesses), not tied to a thread.
unsafe impl Send for PinnedHost {}
// SAFETY: as above.
unsafe impl Sync for PinnedHost {}

impl PinnedHost {
    /// Its first byte in this process.
    pub fn host(&self) -> *mut u8 {
        self.host
    }
    /// Its first byte as kernels see it.
    pub fn device(&self) -> DevPtr {
        self.device
    }
    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.size
    }
    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }
    /// Copies out `dst.len()` 32-bit words from word `first` on, each read once with a
    /// volatile load (kernels may have written them; read after the writers finished).
    pub fn read_words(&self, first: usize, dst: &mut [u32]) {
        assert!((first + dst.len()) * 4 <= self.size, "PinnedHost::read_words past the end");
        let base = self.host as *const u32;
        for (i, d) in dst.iter_mut().enumerate() {
            // SAFETY: in bounds (checked above) and 4-byte aligned (cuMemHostAlloc returns
            // page-aligned memory); plain memory owned by self.
            *d = unsafe { std::ptr::read_volatile(base.add(first + i)) };
        }
    }

    /// The memory as bytes, for a host-only user (a staging buffer no kernel touches).
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `size` bytes at `host` are owned by self, and the exclusive borrow of
        // self makes this the only host view.
        unsafe { std::slice::from_raw_parts_mut(self.host, self.size) }
    }
}

impl Drop for PinnedHost {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc, freed once; no kernel uses it any more
        // (the owners stop their users first).
        unsafe { sys::cuMemFreeHost(self.host as *mut c_void) };
    }
}

/// A loaded module.
#[derive(Debug)]
pub struct RawModule {
    raw: sys::CUmodule,
}
// SAFETY: module handles are usable from any thread with the context current.
unsafe impl Send for RawModule {}
// SAFETY: as above.
unsafe impl Sync for RawModule {}

/// A CUDA stream.
#[derive(Debug)]
pub struct Stream {
    raw: sys::CUstream,
    pe: usize,
    /// The owning PE's list of streams (`None` for a borrowed stream).
    registry: Option<Weak<Mutex<Vec<usize>>>>,
}
// SAFETY: stream handles are usable from any thread with the context current.
unsafe impl Send for Stream {}
// SAFETY: as above.
unsafe impl Sync for Stream {}

impl Stream {
    /// The raw handle (for interop).
    pub fn raw(&self) -> sys::CUstream {
        self.raw
    }

    /// Waits for the stream's work.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: the stream is live.
        check(unsafe { sys::cuStreamSynchronize(self.raw) }, "cuStreamSynchronize", self.pe)
    }

    /// Waits for the stream's work for at most `timeout`; Ok(false) if it is still busy.
    pub fn synchronize_timeout(&self, timeout: std::time::Duration) -> Result<bool> {
        let until = std::time::Instant::now() + timeout;
        loop {
            // SAFETY: the stream is live.
            let r = unsafe { sys::cuStreamQuery(self.raw) };
            if r == sys::CUresult::CUDA_SUCCESS {
                return Ok(true);
            }
            if r != sys::CUresult::CUDA_ERROR_NOT_READY {
                return check(r, "cuStreamQuery", self.pe).map(|_| true);
            }
            if std::time::Instant::now() >= until {
                return Ok(false);
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    /// Enqueues: wait until the 64-bit word at `addr` is >= (`geq`) or == `value`.
    pub fn wait_value64(&self, addr: DevPtr, value: u64, geq: bool) -> Result<()> {
        let flag = if geq {
            sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ
        } else {
            sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_EQ
        };
        // SAFETY: addr is mapped device memory; the stream is live.
        check(unsafe { sys::cuStreamWaitValue64_v2(self.raw, addr, value, flag as u32) }, "cuStreamWaitValue64", self.pe)
    }

    /// Enqueues: write `value` to the 64-bit word at `addr`.
    pub fn write_value64(&self, addr: DevPtr, value: u64) -> Result<()> {
        // SAFETY: addr is mapped device memory; the stream is live.
        check(unsafe { sys::cuStreamWriteValue64_v2(self.raw, addr, value, 0) }, "cuStreamWriteValue64", self.pe)
    }

    /// Starts capturing the stream's work into a graph.
    pub fn begin_capture(&self) -> Result<()> {
        // SAFETY: the stream is live and not capturing.
        check(
            unsafe { sys::cuStreamBeginCapture_v2(self.raw, sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) },
            "cuStreamBeginCapture",
            self.pe,
        )
    }

    /// Whether the stream is capturing into a graph.
    pub fn is_capturing(&self) -> Result<bool> {
        let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
        // SAFETY: the stream is live; the out pointer is a local.
        check(unsafe { sys::cuStreamIsCapturing(self.raw, &mut status) }, "cuStreamIsCapturing", self.pe)?;
        Ok(status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
    }

    /// Ends a capture and instantiates the graph.
    ///
    /// Like a module load, instantiating may wait for the kernels running on the
    /// context. PEs that are threads of one process share it: with them, every PE should
    /// instantiate its graph before any PE replays one that waits for peers (a host
    /// `barrier_all` between the two), or a replay may wait for a PE that cannot finish
    /// instantiating.
    pub fn end_capture(&self) -> Result<Graph> {
        let mut g = std::ptr::null_mut();
        let mut exec = std::ptr::null_mut();
        // SAFETY: the stream is capturing; out pointers to locals.
        unsafe {
            check(sys::cuStreamEndCapture(self.raw, &mut g), "cuStreamEndCapture", self.pe)?;
            check(sys::cuGraphInstantiateWithFlags(&mut exec, g, 0), "cuGraphInstantiate", self.pe)?;
        }
        Ok(Graph { graph: g, exec, pe: self.pe })
    }
}

impl Stream {
    /// Wraps a stream this library does not own (another library's, such as PyTorch's
    /// current stream) so that the stream-ordered calls can enqueue on it. The result
    /// derefs to a `Stream` and never destroys the handle.
    ///
    /// # Safety
    /// `raw` must be a live stream of the primary context of this PE's device, and stay
    /// live for as long as the returned value is used.
    pub unsafe fn borrow_raw(raw: sys::CUstream, pe: usize) -> BorrowedStream {
        BorrowedStream(std::mem::ManuallyDrop::new(Stream { raw, pe, registry: None }))
    }
}

/// A stream owned elsewhere (see [`Stream::borrow_raw`]): usable wherever a `&Stream` is
/// taken; dropping it leaves the stream alone.
#[derive(Debug)]
pub struct BorrowedStream(std::mem::ManuallyDrop<Stream>);

impl std::ops::Deref for BorrowedStream {
    type Target = Stream;
    fn deref(&self) -> &Stream {
        &self.0
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Some(list) = self.registry.as_ref().and_then(Weak::upgrade) {
            list.lock().unwrap_or_else(PoisonError::into_inner).retain(|&raw| raw != self.raw as usize);
        }
        // SAFETY: the stream was created by us and is dropped once.
        let _ = unsafe { sys::cuStreamDestroy_v2(self.raw) };
    }
}

/// An instantiated CUDA graph.
#[derive(Debug)]
pub struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    pe: usize,
}
// SAFETY: graph handles are usable from any thread with the context current.
unsafe impl Send for Graph {}

impl Graph {
    /// Launches the graph on `stream`.
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        // SAFETY: exec is instantiated; the stream is live.
        check(unsafe { sys::cuGraphLaunch(self.exec, stream.raw) }, "cuGraphLaunch", self.pe)
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: created by end_capture and dropped once.
        unsafe {
            let _ = sys::cuGraphExecDestroy(self.exec);
            let _ = sys::cuGraphDestroy(self.graph);
        }
    }
}

/// A pair of events timing work on a stream.
#[derive(Debug)]
pub struct Timer {
    start: sys::CUevent,
    stop: sys::CUevent,
    pe: usize,
}

impl Timer {
    /// Two fresh events.
    pub fn new(pe: usize) -> Result<Timer> {
        let (mut a, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: out pointers to locals.
        unsafe {
            check(sys::cuEventCreate(&mut a, 0), "cuEventCreate", pe)?;
            check(sys::cuEventCreate(&mut b, 0), "cuEventCreate", pe)?;
        }
        Ok(Timer { start: a, stop: b, pe })
    }
    /// Records the start on `s`.
    pub fn start(&self, s: &Stream) -> Result<()> {
        // SAFETY: live event and stream.
        check(unsafe { sys::cuEventRecord(self.start, s.raw) }, "cuEventRecord", self.pe)
    }
    /// Records the stop on `s`, waits for it, returns milliseconds elapsed.
    pub fn stop_ms(&self, s: &Stream) -> Result<f32> {
        let mut ms = 0f32;
        // SAFETY: live events and stream; out pointer to a local.
        unsafe {
            check(sys::cuEventRecord(self.stop, s.raw), "cuEventRecord", self.pe)?;
            check(sys::cuEventSynchronize(self.stop), "cuEventSynchronize", self.pe)?;
            check(sys::cuEventElapsedTime_v2(&mut ms, self.start, self.stop), "cuEventElapsedTime", self.pe)?;
        }
        Ok(ms)
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        // SAFETY: created in new, dropped once.
        unsafe {
            let _ = sys::cuEventDestroy_v2(self.start);
            let _ = sys::cuEventDestroy_v2(self.stop);
        }
    }
}

/// An event without timing, for completion checks (the proxy's copy-engine copies).
#[derive(Debug)]
pub struct Event {
    raw: sys::CUevent,
    pe: usize,
}
// SAFETY: event handles are usable from any thread with the context current.
unsafe impl Send for Event {}

impl Event {
    /// A fresh event of the current context.
    pub fn new(pe: usize) -> Result<Event> {
        let mut e = std::ptr::null_mut();
        // SAFETY: out pointer to a local.
        check(unsafe { sys::cuEventCreate(&mut e, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32) }, "cuEventCreate", pe)?;
        Ok(Event { raw: e, pe })
    }

    /// Records the event at the current end of `s`'s work.
    pub fn record(&self, s: &Stream) -> Result<()> {
        // SAFETY: live event and stream.
        check(unsafe { sys::cuEventRecord(self.raw, s.raw) }, "cuEventRecord", self.pe)
    }

    /// Waits until the work before the record is done.
    pub fn wait(&self) -> Result<()> {
        // SAFETY: live event.
        check(unsafe { sys::cuEventSynchronize(self.raw) }, "cuEventSynchronize", self.pe)
    }

    /// Whether the work before the record is done (without waiting).
    pub fn done(&self) -> Result<bool> {
        // SAFETY: live event.
        let r = unsafe { sys::cuEventQuery(self.raw) };
        if r == sys::CUresult::CUDA_ERROR_NOT_READY {
            return Ok(false);
        }
        check(r, "cuEventQuery", self.pe).map(|_| true)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created in new, dropped once.
        let _ = unsafe { sys::cuEventDestroy_v2(self.raw) };
    }
}
