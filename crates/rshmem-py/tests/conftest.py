"""Shared helpers of the pytest suite: starting jobs of PEs under rshmemrun and torchrun,
each under a deadline, and reading the suite's verdict lines.

The launcher is ``$RSHMEMRUN`` or the repository's ``target/release/rshmemrun``
(``cargo build --release -p rshmem --bins``).
"""

import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
EXAMPLES = HERE.parent / "examples"


class Job(NamedTuple):
    """A finished job: status and output."""

    code: int
    stdout: str
    stderr: str

    def explain(self) -> str:
        return f"status {self.code}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr[-6000:]}"


def rshmemrun_path() -> Path:
    p = Path(os.environ.get("RSHMEMRUN", ROOT / "target" / "release" / "rshmemrun"))
    if not p.exists():
        pytest.fail(f"{p} is missing: build it with `cargo build --release -p rshmem --bins` (or set RSHMEMRUN)")
    return p


def clean_env(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """This process's environment without any job's variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("RSHMEM_LAUNCHER", "RSHMEM_PE", "RSHMEM_NPES", "RSHMEM_JOB", "PMIX_", "OMPI_"))
           and k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    env.setdefault("RSHMEM_DEVICE", "cpu")
    # Several PEs on 2 cores: one thread each for PyTorch's and OpenMP's pools.
    env.setdefault("OMP_NUM_THREADS", "1")
    env.update(extra or {})
    return env


def run(cmd: List[str], timeout: int, env: Optional[Dict[str, str]] = None) -> Job:
    """Runs `cmd`, killing it after `timeout` seconds (status 124)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=clean_env(env), stdin=subprocess.DEVNULL)
        return Job(p.returncode, p.stdout, p.stderr)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        return Job(124, out, err + f"\n(killed after {timeout} s)")


def rshmemrun(n: int, script: Path, args: List[str] = (), timeout: int = 120, env: Optional[Dict[str, str]] = None) -> Job:
    """``rshmemrun -n N --timeout T python SCRIPT ARGS``."""
    cmd = [str(rshmemrun_path()), "-n", str(n), "--timeout", str(timeout), sys.executable, str(script), *args]
    return run(cmd, timeout + 30, env)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(n: int, script: Path, args: List[str] = (), timeout: int = 180, env: Optional[Dict[str, str]] = None) -> Job:
    """``torchrun --nproc-per-node N SCRIPT ARGS`` on a free port (rshmem's TCP bootstrap
    takes a second free port through RSHMEM_BOOTSTRAP_PORT)."""
    extra = {"RSHMEM_BOOTSTRAP_PORT": str(free_port())}
    extra.update(env or {})
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(n), "--master-addr", "127.0.0.1",
           "--master-port", str(free_port()), str(script), *args]
    return run(cmd, timeout, extra)


def mpirun(n: int, script: Path, args: List[str] = (), timeout: int = 180) -> Job:
    """``mpirun -np N python SCRIPT ARGS`` (Open MPI, PMIx bootstrap), or a skip where
    mpirun is not installed."""
    import shutil

    if shutil.which("mpirun") is None:
        pytest.skip("mpirun (Open MPI) is not installed")
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--timeout", str(timeout), "-np", str(n),
           "-x", "RSHMEM_DEVICE", "-x", "OMP_NUM_THREADS", sys.executable, str(script), *args]
    return run(cmd, timeout + 30)


def srun(n: int, script: Path, args: List[str] = (), timeout: int = 180) -> Job:
    """``srun --mpi=pmix -n N python SCRIPT ARGS`` (Slurm's PMIx server), or a skip where
    srun is not installed or no Slurm controller answers (scripts/slurm-local.sh starts a
    one-node Slurm, as CI does)."""
    import shutil

    if shutil.which("srun") is None:
        pytest.skip("srun (Slurm) is not installed; scripts/slurm-local.sh --install sets up a one-node Slurm")
    probe = subprocess.run(["sinfo", "-h"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"no Slurm controller answers (sinfo: {probe.stderr.strip()}); scripts/slurm-local.sh starts one")
    minutes = max(1, (timeout + 59) // 60)
    cmd = ["srun", f"--time={minutes}", "--overcommit", "--oversubscribe", "--quiet", "--mpi=pmix", "-n", str(n),
           sys.executable, str(script), *args]
    return run(cmd, timeout + 30)


CHECK = re.compile(r"CHECK (\w+) (\d+) (ok|FAIL[^\n]*?)(?=CHECK |\n|$)")


def verdicts(job: Job) -> Dict[str, Dict[int, str]]:
    """{check name: {pe: "ok" or "FAIL why"}} from a suite job's output."""
    out: Dict[str, Dict[int, str]] = {}
    for name, pe, verdict in CHECK.findall(job.stdout):
        out.setdefault(name, {})[int(pe)] = verdict
    return out
