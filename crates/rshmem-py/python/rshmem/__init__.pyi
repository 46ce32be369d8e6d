"""Typed interface of the ``rshmem`` package (see ``__init__.py`` for the full docs)."""

from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from ._buffers import SymView as SymView
from ._errors import ArgumentError as ArgumentError
from ._errors import Error as Error
from ._errors import TimeoutError as TimeoutError

__version__: str

Array = Any
"""A NumPy array, a PyTorch tensor, or anything with ``__array_interface__`` /
``__cuda_array_interface__`` (C-contiguous)."""
Stream = Any
"""A ``torch.cuda.Stream`` (or any object with ``cuda_stream``/``__cuda_stream__``), or a
raw ``CUstream`` handle as an int."""
Shape = Union[int, Sequence[int]]

SIGNAL_SET: str
"""``signal_op`` value: the signal word becomes the value."""
SIGNAL_ADD: str
"""``signal_op`` value: the value is added to the signal word."""

class Team:
    """A set of PEs that collectives run over (OpenSHMEM ``shmem_team_t``)."""

    handle: int
    name: Optional[str]
    def __init__(self, handle: int, name: Optional[str] = ...) -> None: ...
    def my_pe(self) -> int:
        """This PE's number within the team."""
    def n_pes(self) -> int:
        """Number of PEs in the team."""
    def translate_pe(self, pe: int, dest: Team) -> int:
        """The number in `dest` of this team's PE `pe`, or -1."""
    def split_strided(self, start: int, stride: int, size: int) -> Optional[Team]:
        """See `team_split_strided`."""
    def split_2d(self, xrange: int) -> Tuple[Optional[Team], Optional[Team]]:
        """See `team_split_2d`."""
    def destroy(self) -> None:
        """See `team_destroy`."""

TEAM_WORLD: Team
"""Every PE of the job."""
TEAM_SHARED: Team
"""The PEs that share memory with this PE (its host), this PE included."""

def init() -> None:
    """Starts rshmem on this PE (collective over every PE of the job)."""
def finalize() -> None:
    """Ends rshmem on this PE (collective)."""
def is_initialized() -> bool:
    """Whether `init` ran and `finalize` did not."""
def global_exit(code: int = ...) -> None:
    """Ends every PE of the job with exit status `code`."""
def my_pe() -> int:
    """This PE's number in `TEAM_WORLD`."""
def n_pes() -> int:
    """Number of PEs in the job."""
def gpu_device() -> Optional[int]:
    """The CUDA device ordinal of a GPU PE, or None on a CPU PE."""
def team_my_pe(team: Team) -> int:
    """This PE's number in `team`."""
def team_n_pes(team: Team) -> int:
    """Number of PEs in `team`."""
def team_translate_pe(src_team: Team, src_pe: int, dest_team: Team) -> int:
    """The number in `dest_team` of `src_team`'s PE `src_pe`, or -1."""
def team_split_strided(parent: Team, start: int, stride: int, size: int) -> Optional[Team]:
    """A team of `parent`'s PEs start, start + stride, ... (collective over `parent`)."""
def team_split_2d(parent: Team, xrange: int) -> Tuple[Optional[Team], Optional[Team]]:
    """(row team, column team) of a grid with `xrange` columns (collective)."""
def team_destroy(team: Team) -> None:
    """Destroys a team made by a split (collective over its members)."""
def array(shape: Shape, dtype: Any = ...) -> np.ndarray:
    """A zeroed NumPy array on the symmetric heap (collective; CPU PEs)."""
def tensor(shape: Shape, dtype: Any = ..., device: Any = ...) -> Any:
    """A zeroed PyTorch tensor on the symmetric heap (collective)."""
def free(x: Array) -> None:
    """Frees a symmetric array or tensor (collective)."""
def is_symmetric(x: Array) -> bool:
    """Whether `x` lies in this PE's symmetric heap."""
def get_peer_array(x: Array, pe: int) -> np.ndarray:
    """A NumPy view of PE `pe`'s copy of `x` (mapped peers)."""
def get_peer_tensor(x: Array, pe: int) -> Any:
    """A PyTorch view of PE `pe`'s copy of `x` (mapped peers)."""
def put(dst: Array, src: Array, remote_pe: int, stream: Stream = ...) -> None:
    """Copies local `src` into `remote_pe`'s symmetric `dst`."""
def get(dst: Array, src: Array, remote_pe: int, stream: Stream = ...) -> None:
    """Copies `remote_pe`'s symmetric `src` into local `dst`."""
def put_signal(
    dst: Array, src: Array, signal: Array, signal_value: int, signal_op: str, remote_pe: int, stream: Stream = ...
) -> None:
    """`put`, then a signal update on `remote_pe` that lands after the data."""
def signal_op(signal: Array, signal_value: int, signal_op: str, remote_pe: int, stream: Stream = ...) -> None:
    """Sets or adds to `remote_pe`'s signal word."""
def signal_fetch(signal: Array) -> int:
    """This PE's signal word."""
def signal_wait_until(
    signal: Array, cmp: str, value: int, timeout: Optional[float] = ..., stream: Stream = ...
) -> Optional[int]:
    """Waits until this PE's signal word compares `cmp` to `value`; returns it."""
def atomic_fetch_add(dst: Array, value: int, remote_pe: int, index: int = ...) -> int:
    """Atomic fetch-and-add on one element of `remote_pe`'s `dst`."""
def atomic_add(dst: Array, value: int, remote_pe: int, index: int = ...) -> None:
    """Atomic add on one element of `remote_pe`'s `dst`."""
def atomic_compare_swap(dst: Array, cond: int, value: int, remote_pe: int, index: int = ...) -> int:
    """Atomic compare-and-swap on one element of `remote_pe`'s `dst`; returns the old value."""
def atomic_fetch(dst: Array, remote_pe: int, index: int = ...) -> Union[int, float]:
    """Atomic read of one element of `remote_pe`'s `dst`."""
def atomic_set(dst: Array, value: Union[int, float], remote_pe: int, index: int = ...) -> None:
    """Atomic write of one element of `remote_pe`'s `dst`."""
def atomic_swap(dst: Array, value: Union[int, float], remote_pe: int, index: int = ...) -> Union[int, float]:
    """Atomic swap of one element of `remote_pe`'s `dst`; returns the old value."""
def quiet(stream: Stream = ...) -> None:
    """Completes this PE's puts, signals and atomics."""
def fence() -> None:
    """Orders this PE's puts, signals and atomics per target PE."""
def barrier_all(stream: Stream = ...) -> None:
    """`quiet`, then waits for every PE."""
def barrier(team: Team, stream: Stream = ...) -> None:
    """`quiet`, then waits for every member of `team`."""
def sync_all() -> None:
    """Waits for every PE (no `quiet`)."""
def sync(team: Team) -> None:
    """Waits for every member of `team` (no `quiet`)."""
def reduce(team: Team, dst: Array, src: Array, op: str = ..., stream: Stream = ...) -> None:
    """All-reduce over `team` (sum, prod, min, max, and, or, xor)."""
def reduce_scatter(team: Team, dst: Array, src: Array, op: str = ..., stream: Stream = ...) -> None:
    """Reduce-scatter over `team`."""
def broadcast(team: Team, dst: Array, src: Array, root: int, stream: Stream = ...) -> None:
    """Member `root`'s `src` into every member's `dst`."""
def fcollect(team: Team, dst: Array, src: Array, stream: Stream = ...) -> None:
    """All-gather over `team`, in team order."""
def alltoall(team: Team, dst: Array, src: Array, stream: Stream = ...) -> None:
    """All-to-all over `team`."""
