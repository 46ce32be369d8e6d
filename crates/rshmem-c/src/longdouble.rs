//! `shmem_longdouble_p` and `shmem_longdouble_g` (with their context and profiling
//! forms) as exported symbols. They pass a `long double` by value, which Rust cannot
//! express, so C implements them (`csrc/c_types.c`) and each exported name here is a
//! single jump to that C function: the caller's arguments, registers and stack reach it
//! untouched, and C returns to the caller directly. The C side moves the bytes through
//! [`rshmem_c_rma`], like any put or get of the library.

use crate::handle::{CtxHandle, DEFAULT};
use crate::routine::{Naming, Routine};
use std::ffi::{c_char, c_int, c_void, CStr};

/// Moves `nbytes` between `local` and the symmetric address `remote` on `pe` for the C
/// part of the library: a put when `put` is nonzero, else a get; through `ctx` when
/// `explicit_ctx` is nonzero, else the default context. Errors name `call`. Not part of
/// the OpenSHMEM API (no `shmem_` name); C code in this library is its only caller.
///
/// # Safety
/// `call` is a NUL-terminated string; `local` holds `nbytes` bytes.
#[no_mangle]
pub unsafe extern "C" fn rshmem_c_rma(
    call: *const c_char,
    ctx: CtxHandle,
    explicit_ctx: c_int,
    remote: *mut c_void,
    local: *mut c_void,
    nbytes: usize,
    pe: c_int,
    put: c_int,
) {
    // SAFETY: the C callers pass string literals.
    let call = unsafe { CStr::from_ptr(call) }.to_str().unwrap_or("shmem_longdouble_p/g");
    let h = if explicit_ctx != 0 { ctx } else { DEFAULT };
    // SAFETY: `local` holds `nbytes` bytes (the C callers pass the value's own storage).
    unsafe {
        if put != 0 {
            crate::rma::put(call, h, remote, local, nbytes, 1, pe, false)
        } else {
            crate::rma::get(call, h, local, remote, nbytes, 1, pe, false)
        }
    }
}

// The C definitions (`csrc/c_types.c`); their real signatures are C's, and only the
// jumps below reach them.
extern "C" {
    fn rshmem_c_longdouble_p();
    fn rshmem_c_ctx_longdouble_p();
    fn rshmem_c_longdouble_g();
    fn rshmem_c_ctx_longdouble_g();
}

/// Defines an exported function `$name` that jumps to the C function `$target`.
macro_rules! jump_to_c {
    ($($entry:ident = $name:literal => $target:ident),* $(,)?) => {
        $(
            /// An exported name of a C routine (see the module's documentation); its real
            /// signature is the C one.
            #[unsafe(naked)]
            #[export_name = $name]
            pub unsafe extern "C" fn $entry() {
                #[cfg(target_arch = "x86_64")]
                core::arch::naked_asm!("jmp {f}", f = sym $target);
                #[cfg(target_arch = "aarch64")]
                core::arch::naked_asm!("b {f}", f = sym $target);
            }
        )*
    };
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
jump_to_c!(
    p = "shmem_longdouble_p" => rshmem_c_longdouble_p,
    profiled_p = "pshmem_longdouble_p" => rshmem_c_longdouble_p,
    ctx_p = "shmem_ctx_longdouble_p" => rshmem_c_ctx_longdouble_p,
    profiled_ctx_p = "pshmem_ctx_longdouble_p" => rshmem_c_ctx_longdouble_p,
    g = "shmem_longdouble_g" => rshmem_c_longdouble_g,
    profiled_g = "pshmem_longdouble_g" => rshmem_c_longdouble_g,
    ctx_g = "shmem_ctx_longdouble_g" => rshmem_c_ctx_longdouble_g,
    profiled_ctx_g = "pshmem_ctx_longdouble_g" => rshmem_c_ctx_longdouble_g,
);

/// `long double`'s `p` and `g`, described as `c_pair!` would (the C definitions in
/// `csrc/c_types.c` have these signatures).
pub(crate) const ROUTINES: &[Routine] = &[
    Routine {
        name: "longdouble_p",
        typename: "longdouble",
        op: "p",
        generic: true,
        ctx: true,
        shmemx: false,
        naming: Naming::Shmem,
        ret: "",
        params: &[("dest", "*mut T"), ("value", "T"), ("pe", "c_int")],
    },
    Routine {
        name: "longdouble_g",
        typename: "longdouble",
        op: "g",
        generic: true,
        ctx: true,
        shmemx: false,
        naming: Naming::Shmem,
        ret: "T",
        params: &[("source", "*const T"), ("pe", "c_int")],
    },
];
