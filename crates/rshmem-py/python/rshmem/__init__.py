"""rshmem: OpenSHMEM-style symmetric memory for NumPy and PyTorch.

Every PE (process) of a job owns a symmetric heap; arrays allocated on it with
`array` (NumPy) or `tensor` (PyTorch) exist at the same place on every PE, and any PE
reads, writes and updates any other PE's copy with one-sided calls (`put`, `get`,
`put_signal`, the atomics) or joins the others in collectives (`reduce`, `broadcast`,
`fcollect`, `alltoall`, ...). Names follow NVSHMEM's Python module ``nvshmem.core``
where the concept is the same.

CPU PEs share memory on one host (and reach other hosts through UCX); GPU PEs, where a
CUDA driver and a GPU are present, keep the heap in GPU memory and take a ``stream``
argument (a ``torch.cuda.Stream`` or a raw ``CUstream`` handle) to enqueue calls on it.

Start N PEs with ``rshmemrun -n N python script.py``, ``mpirun``, ``srun --mpi=pmix``
or ``torchrun``; a script run plainly is one PE::

    import numpy as np, rshmem
    rshmem.init()
    me, n = rshmem.my_pe(), rshmem.n_pes()
    inbox = rshmem.array(4, dtype="int64")        # collective, symmetric
    rshmem.put(inbox, np.full(4, me), (me + 1) % n)
    rshmem.barrier_all()                           # completes the puts
    assert (inbox == (me - 1) % n).all()
    rshmem.finalize()

Bad input raises `ArgumentError` (also a ``ValueError``) naming the call, the argument
and the PE; other failures raise `Error`. Reading a symmetric array while a peer writes
it is a race, as in C: synchronize first (barrier, wait, quiet).
"""

from __future__ import annotations

import atexit
import sys
from typing import Any, Optional, Sequence, Tuple, Union

from . import _rshmem as _native
from ._buffers import DTYPES, Desc, SymView, describe
from ._errors import ArgumentError, Error, TimeoutError

_native.set_exception_types(Error, ArgumentError, TimeoutError)

__all__ = [
    "Error", "ArgumentError", "TimeoutError", "Team", "TEAM_WORLD", "TEAM_SHARED", "SymView",
    "init", "finalize", "is_initialized", "global_exit", "my_pe", "n_pes", "gpu_device",
    "team_my_pe", "team_n_pes", "team_translate_pe", "team_split_strided", "team_split_2d", "team_destroy",
    "array", "tensor", "free", "get_peer_array", "get_peer_tensor", "is_symmetric",
    "put", "get", "put_signal", "signal_op", "signal_fetch", "signal_wait_until", "SIGNAL_SET", "SIGNAL_ADD",
    "atomic_fetch_add", "atomic_add", "atomic_compare_swap", "atomic_fetch", "atomic_set", "atomic_swap",
    "quiet", "fence", "barrier_all", "barrier", "sync_all", "sync",
    "reduce", "reduce_scatter", "broadcast", "fcollect", "alltoall",
]

__version__ = "0.1.0"

Array = Any
"""A NumPy array, a PyTorch tensor, or anything with ``__array_interface__`` /
``__cuda_array_interface__`` (C-contiguous)."""


class _State:
    """This process's PE numbers, read once at init."""

    me = -1
    n = 0
    gpu = -1  # CUDA ordinal of a GPU PE, -1 on CPU PEs
    failed = False  # an exception reached the top: do not finalize at exit


_state = _State()


# ----------------------------------------------------------------------------- errors


def _fail(call: str, arg: str, detail: str, pe: Optional[int] = None) -> ArgumentError:
    me = _state.me
    return ArgumentError(f"rshmem.{call}: argument `{arg}`: {detail} (on PE {me})", call, arg, me if pe is None else pe)


def _ready(call: str) -> None:
    if _state.me < 0:
        raise Error(f"rshmem.{call}: rshmem is not initialized: call rshmem.init() first", call)


def _pe(call: str, arg: str, pe: Any, n: Optional[int] = None, team: Optional["Team"] = None) -> int:
    n = _state.n if n is None else n
    if isinstance(pe, bool) or not isinstance(pe, int) and not hasattr(pe, "__index__"):
        raise _fail(call, arg, f"a PE number must be an int, not {type(pe).__name__}")
    p = int(pe)
    if not 0 <= p < n:
        where = "" if team is None else f" of {team!r}"
        raise _fail(call, arg, f"PE {p} is out of range (valid PEs{where} are 0..{n - 1})", pe=p)
    return p


def _desc(call: str, arg: str, x: Any) -> Desc:
    d = describe(x)
    if d is None:
        raise _fail(call, arg, f"expected a NumPy array or a PyTorch tensor, got {type(x).__name__}")
    if not d.contiguous:
        raise _fail(call, arg, f"the {d.dtype}{list(d.shape)} array is not contiguous (pass a contiguous copy or slice)")
    if d.device == -2:
        raise _fail(call, arg, f"tensors on {x.device} are not supported (host memory or this PE's GPU)")
    if d.device >= 0 and d.device != _state.gpu:
        mine = "its heap is in host memory" if _state.gpu < 0 else f"its GPU is cuda:{_state.gpu}"
        raise _fail(call, arg, f"the array is on cuda:{d.device}, but {mine}")
    return d


def _on_device(d: Desc) -> bool:
    return d.device != -1


def _sym(call: str, arg: str, d: Desc) -> Desc:
    if d.nbytes == 0:
        return d
    found = _native.find_allocation(d.ptr)
    if found is None or d.ptr + d.nbytes > found[0] + found[1]:
        raise _fail(
            call, arg,
            f"the {d.dtype}{list(d.shape)} array at {d.ptr:#x} is not symmetric "
            "(allocate it with rshmem.array or rshmem.tensor)",
        )
    return d


def _same(call: str, a: str, da: Desc, b: str, db: Desc, shape: bool = True) -> None:
    if da.dtype != db.dtype:
        raise _fail(call, b, f"dtype {db.dtype} does not match `{a}`'s {da.dtype}")
    if shape and da.shape != db.shape:
        raise _fail(call, b, f"shape {list(db.shape)} does not match `{a}`'s {list(da.shape)}")


def _team(call: str, team: Any) -> "Team":
    if isinstance(team, Team):
        if team.handle == _native.INVALID:
            raise _fail(call, "team", "the team is invalid (this PE is not a member, or it was destroyed)")
        return team
    raise _fail(call, "team", f"expected an rshmem.Team (TEAM_WORLD, TEAM_SHARED, or a split), got {type(team).__name__}")


def _stream(call: str, stream: Any) -> Optional[int]:
    """The raw CUstream handle `stream` names (None for none)."""
    if stream is None:
        return None
    if _state.gpu < 0:
        raise _fail(call, "stream", "this PE has no GPU (its heap is in host memory): stream-ordered calls need GPU PEs")
    if isinstance(stream, bool):
        raise _fail(call, "stream", "a stream is a torch.cuda.Stream or a raw CUstream handle (int)")
    if isinstance(stream, int):
        return stream
    dev = getattr(stream, "device", None)
    index = getattr(dev, "index", None)
    if index is not None and index != _state.gpu:
        raise _fail(call, "stream", f"the stream belongs to cuda:{index}, this PE's GPU is cuda:{_state.gpu}")
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1])
    for attr in ("cuda_stream", "ptr", "handle"):
        h = getattr(stream, attr, None)
        if isinstance(h, int):
            return h
    raise _fail(call, "stream", f"a stream is a torch.cuda.Stream or a raw CUstream handle, not {type(stream).__name__}")


def _device_path(call: str, stream: Optional[int], local: Desc, local_arg: str) -> bool:
    """Whether a call runs stream-ordered on the GPU (else through the host API)."""
    if stream is not None:
        if not _on_device(local):
            raise _fail(call, local_arg, f"a stream-ordered {call} needs it on cuda:{_state.gpu}, not in host memory")
        return True
    return _state.gpu >= 0 and _on_device(local)


# ----------------------------------------------------------------------------- setup


def init() -> None:
    """Starts rshmem on this PE: a collective call over every PE of the job.

    The job comes from the environment: ``rshmemrun``, a PMIx launcher (``mpirun``,
    ``srun --mpi=pmix``), torchrun (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``,
    ``MASTER_PORT``), or none (one PE). A second call does nothing. rshmem finalizes
    itself at exit if the program did not call `finalize`, unless an exception ended the
    program (then the launcher ends the job, as for a PE that dies).
    """
    _native.init()
    _state.me = _native.my_pe()
    _state.n = _native.n_pes()
    _state.gpu = _native.gpu_ordinal()


def finalize() -> None:
    """Ends rshmem on this PE (collective: a barrier over all PEs first). Arrays of
    symmetric memory stay readable until the process ends; no call works afterwards."""
    _ready("finalize")
    _native.finalize()


def is_initialized() -> bool:
    """Whether `init` ran and `finalize` did not."""
    return bool(_native.initialized())


def global_exit(code: int = 1) -> None:
    """Ends every PE of the job with exit status `code` (OpenSHMEM ``global_exit``)."""
    _ready("global_exit")
    _native.global_exit(int(code))


def my_pe() -> int:
    """This PE's number in `TEAM_WORLD` (0 .. n_pes() - 1)."""
    _ready("my_pe")
    return _state.me


def n_pes() -> int:
    """Number of PEs in the job."""
    _ready("n_pes")
    return _state.n


def gpu_device() -> Optional[int]:
    """The CUDA device ordinal of a GPU PE (its heap is in that GPU's memory), or None
    on a CPU PE."""
    _ready("gpu_device")
    return None if _state.gpu < 0 else _state.gpu


@atexit.register
def _at_exit() -> None:
    if _native.initialized() and not _state.failed:
        try:
            _native.finalize()
        except Exception as e:  # pragma: no cover - reported, the process is ending anyway
            print(f"rshmem: PE {_state.me}: finalize at exit failed: {e}", file=sys.stderr)


_previous_hook = sys.excepthook


def _excepthook(kind: Any, value: Any, tb: Any) -> None:
    # An exception that ends the program must not lead into finalize's barrier, which
    # the other PEs may never reach: the process exits unfinalized and its launcher (or
    # the TCP bootstrap) ends the job.
    _state.failed = True
    _previous_hook(kind, value, tb)


sys.excepthook = _excepthook


# ----------------------------------------------------------------------------- teams


class Team:
    """A set of PEs that collectives run over (OpenSHMEM ``shmem_team_t``).

    `TEAM_WORLD` holds every PE; `TEAM_SHARED` the PEs that share memory with this one;
    `team_split_strided` and `team_split_2d` make more. PE numbers passed with a team
    (``root``, ``translate_pe``) count within it.
    """

    __slots__ = ("handle", "name")

    def __init__(self, handle: int, name: Optional[str] = None) -> None:
        self.handle = int(handle)
        self.name = name

    def my_pe(self) -> int:
        """This PE's number within the team."""
        return team_my_pe(self)

    def n_pes(self) -> int:
        """Number of PEs in the team."""
        return team_n_pes(self)

    def translate_pe(self, pe: int, dest: "Team") -> int:
        """The number in `dest` of this team's PE `pe`, or -1 if it is not in `dest`."""
        return team_translate_pe(self, pe, dest)

    def split_strided(self, start: int, stride: int, size: int) -> Optional["Team"]:
        """See `team_split_strided`."""
        return team_split_strided(self, start, stride, size)

    def split_2d(self, xrange: int) -> Tuple[Optional["Team"], Optional["Team"]]:
        """See `team_split_2d`."""
        return team_split_2d(self, xrange)

    def destroy(self) -> None:
        """See `team_destroy`."""
        team_destroy(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Team) and other.handle == self.handle

    def __hash__(self) -> int:
        return hash(self.handle)

    def __repr__(self) -> str:
        return self.name or f"Team({self.handle})"


TEAM_WORLD = Team(_native.WORLD, "TEAM_WORLD")
"""Every PE of the job."""
TEAM_SHARED = Team(_native.SHARED, "TEAM_SHARED")
"""The PEs that share memory with this PE (its host), this PE included."""


def team_my_pe(team: Team) -> int:
    """This PE's number in `team`."""
    _ready("team_my_pe")
    return _native.team_my_pe(_team("team_my_pe", team).handle)


def team_n_pes(team: Team) -> int:
    """Number of PEs in `team`."""
    _ready("team_n_pes")
    return _native.team_n_pes(_team("team_n_pes", team).handle)


def team_translate_pe(src_team: Team, src_pe: int, dest_team: Team) -> int:
    """The number in `dest_team` of `src_team`'s PE `src_pe`, or -1 if that PE is not a
    member of `dest_team`."""
    call = "team_translate_pe"
    _ready(call)
    s = _team(call, src_team)
    pe = _pe(call, "src_pe", src_pe, _native.team_n_pes(s.handle), s)
    return _native.team_translate_pe(s.handle, pe, _team(call, dest_team).handle)


def team_split_strided(parent: Team, start: int, stride: int, size: int) -> Optional[Team]:
    """A new team of `parent`'s PEs ``start, start + stride, ...`` (`size` of them).
    Collective over `parent`: every member passes the same arguments. Returns None on
    the PEs left out."""
    call = "team_split_strided"
    _ready(call)
    h = _native.team_split_strided(_team(call, parent).handle, int(start), int(stride), int(size))
    return None if h == _native.INVALID else Team(h)


def team_split_2d(parent: Team, xrange: int) -> Tuple[Optional[Team], Optional[Team]]:
    """Splits `parent` into a grid with `xrange` columns: returns (this PE's row team,
    its column team). Collective over `parent`."""
    call = "team_split_2d"
    _ready(call)
    x, y = _native.team_split_2d(_team(call, parent).handle, int(xrange))
    return (None if x == _native.INVALID else Team(x), None if y == _native.INVALID else Team(y))


def team_destroy(team: Team) -> None:
    """Destroys a team made by a split (collective over its members)."""
    call = "team_destroy"
    _ready(call)
    t = _team(call, team)
    if t.handle in (_native.WORLD, _native.SHARED):
        raise _fail(call, "team", f"{t!r} is predefined and cannot be destroyed")
    _native.team_destroy(t.handle)
    t.handle = _native.INVALID


# ----------------------------------------------------------------------------- memory


def _shape(call: str, shape: Union[int, Sequence[int]]) -> Tuple[int, ...]:
    try:
        if isinstance(shape, (str, bytes)):
            raise TypeError
        out = (int(shape),) if isinstance(shape, int) or hasattr(shape, "__index__") else tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise _fail(call, "shape", f"expected an int or a sequence of ints, got {shape!r}") from None
    if any(s < 0 for s in out):
        raise _fail(call, "shape", f"{list(out)} has a negative extent")
    return out


def _alloc(call: str, shape: Tuple[int, ...], dtype: str, device: int) -> SymView:
    size = DTYPES[dtype][0]
    n = 1
    for s in shape:
        n *= s
    addr = _native.malloc(call, n * size, 256)
    return SymView(addr, shape, dtype, device)


def array(shape: Union[int, Sequence[int]], dtype: Any = "float32") -> Any:
    """A zeroed NumPy array on the symmetric heap (CPU PEs). Collective: every PE asks
    for the same shape and dtype. Free it with `free` (collective) or let it live until
    the end."""
    import numpy as np

    call = "array"
    _ready(call)
    dims = _shape(call, shape)
    try:
        name = np.dtype(dtype).name
    except TypeError:
        raise _fail(call, "dtype", f"{dtype!r} is not a NumPy dtype") from None
    if name not in DTYPES:
        raise _fail(call, "dtype", f"{name} is not supported (one of {', '.join(k for k in DTYPES if DTYPES[k][2])})")
    if _state.gpu >= 0:
        raise _fail(call, "dtype", f"this PE's heap is in GPU memory (cuda:{_state.gpu}): use rshmem.tensor for device arrays")
    return np.asarray(_alloc(call, dims, name, -1))


def _torch(call: str) -> Any:
    try:
        import torch
    except ImportError:
        raise Error(f"rshmem.{call}: PyTorch is not installed (pip install torch)", call) from None
    return torch


def tensor(shape: Union[int, Sequence[int]], dtype: Any = None, device: Any = None) -> Any:
    """A zeroed PyTorch tensor on the symmetric heap. Collective: every PE asks for the
    same shape and dtype (default ``torch.float32``).

    `device` is None (the heap's: ``cpu`` on CPU PEs, the PE's GPU on GPU PEs), ``"cpu"``
    or ``"cuda"``/``"cuda:N"``/a ``torch.device``, which must be the heap's."""
    call = "tensor"
    _ready(call)
    torch = _torch(call)
    dims = _shape(call, shape)
    dtype = torch.float32 if dtype is None else dtype
    if not isinstance(dtype, torch.dtype):
        raise _fail(call, "dtype", f"expected a torch.dtype, got {dtype!r}")
    name = str(dtype)[6:]
    if name not in DTYPES:
        raise _fail(call, "dtype", f"{dtype} is not supported (one of {', '.join('torch.' + k for k in DTYPES)})")
    if device is not None:
        dev = torch.device(device)
        if dev.type == "cuda" and dev.index is None:
            dev = torch.device("cuda", _state.gpu if _state.gpu >= 0 else 0)
        want = "cpu" if _state.gpu < 0 else f"cuda:{_state.gpu}"
        if str(dev) != want:
            raise _fail(call, "device", f"{dev} is not where this PE's heap lives ({want})")
    return torch.from_dlpack(_alloc(call, dims, name, _state.gpu))


def free(x: Array) -> None:
    """Frees the symmetric array or tensor `x` (collective: every PE frees the same one,
    after a barrier). `x` must start its allocation; views of it become invalid."""
    call = "free"
    _ready(call)
    d = _desc(call, "x", x)
    _native.free(d.ptr)


def is_symmetric(x: Array) -> bool:
    """Whether `x` lies in this PE's symmetric heap."""
    _ready("is_symmetric")
    d = describe(x)
    if d is None:
        return False
    found = _native.find_allocation(d.ptr)
    return found is not None and d.ptr + d.nbytes <= found[0] + found[1]


def _peer(call: str, x: Array, pe: int) -> Tuple[Desc, int]:
    _ready(call)
    d = _sym(call, "x", _desc(call, "x", x))
    p = _pe(call, "pe", pe)
    addr = _native.peer_addr(d.ptr, p)
    if addr is None:
        raise _fail(call, "pe", f"PE {p}'s heap is not mapped into this process (another host, or RSHMEM_TRANSPORT=ucx)", pe=p)
    return d, addr


def get_peer_array(x: Array, pe: int) -> Any:
    """A NumPy array over PE `pe`'s copy of the symmetric array `x` (loads and stores
    reach it directly), when `pe`'s heap is mapped into this process (same host)."""
    import numpy as np

    call = "get_peer_array"
    d, addr = _peer(call, x, pe)
    if _state.gpu >= 0:
        raise _fail(call, "x", "this PE's heap is in GPU memory: use get_peer_tensor")
    if DTYPES[d.dtype][2] is None:
        raise _fail(call, "x", f"NumPy has no {d.dtype}: use get_peer_tensor")
    return np.asarray(SymView(addr, d.shape, d.dtype, -1))


def get_peer_tensor(x: Array, pe: int) -> Any:
    """A PyTorch tensor over PE `pe`'s copy of the symmetric array `x` (on this PE's
    device), when `pe`'s heap is mapped into this process."""
    call = "get_peer_tensor"
    torch = _torch(call)
    d, addr = _peer(call, x, pe)
    return torch.from_dlpack(SymView(addr, d.shape, d.dtype, _state.gpu))


# ----------------------------------------------------------------------------- RMA


def _rma(call: str, dst: Array, src: Array, remote_pe: int, stream: Any) -> Tuple[int, Desc, Desc, Optional[int], bool]:
    """Checks of put (symmetric `dst`) and get (symmetric `src`): (PE, dst, src, stream
    handle, whether the call runs on the GPU)."""
    _ready(call)
    pe = _pe(call, "remote_pe", remote_pe)
    if call == "get":
        sd = _sym(call, "src", _desc(call, "src", src))
        dd = _desc(call, "dst", dst)
        _same(call, "src", sd, "dst", dd)
        local, local_arg = dd, "dst"
    else:
        dd = _sym(call, "dst", _desc(call, "dst", dst))
        sd = _desc(call, "src", src)
        _same(call, "dst", dd, "src", sd)
        local, local_arg = sd, "src"
    h = _stream(call, stream)
    return pe, dd, sd, h, _device_path(call, h, local, local_arg)


def put(dst: Array, src: Array, remote_pe: int, stream: Any = None) -> None:
    """Copies local `src` into `remote_pe`'s copy of the symmetric `dst` (same dtype and
    shape). Returns once `src` may be reused; the data is complete at the target after
    `quiet` (or a barrier). With `stream` (GPU PEs) the copy is enqueued on it."""
    pe, dd, sd, h, dev = _rma("put", dst, src, remote_pe, stream)
    if dev:
        _native.put_on_stream(dd.ptr, sd.ptr, sd.nbytes, pe, h)
    elif sd.nbytes:
        _native.putmem(dd.ptr, sd.ptr, sd.nbytes, pe)


def get(dst: Array, src: Array, remote_pe: int, stream: Any = None) -> None:
    """Copies `remote_pe`'s copy of the symmetric `src` into local `dst` (same dtype and
    shape); complete on return (or, with `stream`, in stream order)."""
    pe, dd, sd, h, dev = _rma("get", dst, src, remote_pe, stream)
    if dev:
        _native.get_on_stream(dd.ptr, sd.ptr, sd.nbytes, pe, h)
    elif sd.nbytes:
        _native.getmem(dd.ptr, sd.ptr, sd.nbytes, pe)


SIGNAL_SET = "set"
"""`signal_op` value: the signal word becomes the value."""
SIGNAL_ADD = "add"
"""`signal_op` value: the value is added to the signal word."""


def _signal(call: str, signal: Array) -> Desc:
    d = _sym(call, "signal", _desc(call, "signal", signal))
    if d.dtype not in ("uint64", "int64") or d.numel != 1:
        raise _fail(call, "signal", f"a signal is one uint64 (or int64) element of a symmetric array, not {d.dtype}{list(d.shape)}")
    return d


def _signal_value(call: str, value: Any) -> int:
    v = int(value)
    if not 0 <= v < 1 << 64:
        raise _fail(call, "signal_value", f"{v} is not a 64-bit unsigned value")
    return v


def _signal_kind(call: str, op: Any) -> str:
    if op not in (SIGNAL_SET, SIGNAL_ADD):
        raise _fail(call, "signal_op", f"{op!r} is not a signal operation ('set' or 'add')")
    return op


def put_signal(dst: Array, src: Array, signal: Array, signal_value: int, signal_op: str, remote_pe: int, stream: Any = None) -> None:
    """`put` of `src` into `remote_pe`'s `dst`, then an update of its `signal` word
    (``"set"`` to `signal_value`, or ``"add"``) that lands after the data: a waiter on
    `signal` finds the data complete (`signal_wait_until`)."""
    call = "put_signal"
    pe, dd, sd, h, dev = _rma(call, dst, src, remote_pe, stream)
    sig = _signal(call, signal)
    v, op = _signal_value(call, signal_value), _signal_kind(call, signal_op)
    if dev:
        _native.put_signal_on_stream(dd.ptr, sd.ptr, sd.nbytes, sig.ptr, v, op, pe, h)
    else:
        _native.putmem_signal(dd.ptr, sd.ptr, sd.nbytes, sig.ptr, v, op, pe)


def signal_op(signal: Array, signal_value: int, signal_op: str, remote_pe: int, stream: Any = None) -> None:
    """Updates `remote_pe`'s copy of the `signal` word: ``"set"`` it to `signal_value`
    or ``"add"`` `signal_value` to it (atomically)."""
    call = "signal_op"
    _ready(call)
    pe = _pe(call, "remote_pe", remote_pe)
    sig = _signal(call, signal)
    v, op = _signal_value(call, signal_value), _signal_kind(call, signal_op)
    h = _stream(call, stream)
    if h is not None:
        _native.signal_on_stream(sig.ptr, v, op, pe, h)
    else:
        _native.signal_op(sig.ptr, v, op, pe)


def signal_fetch(signal: Array) -> int:
    """This PE's `signal` word, read atomically."""
    call = "signal_fetch"
    _ready(call)
    return _native.signal_fetch(_signal(call, signal).ptr)


_CMPS = {"eq": "eq", "ne": "ne", "gt": "gt", "ge": "ge", "lt": "lt", "le": "le",
         "==": "eq", "!=": "ne", ">": "gt", ">=": "ge", "<": "lt", "<=": "le"}


def signal_wait_until(signal: Array, cmp: str, value: int, timeout: Optional[float] = None, stream: Any = None) -> Optional[int]:
    """Waits until this PE's `signal` word compares `cmp` (``"eq"``, ``"ne"``, ``"gt"``,
    ``"ge"``, ``"lt"``, ``"le"``, or ``"=="``, ...) to `value`; returns the word. A
    `timeout` in seconds raises `TimeoutError` when it runs out. With `stream` (GPU
    PEs) the wait is enqueued and None is returned."""
    call = "signal_wait_until"
    _ready(call)
    sig = _signal(call, signal)
    how = _CMPS.get(cmp) if isinstance(cmp, str) else None
    if how is None:
        raise _fail(call, "cmp", f"{cmp!r} is not a comparison (eq, ne, gt, ge, lt, le)")
    v = _signal_value(call, value)
    h = _stream(call, stream)
    if h is not None:
        if timeout is not None:
            raise _fail(call, "timeout", "a stream-ordered wait has no timeout (RSHMEM_DEVICE_WAIT_TIMEOUT bounds it)")
        _native.wait_until_on_stream(sig.ptr, how, v, h)
        return None
    return _native.signal_wait_until(sig.ptr, how, v, None if timeout is None else float(timeout))


# ----------------------------------------------------------------------------- atomics


def _element(call: str, dst: Array, remote_pe: int, index: int) -> Tuple[int, str, int]:
    _ready(call)
    pe = _pe(call, "remote_pe", remote_pe)
    d = _sym(call, "dst", _desc(call, "dst", dst))
    i = int(index)
    if not 0 <= i < d.numel:
        raise _fail(call, "index", f"element {i} is outside the {d.numel}-element array")
    return d.ptr + i * DTYPES[d.dtype][0], d.dtype, pe


def atomic_fetch_add(dst: Array, value: int, remote_pe: int, index: int = 0) -> int:
    """Atomically adds `value` to element `index` of `remote_pe`'s copy of the symmetric
    `dst` (int32, int64, uint32 or uint64; integers wrap) and returns its old value."""
    addr, dtype, pe = _element("atomic_fetch_add", dst, remote_pe, index)
    return _native.atomic("atomic_fetch_add", "fetch_add", dtype, addr, pe, value)


def atomic_add(dst: Array, value: int, remote_pe: int, index: int = 0) -> None:
    """`atomic_fetch_add` without the fetch."""
    addr, dtype, pe = _element("atomic_add", dst, remote_pe, index)
    _native.atomic("atomic_add", "add", dtype, addr, pe, value)


def atomic_compare_swap(dst: Array, cond: int, value: int, remote_pe: int, index: int = 0) -> int:
    """Atomically sets element `index` of `remote_pe`'s `dst` to `value` if it equals
    `cond`; returns its old value either way (int32, int64, uint32, uint64)."""
    addr, dtype, pe = _element("atomic_compare_swap", dst, remote_pe, index)
    return _native.atomic("atomic_compare_swap", "compare_swap", dtype, addr, pe, value, cond)


def atomic_fetch(dst: Array, remote_pe: int, index: int = 0) -> Union[int, float]:
    """Atomically reads element `index` of `remote_pe`'s `dst` (also float32/float64)."""
    addr, dtype, pe = _element("atomic_fetch", dst, remote_pe, index)
    return _native.atomic("atomic_fetch", "fetch", dtype, addr, pe)


def atomic_set(dst: Array, value: Union[int, float], remote_pe: int, index: int = 0) -> None:
    """Atomically writes `value` to element `index` of `remote_pe`'s `dst`."""
    addr, dtype, pe = _element("atomic_set", dst, remote_pe, index)
    _native.atomic("atomic_set", "set", dtype, addr, pe, value)


def atomic_swap(dst: Array, value: Union[int, float], remote_pe: int, index: int = 0) -> Union[int, float]:
    """Atomically writes `value` to element `index` of `remote_pe`'s `dst`; returns the
    old value."""
    addr, dtype, pe = _element("atomic_swap", dst, remote_pe, index)
    return _native.atomic("atomic_swap", "swap", dtype, addr, pe, value)


# ----------------------------------------------------------------------------- ordering


def quiet(stream: Any = None) -> None:
    """Completes every put, signal and atomic this PE issued (at their targets). With
    `stream` (GPU PEs), a fence enqueued on it."""
    _ready("quiet")
    h = _stream("quiet", stream)
    if h is not None:
        _native.quiet_on_stream(h)
    else:
        _native.quiet()


def fence() -> None:
    """Orders this PE's puts, signals and atomics to each target PE: those before the
    fence arrive before those after it."""
    _ready("fence")
    _native.fence()


def barrier_all(stream: Any = None) -> None:
    """`quiet`, then waits until every PE has called it."""
    barrier(TEAM_WORLD, stream)


def barrier(team: Team, stream: Any = None) -> None:
    """`quiet`, then waits until every member of `team` has called it. With `stream`
    (GPU PEs) the barrier is enqueued on it; without, on a GPU PE, the device is
    synchronized first (work queued on any stream, PyTorch's current one included, is
    done before peers pass the barrier), as every blocking call on device memory."""
    call = "barrier"
    _ready(call)
    t = _team(call, team)
    h = _stream(call, stream)
    if h is not None:
        _native.barrier_on_stream(t.handle, h)
    else:
        _native.barrier(t.handle)


def sync_all() -> None:
    """Waits until every PE has called it (no `quiet`)."""
    sync(TEAM_WORLD)


def sync(team: Team) -> None:
    """Waits until every member of `team` has called it (no `quiet`; on a GPU PE the device
    is synchronized first, as in `barrier`)."""
    _ready("sync")
    _native.sync(_team("sync", team).handle)


# ----------------------------------------------------------------------------- collectives

_OPS = ("sum", "prod", "min", "max", "and", "or", "xor")


def _coll(call: str, team: Any, dst: Array, src: Array, stream: Any) -> Tuple[Team, Desc, Desc, Optional[int], bool]:
    _ready(call)
    t = _team(call, team)
    dd = _sym(call, "dst", _desc(call, "dst", dst))
    sd = _sym(call, "src", _desc(call, "src", src))
    _same(call, "dst", dd, "src", sd, shape=False)
    h = _stream(call, stream)
    return t, dd, sd, h, _device_path(call, h, dd, "dst")


def _op(call: str, op: Any) -> str:
    if op not in _OPS:
        raise _fail(call, "op", f"{op!r} is not a reduction ({', '.join(_OPS)})")
    return op


def reduce(team: Team, dst: Array, src: Array, op: str = "sum", stream: Any = None) -> None:
    """All-reduce over `team`: every member's `dst` becomes `op` (sum, prod, min, max,
    and, or, xor) over all members' `src`, element by element. `dst` and `src` are
    symmetric, of one dtype and size (`dst` may be `src`)."""
    call = "reduce"
    t, dd, sd, h, dev = _coll(call, team, dst, src, stream)
    o = _op(call, op)
    if dd.numel != sd.numel:
        raise _fail(call, "dst", f"{dd.numel} elements, but `src` has {sd.numel}")
    if dev:
        _native.reduce_on_stream(t.handle, dd.ptr, sd.ptr, dd.numel, dd.dtype, o, False, h)
    else:
        _native.reduce(t.handle, dd.ptr, sd.ptr, dd.numel, dd.dtype, o, False)


def reduce_scatter(team: Team, dst: Array, src: Array, op: str = "sum", stream: Any = None) -> None:
    """Reduce-scatter over `team`: member i's `dst` (k elements) becomes `op` over block i
    (elements i*k .. (i+1)*k) of all members' `src` (n*k elements)."""
    call = "reduce_scatter"
    t, dd, sd, h, dev = _coll(call, team, dst, src, stream)
    o = _op(call, op)
    n = _native.team_n_pes(t.handle)
    if sd.numel != dd.numel * n:
        raise _fail(call, "src", f"{sd.numel} elements, but a team of {n} needs {n} x {dd.numel} (dst's size)")
    if dev:
        _native.reduce_on_stream(t.handle, dd.ptr, sd.ptr, dd.numel, dd.dtype, o, True, h)
    else:
        _native.reduce(t.handle, dd.ptr, sd.ptr, dd.numel, dd.dtype, o, True)


def broadcast(team: Team, dst: Array, src: Array, root: int, stream: Any = None) -> None:
    """Every member's `dst` receives member `root`'s `src` (same dtype and size; `root`
    counts within `team`)."""
    call = "broadcast"
    t, dd, sd, h, dev = _coll(call, team, dst, src, stream)
    n = _native.team_n_pes(t.handle)
    r = _pe(call, "root", root, n, t)
    if dd.numel != sd.numel:
        raise _fail(call, "dst", f"{dd.numel} elements, but `src` has {sd.numel}")
    if dev:
        _native.move_on_stream("broadcast", t.handle, dd.ptr, sd.ptr, sd.nbytes, r, h)
    else:
        _native.broadcast(t.handle, dd.ptr, sd.ptr, sd.nbytes, r)


def fcollect(team: Team, dst: Array, src: Array, stream: Any = None) -> None:
    """All-gather: every member's `dst` receives all members' `src`, in team order
    (`dst` holds n_pes x `src`'s size)."""
    call = "fcollect"
    t, dd, sd, h, dev = _coll(call, team, dst, src, stream)
    n = _native.team_n_pes(t.handle)
    if dd.numel != sd.numel * n:
        raise _fail(call, "dst", f"{dd.numel} elements, but a team of {n} needs {n} x {sd.numel} (src's size)")
    if dev:
        _native.move_on_stream("fcollect", t.handle, dd.ptr, sd.ptr, sd.nbytes, 0, h)
    else:
        _native.fcollect(t.handle, dd.ptr, sd.ptr, sd.nbytes)


def alltoall(team: Team, dst: Array, src: Array, stream: Any = None) -> None:
    """All-to-all: `src` and `dst` hold n_pes equal blocks; member i's block j of `src`
    lands in member j's block i of `dst`."""
    call = "alltoall"
    t, dd, sd, h, dev = _coll(call, team, dst, src, stream)
    n = _native.team_n_pes(t.handle)
    if dd.numel != sd.numel or sd.numel % n:
        raise _fail(call, "dst", f"`dst` ({dd.numel}) and `src` ({sd.numel}) must hold the same number of elements, a multiple of {n}")
    per = sd.nbytes // n
    if dev:
        _native.move_on_stream("alltoall", t.handle, dd.ptr, sd.ptr, per, 0, h)
    else:
        _native.alltoall(t.handle, dd.ptr, sd.ptr, per)
