"""Verdict lines for PE programs (pe_suite.py, gpu_check.py): ``CHECK <name> <pe> ok`` or
``CHECK <name> <pe> FAIL <why>``, each written in one piece so that the lines of several
PEs sharing one output do not interleave."""

import os
import sys
import traceback
from typing import Callable, List


def say(line: str) -> None:
    """Writes `line` in one write."""
    sys.stdout.flush()
    os.write(1, (line + "\n").encode())


def checker(pe: Callable[[], int], failed: List[str], after: Callable[[], None] = lambda: None):
    """A decorator factory: ``@check("name")`` runs the function at once, then `after`,
    and prints its verdict for PE `pe()`; failures are appended to `failed` and do not
    stop the program."""

    def check(name: str):
        def run(fn):
            try:
                fn()
                after()
                say(f"CHECK {name} {pe()} ok")
            except Exception as e:  # a failed check is reported, the program goes on
                failed.append(name)
                say(f"CHECK {name} {pe()} FAIL {type(e).__name__}: {e}".replace("\n", " | "))
                traceback.print_exc()
            return fn

        return run

    return check
