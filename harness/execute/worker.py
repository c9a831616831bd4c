"""The process a solution (or the reference) runs in: builds it, runs it, times it, checks for cheats.

One worker per solution, started with `spawn` by `isolation.Worker`. Commands arrive as pickles from
the trusted parent; replies go back as `torch.save` bytes that the parent loads with
`weights_only=True`, so nothing a solution does can make the parent execute code.
"""
from __future__ import annotations

import io
import os
import random
import sys
import traceback
from dataclasses import asdict
from typing import Any, Callable

STATUS_COMPILE, STATUS_RUNTIME, STATUS_OOM = "COMPILE_ERROR", "RUNTIME_ERROR", "OUT_OF_MEMORY"


def pack(obj: Any) -> bytes:
    import torch
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def unpack(data: bytes) -> Any:
    import torch
    return torch.load(io.BytesIO(data), weights_only=True)


def _describe(exc: BaseException) -> str:
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-4))
    return f"{type(exc).__name__}: {exc}\n{tb}"[-6000:]


class WorkerState:
    """Everything one worker holds between commands; no module-level state."""

    def __init__(self) -> None:
        self.device: Any = None
        self.fn: Callable[..., Any] | None = None
        self.definition: Any = None
        self.dps = False
        self.guard: Any = None
        self.kept: list[Any] = []  # previous outputs, alive, so a re-handed buffer is detectable
        self.sampler: Any = None
        self.pool: list[dict[str, Any]] = []
        self.rng = random.Random(0)

    # -- commands -----------------------------------------------------------------------------
    def build(self, target: Any, definition: Any, device_kind: str, device_index: int, private_seed: int) -> dict:
        import torch  # noqa: F401  (import torch, and torch_npu via the device, before user code)
        from harness.measure.devices import make_device
        from harness.measure.environment import versions
        from harness.execute.guards import TamperGuard
        from harness.spec.model import Reference

        self.definition = definition
        self.device = make_device(device_kind, device_index)
        self.device.setup()
        self.rng = random.Random(private_seed)
        from harness.measure import timing
        self.guard = TamperGuard()
        self.guard.add("harness.measure.timing.Sampler.chunk", timing.Sampler, "chunk")
        self.guard.add("harness.execute.worker.pack", sys.modules[__name__], "pack")
        if isinstance(target, Reference):
            namespace: dict[str, Any] = {"__name__": "opbench_reference"}
            exec(compile(target.source, target.origin, "exec"), namespace)
            self.fn = namespace.get(target.entry)
            if not callable(self.fn):
                raise RuntimeError(f"reference in {target.origin} defines no function {target.entry!r}")
        else:
            from harness.execute.solutions import build_solution
            self.fn = build_solution(target, self.device)
            self.dps = target.destination_passing_style
        tampered = self.guard.check()
        if tampered:
            return {"ok": False, "status": "TAMPERED", "message": f"on import: {tampered}"}
        peak = self.device.peak()
        return {"ok": True, "device": self.device.info(), "versions": versions(),
                "peak": {"bytes_per_s": peak.bytes_per_s, "flops_per_s": dict(peak.flops_per_s)}}

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

    def _collect(self, result: Any) -> tuple[list[Any], str | None]:
        """Outputs as CPU tensors for the parent, plus why they are not acceptable, if they are not."""
        from harness.execute.correctness import as_output_list
        names = list(self.definition.outputs)
        outs = as_output_list(result, names)
        if isinstance(outs, str):
            return [], outs
        cpu = [o.detach().cpu() if type(o) is __import__("torch").Tensor else f"<{type(o).__name__}>" for o in outs]
        return cpu, None

    def run(self, workload: Any, seed: int) -> dict:
        """One correctness round on fresh inputs for `seed`."""
        from harness.execute.guards import mutated_inputs, output_problems, snapshot
        from harness.execute.inputs import generate_inputs
        dev = self.device
        inputs = generate_inputs(self.definition, workload, seed, dev.torch_device)
        entry = self._prepare(workload, inputs)
        before = snapshot(entry["inputs"])
        dev.synchronize()  # inputs were made on the default stream; the call runs on the harness stream
        with dev.stream():
            result = self._call(entry)
        dev.synchronize()  # device-wide: work the call left on any stream is finished before checks
        reply: dict[str, Any] = {"ok": True, "problem": None}
        tampered = self.guard.check() or self.guard.stray_threads()
        if tampered:
            reply["problem"] = ("TAMPERED", tampered)
            return reply
        bad = mutated_inputs(entry["names"], before, entry["inputs"])
        if bad:
            reply["problem"] = ("INPUT_MUTATED", f"solution modified input(s) {', '.join(bad)}")
            return reply
        outs, why = self._collect(result)
        if why is None and not self.dps:
            from harness.execute.correctness import as_output_list
            live = as_output_list(result, list(self.definition.outputs))
            why = output_problems(live, entry["inputs"], self.kept)
            if why is None:
                self.kept = [o for o in live if isinstance(o, __import__("torch").Tensor)]
        if why is not None:
            reply["problem"] = ("INVALID_OUTPUT", why)
            return reply
        reply["outputs"] = outs
        return reply

    def run_on(self, inputs: list[Any]) -> dict:
        """Compute on given inputs (the reference re-checking what the solution saw while timed)."""
        dev = self.device
        entry = {"inputs": [x.to(dev.torch_device) if hasattr(x, "to") else x for x in inputs], "outputs": None}
        dev.synchronize()
        with dev.stream():
            result = self._call(entry)
            dev.synchronize()
        outs, why = self._collect(result)
        if why:
            raise RuntimeError(why)
        return {"ok": True, "outputs": outs}

    def time_start(self, workload: Any, seeds: list[int], cfg: Any) -> dict:
        import torch
        from harness.execute.inputs import generate_inputs
        from harness.measure.timing import Sampler
        dev = self.device
        self.pool = [self._prepare(workload, generate_inputs(self.definition, workload, s, dev.torch_device)) for s in seeds]
        for entry in self.pool:
            entry["last"] = None
            entry["refresh"] = [i for i, n in enumerate(entry["names"])
                                if workload.inputs[n].type == "random" and isinstance(entry["inputs"][i], torch.Tensor)
                                and entry["inputs"][i].numel() > 1] if cfg.fresh_inputs else []

        def make_call(entry: dict[str, Any]) -> Callable[[], None]:
            def call() -> None:
                entry["last"] = self._call(entry)
            return call

        def refresh(i: int) -> None:
            entry = self.pool[i]
            for k in entry["refresh"]:
                flat = entry["inputs"][k].view(-1)
                flat.copy_(torch.roll(flat, self.rng.randrange(1, flat.numel())))

        self.sampler = Sampler(dev, [make_call(e) for e in self.pool], cfg, refresh)
        self.sampler.use_graphs_if_configured()
        info = self.sampler.warmup()
        return {"ok": True, "warmup": asdict(info), "mode": self.sampler.mode, "calls_per_sample": self.sampler.divisor,
                "clocks": dev.clocks()}

    def time_chunk(self, n: int) -> dict:
        samples = self.sampler.chunk(n)
        return {"ok": True, "samples": samples, "clocks": self.device.clocks()}

    def time_end(self) -> dict:
        """Hidden-work and tamper checks, then what each input set last saw and produced."""
        hidden = self.sampler.hidden_work_check()
        reply: dict[str, Any] = {"ok": True, "hidden": hidden, "problem": None, "checks": []}
        problem = self.guard.check() or self.guard.stray_threads()
        if problem:
            reply["problem"] = ("TAMPERED", problem)
        for entry in self.pool:
            outs, why = self._collect(entry["last"])
            if why:
                reply["problem"] = reply["problem"] or ("INVALID_OUTPUT", f"while timed: {why}")
                continue
            reply["checks"].append({"inputs": [x.detach().cpu() if hasattr(x, "detach") else x for x in entry["inputs"]],
                                    "outputs": outs})
        self.pool, self.sampler = [], None
        return reply


def classify(exc: BaseException, device: Any) -> str:
    from harness.execute.solutions import BuildError
    if isinstance(exc, BuildError) or type(exc).__name__ in ("CompilationError", "CompileTimeAssertionFailure"):
        return STATUS_COMPILE
    if device is not None and device.memory_error(exc):
        return STATUS_OOM
    if isinstance(exc, MemoryError):
        return STATUS_OOM
    return STATUS_RUNTIME


def main(conn: Any, log_path: str) -> None:
    """Worker entry point: serve commands until told to exit or the pipe closes."""
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
    state = WorkerState()
    while True:
        try:
            cmd, args = conn.recv()
        except (EOFError, OSError):
            return
        if cmd == "exit":
            return
        try:
            reply = getattr(state, cmd)(*args)
        except BaseException as exc:  # everything a solution can raise becomes a status, never a dead loop
            if isinstance(exc, KeyboardInterrupt):
                raise
            reply = {"ok": False, "status": classify(exc, state.device), "message": _describe(exc)}
        try:
            conn.send_bytes(pack(reply))
        except Exception as exc:
            conn.send_bytes(pack({"ok": False, "status": STATUS_RUNTIME, "message": f"reply not serialisable: {exc}"}))
