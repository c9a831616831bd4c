"""A suite as this run sees it, and its problems run here, one after another, into one report.

A plain manifest is a suite of one. The multi-device parent deals the units over per-device
children that each come back here for their share. A problem whose reference cannot be loaded
becomes failed traces plus a `failures` entry, and the suite goes on with the next problem.
"""
from __future__ import annotations

import difflib
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

from harness.errors import InputError
from harness.execute import spawn
from harness.results.merge import merge
from harness.results.report import Failure, ProblemPlan, Report, SuitePlan
from harness.results.trace import Status, Trace
from harness.results.interrupt import Interrupted, stopped
from harness.run.progress import RunProgress, runner_callback
from harness.run.runner import ReferenceLoadError, RunError, RunOptions, Runner
from harness.spec.manifest import load_manifest, load_suite, with_bench_overrides
from harness.spec.model import Manifest
from harness.spec.schema import display
from harness.spec.shard import Unit, restrict


def prepare(path: Path, overrides: dict[str, Any], solutions: Sequence[str] | None = None,
            workloads: Sequence[str] | None = None, problem: Any = None) -> list[Manifest]:
    """The suite as this run sees it: command-line timing overrides applied, `--solution` and
    `--workload` filters applied (a problem with nothing left keeps its place, empty, so problem
    indices agree between the parent, its children and every shard). A name that matches nothing
    is bad input (a typo must not run nothing and say ok). `problem`: upstream files named one by
    one (`flashinfer.Problem`)."""
    loaded = [load_manifest(path, problem)] if problem is not None else load_suite(path)
    for flag, wanted, have in (("--solution", solutions, {s.name for m in loaded for s in m.solutions}),
                               ("--workload", workloads, {w.id for m in loaded for w in m.workloads})):
        unknown = sorted(set(wanted or ()) - have)
        if unknown:
            near = {u: difflib.get_close_matches(u, sorted(have), n=1) for u in unknown}
            said = ", ".join(f"{u!r}" + (f" (did you mean {near[u][0]!r}?)" if near[u] else "") for u in unknown)
            raise InputError(f"{flag} {said} matches nothing in {display(path)}; it has: {', '.join(sorted(have))[:1000]}")
    out = []
    for m in loaded:
        m = with_bench_overrides(m, overrides)
        out.append(replace(m, solutions=tuple(s for s in m.solutions if not solutions or s.name in solutions),
                           workloads=tuple(w for w in m.workloads if not workloads or w.id in workloads)))
    return out


def plan_of(name: str, path: Path, manifests: Sequence[Manifest]) -> SuitePlan:
    """What a complete run of the suite produces; stored in every report so `merge` can order the
    traces and tell a complete set of shards from a partial one."""
    return SuitePlan(name, display(path), tuple(
        ProblemPlan(m.definition.name, display(m.path), tuple(s.name for s in m.solutions),
                    tuple(w.id for w in m.workloads)) for m in manifests))


def trace_count(manifests: Sequence[Manifest], units: Sequence[Unit]) -> int:
    return sum(len(manifests[u.problem].solutions) for u in units)


def failed_traces(m: Manifest, device: str, message: str, status: Status = Status.RUNTIME_ERROR) -> list[Trace]:
    """Traces standing in for results that were never produced (broken reference, dead device)."""
    return [Trace(definition=m.definition.name, workload=w.id, axes=dict(w.axes), solution=s.name, language=s.language,
                  device=device, status=status, message=message, expected_status=s.expected_status)
            for s in m.solutions for w in m.workloads]


def failed_report(m: Manifest, device: str, run_seed: int | None, message: str,
                  failure: Failure | None = None, status: Status = Status.RUNTIME_ERROR) -> Report:
    return Report.of_problem(definition=m.definition.name, manifest=str(m.path), device=device, run_seed=run_seed,
                             bench=None, environment={}, traces=failed_traces(m, device, message, status), failure=failure)


def run_units(manifests: Sequence[Manifest], units: Sequence[Unit], options: RunOptions, run_seed: int,
              progress: RunProgress, lane: str = "", early: Sequence[spawn.Early] = ()) -> list[Report]:
    """Run `units` of the suite here, problem by problem: one report per problem. `early`: processes for
    the first problem's workers (its Runner's)."""
    reports: list[Report] = []
    done = 0
    for _, m in restrict(manifests, units):
        if not m.solutions:
            continue
        try:
            callback = runner_callback(progress, lane, m.definition.name)
            runner, early = Runner(m, replace(options, run_seed=run_seed), callback, early), ()  # the first one's
            report = runner.run()
        except KeyboardInterrupt as exc:  # the problems that finished are kept, and this one's finished rows
            inner = stopped(exc)
            raise Interrupted([*reports, *(r.with_lane(lane) if lane else r for r in inner.reports)], inner.why) from None
        except RunError as exc:
            progress.log(f"{lane + ': ' if lane else ''}{m.definition.name}: {exc}")
            status = Status.INVALID_REFERENCE if isinstance(exc, ReferenceLoadError) else Status.RUNTIME_ERROR
            report = failed_report(m, options.device, run_seed, str(exc),
                                   Failure(where=lane or "local", message=str(exc), definition=m.definition.name), status)
        reports.append(report.with_lane(lane) if lane else report)
        done += len(report.traces)
        progress.sync(done)
    return reports


def run_here(manifests: Sequence[Manifest], units: Sequence[Unit], options: RunOptions, run_seed: int,
             progress: RunProgress, lane: str = "") -> Report:
    """`run_units` joined into one report (what a per-device child hands back to its parent)."""
    return merge(run_units(manifests, units, options, run_seed, progress, lane), allow_partial=True)
