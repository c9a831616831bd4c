"""Starting a worker's process, with no torch in this module: so a run can start its reference's process
before the parent has imported torch itself, and both imports overlap.

A worker's start is mostly Python and torch importing (1.5 s on a 2-core VM, more on a GPU host where
the parent's own import comes first). `Early` is a process started at the command line's first step:
it imports the worker's code, then waits for the log and sandbox of the worker it is to become. Until
then it runs harness code only, as the worker would before its sandbox; it enters the sandbox the same
way (`worker.main`). One that is never taken is killed with the run.
"""
from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import sys
import tempfile
from typing import Any, Callable, Iterator

# Solution workers a run prepares at once (run/spares), and so the most early processes it can use beside its
# reference. Each holds a device context (about 0.5 GB of a GPU's memory). Starting only the first solution's
# beside the reference, the rest once it was ready, had the reference ready 1.7 s sooner but the rows done
# 4.4 s later, the later workers not ready for their turns (H100, 2026-12-07).
BATCH = 8

# What a worker's environment must hold before torch (and its OpenMP runtime) loads, which is at spawn.
# libgomp's idle threads spin by default: on a 16-core H200 host (2026-12-03), with the CPU device, an
# axpy reference sampled 0.2 ms or 8-16 ms from one sample to the next, and a solution doing 8x its
# work came out 6-15x *faster*; with PASSIVE the same run read 268 us against 1926 us. Once the idle side
# was frozen (and each chunk began with untimed calls, `Device.resume_ms`), libgomp's default made each
# op quicker (a 256x4096 RMSNorm 1.0 ms against 1.6 ms on a 2-core VM) but its samples spread more (IQR
# 20-25% against 10-15%): make bench had a NOISY row in 2 runs of 2 against none in 4, and on the 16-core
# H100 host all 4 CPU rows were NOISY against 1-2 (2026-12-08). A user's own setting is kept. No bytecode
# written, from the interpreter's start: a worker only reads the bytecode the parent keeps (harness/bytecode.py).
WORKER_ENV = {"OMP_WAIT_POLICY": "PASSIVE", "PYTHONDONTWRITEBYTECODE": "1"}


@contextlib.contextmanager
def spawn_env(extra: dict[str, str]) -> Iterator[None]:
    """`extra` in os.environ while a worker is spawned (a spawned child copies it), where unset or empty."""
    before = {k: os.environ.get(k) for k in extra if not os.environ.get(k)}
    os.environ.update({k: extra[k] for k in before})
    try:
        yield
    finally:
        for k, value in before.items():
            if value is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = value


@contextlib.contextmanager
def main_not_reimported() -> Iterator[None]:
    """The caller's `__main__` hidden from multiprocessing while a worker is spawned, so the worker
    does not re-run the calling script (a script without an `if __name__ == "__main__":` guard, or a
    notebook, can start runs): the worker's entry point is a module function and needs nothing of it."""
    main = sys.modules.get("__main__")
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if main is not None and k in main.__dict__}
    try:
        if main is not None:
            main.__dict__.pop("__file__", None)
            main.__dict__["__spec__"] = None
        yield
    finally:
        if main is not None:
            main.__dict__.pop("__spec__", None)
            main.__dict__.update(saved)


def process(target: Callable[..., None], args: tuple[Any, ...], name: str) -> tuple[Any, Any]:
    """(process, the parent's end of its pipe): `target(child_end, *args)` spawned with `WORKER_ENV`."""
    ctx = mp.get_context("spawn")
    conn, child = ctx.Pipe()
    proc = ctx.Process(target=target, args=(child, *args), name=name)
    with spawn_env(WORKER_ENV), main_not_reimported():
        proc.start()
    child.close()
    return proc, conn


class Early:
    """A worker process started before its worker is known; `take` makes it that worker, once."""

    def __init__(self) -> None:
        self.proc, self.conn = process(_wait, (), "opbench-early")

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def take(self, log_path: str, box: Any) -> tuple[Any, Any] | None:
        """(process, pipe) of the worker with this log and sandbox, or None when it is gone or taken."""
        proc, conn, self.proc, self.conn = self.proc, self.conn, None, None
        if proc is None:
            return None
        try:
            if proc.is_alive():
                conn.send((log_path, box))
                return proc, conn
        except (BrokenPipeError, OSError):
            pass
        _end(proc, conn)
        return None

    def close(self) -> None:
        """Kill it if it was never taken."""
        if self.proc is not None:
            _end(self.proc, self.conn)
            self.proc = self.conn = None


def _end(proc: Any, conn: Any) -> None:
    conn.close()
    proc.kill()
    proc.join(5)


def _wait(conn: Any) -> None:
    """The early process: its own session (as every worker's), the imports, then `worker.main` once the
    parent says which worker it is. What the imports print is kept for that worker's log."""
    os.setsid()
    early = tempfile.TemporaryFile()
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(early.fileno(), 1)
    os.dup2(early.fileno(), 2)
    from harness.execute import worker
    try:
        log_path, box = conn.recv()
    except (EOFError, OSError):
        return
    worker.main(conn, log_path, box, early)
