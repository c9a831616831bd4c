"""Compiled solutions build at once, while the reference starts, instead of one after another.

A C++/CUDA build (nvcc, ninja, the linker) is most of a solution's first-row cost and needs nothing
from the run but the solution's files. Each one starts in a throwaway worker, under the same content
key, uid and build cache as its real worker (execute/sandbox): what it compiles stays in that cache,
where the real worker's build finds it up to date and only loads it. The throwaway workers, and
whatever they started, are gone before anything is timed, so no build competes with a measurement
and no solution process outlives its turn. A prebuild proves nothing: its failure is not a verdict
(the real build runs again and reports it), its success only saves time.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from harness.execute import handoff, sandbox
from harness.execute.isolation import Worker, WorkerError
from harness.execute.protocol import Build
from harness.execute.solutions import CPP_LANGUAGES
from harness.execute.solutions.cuda_cpp import folder_name
from harness.spec.model import Definition, Solution

PREBUILT = CPP_LANGUAGES  # languages whose Build leaves its work in the build cache
MAX_AT_ONCE = 4           # builds in flight (each runs ninja over every core already)


def built_before(solution: Solution, policy: sandbox.Policy) -> bool:
    """Whether the solution's build cache already holds a module an earlier run built from these files
    and options: its prebuild would only start a worker (torch's import, the device) to find ninja with
    nothing to do, which on a warm H100 run took 11-13 s each, beside 8 starting spares and the reference
    (2026-12-06). Not a promise: a changed toolchain gives a new build folder, which the real worker then
    builds in its turn."""
    builds = policy.cache_root / sandbox.solution_key(solution) / sandbox.CPP_BUILDS
    return any(builds.glob(f"{folder_name(solution.name)}-*/*.so"))


@dataclass
class Prebuild:
    """`start()` sends every Build; `finish()` collects them (or `abort()` kills them) and says how
    each went, for the report's environment: seconds, why it failed, or "cached" (`built_before`)."""

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
    _waiting: list[Solution] = field(default_factory=list)
    _flight: list[tuple[Solution, Worker, Build, float]] = field(default_factory=list)

    def start(self) -> "Prebuild":
        compiled = [s for s in self.solutions if s.language in PREBUILT and self.kind in s.devices]
        self._waiting = [s for s in compiled if not built_before(s, self.policy)]
        self.outcome.update({s.name: "cached" for s in compiled if s not in self._waiting})
        if self._waiting:
            self.progress(f"building {len(self._waiting)} compiled solution(s) in parallel: "
                          + ", ".join(s.name for s in self._waiting))
        self._fill()
        return self

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
            self._flight.append((sol, worker, sent, time.monotonic()))

    def finish(self) -> dict[str, float | str]:
        while self._flight:
            sol, worker, sent, began = self._flight.pop(0)
            try:
                worker.receive(sent, timeout=max(0.0, self.timeout_s - (time.monotonic() - began)))
                self.outcome[sol.name] = round(time.monotonic() - began, 3)
                self.progress(f"{sol.name} built in {self.outcome[sol.name]:.1f} s (in parallel)")
            except WorkerError as exc:
                self.outcome[sol.name] = f"{exc.status}: {exc.message}"[:400]
            finally:
                worker.close()
            self._fill()
        return self.outcome

    def abort(self) -> None:
        for _, worker, _, _ in self._flight:
            worker.kill()
        self._flight, self._waiting = [], []
