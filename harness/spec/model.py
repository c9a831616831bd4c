"""The validated data model: what a manifest means once the schema and cross-checks accept it.

Everything downstream (inputs, solutions, runner, report) reads these frozen dataclasses and never
the raw YAML, so a field is interpreted in exactly one place (`manifest.py`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


# C++/CUDA languages (cuda_cpp, and C++ with a library's headers and link flags), the files their
# build compiles, and the headers found beside them: the spec checks entry symbols in both, the
# execute layer compiles the first.
CPP_LANGUAGES = ("cuda_cpp", "cutlass", "cudnn", "cublas")
CPP_COMPILED = (".cu", ".cpp", ".cc", ".cxx", ".c")
CPP_HEADERS = (".h", ".hpp", ".cuh")

@dataclass(frozen=True)
class Axis:
    name: str
    kind: str  # "const" | "var" | "expr"
    value: int | None = None
    expression: str | None = None  # expr axes: over const, var and earlier expr axes (`resolve_axes`)


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
    constraints: tuple[str, ...] = ()  # relations between axes every workload satisfies (checked on load)
    custom_inputs: str | None = None  # the reference's function that makes inputs of type "custom"


@dataclass(frozen=True)
class Generator:
    """How one input of one workload is made; all randomness flows from `seed` mixed with the run seed."""

    type: str  # random | randint | scalar | zeros | ones | safetensors | custom
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float
    max_mismatch: float = 0.0
    max_error_cap: float | None = None  # no element may be further off than this, even within max_mismatch


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
class Switch:
    """A flag that sets its knob to one value: `--warm-cache` (cache = "warm"), `--no-cuda-graph` (False)."""

    value: str | bool
    flag: str
    help: str


@dataclass(frozen=True)
class Knob:
    """How one `BenchConfig` field is spelled on the command line: a value option (`--warmup-ms 25.0`,
    typed by the field, `choices` for a closed set of strings) or one `Switch` per value."""

    help: str = ""
    flag: str | None = None
    choices: tuple[str, ...] = ()
    switches: tuple[Switch, ...] = ()

    def __post_init__(self) -> None:
        assert (self.flag is None) != (not self.switches), "a knob is either a value option or a set of switches"


def knob(default: Any, flag: str | None = None, help: str = "", *, choices: tuple[str, ...] = (),
         switches: tuple[Switch, ...] = ()) -> Any:
    """A `BenchConfig` field with its command-line spelling (read by harness/spec/knobs.py)."""
    return field(default=default, metadata={"knob": Knob(help, flag, choices, switches)})


@dataclass(frozen=True)
class BenchConfig:
    """The timing protocol's knobs; manifest values, then command-line overrides, win over defaults.

    Each field carries its command-line spelling; `harness/spec/knobs.py` derives the `harness run`
    options, the override filter and the flags `harness reproduce` pins from this one table."""

    warmup_ms: float = knob(25.0, "--warmup-ms", "warm up for at least this many milliseconds")
    warmup_count: int = knob(3, "--warmup-count", "and at least this many calls, one on each input set")
    min_samples: int = knob(10, "--min-samples", "take at least this many samples")
    max_samples: int = knob(2000, "--max-samples", "stop after this many samples (row NOISY if not converged)")
    min_time_ms: float = knob(50.0, "--min-time-ms",
                              "sample for at least this many milliseconds of wall time before the rule may stop")
    max_time_s: float = knob(10.0, "--max-time-s", "stop after this many seconds (row NOISY if not converged)")
    rse_threshold: float = knob(0.005, "--rse-threshold",
                                "stop when the relative standard error of the median is below this")
    chunk: int = knob(10, "--chunk", "samples per chunk between stopping-rule checks")
    correctness_rounds: int = knob(3, "--rounds", "correctness rounds of fresh inputs")
    cache: str = knob("cold", switches=(
        Switch("cold", "--cold-cache", "flush L2 before every sample (default)"),
        Switch("warm", "--warm-cache", "do not flush L2 between samples")))
    cuda_graph: bool = knob(False, switches=(
        Switch(True, "--cuda-graph", "time replays of a CUDA graph of --graph-batch calls"),
        Switch(False, "--no-cuda-graph", "time direct calls (default)")))
    graph_batch: int = knob(20, "--graph-batch", "calls per CUDA graph (with --cuda-graph)")
    compile_timeout_s: float = knob(300.0, "--compile-timeout-s", "seconds a solution may take to build")
    run_timeout_s: float = knob(120.0, "--run-timeout-s", "seconds one call into a worker may take")
    suspicious_speedup: float = knob(20.0, "--suspicious-speedup",
                                     "flag speedups over the reference above this factor as SUSPICIOUS_SPEEDUP")
    timer: str = knob("auto", "--timer", "auto (default): cupti where the device traces kernel activities (CUDA), "
                      "else events; cupti: per-kernel profiler timestamps (CUDA only); events: device events around "
                      "each call", choices=("auto", "cupti", "events"))
    exact_repeats: bool = knob(False, switches=(
        Switch(True, "--exact-repeats", "bench modules in events mode: each case's warmup calls, then exactly its "
               "repeats samples, as the Ascend workflow runs them (no stopping rule, no max_time_s cap)"),
        Switch(False, "--rule-repeats", "bench modules in events mode: repeats is the least number of samples; "
               "the stopping rule decides the rest (default)")))
    fresh_inputs: bool = knob(True, switches=(
        Switch(True, "--fresh-inputs", "draw random inputs anew, in place, before every sample (default; defeats result caches)"),
        Switch(False, "--no-fresh-inputs", "time every sample on the same inputs")))


@dataclass(frozen=True)
class Manifest:
    path: Path
    definition: Definition
    workloads: tuple[Workload, ...]
    solutions: tuple[Solution, ...]
    bench: BenchConfig
