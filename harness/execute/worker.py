"""The process a solution (or the reference) runs in: builds it, runs it, times it, checks for cheats.

One worker per solution, started with `spawn` by `isolation.Worker`. It serves the commands of
`protocol` (pickles from the trusted parent), one handler per command type, and answers each with
one typed reply, sent as a frame of `torch.save` bytes that the parent loads with
`weights_only=True` and checks in `protocol.decode`: nothing a solution does can make the parent
execute code or believe a forged reply.
"""
from __future__ import annotations

import contextlib
import importlib
import os
import sys
import time
import traceback
from typing import Any, Callable

from harness.execute import protocol
from harness.execute.protocol import (BenchCaseInfo, BenchLoad, BenchLoaded, BenchTime, BenchTimed, Build, Built,
                                      Chunk, Command, Exit, Failure, HiddenWork, Outputs, Prepare, Prepared,
                                      Rejected, Reply, Run, TimedCheck, TimeChunk, TimeEnd, TimeStart, TimingEnded,
                                      TimingStarted)
from harness.results.trace import Status


def _describe(exc: BaseException) -> str:
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-4))
    return protocol.clip(f"{type(exc).__name__}: {exc}\n{tb}")


def _device_copy(result: Any) -> Any:
    """A copy, on the device, of the tensors in a call's result (kept for a re-check after timing:
    the buffer a solution returned may be overwritten by its next call)."""
    import torch
    if isinstance(result, torch.Tensor):
        return result.detach().clone()
    if type(result) in (list, tuple):
        return type(result)(_device_copy(x) for x in result)
    return result


def _compact(t: Any) -> Any:
    """A CPU copy holding only `t`'s own elements: torch.save writes a view's whole storage, and the
    parent refuses a reply larger than the declared outputs."""
    out = t.detach().cpu()
    if out.untyped_storage().nbytes() > out.numel() * out.element_size():
        out = out.clone()
    return out


class WorkerState:
    """Everything one worker holds between commands; no module-level state."""

    def __init__(self) -> None:
        self.device: Any = None
        self.fn: Callable[..., Any] | None = None
        self.definition: Any = None
        self.dps = False
        self.is_reference = False  # the reference's outputs are checked by the parent, against the declaration
        self.guard: Any = None
        self.kept: list[Any] = []  # previous outputs, alive, so a re-handed buffer is detectable
        self.sampler: Any = None
        self.pool: list[dict[str, Any]] = []
        self.cache_problem: str | None = None  # set when a timed chunk left cache persisting (time_end reports it)
        self.keep_at: set[int] = set()  # timed samples whose outputs the parent asked for (TimeChunk.keep)
        self.kept_samples: dict[int, Any] = {}
        self.rechecks: Any = None  # the Redraw of the session whose kept samples the parent re-checks (run)
        self.bench: Any = None  # a loaded bench module, and the BenchLoad that loaded it (its staged files)
        self.bench_load_cmd: BenchLoad | None = None
        self.handed: list[Any] = []  # tensors whose device memory the parent may still be reading (handoff)

    # -- commands -----------------------------------------------------------------------------
    def _open(self, kind: str, index: int) -> None:
        """torch (and torch_npu via the device) imported and the device set up, once per process."""
        import torch  # noqa: F401  (before user code)
        from harness.measure.devices import make_device
        if self.device is None or (self.device.kind, self.device.index) != (kind, index):
            self.device = make_device(kind, index)
            self.device.setup()

    def release_memory(self) -> None:
        """Cached device memory back to the device between commands (`Device.release_cached_memory`),
        never between timed chunks: a call that then re-allocated its outputs would time the allocation."""
        if self.device is not None and self.sampler is None:
            with contextlib.suppress(Exception):
                self.device.release_cached_memory()

    def prepare(self, cmd: Prepare) -> Prepared:
        start = time.perf_counter()
        self._open(cmd.device_kind, cmd.device_index)
        if cmd.start_profiler and self.device.traces_activities():  # its one-time start-up, out of the first row
            self.device.device_activities(lambda: None)
        from harness.execute.solutions import runtime_module
        module = runtime_module(cmd.language)
        if module is not None:  # a failed import proves nothing here: the Build says what is wrong
            with contextlib.suppress(Exception):
                importlib.import_module(module)
        return Prepared(time.perf_counter() - start)

    def _tracer_path(self) -> list[tuple[str, Any, str]]:
        """Where a device's activity records come from, made now so the guard sees the tracer in use:
        its class's reading step, the record readers, and the device's hold on it (a stand-in tracer
        is a patch too)."""
        make = getattr(self.device, "tracer", None)
        if make is None:
            return []
        from harness.measure.devices import tracers
        tracer = make()
        steps = [(f"{type(tracer).__name__}.{attr}", type(tracer), attr)
                 for attr in ("trace", "_register", "_requested", "_completed", "_call", "_clock")
                 if hasattr(type(tracer), attr)]
        # and what the readers look up as they run: the record layouts, and the modules they call through
        readers = ("read_records", "in_ns", "from_profiler_events", "HEAD", "KERNEL", "COPY", "FILL", "KINDS",
                   "COPY_KINDS", "time", "ctypes", "struct")
        return [(f"{type(self.device).__name__}._tracer", self.device, "_tracer"), *steps,
                *((f"tracers.{name}", tracers, name) for name in readers)]

    def build(self, cmd: Build) -> Built | Failure:
        from harness.measure.environment import versions
        from harness.execute.guards import TamperGuard
        from harness.spec.model import Reference

        target = cmd.target
        self.definition = cmd.definition
        self._open(cmd.device_kind, cmd.device_index)
        from harness.measure import timing
        from harness.measure.devices import activities
        self.guard = TamperGuard()
        event = type(self.device.event())
        # the timing path from sample to reply: replacing any of these in Python is TAMPERED (what is
        # left, patching memory under them, is the residual risk the README states)
        for owner, attr in [(timing.Sampler, "chunk"), (timing.Sampler, "resume"), (timing.Sampler, "_sample"),
                            (timing.Sampler, "_chunk_events"), (timing.Sampler, "_chunk_cupti"),
                            (timing.Sampler, "hidden_work_check"), (type(self.device), "queues_work"),
                            (type(self.device), "resume_ms"),
                            (timing, "call_times_us"), (timing, "escaped"), (activities, "from_profiler_events"),
                            (type(self.device), "device_activities"), (type(self.device), "event"),
                            (type(self.device), "mark"), (type(self.device), "hold"),
                            (type(self.device), "flush_cache"), (type(self.device), "fit_to"), (protocol, "encode"),
                            (protocol, "write_frame"), (event, "record"), (event, "elapsed_ms")]:
            self.guard.add(f"{getattr(owner, '__qualname__', owner.__name__)}.{attr}", owner, attr)
        for name, owner, attr in self._tracer_path():
            self.guard.add(name, owner, attr)
        self.is_reference = isinstance(target, Reference)
        if self.is_reference:
            namespace: dict[str, Any] = {"__name__": "opbench_reference"}
            exec(compile(target.source, target.origin, "exec"), namespace)
            self.fn = namespace.get(target.entry)
            if not callable(self.fn):
                raise RuntimeError(f"reference in {target.origin} defines no function {target.entry!r}")
        else:
            from harness.execute.solutions import build_solution
            self.fn = build_solution(target, self.device)
            self.dps = target.destination_passing_style
        tampered = self.guard.check() or self.guard.modes()
        if tampered:
            return Failure(Status.TAMPERED, f"on import: {tampered}")
        probe = None
        if cmd.handoff_nonce is not None and self.device.torch_device.type == "cuda":
            from harness.execute.handoff import export, probe_tensor
            self.handed = [probe_tensor(cmd.handoff_nonce, self.device.torch_device)]
            probe = export(self.handed[0])
        return Built(self.device.info(), versions(), self.device.peak(), probe)

    def _prepare(self, workload: Any, inputs: dict[str, Any]) -> dict[str, Any]:
        from harness.execute.inputs import allocate_outputs
        entry = {"inputs": list(inputs.values()), "names": list(inputs), "outputs": None}
        if self.dps:
            entry["outputs"] = list(allocate_outputs(self.definition, workload, self.device.torch_device).values())
        return entry

    def _call(self, entry: dict[str, Any]) -> Any:
        if self.dps:
            self.fn(*entry["inputs"], *entry["outputs"])
            return entry["outputs"]
        return self.fn(*entry["inputs"])

    def _collect(self, result: Any, on_device: bool) -> tuple[list[Any], str | None]:
        """Outputs for the parent (device handles when `on_device` and the memory can be exported,
        else CPU tensors), plus why they are not acceptable, if they are not."""
        import torch
        from harness.execute.correctness import as_output_list
        from harness.execute.handoff import export
        names = list(self.definition.outputs)
        outs = as_output_list(result, names)
        if isinstance(outs, str):
            return [], outs
        sent: list[Any] = []
        for o in outs:
            if type(o) is not torch.Tensor:
                sent.append(f"<{type(o).__name__}>")
                continue
            dense = o.detach().contiguous() if on_device else None
            handle = export(dense) if dense is not None else None
            if handle is not None:
                self.handed.append(dense)  # alive until the next command: the parent copies it first
            sent.append(handle if handle is not None else _compact(o))
        return sent, None

    def run(self, cmd: Run) -> Outputs | Rejected:
        """One correctness round on fresh inputs for `cmd.seed` (redrawn as timed sample `cmd.draw`
        had them, when the parent re-checks a kept sample on the reference)."""
        from harness.execute.guards import mutated_inputs, output_problems, snapshot
        from harness.execute.inputs import Redraw, generate_inputs
        dev = self.device
        self.handed = []
        self.end_timing()  # a session the parent abandoned (its reference failed mid-timing) holds memory
        inputs = generate_inputs(self.definition, cmd.workload, cmd.seed, dev.torch_device)
        entry = self._prepare(cmd.workload, inputs)
        if cmd.draw is not None:  # a re-check's samples share their session's pools: kept for the next
            key, sample = cmd.draw
            if self.rechecks is None or (self.rechecks.key, self.rechecks.workload) != (key, cmd.workload):
                self.rechecks = Redraw(cmd.workload, key)
            self.rechecks(entry["names"], entry["inputs"], sample)
        before = snapshot(entry["inputs"])
        dev.synchronize()  # inputs were made on the default stream; the call runs on the harness stream
        why = self.guard.modes()
        with dev.stream():
            result = self._call(entry)
        dev.synchronize()  # device-wide: work the call left on any stream is finished before checks
        tampered = why or self.guard.after_call() or self._persisting_cache()
        if tampered:
            return Rejected(Status.TAMPERED, tampered)
        changed = mutated_inputs(entry["names"], before, entry["inputs"])
        # the reference is trusted code: what it updates in place is the operation (SOL-ExecBench's L1/018
        # writes a KV cache and returns it), which the parent then lets a solution do (`cmd.updates`)
        bad = [] if self.is_reference else [n for n in changed if n not in cmd.updates]
        if bad:
            return Rejected(Status.INPUT_MUTATED, f"solution modified input(s) {', '.join(bad)}")
        outs, why = self._collect(result, cmd.on_device)
        # and its outputs may be views of one tensor (L1/006, L1/035, L1/065 split a result), which only
        # a solution could use to dodge a check; a solution may return an input it updates, as the reference does
        if why is None and not self.dps and not self.is_reference:
            from harness.execute.correctness import as_output_list
            live = as_output_list(result, list(self.definition.outputs))
            held = [t for n, t in zip(entry["names"], entry["inputs"]) if n not in cmd.updates]
            why = output_problems(live, held, self.kept, dev.torch_device)
            if why is None:
                self.kept = [o for o in live if isinstance(o, __import__("torch").Tensor)]
        if why is not None:
            return Rejected(Status.INVALID_OUTPUT, why)
        return Outputs(outs, changed if self.is_reference else [])

    def _persisting_cache(self) -> str | None:
        """Why the device's cache is not what the flush assumes: lines set to persist survive it."""
        held = self.device.persisting_cache_bytes()
        if held:
            return (f"{held} bytes of cache set aside for persisting lines (cudaLimitPersistingL2CacheSize): "
                    "they survive the cold-cache flush")
        return None

    def time_start(self, cmd: TimeStart) -> TimingStarted:
        """Inputs per seed, the sampler, warm-up. Before every call the random inputs of its set are
        redrawn (timed sample k: `Redraw(workload, cmd.key)` at k, which the parent can have redone) and
        destination buffers refilled with NaN, and the inputs an in-place operation updates restored
        (`cmd.updates`); after a sample the parent asked to keep, its outputs are copied on the device."""
        import torch
        from harness.execute.inputs import Redraw, drawn_inputs, generate_inputs, poison, workload_bytes
        from harness.execute.protocol import MAX_KEPT
        from harness.measure.timing import Sampler
        dev, workload = self.device, cmd.workload
        self.handed = []  # what the last Run handed over is not needed while timing
        self.end_timing()  # an abandoned session's pool, before the new one is made
        self.rechecks = None  # the last session's re-checks are done
        self.pool = [self._prepare(workload, generate_inputs(self.definition, workload, s, dev.torch_device))
                     for s in cmd.seeds]
        fresh = cmd.cfg.fresh_inputs and drawn_inputs(workload, self.pool[0]["names"], self.pool[0]["inputs"])
        redraw = Redraw(workload, cmd.key)
        self.keep_at, self.kept_samples = set(), {}

        def make_call(entry: dict[str, Any]) -> Callable[[], None]:
            def call() -> None:
                entry["last"] = self._call(entry)
            return call

        untimed = iter(range(-1, -(1 << 62), -1))  # keys of warm-up and probe calls: fresh inputs there too

        renewed = set(fresh or ())  # inputs the redraw overwrites anyway: restoring them first is wasted copying
        pristine = [[t.clone() if n in cmd.updates and k not in renewed and isinstance(t, torch.Tensor) else None
                     for k, (n, t) in enumerate(zip(e["names"], e["inputs"]))]
                    for e in self.pool]  # what each call finds in the fixed inputs an in-place operation updates

        def before(i: int, k: int | None) -> None:  # k: the timed sample, None for a warm-up or probe call
            entry = self.pool[i]
            for t, kept in zip(entry["inputs"], pristine[i]):
                if kept is not None:
                    t.copy_(kept)
            if fresh:
                redraw(entry["names"], entry["inputs"], next(untimed) if k is None else k)
            if entry["outputs"] is not None:
                poison(entry["outputs"])

        def after(i: int, k: int) -> None:
            if k in self.keep_at and len(self.kept_samples) < MAX_KEPT:
                self.kept_samples[k] = _device_copy(self.pool[i].get("last"))

        dev.fit_to(workload_bytes(self.definition, workload))
        dev.reset_persisting_cache()
        self.cache_problem = None
        self.sampler = Sampler(dev, [make_call(e) for e in self.pool], cmd.cfg, before, after)
        self.sampler.use_graphs_if_configured()
        self.sampler.warmup()
        return TimingStarted(self.sampler.mode, self.sampler.divisor, dev.clocks())

    def time_chunk(self, cmd: TimeChunk) -> Chunk:
        first = self.sampler.count
        self.keep_at = {first + p for p in cmd.keep}
        self.sampler.resume()  # this worker was frozen while the other side's chunk was timed
        samples = self.sampler.chunk(cmd.n)
        self.cache_problem = self.cache_problem or self._persisting_cache()
        return Chunk(samples, self.device.clocks())

    def time_end(self, cmd: TimeEnd) -> TimingEnded:
        """Hidden-work and tamper checks, then the outputs of the samples the parent asked to keep."""
        hidden = HiddenWork(**self.sampler.hidden_work_check())
        why = self.guard.after_call() or self.cache_problem
        problem = Rejected(Status.TAMPERED, why) if why else None
        checks: list[TimedCheck] = []
        self.handed = []
        for k, result in sorted(self.kept_samples.items()):
            outs, why = self._collect(result, cmd.on_device)
            if why:
                problem = problem or Rejected(Status.INVALID_OUTPUT, f"while timed (sample {k}): {why}")
                continue
            checks.append(TimedCheck(k, outs))
        self.end_timing()
        return TimingEnded(hidden, problem, checks)

    def end_timing(self) -> None:
        """No timing session open: its input sets, sampler and kept outputs let go (and with the sampler
        gone, `release_memory` may give their memory back)."""
        self.pool, self.sampler, self.kept_samples = [], None, {}

    # -- bench modules (harness/benchmod/run.py drives these) ------------------------------------
    def bench_load(self, cmd: BenchLoad) -> BenchLoaded | Failure:
        import torch  # noqa: F401  (torch, and torch_npu via the device, before the operator)
        from harness.execute.benchmodule import BenchModuleError, load_bench
        from harness.measure.devices import make_device
        self.device = make_device(cmd.device_kind, cmd.device_index)
        self.device.setup()
        try:
            self.bench = load_bench(cmd.operator, cmd.bench, self.device)
            cases = [BenchCaseInfo(c.id, {k: v for k, v in c.params.items() if type(v) is int
                                          and k not in ("warmup", "repeats", "seed")}) for c in self.bench.cases()]
        except BenchModuleError as exc:  # the module breaks the contract: the parent makes it an input error
            return Failure(Status.COMPILE_ERROR, "\n".join(exc.problems))
        self.bench_load_cmd = cmd
        h = self.bench.header
        return BenchLoaded(h.api_name, h.api_kind, list(h.kernels), cases, self.device.info())

    def bench_time(self, cmd: BenchTime) -> BenchTimed | Failure:
        from harness.measure.profilers.attribution import AttributionError
        from harness.measure.profilers.modes import CaseRun, ModeError, run_mode
        case = next(c for c in self.bench.cases() if c.id == cmd.case)
        dev = self.device
        files = self.bench_load_cmd
        assert files is not None
        child = ("--operator", str(files.operator), *(("--bench", str(files.bench)) if files.bench else ()),
                 "--case", case.id, "--device", dev.kind, "--device-index", str(dev.index), "--cache", cmd.cfg.cache)
        try:
            header = self.bench.header.kernels
            res = run_mode(cmd.mode, dev, CaseRun(self.bench.case_fn(case), cmd.kernels or header, case.warmup,
                                                  case.repeats, child, cmd.required if cmd.kernels else header,
                                                  cmd.total_op),
                           cmd.cfg, cmd.workdir)
        except (AttributionError, ModeError) as exc:
            return Failure(Status.RUNTIME_ERROR, f"{cmd.mode}: {exc}")
        st = res.stats
        return BenchTimed(res.mode, list(st.samples_ms), st.rule_met, st.stop_reason, st.wall_s, res.attributed,
                          res.details)


# One handler per command type: a command the parent did not send cannot name a method.
HANDLERS: dict[type[Command], Callable[[WorkerState, Any], Reply]] = {
    Prepare: WorkerState.prepare, Build: WorkerState.build, Run: WorkerState.run,
    TimeStart: WorkerState.time_start, TimeChunk: WorkerState.time_chunk, TimeEnd: WorkerState.time_end,
    BenchLoad: WorkerState.bench_load, BenchTime: WorkerState.bench_time,
}


def classify(exc: BaseException, device: Any) -> Status:
    from harness.execute.solutions import BuildError
    from harness.execute.solutions.common import Unsupported
    if isinstance(exc, Unsupported):
        return Status.UNSUPPORTED
    if isinstance(exc, BuildError) or type(exc).__name__ in ("CompilationError", "CompileTimeAssertionFailure"):
        return Status.COMPILE_ERROR
    if device is not None and device.memory_error(exc):
        return Status.OUT_OF_MEMORY
    if isinstance(exc, MemoryError):
        return Status.OUT_OF_MEMORY
    return Status.RUNTIME_ERROR


def main(conn: Any, log_path: str, box: Any, early: Any = None) -> None:
    """Worker entry point: serve commands until told to exit or the pipe closes. `early`: what this
    process printed before it knew its log (`spawn.Early`), written there first."""
    if os.getsid(0) != os.getpid():
        os.setsid()  # its own session and process group: the parent stops and kills it as one unit
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)  # before dropping privileges
    if early is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        early.seek(0)
        os.write(fd, early.read())
        early.close()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
    box.enter()  # scratch folder, own uid when the parent is root: before any solution code
    state = WorkerState()
    while True:
        try:
            command = protocol.read_command(conn)
        except (EOFError, OSError):
            return
        if isinstance(command, Exit):
            return
        reply: Reply
        try:
            handler = HANDLERS[type(command)]
            reply = handler(state, command)
        except BaseException as exc:  # everything a solution can raise becomes a status, never a dead loop
            if isinstance(exc, KeyboardInterrupt):
                raise
            reply = Failure(classify(exc, state.device), _describe(exc))
        try:
            payload = protocol.encode(reply)
        except Exception as exc:
            payload = protocol.encode(Failure(Status.RUNTIME_ERROR, f"reply not serialisable: {exc}"))
        state.release_memory()  # before the reply: the parent may freeze this worker once it has it
        protocol.write_frame(conn.fileno(), payload)
