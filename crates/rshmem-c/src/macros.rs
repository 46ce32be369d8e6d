//! Helpers that define exported C functions.

/// Defines, in a module `$m`, the pair `shmem_ctx_NAME(ctx, args)` and
/// `shmem_NAME(args)` (the latter on `SHMEM_CTX_DEFAULT`) from one body, which sees the
/// routine's C name as `$call` and the context handle as `$ctx`.
macro_rules! c_pair {
    ($m:ident, $cname:expr; fn ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? = |$call:ident, $ctx:ident| $body:expr) => {
        pub(crate) mod $m {
            #[allow(unused_imports)]
            use super::*;
            #[export_name = concat!("shmem_ctx_", $cname)]
            pub unsafe extern "C" fn ctx_form($ctx: $crate::state::CtxHandle, $($arg: $ty),*) $(-> $ret)? {
                let $call: &'static str = concat!("shmem_ctx_", $cname);
                #[allow(unused_unsafe)]
                unsafe { $body }
            }
            #[export_name = concat!("shmem_", $cname)]
            pub unsafe extern "C" fn plain($($arg: $ty),*) $(-> $ret)? {
                let $call: &'static str = concat!("shmem_", $cname);
                let $ctx = $crate::state::DEFAULT;
                #[allow(unused_unsafe)]
                unsafe { $body }
            }
        }
    };
}

/// Defines, in a module `$m`, the single exported function `shmem_NAME(args)`; the body
/// sees the routine's C name as `$call`.
macro_rules! c_fn {
    ($m:ident, $cname:expr; fn ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? = |$call:ident| $body:expr) => {
        pub(crate) mod $m {
            #[allow(unused_imports)]
            use super::*;
            #[export_name = concat!("shmem_", $cname)]
            pub unsafe extern "C" fn plain($($arg: $ty),*) $(-> $ret)? {
                let $call: &'static str = concat!("shmem_", $cname);
                #[allow(unused_unsafe)]
                unsafe { $body }
            }
        }
    };
}
