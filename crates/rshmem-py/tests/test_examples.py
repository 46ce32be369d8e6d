"""The examples, run as a user would: the all-reduce checked against gloo under torchrun
and rshmemrun, and the halo exchange on 1, 2 and 4 PEs."""

import pytest

from conftest import EXAMPLES, rshmemrun, torchrun


def test_allreduce_matches_gloo_under_torchrun():
    job = torchrun(2, EXAMPLES / "allreduce_vs_gloo.py", timeout=180)
    assert job.code == 0, job.explain()
    assert job.stdout.count("matches gloo") == 6 and "all cases match gloo" in job.stdout, job.explain()


def test_allreduce_matches_gloo_under_rshmemrun():
    job = rshmemrun(3, EXAMPLES / "allreduce_vs_gloo.py", timeout=180)
    assert job.code == 0, job.explain()
    assert "all cases match gloo" in job.stdout, job.explain()


@pytest.mark.parametrize("n", [1, 2, 4])
def test_halo_exchange_matches_the_serial_model(n):
    job = rshmemrun(n, EXAMPLES / "halo_exchange.py", ["32", "40"], timeout=120)
    assert job.code == 0, job.explain()
    assert f"halo exchange: {n} PEs x 32 cells, 40 steps: every PE matches the serial model" in job.stdout, job.explain()
