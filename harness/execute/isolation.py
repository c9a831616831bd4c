"""Parent-side handle on a worker process: every call has a deadline, and a crash, hang, forged reply
or out-of-memory kill becomes a `WorkerError` with a status instead of taking the harness down.

`Worker.call` sends one `protocol` command and returns its typed reply; the reply is read with the
deadline still running (a worker that stops halfway through a frame is a TIMEOUT, not a hang) and
decoded by `protocol.decode`, so a reply that breaks the protocol is TAMPERED. Outputs a worker
leaves in device memory are copied by the parent while the worker is frozen (`handoff`).
"""
from __future__ import annotations

import contextlib
import math
import os
import secrets
import select
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

import torch

from harness.execute import containment, handoff, protocol, sandbox, spawn, worker
from harness.logs import tail_of
from harness.execute.protocol import (BenchLoad, Build, Built, Command, Exit, Expect, Failure, Outputs, Reply, Run,
                                      TimeEnd, TimingEnded)
from harness.spec.model import Solution


class WorkerError(Exception):
    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


SCAN_S = 0.5

class Worker:
    """One spawned process in its own sandbox; `call(command, timeout=...)` returns its typed reply.

    `key` names the build cache the worker may write (`sandbox.solution_key`): only code with the
    same content shares it. `ledger` is shared by the workers of one run (`handoff.Ledger`)."""

    def __init__(self, label: str, log_dir: Path, policy: sandbox.Policy | None = None, key: str | None = None,
                 ledger: handoff.Ledger | None = None, run_id: str = "", early: spawn.Early | None = None):
        self.label = label
        self.early = early  # a process started before the run imported torch, to become this worker
        self.run_id = run_id  # the log starts afresh for a new run id, and a restart within the run appends
        self.ledger = ledger or handoff.Ledger()
        self.handoff: Any = None  # the torch device the parent reads this worker's outputs on, after a good probe
        self.log = log_dir / f"{label}.log"
        self.policy = policy or sandbox.policy()
        self.key = key or sandbox.content_key(label, [])
        self.box: sandbox.Sandbox | None = None
        self.proc: Any = None
        self.conn: Any = None
        self.expect = Expect()  # what replies must hold, from the commands sent so far
        self.probes = True  # Build probes the device handoff (not in a worker that only compiles)
        self._members: set[int] = set()  # the worker's session, as last scanned (see frozen)
        self._scanned_at = -math.inf

    def start(self) -> "Worker":
        """Its process: the early one it was given (`spawn.Early`, the first time only), else a new one."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self._log_header()
        self.box = sandbox.make(self.policy, self.label, self.key)
        early, self.early = self.early, None
        taken = early.take(str(self.log), self.box) if early is not None else None
        self.proc, self.conn = taken or spawn.process(worker.main, (str(self.log), self.box), f"opbench-{self.label}")
        return self

    def _log_header(self) -> None:
        """`logs/<label>.log` holds one run: a new run id empties it, a restart in the same run appends;
        either way a header line says which run and when (the worker's output follows it)."""
        head = f"== opbench run {self.run_id or '-'}: {self.label}"
        try:
            with open(self.log, "rb") as fh:
                same = fh.readline().decode(errors="replace").startswith(head + " ") and bool(self.run_id)
        except OSError:
            same = False
        with open(self.log, "a" if same else "w") as fh:
            fh.write(f"{head} {'restarted' if same else 'started'} {time.strftime('%Y-%m-%dT%H:%M:%S%z')} ==\n")

    @property
    def scratch(self) -> Path | None:
        """The worker's scratch folder while it runs (profiler output is collected from there)."""
        return self.box.scratch if self.box is not None else None

    @property
    def pid(self) -> int | None:
        """The worker's pid, which is also its session and process-group id (it calls setsid first)."""
        return self.proc.pid if self.proc is not None else None

    @contextlib.contextmanager
    def frozen(self, scan: bool = True) -> Iterator[None]:
        """This worker and what it started stopped for the block (while the other side is timed).
        Its session is re-scanned at most every SCAN_S: a scan of /proc per chunk would cost more
        than a chunk of a small kernel. `scan=False`: its process group alone, for a worker that has
        run no solution code of its own turn (a prepared worker, a build's compilers)."""
        if not self.alive:
            yield
            return
        now = time.monotonic()
        if scan and now - self._scanned_at > SCAN_S:
            self._members, self._scanned_at = containment.session_members(self.proc.pid), now
        with containment.stopped(self.proc.pid, self._members):
            yield

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.is_alive()

    def call(self, command: Command, *, timeout: float) -> Reply:
        """Send `command`; its reply, or WorkerError (TIMEOUT, TAMPERED, a crash, or the worker's Failure)."""
        return self.receive(self.send(command), timeout=timeout)

    def send(self, command: Command) -> Command:
        """Start the worker if needed and send `command` (as staged for it) without waiting: `receive`
        takes the reply, so several workers can work at once (run/prebuild)."""
        if not self.alive:
            self.start()
        assert self.box is not None
        if isinstance(command, Build) and isinstance(command.target, Solution):  # the worker reads its staged
            command = replace(command, target=sandbox.stage(command.target, self.box))  # copy, never the manifests
        elif isinstance(command, BenchLoad):
            moved = sandbox.stage_files([f for f in (command.operator, command.bench) if f is not None], self.box)
            command = replace(command, operator=moved[command.operator],
                              bench=moved[command.bench] if command.bench is not None else None)
        command = self._with_handoff(command)
        self.expect = command.expect(self.expect)
        try:
            protocol.send_command(self.conn, command)
        except (BrokenPipeError, OSError):
            raise self._died()
        return command

    def has_reply(self) -> bool:
        """Whether `receive` would return (a reply, or the worker's death) without waiting."""
        return not self.alive or bool(select.select([self.conn.fileno()], [], [], 0)[0])

    def receive(self, command: Command, *, timeout: float) -> Reply:
        """The reply to `command`, which `send` returned, waiting at most `timeout` seconds from now."""
        deadline = time.monotonic() + timeout
        late = WorkerError("TIMEOUT", f"'{command.name}' did not finish within {timeout:g} s; worker killed")
        fd = self.conn.fileno()
        while not select.select([fd], [], [], 0.05)[0]:
            if not self.proc.is_alive():
                raise self._died()
            if time.monotonic() > deadline:
                self.kill()
                raise late
        try:
            raw = protocol.read_frame(fd, deadline, self.expect.frame_bytes)
            reply = protocol.decode(raw, command.replies, self.expect)
        except TimeoutError:  # the worker stopped halfway through a reply (TimeoutError is an OSError)
            self.kill()
            raise late
        except (EOFError, OSError):
            raise self._died()
        except protocol.Malformed as exc:  # a frame larger than asked for, or a reply that breaks the protocol
            self.kill()
            raise WorkerError("TAMPERED", str(exc))
        if isinstance(reply, Failure):
            raise WorkerError(reply.status.value, reply.message)
        return self._received(command, reply)

    def _with_handoff(self, command: Command) -> Command:
        """Build asks for a probe where the parent can read CUDA memory; Run and TimeEnd ask for
        device handles once the probe came back right."""
        if isinstance(command, Build):
            self.handoff = None
            if command.device_kind == "cuda" and self.probes:
                return replace(command, handoff_nonce=secrets.randbits(62))
        elif isinstance(command, (Run, TimeEnd)):
            return replace(command, on_device=self.handoff is not None)
        return command

    def _received(self, command: Command, reply: Reply) -> Reply:
        """`reply` with the device outputs it names copied into the parent's memory, while this
        worker is frozen; a handle that does not open or points outside its allocation is TAMPERED."""
        try:
            if isinstance(reply, Built) and isinstance(command, Build):
                self._probe(command, reply)
                return replace(reply, probe=None)
            if isinstance(reply, Outputs):
                return replace(reply, outputs=self._receive(reply.outputs))
            if isinstance(reply, TimingEnded):
                return replace(reply, checks=[replace(c, outputs=self._receive(c.outputs)) for c in reply.checks])
        except handoff.HandoffError as exc:
            self.kill()
            raise WorkerError("TAMPERED", f"device output handoff: {exc}")
        except handoff.HandoffUnavailable as exc:  # the driver's own trouble: not the solution's doing
            raise WorkerError("RUNTIME_ERROR", f"device output handoff: {exc}")
        except torch.OutOfMemoryError as exc:  # the parent's copy did not fit beside the workers' memory
            raise WorkerError("OUT_OF_MEMORY", f"the parent could not copy the outputs: {protocol.clip(str(exc), 400)}")
        except RuntimeError as exc:  # a driver error on memory the worker named
            self.kill()
            raise WorkerError("TAMPERED", f"device output handoff: {protocol.clip(str(exc), 400)}")
        return reply

    def _probe(self, command: Build, reply: Built) -> None:
        """IPC between this pair of processes works if the parent reads back the value it chose. A
        probe that names bytes outside its allocation, or another worker's memory, is forged (the
        solution was imported before it was sent): HandoffError, TAMPERED, not a quiet fall-back."""
        if reply.probe is None or command.handoff_nonce is None:
            return
        device, want = torch.device("cuda", command.device_index), handoff.probe_value(command.handoff_nonce)
        if not isinstance(reply.probe, handoff.DeviceOutput) or reply.probe.nbytes != want.nbytes:
            return
        try:
            self._scanned_at = -math.inf  # freeze everything it has started, as of now
            with self.frozen():
                (got,) = handoff.receive([reply.probe], device, self.ledger, self)
        except (handoff.HandoffUnavailable, RuntimeError, ValueError):
            return  # outputs come through the pipe (a platform without IPC)
        if got.dtype == want.dtype and got.shape == want.shape and torch.equal(got.cpu(), want):
            self.handoff = device

    def _receive(self, outputs: list[Any]) -> list[Any]:
        handles = [o for o in outputs if isinstance(o, handoff.DeviceOutput)]
        if not handles:
            return outputs
        if self.handoff is None:
            raise handoff.HandoffError("device handles came although the parent asked for outputs in the reply")
        total = sum(h.nbytes for h in handles)
        if total > self.expect.frame_bytes:
            raise handoff.HandoffError(f"outputs of {total} bytes; at most {self.expect.frame_bytes} expected")
        self._scanned_at = -math.inf  # a helper started since the last scan is frozen too while the parent reads
        with self.frozen():
            return handoff.receive(outputs, self.handoff, self.ledger, self)

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
        return WorkerError(status, f"worker process {how}\n{tail_of(self.log)}".strip())

    def kill(self) -> None:
        self.ledger.forget(self)  # its memory is gone with it
        if self.proc is None:
            return
        containment.kill_session(self.proc.pid)  # the worker and whatever it started in its session
        self.proc.join(5)
        if self.conn is not None:
            self.conn.close()
        if self.box is not None:
            self.box.remove()
        self.proc, self.conn, self.box = None, None, None

    def close(self) -> None:
        if self.alive:
            try:
                protocol.send_command(self.conn, Exit())
                self.proc.join(5)
            except (BrokenPipeError, OSError):
                pass
        self.kill()
