//! Remote memory access: `put`, `get`, `p`, `g`, `iput`, `iget`, `ibput`, `ibget` and
//! their non-blocking forms, typed (from the type table), sized (`put32`, ...) and as
//! bytes (`putmem`), each with its `shmem_ctx_` twin.

use crate::ctx::with_ctx;
use crate::handle::CtxHandle;
use crate::routine::Routine;
use crate::state::{bytes_of, local, local_mut, pe_arg, stride_arg, OrExit};
use rshmem::WordType;
use std::ffi::{c_int, c_void};

/// Contiguous put of `nelems` elements of `size` bytes.
#[inline]
pub(crate) unsafe fn put(
    call: &str,
    h: CtxHandle,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    size: usize,
    pe: c_int,
    nbi: bool,
) {
    with_ctx(call, h, |c| {
        let pe = pe_arg(call, c, pe);
        if nelems == 0 {
            return;
        }
        // SAFETY: the caller passes `nelems` elements at `source` (the routine's contract).
        let src = unsafe { local(call, "source", source, bytes_of(call, nelems, size)) };
        if nbi { c.putmem_nbi(dest as usize, src, pe) } else { c.putmem(dest as usize, src, pe) }.or_exit(call)
    })
}

/// Contiguous get of `nelems` elements of `size` bytes.
#[inline]
pub(crate) unsafe fn get(
    call: &str,
    h: CtxHandle,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    size: usize,
    pe: c_int,
    nbi: bool,
) {
    with_ctx(call, h, |c| {
        let pe = pe_arg(call, c, pe);
        if nelems == 0 {
            return;
        }
        // SAFETY: the caller passes room for `nelems` elements at `dest`.
        let dst = unsafe { local_mut(call, "dest", dest, bytes_of(call, nelems, size)) };
        if nbi {
            // SAFETY: OpenSHMEM's contract for `dest` of a non-blocking get: the program
            // leaves it alone until the next quiet.
            unsafe { c.getmem_nbi_raw(dst.as_mut_ptr(), dst.len(), source as usize, pe) }
        } else {
            c.getmem(dst, source as usize, pe)
        }
        .or_exit(call)
    })
}

/// Bytes spanned by `count` items `stride` elements apart, each `run` elements long.
fn span(call: &str, count: usize, stride: usize, run: usize, size: usize) -> usize {
    if count == 0 {
        return 0;
    }
    (count - 1)
        .checked_mul(stride)
        .and_then(|v| v.checked_add(run))
        .and_then(|v| v.checked_mul(size))
        .unwrap_or_else(|| crate::state::bad_arg(call, "nelems", format_args!("{count} strided elements overflow the address space")))
}

/// Strided put: element `i` of `source` (every `sst`-th) to element `i * dst` of `dest`.
pub(crate) unsafe fn iput(
    call: &str,
    h: CtxHandle,
    dest: *mut c_void,
    source: *const c_void,
    dst: isize,
    sst: isize,
    nelems: usize,
    size: usize,
    pe: c_int,
) {
    with_ctx(call, h, |c| {
        let pe = pe_arg(call, c, pe);
        let (dst, sst) = (stride_arg(call, "dst", dst), stride_arg(call, "sst", sst));
        if nelems == 0 {
            return;
        }
        // SAFETY: the caller passes the strided source elements at `source`.
        let src = unsafe { local(call, "source", source, span(call, nelems, sst, 1, size)) };
        c.iputmem(dest as usize, src, size, dst, sst, nelems, pe).or_exit(call)
    })
}

/// Strided get, the mirror of [`iput`].
pub(crate) unsafe fn iget(
    call: &str,
    h: CtxHandle,
    dest: *mut c_void,
    source: *const c_void,
    dst: isize,
    sst: isize,
    nelems: usize,
    size: usize,
    pe: c_int,
) {
    with_ctx(call, h, |c| {
        let pe = pe_arg(call, c, pe);
        let (dst, sst) = (stride_arg(call, "dst", dst), stride_arg(call, "sst", sst));
        if nelems == 0 {
            return;
        }
        // SAFETY: the caller passes room for the strided elements at `dest`.
        let d = unsafe { local_mut(call, "dest", dest, span(call, nelems, dst, 1, size)) };
        c.igetmem(d, source as usize, size, dst, sst, nelems, pe).or_exit(call)
    })
}

/// Blocked strided put (OpenSHMEM 1.6): `nblocks` blocks of `bsize` elements; block `i`
/// starts at element `i * sst` of `source` and `i * dst` of `dest`.
pub(crate) unsafe fn ibput(
    call: &str,
    h: CtxHandle,
    dest: *mut c_void,
    source: *const c_void,
    dst: isize,
    sst: isize,
    bsize: usize,
    nblocks: usize,
    size: usize,
    pe: c_int,
) {
    with_ctx(call, h, |c| {
        let pe = pe_arg(call, c, pe);
        let (dst, sst) = (stride_arg(call, "dst", dst), stride_arg(call, "sst", sst));
        let block = bytes_of(call, bsize, size);
        if block == 0 || nblocks == 0 {
            return;
        }
        // SAFETY: the caller passes the blocks at `source`.
        let src = unsafe { local(call, "source", source, span(call, nblocks, sst, bsize, size)) };
        let _ = span(call, nblocks, dst, bsize, size);
        for i in 0..nblocks {
            let s = &src[i * sst * size..][..block];
            c.putmem(dest as usize + i * dst * size, s, pe).or_exit(call);
        }
    })
}

/// Blocked strided get, the mirror of [`ibput`].
pub(crate) unsafe fn ibget(
    call: &str,
    h: CtxHandle,
    dest: *mut c_void,
    source: *const c_void,
    dst: isize,
    sst: isize,
    bsize: usize,
    nblocks: usize,
    size: usize,
    pe: c_int,
) {
    with_ctx(call, h, |c| {
        let pe = pe_arg(call, c, pe);
        let (dst, sst) = (stride_arg(call, "dst", dst), stride_arg(call, "sst", sst));
        let block = bytes_of(call, bsize, size);
        if block == 0 || nblocks == 0 {
            return;
        }
        // SAFETY: the caller passes room for the blocks at `dest`.
        let d = unsafe { local_mut(call, "dest", dest, span(call, nblocks, dst, bsize, size)) };
        let _ = span(call, nblocks, sst, bsize, size);
        for i in 0..nblocks {
            let out = &mut d[i * dst * size..][..block];
            c.getmem(out, source as usize + i * sst * size, pe).or_exit(call);
        }
    })
}

/// Single-element put of a word type.
pub(crate) fn p<T: WordType>(call: &str, h: CtxHandle, dest: *mut T, value: T, pe: c_int) {
    with_ctx(call, h, |c| {
        let pe = pe_arg(call, c, pe);
        c.p_addr(dest as usize, value, pe).or_exit(call)
    })
}

/// Single-element get of a word type.
pub(crate) fn g<T: WordType>(call: &str, h: CtxHandle, source: *const T, pe: c_int) -> T {
    with_ctx(call, h, |c| {
        let pe = pe_arg(call, c, pe);
        c.g_addr(source as usize, pe).or_exit(call)
    })
}

/// The bulk routines of one element type.
macro_rules! rma_bulk {
    ($(($n:ident, $t:ty)),* $(,)?) => {
        $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            const SIZE: usize = std::mem::size_of::<T>();
            c_pair!(put, $n => "put"; fn (dest: *mut T, source: *const T, nelems: usize, pe: c_int) =
                |call, ctx| put(call, ctx, dest.cast(), source.cast(), nelems, SIZE, pe, false));
            c_pair!(get, $n => "get"; fn (dest: *mut T, source: *const T, nelems: usize, pe: c_int) =
                |call, ctx| get(call, ctx, dest.cast(), source.cast(), nelems, SIZE, pe, false));
            c_pair!(put_nbi, $n => "put_nbi"; fn (dest: *mut T, source: *const T, nelems: usize, pe: c_int) =
                |call, ctx| put(call, ctx, dest.cast(), source.cast(), nelems, SIZE, pe, true));
            c_pair!(get_nbi, $n => "get_nbi"; fn (dest: *mut T, source: *const T, nelems: usize, pe: c_int) =
                |call, ctx| get(call, ctx, dest.cast(), source.cast(), nelems, SIZE, pe, true));
            c_pair!(iput, $n => "iput"; fn (dest: *mut T, source: *const T, dst: isize, sst: isize, nelems: usize, pe: c_int) =
                |call, ctx| iput(call, ctx, dest.cast(), source.cast(), dst, sst, nelems, SIZE, pe));
            c_pair!(iget, $n => "iget"; fn (dest: *mut T, source: *const T, dst: isize, sst: isize, nelems: usize, pe: c_int) =
                |call, ctx| iget(call, ctx, dest.cast(), source.cast(), dst, sst, nelems, SIZE, pe));
            c_pair!(ibput, $n => "ibput";
                fn (dest: *mut T, source: *const T, dst: isize, sst: isize, bsize: usize, nblocks: usize, pe: c_int) =
                |call, ctx| ibput(call, ctx, dest.cast(), source.cast(), dst, sst, bsize, nblocks, SIZE, pe));
            c_pair!(ibget, $n => "ibget";
                fn (dest: *mut T, source: *const T, dst: isize, sst: isize, bsize: usize, nblocks: usize, pe: c_int) =
                |call, ctx| ibget(call, ctx, dest.cast(), source.cast(), dst, sst, bsize, nblocks, SIZE, pe));
            pub(crate) const ROUTINES: &[Routine] = routines![put, get, put_nbi, get_nbi, iput, iget, ibput, ibget];
        }
        )*
        /// The routines of every type of this list.
        pub(crate) const ROUTINES: &[&[Routine]] = &[$($n::ROUTINES),*];
    };
}

/// `p` and `g` of one word type.
macro_rules! rma_scalar {
    ($(($n:ident, $t:ty)),* $(,)?) => {
        $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            c_pair!(p, $n => "p"; fn (dest: *mut T, value: T, pe: c_int) = |call, ctx| p(call, ctx, dest, value, pe));
            c_pair!(g, $n => "g"; fn (source: *const T, pe: c_int) -> T = |call, ctx| g(call, ctx, source, pe));
            pub(crate) const ROUTINES: &[Routine] = routines![p, g];
        }
        )*
        /// The routines of every type of this list.
        pub(crate) const ROUTINES: &[&[Routine]] = &[$($n::ROUTINES),*];
    };
}

/// The sized routines (`shmem_put32`, `shmem_iget64`, ...).
macro_rules! rma_sized {
    ($(($m:ident, $bits:literal, $t:ty)),* $(,)?) => {
        $(
        pub(crate) mod $m {
            use super::*;
            const SIZE: usize = std::mem::size_of::<$t>();
            c_pair!(put, concat!("put", $bits);
                fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) = |call, ctx| put(call, ctx, dest, source, nelems, SIZE, pe, false));
            c_pair!(get, concat!("get", $bits);
                fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) = |call, ctx| get(call, ctx, dest, source, nelems, SIZE, pe, false));
            c_pair!(put_nbi, concat!("put", $bits, "_nbi");
                fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) = |call, ctx| put(call, ctx, dest, source, nelems, SIZE, pe, true));
            c_pair!(get_nbi, concat!("get", $bits, "_nbi");
                fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) = |call, ctx| get(call, ctx, dest, source, nelems, SIZE, pe, true));
            c_pair!(iput, concat!("iput", $bits);
                fn (dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, pe: c_int) =
                |call, ctx| iput(call, ctx, dest, source, dst, sst, nelems, SIZE, pe));
            c_pair!(iget, concat!("iget", $bits);
                fn (dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, pe: c_int) =
                |call, ctx| iget(call, ctx, dest, source, dst, sst, nelems, SIZE, pe));
            c_pair!(ibput, concat!("ibput", $bits);
                fn (dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, bsize: usize, nblocks: usize, pe: c_int) =
                |call, ctx| ibput(call, ctx, dest, source, dst, sst, bsize, nblocks, SIZE, pe));
            c_pair!(ibget, concat!("ibget", $bits);
                fn (dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, bsize: usize, nblocks: usize, pe: c_int) =
                |call, ctx| ibget(call, ctx, dest, source, dst, sst, bsize, nblocks, SIZE, pe));
            pub(crate) const ROUTINES: &[Routine] = routines![put, get, put_nbi, get_nbi, iput, iget, ibput, ibget];
        }
        )*
        /// The routines of every size.
        pub(crate) const ROUTINES: &[&[Routine]] = &[$($m::ROUTINES),*];
    };
}

/// Typed routines of every RMA type Rust has.
pub(crate) mod typed {
    use super::*;
    rshmem::rma_types!(rma_bulk);
}

/// Typed routines of the RMA types only C has (moved as bytes).
pub(crate) mod typed_c_only {
    use super::*;
    crate::c_only_rma_types!(rma_bulk);
}

/// `p`/`g` of every RMA type Rust can pass by value (`long double`'s are C code that
/// calls [`put`] and [`get`]).
pub(crate) mod scalar {
    use super::*;
    rshmem::rma_types!(rma_scalar);
}

/// Sized routines.
pub(crate) mod sized {
    use super::*;
    crate::sized_types!(rma_sized);
}

/// The byte (`mem`) routines.
pub(crate) mod mem {
    use super::*;
    c_pair!(putmem, "putmem"; fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) = |call, ctx| put(call, ctx, dest, source, nelems, 1, pe, false));
    c_pair!(getmem, "getmem"; fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) = |call, ctx| get(call, ctx, dest, source, nelems, 1, pe, false));
    c_pair!(putmem_nbi, "putmem_nbi"; fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) = |call, ctx| put(call, ctx, dest, source, nelems, 1, pe, true));
    c_pair!(getmem_nbi, "getmem_nbi"; fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) = |call, ctx| get(call, ctx, dest, source, nelems, 1, pe, true));
    /// The byte routines.
    pub(crate) const ROUTINES: &[Routine] = routines![putmem, getmem, putmem_nbi, getmem_nbi];
}
