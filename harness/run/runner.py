"""The run: for each solution and workload, check correctness against the reference on several rounds
of fresh inputs, then time solution and reference interleaved, then re-check what was timed.

The parent (this module) is trusted and never imports solution code; the reference and each solution
live in their own worker process (`isolation.Worker`). Every failure mode of a worker becomes a
status on a `Trace`; only a broken manifest or reference stops the run.
"""
from __future__ import annotations

import contextlib
import os
import random
import secrets
import subprocess
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import torch

from harness import bytecode
from harness.execute import handoff, sandbox, spawn
from harness.execute.containment import descendants, guard_parent, kill_strays, stopped as stopped_process
from harness.execute.correctness import Verdict, compare
from harness.measure.devices import device_class, detect_kind
from harness.measure.devices.base import Peak
from harness.execute.dtypes import name_of
from harness.measure.environment import environment
from harness.spec.expressions import evaluate
from harness.execute.inputs import allocate_outputs, has_fresh_inputs, mix_seed, pool_bytes, workload_bytes
from harness.execute.isolation import Worker, WorkerError
from harness.execute.protocol import (MAX_KEPT as RECHECKS, Build, Built, Command, Outputs, Prepare, Prepared, Reply,
                                      Run, TimeChunk, TimeEnd, TimeStart)
from harness.spec.model import BenchConfig, Manifest, Solution, Workload
from harness.measure import wallclock
from harness.measure.wallclock import ChunkWall
from harness.measure.timing import MIN_CHUNKS, chunk_size, hidden_work_suspected, stopping_decision, summarize, throttled
from harness.errors import InputError
from harness.results.report import Report
from harness.results.trace import Status, Trace
from harness.results.interrupt import stopped
from harness.execute.solutions import worker_packages
from harness.run.prebuild import Prebuild
from harness.run.spares import Spares

RESTART_AFTER = {Status.RUNTIME_ERROR, Status.TIMEOUT, Status.OUT_OF_MEMORY, Status.TAMPERED}


class InvalidReference(Exception):
    """The manifest's reference raised, hung, or returned outputs unlike the declared ones: the
    workload's rows become INVALID_REFERENCE (the manifest's fault, exit 2), never a solution's failure."""


class ReferenceOutOfMemory(Exception):
    """The reference ran out of memory on a workload: too large for this device, not a broken
    reference. The row is OUT_OF_MEMORY, and it is not remembered: the next solution's run tries again
    (a solution that held memory while the reference ran must not condemn the rows after it)."""


class RunError(InputError):
    """The run itself cannot proceed (bad device request, broken reference)."""


@dataclass
class RunOptions:
    device: str = "auto"          # auto | cpu | cuda | npu
    device_index: int = 0
    run_seed: int | None = None   # private seed; drawn at random unless reproducing a run
    log_dir: Path = Path("out/logs")
    expected_cache_bytes: int = 2 * 1024 ** 3  # reference outputs kept for the next solution; beyond, recomputed
    done: frozenset[tuple[str, str, str]] = frozenset()  # (definition, workload, solution) rows a resumed run has


Progress = Callable[[str], None]


class ReferenceLoadError(RunError):
    """The reference did not build or load: every row of the problem is INVALID_REFERENCE."""


@dataclass
class RowClock:
    """Where one row's wall time went, by phase (seconds): the trace's `cost_s`, so the harness's own
    cost stands beside the device time it measured (`bench/harness_cost.py` reads it)."""

    start: float = field(default_factory=time.perf_counter)
    last: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.phases[phase] = self.phases.get(phase, 0.0) + now - (self.last or self.start)
        self.last = now

    def finish(self) -> dict[str, float]:
        """Laps the rest as `checks` (re-checks and verdict, or whatever ended the row early)."""
        self.lap("checks")
        return {k: round(v, 4) for k, v in {**self.phases, "total": self.last - self.start}.items()}


def since_start() -> float:
    """Seconds since this process started (Linux's /proc; elsewhere since the first call), so a run's
    marks include the interpreter's start and the imports before the runner."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        return round(float(Path("/proc/uptime").read_text().split()[0]) - ticks / os.sysconf("SC_CLK_TCK"), 2)
    except (OSError, ValueError, IndexError):
        return round(time.monotonic() - _FIRST, 2)


_FIRST = time.monotonic()


def host_available_bytes(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """MemAvailable: what the host can still give without swapping (None where there is no meminfo)."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def too_large(kind: str, total_bytes: int, output_bytes: int, device_bytes: int | None,
              host_bytes: int | None, outputs_on_device: bool = False, input_sets: int = 1,
              kept: int = 0, pools: int = 0) -> str | None:
    """Why a workload cannot run here, from its declared sizes alone, or None.

    In a correctness round the running worker holds the inputs and outputs, and the idle one the
    outputs it handed over (it gives its cached memory back after each command:
    `Device.release_cached_memory`); a solution's worker also keeps its previous outputs, to see a
    result handed out twice. While a row is timed, both workers hold `input_sets` sets of inputs and
    outputs at once (and, on the CPU, `pools` bytes each of pooled draws: `inputs.pool_bytes`), and the
    solution's up to `kept` copies of timed outputs for the parent's re-checks. The parent
    holds the reference's outputs and the solution's while it compares, plus one in flight: in host
    memory, or in device memory when outputs are handed over there (`handoff`). On the CPU all of it
    is host memory. Said before anything is allocated, so a workload too large is an OUT_OF_MEMORY
    row, not a failure charged to whichever worker allocated last, and the harness itself never runs
    the host out of memory."""
    gib = 1024 ** 3
    parent = 3 * output_bytes
    workers = max(total_bytes + 2 * output_bytes, 2 * (input_sets * total_bytes + pools) + kept * output_bytes)
    need_host = (0 if outputs_on_device else parent) + (workers if kind == "cpu" else 0)
    need_device = workers + (parent if outputs_on_device else 0)
    if device_bytes and kind != "cpu" and need_device > device_bytes:
        return (f"workload too large for the device: its inputs and outputs take {total_bytes / gib:.3g} GiB; "
                f"timed ({input_sets} input sets in each of two workers) and compared, they need "
                f"{need_device / gib:.3g} GiB, more than the device's {device_bytes / gib:.3g} GiB")
    if host_bytes is not None and need_host > host_bytes:
        return (f"workload too large for this host: running and comparing it needs about {need_host / gib:.3g} GiB "
                f"of host memory, {host_bytes / gib:.3g} GiB is available")
    return None


def unsupported_hint(message: str) -> str:
    """What a reference's "not supported" from a vendor library usually means: the operation needs a
    newer device (SOL-ExecBench's 15 NVFP4 problems: cuBLASLt's CUBLAS_STATUS_NOT_SUPPORTED on Hopper)."""
    if "CUBLAS_STATUS_NOT_SUPPORTED" in message:  # other "not supported"s are mostly a shape or a dtype
        return (" (hint: cuBLAS has no kernel for this on this device: FP4 and MXFP8 block-scaled GEMMs, for one, "
                "need a Blackwell GPU)")
    return ""


def resolve_device(requested: str) -> str:
    if requested == "auto":
        return detect_kind()
    ok, why = device_class(requested).available()
    if not ok:
        raise RunError(f"device '{requested}' requested but not usable here: {why}")
    return requested


class Runner:
    def __init__(self, manifest: Manifest, options: RunOptions, progress: Progress | None = None,
                 early: Sequence[spawn.Early] = ()):
        self.m = manifest
        # processes started before the run imported torch (execute/spawn): the first for the reference,
        # the others for solution workers, in the order they start
        self.early_reference, self.early = (early[0], list(early[1:])) if early else (None, [])
        self.opt = options
        self.cfg: BenchConfig = manifest.bench
        self.progress = progress or (lambda msg: None)
        self.kind = resolve_device(options.device)
        self.run_seed = options.run_seed if options.run_seed is not None else secrets.randbits(62)
        self.ref: Worker | None = None
        self.ref_info: Built | None = None
        # the reference's outputs per (workload, seed), reused by every solution while they fit
        # `expected_cache_bytes` (the rest recomputed when asked again): the parent's memory does not
        # grow with workloads x output size
        self.expected: dict[tuple[str, int], list[torch.Tensor]] = {}
        self.bad_reference: dict[str, str] = {}  # workload id -> why its reference is unusable
        self.updates: dict[str, tuple[str, ...]] = {}  # workload id -> inputs its reference updates in place
        self.row: RowClock | None = None  # the row being run, for its trace's cost_s
        self.workload_fault = False  # the row failed for its workload's size, not for the solution
        # processes that were here before this run are not its strays; its early ones become its workers
        self.spared = descendants(os.getpid()) - {e.pid for e in early}
        self.policy = sandbox.policy()  # workers' uid and build cache (execute/sandbox)
        self.ledger = handoff.Ledger()  # device memory each worker handed over (no worker passes off another's)
        self.spares = Spares([], self._worker, self.kind, options.device_index, self.cfg.compile_timeout_s)  # run() fills it
        self.builds = Prebuild([], self.m.definition, self.kind, options.device_index, options.log_dir, self.policy,
                               str(self.run_seed), self.cfg.compile_timeout_s)  # run() starts it
        # where the run's time outside the rows goes: seconds since the process started, at each mark
        self.clock: dict[str, float] = {}
        self.behind: subprocess.Popen[bytes] | None = None  # bytecode for the next run's workers (run() starts it)

    # -- reference ----------------------------------------------------------------------------
    def _sweep(self) -> None:
        """Kill every process of the run but those it keeps: the ones here before it, the waiting
        prepared workers, the builds in flight, the reference."""
        ref_pid = self.ref.pid if self.ref is not None else None
        behind = {self.behind.pid} if self.behind is not None else set()
        kill_strays(keep=self.spared | self.spares.pids() | self.builds.pids() | behind | ({ref_pid} if ref_pid else set()))

    def _worker(self, sol: Solution) -> Worker:
        return Worker(sol.name, self.opt.log_dir, self.policy, sandbox.solution_key(sol), self.ledger, str(self.run_seed),
                      self.early.pop(0) if self.early else None)

    def _start_reference(self) -> None:
        ref = self.m.definition.reference
        self.ref = Worker(f"reference.{self.m.definition.name}", self.opt.log_dir, self.policy,  # a log per problem
                          sandbox.content_key("reference", [ref.source.encode()]), self.ledger, str(self.run_seed),
                          self.early_reference)
        self.early_reference = None  # its first start only: a restart spawns afresh
        try:
            # Prepare first: its profiler start-up would otherwise fall in the first row's timing start
            prepared = self.ref.call(Prepare(self.kind, self.opt.device_index), timeout=self.cfg.compile_timeout_s)
            if "reference_prepared" not in self.clock:  # its process, torch and the device up; of which its own count
                self.clock["reference_prepared"] = since_start()
                self.clock["reference_prepare_s"] = round(prepared.seconds, 2) if isinstance(prepared, Prepared) else 0.0
            self.ref_info = self.ref.call(Build(ref, self.m.definition, self.kind, self.opt.device_index),
                                          timeout=self.cfg.compile_timeout_s)
        except WorkerError as exc:
            self.ref.close()
            raise ReferenceLoadError(f"reference of {self.m.definition.name} ({self.m.definition.reference.origin}) failed to load: "
                           f"{exc.message}")

    def _ref_call(self, command: Command, timeout: float) -> Reply:
        assert self.ref is not None
        try:
            if not self.ref.alive:
                self._start_reference()
        except RunError as exc:
            raise InvalidReference(str(exc))
        try:
            return self.ref.call(command, timeout=timeout)
        except WorkerError as exc:
            if exc.status == Status.OUT_OF_MEMORY:
                raise ReferenceOutOfMemory(f"the reference ran out of memory on this workload: {exc.message}")
            raise InvalidReference(f"reference {exc.status.lower().replace('_', ' ')}: {exc.message}{unsupported_hint(exc.message)}")

    def _expected(self, w: Workload, seed: int) -> list[torch.Tensor]:
        """The reference's outputs for (workload, seed), checked against the declared shapes and dtypes."""
        key = (w.id, seed)
        if w.id in self.bad_reference:
            raise InvalidReference(self.bad_reference[w.id])
        if key not in self.expected:
            try:
                reply = self._ref_call(Run(w, seed), timeout=self.cfg.run_timeout_s)
                if not isinstance(reply, Outputs):
                    raise InvalidReference(f"reference output rejected: {reply.message}")
                declared = allocate_outputs(self.m.definition, w, torch.device("meta"))
                for (name, want), got in zip(declared.items(), reply.outputs):
                    if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
                        what = (f"{tuple(got.shape)} {name_of(got.dtype)}" if isinstance(got, torch.Tensor)
                                else type(got).__name__)
                        raise InvalidReference(f"reference output {name!r} is {what}; the definition declares "
                                               f"{tuple(want.shape)} {name_of(want.dtype)}")
            except InvalidReference as exc:
                self.bad_reference[w.id] = str(exc)  # every later solution gets the same row, without a re-run
                raise
            if reply.updated:  # an in-place operation: a solution may update these too (and is timed on fresh ones)
                self.updates[w.id] = tuple(n for n in reply.updated if n in self.m.definition.inputs)
            self._keep_expected(key, reply.outputs)
            return reply.outputs
        return self.expected[key]

    def _keep_expected(self, key: tuple[str, int], outputs: list[torch.Tensor]) -> None:
        """Kept while the budget allows; past it, not kept (every solution visits the workloads in the
        same order, so evicting the oldest would miss every time, while keeping the first ones hits
        in proportion to the budget)."""
        held = sum(_nbytes(v) for v in self.expected.values())
        if held + _nbytes(outputs) <= self.opt.expected_cache_bytes:
            self.expected[key] = outputs

    # -- the run ------------------------------------------------------------------------------
    def run(self) -> Report:
        guard_parent()  # a subreaper: a solution's double fork is re-parented here, where kill_strays finds it
        device_class(self.kind).keep_parent_memory()
        self.clock["runner"] = since_start()
        workloads, solutions = list(self.m.workloads), list(self.m.solutions)  # --solution/--workload: in prepare()
        pending = [s for s in solutions if any((self.m.definition.name, w.id, s.name) not in self.opt.done for w in workloads)]
        self.builds = Prebuild(pending, self.m.definition, self.kind, self.opt.device_index, self.opt.log_dir, self.policy,
                               str(self.run_seed), self.cfg.compile_timeout_s, self.progress).start()
        order = sorted(solutions, key=self.builds.awaited)  # the rows that wait for no build first
        self.spares = Spares([s for s in order if s in pending and self.kind in s.devices], self._worker, self.kind,
                             self.opt.device_index, self.cfg.compile_timeout_s).fill()
        self.behind = bytecode.compile_behind(["harness", "torch", *(p for s in pending for p in worker_packages(s.language))])
        try:
            self._start_reference()  # while the compiled solutions build and the first workers start
            self.clock["reference_ready"] = since_start()
            return self._run(order, workloads)
        finally:
            self.builds.abort()  # none left in flight but after an interruption or a failed reference
            self.spares.close()
            if self.behind is not None:  # what it compiled is kept; the rest waits for the next run
                self.behind.kill()
                self.behind.wait()
            for early in filter(None, [self.early_reference, *self.early]):
                early.close()  # useful at a run's start only: not held idle through the problems after this one
            self.early_reference, self.early = None, []

    @contextlib.contextmanager
    def _others_stopped(self, samples: bool = False) -> Iterator[None]:
        """The prepared workers, the builds in flight and the bytecode compiler stopped for the block, a step of
        a timed row. Builds and the compiler go on through a device's timed samples when the device times its own
        work (prebuild)."""
        background = not (samples and device_class(self.kind).queues_work)  # builds and compiler stopped too
        behind = self.behind.pid if background and self.behind is not None and self.behind.poll() is None else None
        with self.spares.frozen(), self.builds.frozen(when=background), stopped_process(behind):
            yield

    def _run(self, solutions: list[Solution], workloads: list[Workload]) -> Report:
        assert self.ref_info is not None
        env = environment(self.ref_info.device)
        env["versions"] = {**env["versions"], **self.ref_info.versions}
        env["containment"] = self.policy.to_dict()
        env["output_handoff"] = "cuda-ipc" if self.ref is not None and self.ref.handoff is not None else "pipe"
        env["run_clock_s"] = self.clock
        traces: list[Trace] = []
        try:
            left = list(solutions)
            while left:  # as given, but a compiled solution's turn once its build is done (prebuild)
                sol = self.builds.pick(left)
                left.remove(sol)
                if self.builds.done and "builds_done" not in self.clock:
                    self.clock["builds_done"] = since_start()
                self._solution(sol, workloads, traces)
            self.clock["rows_done"] = since_start()
        except KeyboardInterrupt as exc:  # what finished is kept (results/interrupt)
            raise stopped(exc, [self._report(env, traces)]) from None
        finally:
            if self.ref is not None:
                self.ref.kill()  # killed, as each solution's worker is: what it computed is here already
        return self._report(env, traces)

    def _report(self, env: dict[str, Any], traces: list[Trace]) -> Report:
        """The rows in the manifest's order, whatever order they ran in (`Prebuild.pick`)."""
        if self.builds.outcome:
            env["prebuild"] = dict(self.builds.outcome)  # solution -> seconds its build took, why it failed, or "cached"
        rank = {s.name: i for i, s in enumerate(self.m.solutions)}
        traces = sorted(traces, key=lambda t: rank.get(t.solution, len(rank)))
        return Report.of_problem(definition=self.m.definition.name, manifest=str(self.m.path), device=self.kind,
                                 run_seed=self.run_seed, bench=asdict(self.cfg), environment=env, traces=traces)

    def _too_large(self, w: Workload) -> str | None:
        d = self.m.definition
        outputs = replace(d, inputs={})
        device = self.ref_info.device if self.ref_info is not None else {}
        on_device = self.ref is not None and self.ref.handoff is not None
        pools = pool_bytes(d, w) if self.kind == "cpu" and self.cfg.fresh_inputs else 0
        return too_large(self.kind, workload_bytes(d, w), workload_bytes(outputs, w), device.get("memory_bytes"),
                         host_available_bytes(), on_device, self.cfg.correctness_rounds, RECHECKS, pools)

    def _lap(self, phase: str) -> None:
        """Close `phase` of the row being run (its trace's cost_s)."""
        if self.row is not None:
            self.row.lap(phase)

    def _trace(self, sol: Solution, w: Workload, status: Status, message: str = "", **kw: Any) -> Trace:
        if self.row is not None:  # the row being run ends here (rows never run get no cost)
            kw["cost_s"], self.row = self.row.finish(), None
        return Trace(definition=self.m.definition.name, workload=w.id, axes=dict(w.axes), solution=sol.name,
                     language=sol.language, device=self.kind, status=status, message=message.strip(),
                     expected_status=sol.expected_status, **kw)

    def _solution(self, sol: Solution, workloads: list[Workload], done: list[Trace]) -> None:
        """Append a trace per workload to `done` as each finishes (an interruption keeps them); rows
        a resumed run already has are not run again."""
        workloads = [w for w in workloads if (self.m.definition.name, w.id, sol.name) not in self.opt.done]
        if not workloads:
            return
        if self.kind not in sol.devices:
            why = f"{sol.language} solution targets {', '.join(sol.devices)}; this run is on {self.kind}"
            done.extend(self._trace(sol, w, Status.SKIPPED, why) for w in workloads)
            return
        worker = self.spares.take(sol) or self._worker(sol)
        traces: list[Trace] = []
        built = False
        try:
            for w in workloads:
                self.progress(f"{sol.name} :: {w.id}")
                self.row, self.workload_fault = RowClock(), False
                if not built or not worker.alive:
                    self.progress(f"{sol.name} :: {w.id} (building: worker, imports, compile)")
                    try:
                        worker.call(Build(sol, self.m.definition, self.kind, self.opt.device_index),
                                    timeout=self.cfg.compile_timeout_s)
                        built = True
                        self.row.lap("build")
                        self.progress(f"{sol.name} :: {w.id} (built in {self.row.phases['build']:.1f} s)")
                    except WorkerError as exc:
                        status = Status(exc.status)
                        msg = exc.message if status != Status.TIMEOUT else f"build: {exc.message}"
                        done.extend(self._trace(sol, x, status, msg) for x in workloads[len(traces):])
                        return
                trace = self._workload(worker, sol, w)
                device_class(self.kind).release_parent_memory()
                traces.append(trace)
                done.append(trace)
                self.progress(f"{sol.name} :: {w.id} -> {trace.status}")
                if trace.status in RESTART_AFTER and not self.workload_fault:
                    worker.kill()
        finally:
            # killed, not asked to exit: its results are here already, and an interpreter's teardown (torch's,
            # a CUDA context's) took 0.5 s a solution on a 2-core CPU, 0.03 s killed
            worker.kill()
            self._sweep()  # what the solution left behind (a double fork out of its session included) dies with it

    def _workload(self, worker: Worker, sol: Solution, w: Workload) -> Trace:
        cfg = self.cfg
        names = list(self.m.definition.outputs)
        seeds = [mix_seed(self.run_seed, w.seed, r) for r in range(cfg.correctness_rounds)]
        correctness: dict[str, Any] = {"rounds": 0}
        if (why := self._too_large(w)):
            self.workload_fault = True  # the solution's worker did nothing wrong: it is kept
            return self._trace(sol, w, Status.OUT_OF_MEMORY, why)
        try:
            run_s = None  # one correctness call's wall time: the first guess of a timed sample's
            for seed in seeds:
                expected = self._expected(w, seed)
                t0 = time.monotonic()
                reply = worker.call(Run(w, seed, updates=self.updates.get(w.id, ())), timeout=cfg.run_timeout_s)
                run_s = time.monotonic() - t0
                if not isinstance(reply, Outputs):  # the worker's own checks rejected the call
                    return self._trace(sol, w, reply.status, reply.message, correctness=correctness)
                verdict = compare(names, reply.outputs, expected, w.tolerance)
                correctness["rounds"] += 1
                _merge_stats(correctness, verdict)
                if verdict.status != Status.PASSED:
                    return self._trace(sol, w, verdict.status, f"round {correctness['rounds']}: {verdict.message}",
                                       correctness=correctness)
            self._lap("correctness")
            if w.id in self.updates:
                correctness["updated_in_place"] = list(self.updates[w.id])
            return self._timed(worker, sol, w, seeds, correctness, run_s)
        except WorkerError as exc:
            return self._trace(sol, w, Status(exc.status), exc.message, correctness=correctness)
        except InvalidReference as exc:
            return self._trace(sol, w, Status.INVALID_REFERENCE, str(exc))
        except ReferenceOutOfMemory as exc:
            self.workload_fault = True
            return self._trace(sol, w, Status.OUT_OF_MEMORY, str(exc), correctness=correctness)

    def _timed(self, worker: Worker, sol: Solution, w: Workload, seeds: list[int], correctness: dict[str, Any],
               run_s: float | None = None) -> Trace:
        cfg = self.cfg
        names = list(self.m.definition.outputs)
        t_run = cfg.run_timeout_s
        secret = secrets.randbits(62)  # the solution's redraws: the parent recomputes any sample's inputs from it
        with self._others_stopped():  # warm-up sizes the hold from the host's launch time: no start-up beside it
            updates = self.updates.get(w.id, ())
            start_s = worker.call(TimeStart(w, seeds, cfg, secret, updates), timeout=t_run)
            self._ref_call(TimeStart(w, seeds, cfg, secrets.randbits(62), updates), timeout=t_run)
        pick = random.Random(secrets.randbits(62))
        asked: set[int] = set()  # solution samples whose outputs are re-checked, chosen at random
        clocks = [c for c in (start_s.clocks,) if c]
        series: dict[str, list[float]] = {"sol": [], "ref": []}
        walls: dict[str, list[ChunkWall]] = {"sol": [], "ref": []}  # the parent's clock (measure/wallclock)
        done = {"sol": (False, False, ""), "ref": (False, False, "")}
        sample_s = {"sol": run_s, "ref": run_s}  # wall per sample, from the last chunk (chunk_size)
        self._lap("timing_start")  # inputs, warm-up
        began = time.monotonic()
        while not (done["sol"][0] and done["ref"][0]):
            for key in ("sol", "ref"):
                if done[key][0]:  # its median is known: the rest of the budget goes to the other side
                    continue
                t0 = time.monotonic()
                idle = self.ref if key == "sol" else worker  # frozen while the other is timed
                keep: tuple[int, ...] = ()
                n_chunk = chunk_size(cfg, start_s.mode, sample_s[key], len(walls[key]))
                if key == "sol" and len(asked) < RECHECKS and (not asked or pick.random() < 0.5):
                    keep = (pick.randrange(n_chunk),)
                    asked.add(len(series["sol"]) + keep[0])
                with idle.frozen() if idle is not None else contextlib.nullcontext(), self._others_stopped(samples=True):
                    chunk = (worker.call(TimeChunk(n_chunk, keep), timeout=t_run) if key == "sol"
                             else self._ref_call(TimeChunk(n_chunk), timeout=t_run))
                took = time.monotonic() - t0
                sample_s[key] = took / max(len(chunk.samples), 1)
                series[key].extend(chunk.samples)
                calls = start_s.calls_per_sample
                walls[key].append(ChunkWall(took * 1e3, sum(chunk.samples) * calls, len(chunk.samples) * calls))
                if chunk.clocks:
                    clocks.append(chunk.clocks)
            elapsed = time.monotonic() - began
            for key in ("sol", "ref"):
                if not done[key][0]:
                    done[key] = stopping_decision(series[key], elapsed, cfg, len(walls[key]))
            if elapsed > cfg.max_time_s * 1.5 and min(len(w) for w in walls.values()) >= MIN_CHUNKS:
                break  # both capped by max_time_s once they have MIN_CHUNKS chunks; this only guards the loop
        self._lap("sampling")
        with self._others_stopped():  # the hidden-work check reads the host clock
            end_s = worker.call(TimeEnd(), timeout=t_run)
            self._ref_call(TimeEnd(), timeout=t_run)
        self._lap("timing_end")  # hidden-work checks, kept outputs
        mode = start_s.mode
        wall = {key: sum(c.wall_ms for c in walls[key]) / 1e3 for key in walls}
        timing = summarize(series["sol"], done["sol"][1], done["sol"][2], wall["sol"], mode, cfg.cache)
        ref_timing = summarize(series["ref"], done["ref"][1], done["ref"][2], wall["ref"], mode, cfg.cache)
        timing.wall_per_call_ms = wallclock.wall_per_call_ms(walls["sol"])
        ref_timing.wall_per_call_ms = wallclock.wall_per_call_ms(walls["ref"])
        timing_kw: dict[str, Any] = {"timing": timing, "reference_timing": ref_timing, "correctness": correctness}
        if (why := wallclock.impossible(walls["ref"])):
            raise InvalidReference(f"reference timing: {why}")
        if (why := wallclock.impossible(walls["sol"])):  # the parent's own clock first: no worker can forge it
            return self._trace(sol, w, Status.TAMPERED, f"timing: {why}", **timing_kw)
        if end_s.problem:
            return self._trace(sol, w, end_s.problem.status, end_s.problem.message, **timing_kw)
        hidden = end_s.hidden.to_dict()  # first: unjoined work also leaves a kept output unfinished
        correctness["hidden_work_check"] = hidden
        if "hidden_ms" not in hidden and device_class(self.kind).queues_work:  # the parent knows which devices skip it
            return self._trace(sol, w, Status.TAMPERED, "the worker skipped the hidden-work check on a device whose "
                               "calls queue work", **timing_kw)
        if hidden_work_suspected(hidden):
            if hidden.get("escaped_ms"):
                probed = hidden.get("probed_calls") or 1
                why = (f"{hidden['escaped_ms'] * 1e3:.4g} us of device work, over {probed} probed call(s), ran on "
                       f"other streams outside the timed window ({', '.join(hidden['escaped_kernels'])})")
            else:
                why = (f"host clock saw {hidden['wall_ms']:.4g} ms per call but device events only "
                       f"{hidden['events_ms']:.4g} ms: work ran outside the timed stream")
            return self._trace(sol, w, Status.HIDDEN_WORK, why, **timing_kw)
        kept = {c.sample for c in end_s.checks}
        if kept != asked:
            return self._trace(sol, w, Status.TAMPERED, f"timed samples {sorted(asked)} were to be kept for a "
                               f"re-check; the worker returned {sorted(kept)}", **timing_kw)
        for check in end_s.checks:  # timed results must be right too, on inputs the parent redraws itself
            draw = (secret, check.sample) if cfg.fresh_inputs else None
            reply = self._ref_call(Run(w, seeds[check.sample % len(seeds)], draw), timeout=t_run)
            if not isinstance(reply, Outputs):
                raise InvalidReference(f"reference rejected a re-check: {reply.message}")
            verdict = compare(names, check.outputs, reply.outputs, w.tolerance)
            if verdict.status != Status.PASSED:
                return self._trace(sol, w, verdict.status, f"timed sample {check.sample}: {verdict.message}",
                                   **timing_kw)
        correctness["timed_rechecks"] = sorted(kept)
        idle = sum(1 for x in series["sol"] if x == 0)
        if idle:
            return self._trace(sol, w, Status.HIDDEN_WORK, f"{idle} of {len(series['sol'])} timed calls queued no device "
                               "work on the timed stream (work done elsewhere, or not at all, while timed)", **timing_kw)
        speedup = ref_timing.median_ms / timing.median_ms if timing.median_ms > 0 else None
        throughput = self._throughput(w, timing.median_ms)
        flags = []
        if not timing.rule_met:
            flags.append(f"NOISY({timing.stop_reason})")
        elif not ref_timing.rule_met:  # the speedup rests on both medians: one known badly is a noisy row too
            flags.append(f"NOISY(reference: {ref_timing.stop_reason})")
        if speedup is not None and speedup > cfg.suspicious_speedup:
            flags.append(f"SUSPICIOUS_SPEEDUP(>{cfg.suspicious_speedup:g}x)")
        if throughput.get("sol_fraction", 0.0) > 1.0:
            flags.append("ABOVE_PEAK")
        if throttled(clocks):
            flags.append("THROTTLED")
        if not (cfg.fresh_inputs and has_fresh_inputs(self.m.definition, w)):
            flags.append("CACHEABLE")  # every timed call saw the same data: a result cache could win
        correctness["clocks"] = clocks[:1] + clocks[-1:]
        return self._trace(sol, w, Status.PASSED, "", speedup=speedup, throughput=throughput, flags=flags, **timing_kw)

    def _throughput(self, w: Workload, median_ms: float) -> dict[str, float]:
        d = self.m.definition
        if median_ms <= 0:
            return {}
        seconds = median_ms * 1e-3
        axes = {k: float(v) for k, v in w.axes.items()}
        out: dict[str, float] = {}
        n_bytes = evaluate(d.bytes, axes) if d.bytes else float(workload_bytes(self.m.definition, w))
        out["gb_per_s"] = n_bytes / seconds / 1e9
        peak = self.ref_info.peak if self.ref_info else Peak()
        fractions = []
        if peak.bytes_per_s:
            fractions.append(n_bytes / seconds / peak.bytes_per_s)
        if d.flops:
            flops = evaluate(d.flops, axes)
            out["tflop_per_s"] = flops / seconds / 1e12
            dtype = w.dtypes[next(iter(d.inputs))]
            peak_flops = peak.flops_for(dtype)
            if peak_flops:
                fractions.append(flops / seconds / peak_flops)
        if fractions:
            out["sol_fraction"] = max(fractions)
        return out


def _nbytes(outputs: list[Any]) -> int:
    return sum(o.numel() * o.element_size() for o in outputs if isinstance(o, torch.Tensor))


def _merge_stats(acc: dict[str, Any], verdict: Verdict) -> None:
    for key, value in verdict.stats.items():
        acc[key] = max(acc.get(key, 0.0), value)
