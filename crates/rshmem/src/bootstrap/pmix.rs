//! The bootstrap of a job started by a PMIx launcher (`mpirun` of Open MPI, `prterun`,
//! Slurm's `srun --mpi=pmix`).
//!
//! Nothing PMIx is needed to build the crate: [`PmixBootstrap::init`] opens `libpmix.so.2`
//! with `dlopen` and looks up the few client calls it uses. The structs mirror PMIx 4's
//! `pmix_common.h` (layouts checked by the test below against the C header's
//! `sizeof`/`offsetof`, PMIx 4.2).
//!
//! * rank and size: `PMIx_Init` fills in this process's name; `PMIx_Get(PMIX_JOB_SIZE)`.
//! * allgather: each round puts a byte object under its own key (`rshmem.ag.<round>`),
//!   commits, fences with `PMIX_COLLECT_DATA` and gets every rank's value.
//! * barrier: `PMIx_Fence` without data. abort: `PMIx_Abort`. finalize: `PMIx_Finalize`.
//! * allgather_fd: PMIx cannot carry descriptors, so the ranks exchange (pid, fd number)
//!   and open `/proc/<pid>/fd/<fd>` (same host, same user), or else take a duplicate
//!   with `pidfd_getfd` ([`super::peer_fd`]). Every rank learns whether every other rank
//!   succeeded.

#![allow(non_camel_case_types, non_snake_case)]

use super::Bootstrap;
use crate::error::{Error, Result};
use rustix::fd::{BorrowedFd, OwnedFd};
use std::ffi::{c_char, c_int, c_void, CStr};

/// `pmix_status_t`.
type pmix_status_t = c_int;
/// `PMIX_SUCCESS`.
const PMIX_SUCCESS: pmix_status_t = 0;
/// `PMIX_MAX_NSLEN`.
const PMIX_MAX_NSLEN: usize = 255;
/// `PMIX_MAX_KEYLEN`.
const PMIX_MAX_KEYLEN: usize = 511;
/// `PMIX_RANK_WILDCARD`.
const PMIX_RANK_WILDCARD: u32 = u32::MAX - 1;
/// `PMIX_BOOL`.
const PMIX_BOOL: u16 = 1;
/// `PMIX_SIZE`.
const PMIX_SIZE: u16 = 4;
/// `PMIX_UINT32`.
const PMIX_UINT32: u16 = 14;
/// `PMIX_BYTE_OBJECT`.
const PMIX_BYTE_OBJECT: u16 = 27;
/// `PMIX_GLOBAL` (`pmix_scope_t`): share with every process of the job.
const PMIX_GLOBAL: u8 = 3;
/// The library's file name (PMIx 2 and later keep this soname).
const LIB: &str = "libpmix.so.2";

/// `pmix_proc_t`: a namespace and a rank.
#[repr(C)]
#[derive(Clone, Copy)]
struct pmix_proc_t {
    nspace: [c_char; PMIX_MAX_NSLEN + 1],
    rank: u32,
}

/// `pmix_byte_object_t`.
#[repr(C)]
#[derive(Clone, Copy)]
struct pmix_byte_object_t {
    bytes: *mut c_char,
    size: usize,
}

/// `pmix_value_t`: a type tag and a 24-byte union (only the members used here are named).
#[repr(C)]
#[derive(Clone, Copy)]
struct pmix_value_t {
    ty: u16,
    data: ValueData,
}

#[repr(C)]
#[derive(Clone, Copy)]
union ValueData {
    flag: bool,
    uint32: u32,
    size: usize,
    bo: pmix_byte_object_t,
    _union_size: [u64; 3],
}

/// `pmix_info_t`: a key, directives and a value.
#[repr(C)]
struct pmix_info_t {
    key: [c_char; PMIX_MAX_KEYLEN + 1],
    flags: u32,
    value: pmix_value_t,
}

/// A NUL-terminated key buffer (`pmix_key_t`).
fn key(k: &str) -> [c_char; PMIX_MAX_KEYLEN + 1] {
    let mut out = [0 as c_char; PMIX_MAX_KEYLEN + 1];
    for (o, b) in out.iter_mut().zip(k.bytes().take(PMIX_MAX_KEYLEN)) {
        *o = b as c_char;
    }
    out
}

extern "C" {
    /// The C library's `free` (PMIx allocates the values `PMIx_Get` returns with malloc).
    fn free(p: *mut c_void);
}

macro_rules! pmix_functions {
    ($($name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// Function pointers into a loaded libpmix (which keeps the library open).
        struct Pmix {
            _lib: libloading::Library,
            $(
                $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,
            )*
        }

        impl Pmix {
            /// Opens libpmix and looks up every function the bootstrap uses.
            fn load() -> std::result::Result<Pmix, String> {
                // SAFETY: loading libpmix runs its initializers, which only set up its own
                // state; it is a system library meant to be loaded this way.
                let lib = unsafe { libloading::Library::new(LIB) }.map_err(|e| format!("cannot load {LIB} ({e})"))?;
                $(
                    // SAFETY: the symbol is libpmix's function of this name, whose C
                    // signature the pointer type mirrors (PMIx 4 `pmix.h`).
                    let $name = unsafe {
                        *lib.get::<unsafe extern "C" fn($($arg),*) $(-> $ret)?>(concat!(stringify!($name), "\0").as_bytes())
                            .map_err(|e| format!("{LIB} lacks {} ({e})", stringify!($name)))?
                    };
                )*
                Ok(Pmix { _lib: lib, $($name),* })
            }
        }
    };
}

pmix_functions! {
    PMIx_Init: fn(*mut pmix_proc_t, *mut pmix_info_t, usize) -> pmix_status_t;
    PMIx_Finalize: fn(*const pmix_info_t, usize) -> pmix_status_t;
    PMIx_Abort: fn(c_int, *const c_char, *mut pmix_proc_t, usize) -> pmix_status_t;
    PMIx_Put: fn(u8, *const c_char, *mut pmix_value_t) -> pmix_status_t;
    PMIx_Commit: fn() -> pmix_status_t;
    PMIx_Fence: fn(*const pmix_proc_t, usize, *const pmix_info_t, usize) -> pmix_status_t;
    PMIx_Get: fn(*const pmix_proc_t, *const c_char, *const pmix_info_t, usize, *mut *mut pmix_value_t) -> pmix_status_t;
    PMIx_Error_string: fn(pmix_status_t) -> *const c_char;
    PMIx_Value_destruct: fn(*mut pmix_value_t);
}

impl Pmix {
    /// PMIx's text for a status.
    fn status_text(&self, status: pmix_status_t) -> String {
        // SAFETY: PMIx_Error_string returns a static NUL-terminated string for any status.
        let p = unsafe { (self.PMIx_Error_string)(status) };
        if p.is_null() {
            format!("status {status}")
        } else {
            // SAFETY: non-null, static and NUL-terminated (above).
            format!("{} ({status})", unsafe { CStr::from_ptr(p) }.to_string_lossy())
        }
    }
}

/// A process of a job started by a PMIx launcher.
pub struct PmixBootstrap {
    pmix: Pmix,
    me: pmix_proc_t,
    rank: usize,
    size: usize,
    round: u64,
    finalized: bool,
}

// SAFETY: the PMIx client library is thread-safe (it runs its own progress thread and
// serializes calls internally); the struct holds only plain data and function pointers.
unsafe impl Send for PmixBootstrap {}

impl std::fmt::Debug for PmixBootstrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PmixBootstrap").field("rank", &self.rank).field("size", &self.size).finish()
    }
}

impl PmixBootstrap {
    /// Loads libpmix, connects to the launcher's PMIx server and learns rank and size.
    pub fn init() -> Result<Self> {
        let pmix = Pmix::load().map_err(|e| {
            Error::Bootstrap(format!(
                "the environment says a PMIx launcher started this process (PMIX_RANK/PMIX_NAMESPACE), but {e}; \
                 install libpmix2 (Debian/Ubuntu) or start the job with rshmemrun"
            ))
        })?;
        let mut me = pmix_proc_t { nspace: [0; PMIX_MAX_NSLEN + 1], rank: 0 };
        // SAFETY: `me` is a valid pmix_proc_t for PMIx to fill; no info array is passed.
        let rc = unsafe { (pmix.PMIx_Init)(&mut me, std::ptr::null_mut(), 0) };
        if rc != PMIX_SUCCESS {
            return Err(Error::Bootstrap(format!(
                "PMIx_Init failed: {}; the PMIx server of the launcher cannot be reached",
                pmix.status_text(rc)
            )));
        }
        let mut b = PmixBootstrap { pmix, me, rank: me.rank as usize, size: 0, round: 0, finalized: false };
        let wild = pmix_proc_t { nspace: me.nspace, rank: PMIX_RANK_WILDCARD };
        let v = b.get(&wild, "pmix.job.size")?;
        // SAFETY: the union member read is the one the type tag names.
        b.size = match v.ty {
            PMIX_UINT32 => (unsafe { v.data.uint32 }) as usize,
            PMIX_SIZE => unsafe { v.data.size },
            t => return Err(Error::Bootstrap(format!("PE {}: PMIX_JOB_SIZE has PMIx type {t}, not a number", b.rank))),
        };
        if b.size == 0 || b.rank >= b.size {
            return Err(Error::Bootstrap(format!("PMIx says rank {} of {} processes", b.rank, b.size)));
        }
        Ok(b)
    }

    fn check(&self, call: &str, rc: pmix_status_t) -> Result<()> {
        if rc == PMIX_SUCCESS {
            Ok(())
        } else {
            Err(Error::Bootstrap(format!("PE {}: {call} failed: {}", self.rank, self.pmix.status_text(rc))))
        }
    }

    /// `PMIx_Get` of `k` for `proc`: a copy of the value, whose heap data (a byte
    /// object's bytes) has been moved into `bytes` when there is any.
    fn get_value(&self, proc_: &pmix_proc_t, k: &str) -> Result<(pmix_value_t, Option<Vec<u8>>)> {
        let kb = key(k);
        let mut out: *mut pmix_value_t = std::ptr::null_mut();
        // SAFETY: proc and key are valid for the call; PMIx stores a malloc'ed value in `out`.
        let rc = unsafe { (self.pmix.PMIx_Get)(proc_, kb.as_ptr(), std::ptr::null(), 0, &mut out) };
        self.check(&format!("PMIx_Get({k}, rank {})", proc_.rank), rc)?;
        if out.is_null() {
            return Err(Error::Bootstrap(format!("PE {}: PMIx_Get({k}) returned no value", self.rank)));
        }
        // SAFETY: PMIx returned a valid value; it is copied out before being released.
        let v = unsafe { *out };
        let bytes = if v.ty == PMIX_BYTE_OBJECT {
            // SAFETY: the tag says the union holds a byte object of `size` bytes at `bytes`.
            let bo = unsafe { v.data.bo };
            Some(if bo.bytes.is_null() || bo.size == 0 {
                Vec::new()
            } else {
                // SAFETY: (above) `bytes` points at `size` readable bytes.
                unsafe { std::slice::from_raw_parts(bo.bytes as *const u8, bo.size) }.to_vec()
            })
        } else {
            None
        };
        // SAFETY: PMIX_VALUE_RELEASE: destruct the value's contents, then free the value.
        unsafe {
            (self.pmix.PMIx_Value_destruct)(out);
            free(out as *mut c_void);
        }
        Ok((v, bytes))
    }

    fn get(&self, proc_: &pmix_proc_t, k: &str) -> Result<pmix_value_t> {
        let (v, bytes) = self.get_value(proc_, k)?;
        if bytes.is_some() {
            return Err(Error::Bootstrap(format!("PE {}: PMIx_Get({k}) returned bytes, not a number", self.rank)));
        }
        Ok(v)
    }

    fn fence(&self, collect: bool) -> Result<()> {
        let all = pmix_proc_t { nspace: self.me.nspace, rank: PMIX_RANK_WILDCARD };
        let info =
            pmix_info_t { key: key("pmix.collect"), flags: 0, value: pmix_value_t { ty: PMIX_BOOL, data: ValueData { flag: true } } };
        let (ip, n) = if collect { (&info as *const pmix_info_t, 1) } else { (std::ptr::null(), 0) };
        // SAFETY: one proc and at most one info, valid for the call.
        let rc = unsafe { (self.pmix.PMIx_Fence)(&all, 1, ip, n) };
        self.check("PMIx_Fence", rc)
    }
}

impl Bootstrap for PmixBootstrap {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn allgather(&mut self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        let k = format!("rshmem.ag.{}", self.round);
        self.round += 1;
        // A leading byte keeps the object non-empty (an empty one may come back as none).
        let mut payload = Vec::with_capacity(mine.len() + 1);
        payload.push(1u8);
        payload.extend_from_slice(mine);
        let mut v = pmix_value_t {
            ty: PMIX_BYTE_OBJECT,
            data: ValueData { bo: pmix_byte_object_t { bytes: payload.as_mut_ptr() as *mut c_char, size: payload.len() } },
        };
        let kb = key(&k);
        // SAFETY: key and value are valid for the call; PMIx copies the bytes.
        let rc = unsafe { (self.pmix.PMIx_Put)(PMIX_GLOBAL, kb.as_ptr(), &mut v) };
        self.check(&format!("PMIx_Put({k})"), rc)?;
        // SAFETY: no arguments.
        let rc = unsafe { (self.pmix.PMIx_Commit)() };
        self.check("PMIx_Commit", rc)?;
        self.fence(true)?;
        (0..self.size)
            .map(|r| {
                let p = pmix_proc_t { nspace: self.me.nspace, rank: r as u32 };
                match self.get_value(&p, &k)? {
                    (_, Some(b)) if b.first() == Some(&1) => Ok(b[1..].to_vec()),
                    (v, _) => Err(Error::Bootstrap(format!(
                        "PE {}: allgather: rank {r}'s {k} is not this bootstrap's (PMIx type {})",
                        self.rank, v.ty
                    ))),
                }
            })
            .collect()
    }
    fn barrier(&mut self) -> Result<()> {
        self.fence(false)
    }
    fn allgather_fd(&mut self, fd: BorrowedFd<'_>) -> Result<Vec<OwnedFd>> {
        let all = vec![true; self.size];
        Ok(self.allgather_fd_from(fd, &all)?.into_iter().flatten().collect())
    }
    fn allgather_fd_from(&mut self, fd: BorrowedFd<'_>, from: &[bool]) -> Result<Vec<Option<OwnedFd>>> {
        super::peer_fd::allgather_fd_by_pid(self, "PMIx", fd, from)
    }
    fn finalize(&mut self) -> Result<()> {
        if self.finalized {
            return Ok(());
        }
        self.finalized = true;
        // SAFETY: no info array.
        let rc = unsafe { (self.pmix.PMIx_Finalize)(std::ptr::null(), 0) };
        self.check("PMIx_Finalize", rc)
    }
    fn abort(&mut self, code: i32, msg: &str) -> ! {
        crate::log::line(&format!("rshmem: PE {} aborts the job ({code}): {msg}", self.rank));
        let text: Vec<u8> = msg.bytes().filter(|&b| b != 0).chain(std::iter::once(0)).collect();
        // SAFETY: a NUL-terminated message; no proc array means the whole namespace.
        unsafe { (self.pmix.PMIx_Abort)(code, text.as_ptr() as *const c_char, std::ptr::null_mut(), 0) };
        // The launcher ends every process; exit in case it has not yet.
        std::process::exit(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// Sizes and offsets printed by a C program against PMIx 4.2's `pmix_common.h`.
    #[test]
    fn layouts_match_the_c_header() {
        assert_eq!(size_of::<pmix_proc_t>(), 260);
        assert_eq!(offset_of!(pmix_proc_t, rank), 256);
        assert_eq!(size_of::<pmix_value_t>(), 32);
        assert_eq!(offset_of!(pmix_value_t, data), 8);
        assert_eq!(size_of::<pmix_byte_object_t>(), 16);
        assert_eq!(size_of::<pmix_info_t>(), 552);
        assert_eq!(offset_of!(pmix_info_t, flags), 512);
        assert_eq!(offset_of!(pmix_info_t, value), 520);
    }

    #[test]
    fn keys_are_nul_terminated_and_cut_to_the_maximum() {
        let k = key("rshmem.ag.7");
        assert_eq!(k[..11].iter().map(|&c| c as u8).collect::<Vec<_>>(), b"rshmem.ag.7");
        assert_eq!(k[11], 0);
        let long = key(&"x".repeat(600));
        assert_eq!(long[PMIX_MAX_KEYLEN], 0);
    }
}
