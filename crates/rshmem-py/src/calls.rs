//! Host-side calls: RMA, signals, atomics, ordering, teams and collectives, on addresses.
//!
//! The Python half passes the data pointer and byte size of arrays and tensors it holds
//! for the duration of the call (and has checked shapes, types and symmetry); every call
//! releases the interpreter while rshmem works.

use crate::errors::{argument, to_py};
use crate::state::ctx;
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;
use rshmem::{Cmp, ReduceDtype, ReduceOp, SignalOp, Team, TeamConfig};
use std::time::Duration;

/// The bytes of a local buffer.
///
/// # Safety
/// `addr..addr + n` must be readable memory of this process that stays alive for `'a`
/// (the Python half passes the data of an array it holds across the call).
unsafe fn bytes<'a>(addr: usize, n: usize) -> &'a [u8] {
    if n == 0 {
        return &[];
    }
    // SAFETY: the caller's contract above.
    unsafe { std::slice::from_raw_parts(addr as *const u8, n) }
}

/// The bytes of a local buffer, for writing.
///
/// # Safety
/// As for [`bytes`], and writable, with no other Rust view of it alive.
#[allow(clippy::mut_from_ref)]
unsafe fn bytes_mut<'a>(addr: usize, n: usize) -> &'a mut [u8] {
    if n == 0 {
        return &mut [];
    }
    // SAFETY: the caller's contract above.
    unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, n) }
}

/// A signal operator by name.
pub fn signal_op(call: &str, name: &str, pe: usize) -> PyResult<SignalOp> {
    match name {
        "set" => Ok(SignalOp::Set),
        "add" => Ok(SignalOp::Add),
        _ => Err(argument(call, "signal_op", format!("`{name}` is not a signal operation (set, add)"), pe)),
    }
}

/// A comparison by name.
pub fn cmp(call: &str, name: &str, pe: usize) -> PyResult<Cmp> {
    Ok(match name {
        "eq" => Cmp::Eq,
        "ne" => Cmp::Ne,
        "gt" => Cmp::Gt,
        "ge" => Cmp::Ge,
        "lt" => Cmp::Lt,
        "le" => Cmp::Le,
        _ => return Err(argument(call, "cmp", format!("`{name}` is not a comparison (eq, ne, gt, ge, lt, le)"), pe)),
    })
}

/// A reduction operator by name.
pub fn reduce_op(call: &str, name: &str, pe: usize) -> PyResult<ReduceOp> {
    Ok(match name {
        "sum" => ReduceOp::Sum,
        "prod" => ReduceOp::Prod,
        "min" => ReduceOp::Min,
        "max" => ReduceOp::Max,
        "and" => ReduceOp::And,
        "or" => ReduceOp::Or,
        "xor" => ReduceOp::Xor,
        _ => return Err(argument(call, "op", format!("`{name}` is not a reduction (sum, prod, min, max, and, or, xor)"), pe)),
    })
}

/// The host reduction type of a dtype name.
fn reduce_dtype(call: &str, name: &str, pe: usize) -> PyResult<ReduceDtype> {
    Ok(match name {
        "int8" => ReduceDtype::I8,
        "int16" => ReduceDtype::I16,
        "int32" => ReduceDtype::I32,
        "int64" => ReduceDtype::I64,
        "uint8" => ReduceDtype::U8,
        "uint16" => ReduceDtype::U16,
        "uint32" => ReduceDtype::U32,
        "uint64" => ReduceDtype::U64,
        "float32" => ReduceDtype::F32,
        "float64" => ReduceDtype::F64,
        _ => {
            return Err(argument(
                call,
                "dst",
                format!("dtype {name} cannot be reduced on the host (int8-64, uint8-64, float32, float64 can)"),
                pe,
            ))
        }
    })
}

fn team(raw: u32) -> Team {
    Team::from_raw(raw)
}

/// Copies `nbytes` from local `src` to `pe`'s symmetric `dst`.
#[pyfunction]
fn putmem(py: Python<'_>, dst: usize, src: usize, nbytes: usize, pe: usize) -> PyResult<()> {
    let c = ctx("put")?;
    // SAFETY: `src` is the data of a host array the caller holds (module contract).
    py.detach(|| c.putmem(dst, unsafe { bytes(src, nbytes) }, pe)).map_err(|e| to_py(e, "put"))
}

/// Copies `nbytes` from `pe`'s symmetric `src` to local `dst`.
#[pyfunction]
fn getmem(py: Python<'_>, dst: usize, src: usize, nbytes: usize, pe: usize) -> PyResult<()> {
    let c = ctx("get")?;
    // SAFETY: `dst` is the data of a writable host array the caller holds.
    py.detach(|| c.getmem(unsafe { bytes_mut(dst, nbytes) }, src, pe)).map_err(|e| to_py(e, "get"))
}

/// A put, then `op` of `value` on `pe`'s signal word `sig`, after the data.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn putmem_signal(py: Python<'_>, dst: usize, src: usize, nbytes: usize, sig: usize, value: u64, op: &str, pe: usize) -> PyResult<()> {
    let c = ctx("put_signal")?;
    let op = signal_op("put_signal", op, c.my_pe())?;
    // SAFETY: `src` is the data of a host array the caller holds.
    py.detach(|| c.putmem_signal(dst, unsafe { bytes(src, nbytes) }, sig, value, op, pe)).map_err(|e| to_py(e, "put_signal"))
}

/// Sets (`op` "set") or adds to (`"add"`) `pe`'s signal word `sig`.
#[pyfunction(name = "signal_op")]
fn signal_update(py: Python<'_>, sig: usize, value: u64, op: &str, pe: usize) -> PyResult<()> {
    let c = ctx("signal_op")?;
    let op = signal_op("signal_op", op, c.my_pe())?;
    py.detach(|| c.signal_op_addr(sig, value, op, pe)).map_err(|e| to_py(e, "signal_op"))
}

/// This PE's signal word at `sig`.
#[pyfunction]
fn signal_fetch(sig: usize) -> PyResult<u64> {
    ctx("signal_fetch")?.signal_fetch_addr(sig).map_err(|e| to_py(e, "signal_fetch"))
}

/// Waits until this PE's signal word compares `cmp_name` to `value` (or `timeout` seconds pass).
#[pyfunction]
#[pyo3(signature = (sig, cmp_name, value, timeout=None))]
fn signal_wait_until(py: Python<'_>, sig: usize, cmp_name: &str, value: u64, timeout: Option<f64>) -> PyResult<u64> {
    let c = ctx("signal_wait_until")?;
    let how = cmp("signal_wait_until", cmp_name, c.my_pe())?;
    let t = timeout.map(|s| Duration::from_secs_f64(s.max(0.0)));
    py.detach(|| c.signal_wait_until_addr(sig, how, value, t)).map_err(|e| to_py(e, "signal_wait_until"))
}

/// One atomic on the element at `addr` of `pe`: `op` is fetch_add, add, compare_swap,
/// fetch, set or swap; `dtype` int32, int64, uint32, uint64 (all), float32 or float64
/// (fetch, set, swap). Returns the fetched value (None for add and set).
#[pyfunction]
#[pyo3(signature = (call, op, dtype, addr, pe, value=None, cond=None))]
#[allow(clippy::too_many_arguments)]
fn atomic(
    py: Python<'_>,
    call: &str,
    op: &str,
    dtype: &str,
    addr: usize,
    pe: usize,
    value: Option<Bound<'_, PyAny>>,
    cond: Option<Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let c = ctx(call)?;
    let me = c.my_pe();
    macro_rules! integer {
        ($t:ty) => {{
            let val = |arg| -> PyResult<$t> {
                let v = if arg == "cond" { cond.as_ref() } else { value.as_ref() }.ok_or_else(|| argument(call, arg, "missing", me))?;
                v.extract::<$t>().map_err(|_| argument(call, arg, format!("{v} does not fit in {dtype}"), me))
            };
            let out: Option<$t> = match op {
                "fetch_add" => {
                    let v = val("value")?;
                    Some(py.detach(|| c.atomic_fetch_add_addr::<$t>(addr, v, pe)).map_err(|e| to_py(e, call))?)
                }
                "add" => {
                    let v = val("value")?;
                    py.detach(|| c.atomic_add_addr::<$t>(addr, v, pe)).map_err(|e| to_py(e, call))?;
                    None
                }
                "compare_swap" => {
                    let (k, v) = (val("cond")?, val("value")?);
                    Some(py.detach(|| c.atomic_compare_swap_addr::<$t>(addr, k, v, pe)).map_err(|e| to_py(e, call))?)
                }
                "fetch" => Some(py.detach(|| c.atomic_fetch_addr::<$t>(addr, pe)).map_err(|e| to_py(e, call))?),
                "set" => {
                    let v = val("value")?;
                    py.detach(|| c.atomic_set_addr::<$t>(addr, v, pe)).map_err(|e| to_py(e, call))?;
                    None
                }
                "swap" => {
                    let v = val("value")?;
                    Some(py.detach(|| c.atomic_swap_addr::<$t>(addr, v, pe)).map_err(|e| to_py(e, call))?)
                }
                _ => return Err(argument(call, "op", format!("`{op}` is not an atomic operation"), me)),
            };
            out.into_py_any(py)
        }};
    }
    macro_rules! float {
        ($t:ty) => {{
            let val = || -> PyResult<$t> {
                let v = value.as_ref().ok_or_else(|| argument(call, "value", "missing", me))?;
                v.extract::<$t>().map_err(|_| argument(call, "value", format!("{v} is not a number"), me))
            };
            let out: Option<$t> = match op {
                "fetch" => Some(py.detach(|| c.atomic_fetch_addr::<$t>(addr, pe)).map_err(|e| to_py(e, call))?),
                "set" => {
                    let v = val()?;
                    py.detach(|| c.atomic_set_addr::<$t>(addr, v, pe)).map_err(|e| to_py(e, call))?;
                    None
                }
                "swap" => {
                    let v = val()?;
                    Some(py.detach(|| c.atomic_swap_addr::<$t>(addr, v, pe)).map_err(|e| to_py(e, call))?)
                }
                _ => {
                    return Err(argument(
                        call,
                        "dst",
                        format!("{op} is not defined on {dtype} (fetch, set and swap are; fetch_add, add and compare_swap need int32, int64, uint32 or uint64)"),
                        me,
                    ))
                }
            };
            out.into_py_any(py)
        }};
    }
    match dtype {
        "int32" => integer!(i32),
        "int64" => integer!(i64),
        "uint32" => integer!(u32),
        "uint64" => integer!(u64),
        "float32" => float!(f32),
        "float64" => float!(f64),
        _ => Err(argument(
            call,
            "dst",
            format!("atomics are not defined on {dtype} (int32, int64, uint32, uint64; float32 and float64 for fetch, set, swap)"),
            me,
        )),
    }
}

/// Completes this PE's outstanding operations.
#[pyfunction]
fn quiet(py: Python<'_>) -> PyResult<()> {
    let c = ctx("quiet")?;
    py.detach(|| c.quiet()).map_err(|e| to_py(e, "quiet"))
}

/// Orders this PE's operations per target PE.
#[pyfunction]
fn fence() -> PyResult<()> {
    ctx("fence")?.fence().map_err(|e| to_py(e, "fence"))
}

/// Runs the host barrier `f` of `call`, interpreter released. On a GPU PE the device is
/// synchronized first, as every blocking call with `stream=None` does: work already
/// queued on any stream (a `fill_` on PyTorch's current stream, say) has written the
/// symmetric memory before a peer that passed the barrier reads it.
fn host_barrier(py: Python<'_>, call: &str, f: impl FnOnce(&rshmem::Ctx) -> rshmem::Result<()> + Send) -> PyResult<()> {
    let c = ctx(call)?;
    py.detach(|| {
        if let Some(g) = c.gpu() {
            g.synchronize()?;
        }
        f(&c)
    })
    .map_err(|e| to_py(e, call))
}

/// Quiet, then a barrier over every PE (GPU PEs: the device synchronized first).
#[pyfunction]
fn barrier_all(py: Python<'_>) -> PyResult<()> {
    host_barrier(py, "barrier_all", |c| c.barrier_all())
}

/// Quiet, then a barrier over team `t` (GPU PEs: the device synchronized first).
#[pyfunction]
fn barrier(py: Python<'_>, t: u32) -> PyResult<()> {
    host_barrier(py, "barrier", |c| c.barrier(team(t)))
}

/// A barrier over team `t` without quiet (GPU PEs: the device synchronized first).
#[pyfunction]
fn sync(py: Python<'_>, t: u32) -> PyResult<()> {
    host_barrier(py, "sync", |c| c.sync(team(t)))
}

/// This PE's number in team `t`.
#[pyfunction]
fn team_my_pe(t: u32) -> PyResult<usize> {
    ctx("team_my_pe")?.team_my_pe(team(t)).map_err(|e| to_py(e, "team_my_pe"))
}

/// Number of PEs in team `t`.
#[pyfunction]
fn team_n_pes(t: u32) -> PyResult<usize> {
    ctx("team_n_pes")?.team_n_pes(team(t)).map_err(|e| to_py(e, "team_n_pes"))
}

/// The PE of `src`'s member `pe` in team `dst`, or -1 when it is not a member.
#[pyfunction]
fn team_translate_pe(src: u32, pe: usize, dst: u32) -> PyResult<i64> {
    let r = ctx("team_translate_pe")?.team_translate_pe(team(src), pe, team(dst)).map_err(|e| to_py(e, "team_translate_pe"))?;
    Ok(r.map(|p| p as i64).unwrap_or(-1))
}

/// The new team's handle (`INVALID` on PEs left out).
#[pyfunction]
fn team_split_strided(py: Python<'_>, parent: u32, start: usize, stride: usize, size: usize) -> PyResult<u32> {
    let c = ctx("team_split_strided")?;
    let t = py
        .detach(|| c.team_split_strided(team(parent), start, stride, size, TeamConfig::default()))
        .map_err(|e| to_py(e, "team_split_strided"))?;
    Ok(t.raw())
}

/// Row and column teams of a grid with `xrange` columns (`INVALID` where left out).
#[pyfunction]
fn team_split_2d(py: Python<'_>, parent: u32, xrange: usize) -> PyResult<(u32, u32)> {
    let c = ctx("team_split_2d")?;
    let (x, y) = py
        .detach(|| c.team_split_2d(team(parent), xrange, TeamConfig::default(), TeamConfig::default()))
        .map_err(|e| to_py(e, "team_split_2d"))?;
    Ok((x.raw(), y.raw()))
}

/// Destroys team `t` (collective).
#[pyfunction]
fn team_destroy(py: Python<'_>, t: u32) -> PyResult<()> {
    let c = ctx("team_destroy")?;
    py.detach(|| c.team_destroy(team(t))).map_err(|e| to_py(e, "team_destroy"))
}

/// All-reduce (`scatter` false) or reduce-scatter (`scatter` true, `nelems` per PE) of
/// `dtype` elements over team `t`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn reduce(py: Python<'_>, t: u32, dst: usize, src: usize, nelems: usize, dtype: &str, op: &str, scatter: bool) -> PyResult<()> {
    let call = if scatter { "reduce_scatter" } else { "reduce" };
    let c = ctx(call)?;
    let (d, o) = (reduce_dtype(call, dtype, c.my_pe())?, reduce_op(call, op, c.my_pe())?);
    let r = py.detach(|| {
        if scatter {
            c.reduce_scatter_addr(team(t), dst, src, nelems, d, o)
        } else {
            c.reduce_addr(team(t), dst, src, nelems, d, o)
        }
    });
    r.map_err(|e| to_py(e, call))
}

/// `root`'s `nbytes` at `src` into every member's `dst`.
#[pyfunction]
fn broadcast(py: Python<'_>, t: u32, dst: usize, src: usize, nbytes: usize, root: usize) -> PyResult<()> {
    let c = ctx("broadcast")?;
    py.detach(|| c.broadcastmem(team(t), dst, src, nbytes, root)).map_err(|e| to_py(e, "broadcast"))
}

/// Every member's `nbytes` at `src` into every member's `dst`, in team order.
#[pyfunction]
fn fcollect(py: Python<'_>, t: u32, dst: usize, src: usize, nbytes: usize) -> PyResult<()> {
    let c = ctx("fcollect")?;
    py.detach(|| c.fcollectmem(team(t), dst, src, nbytes)).map_err(|e| to_py(e, "fcollect"))
}

/// All-to-all of `nbytes` per pair of members.
#[pyfunction]
fn alltoall(py: Python<'_>, t: u32, dst: usize, src: usize, nbytes: usize) -> PyResult<()> {
    let c = ctx("alltoall")?;
    py.detach(|| c.alltoallmem(team(t), dst, src, nbytes)).map_err(|e| to_py(e, "alltoall"))
}

/// Adds this module's functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(putmem, m)?)?;
    m.add_function(wrap_pyfunction!(getmem, m)?)?;
    m.add_function(wrap_pyfunction!(putmem_signal, m)?)?;
    m.add_function(wrap_pyfunction!(signal_update, m)?)?;
    m.add_function(wrap_pyfunction!(signal_fetch, m)?)?;
    m.add_function(wrap_pyfunction!(signal_wait_until, m)?)?;
    m.add_function(wrap_pyfunction!(atomic, m)?)?;
    m.add_function(wrap_pyfunction!(quiet, m)?)?;
    m.add_function(wrap_pyfunction!(fence, m)?)?;
    m.add_function(wrap_pyfunction!(barrier_all, m)?)?;
    m.add_function(wrap_pyfunction!(barrier, m)?)?;
    m.add_function(wrap_pyfunction!(sync, m)?)?;
    m.add_function(wrap_pyfunction!(team_my_pe, m)?)?;
    m.add_function(wrap_pyfunction!(team_n_pes, m)?)?;
    m.add_function(wrap_pyfunction!(team_translate_pe, m)?)?;
    m.add_function(wrap_pyfunction!(team_split_strided, m)?)?;
    m.add_function(wrap_pyfunction!(team_split_2d, m)?)?;
    m.add_function(wrap_pyfunction!(team_destroy, m)?)?;
    m.add_function(wrap_pyfunction!(reduce, m)?)?;
    m.add_function(wrap_pyfunction!(broadcast, m)?)?;
    m.add_function(wrap_pyfunction!(fcollect, m)?)?;
    m.add_function(wrap_pyfunction!(alltoall, m)?)?;
    Ok(())
}
