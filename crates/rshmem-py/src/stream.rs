//! Stream-ordered calls on GPU PEs.
//!
//! `stream` is a raw `CUstream` handle (PyTorch's `torch.cuda.Stream.cuda_stream`, 0 for
//! the legacy default stream): the call is enqueued on it, borrowed without being owned
//! ([`rshmem::gpu::cuda::Stream::borrow_raw`]), and returns at once. `None` means the
//! blocking form for device buffers: the device is synchronized (so work already queued
//! on any stream, PyTorch's included, has produced the data), the call runs on the PE's
//! own stream, and that stream is synchronized before returning.

use crate::calls::{cmp, reduce_op, signal_op};
use crate::errors::{argument, failure, to_py};
use crate::state::{ctx, find, view};
use pyo3::prelude::*;
use rshmem::coll::gpu::DeviceReduceType;
use rshmem::gpu::cuda::Stream;
use rshmem::gpu::Gpu;
use rshmem::{Ctx, ReduceOp, Sym, Team};

/// Runs `f` on the stream `stream` names (see the module notes), interpreter released.
fn on_stream<R: Send>(
    py: Python<'_>,
    call: &str,
    stream: Option<usize>,
    f: impl FnOnce(&Ctx, &Gpu, &Stream) -> PyResult<R> + Send,
) -> PyResult<R> {
    let c = ctx(call)?;
    let Some(g) = c.gpu().cloned() else {
        return Err(failure(call, format!("PE {} has no GPU heap: stream-ordered calls need GPU PEs", c.my_pe())));
    };
    py.detach(|| match stream {
        Some(h) => {
            // SAFETY: the Python half passes a stream of this PE's device (PyTorch's, whose
            // device it checked) or a raw handle the caller vouches for; it lives across
            // this call, which only enqueues work on it.
            let s = unsafe { Stream::borrow_raw(h as _, c.my_pe()) };
            f(&c, &g, &s)
        }
        None => {
            g.synchronize().map_err(|e| to_py(e, call))?;
            let r = f(&c, &g, g.stream())?;
            g.stream().synchronize().map_err(|e| to_py(e, call))?;
            Ok(r)
        }
    })
}

/// Whether `pe`'s GPU heap is mapped into this process (same host, peer access).
fn mapped(c: &Ctx, call: &str, pe: usize) -> PyResult<bool> {
    if pe >= c.n_pes() {
        return Err(argument(call, "remote_pe", format!("PE {pe} is out of range (valid PEs are 0..{})", c.n_pes()), c.my_pe()));
    }
    Ok(c.team_translate_pe(Team::WORLD, pe, Team::SHARED).map_err(|e| to_py(e, call))?.is_some())
}

/// A put on `stream` (a symmetric source, or any device source for a mapped peer).
#[pyfunction]
#[pyo3(signature = (dst, src, nbytes, pe, stream=None))]
fn put_on_stream(py: Python<'_>, dst: usize, src: usize, nbytes: usize, pe: usize, stream: Option<usize>) -> PyResult<()> {
    const CALL: &str = "put";
    on_stream(py, CALL, stream, |c, g, s| {
        let me = c.my_pe();
        if find(src).is_some() {
            let (d, v) = (view::<u8>(CALL, "dst", dst, nbytes, me)?, view::<u8>(CALL, "src", src, nbytes, me)?);
            c.put_on_stream(&d, 0, &v, 0, nbytes, pe, s).map_err(|e| to_py(e, CALL))
        } else if mapped(c, CALL, pe)? {
            view::<u8>(CALL, "dst", dst, nbytes, me)?;
            g.cuda_copy_async(g.peer_address(dst as u64, pe), src as u64, nbytes, s).map_err(|e| to_py(e, CALL))
        } else {
            Err(argument(CALL, "src", format!("PE {pe} is not mapped into this process, so the source must be symmetric"), me))
        }
    })
}

/// A get from a mapped peer on `stream`.
#[pyfunction]
#[pyo3(signature = (dst, src, nbytes, pe, stream=None))]
fn get_on_stream(py: Python<'_>, dst: usize, src: usize, nbytes: usize, pe: usize, stream: Option<usize>) -> PyResult<()> {
    const CALL: &str = "get";
    on_stream(py, CALL, stream, |c, g, s| {
        let me = c.my_pe();
        view::<u8>(CALL, "src", src, nbytes, me)?;
        if !mapped(c, CALL, pe)? {
            return Err(failure(CALL, format!("stream-ordered get from PE {pe}, which is not mapped into PE {me}, is not supported")));
        }
        g.cuda_copy_async(dst as u64, g.peer_address(src as u64, pe), nbytes, s).map_err(|e| to_py(e, CALL))
    })
}

/// A put, then a signal update after it, on `stream`.
#[pyfunction]
#[pyo3(signature = (dst, src, nbytes, sig, value, op, pe, stream=None))]
#[allow(clippy::too_many_arguments)]
fn put_signal_on_stream(
    py: Python<'_>,
    dst: usize,
    src: usize,
    nbytes: usize,
    sig: usize,
    value: u64,
    op: &str,
    pe: usize,
    stream: Option<usize>,
) -> PyResult<()> {
    const CALL: &str = "put_signal";
    let op = signal_op(CALL, op, 0)?;
    on_stream(py, CALL, stream, |c, g, s| {
        let me = c.my_pe();
        let d = view::<u8>(CALL, "dst", dst, nbytes, me)?;
        if find(src).is_some() {
            let v = view::<u8>(CALL, "src", src, nbytes, me)?;
            c.put_on_stream(&d, 0, &v, 0, nbytes, pe, s).map_err(|e| to_py(e, CALL))?;
        } else if mapped(c, CALL, pe)? {
            g.cuda_copy_async(g.peer_address(dst as u64, pe), src as u64, nbytes, s).map_err(|e| to_py(e, CALL))?;
        } else {
            return Err(argument(CALL, "src", format!("PE {pe} is not mapped into this process, so the source must be symmetric"), me));
        }
        // Stream order: the signal lands after the data.
        let w = view::<u64>(CALL, "signal", sig, 1, me)?;
        c.signal_on_stream(&w, 0, value, op, pe, s).map_err(|e| to_py(e, CALL))
    })
}

/// A signal update on `stream`.
#[pyfunction]
#[pyo3(signature = (sig, value, op, pe, stream=None))]
fn signal_on_stream(py: Python<'_>, sig: usize, value: u64, op: &str, pe: usize, stream: Option<usize>) -> PyResult<()> {
    const CALL: &str = "signal_op";
    let op = signal_op(CALL, op, 0)?;
    on_stream(py, CALL, stream, |c, _, s| {
        let w = view::<u64>(CALL, "signal", sig, 1, c.my_pe())?;
        c.signal_on_stream(&w, 0, value, op, pe, s).map_err(|e| to_py(e, CALL))
    })
}

/// A wait for this PE's signal word, enqueued on `stream`.
#[pyfunction]
#[pyo3(signature = (sig, cmp_name, value, stream=None))]
fn wait_until_on_stream(py: Python<'_>, sig: usize, cmp_name: &str, value: u64, stream: Option<usize>) -> PyResult<()> {
    const CALL: &str = "signal_wait_until";
    let how = cmp(CALL, cmp_name, 0)?;
    on_stream(py, CALL, stream, |c, _, s| {
        let w = view::<u64>(CALL, "signal", sig, 1, c.my_pe())?;
        c.wait_until_on_stream(&w, 0, how, value, s).map_err(|e| to_py(e, CALL))
    })
}

/// A fence enqueued on `stream`.
#[pyfunction]
#[pyo3(signature = (stream=None))]
fn quiet_on_stream(py: Python<'_>, stream: Option<usize>) -> PyResult<()> {
    on_stream(py, "quiet", stream, |c, _, s| c.quiet_on_stream(s).map_err(|e| to_py(e, "quiet")))
}

/// A barrier over `team` enqueued on `stream`.
#[pyfunction]
#[pyo3(signature = (team, stream=None))]
fn barrier_on_stream(py: Python<'_>, team: u32, stream: Option<usize>) -> PyResult<()> {
    on_stream(py, "barrier", stream, |c, _, s| c.barrier_on_stream(Team::from_raw(team), s).map_err(|e| to_py(e, "barrier")))
}

/// An all-reduce (`blocks` 1) or reduce-scatter (`blocks` = team size) of `T` on `s`.
#[allow(clippy::too_many_arguments)]
fn reduce_typed<T: DeviceReduceType>(
    c: &Ctx,
    call: &'static str,
    team: Team,
    dst: usize,
    src: usize,
    nelems: usize,
    blocks: usize,
    op: ReduceOp,
    s: &Stream,
) -> PyResult<()> {
    let me = c.my_pe();
    let (d, v): (Sym<T>, Sym<T>) = (view(call, "dst", dst, nelems, me)?, view(call, "src", src, nelems * blocks, me)?);
    let r =
        if blocks == 1 { c.reduce_on_stream(team, &d, &v, nelems, op, s) } else { c.reduce_scatter_on_stream(team, &d, &v, nelems, op, s) };
    r.map_err(|e| to_py(e, call))
}

/// An all-reduce (`scatter` false) or reduce-scatter (`scatter` true, `nelems` per PE) of
/// `dtype` elements over `team`, enqueued on `stream`.
#[pyfunction]
#[pyo3(signature = (team, dst, src, nelems, dtype, op, scatter, stream=None))]
#[allow(clippy::too_many_arguments)]
fn reduce_on_stream(
    py: Python<'_>,
    team: u32,
    dst: usize,
    src: usize,
    nelems: usize,
    dtype: &str,
    op: &str,
    scatter: bool,
    stream: Option<usize>,
) -> PyResult<()> {
    let call = if scatter { "reduce_scatter" } else { "reduce" };
    let t = Team::from_raw(team);
    let o = reduce_op(call, op, 0)?;
    on_stream(py, call, stream, |c, _, s| {
        let blocks = if scatter { c.team_n_pes(t).map_err(|e| to_py(e, call))? } else { 1 };
        match dtype {
            "float32" => reduce_typed::<f32>(c, call, t, dst, src, nelems, blocks, o, s),
            "float64" => reduce_typed::<f64>(c, call, t, dst, src, nelems, blocks, o, s),
            "float16" => reduce_typed::<half::f16>(c, call, t, dst, src, nelems, blocks, o, s),
            "bfloat16" => reduce_typed::<half::bf16>(c, call, t, dst, src, nelems, blocks, o, s),
            "int32" => reduce_typed::<i32>(c, call, t, dst, src, nelems, blocks, o, s),
            "int64" => reduce_typed::<i64>(c, call, t, dst, src, nelems, blocks, o, s),
            "uint32" => reduce_typed::<u32>(c, call, t, dst, src, nelems, blocks, o, s),
            "uint64" => reduce_typed::<u64>(c, call, t, dst, src, nelems, blocks, o, s),
            _ => Err(argument(
                call,
                "dst",
                format!(
                    "dtype {dtype} cannot be reduced on the GPU (float32, float64, float16, bfloat16, int32, int64, uint32, uint64 can)"
                ),
                c.my_pe(),
            )),
        }
    })
}

/// Broadcast (`kind` "broadcast", from team member `root`), fcollect ("fcollect") or
/// all-to-all ("alltoall") of `nbytes` per PE over `team`, as bytes, enqueued on `stream`.
#[pyfunction]
#[pyo3(signature = (kind, team, dst, src, nbytes, root, stream=None))]
#[allow(clippy::too_many_arguments)]
fn move_on_stream(
    py: Python<'_>,
    kind: &str,
    team: u32,
    dst: usize,
    src: usize,
    nbytes: usize,
    root: usize,
    stream: Option<usize>,
) -> PyResult<()> {
    let call: &'static str = match kind {
        "broadcast" => "broadcast",
        "fcollect" => "fcollect",
        "alltoall" => "alltoall",
        _ => return Err(failure("move_on_stream", format!("`{kind}` is not broadcast, fcollect or alltoall"))),
    };
    let t = Team::from_raw(team);
    on_stream(py, call, stream, |c, _, s| {
        let me = c.my_pe();
        let n = c.team_n_pes(t).map_err(|e| to_py(e, call))?;
        let (dl, sl) = match call {
            "broadcast" => (nbytes, nbytes),
            "fcollect" => (nbytes * n, nbytes),
            _ => (nbytes * n, nbytes * n),
        };
        let (d, v) = (view::<u8>(call, "dst", dst, dl, me)?, view::<u8>(call, "src", src, sl, me)?);
        let r = match call {
            "broadcast" => c.broadcast_on_stream(t, &d, &v, nbytes, root, s),
            "fcollect" => c.fcollect_on_stream(t, &d, &v, nbytes, s),
            _ => c.alltoall_on_stream(t, &d, &v, nbytes, s),
        };
        r.map_err(|e| to_py(e, call))
    })
}

/// Waits for all of this PE's GPU work.
#[pyfunction]
fn device_synchronize(py: Python<'_>) -> PyResult<()> {
    on_stream(py, "synchronize", None, |_, _, _| Ok(()))
}

/// Adds this module's functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(put_on_stream, m)?)?;
    m.add_function(wrap_pyfunction!(get_on_stream, m)?)?;
    m.add_function(wrap_pyfunction!(put_signal_on_stream, m)?)?;
    m.add_function(wrap_pyfunction!(signal_on_stream, m)?)?;
    m.add_function(wrap_pyfunction!(wait_until_on_stream, m)?)?;
    m.add_function(wrap_pyfunction!(quiet_on_stream, m)?)?;
    m.add_function(wrap_pyfunction!(barrier_on_stream, m)?)?;
    m.add_function(wrap_pyfunction!(reduce_on_stream, m)?)?;
    m.add_function(wrap_pyfunction!(move_on_stream, m)?)?;
    m.add_function(wrap_pyfunction!(device_synchronize, m)?)?;
    Ok(())
}
