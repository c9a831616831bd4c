"""Test data built on the fly: tiny two-problem suites on disk and synthetic traces/reports."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Sequence

from harness.results.report import Part, ProblemPlan, Report, Shards, SuitePlan
from harness.results.stats import summarize
from harness.results.trace import Status, Trace

FAST_BENCH = ("bench: {max_time_s: 0.3, min_samples: 3, rse_threshold: 0.5, correctness_rounds: 1, "
              "warmup_count: 1, warmup_ms: 0}\n")


def write_problem(root: Path, name: str, op: str, workloads: Sequence[int]) -> Path:
    """A vector op (`a <op> b`) with a trusted inline reference and one pytorch solution."""
    (root / f"{name}_sol.py").write_text(f"import torch\n\n\ndef solve(a, b):\n    return a {op} b\n")
    wl = "".join(f"  - {{id: n{n}, axes: {{n: {n}}}}}\n" for n in workloads)
    path = root / f"{name}.yaml"
    path.write_text(
        "schema_version: 1\n"
        "definition:\n"
        f"  name: {name}\n"
        "  axes: {n: {type: var}}\n"
        "  inputs: {a: {shape: [n], dtype: float32}, b: {shape: [n], dtype: float32}}\n"
        "  outputs: {c: {shape: [n], dtype: float32}}\n"
        f"  reference: \"def run(a, b):\\n    return a {op} b\\n\"\n"
        f"workloads:\n{wl}"
        f"solutions:\n  - {{name: torch-{name}, language: pytorch, entry_point: {name}_sol.py::solve}}\n"
        + FAST_BENCH)
    return path


def write_suite(root: Path, sizes: Sequence[int] = (64, 128), extra: str = "") -> Path:
    """suite-tiny.yaml with two problems (vadd, vmul), each with one workload per size."""
    root.mkdir(parents=True, exist_ok=True)
    write_problem(root, "vadd", "+", sizes)
    write_problem(root, "vmul", "*", sizes)
    path = root / "suite-tiny.yaml"
    path.write_text("schema_version: 1\nproblems:\n  - vadd.yaml\n  - vmul.yaml\n" + extra)
    return path


def samples(median: float, n: int = 200, spread: float = 0.02, seed: int = 0) -> list[float]:
    """`n` latencies around `median` (ms) with relative noise `spread` (gaussian, a few slow outliers)."""
    rng = random.Random(seed)
    xs = [median * (1 + rng.gauss(0, spread)) for _ in range(n)]
    for i in range(0, n, 50):
        xs[i] *= 1.5  # a preempted sample now and then
    return xs


def trace(solution: str = "sol", workload: str = "w", definition: str = "op", status: Status = Status.PASSED,
          sol_ms: Sequence[float] | None = None, ref_ms: Sequence[float] | None = None, **kw: Any) -> Trace:
    timed = status == Status.PASSED and sol_ms is not None
    t = summarize(sol_ms, True, "rse", 0.0, "events", "cold") if timed else None
    r = summarize(ref_ms, True, "rse", 0.0, "events", "cold") if timed and ref_ms is not None else None
    return Trace(definition=definition, workload=workload, axes={"n": 1}, solution=solution, language="pytorch",
                 device="cpu", status=status, timing=t, reference_timing=r,
                 speedup=(r.median_ms / t.median_ms) if t and r else None, **kw)


def report(traces: Sequence[Trace], suite: SuitePlan | None = None, shards: Shards | None = None) -> Report:
    part = Part(definition=traces[0].definition if traces else "op", manifest="m.yaml", device="cpu", run_seed=1,
                bench={}, environment={"device": {"name": "test cpu"}}, created="2026-12-02T00:00:00+00:00",
                traces=len(traces))
    return Report(tuple(traces), (part,), "2026-12-02T00:00:00+00:00", suite, shards)


def plan(name: str, problems: Sequence[tuple[str, Sequence[str], Sequence[str]]]) -> SuitePlan:
    """A suite plan from (definition, solutions, workloads) triples."""
    return SuitePlan(name, f"{name}.yaml", tuple(ProblemPlan(d, f"{d}.yaml", tuple(s), tuple(w)) for d, s, w in problems))


def load(path: Path) -> dict[str, Any]:
    """A report file as JSON: what a user (or a CI step with jq) reads."""
    import json
    return json.loads(Path(path).read_text())
