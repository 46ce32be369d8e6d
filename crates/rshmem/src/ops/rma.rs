//! Remote memory access: put, get, p, g, iput, iget and their non-blocking forms, typed
//! (over the RMA type table via generics) and as bytes (the `mem` forms).
//!
//! Every call checks the PE (relative to the context's team, see `ops::context`) and that
//! the remote range lies inside one live allocation of the symmetric heap; the local side
//! may be any memory. Puts through a NOSTORE context are refused. Non-blocking forms return once
//! the operation is issued; on the mapped transport that means done, elsewhere `quiet`
//! completes them. A non-blocking get into a Rust slice completes before it returns,
//! since the slice's borrow ends there.

use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::sym::Sym;
use crate::types::{SymType, WordType};

impl Ctx {
    // ----- byte (mem) forms: the base of everything else -----

    /// The engine of every put: checks, then one transport put. Blocking and
    /// non-blocking forms differ only in `call`: a transport's put returns once `src` may
    /// be reused, and `quiet` completes what it left in flight.
    #[inline(always)]
    fn put_bytes(&self, call: &'static str, dest_addr: usize, src: &[u8], pe: usize) -> Result<()> {
        self.check_store(call)?;
        let (pe, off) = self.target(call, "dest", dest_addr, src.len(), pe)?;
        self.to(pe).put(pe, off, src).map_err(|e| e.during(call))
    }

    /// The engine of every get (a get into a borrowed slice is complete on return).
    #[inline(always)]
    fn get_bytes(&self, call: &'static str, dest: &mut [u8], src_addr: usize, pe: usize) -> Result<()> {
        let (pe, off) = self.target(call, "source", src_addr, dest.len(), pe)?;
        self.to(pe).get(pe, off, dest).map_err(|e| e.during(call))
    }

    /// The engine of the typed puts: [`Ctx::put_bytes`] with the handle's checks.
    #[inline]
    fn put_elements<T: SymType>(&self, call: &'static str, dest: &Sym<T>, index: usize, src: &[T], pe: usize) -> Result<()> {
        self.check_store(call)?;
        let (pe, off) = self.sym_target(call, "dest", dest, index, src.len(), pe)?;
        self.to(pe).put(pe, off, bytemuck::cast_slice(src)).map_err(|e| e.during(call))
    }

    /// The engine of the typed gets: [`Ctx::get_bytes`] with the handle's checks.
    #[inline]
    fn get_elements<T: SymType>(&self, call: &'static str, dest: &mut [T], src: &Sym<T>, index: usize, pe: usize) -> Result<()> {
        let (pe, off) = self.sym_target(call, "source", src, index, dest.len(), pe)?;
        self.to(pe).get(pe, off, bytemuck::cast_slice_mut(dest)).map_err(|e| e.during(call))
    }

    /// Copies `src` to `dest_addr` (a symmetric address) on `pe` (`putmem`).
    #[inline]
    pub fn putmem(&self, dest_addr: usize, src: &[u8], pe: usize) -> Result<()> {
        self.put_bytes("putmem", dest_addr, src, pe)
    }

    /// Copies `dest.len()` bytes from `src_addr` (a symmetric address) on `pe` (`getmem`).
    #[inline]
    pub fn getmem(&self, dest: &mut [u8], src_addr: usize, pe: usize) -> Result<()> {
        self.get_bytes("getmem", dest, src_addr, pe)
    }

    /// Non-blocking [`Ctx::putmem`]: `src` may be reused on return; `quiet` completes it.
    #[inline]
    pub fn putmem_nbi(&self, dest_addr: usize, src: &[u8], pe: usize) -> Result<()> {
        self.put_bytes("putmem_nbi", dest_addr, src, pe)
    }

    /// Non-blocking [`Ctx::getmem`] (complete on return for a borrowed slice).
    #[inline]
    pub fn getmem_nbi(&self, dest: &mut [u8], src_addr: usize, pe: usize) -> Result<()> {
        self.get_bytes("getmem_nbi", dest, src_addr, pe)
    }

    /// [`Ctx::getmem_nbi`] into raw memory, for callers without a borrow to give (the C
    /// ABI): on a remote transport the get may still be in flight on return, and
    /// `quiet` completes it, as OpenSHMEM's `getmem_nbi` allows (the mapped transport
    /// copies at once).
    ///
    /// # Safety
    /// `dest` must be valid for writes of `len` bytes, and neither read nor written by
    /// anyone else, until the next `quiet` of this context returns.
    pub unsafe fn getmem_nbi_raw(&self, dest: *mut u8, len: usize, src_addr: usize, pe: usize) -> Result<()> {
        const CALL: &str = "getmem_nbi";
        let (pe, off) = self.target(CALL, "source", src_addr, len, pe)?;
        // SAFETY: the caller's promise, passed on.
        unsafe { self.to(pe).get_nbi(pe, off, dest, len) }.map_err(|e| e.during(CALL))
    }

    /// Strided byte put: `nelems` elements of `elem` bytes, `dst_stride` and `src_stride`
    /// elements apart (the engine of `iput` and the sized `iputN`).
    pub fn iputmem(
        &self,
        dest_addr: usize,
        src: &[u8],
        elem: usize,
        dst_stride: usize,
        src_stride: usize,
        nelems: usize,
        pe: usize,
    ) -> Result<()> {
        const CALL: &str = "iput";
        self.check_store(CALL)?;
        let (span_d, span_s) = strided_spans(CALL, elem, dst_stride, src_stride, nelems, self.my_pe())?;
        if src.len() < span_s {
            return Err(short_local(CALL, "source", src.len(), span_s, self.my_pe()));
        }
        let (pe, off) = self.target(CALL, "dest", dest_addr, span_d, pe)?;
        // In runs of up to 1024 elements: a transport with a cost per message carries each
        // run at once (Transport::put_gather).
        let t = self.to(pe);
        let mut pieces = Vec::with_capacity(nelems.min(1024));
        for first in (0..nelems).step_by(1024) {
            pieces.clear();
            pieces.extend((first..nelems.min(first + 1024)).map(|i| (off + i * dst_stride * elem, &src[i * src_stride * elem..][..elem])));
            t.put_gather(pe, &pieces).map_err(|e| e.during(CALL))?;
        }
        Ok(())
    }

    /// Strided byte get (the engine of `iget` and the sized `igetN`).
    pub fn igetmem(
        &self,
        dest: &mut [u8],
        src_addr: usize,
        elem: usize,
        dst_stride: usize,
        src_stride: usize,
        nelems: usize,
        pe: usize,
    ) -> Result<()> {
        const CALL: &str = "iget";
        let (span_d, span_s) = strided_spans(CALL, elem, dst_stride, src_stride, nelems, self.my_pe())?;
        if dest.len() < span_d {
            return Err(short_local(CALL, "dest", dest.len(), span_d, self.my_pe()));
        }
        let (pe, off) = self.target(CALL, "source", src_addr, span_s, pe)?;
        let t = self.to(pe);
        for i in 0..nelems {
            t.get(pe, off + i * src_stride * elem, &mut dest[i * dst_stride * elem..][..elem]).map_err(|e| e.during(CALL))?;
        }
        Ok(())
    }

    // ----- typed forms -----

    /// Copies `src` into `dest[index..]` on `pe`.
    pub fn put<T: SymType>(&self, dest: &Sym<T>, index: usize, src: &[T], pe: usize) -> Result<()> {
        self.put_elements("put", dest, index, src, pe)
    }

    /// Non-blocking [`Ctx::put`].
    pub fn put_nbi<T: SymType>(&self, dest: &Sym<T>, index: usize, src: &[T], pe: usize) -> Result<()> {
        self.put_elements("put_nbi", dest, index, src, pe)
    }

    /// Copies `src[index..index + dest.len()]` from `pe` into `dest`.
    pub fn get<T: SymType>(&self, dest: &mut [T], src: &Sym<T>, index: usize, pe: usize) -> Result<()> {
        self.get_elements("get", dest, src, index, pe)
    }

    /// Non-blocking [`Ctx::get`].
    pub fn get_nbi<T: SymType>(&self, dest: &mut [T], src: &Sym<T>, index: usize, pe: usize) -> Result<()> {
        self.get_elements("get_nbi", dest, src, index, pe)
    }

    /// Writes one element (`p`): a single store of the whole word for word types.
    pub fn p<T: WordType>(&self, dest: &Sym<T>, index: usize, value: T, pe: usize) -> Result<()> {
        self.p_addr(dest.elements("p", "index", index, 1, pe)?, value, pe)
    }

    /// Address form of [`Ctx::p`].
    pub fn p_addr<T: WordType>(&self, dest_addr: usize, value: T, pe: usize) -> Result<()> {
        self.check_store("p")?;
        let (pe, off) = self.target_word("p", "dest", dest_addr, T::WIDTH, T::NAME, pe)?;
        self.to(pe).store_word(pe, off, T::WIDTH, value.to_bits()).map_err(|e| e.during("p"))
    }

    /// Reads one element (`g`).
    pub fn g<T: WordType>(&self, src: &Sym<T>, index: usize, pe: usize) -> Result<T> {
        self.g_addr(src.elements("g", "index", index, 1, pe)?, pe)
    }

    /// Address form of [`Ctx::g`].
    pub fn g_addr<T: WordType>(&self, src_addr: usize, pe: usize) -> Result<T> {
        let (pe, off) = self.target_word("g", "source", src_addr, T::WIDTH, T::NAME, pe)?;
        Ok(T::from_bits(self.to(pe).load_word(pe, off, T::WIDTH).map_err(|e| e.during("g"))?))
    }

    /// Strided put: `nelems` elements from `src` (every `src_stride`-th) to
    /// `dest[index..]` (every `dst_stride`-th) on `pe`.
    pub fn iput<T: SymType>(
        &self,
        dest: &Sym<T>,
        index: usize,
        src: &[T],
        dst_stride: usize,
        src_stride: usize,
        nelems: usize,
        pe: usize,
    ) -> Result<()> {
        // The heap checks the strided span; the index must at least start inside `dest`.
        let addr = dest.elements("iput", "index", index, nelems.min(1), pe)?;
        self.iputmem(addr, bytemuck::cast_slice(src), std::mem::size_of::<T>(), dst_stride, src_stride, nelems, pe)
    }

    /// Strided get, the mirror of [`Ctx::iput`].
    pub fn iget<T: SymType>(
        &self,
        dest: &mut [T],
        src: &Sym<T>,
        index: usize,
        dst_stride: usize,
        src_stride: usize,
        nelems: usize,
        pe: usize,
    ) -> Result<()> {
        let addr = src.elements("iget", "index", index, nelems.min(1), pe)?;
        self.igetmem(bytemuck::cast_slice_mut(dest), addr, std::mem::size_of::<T>(), dst_stride, src_stride, nelems, pe)
    }
}

fn strided_spans(
    call: &'static str,
    elem: usize,
    dst_stride: usize,
    src_stride: usize,
    nelems: usize,
    pe: usize,
) -> Result<(usize, usize)> {
    if nelems == 0 {
        return Ok((0, 0));
    }
    if dst_stride == 0 || src_stride == 0 {
        return Err(Error::InvalidArgument { call, arg: "stride", detail: "strides must be at least 1".into(), pe });
    }
    let span = |stride: usize| (nelems - 1).checked_mul(stride).and_then(|v| v.checked_add(1)).and_then(|v| v.checked_mul(elem));
    match (span(dst_stride), span(src_stride)) {
        (Some(d), Some(s)) => Ok((d, s)),
        _ => Err(Error::InvalidArgument { call, arg: "nelems", detail: format!("{nelems} elements at these strides overflow"), pe }),
    }
}

fn short_local(call: &'static str, arg: &'static str, have: usize, need: usize, pe: usize) -> Error {
    Error::InvalidArgument { call, arg, detail: format!("local buffer has {have} bytes but the strided transfer spans {need}"), pe }
}
