"""Bad input raises an exception naming the call, the argument and the PE; a PE that dies
or raises ends the job instead of leaving the others waiting.

The single-PE cases run in this process (a script run without a launcher is one PE);
the others start jobs of ``pe_fail.py``.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import HERE, clean_env, rshmemrun, torchrun

os.environ.setdefault("RSHMEM_DEVICE", "cpu")
import rshmem  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def one_pe():
    rshmem.init()
    assert rshmem.n_pes() == 1
    yield


def raises(call, arg, fn, *args, pe=0, kind=rshmem.ArgumentError, **kw):
    """Asserts that fn(*args, **kw) raises `kind` naming `call`, `arg` and `pe`."""
    with pytest.raises(kind) as info:
        fn(*args, **kw)
    e = info.value
    msg = str(e)
    assert msg.startswith(f"rshmem.{call}: "), msg
    assert f"`{arg}`" in msg, msg
    assert f"PE {pe}" in msg, msg
    assert (e.call, e.arg, e.pe) == (call, arg, pe), (e.call, e.arg, e.pe)
    assert isinstance(e, rshmem.Error) and isinstance(e, ValueError)
    return msg


@pytest.fixture()
def sym():
    a = rshmem.array(8, "int64")
    yield a
    rshmem.free(a)


def test_non_symmetric_buffers(sym):
    assert "not symmetric" in raises("put", "dst", rshmem.put, np.zeros(8, dtype=np.int64), sym, 0)
    assert "not symmetric" in raises("get", "src", rshmem.get, sym, np.zeros(8, dtype=np.int64), 0)
    raises("reduce", "src", rshmem.reduce, rshmem.TEAM_WORLD, sym, np.zeros(8, dtype=np.int64))
    raises("atomic_fetch_add", "dst", rshmem.atomic_fetch_add, torch.zeros(1, dtype=torch.int64), 1, 0)
    raises("free", "x", rshmem.free, np.zeros(3))
    raises("get_peer_array", "x", rshmem.get_peer_array, np.zeros(3), 0)


def test_pe_out_of_range(sym):
    for pe in (1, 7, -1):
        msg = raises("put", "remote_pe", rshmem.put, sym, np.zeros(8, dtype=np.int64), pe, pe=pe)
        assert "out of range" in msg and "0..0" in msg
    raises("get", "remote_pe", rshmem.get, np.zeros(8, dtype=np.int64), sym, 3, pe=3)
    raises("atomic_fetch_add", "remote_pe", rshmem.atomic_fetch_add, sym, 1, 2, pe=2)
    raises("signal_op", "remote_pe", rshmem.signal_op, rshmem.array(1, "uint64"), 1, "set", 5, pe=5)
    raises("get_peer_tensor", "pe", rshmem.get_peer_tensor, sym, 4, pe=4)
    raises("broadcast", "root", rshmem.broadcast, rshmem.TEAM_WORLD, sym, sym, 1, pe=1)
    raises("team_translate_pe", "src_pe", rshmem.team_translate_pe, rshmem.TEAM_WORLD, 2, rshmem.TEAM_SHARED, pe=2)
    raises("put", "remote_pe", rshmem.put, sym, np.zeros(8, dtype=np.int64), "0")


def test_dtype_and_shape_mismatches(sym):
    assert "dtype float64 does not match" in raises("put", "src", rshmem.put, sym, np.zeros(8), 0)
    assert "shape [4] does not match" in raises("put", "src", rshmem.put, sym, np.zeros(4, dtype=np.int64), 0)
    raises("get", "dst", rshmem.get, np.zeros((2, 4), dtype=np.int64), sym, 0)
    raises("put", "src", rshmem.put, sym, torch.zeros(8, dtype=torch.int32), 0)
    raises("put", "src", rshmem.put, sym, np.zeros(16, dtype=np.int64)[::2], 0)  # not contiguous
    raises("put", "src", rshmem.put, sym, [0] * 8, 0)  # not an array
    f = rshmem.array(8, "float64")
    raises("reduce", "src", rshmem.reduce, rshmem.TEAM_WORLD, sym, f)
    raises("reduce", "dst", rshmem.reduce, rshmem.TEAM_WORLD, sym[:4], sym)
    assert "cannot be reduced on the host" in raises(
        "reduce", "dst", rshmem.reduce, rshmem.TEAM_WORLD, rshmem.tensor(2, dtype=torch.float16), rshmem.tensor(2, dtype=torch.float16)
    )
    raises("reduce_scatter", "src", rshmem.reduce_scatter, rshmem.TEAM_WORLD, sym[:4], sym)
    raises("fcollect", "dst", rshmem.fcollect, rshmem.TEAM_WORLD, sym, sym[:4])
    raises("alltoall", "dst", rshmem.alltoall, rshmem.TEAM_WORLD, sym, sym[:4])
    rshmem.free(f)


def test_bad_operations_and_values(sym):
    raises("reduce", "op", rshmem.reduce, rshmem.TEAM_WORLD, sym, sym, "mean")
    raises("reduce", "team", rshmem.reduce, 0, sym, sym)
    sig = rshmem.array(2, "uint64")
    raises("put_signal", "signal", rshmem.put_signal, sym, np.zeros(8, dtype=np.int64), sig, 1, "set", 0)  # 2 elements
    raises("signal_op", "signal", rshmem.signal_op, rshmem.array(1, "float64"), 1, "set", 0)
    raises("signal_op", "signal_op", rshmem.signal_op, sig[:1], 1, "xor", 0)
    raises("signal_op", "signal_value", rshmem.signal_op, sig[:1], -1, "set", 0)
    raises("signal_wait_until", "cmp", rshmem.signal_wait_until, sig[:1], "around", 1)
    raises("atomic_fetch_add", "index", rshmem.atomic_fetch_add, sym, 1, 0, index=8)
    assert "not defined on float64" in raises("atomic_fetch_add", "dst", rshmem.atomic_fetch_add, rshmem.array(1, "float64"), 1, 0)
    raises("atomic_swap", "dst", rshmem.atomic_swap, rshmem.array(1, "int8"), 1, 0)
    raises("atomic_set", "value", rshmem.atomic_set, rshmem.array(1, "int32"), 2**40, 0)
    raises("team_split_strided", "size", rshmem.team_split_strided, rshmem.TEAM_WORLD, 0, 1, 0)
    raises("team_destroy", "team", rshmem.team_destroy, rshmem.TEAM_WORLD)


def test_allocation_arguments():
    raises("array", "dtype", rshmem.array, 4, "complex64")
    raises("array", "dtype", rshmem.array, 4, "no-such-type")
    raises("array", "shape", rshmem.array, (2, -1))
    raises("array", "shape", rshmem.array, "four")
    raises("tensor", "device", rshmem.tensor, 4, device="cuda")
    raises("tensor", "dtype", rshmem.tensor, 4, dtype="float32")
    a = rshmem.array(8)
    assert "inside the allocation" in raises("free", "x", rshmem.free, a[2:])
    rshmem.free(a)
    assert "not a symmetric allocation" in raises("free", "x", rshmem.free, a)


def test_streams_need_gpu_pes(sym):
    msg = raises("put", "stream", rshmem.put, sym, np.zeros(8, dtype=np.int64), 0, stream=0)
    assert "no GPU" in msg
    raises("barrier", "stream", rshmem.barrier, rshmem.TEAM_WORLD, stream=1)
    raises("reduce", "stream", rshmem.reduce, rshmem.TEAM_WORLD, sym, sym, stream=7)


def test_timeouts_raise_timeout_error():
    s = rshmem.array(1, "uint64")
    with pytest.raises(rshmem.TimeoutError) as info:
        rshmem.signal_wait_until(s, "ne", 0, timeout=0.05)
    assert isinstance(info.value, TimeoutError) and info.value.call == "signal_wait_until" and info.value.pe == 0
    rshmem.free(s)


def test_calls_before_init_name_the_fix():
    code = "import rshmem\ntry:\n    rshmem.my_pe()\nexcept rshmem.Error as e:\n    print(e)\n"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=clean_env())
    assert "rshmem.my_pe: rshmem is not initialized: call rshmem.init() first" in p.stdout, p


def test_differing_collective_arguments_are_named():
    job = rshmemrun(2, HERE / "pe_fail.py", ["mismatch"], timeout=60, env={"RSHMEM_COLL_CHECK": "1"})
    assert job.code == 0, job.explain()
    for pe in (0, 1):
        assert f"PE {pe}: ArgumentError: rshmem.reduce: reduce: argument `nreduce` differs between PEs: PE 1 passed 8" in job.stdout, job.explain()
        assert f"PE {pe}: reached the end" in job.stdout


@pytest.mark.parametrize("mode,code", [("die", 3), ("raise", 1)])
def test_a_failing_pe_ends_the_rshmemrun_job(mode, code):
    job = rshmemrun(2, HERE / "pe_fail.py", [mode], timeout=60)
    assert job.code == code, job.explain()
    assert "PE 1" in job.stderr and "before finalize" in job.stderr, job.explain()
    assert "PE 0: reached the end" not in job.stdout


def test_a_failing_pe_ends_the_torchrun_job():
    job = torchrun(2, HERE / "pe_fail.py", ["raise"], timeout=120)
    assert job.code != 0 and job.code != 124, job.explain()
    assert "PE 1 closed its bootstrap connection before finalize" in job.stderr, job.explain()
    assert "PE 0: reached the end" not in job.stdout
