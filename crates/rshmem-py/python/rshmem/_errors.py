"""The exceptions rshmem raises.

Every exception names the call (``rshmem.put``), the argument at fault (``dst``) and the
PE in its message, and carries them as attributes, so that a message read in the log of
a many-PE job says what to fix.
"""

from __future__ import annotations

import builtins
from typing import Optional


class Error(RuntimeError):
    """Base class of rshmem's exceptions: a call failed.

    Attributes:
        call: the rshmem call that failed (``"put"``, ``"reduce"``, ...).
        arg: the argument at fault, when one is (``"dst"``, ``"remote_pe"``), else None.
        pe: the PE the message names (this PE, or the target PE), when it names one.
    """

    def __init__(self, message: str, call: Optional[str] = None, arg: Optional[str] = None, pe: Optional[int] = None) -> None:
        super().__init__(message)
        self.call = call
        self.arg = arg
        self.pe = pe


class ArgumentError(Error, ValueError):
    """Bad input: a non-symmetric buffer, a PE out of range, a dtype or shape that does
    not fit the call, a team this PE is not in. Also a ``ValueError``."""


class TimeoutError(Error, builtins.TimeoutError):
    """A wait with a timeout ran out (for instance ``signal_wait_until(..., timeout=5)``).
    Also the built-in ``TimeoutError``."""
