"""Compiled solutions build at once, while the reference starts and the other solutions run, instead
of one after another.

A C++/CUDA build (nvcc, ninja, the linker) is most of a solution's first-row cost and needs nothing
from the run but the solution's files. Each one starts in a throwaway worker, under the same content
key, uid and build cache as its real worker (execute/sandbox): what it compiles stays in that cache,
where the real worker's build finds it up to date and only loads it. The rows of solutions that wait
for no build run first, then each compiled solution's as soon as its own build is done (a cold `make
bench` on the H100 waited 31 s for all four C++ builds before its first row, 2026-12-07).

Builds run at the lowest CPU priority. Where a device times its own work (a GPU: the kernels' time
comes from the device, not the host's clock) they go on while a row's samples are taken; they are
stopped (`frozen`), as the prepared workers are, whenever the host's clock matters: a row's warm-up
and its hidden-work check, and every timed sample of a device the host computes on (the CPU). Stopped
for every sample on the H100, the four builds took up to 43 s instead of 30 s and the cold run gained
nothing; going on through the samples, a cold `make bench` took 44.3 s against 61.2 s with every build
first (same machine), and the rows run beside the compilers read as those run without them. The
throwaway workers are gone before the run ends, and no solution process outlives its turn. A prebuild
proves nothing: its failure is not a verdict (the real build runs again and reports it), its success
only saves time.
"""
from __future__ import annotations

import contextlib
import os
import select
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from harness.execute import handoff, sandbox
from harness.execute.isolation import Worker, WorkerError
from harness.execute.protocol import Build
from harness.execute.solutions import CPP_LANGUAGES
from harness.execute.solutions.cuda_cpp import folder_name
from harness.spec.model import Definition, Solution

PREBUILT = CPP_LANGUAGES  # languages whose Build leaves its work in the build cache
MAX_AT_ONCE = 4           # builds in flight (each runs ninja over every core already)
NICE = 19                 # a build's CPU priority: the lowest, below every worker and the parent


def built_before(solution: Solution, policy: sandbox.Policy) -> bool:
    """Whether the solution's build cache already holds a module an earlier run built from these files
    and options: its prebuild would only start a worker (torch's import, the device) to find ninja with
    nothing to do, which on a warm H100 run took 11-13 s each, beside 8 starting spares and the reference
    (2026-12-06). Not a promise: a changed toolchain gives a new build folder, which the real worker then
    builds in its turn."""
    builds = policy.cache_root / sandbox.solution_key(solution) / sandbox.CPP_BUILDS
    return any(builds.glob(f"{folder_name(solution.name)}-*/*.so"))


@dataclass(frozen=True)
class _Flight:
    """A build in flight, and how long builds had been stopped when it began (its deadline moves by the
    time it spends stopped since)."""

    solution: Solution
    worker: Worker
    sent: Build
    began: float
    stopped_before: float


@dataclass
class Prebuild:
    """`start()` sends every Build; `pick(solutions)` says which solution runs next, waiting for a build
    only when every one left needs its own (so once every solution has been picked, every build has
    been collected); `abort()` kills those left after an interruption; `outcome` says how each went,
    for the report's environment: seconds, why it failed, or "cached" (`built_before`)."""

    solutions: list[Solution]
    definition: Definition
    kind: str
    device_index: int
    log_dir: Path
    policy: sandbox.Policy
    run_id: str
    timeout_s: float
    progress: Callable[[str], None] = lambda msg: None
    outcome: dict[str, float | str] = field(default_factory=dict)
    stopped_s: float = 0.0  # time the builds in flight spent stopped (`frozen`)
    _waiting: list[Solution] = field(default_factory=list)
    _flight: list[_Flight] = field(default_factory=list)

    def start(self) -> "Prebuild":
        compiled = [s for s in self.solutions if s.language in PREBUILT and self.kind in s.devices]
        self._waiting = [s for s in compiled if not built_before(s, self.policy)]
        self.outcome.update({s.name: "cached" for s in compiled if s not in self._waiting})
        if self._waiting:
            self.progress(f"building {len(self._waiting)} compiled solution(s) in parallel: "
                          + ", ".join(s.name for s in self._waiting))
        self._fill()
        return self

    def awaited(self, sol: Solution) -> bool:
        """Whether `sol`'s rows must wait for its build (queued or in flight)."""
        return any(s.name == sol.name for s in self._waiting) or any(f.solution.name == sol.name for f in self._flight)

    @property
    def done(self) -> bool:
        return not self._waiting and not self._flight

    def pick(self, solutions: list[Solution]) -> Solution:
        """The first of `solutions` that waits for no build, else the first whose build ends (waited for)."""
        said = False
        while True:
            self._poll()
            ready = [s for s in solutions if not self.awaited(s)]
            if ready:
                return ready[0]
            if not said:
                self.progress(f"waiting for a build: {', '.join(s.name for s in solutions)}")
                said = True
            self._wait_any()

    def _fill(self) -> None:
        while self._waiting and len(self._flight) < MAX_AT_ONCE:
            sol = self._waiting.pop(0)
            worker = Worker(f"{sol.name}.prebuild", self.log_dir, self.policy, sandbox.solution_key(sol),
                            handoff.Ledger(), self.run_id)
            worker.probes = False  # it only compiles: no device memory is handed over
            try:
                sent = worker.send(Build(sol, self.definition, self.kind, self.device_index))
            except WorkerError as exc:
                self.outcome[sol.name] = exc.message
                worker.kill()
                continue
            if worker.pid is not None:  # before its imports end: ninja and nvcc inherit it
                with contextlib.suppress(OSError):
                    os.setpriority(os.PRIO_PROCESS, worker.pid, NICE)
            self._flight.append(_Flight(sol, worker, sent, time.monotonic(), self.stopped_s))

    def _poll(self) -> None:
        """Collect the builds that have finished, without waiting, so the queued ones start."""
        for flight in [f for f in self._flight if f.worker.has_reply()]:
            self._collect(flight)

    def _wait_any(self) -> None:
        """Until one build in flight has ended (or run past its time), and collect it."""
        while self._flight:
            for flight in self._flight:
                if flight.worker.has_reply() or self._left(flight) <= 0:
                    self._collect(flight)
                    return
            select.select([f.worker.conn.fileno() for f in self._flight], [], [], 0.05)

    def _left(self, flight: _Flight) -> float:
        """Seconds left of its compile timeout; the time it spent stopped is not its own."""
        return self.timeout_s + (self.stopped_s - flight.stopped_before) - (time.monotonic() - flight.began)

    def _collect(self, flight: _Flight) -> None:
        self._flight.remove(flight)
        sol, worker = flight.solution, flight.worker
        try:
            worker.receive(flight.sent, timeout=max(0.0, self._left(flight)))
            self.outcome[sol.name] = round(time.monotonic() - flight.began, 3)
            self.progress(f"{sol.name} built in {self.outcome[sol.name]:.1f} s (in parallel)")
        except WorkerError as exc:
            self.outcome[sol.name] = f"{exc.status}: {exc.message}"[:400]
        finally:
            worker.close()
        self._fill()

    @contextlib.contextmanager
    def frozen(self, when: bool = True) -> Iterator[None]:
        """The builds in flight stopped for the block (`when` it matters): nvcc and ninja are in the
        build worker's process group, which `Worker.frozen` stops as one without a scan of /proc (what
        the built module's loading might start elsewhere is the sweep's, once its build is collected)."""
        if not self._flight or not when:
            yield
            return
        began = time.monotonic()
        try:
            with contextlib.ExitStack() as stack:
                for flight in self._flight:
                    stack.enter_context(flight.worker.frozen(scan=False))
                yield
        finally:
            self.stopped_s += time.monotonic() - began

    def pids(self) -> set[int]:
        """The build workers in flight, which a solution's stray sweep must spare (with what they started)."""
        return {f.worker.pid for f in self._flight if f.worker.pid is not None}

    def abort(self) -> None:
        for flight in self._flight:
            flight.worker.kill()
        self._flight, self._waiting = [], []
