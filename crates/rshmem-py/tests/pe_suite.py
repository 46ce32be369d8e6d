"""One PE's part of the call suite: every rshmem call, on NumPy arrays and PyTorch tensors,
each checked against a model the PE computes by itself.

Run as every PE of a job (``rshmemrun -n N python pe_suite.py N``, or under torchrun);
prints one line per check, ``CHECK <name> <pe> ok`` or ``CHECK <name> <pe> FAIL <why>``,
which ``test_calls.py`` reads. Every PE makes the same collective calls in the same order
whatever its checks find, so a failed check does not hang the job.
"""

import sys

import numpy as np
import torch
from pe_checks import checker

import rshmem

EXPECTED_N = int(sys.argv[1]) if len(sys.argv) > 1 else 1
W = rshmem.TEAM_WORLD


FAILED = []
check = checker(lambda: ME, FAILED)


rshmem.init()
ME, N = rshmem.my_pe(), rshmem.n_pes()
RIGHT, LEFT = (ME + 1) % N, (ME - 1) % N


@check("init")
def _():
    assert rshmem.is_initialized()
    assert N == EXPECTED_N, (N, EXPECTED_N)
    assert 0 <= ME < N
    assert rshmem.gpu_device() is None  # CPU PEs in this suite
    rshmem.init()  # a second init does nothing


@check("teams")
def _():
    assert W.n_pes() == N and W.my_pe() == ME
    assert rshmem.team_n_pes(rshmem.TEAM_SHARED) == N  # one host
    assert rshmem.team_translate_pe(W, ME, rshmem.TEAM_SHARED) == ME
    half = (N + 1) // 2
    evens = rshmem.team_split_strided(W, 0, 2, half)
    if ME % 2 == 0:
        assert evens is not None and evens.my_pe() == ME // 2 and evens.n_pes() == half
        assert evens.translate_pe(evens.n_pes() - 1, W) == 2 * (half - 1)
    else:
        assert evens is None
        assert rshmem.team_translate_pe(W, ME, W) == ME
    xr = 2 if N % 2 == 0 else 1
    row, col = rshmem.team_split_2d(W, xr)
    assert row.my_pe() == ME % xr and row.n_pes() == xr
    assert col.my_pe() == ME // xr and col.n_pes() == N // xr
    assert rshmem.team_translate_pe(W, 0, row) == (0 if ME < xr else -1)
    # A collective over a split team: sum of world numbers of the column.
    s, d = rshmem.array(1, "int64"), rshmem.array(1, "int64")
    s[0] = ME
    rshmem.reduce(col, d, s)
    assert d[0] == sum(range(ME % xr, N, xr)), d
    rshmem.barrier(row)
    rshmem.sync(col)
    for t in (row, col) + ((evens,) if evens is not None else ()):
        t.destroy()
    rshmem.barrier_all()


@check("array")
def _():
    a = rshmem.array((3, 4), dtype="float64")
    assert isinstance(a, np.ndarray) and a.shape == (3, 4) and a.dtype == np.float64
    assert (a == 0).all() and a.flags.c_contiguous and rshmem.is_symmetric(a)
    assert isinstance(a.base, rshmem.SymView)
    assert rshmem.is_symmetric(a[1]) and not rshmem.is_symmetric(np.zeros(3))
    for dt in ("int8", "uint16", "int32", "uint64", "float16", "float32", "bool"):
        b = rshmem.array(5, dt)
        assert b.dtype == np.dtype(dt) and (b == 0).all()
        rshmem.free(b)
    rshmem.free(a)


@check("tensor")
def _():
    t = rshmem.tensor((2, 5), dtype=torch.int32)
    assert isinstance(t, torch.Tensor) and t.shape == (2, 5) and t.dtype == torch.int32
    assert t.device.type == "cpu" and (t == 0).all() and rshmem.is_symmetric(t)
    for dt in (torch.bfloat16, torch.float16, torch.float64, torch.uint8, torch.bool):
        u = rshmem.tensor(3, dtype=dt)
        assert u.dtype == dt and rshmem.is_symmetric(u)
        rshmem.free(u)
    f = rshmem.tensor(4)
    assert f.dtype == torch.float32
    g = rshmem.tensor(4, device="cpu")
    rshmem.free(g)
    rshmem.free(f)
    rshmem.free(t)


@check("interop")
def _():
    # Zero copy every way: DLPack from rshmem's view and from NumPy, the array interface.
    a = rshmem.array(6, "float32")
    t = torch.from_dlpack(a)  # NumPy's own DLPack export of the symmetric array
    t += 2
    assert (a == 2).all()
    v = torch.from_dlpack(a.base)  # rshmem's SymView
    v[0] = 7
    assert a[0] == 7 and t[0] == 7
    w = np.asarray(a.base)
    assert w.__array_interface__["data"][0] == a.__array_interface__["data"][0]
    cap = a.base.__dlpack__()
    x = torch.utils.dlpack.from_dlpack(cap)
    assert x.data_ptr() == a.__array_interface__["data"][0]
    del cap, x
    bt = rshmem.tensor(4, dtype=torch.bfloat16)
    assert rshmem.is_symmetric(bt) and rshmem.is_symmetric(bt[1:])
    rshmem.free(bt)
    rshmem.free(a)


def model_row(pe, k=8):
    return np.arange(k) + 100 * pe


@check("put")
def _():
    dst = rshmem.array(8, "int64")
    rshmem.put(dst, model_row(ME), RIGHT)
    rshmem.barrier_all()
    assert (dst == model_row(LEFT)).all(), dst
    # 2-D, torch, a row view as destination, and a put to this PE itself.
    m = rshmem.tensor((N, 3), dtype=torch.float32)
    rshmem.put(m[ME], torch.full((3,), float(ME)), RIGHT)
    rshmem.quiet()
    rshmem.barrier_all()
    assert torch.equal(m[LEFT], torch.full((3,), float(LEFT))), m
    rshmem.free(m)
    rshmem.free(dst)


@check("get")
def _():
    src = rshmem.array(8, "int64")
    src[:] = model_row(ME)
    rshmem.barrier_all()
    out = np.empty(8, dtype=np.int64)
    rshmem.get(out, src, RIGHT)
    assert (out == model_row(RIGHT)).all(), out
    ts = rshmem.tensor(5, dtype=torch.float64)
    ts.copy_(torch.arange(5, dtype=torch.float64) * (ME + 1))
    rshmem.barrier_all()
    to = torch.empty(5, dtype=torch.float64)
    rshmem.get(to, ts, LEFT)
    assert torch.equal(to, torch.arange(5, dtype=torch.float64) * (LEFT + 1)), to
    rshmem.barrier_all()
    rshmem.free(ts)
    rshmem.free(src)


@check("put_signal")
def _():
    # MoE-style: every PE sends its row to every PE, flagging arrival per sender.
    box = rshmem.array((N, 4), "float32")
    sig = rshmem.array(N, "uint64")
    mine = np.arange(4, dtype=np.float32) + 10 * ME
    for p in range(N):
        rshmem.put_signal(box[ME], mine, sig[ME:ME + 1], ME + 1, "set", p)
    for p in range(N):
        assert rshmem.signal_wait_until(sig[p:p + 1], "eq", p + 1, timeout=60) == p + 1
        assert (box[p] == np.arange(4) + 10 * p).all(), box
    # "add": a counter of arrivals, with torch buffers.
    tb = rshmem.tensor((N, 2), dtype=torch.int64)
    cnt = rshmem.tensor(1, dtype=torch.int64)
    rshmem.put_signal(tb[ME], torch.tensor([ME, -ME]), cnt, 1, rshmem.SIGNAL_ADD, 0)
    if ME == 0:
        assert rshmem.signal_wait_until(cnt, ">=", N, timeout=60) == N
        assert torch.equal(tb[:, 0], torch.arange(N)) and torch.equal(tb[:, 1], -torch.arange(N))
    rshmem.barrier_all()
    for x in (cnt, tb, sig, box):
        rshmem.free(x)


@check("signal_op")
def _():
    s = rshmem.array(2, "uint64")
    rshmem.signal_op(s[0:1], 1, "add", 0)
    rshmem.signal_op(s[1:2], 5 + ME, "set", RIGHT)
    if ME == 0:
        assert rshmem.signal_wait_until(s[0:1], "ge", N, timeout=60) == N
    assert rshmem.signal_wait_until(s[1:2], "eq", 5 + LEFT, timeout=60) == 5 + LEFT
    rshmem.barrier_all()
    assert rshmem.signal_fetch(s[1:2]) == 5 + LEFT
    rshmem.free(s)


@check("signal_wait_until")
def _():
    s = rshmem.array(1, "uint64")
    try:
        rshmem.signal_wait_until(s, "eq", 1, timeout=0.05)
        raise AssertionError("no timeout")
    except rshmem.TimeoutError as e:
        assert e.call == "signal_wait_until" and isinstance(e, TimeoutError)
    assert rshmem.signal_wait_until(s, "lt", 1, timeout=1) == 0
    rshmem.barrier_all()
    rshmem.free(s)


@check("atomic_fetch_add")
def _():
    c = rshmem.array(1, "int64")
    old = rshmem.atomic_fetch_add(c, ME + 1, 0)
    total = N * (N + 1) // 2
    assert 0 <= old < total
    # Every fetched value differs: gather them.
    olds_src, olds = rshmem.array(1, "int64"), rshmem.array(N, "int64")
    olds_src[0] = old
    rshmem.fcollect(W, olds, olds_src)
    assert len(set(olds.tolist())) == N, olds
    if ME == 0:
        assert c[0] == total, c
    u = rshmem.tensor(2, dtype=torch.int32)
    rshmem.atomic_add(u, 2, RIGHT, index=1)
    rshmem.barrier_all()
    assert u[1] == 2 and u[0] == 0, u
    for x in (u, olds, olds_src, c):
        rshmem.free(x)


@check("atomic_compare_swap")
def _():
    lock = rshmem.array(1, "int32")
    got = rshmem.atomic_compare_swap(lock, 0, ME + 1, 0)
    won_src, won = rshmem.array(1, "int64"), rshmem.array(1, "int64")
    won_src[0] = 1 if got == 0 else 0
    rshmem.reduce(W, won, won_src)
    assert won[0] == 1, won  # exactly one PE swapped
    if ME == 0:
        assert 1 <= lock[0] <= N
    for x in (won, won_src, lock):
        rshmem.free(x)


@check("atomic_fetch_set_swap")
def _():
    f = rshmem.array(N, "float64")
    rshmem.atomic_set(f, ME * 1.5, 0, index=ME)
    rshmem.barrier_all()
    assert rshmem.atomic_fetch(f, 0, index=ME) == ME * 1.5
    old = rshmem.atomic_swap(f, -1.0, 0, index=ME)
    assert old == ME * 1.5
    rshmem.barrier_all()
    if ME == 0:
        assert (f == -1.0).all(), f
    i = rshmem.array(1, "uint64")
    assert rshmem.atomic_swap(i, 2**63 + ME, ME) == 0 and i[0] == 2**63 + ME
    rshmem.barrier_all()
    rshmem.free(i)
    rshmem.free(f)


@check("quiet_fence")
def _():
    data, flag = rshmem.array(4, "int64"), rshmem.array(1, "uint64")
    rshmem.put(data, np.full(4, ME + 1), RIGHT)
    rshmem.fence()  # the data before the flag, to the same PE
    rshmem.signal_op(flag, 1, "set", RIGHT)
    rshmem.quiet()
    rshmem.signal_wait_until(flag, "eq", 1, timeout=60)
    assert (data == LEFT + 1).all(), data
    rshmem.barrier_all()
    rshmem.free(flag)
    rshmem.free(data)


@check("barrier")
def _():
    c = rshmem.array(1, "int64")
    for k in range(1, 4):
        rshmem.atomic_add(c, 1, 0)
        rshmem.barrier_all()  # quiet included: every add of this round is done
        if ME == 0:
            assert rshmem.atomic_fetch(c, 0) == k * N
        rshmem.barrier(W)
    rshmem.sync_all()
    rshmem.sync(W)
    rshmem.free(c)


REDUCE_MODEL = {
    "sum": lambda xs: np.sum(xs, axis=0, dtype=xs.dtype),
    "prod": lambda xs: np.prod(xs, axis=0, dtype=xs.dtype),
    "min": lambda xs: xs.min(axis=0),
    "max": lambda xs: xs.max(axis=0),
    "and": lambda xs: np.bitwise_and.reduce(xs, axis=0),
    "or": lambda xs: np.bitwise_or.reduce(xs, axis=0),
    "xor": lambda xs: np.bitwise_xor.reduce(xs, axis=0),
}


def contribution(pe, k, dtype):
    return ((np.arange(k) * 7 + pe * 3) % 11 + 1).astype(dtype)


@check("reduce")
def _():
    k = 6
    for dtype in ("int8", "uint8", "int32", "uint32", "int64", "float32", "float64"):
        ops = ["sum", "prod", "min", "max"] + ([] if dtype.startswith("float") else ["and", "or", "xor"])
        src, dst = rshmem.array(k, dtype), rshmem.array(k, dtype)
        src[:] = contribution(ME, k, dtype)
        allx = np.stack([contribution(p, k, dtype) for p in range(N)])
        for op in ops:
            rshmem.reduce(W, dst, src, op)
            want = REDUCE_MODEL[op](allx)
            assert np.array_equal(dst, want), (dtype, op, dst, want)
        rshmem.reduce(W, src, src, "max")  # in place
        assert np.array_equal(src, allx.max(axis=0))
        rshmem.free(dst)
        rshmem.free(src)
    # torch, and a large-ish float sum.
    t = rshmem.tensor(1000, dtype=torch.float32)
    t.copy_(torch.arange(1000, dtype=torch.float32) + ME)
    o = rshmem.tensor(1000, dtype=torch.float32)
    rshmem.reduce(W, o, t, op="sum")
    want = torch.arange(1000, dtype=torch.float32) * N + N * (N - 1) / 2
    assert torch.equal(o, want), (o[:4], want[:4])
    rshmem.free(o)
    rshmem.free(t)


@check("reduce_scatter")
def _():
    k = 3
    src, dst = rshmem.array(N * k, "int64"), rshmem.array(k, "int64")
    src[:] = contribution(ME, N * k, "int64")
    rshmem.reduce_scatter(W, dst, src, "sum")
    want = sum(contribution(p, N * k, "int64") for p in range(N))[ME * k:(ME + 1) * k]
    assert np.array_equal(dst, want), (dst, want)
    ts, td = rshmem.tensor(N * 2, dtype=torch.float64), rshmem.tensor(2, dtype=torch.float64)
    ts.fill_(ME + 1)
    rshmem.reduce_scatter(W, td, ts, "prod")
    assert torch.equal(td, torch.full((2,), float(np.prod(np.arange(1, N + 1))), dtype=torch.float64)), td
    for x in (td, ts, dst, src):
        rshmem.free(x)


@check("broadcast")
def _():
    root = N - 1
    src, dst = rshmem.array((2, 3), "float32"), rshmem.array((2, 3), "float32")
    src[:] = ME + np.arange(6).reshape(2, 3)
    rshmem.broadcast(W, dst, src, root)
    assert np.array_equal(dst, root + np.arange(6).reshape(2, 3)), dst
    t = rshmem.tensor(4, dtype=torch.int16)
    t.fill_(ME)
    rshmem.broadcast(W, t, t, 0)  # in place
    assert (t == 0).all(), t
    for x in (t, dst, src):
        rshmem.free(x)


@check("fcollect")
def _():
    src, dst = rshmem.array(3, "int32"), rshmem.array(3 * N, "int32")
    src[:] = [ME, ME * 2, -ME]
    rshmem.fcollect(W, dst, src)
    want = np.concatenate([[p, p * 2, -p] for p in range(N)]).astype(np.int32)
    assert np.array_equal(dst, want), dst
    ts, td = rshmem.tensor(2, dtype=torch.float32), rshmem.tensor((N, 2), dtype=torch.float32)
    ts.fill_(ME + 0.5)
    rshmem.fcollect(W, td, ts)
    assert torch.equal(td[:, 1], torch.arange(N, dtype=torch.float32) + 0.5), td
    for x in (td, ts, dst, src):
        rshmem.free(x)


@check("alltoall")
def _():
    k = 2
    src, dst = rshmem.array((N, k), "int64"), rshmem.array((N, k), "int64")
    for j in range(N):
        src[j] = ME * 100 + j * 10 + np.arange(k)
    rshmem.alltoall(W, dst, src)
    for i in range(N):
        assert np.array_equal(dst[i], i * 100 + ME * 10 + np.arange(k)), dst
    ts, td = rshmem.tensor(N * 3, dtype=torch.int32), rshmem.tensor(N * 3, dtype=torch.int32)
    ts.copy_(torch.arange(N * 3, dtype=torch.int32) + 1000 * ME)
    rshmem.alltoall(W, td, ts)
    for i in range(N):
        want = torch.arange(ME * 3, ME * 3 + 3, dtype=torch.int32) + 1000 * i
        assert torch.equal(td[i * 3:(i + 1) * 3], want), td
    for x in (td, ts, dst, src):
        rshmem.free(x)


@check("get_peer_array")
def _():
    a = rshmem.array(4, "int64")
    a[:] = ME
    rshmem.barrier_all()
    peer = rshmem.get_peer_array(a, RIGHT)
    assert isinstance(peer, np.ndarray) and (peer == RIGHT).all(), peer
    rshmem.barrier_all()
    peer[ME % 4] = 100 + ME  # a store into the neighbour's copy
    rshmem.barrier_all()
    assert a[LEFT % 4] == 100 + LEFT, a
    mine = rshmem.get_peer_array(a, ME)
    assert mine.__array_interface__["data"][0] == a.__array_interface__["data"][0]
    rshmem.barrier_all()
    rshmem.free(a)


@check("get_peer_tensor")
def _():
    t = rshmem.tensor((2, 2), dtype=torch.float64)
    t.fill_(ME)
    rshmem.barrier_all()
    peer = rshmem.get_peer_tensor(t, LEFT)
    assert peer.shape == (2, 2) and (peer == LEFT).all(), peer
    rshmem.barrier_all()
    rshmem.free(t)


@check("free")
def _():
    a = rshmem.array(16, "int64")
    b = rshmem.array(16, "int64")
    try:
        rshmem.free(a[4:])
        raise AssertionError("a view was freed")
    except rshmem.ArgumentError as e:
        assert e.call == "free" and "inside the allocation" in str(e), e
    rshmem.free(a)
    try:
        rshmem.put(a, np.zeros(16, dtype=np.int64), ME)
        raise AssertionError("a freed array was accepted")
    except rshmem.ArgumentError as e:
        assert e.arg == "dst" and "not symmetric" in str(e), e
    c = rshmem.array(16, "int64")  # reuses the space
    rshmem.put(c, np.full(16, 3), RIGHT)
    rshmem.barrier_all()
    assert (c == 3).all()
    rshmem.free(c)
    rshmem.free(b)


rshmem.finalize()


@check("finalize")
def _():
    assert not rshmem.is_initialized()
    try:
        rshmem.barrier_all()
        raise AssertionError("a call after finalize worked")
    except rshmem.Error as e:
        assert "finalized" in str(e), e
    rshmem.finalize()  # a second finalize does nothing
