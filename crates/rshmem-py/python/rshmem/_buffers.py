"""Views of symmetric memory for NumPy and PyTorch, and the description of any array.

`SymView` is the object NumPy and PyTorch arrays of symmetric memory are made from: it
exposes ``__array_interface__`` (host memory), ``__cuda_array_interface__`` (GPU memory)
and ``__dlpack__``, so the arrays share its memory without a copy, and it stays alive as
long as any of them does. `describe` turns an array argument (NumPy array, PyTorch
tensor, or anything with one of those interfaces) into pointer, size, dtype and device.
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple, Optional, Tuple

from . import _rshmem as _native

# dtype name -> (bytes, DLPack type code, NumPy type string or None)
DTYPES = {
    "bool": (1, 6, "|b1"),
    "int8": (1, 0, "|i1"),
    "int16": (2, 0, "<i2"),
    "int32": (4, 0, "<i4"),
    "int64": (8, 0, "<i8"),
    "uint8": (1, 1, "|u1"),
    "uint16": (2, 1, "<u2"),
    "uint32": (4, 1, "<u4"),
    "uint64": (8, 1, "<u8"),
    "float16": (2, 2, "<f2"),
    "bfloat16": (2, 4, None),
    "float32": (4, 2, "<f4"),
    "float64": (8, 2, "<f8"),
}

# DLPack device types.
DL_CPU = 1
DL_CUDA = 2


class Desc(NamedTuple):
    """What the calls need to know of an array argument."""

    ptr: int
    nbytes: int
    dtype: str
    shape: Tuple[int, ...]
    numel: int
    device: int  # -1: host memory; else the CUDA device ordinal
    contiguous: bool


class SymView:
    """A contiguous, row-major array of symmetric memory (or of a mapped peer's copy),
    for NumPy (``numpy.asarray(view)``), PyTorch (``torch.from_dlpack(view)``) and any
    consumer of the array interfaces or DLPack. Arrays made from it keep it alive."""

    __slots__ = ("addr", "shape", "dtype", "device", "__weakref__")

    def __init__(self, addr: int, shape: Tuple[int, ...], dtype: str, device: int) -> None:
        self.addr = addr
        self.shape = tuple(shape)
        self.dtype = dtype
        self.device = device

    def _interface(self) -> dict:
        typestr = DTYPES[self.dtype][2]
        if typestr is None:
            raise TypeError(f"rshmem: {self.dtype} has no array-interface type string; use DLPack (torch.from_dlpack)")
        return {"shape": self.shape, "typestr": typestr, "data": (self.addr, False), "strides": None, "version": 3}

    @property
    def __array_interface__(self) -> dict:
        """NumPy's array interface (host memory only)."""
        if self.device >= 0:
            raise AttributeError("__array_interface__: this symmetric memory is on a GPU")
        return self._interface()

    @property
    def __cuda_array_interface__(self) -> dict:
        """The CUDA array interface (GPU memory only)."""
        if self.device < 0:
            raise AttributeError("__cuda_array_interface__: this symmetric memory is in host memory")
        return self._interface()

    def __dlpack__(self, stream: Any = None) -> Any:
        """A DLPack capsule over the memory (the memory is ready: no stream to wait for)."""
        _, code, _ = DTYPES[self.dtype]
        bits = DTYPES[self.dtype][0] * 8
        dev = (DL_CPU, 0) if self.device < 0 else (DL_CUDA, self.device)
        return _native.dlpack_capsule(self, self.addr, list(self.shape), code, bits, dev[0], dev[1])

    def __dlpack_device__(self) -> Tuple[int, int]:
        """(device type, device id) as DLPack numbers them."""
        return (DL_CPU, 0) if self.device < 0 else (DL_CUDA, self.device)

    def __repr__(self) -> str:
        where = "host" if self.device < 0 else f"cuda:{self.device}"
        return f"SymView({self.dtype}{list(self.shape)} at {self.addr:#x}, {where})"


def _prod(shape: Tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _from_interface(ai: dict, device: int) -> Desc:
    import numpy as np

    dt = np.dtype(ai["typestr"])
    shape = tuple(int(s) for s in ai["shape"])
    numel = _prod(shape)
    strides = ai.get("strides")
    contiguous = strides is None
    if strides is not None:
        expect, c = dt.itemsize, True
        for s, st in zip(reversed(shape), reversed(strides)):
            if s > 1 and st != expect:
                c = False
            expect *= s
        contiguous = c
    return Desc(int(ai["data"][0]), numel * dt.itemsize, dt.name, shape, numel, device, contiguous)


def describe(x: Any) -> Optional[Desc]:
    """Pointer, size, dtype, shape and device of an array-like `x`; None if `x` is none."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(x, np.ndarray):
        return Desc(
            x.__array_interface__["data"][0], x.nbytes, x.dtype.name, x.shape, x.size, -1, x.flags.c_contiguous
        )
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        dev = x.device
        return Desc(
            x.data_ptr(),
            x.numel() * x.element_size(),
            str(x.dtype)[6:],
            tuple(x.shape),
            x.numel(),
            -1 if dev.type == "cpu" else (dev.index if dev.type == "cuda" else -2),
            x.is_contiguous(),
        )
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        # Device memory of an unnamed GPU (-3): the calls take it to be the PE's own.
        return _from_interface(cai, -3)
    ai = getattr(x, "__array_interface__", None)
    if ai is not None:
        return _from_interface(ai, -1)
    return None

