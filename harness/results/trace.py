"""What one (solution, workload) run produced: a status, the evidence behind it, and its timings.

Traces are plain dataclasses so they cross the worker pipe, the JSONL file and `compare`/`merge`
unchanged (`asdict` / `Trace.from_dict`).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from typing import Any


class Status(str, Enum):
    PASSED = "PASSED"
    INCORRECT_SHAPE = "INCORRECT_SHAPE"
    INCORRECT_DTYPE = "INCORRECT_DTYPE"
    INCORRECT_NUMERICAL = "INCORRECT_NUMERICAL"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    COMPILE_ERROR = "COMPILE_ERROR"
    TIMEOUT = "TIMEOUT"
    OUT_OF_MEMORY = "OUT_OF_MEMORY"
    INPUT_MUTATED = "INPUT_MUTATED"      # the solution wrote into an input tensor
    INVALID_OUTPUT = "INVALID_OUTPUT"    # not a fresh torch.Tensor: alias, subclass, reused buffer
    TAMPERED = "TAMPERED"                # patched timers/harness functions, or left threads running
    HIDDEN_WORK = "HIDDEN_WORK"          # work outside the timed stream (side streams, host threads)
    SKIPPED = "SKIPPED"                  # not for this device: not a failure
    INVALID_REFERENCE = "INVALID_REFERENCE"  # the manifest's reference raised, hung or broke its declared outputs
    UNSUPPORTED = "UNSUPPORTED"          # this machine lacks the solution's toolchain (cutlass headers, cudnn...)
    INTERRUPTED = "INTERRUPTED"          # the run was stopped (Ctrl-C, SIGTERM) before this row ran: --resume runs it

    def __str__(self) -> str:
        return self.value


NOT_RUN = frozenset({Status.SKIPPED, Status.UNSUPPORTED})  # rows this machine could not run: not the solution's fault
# SOL-ExecBench's REWARD_HACK: what opbench names more precisely (an expected_status may say REWARD_HACK)
REWARD_HACK = frozenset({Status.TAMPERED, Status.HIDDEN_WORK, Status.INPUT_MUTATED, Status.INVALID_OUTPUT})


@dataclass
class TimingStats:
    """Summary of one timed series; `samples_ms` keeps every raw sample for later re-analysis."""

    median_ms: float
    q1_ms: float
    q3_ms: float
    iqr_ms: float
    min_ms: float
    mean_ms: float
    std_ms: float
    n: int
    rse: float                 # relative standard error of the median
    rule_met: bool             # did the noise-based stopping rule stop it (vs. max samples/time)
    stop_reason: str
    measured_ms: float         # total device time in the samples
    wall_s: float              # host time spent reaching the stopping rule
    mode: str                  # the timer that produced the samples: "cupti" | "events" | "cuda-graph[+cupti]" | a bench mode
    cache: str                 # "cold" | "warm"
    samples_ms: list[float] = field(default_factory=list)
    wall_per_call_ms: float = 0.0  # the parent's own clock per call (median over chunks; flush and launch included)
    iqm_ms: float = 0.0        # mean of the samples from q1 to q3: finer than the median when the timer is
                               # quantized (CUPTI's kernel times move in 0.25 us steps on the H200)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "TimingStats | None":
        if data is None:
            return None
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class Trace:
    definition: str
    workload: str
    axes: dict[str, int]
    solution: str
    language: str
    device: str
    status: Status
    message: str = ""
    expected_status: str = "PASSED"
    correctness: dict[str, Any] = field(default_factory=dict)
    timing: TimingStats | None = None
    reference_timing: TimingStats | None = None
    speedup: float | None = None
    throughput: dict[str, float] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    cost_s: dict[str, float] = field(default_factory=dict)  # the row's wall time by phase (runner.RowClock)

    @property
    def as_expected(self) -> bool:
        """SKIPPED (not for this device) and UNSUPPORTED (no toolchain here) say nothing of the solution."""
        if self.expected_status == "REWARD_HACK":
            return self.status in NOT_RUN or self.status in REWARD_HACK
        return self.status in NOT_RUN or str(self.status) == self.expected_status

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["status"] = str(self.status)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Trace":
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in data.items() if k in names}
        kw["status"] = Status(kw["status"])
        kw["timing"] = TimingStats.from_dict(kw.get("timing"))
        kw["reference_timing"] = TimingStats.from_dict(kw.get("reference_timing"))
        return cls(**kw)
