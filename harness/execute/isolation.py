"""Parent-side handle on a worker process: every call has a deadline, and a crash, hang or
out-of-memory kill becomes a `WorkerError` with a status instead of taking the harness down."""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from pathlib import Path
from typing import Any

from harness.execute import worker


class WorkerError(Exception):
    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def _tail(path: Path, limit: int = 2000) -> str:
    """The last `limit` characters of the log, read from its end (a log can be large)."""
    try:
        with path.open("rb") as f:
            f.seek(max(f.seek(0, os.SEEK_END) - 4 * limit, 0))  # utf-8: at most 4 bytes a character
            return f.read().decode(errors="replace")[-limit:]
    except OSError:
        return ""


class Worker:
    """One spawned process; `call(cmd, *args, timeout=...)` returns its reply dict."""

    def __init__(self, label: str, log_dir: Path):
        self.label = label
        self.log = log_dir / f"{label}.log"
        self.proc: Any = None
        self.conn: Any = None

    def start(self) -> "Worker":
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.proc = ctx.Process(target=worker.main, args=(child, str(self.log)), name=f"opbench-{self.label}")
        self.proc.start()
        child.close()
        return self

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.is_alive()

    def call(self, cmd: str, *args: Any, timeout: float) -> dict[str, Any]:
        if not self.alive:
            self.start()
        try:
            self.conn.send((cmd, args))
        except (BrokenPipeError, OSError):
            raise self._died()
        deadline = time.monotonic() + timeout
        while True:
            if self.conn.poll(0.05):
                try:
                    reply = worker.unpack(self.conn.recv_bytes())
                except (EOFError, OSError):
                    raise self._died()
                except Exception as exc:  # a reply the safe loader refuses: treat as tampering
                    self.kill()
                    raise WorkerError("TAMPERED", f"worker sent an unloadable reply: {exc}")
                if not reply.get("ok"):
                    raise WorkerError(reply.get("status", "RUNTIME_ERROR"), reply.get("message", ""))
                return reply
            if not self.proc.is_alive():
                raise self._died()
            if time.monotonic() > deadline:
                self.kill()
                raise WorkerError("TIMEOUT", f"'{cmd}' did not finish within {timeout:g} s; worker killed")

    def _died(self) -> WorkerError:
        self.proc.join(1)
        code = self.proc.exitcode
        if code is not None and code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
            if code == -signal.SIGKILL:
                how += " (out of memory?)"
        else:
            how = f"exited with code {code}"
        self.kill()
        status = "OUT_OF_MEMORY" if code == -signal.SIGKILL else "RUNTIME_ERROR"
        return WorkerError(status, f"worker process {how}\n{_tail(self.log)}".strip())

    def kill(self) -> None:
        if self.proc is None:
            return
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        if self.conn is not None:
            self.conn.close()
        self.proc, self.conn = None, None

    def close(self) -> None:
        if self.alive:
            try:
                self.conn.send(("exit", ()))
                self.proc.join(5)
            except (BrokenPipeError, OSError):
                pass
        self.kill()
