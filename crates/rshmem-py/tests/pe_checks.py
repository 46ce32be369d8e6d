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
    and prints its verdict for PE `pe()`. A failure is appended to `failed`, reported with
    its traceback, and ends this PE at once (status 1), which ends the job: a check that
    failed on some PEs may have left the others inside one of its collectives, and going
    on would pair the next check's calls with those and hang."""

    def check(name: str):
        def run(fn):
            try:
                fn()
                after()
                say(f"CHECK {name} {pe()} ok")
            except Exception as e:  # a failed check is reported, then the PE ends
                failed.append(name)
                say(f"CHECK {name} {pe()} FAIL {type(e).__name__}: {e}".replace("\n", " | "))
                traceback.print_exc()
                sys.stderr.flush()
                os._exit(1)
            return fn

        return run

    return check
