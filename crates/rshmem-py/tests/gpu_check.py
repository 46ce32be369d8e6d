"""GPU-host checks of the Python package: every call on GPU tensors, stream-ordered put and
all-reduce on a ``torch.cuda.Stream``, and the time of an all-reduce of 8 B and 64 MiB
through ``rshmem.reduce`` (to set beside the same call through the Rust API, which
``gpu_check.sh`` measures with rshmem-perf).

    RSHMEM_DEVICE=gpu rshmemrun -n 2 python gpu_check.py [--iters 20] [--reps 5]

Prints ``CHECK <name> <pe> ok|FAIL <why>`` per check and PE, and on PE 0
``TIME reduce_python bytes=B median_us=T host_us=H`` per size (CUDA events around `iters`
enqueued all-reduces of int64 on one stream, after a host barrier, median of `reps`
repetitions: rshmem-perf's method; host_us is the Python call's own time per enqueue).
Exits non-zero if a check failed. Every PE makes the same collective calls whatever its
checks find.
"""

import argparse
import statistics
import sys
import time

import torch
from pe_checks import checker, say

import rshmem

ap = argparse.ArgumentParser()
ap.add_argument("--iters", type=int, default=20)
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("--warmup", type=int, default=3)
ap.add_argument("--skip-timing", action="store_true")
opts = ap.parse_args()

FAILED = []
check = checker(lambda: ME, FAILED, after=torch.cuda.synchronize)


rshmem.init()
ME, N = rshmem.my_pe(), rshmem.n_pes()
RIGHT, LEFT = (ME + 1) % N, (ME - 1) % N
W = rshmem.TEAM_WORLD
GPU = rshmem.gpu_device()
if GPU is None:
    say(f"CHECK init {ME} FAIL this PE is a CPU PE: run with RSHMEM_DEVICE=gpu on a GPU host")
    sys.exit(1)
torch.cuda.set_device(GPU)
DEV = torch.device("cuda", GPU)
S = torch.cuda.Stream(device=DEV)  # a side stream: the stream-ordered calls go on it


@check("tensor")
def _():
    for dt in (torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.uint8):
        t = rshmem.tensor((3, 5), dtype=dt)
        assert t.device == DEV and t.dtype == dt and t.shape == (3, 5), t
        assert (t == 0).all().item() and rshmem.is_symmetric(t)
        rshmem.free(t)
    t = rshmem.tensor(4, device="cuda")
    assert t.device == DEV
    rshmem.free(t)
    try:
        rshmem.array(4)
        raise AssertionError("a NumPy array on a GPU heap")
    except rshmem.ArgumentError:
        pass


@check("put_get_blocking")
def _():
    dst = rshmem.tensor(1024, dtype=torch.float32)
    src = torch.arange(1024, dtype=torch.float32, device=DEV) + 1000 * ME  # not symmetric
    rshmem.put(dst, src, RIGHT)  # stream=None: blocking, device synchronized first
    rshmem.barrier_all()
    assert torch.equal(dst, torch.arange(1024, dtype=torch.float32, device=DEV) + 1000 * LEFT)
    back = torch.empty(1024, dtype=torch.float32, device=DEV)
    rshmem.get(back, dst, RIGHT)
    assert torch.equal(back, torch.arange(1024, dtype=torch.float32, device=DEV) + 1000 * ME)
    host = torch.full((1024,), 7.0)  # a host source into device memory: the host API
    rshmem.put(dst, host, RIGHT)
    rshmem.barrier_all()
    assert (dst == 7).all().item()
    rshmem.barrier_all()
    rshmem.free(dst)


@check("put_on_stream")
def _():
    # Produce the source on S, put it on S, barrier on S, read the result on S: no host
    # synchronization between the steps.
    n = 1 << 20
    src = rshmem.tensor(n, dtype=torch.int64)
    dst = rshmem.tensor(n, dtype=torch.int64)
    with torch.cuda.stream(S):
        src.copy_(torch.arange(n, device=DEV) * (ME + 1))
        rshmem.put(dst, src, RIGHT, stream=S)
        rshmem.barrier_all(stream=S)
        ok = torch.equal(dst, torch.arange(n, device=DEV) * (LEFT + 1))
        plain = torch.arange(n, device=DEV) + ME  # a non-symmetric source, on S too
        rshmem.put(dst, plain, RIGHT, stream=S)
        rshmem.quiet(stream=S)
        rshmem.barrier(W, stream=S)
        ok2 = torch.equal(dst, torch.arange(n, device=DEV) + LEFT)
    S.synchronize()
    assert ok and ok2
    rshmem.free(dst)
    rshmem.free(src)


@check("get_on_stream")
def _():
    src = rshmem.tensor(4096, dtype=torch.float32)
    src.fill_(ME + 0.5)
    rshmem.barrier_all()
    out = torch.empty(4096, dtype=torch.float32, device=DEV)
    with torch.cuda.stream(S):
        rshmem.get(out, src, RIGHT, stream=S)
        ok = (out == RIGHT + 0.5).all()
    S.synchronize()
    assert ok.item()
    rshmem.barrier_all()
    rshmem.free(src)


@check("put_signal_on_stream")
def _():
    box = rshmem.tensor((N, 256), dtype=torch.bfloat16)
    sig = rshmem.tensor(N, dtype=torch.int64)
    mine = rshmem.tensor(256, dtype=torch.bfloat16)
    with torch.cuda.stream(S):
        mine.fill_(ME + 1)
        for p in range(N):
            rshmem.put_signal(box[ME], mine, sig[ME:ME + 1], 1, "set", p, stream=S)
        for p in range(N):
            rshmem.signal_wait_until(sig[p:p + 1], "eq", 1, stream=S)
        ok = all(bool((box[p] == p + 1).all()) for p in range(N))
    S.synchronize()
    assert ok
    assert rshmem.signal_fetch(sig[LEFT:LEFT + 1]) == 1
    rshmem.barrier_all()
    for x in (mine, sig, box):
        rshmem.free(x)


@check("signal_and_atomics_host_api")
def _():
    s = rshmem.tensor(1, dtype=torch.int64)
    rshmem.signal_op(s, 1, "add", 0)
    if ME == 0:
        assert rshmem.signal_wait_until(s, "ge", N, timeout=60) == N
    c = rshmem.tensor(2, dtype=torch.int64)
    old = rshmem.atomic_fetch_add(c, ME + 1, 0)
    assert 0 <= old < N * (N + 1) // 2
    rshmem.atomic_compare_swap(c, 0, 5, RIGHT, index=1)
    rshmem.barrier_all()
    if ME == 0:
        assert rshmem.atomic_fetch(c, 0) == N * (N + 1) // 2
    assert int(c[1].item()) == 5
    rshmem.barrier_all()
    rshmem.free(c)
    rshmem.free(s)


@check("collectives_blocking")
def _():
    for dt in (torch.float32, torch.bfloat16, torch.int64):
        x = rshmem.tensor(1000, dtype=dt)
        y = rshmem.tensor(1000, dtype=dt)
        x.copy_((torch.arange(1000, device=DEV) % 7 + ME).to(dt))
        rshmem.reduce(W, y, x, "sum")
        want = sum((torch.arange(1000, device=DEV) % 7 + p) for p in range(N)).to(dt)
        assert torch.equal(y, want), (dt, y[:4], want[:4])
        rshmem.reduce(W, y, x, "max")
        assert torch.equal(y, (torch.arange(1000, device=DEV) % 7 + N - 1).to(dt))
        rshmem.free(y)
        rshmem.free(x)


@check("collectives_on_stream")
def _():
    k = 512
    src = rshmem.tensor(N * k, dtype=torch.float32)
    dst = rshmem.tensor(N * k, dtype=torch.float32)
    one = rshmem.tensor(k, dtype=torch.float32)
    with torch.cuda.stream(S):
        src.copy_(torch.arange(N * k, dtype=torch.float32, device=DEV) + ME)
        rshmem.reduce(W, dst, src, "sum", stream=S)
        r_ok = torch.equal(dst, (torch.arange(N * k, dtype=torch.float32, device=DEV) * N + N * (N - 1) / 2))
        rshmem.reduce_scatter(W, one, src, "sum", stream=S)
        rs_ok = torch.equal(one, dst[ME * k:(ME + 1) * k])
        rshmem.broadcast(W, one, src[:k], N - 1, stream=S)
        b_ok = torch.equal(one, torch.arange(k, dtype=torch.float32, device=DEV) + N - 1)
        rshmem.fcollect(W, dst, src[:k], stream=S)
        f_ok = all(bool(torch.equal(dst[p * k:(p + 1) * k], torch.arange(k, dtype=torch.float32, device=DEV) + p)) for p in range(N))
        rshmem.alltoall(W, dst, src, stream=S)
        a_ok = all(
            bool(torch.equal(dst[p * k:(p + 1) * k], torch.arange(ME * k, (ME + 1) * k, dtype=torch.float32, device=DEV) + p))
            for p in range(N)
        )
    S.synchronize()
    assert r_ok and rs_ok and b_ok and f_ok and a_ok, (r_ok, rs_ok, b_ok, f_ok, a_ok)
    for x in (one, dst, src):
        rshmem.free(x)


@check("get_peer_tensor")
def _():
    t = rshmem.tensor(64, dtype=torch.float32)
    t.fill_(ME)
    rshmem.barrier_all()
    peer = rshmem.get_peer_tensor(t, RIGHT)
    assert peer.device == DEV and (peer == RIGHT).all().item()
    rshmem.barrier_all()
    rshmem.free(t)


def time_reduce(nbytes):
    """Median per-call time (CUDA events) and host time per enqueue of `iters` int64
    all-reduces of `nbytes` on S."""
    x = rshmem.tensor(nbytes // 8, dtype=torch.int64)
    y = rshmem.tensor(nbytes // 8, dtype=torch.int64)
    x.fill_(1)
    for _ in range(opts.warmup):
        rshmem.reduce(W, y, x, "sum", stream=S)
    S.synchronize()
    device_us, host_us = [], []
    for _ in range(opts.reps):
        rshmem.barrier_all()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(S)
        t0 = time.perf_counter()
        for _ in range(opts.iters):
            rshmem.reduce(W, y, x, "sum", stream=S)
        host_us.append((time.perf_counter() - t0) / opts.iters * 1e6)
        stop.record(S)
        stop.synchronize()
        device_us.append(start.elapsed_time(stop) * 1e3 / opts.iters)
    assert (y == N).all().item()
    rshmem.free(y)
    rshmem.free(x)
    return statistics.median(device_us), statistics.median(host_us)


if not opts.skip_timing:

    @check("timing")
    def _():
        for nbytes in (8, 64 << 20):
            med, host = time_reduce(nbytes)
            if ME == 0:
                say(f"TIME reduce_python bytes={nbytes} median_us={med:.2f} host_us={host:.2f} iters={opts.iters} reps={opts.reps}")


rshmem.finalize()
say(f"PE {ME}: {'all checks passed' if not FAILED else 'FAILED: ' + ', '.join(FAILED)}")
sys.exit(1 if FAILED else 0)
