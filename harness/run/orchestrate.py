"""The one run path: a request (what to run, where, how) -> a written report.

Every way of running goes through `run`: a manifest (a suite of one), a suite, a FlashInfer-Bench
directory, a shard of any of them, several devices of this host, and a bench-module manifest; the
container launcher starts `harness run` inside the image, which comes here too. What to print and
which exit code to return is decided once, by the caller, from the returned `RunOutcome`.
"""
from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from harness.benchmod.run import run_bench_module
from harness.errors import InputError
from harness.execute import spawn
from harness.execute.containment import descendants, guard_parent, kill_strays
from harness.results.merge import key_of, merge
from harness.results.report import Failure, Report, ReportError, Shards
from harness.results.interrupt import signals_stop_the_run, stopped
from harness.results.trace import Status
from harness.run.multidevice import parse_devices, run_on_devices
from harness.run.progress import RunProgress
from harness.run.runner import RunOptions, resolve_device
from harness.run.suite import plan_of, prepare, run_units, trace_count
from harness.spec.benchmodule import is_bench_module_manifest, load_bench_manifest, with_overrides
from harness.spec.manifest import is_suite
from harness.spec.model import Manifest
from harness.spec.shard import Shard, foreign_split, select, units_of


@dataclass(frozen=True)
class RunRequest:
    """Everything a run needs; the command line, the Python API and the launcher all build one."""

    target: Path                      # manifest, suite, bench-module manifest or FlashInfer-Bench directory
    out: Path = Path("out")
    device: str = "auto"              # auto | cpu | cuda | npu
    device_index: int = 0
    devices: str | None = None        # "all" or "0,1": one pinned child per device
    shard: Shard | None = None
    solutions: tuple[str, ...] = ()
    workloads: tuple[str, ...] = ()
    overrides: Mapping[str, Any] = field(default_factory=dict)  # timing knobs set on the command line
    mode: str | None = None           # bench modules: how cases are timed
    seed: int | None = None           # private run seed; drawn at random when None
    owner: tuple[int, int] | None = None  # uid, gid the output files are handed to (the container runs as root)
    problem: Any = None               # upstream files named one by one (`spec.flashinfer.Problem`), else None
    resume: Path | None = None        # an earlier (interrupted) report of this run: its rows are kept, not re-run
    early: tuple[spawn.Early, ...] = ()  # processes the caller started before importing torch, for the workers
                                      # (the caller closes them; those the run did not take go with its strays)


@dataclass(frozen=True)
class RunOutcome:
    report: Report
    json_path: Path
    jsonl_path: Path
    headline: str                     # one line: what ran where, with which cache and seed
    interrupted: str | None = None    # "interrupted by SIGINT": the report holds what finished before
    manifests: tuple[Manifest, ...] = ()  # the problems as run (hpc-bench maps traces back to their workloads)


def run(request: RunRequest, progress: RunProgress) -> RunOutcome:
    """Run the request and write its report. Ctrl-C or SIGTERM stops the run; what finished is
    still written, with a failure saying the run was interrupted (results/interrupt)."""
    guard_parent()
    spared = descendants(os.getpid()) - {e.pid for e in request.early}
    with signals_stop_the_run():
        try:
            run_one = _run_bench_module if is_bench_module_manifest(request.target) else _run
            report, stem, headline, interrupted, manifests = run_one(request, progress)
        finally:  # nothing a solution started outlives the run, or sees (and rewrites) its report
            kill_strays(keep=spared)
        json_path, jsonl_path = report.write(request.out, stem)
        if request.owner:
            hand_over(request.out, request.owner)
    return RunOutcome(report, json_path, jsonl_path, headline, interrupted, tuple(manifests))


STOPPED = "run (stopped)"  # where the failure an interruption adds says it happened (--resume drops it)


def _resumed(path: Path) -> Report:
    """An earlier report to go on from: its rows as they were, without the note that it was stopped."""
    try:
        previous = Report.load(path)
    except ReportError as exc:
        raise InputError(f"--resume {path}: not a report opbench can read ({exc})") from None
    if previous.shards is not None and (why := foreign_split(previous.shards.split)):
        raise InputError(f"--resume {path}: its shard was {why}")
    kept = tuple(f for f in previous.failures if f.where != STOPPED)
    finished = tuple(t for t in previous.traces if t.status != Status.INTERRUPTED)
    return replace(previous, traces=finished, failures=kept, suite=None, shards=None)  # the plan is this run's


def _interrupted(report: Report, why: str) -> Report:
    """`report` with a failure saying the run was stopped, and how much of it finished; every row of
    the plan that never ran is an INTERRUPTED row (`--resume REPORT` runs those)."""
    from harness.results.merge import expected_keys
    from harness.results.trace import Trace
    have = {key_of(t) for t in report.traces}
    left = [Trace(definition=d, workload=w, axes={}, solution=s, language="-", device=report.device,
                  status=Status.INTERRUPTED, message=f"{why} before this row ran")
            for d, w, s in expected_keys(report.suite, report.shards) if (d, w, s) not in have]
    finished = len(report.traces)
    missing = f"; {len(left)} never ran (INTERRUPTED: --resume runs them)" if left else ""
    return replace(report, traces=(*report.traces, *left), missing=0, failures=(*report.failures, Failure(
        where=STOPPED, message=f"{why}: the report holds the {finished} result(s) finished before it{missing}")))


def hand_over(out: Path, owner: tuple[int, int]) -> None:
    """Give what this run wrote under `out` to `owner`. In the container the parent runs as root so
    that workers can have uids of their own, which leaves the caller's output folder writable by the
    parent alone; the caller still gets files they own."""
    me = os.geteuid()
    for path in [out, *out.rglob("*")]:
        if path.lstat().st_uid == me:
            os.chown(path, *owner, follow_symlinks=False)


def _run(request: RunRequest, progress: RunProgress) -> tuple[Report, str, str, str | None, list[Manifest]]:
    manifests = prepare(request.target, dict(request.overrides), request.solutions, request.workloads, request.problem)
    if request.problem is not None and request.devices:
        raise InputError("--devices takes a manifest or a problem directory, not files named one by one")
    kind = resolve_device(request.device)
    devices = parse_devices(request.devices, kind) if request.devices else None
    units = units_of(manifests)
    if trace_count(manifests, units) == 0:
        raise InputError("no solution and workload left to run (check --solution/--workload)")
    shard = request.shard
    if shard:
        units = select(units, shard)
    previous = _resumed(request.resume) if request.resume is not None else None
    if previous is not None and devices:
        raise InputError("--resume runs on one device; leave out --devices")
    seed = request.seed if request.seed is not None else (previous.parts[0].run_seed if previous and previous.parts else None)
    run_seed = seed if seed is not None else secrets.randbits(62)
    name = request.target.stem if is_suite(request.target) else manifests[0].definition.name
    plan = plan_of(name, request.target, manifests)

    progress.start(trace_count(manifests, units))
    interrupted: str | None = None
    try:
        if devices:
            job_args = {"overrides": dict(request.overrides), "solutions": list(request.solutions),
                        "workloads": list(request.workloads), "run_seed": run_seed}
            child_root = request.out / shard.slug if shard else request.out  # shards may share one --out
            parts = run_on_devices(request.target, manifests, units, kind, devices, job_args, child_root, progress)
        else:
            options = RunOptions(device=kind, device_index=request.device_index, log_dir=request.out / "logs",
                                 done=frozenset(key_of(t) for t in previous.traces) if previous else frozenset())
            parts = run_units(manifests, units, options, run_seed, progress, early=request.early)
    except KeyboardInterrupt as exc:
        stop = stopped(exc)
        parts, interrupted = stop.reports, stop.why
    finally:
        progress.close()
    if previous is not None:
        parts = [previous, *parts]
    # partial: a result that never came back is counted under summary.missing (not ok), not a crash
    report = merge(parts, suite=plan, shards=Shards(shard.count, (shard.index,)) if shard else None,
                   allow_partial=True)
    if interrupted:
        report = _interrupted(report, interrupted)
    where = f"devices {', '.join(devices)}" if devices else f"{kind}:{request.device_index}"
    cache = {m.bench.cache for m in manifests}
    headline = (f"{name}: {len(manifests)} problem(s), {len(units)} workload(s)"
                f"{f' in shard {shard}' if shard else ''} on {where} ({report.device_name}); "
                f"cache: {'/'.join(sorted(cache))}; run seed: {run_seed}")
    return report, f"{name}-{kind}" + (f"-{shard.slug}" if shard else ""), headline, interrupted, manifests


def _run_bench_module(request: RunRequest, progress: RunProgress) -> tuple[Report, str, str, str | None, list[Manifest]]:
    """A bench module is a problem of its own kind: its cases are the workloads, its api the solution."""
    spec = with_overrides(load_bench_manifest(request.target), {**request.overrides, "mode": request.mode})
    if request.devices:
        raise InputError("--devices is not supported for bench-module manifests (use --device-index)")
    kind = resolve_device(request.device)
    interrupted: str | None = None
    try:
        report = run_bench_module(spec, kind, request.device_index, request.out, request.workloads, request.shard,
                                  progress.log)
    except KeyboardInterrupt as exc:
        stop = stopped(exc)
        report = stop.reports[0] if stop.reports else Report.of_problem(
            definition=spec.name or spec.operator.stem, manifest=str(spec.path), device=kind, run_seed=None,
            bench=None, environment={}, traces=[])  # stopped before any case ran
        interrupted = stop.why
    finally:
        progress.close()
    shard = request.shard
    if shard:
        report = merge([report], shards=Shards(shard.count, (shard.index,)), allow_partial=True)
    if interrupted:
        report = _interrupted(report, interrupted)
    stem = f"{report.definition}-{kind}-{spec.mode}" + (f"-{shard.slug}" if shard else "")
    headline = (f"{report.definition}: bench module on {kind} ({report.device_name}); mode: {spec.mode}; "
                f"cache: {spec.config.cache}")
    return report, stem, headline, interrupted, []
