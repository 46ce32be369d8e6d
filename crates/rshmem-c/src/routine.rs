//! The exported C routines' one description, and the macros that define them.
//!
//! Every routine is written once, as a `c_fn!` or `c_pair!` invocation: its name, its
//! parameters (named as in the OpenSHMEM specification, typed in Rust) and its body. The
//! macro defines the exported entry points, `shmem_NAME` and, for the OpenSHMEM
//! profiling interface, `pshmem_NAME` (a tool that defines its own `shmem_NAME` calls
//! ours by the shifted name), plus `shmem_ctx_NAME`/`pshmem_ctx_NAME` for `c_pair!` and
//! `shmemx_NAME` where the extension flag is given; and it records a [`Routine`], from
//! which the header generator writes the C declaration, the C11 generic and the C++ overload.
//! The entry points are thin wrappers over one private implementation: an exported
//! function is never called through its symbol from inside the library, so a tool's
//! `shmem_NAME` cannot be re-entered by our `pshmem_NAME`.

/// One exported routine as its defining macro saw it.
#[derive(Debug, Clone, Copy)]
pub struct Routine {
    /// The name after `shmem_` (and `ctx_`): `long_put`, `putmem`, `init`.
    pub name: &'static str,
    /// The TYPENAME of a typed routine (`long`), or "".
    pub typename: &'static str,
    /// The name without the TYPENAME (`put` for `long_put`): the C11 generic is
    /// `shmem_` + this. Equal to `name` for untyped routines.
    pub op: &'static str,
    /// Whether the C11 generic and C++ overloads include it (typed routines only).
    pub generic: bool,
    /// Whether a `shmem_ctx_` form exists (its first parameter is the context).
    pub ctx: bool,
    /// Whether `shmemx_NAME` is exported too (`shmemx.h`).
    pub shmemx: bool,
    /// How the exported names are formed.
    pub naming: Naming,
    /// The Rust return type as written (`""` for none, `!` for a routine that never
    /// returns); `T` is the element type.
    pub ret: &'static str,
    /// (name, Rust type as written) of each parameter after the context.
    pub params: &'static [(&'static str, &'static str)],
}

/// How a routine's exported names are formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// `shmem_NAME` and `pshmem_NAME`.
    Shmem,
    /// `NAME` alone: the deprecated SGI-era names (`shmalloc`, `start_pes`, `_my_pe`).
    Bare,
    /// `shmemx_NAME` alone: an extension with no standard name (`shmemx_wtime`).
    ExtensionOnly,
    /// `rshmemx_NAME` alone: rshmem's GPU host API (`rshmemx_cuda.h`).
    Rshmemx,
}

/// Defines, in a module `$m`, the exported routine `shmem_NAME(args)` and its
/// `pshmem_NAME` entry point from one body, which sees the routine's C name as `$call`;
/// plus `ROUTINE`, its [`Routine`].
///
/// Forms: `c_fn!(m, "name" [, flags]; fn (...) -> R = |call| body)` for an untyped
/// routine; `c_fn!(m, TYPENAME => "op" [, flags]; ...)` for `shmem_TYPENAME_op` (its
/// parameters may use `T`, the element type, which the caller's module defines).
/// Flags: `shmemx` (also `shmemx_NAME`), `shmemx_only` (only `shmemx_NAME`),
/// `no_generic` (left out of the C11 generic and the C++ overloads), `bare` (exported as
/// `NAME` alone, no profiling twin), `rshmemx` (exported as `rshmemx_NAME` alone: the GPU
/// host API of `rshmemx_cuda.h`).
macro_rules! c_fn {
    ($m:ident, $t:ident => $op:literal $(, $flag:ident)*; fn ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? = |$call:ident| $body:expr) => {
        c_fn!(@define $m, concat!(stringify!($t), "_", $op), stringify!($t), $op, [$($flag)*];
            fn ($($arg : $ty),*) $(-> $ret)? = |$call| $body);
    };
    ($m:ident, $cname:expr $(, $flag:ident)*; fn ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? = |$call:ident| $body:expr) => {
        c_fn!(@define $m, $cname, "", $cname, [$($flag)*]; fn ($($arg : $ty),*) $(-> $ret)? = |$call| $body);
    };
    (@define $m:ident, $cname:expr, $typename:expr, $op:expr, [$($flag:ident)*];
        fn ($($arg:ident : $ty:ty),*) $(-> $ret:ty)? = |$call:ident| $body:expr) => {
        #[allow(non_snake_case)]
        pub(crate) mod $m {
            #[allow(unused_imports)]
            use super::*;
            c_fn!(@routine $cname, $typename, $op, false, [$($flag)*]; fn ($($arg : $ty),*) $(-> $ret)?);
            #[inline(always)]
            unsafe fn implementation($call: &'static str, $($arg: $ty),*) $(-> $ret)? {
                #[allow(unused_unsafe)]
                unsafe { $body }
            }
            c_fn!(@entry [$($flag)*], $cname; fn ($($arg : $ty),*) $(-> $ret)?);
        }
    };
    // The `ROUTINE` constant: the routine's description.
    (@routine $cname:expr, $typename:expr, $op:expr, $ctx:literal, [$($flag:ident)*]; fn ($($arg:ident : $ty:ty),*) $(-> $ret:ty)?) => {
        /// This routine's description.
        pub(crate) const ROUTINE: $crate::routine::Routine = $crate::routine::Routine {
            name: $cname,
            typename: $typename,
            op: $op,
            generic: !c_fn!(@has no_generic [$($flag)*]) && !$typename.is_empty(),
            ctx: $ctx,
            shmemx: c_fn!(@has shmemx [$($flag)*]) || c_fn!(@has shmemx_only [$($flag)*]),
            naming: if c_fn!(@has rshmemx [$($flag)*]) {
                $crate::routine::Naming::Rshmemx
            } else if c_fn!(@has bare [$($flag)*]) {
                $crate::routine::Naming::Bare
            } else if c_fn!(@has shmemx_only [$($flag)*]) {
                $crate::routine::Naming::ExtensionOnly
            } else {
                $crate::routine::Naming::Shmem
            },
            ret: concat!("", $(stringify!($ret))?),
            params: &[$((stringify!($arg), stringify!($ty))),*],
        };
    };
    // The exported entry points: `bare` names, `shmemx_only`, or shmem_/pshmem_ (and
    // shmemx_ with `shmemx`).
    (@entry [$($flag:ident)*], $cname:expr; fn ($($arg:ident : $ty:ty),*) $(-> $ret:ty)?) => {
        c_fn!(@entry_if rshmemx [$($flag)*] {
            #[export_name = concat!("rshmemx_", $cname)]
            pub unsafe extern "C" fn rshmemx($($arg: $ty),*) $(-> $ret)? {
                unsafe { implementation(concat!("rshmemx_", $cname), $($arg),*) }
            }
        } else {
            c_fn!(@entry_std [$($flag)*], $cname; fn ($($arg : $ty),*) $(-> $ret)?);
        });
    };
    (@entry_std [$($flag:ident)*], $cname:expr; fn ($($arg:ident : $ty:ty),*) $(-> $ret:ty)?) => {
        c_fn!(@entry_if bare [$($flag)*] {
            #[export_name = $cname]
            pub unsafe extern "C" fn bare($($arg: $ty),*) $(-> $ret)? {
                unsafe { implementation($cname, $($arg),*) }
            }
        } else {
            c_fn!(@entry_if shmemx_only [$($flag)*] {} else {
                #[export_name = concat!("shmem_", $cname)]
                pub unsafe extern "C" fn plain($($arg: $ty),*) $(-> $ret)? {
                    unsafe { implementation(concat!("shmem_", $cname), $($arg),*) }
                }
                #[export_name = concat!("pshmem_", $cname)]
                pub unsafe extern "C" fn profiled_plain($($arg: $ty),*) $(-> $ret)? {
                    unsafe { implementation(concat!("shmem_", $cname), $($arg),*) }
                }
            });
        });
        c_fn!(@entry_if shmemx [$($flag)*] {
            #[export_name = concat!("shmemx_", $cname)]
            pub unsafe extern "C" fn extension($($arg: $ty),*) $(-> $ret)? {
                unsafe { implementation(concat!("shmemx_", $cname), $($arg),*) }
            }
        } else {});
        c_fn!(@entry_if shmemx_only [$($flag)*] {
            #[export_name = concat!("shmemx_", $cname)]
            pub unsafe extern "C" fn extension($($arg: $ty),*) $(-> $ret)? {
                unsafe { implementation(concat!("shmemx_", $cname), $($arg),*) }
            }
        } else {});
    };
    // Whether a flag is in the list (a `bool` expression).
    (@has $want:ident []) => { false };
    (@has shmemx [shmemx $($rest:ident)*]) => { true };
    (@has no_generic [no_generic $($rest:ident)*]) => { true };
    (@has bare [bare $($rest:ident)*]) => { true };
    (@has shmemx_only [shmemx_only $($rest:ident)*]) => { true };
    (@has rshmemx [rshmemx $($rest:ident)*]) => { true };
    (@has $want:ident [$other:ident $($rest:ident)*]) => { c_fn!(@has $want [$($rest)*]) };
    // Items for a flag that is in the list, or the others.
    (@entry_if $want:ident [] { $($yes:item)* } else { $($no:item)* }) => { $($no)* };
    (@entry_if shmemx [shmemx $($rest:ident)*] { $($yes:item)* } else { $($no:item)* }) => { $($yes)* };
    (@entry_if bare [bare $($rest:ident)*] { $($yes:item)* } else { $($no:item)* }) => { $($yes)* };
    (@entry_if shmemx_only [shmemx_only $($rest:ident)*] { $($yes:item)* } else { $($no:item)* }) => { $($yes)* };
    (@entry_if rshmemx [rshmemx $($rest:ident)*] { $($yes:item)* } else { $($no:item)* }) => { $($yes)* };
    (@entry_if $want:ident [$other:ident $($rest:ident)*] { $($yes:item)* } else { $($no:item)* }) => {
        c_fn!(@entry_if $want [$($rest)*] { $($yes)* } else { $($no)* });
    };
}

/// Defines, in a module `$m`, the pair `shmem_ctx_NAME(ctx, args)` and `shmem_NAME(args)`
/// (the latter on `SHMEM_CTX_DEFAULT`) from one body, which sees the routine's C name as
/// `$call` and the context handle as `$ctx`; plus the `pshmem_` entry points and
/// `ROUTINE`. The forms and flags are those of `c_fn!`.
macro_rules! c_pair {
    ($m:ident, $t:ident => $op:literal $(, $flag:ident)*; fn ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? = |$call:ident, $ctx:ident| $body:expr) => {
        c_pair!(@define $m, concat!(stringify!($t), "_", $op), stringify!($t), $op, [$($flag)*];
            fn ($($arg : $ty),*) $(-> $ret)? = |$call, $ctx| $body);
    };
    ($m:ident, $cname:expr $(, $flag:ident)*; fn ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? = |$call:ident, $ctx:ident| $body:expr) => {
        c_pair!(@define $m, $cname, "", $cname, [$($flag)*]; fn ($($arg : $ty),*) $(-> $ret)? = |$call, $ctx| $body);
    };
    (@define $m:ident, $cname:expr, $typename:expr, $op:expr, [$($flag:ident)*];
        fn ($($arg:ident : $ty:ty),*) $(-> $ret:ty)? = |$call:ident, $ctx:ident| $body:expr) => {
        #[allow(non_snake_case)]
        pub(crate) mod $m {
            #[allow(unused_imports)]
            use super::*;
            c_fn!(@routine $cname, $typename, $op, true, [$($flag)*]; fn ($($arg : $ty),*) $(-> $ret)?);
            #[inline(always)]
            unsafe fn implementation($call: &'static str, $ctx: $crate::handle::CtxHandle, $($arg: $ty),*) $(-> $ret)? {
                #[allow(unused_unsafe)]
                unsafe { $body }
            }
            #[export_name = concat!("shmem_ctx_", $cname)]
            pub unsafe extern "C" fn ctx_form(ctx: $crate::handle::CtxHandle, $($arg: $ty),*) $(-> $ret)? {
                unsafe { implementation(concat!("shmem_ctx_", $cname), ctx, $($arg),*) }
            }
            #[export_name = concat!("shmem_", $cname)]
            pub unsafe extern "C" fn plain($($arg: $ty),*) $(-> $ret)? {
                unsafe { implementation(concat!("shmem_", $cname), $crate::handle::DEFAULT, $($arg),*) }
            }
            #[export_name = concat!("pshmem_ctx_", $cname)]
            pub unsafe extern "C" fn profiled_ctx_form(ctx: $crate::handle::CtxHandle, $($arg: $ty),*) $(-> $ret)? {
                unsafe { implementation(concat!("shmem_ctx_", $cname), ctx, $($arg),*) }
            }
            #[export_name = concat!("pshmem_", $cname)]
            pub unsafe extern "C" fn profiled_plain($($arg: $ty),*) $(-> $ret)? {
                unsafe { implementation(concat!("shmem_", $cname), $crate::handle::DEFAULT, $($arg),*) }
            }
            c_fn!(@entry_if shmemx [$($flag)*] {
                #[export_name = concat!("shmemx_ctx_", $cname)]
                pub unsafe extern "C" fn extension_ctx_form(ctx: $crate::handle::CtxHandle, $($arg: $ty),*) $(-> $ret)? {
                    unsafe { implementation(concat!("shmemx_ctx_", $cname), ctx, $($arg),*) }
                }
                #[export_name = concat!("shmemx_", $cname)]
                pub unsafe extern "C" fn extension($($arg: $ty),*) $(-> $ret)? {
                    unsafe { implementation(concat!("shmemx_", $cname), $crate::handle::DEFAULT, $($arg),*) }
                }
            } else {});
        }
    };
}

/// Expands, for a list of `c_fn!`/`c_pair!` modules, to their [`Routine`]s as
/// `&[Routine]`.
macro_rules! routines {
    ($($($seg:ident)::+),* $(,)?) => { &[$($($seg)::+::ROUTINE),*] };
}
