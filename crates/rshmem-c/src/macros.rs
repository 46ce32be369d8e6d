//! Helpers that define exported C functions.
//!
//! Every routine is exported twice: as `shmem_NAME` and, for the OpenSHMEM profiling
//! interface, as `pshmem_NAME` (a tool that defines its own `shmem_NAME` calls ours by
//! the shifted name). Both are thin entry points over one private implementation: an
//! exported function is never called through its symbol from inside the library, so a
//! tool's `shmem_NAME` cannot be re-entered by our `pshmem_NAME`.

/// Defines, in a module `$m`, the pair `shmem_ctx_NAME(ctx, args)` and
/// `shmem_NAME(args)` (the latter on `SHMEM_CTX_DEFAULT`) from one body, which sees the
/// routine's C name as `$call` and the context handle as `$ctx`; plus the `pshmem_`
/// entry points.
macro_rules! c_pair {
    ($m:ident, $cname:expr; fn ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? = |$call:ident, $ctx:ident| $body:expr) => {
        pub(crate) mod $m {
            #[allow(unused_imports)]
            use super::*;
            #[inline(always)]
            unsafe fn implementation($call: &'static str, $ctx: $crate::state::CtxHandle, $($arg: $ty),*) $(-> $ret)? {
                #[allow(unused_unsafe)]
                unsafe { $body }
            }
            #[export_name = concat!("shmem_ctx_", $cname)]
            pub unsafe extern "C" fn ctx_form(ctx: $crate::state::CtxHandle, $($arg: $ty),*) $(-> $ret)? {
                unsafe { implementation(concat!("shmem_ctx_", $cname), ctx, $($arg),*) }
            }
            #[export_name = concat!("shmem_", $cname)]
            pub unsafe extern "C" fn plain($($arg: $ty),*) $(-> $ret)? {
                unsafe { implementation(concat!("shmem_", $cname), $crate::state::DEFAULT, $($arg),*) }
            }
            #[export_name = concat!("pshmem_ctx_", $cname)]
            pub unsafe extern "C" fn profiled_ctx_form(ctx: $crate::state::CtxHandle, $($arg: $ty),*) $(-> $ret)? {
                unsafe { implementation(concat!("shmem_ctx_", $cname), ctx, $($arg),*) }
            }
            #[export_name = concat!("pshmem_", $cname)]
            pub unsafe extern "C" fn profiled_plain($($arg: $ty),*) $(-> $ret)? {
                unsafe { implementation(concat!("shmem_", $cname), $crate::state::DEFAULT, $($arg),*) }
            }
        }
    };
}

/// Defines, in a module `$m`, the exported function `shmem_NAME(args)` and its
/// `pshmem_NAME` entry point; the body sees the routine's C name as `$call`.
macro_rules! c_fn {
    ($m:ident, $cname:expr; fn ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? = |$call:ident| $body:expr) => {
        pub(crate) mod $m {
            #[allow(unused_imports)]
            use super::*;
            #[inline(always)]
            unsafe fn implementation($call: &'static str, $($arg: $ty),*) $(-> $ret)? {
                #[allow(unused_unsafe)]
                unsafe { $body }
            }
            #[export_name = concat!("shmem_", $cname)]
            pub unsafe extern "C" fn plain($($arg: $ty),*) $(-> $ret)? {
                unsafe { implementation(concat!("shmem_", $cname), $($arg),*) }
            }
            #[export_name = concat!("pshmem_", $cname)]
            pub unsafe extern "C" fn profiled_plain($($arg: $ty),*) $(-> $ret)? {
                unsafe { implementation(concat!("shmem_", $cname), $($arg),*) }
            }
        }
    };
}
