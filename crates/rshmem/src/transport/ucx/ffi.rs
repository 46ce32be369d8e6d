//! The few libucp entry points the UCX transport uses, loaded at run time.
//!
//! Nothing UCX is needed to build the crate: [`Ucp::load`] opens `libucp.so.0` with
//! `dlopen` and looks the functions up. The parameter structs mirror UCX 1.13's
//! `ucp.h` (layouts checked by the size tests below against the C header's
//! `sizeof`/`offsetof`); fields are only read by UCX when their bit is set in the
//! struct's field mask, and newer UCX releases keep the layout (they only append).

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

/// `ucs_status_t`: 0 is OK, 1 in progress, negative values are errors.
pub type ucs_status_t = c_int;
/// `UCS_OK`.
pub const UCS_OK: ucs_status_t = 0;
/// `UCS_INPROGRESS`.
pub const UCS_INPROGRESS: ucs_status_t = 1;
/// `UCS_ERR_BUSY` (from `ucp_worker_arm`: events are pending, progress again).
pub const UCS_ERR_BUSY: ucs_status_t = -15;
/// Most negative status: a returned pointer in `[-100, 0)` as an integer is an error.
const UCS_ERR_LAST: isize = -100;

/// Opaque handles.
pub type ucp_context_h = *mut c_void;
/// A worker.
pub type ucp_worker_h = *mut c_void;
/// An endpoint.
pub type ucp_ep_h = *mut c_void;
/// A registered memory region.
pub type ucp_mem_h = *mut c_void;
/// An unpacked remote key.
pub type ucp_rkey_h = *mut c_void;
/// A library configuration.
pub type ucp_config_t = c_void;
/// A worker address blob.
pub type ucp_address_t = c_void;

/// `UCP_PARAM_FIELD_FEATURES`.
pub const UCP_PARAM_FIELD_FEATURES: u64 = 1 << 0;
/// `UCP_PARAM_FIELD_MT_WORKERS_SHARED`.
pub const UCP_PARAM_FIELD_MT_WORKERS_SHARED: u64 = 1 << 5;
/// `UCP_FEATURE_RMA`.
pub const UCP_FEATURE_RMA: u64 = 1 << 1;
/// `UCP_FEATURE_AMO32`.
pub const UCP_FEATURE_AMO32: u64 = 1 << 2;
/// `UCP_FEATURE_AMO64`.
pub const UCP_FEATURE_AMO64: u64 = 1 << 3;
/// `UCP_FEATURE_WAKEUP`.
pub const UCP_FEATURE_WAKEUP: u64 = 1 << 4;

/// `UCP_FEATURE_AM`.
pub const UCP_FEATURE_AM: u64 = 1 << 6;

/// `UCP_AM_HANDLER_PARAM_FIELD_ID`.
pub const UCP_AM_HANDLER_PARAM_FIELD_ID: u64 = 1 << 0;
/// `UCP_AM_HANDLER_PARAM_FIELD_FLAGS`.
pub const UCP_AM_HANDLER_PARAM_FIELD_FLAGS: u64 = 1 << 1;
/// `UCP_AM_HANDLER_PARAM_FIELD_CB`.
pub const UCP_AM_HANDLER_PARAM_FIELD_CB: u64 = 1 << 2;
/// `UCP_AM_HANDLER_PARAM_FIELD_ARG`.
pub const UCP_AM_HANDLER_PARAM_FIELD_ARG: u64 = 1 << 3;
/// `UCP_AM_FLAG_WHOLE_MSG`: the callback sees each message whole, not in fragments.
pub const UCP_AM_FLAG_WHOLE_MSG: u32 = 1 << 0;
/// `UCP_AM_SEND_FLAG_EAGER`: eager protocol only (the data arrives inside the callback).
pub const UCP_AM_SEND_FLAG_EAGER: u32 = 1 << 1;
/// `UCP_AM_RECV_ATTR_FLAG_RNDV`: the callback got a rendezvous descriptor, not data.
pub const UCP_AM_RECV_ATTR_FLAG_RNDV: u64 = 1 << 17;

/// `ucp_am_recv_callback_t`.
pub type ucp_am_recv_callback_t = unsafe extern "C" fn(
    arg: *mut c_void,
    header: *const c_void,
    header_length: usize,
    data: *mut c_void,
    length: usize,
    param: *const ucp_am_recv_param_t,
) -> ucs_status_t;

/// `ucp_am_handler_param_t`.
#[repr(C)]
pub struct ucp_am_handler_param_t {
    /// Which fields are set.
    pub field_mask: u64,
    /// Active message id.
    pub id: c_uint,
    /// `UCP_AM_FLAG_*`.
    pub flags: u32,
    /// The callback.
    pub cb: Option<ucp_am_recv_callback_t>,
    /// Its first argument.
    pub arg: *mut c_void,
}

/// `ucp_am_recv_param_t`.
#[repr(C)]
pub struct ucp_am_recv_param_t {
    /// `UCP_AM_RECV_ATTR_*` bits.
    pub recv_attr: u64,
    /// Unused here.
    pub reply_ep: ucp_ep_h,
}

/// `UCP_WORKER_PARAM_FIELD_THREAD_MODE`.
pub const UCP_WORKER_PARAM_FIELD_THREAD_MODE: u64 = 1 << 0;
/// `UCS_THREAD_MODE_MULTI`.
pub const UCS_THREAD_MODE_MULTI: c_uint = 2;

/// `UCP_EP_PARAM_FIELD_REMOTE_ADDRESS`.
pub const UCP_EP_PARAM_FIELD_REMOTE_ADDRESS: u64 = 1 << 0;
/// `UCP_EP_CLOSE_FLAG_FORCE`.
pub const UCP_EP_CLOSE_FLAG_FORCE: u32 = 1 << 0;

/// `UCP_MEM_MAP_PARAM_FIELD_ADDRESS`.
pub const UCP_MEM_MAP_PARAM_FIELD_ADDRESS: u64 = 1 << 0;
/// `UCP_MEM_MAP_PARAM_FIELD_LENGTH`.
pub const UCP_MEM_MAP_PARAM_FIELD_LENGTH: u64 = 1 << 1;

/// `UCP_OP_ATTR_FIELD_DATATYPE`.
pub const UCP_OP_ATTR_FIELD_DATATYPE: u32 = 1 << 3;
/// `UCP_OP_ATTR_FIELD_FLAGS`.
pub const UCP_OP_ATTR_FIELD_FLAGS: u32 = 1 << 4;
/// `UCP_OP_ATTR_FIELD_REPLY_BUFFER`.
pub const UCP_OP_ATTR_FIELD_REPLY_BUFFER: u32 = 1 << 5;

/// `ucp_atomic_op_t`.
pub type ucp_atomic_op_t = c_uint;
/// `UCP_ATOMIC_OP_ADD`.
pub const UCP_ATOMIC_OP_ADD: ucp_atomic_op_t = 0;
/// `UCP_ATOMIC_OP_SWAP`.
pub const UCP_ATOMIC_OP_SWAP: ucp_atomic_op_t = 1;
/// `UCP_ATOMIC_OP_CSWAP`.
pub const UCP_ATOMIC_OP_CSWAP: ucp_atomic_op_t = 2;
/// `UCP_ATOMIC_OP_AND`.
pub const UCP_ATOMIC_OP_AND: ucp_atomic_op_t = 3;
/// `UCP_ATOMIC_OP_OR`.
pub const UCP_ATOMIC_OP_OR: ucp_atomic_op_t = 4;
/// `UCP_ATOMIC_OP_XOR`.
pub const UCP_ATOMIC_OP_XOR: ucp_atomic_op_t = 5;

/// `ucp_dt_make_contig(width)`: a contiguous datatype of `width`-byte elements.
pub const fn dt_contig(width: usize) -> u64 {
    (width as u64) << 3
}

/// `ucp_params_t`.
#[repr(C)]
pub struct ucp_params_t {
    /// Which fields are set.
    pub field_mask: u64,
    /// `UCP_FEATURE_*` bits.
    pub features: u64,
    /// Unused here.
    pub request_size: usize,
    /// Unused here.
    pub request_init: *mut c_void,
    /// Unused here.
    pub request_cleanup: *mut c_void,
    /// Unused here.
    pub tag_sender_mask: u64,
    /// Whether workers are shared between threads.
    pub mt_workers_shared: c_int,
    /// Unused here.
    pub estimated_num_eps: usize,
    /// Unused here.
    pub estimated_num_ppn: usize,
    /// Unused here.
    pub name: *const c_char,
}

/// `ucp_worker_params_t`.
#[repr(C)]
pub struct ucp_worker_params_t {
    /// Which fields are set.
    pub field_mask: u64,
    /// `UCS_THREAD_MODE_*`.
    pub thread_mode: c_uint,
    /// Unused here (`ucs_cpu_set_t`: 1024 bits).
    pub cpu_mask: [u64; 16],
    /// Unused here.
    pub events: c_uint,
    /// Unused here.
    pub user_data: *mut c_void,
    /// Unused here.
    pub event_fd: c_int,
    /// Unused here.
    pub flags: u64,
    /// Unused here.
    pub name: *const c_char,
    /// Unused here.
    pub am_alignment: usize,
    /// Unused here.
    pub client_id: u64,
}

/// `ucs_sock_addr_t`.
#[repr(C)]
pub struct ucs_sock_addr_t {
    /// Unused here.
    pub addr: *const c_void,
    /// Unused here.
    pub addrlen: u32,
}

/// `ucp_ep_params_t`.
#[repr(C)]
pub struct ucp_ep_params_t {
    /// Which fields are set.
    pub field_mask: u64,
    /// The peer's worker address.
    pub address: *const ucp_address_t,
    /// `UCP_ERR_HANDLING_MODE_*`.
    pub err_mode: c_uint,
    /// Unused here (`ucp_err_handler_t`: callback and argument).
    pub err_handler: [*mut c_void; 2],
    /// Unused here.
    pub user_data: *mut c_void,
    /// Unused here.
    pub flags: c_uint,
    /// Unused here.
    pub sockaddr: ucs_sock_addr_t,
    /// Unused here.
    pub conn_request: *mut c_void,
    /// Unused here.
    pub name: *const c_char,
    /// Unused here.
    pub local_sockaddr: ucs_sock_addr_t,
}

/// `ucp_mem_map_params_t`.
#[repr(C)]
pub struct ucp_mem_map_params_t {
    /// Which fields are set.
    pub field_mask: u64,
    /// First byte of the region.
    pub address: *mut c_void,
    /// Its length.
    pub length: usize,
    /// Unused here.
    pub flags: c_uint,
    /// Unused here.
    pub prot: c_uint,
    /// Unused here.
    pub memory_type: c_uint,
}

/// `ucp_request_param_t`.
#[repr(C)]
pub struct ucp_request_param_t {
    /// `UCP_OP_ATTR_FIELD_*` bits.
    pub op_attr_mask: u32,
    /// Operation flags.
    pub flags: u32,
    /// Unused here.
    pub request: *mut c_void,
    /// Unused here (completion callback union).
    pub cb: *mut c_void,
    /// Element datatype (atomics: `dt_contig(width)`).
    pub datatype: u64,
    /// Unused here.
    pub user_data: *mut c_void,
    /// Atomics: where the old value goes (and, for CSWAP, the compare value comes from).
    pub reply_buffer: *mut c_void,
    /// Unused here.
    pub memory_type: c_uint,
    /// Unused here.
    pub recv_info: *mut c_void,
    /// Unused here.
    pub memh: *mut c_void,
}

impl ucp_request_param_t {
    /// A parameter block with nothing set.
    pub fn empty() -> Self {
        // SAFETY: every field is an integer or a raw pointer, for which zero is valid.
        unsafe { std::mem::zeroed() }
    }
}

macro_rules! ucp_functions {
    ($($name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// Function pointers into a loaded libucp (which keeps the library open).
        pub struct Ucp {
            _lib: libloading::Library,
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,
            )*
        }

        impl Ucp {
            /// Opens `libucp.so.0` and looks up every function the transport uses.
            pub fn load() -> Result<Ucp, String> {
                // SAFETY: loading libucp runs its initializers, which only set up its own
                // state; it is a system library meant to be loaded this way.
                let lib = unsafe { libloading::Library::new("libucp.so.0") }.map_err(|e| format!("cannot load libucp.so.0 ({e})"))?;
                $(
                    // SAFETY: the symbol is libucp's function of this name, whose C
                    // signature the pointer type mirrors (UCX 1.13 `ucp.h`).
                    let $name = unsafe {
                        *lib.get::<unsafe extern "C" fn($($arg),*) $(-> $ret)?>(concat!(stringify!($name), "\0").as_bytes())
                            .map_err(|e| format!("libucp.so.0 lacks {} ({e}); UCX 1.13 or newer is needed", stringify!($name)))?
                    };
                )*
                Ok(Ucp { _lib: lib, $($name),* })
            }
        }
    };
}

ucp_functions! {
    ucp_config_read: fn(*const c_char, *const c_char, *mut *mut ucp_config_t) -> ucs_status_t;
    ucp_config_release: fn(*mut ucp_config_t);
    ucp_init_version: fn(c_uint, c_uint, *const ucp_params_t, *const ucp_config_t, *mut ucp_context_h) -> ucs_status_t;
    ucp_cleanup: fn(ucp_context_h);
    ucp_worker_create: fn(ucp_context_h, *const ucp_worker_params_t, *mut ucp_worker_h) -> ucs_status_t;
    ucp_worker_destroy: fn(ucp_worker_h);
    ucp_worker_get_address: fn(ucp_worker_h, *mut *mut ucp_address_t, *mut usize) -> ucs_status_t;
    ucp_worker_release_address: fn(ucp_worker_h, *mut ucp_address_t);
    ucp_worker_progress: fn(ucp_worker_h) -> c_uint;
    ucp_worker_get_efd: fn(ucp_worker_h, *mut c_int) -> ucs_status_t;
    ucp_worker_arm: fn(ucp_worker_h) -> ucs_status_t;
    ucp_worker_fence: fn(ucp_worker_h) -> ucs_status_t;
    ucp_ep_create: fn(ucp_worker_h, *const ucp_ep_params_t, *mut ucp_ep_h) -> ucs_status_t;
    ucp_ep_close_nbx: fn(ucp_ep_h, *const ucp_request_param_t) -> *mut c_void;
    ucp_ep_flush_nbx: fn(ucp_ep_h, *const ucp_request_param_t) -> *mut c_void;
    ucp_mem_map: fn(ucp_context_h, *const ucp_mem_map_params_t, *mut ucp_mem_h) -> ucs_status_t;
    ucp_mem_unmap: fn(ucp_context_h, ucp_mem_h) -> ucs_status_t;
    ucp_rkey_pack: fn(ucp_context_h, ucp_mem_h, *mut *mut c_void, *mut usize) -> ucs_status_t;
    ucp_rkey_buffer_release: fn(*mut c_void);
    ucp_ep_rkey_unpack: fn(ucp_ep_h, *const c_void, *mut ucp_rkey_h) -> ucs_status_t;
    ucp_rkey_destroy: fn(ucp_rkey_h);
    ucp_put_nbx: fn(ucp_ep_h, *const c_void, usize, u64, ucp_rkey_h, *const ucp_request_param_t) -> *mut c_void;
    ucp_get_nbx: fn(ucp_ep_h, *mut c_void, usize, u64, ucp_rkey_h, *const ucp_request_param_t) -> *mut c_void;
    ucp_atomic_op_nbx: fn(ucp_ep_h, ucp_atomic_op_t, *const c_void, usize, u64, ucp_rkey_h, *const ucp_request_param_t) -> *mut c_void;
    ucp_worker_set_am_recv_handler: fn(ucp_worker_h, *const ucp_am_handler_param_t) -> ucs_status_t;
    ucp_am_send_nbx: fn(ucp_ep_h, c_uint, *const c_void, usize, *const c_void, usize, *const ucp_request_param_t) -> *mut c_void;
    ucp_request_check_status: fn(*mut c_void) -> ucs_status_t;
    ucp_request_free: fn(*mut c_void);
    ucs_status_string: fn(ucs_status_t) -> *const c_char;
}

/// What a `*_nbx` call returned: done, an error, or a request to wait for.
pub enum Started {
    /// Completed at once (a NULL pointer).
    Done,
    /// Failed at once.
    Failed(ucs_status_t),
    /// In flight.
    Request(*mut c_void),
}

/// Sorts a `*_nbx` return value (`UCS_PTR_IS_ERR` / `UCS_PTR_STATUS`).
pub fn classify(ptr: *mut c_void) -> Started {
    let v = ptr as isize;
    if ptr.is_null() {
        Started::Done
    } else if (UCS_ERR_LAST..0).contains(&v) {
        Started::Failed(v as ucs_status_t)
    } else {
        Started::Request(ptr)
    }
}

impl Ucp {
    /// UCX's text for a status.
    pub fn status_text(&self, status: ucs_status_t) -> String {
        // SAFETY: ucs_status_string returns a static NUL-terminated string for any status.
        let p = unsafe { (self.ucs_status_string)(status) };
        if p.is_null() {
            format!("status {status}")
        } else {
            // SAFETY: non-null, static and NUL-terminated (above).
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// Sizes and offsets printed by a C program against UCX 1.13's `ucp.h`.
    #[test]
    fn layouts_match_the_c_header() {
        assert_eq!(size_of::<ucp_params_t>(), 80);
        assert_eq!(offset_of!(ucp_params_t, mt_workers_shared), 48);
        assert_eq!(offset_of!(ucp_params_t, name), 72);
        assert_eq!(size_of::<ucp_worker_params_t>(), 200);
        assert_eq!(offset_of!(ucp_worker_params_t, thread_mode), 8);
        assert_eq!(offset_of!(ucp_worker_params_t, events), 144);
        assert_eq!(offset_of!(ucp_worker_params_t, client_id), 192);
        assert_eq!(size_of::<ucp_ep_params_t>(), 104);
        assert_eq!(offset_of!(ucp_ep_params_t, err_mode), 16);
        assert_eq!(offset_of!(ucp_ep_params_t, flags), 48);
        assert_eq!(offset_of!(ucp_ep_params_t, name), 80);
        assert_eq!(offset_of!(ucp_ep_params_t, local_sockaddr), 88);
        assert_eq!(size_of::<ucp_mem_map_params_t>(), 40);
        assert_eq!(offset_of!(ucp_mem_map_params_t, memory_type), 32);
        assert_eq!(size_of::<ucp_request_param_t>(), 72);
        assert_eq!(offset_of!(ucp_request_param_t, datatype), 24);
        assert_eq!(offset_of!(ucp_request_param_t, reply_buffer), 40);
        assert_eq!(offset_of!(ucp_request_param_t, memory_type), 48);
        assert_eq!(offset_of!(ucp_request_param_t, memh), 64);
        assert_eq!(dt_contig(4), 32);
        assert_eq!(size_of::<ucp_am_handler_param_t>(), 32);
        assert_eq!(offset_of!(ucp_am_handler_param_t, flags), 12);
        assert_eq!(offset_of!(ucp_am_handler_param_t, arg), 24);
        assert_eq!(size_of::<ucp_am_recv_param_t>(), 16);
    }

    #[test]
    fn nbx_results_are_sorted() {
        assert!(matches!(classify(std::ptr::null_mut()), Started::Done));
        assert!(matches!(classify(-15isize as *mut c_void), Started::Failed(-15)));
        assert!(matches!(classify(0x1000 as *mut c_void), Started::Request(_)));
    }
}
