"""Bench modes: how one bench-module case is timed, and which kernels the time belongs to.

- `events` (default, every device): the harness Sampler (device events on the harness stream, cache
  flush outside the timed region, noise-based stopping rule); times the whole callable.
- `torch-profiler` (cpu, cuda): torch.profiler (CUPTI on CUDA) kernel durations of the named kernels.
- `torch-npu-profiler` (npu): torch_npu.profiler as the workflow runs it (Level1,
  schedule(wait=0, warmup=warmup, active=repeats, repeat=1, skip_first=1), one step per call),
  durations from kernel_details.csv, or totals from op_statistic.csv when that is all there is.
- `msprof` (npu): the case runs in a child process under CANN's msprof; task durations from op_summary.
- `perf-counter` (every device): the host clock around each call, the device synchronized before
  and after it (the workflow's simplest protocol: launch and sync overhead included).

A profiler mode that cannot attribute time to the named kernels raises AttributionError; it never
falls back to a different measurement.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from harness import paths
from harness.errors import InputError
from harness.measure.devices import Device
from harness.spec.benchmodule import MODES
from harness.spec.model import BenchConfig
from harness.measure.timing import Sampler, sample_until_stopped, summarize
from harness.results.trace import TimingStats
from harness.measure.profilers.attribution import (Attribution, AttributionError, KernelRecord, attribute,
                                                   attribute_total_op, attribute_totals)
from harness.measure.profilers.kernel_details import (find_kernel_details, find_op_statistic, parse_kernel_details,
                                                      parse_op_statistic)
from harness.measure.profilers.msprof import load_msprof_records, msprof_command

DEVICES_OF = {"events": ("cpu", "cuda", "npu"), "torch-profiler": ("cpu", "cuda"),
              "torch-npu-profiler": ("npu",), "msprof": ("npu",), "perf-counter": ("cpu", "cuda", "npu")}


class ModeError(InputError):
    """The mode cannot run here (wrong device, tool missing)."""


@dataclass(frozen=True)
class CaseRun:
    """One case ready to time: the zero-argument callable and the contract's counts."""

    fn: Callable[[], Any]
    kernels: tuple[str, ...]
    warmup: int
    repeats: int
    child_argv: tuple[str, ...] = ()  # how a child process re-creates this case (msprof mode)
    required: tuple[str, ...] = ()    # kernels that must run (the header's): attribution fails without them
    total_op: bool = False            # only the total-op metric is wanted: no names needed (attribute_total_op)


@dataclass
class ModeResult:
    mode: str
    stats: TimingStats
    attributed: str                       # what the time covers, for the table and report
    details: dict[str, Any] = field(default_factory=dict)


def check_mode(mode: str, device_kind: str) -> None:
    if mode not in MODES:
        raise ModeError(f"unknown bench mode {mode!r}; expected one of {', '.join(MODES)}")
    if device_kind not in DEVICES_OF[mode]:
        raise ModeError(f"mode {mode!r} runs on {', '.join(DEVICES_OF[mode])}, not {device_kind}")


def _profiled_stats(att: Attribution, mode: str, cache: str, wall_s: float, calls: int) -> TimingStats:
    return summarize(att.samples_ms, True, f"{len(att.samples_ms)} profiled calls of {calls}", wall_s, mode, cache)


def _result(mode: str, att: Attribution, cache: str, wall_s: float, calls: int, source: str) -> ModeResult:
    details = {"kernels": att.kernels, "per_call": att.per_call, "missing": att.missing,
               "not_counted": att.unmatched, "source": source, "ops_us": att.ops_us, "total_op_us": att.total_op_us}
    if not att.kernels:  # attribute_total_op: all device work, no kernel named
        details["total_op_only"] = True
    attributed = att.describe() if att.kernels else "all device work (total-op)"
    return ModeResult(mode, _profiled_stats(att, mode, cache, wall_s, calls), attributed, details)


def _attribute(records: Sequence[KernelRecord], case: CaseRun, calls: int, skip: int, source: str,
               harness_ops: Sequence[str] = ()) -> Attribution:
    if case.total_op:
        return attribute_total_op(records, calls, source, harness_ops)
    return attribute(records, case.kernels, calls, skip, source, case.required, harness_ops)


def run_events(device: Device, case: CaseRun, cfg: BenchConfig) -> ModeResult:
    """The harness timing protocol with the case's warmup and repeats as the minimum counts; with
    `exact_repeats`, the workflow's: `warmup` calls (at least one: it sizes the hold), then exactly
    `repeats` samples, each still flushed and bracketed as the harness does."""
    if cfg.exact_repeats:
        sampler = Sampler(device, [case.fn], replace(cfg, warmup_count=case.warmup, warmup_ms=0.0))
        began = time.monotonic()
        sampler.warmup()
        samples: list[float] = []
        while len(samples) < case.repeats:
            samples.extend(sampler.chunk(min(cfg.chunk, case.repeats - len(samples))))
        stats = summarize(samples, True, f"exactly {case.repeats} samples (--exact-repeats)",
                          time.monotonic() - began, sampler.mode, cfg.cache)
    else:
        sampler = Sampler(device, [case.fn], replace(cfg, warmup_count=case.warmup, min_samples=case.repeats,
                                                     max_samples=max(cfg.max_samples, case.repeats)))
        stats = sample_until_stopped(sampler)
    return ModeResult("events", stats, "whole call (device events)", {"hold_us": sampler.hold_us,
                                                                       "total_op_us": stats.mean_ms * 1e3})


def run_perf_counter(device: Device, case: CaseRun, cfg: BenchConfig) -> ModeResult:
    """At least `warmup` calls and `cfg.warmup_ms` of them (as the Sampler warms up), then `repeats`
    calls each timed by the host clock between two synchronizations. A host clock also times the host:
    on the H100 (2026-12-05) one operator run-bench compared with itself read 0.43x, 0.85x, 0.99x and
    1.41x geomean in four runs of this mode (means of 50 host samples, single outliers to 828 us), where
    events and torch-profiler agreed within 1%. The README says so: decide on a device timer."""
    start = time.perf_counter()
    with device.stream():
        n = 0
        while n < case.warmup or (time.perf_counter() - start) * 1e3 < cfg.warmup_ms:
            case.fn()
            device.synchronize()
            n += 1
        samples = []
        for _ in range(case.repeats):
            if cfg.cache == "cold":
                device.flush_cache()
            device.synchronize()
            t0 = time.perf_counter()
            case.fn()
            device.synchronize()
            samples.append((time.perf_counter() - t0) * 1e3)
    wall = time.perf_counter() - start
    stats = summarize(samples, True, f"{case.repeats} repeats", wall, "perf-counter", cfg.cache)
    return ModeResult("perf-counter", stats, "whole call (host clock, synchronized)", {"total_op_us": stats.mean_ms * 1e3})


FLUSH_RANGE = "opbench::flush"  # the profiler range around the harness's cache flush (not the operator's work)


def _profile_loop(device: Device, case: CaseRun, cold: bool, calls: int | None = None) -> int:
    """Run warmup + repeats calls back to back (flushing the cache before each when cold); with
    `calls`, that many flushes alone (to learn what the flush itself launches)."""
    from torch.profiler import record_function
    total = case.warmup + case.repeats if calls is None else calls
    with device.stream():
        for _ in range(total):
            if cold:
                with record_function(FLUSH_RANGE):
                    device.flush_cache()
            if calls is None:
                case.fn()
        device.synchronize()
    return total


def torch_profiler_records(events: Sequence[Any], device_kind: str) -> list[KernelRecord]:
    """Kernel records from torch.profiler FunctionEvents: device kernels on CUDA, ops on the CPU (an
    op inside another is marked nested: its time is inside its parent's; the flush range is left out)."""
    want = "CUDA" if device_kind == "cuda" else "CPU"
    out = []
    for e in events:
        if getattr(e.device_type, "name", str(e.device_type)) != want:
            continue
        if want == "CPU" and e.name == FLUSH_RANGE:
            continue
        out.append(KernelRecord(name=e.name, duration_us=float(e.time_range.elapsed_us()),
                                start_us=float(e.time_range.start),
                                nested=want == "CPU" and getattr(e, "cpu_parent", None) is not None))
    return out


def run_torch_profiler(device: Device, case: CaseRun, cfg: BenchConfig) -> ModeResult:
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.kind == "cuda" else [])
    with device.stream():  # warm outside the profile: compiles and caches stay out of it
        case.fn()
        device.synchronize()
    cold = cfg.cache == "cold"
    flush_ops: set[str] = set()
    if cold and device.kind != "cpu":  # the device kernels a flush launches: left out of total-op
        with profile(activities=activities) as flush_prof:
            _profile_loop(device, case, cold, calls=2)
        flush_ops = {r.name for r in torch_profiler_records(flush_prof.events(), device.kind)}
    start = time.perf_counter()
    with profile(activities=activities) as prof:
        calls = _profile_loop(device, case, cold)
    records = torch_profiler_records(prof.events(), device.kind)
    att = _attribute(records, case, calls, case.warmup, "torch.profiler", tuple(flush_ops))
    return _result("torch-profiler", att, cfg.cache, time.perf_counter() - start, calls, "torch.profiler events")


def run_torch_npu_profiler(device: Device, case: CaseRun, cfg: BenchConfig, workdir: Path) -> ModeResult:
    import torch_npu  # noqa: F401  (registered by the device already; named here for clarity)
    from torch_npu import profiler as npu_prof

    out = Path(tempfile.mkdtemp(prefix="npu-prof-", dir=workdir))
    exp = npu_prof._ExperimentalConfig(profiler_level=npu_prof.ProfilerLevel.Level1, l2_cache=False,
                                       data_simplification=False)
    # the workflow's schedule: one step per call, the first skipped, `warmup` steps not recorded,
    # `repeats` recorded; the device is synchronized at each step so its tasks stay in it
    start = time.perf_counter()
    with device.stream(), npu_prof.profile(
            activities=[npu_prof.ProfilerActivity.CPU, npu_prof.ProfilerActivity.NPU],
            schedule=npu_prof.schedule(wait=0, warmup=case.warmup, active=case.repeats, repeat=1, skip_first=1),
            on_trace_ready=npu_prof.tensorboard_trace_handler(str(out)), experimental_config=exp) as prof:
        for _ in range(1 + case.warmup + case.repeats):
            if cfg.cache == "cold":
                device.flush_cache()
            case.fn()
            device.synchronize()
            prof.step()
    calls = case.repeats  # only the active steps are in the files
    try:
        path = find_kernel_details(out)
    except AttributionError:
        totals = find_op_statistic(out)
        if totals is None:
            raise
        rows = parse_op_statistic(totals)
        att = (attribute_total_op([KernelRecord(name, total) for name, _, total in rows], calls, str(totals))
               if case.total_op else attribute_totals(rows, case.kernels, calls, str(totals), case.required))
        result = _result("torch-npu-profiler", att, cfg.cache, time.perf_counter() - start, calls, str(totals))
        result.details["aggregate_only"] = "op_statistic.csv: totals per op type, no per-call distribution"
        return result
    att = _attribute(parse_kernel_details(path), case, calls, 0, str(path))
    return _result("torch-npu-profiler", att, cfg.cache, time.perf_counter() - start, calls, str(path))


def run_msprof(device: Device, case: CaseRun, cfg: BenchConfig, workdir: Path, timeout_s: float) -> ModeResult:
    if shutil.which("msprof") is None:
        raise ModeError("msprof is not on PATH (source the CANN toolkit's set_env.sh)")
    if not case.child_argv:
        raise ModeError("msprof mode needs a bench manifest to re-create the case in a child process")
    out = Path(tempfile.mkdtemp(prefix="msprof-", dir=workdir))
    app = [sys.executable, "-m", "harness.benchmod.child", *case.child_argv]
    start = time.perf_counter()
    env = paths.child_env()  # so the child imports this harness, installed or not
    proc = subprocess.run(msprof_command(out, app), capture_output=True, text=True, timeout=timeout_s, env=env)
    if proc.returncode != 0:
        raise ModeError(f"msprof exited with {proc.returncode}:\n{(proc.stdout + proc.stderr)[-3000:]}")
    records, source = load_msprof_records(out)
    calls = case.warmup + case.repeats
    att = _attribute(records, case, calls, case.warmup, source)
    return _result("msprof", att, cfg.cache, time.perf_counter() - start, calls, source)


def run_mode(mode: str, device: Device, case: CaseRun, cfg: BenchConfig, workdir: Path) -> ModeResult:
    check_mode(mode, device.kind)
    workdir.mkdir(parents=True, exist_ok=True)
    if mode == "events":
        return run_events(device, case, cfg)
    if mode == "perf-counter":
        return run_perf_counter(device, case, cfg)
    if mode == "torch-profiler":
        return run_torch_profiler(device, case, cfg)
    if mode == "torch-npu-profiler":
        return run_torch_npu_profiler(device, case, cfg, workdir)
    return run_msprof(device, case, cfg, workdir, cfg.run_timeout_s)


__all__ = ["MODES", "CaseRun", "ModeError", "ModeResult", "AttributionError", "check_mode", "run_mode",
           "torch_profiler_records"]
