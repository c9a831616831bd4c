"""The validated data model: what a manifest means once the schema and cross-checks accept it.

Everything downstream (inputs, solutions, runner, report) reads these frozen dataclasses and never
the raw YAML, so a field is interpreted in exactly one place (`manifest.py`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Axis:
    name: str
    kind: str  # "const" | "var"
    value: int | None = None


@dataclass(frozen=True)
class TensorSpec:
    """A declared input or output; `shape is None` means a Python scalar argument."""

    name: str
    shape: tuple[str | int, ...] | None
    dtype: str


@dataclass(frozen=True)
class Reference:
    source: str
    entry: str
    origin: str  # file the source came from, for error messages and tracebacks


@dataclass(frozen=True)
class Definition:
    name: str
    description: str
    axes: dict[str, Axis]
    inputs: dict[str, TensorSpec]
    outputs: dict[str, TensorSpec]
    reference: Reference
    flops: str | None = None
    bytes: str | None = None


@dataclass(frozen=True)
class Generator:
    """How one input of one workload is made; all randomness flows from `seed` mixed with the run seed."""

    type: str  # random | randint | scalar | zeros | ones | safetensors
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float
    max_mismatch: float = 0.0


@dataclass(frozen=True)
class Workload:
    id: str
    axes: dict[str, int]
    dtypes: dict[str, str]  # every declared tensor's dtype, overrides applied
    inputs: dict[str, Generator]
    tolerance: Tolerance
    seed: int

    def shape_of(self, spec: TensorSpec) -> tuple[int, ...] | None:
        if spec.shape is None:
            return None
        return tuple(d if isinstance(d, int) else self.axes[d] for d in spec.shape)


@dataclass(frozen=True)
class Solution:
    name: str
    language: str  # pytorch | triton | cuda_cpp | tilelang
    entry_file: Path
    entry_symbol: str
    sources: tuple[Path, ...]
    destination_passing_style: bool
    devices: tuple[str, ...]
    origin: str
    description: str = ""
    expected_status: str = "PASSED"
    build: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BenchConfig:
    """The timing protocol's knobs; manifest values, then command-line overrides, win over defaults."""

    warmup_ms: float = 25.0
    warmup_count: int = 3
    min_samples: int = 10
    max_samples: int = 2000
    min_time_ms: float = 5.0
    max_time_s: float = 10.0
    rse_threshold: float = 0.005
    chunk: int = 10
    correctness_rounds: int = 3
    cache: str = "cold"  # cold: L2 flushed before every sample; warm: never flushed
    cuda_graph: bool = False
    graph_batch: int = 20
    compile_timeout_s: float = 300.0
    run_timeout_s: float = 120.0
    suspicious_speedup: float = 20.0
    timer: str = "events"  # events: device events; cupti: per-kernel profiler timestamps (CUDA)
    fresh_inputs: bool = True  # permute random inputs in place between samples (defeats result caches)


@dataclass(frozen=True)
class Manifest:
    path: Path
    definition: Definition
    workloads: tuple[Workload, ...]
    solutions: tuple[Solution, ...]
    bench: BenchConfig
