"""The cases of a bench module, timed in a bench mode (`harness run` on a bench-module manifest).

Runs in this process: the device is set up first (which imports torch_npu before any user module),
then the bench module is validated and each case is timed in the chosen mode. A case that fails,
or whose time cannot be attributed to the named kernels, gets an error status and no time.
The report has the same format as `harness run`'s, so `harness merge` and the table work unchanged.
"""
from __future__ import annotations

import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Sequence

from harness.benchmod.module import load_bench
from harness.measure.devices import make_device
from harness.measure.environment import environment
from harness.measure.profilers.attribution import AttributionError
from harness.measure.profilers.modes import CaseRun, ModeError, check_mode, run_mode
from harness.results.report import Report
from harness.results.trace import Status, Trace
from harness.spec.benchmodule import BenchModuleSpec
from harness.spec.shard import Shard

CHECK_NOTE = "timing only (bench module: no correctness check)"


def _trace(spec_name: str, case_id: str, header: Any, device: str, status: Status, **kw: Any) -> Trace:
    """A report row for one case: the api is the 'solution', its api-kind the 'language'."""
    return Trace(definition=spec_name, workload=case_id, solution=header.api_name, language=header.api_kind,
                 device=device, status=status, correctness={"checked": False, "note": CHECK_NOTE}, **kw)


def run_cases(spec: BenchModuleSpec, device: Any, workdir: Path, case_ids: list[str] | None,
              say: Callable[[str], None], shard: Shard | None = None) -> tuple[list[Trace], dict[str, Any]]:
    """Time every case (or shard i/n's: cases dealt round-robin, as suites are); returns traces and
    the device info. Raises BenchModuleError on a bad module."""
    loaded = load_bench(spec.operator, spec.bench, device)
    name = spec.name or loaded.header.api_name
    traces = []
    cases = loaded.cases()
    if shard is not None:
        cases = cases[shard.index - 1::shard.count]
    for case in cases:
        if case_ids and case.id not in case_ids:
            continue
        axes = {k: v for k, v in case.params.items() if isinstance(v, int) and not isinstance(v, bool)
                and k not in ("warmup", "repeats", "seed")}
        child = ("--manifest", str(spec.path.resolve()), "--case", case.id, "--device", device.kind,
                 "--device-index", str(device.index), "--cache", spec.config.cache)
        say(f"{name} / {case.id}: {spec.mode}")
        try:
            fn = loaded.case_fn(case)
            res = run_mode(spec.mode, device, CaseRun(fn, loaded.header.kernels, case.warmup, case.repeats, child),
                           spec.config, workdir)
        except (AttributionError, ModeError) as exc:
            traces.append(_trace(name, case.id, loaded.header, device.kind, Status.RUNTIME_ERROR, axes=axes,
                                 message=f"{spec.mode}: {exc}", flags=[f"mode {spec.mode}"]))
            continue
        except Exception as exc:  # the case itself failed: a status, not a crash of the run
            status = Status.OUT_OF_MEMORY if device.memory_error(exc) else Status.RUNTIME_ERROR
            traces.append(_trace(name, case.id, loaded.header, device.kind, status, axes=axes,
                                 message=f"{type(exc).__name__}: {exc}", flags=[f"mode {spec.mode}"]))
            continue
        traces.append(_trace(name, case.id, loaded.header, device.kind, Status.PASSED, axes=axes, timing=res.stats,
                             flags=[f"mode {res.mode}", f"kernels: {res.attributed}", "not checked"],
                             throughput={}))
        traces[-1].correctness["attribution"] = res.details
    return traces, device.info()


def run_bench_module(spec: BenchModuleSpec, kind: str, device_index: int, out: Path, case_ids: Sequence[str],
                     shard: Shard | None, say: Callable[[str], None]) -> Report:
    """Every case of the module (or shard i/n's) timed on `kind`; a module not meant for `kind` is
    one SKIPPED row. Raises BenchModuleError on a bad module, ModeError when the mode cannot run here."""
    name = spec.name or spec.operator.stem
    bench = {**asdict(spec.config), "mode": spec.mode, "bench_module": str(spec.bench or "")}
    if kind not in spec.devices:
        traces = [Trace(name, "*", {}, name, "bench-module", kind, Status.SKIPPED,
                        message=f"bench module runs on {', '.join(spec.devices)}, not {kind}")]
        return Report.of_problem(definition=name, manifest=str(spec.path), device=kind, run_seed=None, bench=bench,
                                 environment=environment({"kind": kind}), traces=traces)
    check_mode(spec.mode, kind)
    device = make_device(kind, device_index)
    device.setup()
    out.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="profiles-", dir=out))  # profiler output, kept for the artifact
    traces, info = run_cases(spec, device, workdir, list(case_ids) or None, say, shard)
    return Report.of_problem(definition=traces[0].definition if traces else name, manifest=str(spec.path),
                             device=kind, run_seed=None, bench=bench, environment=environment(info), traces=traces)
