"""Solution workers started ahead of their turn, a batch at a time, while nothing is timed.

Without this, each solution's first row pays, one solution after another, for work that needs no
solution code: spawning Python, importing torch, opening the device, starting the profiler the
cupti timer reads (about 5 s a solution on the H100, 2026-12-05: half of a warm `make bench`). A
batch of the next solutions' workers does it at once (`Prepare`): at the run's start, beside the
reference and the parallel builds, and again when a solution's turn finds no prepared worker. Every
Prepare in flight is answered before the turn goes on, so no start-up competes with a measurement.

A prepared worker holds harness code only, in its solution's own sandbox (scratch folder, uid),
until its turn sends Build, and is stopped while a row is timed (`frozen`). A failed Prepare proves
nothing: the turn starts a fresh worker, whose Build reports what is wrong.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from harness.execute.isolation import Worker, WorkerError
from harness.execute.protocol import Command, Prepare
from harness.spec.model import Solution

BATCH = 8  # workers prepared at once: each holds a device context (about 0.5 GB of a GPU's memory)
PROFILER = True  # whether a prepared worker also starts the profiler (CUPTI) before its turn


@dataclass
class Spares:
    """`take(sol)` gives `sol`'s prepared worker, or None (the caller starts one as before)."""

    order: list[Solution]            # the solutions still to run, in run order
    make: Callable[[Solution], Worker]
    kind: str
    device_index: int
    timeout_s: float
    _flight: list[tuple[str, Worker, Command, float]] = field(default_factory=list)
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
                sent = worker.send(Prepare(self.kind, self.device_index, PROFILER))
            except WorkerError:
                worker.kill()
                continue
            self._flight.append((sol.name, worker, sent, time.monotonic()))
        return self

    def take(self, sol: Solution) -> Worker | None:
        if sol.name not in self._asked and sol in self.order:
            self.fill(self.order.index(sol))
        while self._flight:  # all of the batch, so none is still starting when the turn is timed
            name, worker, sent, began = self._flight.pop(0)
            try:
                worker.receive(sent, timeout=max(0.0, self.timeout_s - (time.monotonic() - began)))
                self._ready[name] = worker
            except WorkerError:
                worker.kill()
        return self._ready.pop(sol.name, None)

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """The waiting workers stopped for the block, as the idle side of a timed pair is: harness code
        only, but a torch process's threads should not share the cores with a measurement."""
        with contextlib.ExitStack() as stack:
            for worker in self._ready.values():
                stack.enter_context(worker.frozen())
            yield

    def _waiting(self) -> list[Worker]:
        return [w for _, w, _, _ in self._flight] + list(self._ready.values())

    def pids(self) -> set[int]:
        """The waiting workers, which a solution's stray sweep must spare."""
        return {w.pid for w in self._waiting() if w.pid is not None}

    def close(self) -> None:
        for worker in self._waiting():
            worker.kill()
        self._flight, self._ready = [], {}
