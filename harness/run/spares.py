"""Solution workers started ahead of their turn, a window of them at a time, never while a row is timed.

Without this, each solution's first row pays, one solution after another, for work that needs no
solution code: spawning Python, importing torch, opening the device, starting the profiler the
cupti timer reads (about 5 s a solution on the H100, 2026-12-05: half of a warm `make bench`). The
next BATCH solutions' workers do it (`Prepare`) while earlier solutions build and run: a batch at the
run's start, beside the reference and the parallel builds, then one more each time a turn takes its
worker, so a turn never waits for a whole batch to start (the ninth solution of a warm `make bench`
on the H100 waited 10 s for the second batch, 2026-12-06). A worker still starting is stopped, as a
prepared one is, while a row is timed (`frozen`): no start-up competes with a measurement.

A prepared worker holds harness code only, in its solution's own sandbox (scratch folder, uid),
until its turn sends Build. A failed Prepare proves nothing: the turn starts a fresh worker, whose
Build reports what is wrong.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Callable, Iterator

from harness.execute import spawn
from harness.execute.isolation import Worker, WorkerError
from harness.execute.protocol import Command, Prepare
from harness.spec.model import Solution

BATCH = spawn.BATCH  # workers prepared or starting at once
PROFILER = True  # whether a prepared worker also starts the profiler (CUPTI) before its turn


@dataclass
class Spares:
    """`take(sol)` gives `sol`'s prepared worker, or None (the caller starts one as before)."""

    order: list[Solution]            # the solutions still to run, in run order
    make: Callable[[Solution], Worker]
    kind: str
    device_index: int
    timeout_s: float
    _flight: list[tuple[str, Worker, Command]] = field(default_factory=list)
    _ready: dict[str, Worker] = field(default_factory=dict)
    _asked: set[str] = field(default_factory=set)

    def fill(self, first: int = 0) -> "Spares":
        """Send Prepare to the workers of `order[first:first + BATCH]` (those not asked before)."""
        for sol in self.order[first:first + BATCH]:
            if sol.name in self._asked:
                continue
            self._asked.add(sol.name)
            worker = self.make(sol)
            try:
                sent = worker.send(Prepare(self.kind, self.device_index, PROFILER, sol.language))
            except WorkerError:
                worker.kill()
                continue
            self._flight.append((sol.name, worker, sent))
        return self

    def take(self, sol: Solution) -> Worker | None:
        """`sol`'s worker once its Prepare is answered (the others go on starting), and the window
        moved on: the solution BATCH turns ahead is asked now."""
        if sol not in self.order:
            return None
        at = self.order.index(sol)
        self.fill(at)
        entry = next((e for e in self._flight if e[0] == sol.name), None)
        if entry is not None:
            self._flight.remove(entry)
            _, worker, sent = entry
            try:  # its whole timeout from now: time spent stopped while rows were timed is not its own
                worker.receive(sent, timeout=self.timeout_s)
                self._ready[sol.name] = worker
            except WorkerError:
                worker.kill()
        self.fill(at + 1)
        return self._ready.pop(sol.name, None)

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """The waiting workers, prepared or still starting, stopped for the block, as the idle side of
        a timed pair is: harness code only, but a torch process's threads (or its start-up) should not
        share the cores with a measurement. Their process groups alone, no scan of /proc: harness code
        starts nothing outside its group."""
        with contextlib.ExitStack() as stack:
            for worker in self._waiting():
                stack.enter_context(worker.frozen(scan=False))
            yield

    def _waiting(self) -> list[Worker]:
        return [w for _, w, _ in self._flight] + list(self._ready.values())

    def pids(self) -> set[int]:
        """The waiting workers, which a solution's stray sweep must spare."""
        return {w.pid for w in self._waiting() if w.pid is not None}

    def close(self) -> None:
        for worker in self._waiting():
            worker.kill()
        self._flight, self._ready = [], {}
