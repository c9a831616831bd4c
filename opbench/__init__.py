"""opbench's Python API: the same run path and timing protocol as the command line.

    import opbench
    report = opbench.run("manifests/rmsnorm.yaml", device="cpu", max_time_s=1)   # -> harness Report
    result = opbench.bench(torch.add, x, y, reference=lambda x, y: x + y)        # -> BenchResult

`run` checks and times every solution of a manifest (or suite, upstream problem directory, bench-
module manifest) in isolated workers, exactly as `opbench run` does, and returns the report (also
written under `out`). It is safe to call from a script without an `if __name__ == "__main__":` guard
and from a notebook: workers never re-import the calling script. `bench` times a callable in this
process with the harness's sampler (cold cache, noise-based stopping rule, the device's best timer):
quick numbers for a notebook, not a verdict on hostile code (that is what `run` is for).
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

__all__ = ["BenchResult", "bench", "run"]


def run(manifest: str | Path, *, device: str = "auto", out: str | Path | None = None, solutions: tuple[str, ...] = (),
        workloads: tuple[str, ...] = (), seed: int | None = None, quiet: bool = True, **knobs: Any) -> Any:
    """Run a manifest as `opbench run` does; `knobs` are the timing options by field name
    (max_time_s=1, cache="warm", ...). Returns the `Report`; raises an `OpbenchError` on bad input."""
    from harness.paths import MANIFESTS_DIR
    from harness.run.orchestrate import RunRequest, run as run_request
    from harness.run.progress import make_progress
    from harness.spec.knobs import knob_overrides
    from harness.spec.manifest import resolve_manifest_path
    unknown = sorted(set(knobs) - set(knob_overrides({k: 0 for k in knobs})))
    if unknown:
        from harness.errors import InputError
        raise InputError(f"unknown timing option(s) {', '.join(unknown)}")
    target = resolve_manifest_path(str(manifest), MANIFESTS_DIR)
    request = RunRequest(target=target, out=Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="opbench-")),
                         device=device, solutions=tuple(solutions), workloads=tuple(workloads),
                         overrides=knob_overrides(knobs), seed=seed)
    return run_request(request, make_progress(quiet)).report


@dataclass(frozen=True)
class BenchResult:
    """`bench`'s answer: the callable's timing, and with a reference its timing, the speedup and the
    largest absolute difference of their outputs."""

    timing: Any
    reference_timing: Any = None
    speedup: float | None = None
    max_abs_err: float | None = None

    @property
    def median_us(self) -> float:
        return float(self.timing.median_ms) * 1e3


def _device_of(args: tuple[Any, ...]) -> str:
    import torch
    for a in args:
        if isinstance(a, torch.Tensor):
            return a.device.type
    return "cpu"


def bench(fn: Callable[..., Any], *args: Any, reference: Callable[..., Any] | None = None, device: str | None = None,
          **knobs: Any) -> BenchResult:
    """Time `fn(*args)` with the harness's protocol (and `reference(*args)` beside it, after
    checking their outputs agree to within the tensors' own precision)."""
    import torch
    from harness.measure.devices import make_device
    from harness.measure.timing import Sampler, sample_until_stopped
    from harness.spec.knobs import apply_overrides, knob_overrides
    from harness.spec.model import BenchConfig
    dev = make_device(device or _device_of(args))
    dev.setup()
    cfg = apply_overrides(BenchConfig(), knob_overrides(knobs))

    def timed(f: Callable[..., Any]) -> Any:
        return sample_until_stopped(Sampler(dev, [lambda: f(*args)], cfg))

    result = BenchResult(timed(fn))
    if reference is None:
        return result
    got, want = fn(*args), reference(*args)
    outs = [got] if isinstance(got, torch.Tensor) else list(got)
    refs = [want] if isinstance(want, torch.Tensor) else list(want)
    err = max(float((o.float() - r.float()).abs().max()) if o.numel() else 0.0 for o, r in zip(outs, refs))
    ref_timing = timed(reference)
    return BenchResult(result.timing, ref_timing, float(ref_timing.median_ms) / float(result.timing.median_ms), err)
