"""Traces in the upstream shape: SOL-ExecBench's and FlashInfer-Bench's `Trace` model.

One JSON object per row: `definition` (name), `workload` (the workload object: uuid, axes, inputs,
tolerance), `solution` (name) and `evaluation` {status, environment {hardware, libs}, timestamp,
log, correctness, performance {latency_ms, reference_latency_ms, speedup_factor}}, with the
invariants both upstream models check (PASSED has correctness and performance, INCORRECT_NUMERICAL
correctness only, every other status neither). opbench's own trace rides alongside under `opbench`
(upstream models ignore keys they do not know), so nothing of the richer record is lost.

Statuses upstream does not have are mapped: what opbench calls cheating (TAMPERED, HIDDEN_WORK,
INPUT_MUTATED, INVALID_OUTPUT) is SOL-ExecBench's REWARD_HACK, OUT_OF_MEMORY a RUNTIME_ERROR.
SKIPPED, UNSUPPORTED and INTERRUPTED rows were not run and are not written. FlashInfer-Bench's model knows neither
REWARD_HACK nor INVALID_REFERENCE; its consumers read them as failures.
"""
from __future__ import annotations

from typing import Any, Iterable

from harness.results.report import Report
from harness.results.trace import NOT_RUN, REWARD_HACK, Status, Trace
from harness.spec.model import Manifest, Workload

STATUS = {**{s: "REWARD_HACK" for s in REWARD_HACK}, Status.OUT_OF_MEMORY: "RUNTIME_ERROR"}
MAX_LOG = 4000


def upstream_status(status: Status) -> str:
    return STATUS.get(status, str(status))


def workload_object(definition_axes: dict[str, Any], w: Workload) -> dict[str, Any]:
    """The workload as upstream writes it: var axes only, inputs by kind, the full tolerance."""
    inputs: dict[str, Any] = {}
    for name, gen in w.inputs.items():
        if gen.type == "scalar":
            inputs[name] = {"type": "scalar", "value": gen.params["value"]}
        elif gen.type == "safetensors":
            inputs[name] = {"type": "safetensors", "path": gen.params["path"], "tensor_key": gen.params["key"]}
        elif gen.type == "custom":
            inputs[name] = {"type": "custom"}
        else:
            inputs[name] = {"type": "random"}
    t = w.tolerance
    return {"axes": {k: v for k, v in w.axes.items() if getattr(definition_axes.get(k), "kind", "var") == "var"},
            "inputs": inputs, "uuid": w.id,
            "tolerance": {"max_atol": t.atol, "max_rtol": t.rtol, "required_matched_ratio": 1.0 - t.max_mismatch,
                          "max_error_cap": t.max_error_cap, "allow_negative_inf": False}}


def _correctness(t: Trace) -> dict[str, Any]:
    c = t.correctness
    message = t.message.lower()
    return {"max_relative_error": float(c.get("max_rel_err", 0.0)), "max_absolute_error": float(c.get("max_abs_err", 0.0)),
            "has_nan": " nan " in f" {message} ", "has_inf": " inf " in f" {message} ",
            "extra": {k: v for k, v in c.items() if k not in ("max_rel_err", "max_abs_err")}}


def evaluation(t: Trace, hardware: str, libs: dict[str, str], timestamp: str) -> dict[str, Any]:
    status = upstream_status(t.status)
    out: dict[str, Any] = {"status": status, "environment": {"hardware": hardware or "unknown", "libs": libs},
                           "timestamp": timestamp, "log": t.message[-MAX_LOG:], "correctness": None, "performance": None}
    if t.status in (Status.PASSED, Status.INCORRECT_NUMERICAL):
        out["correctness"] = _correctness(t)
    if t.status == Status.PASSED and t.timing is not None:
        ref = t.reference_timing.median_ms if t.reference_timing is not None else 0.0
        out["performance"] = {"latency_ms": t.timing.median_ms, "reference_latency_ms": ref,
                              "speedup_factor": t.speedup if t.speedup is not None else 0.0}
    elif t.status == Status.PASSED:  # PASSED needs performance in both models: a row run without timing
        out["performance"] = {"latency_ms": 0.0, "reference_latency_ms": 0.0, "speedup_factor": 0.0}
    return out


def _libs(report: Report) -> dict[str, str]:
    versions = report.environment.get("versions") or {}
    libs = {k: str(versions[k]) for k in ("torch", "triton") if versions.get(k)}
    if versions.get("torch_cuda"):
        libs["cuda"] = str(versions["torch_cuda"])
    return libs


def upstream_traces(report: Report, manifests: Iterable[Manifest]) -> list[dict[str, Any]]:
    """Every row that ran, as an upstream trace (rows whose workload is not in `manifests` keep only
    its id and axes)."""
    by_key = {(m.definition.name, w.id): (m, w) for m in manifests for w in m.workloads}
    libs, hardware = _libs(report), report.device_name
    out = []
    for t in report.traces:
        if t.status in NOT_RUN or t.status == Status.INTERRUPTED:
            continue
        found = by_key.get((t.definition, t.workload))
        workload = (workload_object(found[0].definition.axes, found[1]) if found else
                    {"axes": dict(t.axes), "inputs": {}, "uuid": t.workload})
        out.append({"definition": t.definition, "workload": workload, "solution": t.solution,
                    "evaluation": evaluation(t, hardware, libs, report.created), "opbench": t.to_dict()})
    return out
