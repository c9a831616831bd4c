"""How a command line process starts and ends: its bytecode kept before the heavy imports, and no
interpreter teardown once its work is done."""
from __future__ import annotations

import atexit
import os
import sys
from typing import Callable, NoReturn

from harness import bytecode


def command(main: Callable[[], int]) -> NoReturn:
    """An entry point (`opbench`, `hpc-bench`, `sol-execbench`): bytecode kept in opbench's cache where
    torch's has none beside it (before `main` first imports torch), then `main`, then `exit_with`."""
    bytecode.keep()  # already done where the command started as `python -m harness`
    exit_with(main())


def exit_with(code: int) -> NoReturn:
    """End a command whose work is done: the exit handlers run and stdout and stderr are flushed, but
    the interpreter's teardown is skipped. With torch (and a device's context) loaded it freed objects for
    0.5-0.7 s on a 2-core VM after every report was written and every worker gone."""
    atexit._run_exitfuncs()  # logging's flush, tempfile's finalizers, coverage's: what `sys.exit` would run
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away, or a stream a caller closed
            pass
    os._exit(code)
