"""Every call of the package on 1, 2 and 4 CPU PEs under rshmemrun, and on 2 PEs under
torchrun: each PE runs ``pe_suite.py``, which checks every call against a model, and
each check is one test here (``test_call[4-reduce]``: the reduce checks on 4 PEs). The
whole suite also runs once on 2 PEs under Open MPI's mpirun (PMIx), and once under Slurm's
``srun --mpi=pmix``, where installed."""

import pytest

from conftest import HERE, mpirun, rshmemrun, srun, torchrun, verdicts

SUITE = HERE / "pe_suite.py"
CHECKS = [
    "init", "teams", "array", "tensor", "interop", "put", "get", "put_signal", "signal_op",
    "signal_wait_until", "atomic_fetch_add", "atomic_compare_swap", "atomic_fetch_set_swap",
    "quiet_fence", "barrier", "reduce", "reduce_scatter", "broadcast", "fcollect", "alltoall",
    "get_peer_array", "get_peer_tensor", "free", "finalize",
]
_jobs = {}


def suite_job(launcher: str, n: int):
    """The suite's job on `n` PEs, run once per launcher and size."""
    key = (launcher, n)
    if key not in _jobs:
        start = {"rshmemrun": rshmemrun, "torchrun": torchrun, "mpirun": mpirun, "srun": srun}[launcher]
        _jobs[key] = start(n, SUITE, [str(n)], timeout=240)
    return _jobs[key]


def assert_check(launcher: str, n: int, name: str) -> None:
    job = suite_job(launcher, n)
    got = verdicts(job).get(name, {})
    bad = {pe: v for pe, v in got.items() if v != "ok"}
    assert not bad, f"{name} failed on {launcher} with {n} PEs: {bad}\n{job.explain()}"
    assert sorted(got) == list(range(n)), f"{name}: verdicts from PEs {sorted(got)} of {n}\n{job.explain()}"


@pytest.mark.parametrize("name", CHECKS)
@pytest.mark.parametrize("n", [1, 2, 4])
def test_call(n, name):
    assert_check("rshmemrun", n, name)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_suite_job_ends_cleanly(n):
    job = suite_job("rshmemrun", n)
    assert job.code == 0, job.explain()


@pytest.mark.parametrize("name", CHECKS)
def test_call_under_torchrun(name):
    assert_check("torchrun", 2, name)


def test_torchrun_job_ends_cleanly():
    job = suite_job("torchrun", 2)
    assert job.code == 0, job.explain()


@pytest.mark.parametrize("launcher", ["mpirun", "srun"])
def test_every_call_under_a_pmix_launcher(launcher):
    job = suite_job(launcher, 2)
    assert job.code == 0, job.explain()
    got = verdicts(job)
    assert sorted(got) == sorted(CHECKS), job.explain()
    bad = {name: v for name, v in got.items() if sorted(v) != [0, 1] or any(x != "ok" for x in v.values())}
    assert not bad, f"{bad}\n{job.explain()}"
