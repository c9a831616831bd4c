"""Running a suite (several problems) in this process, one problem after another, into one report.

`harness run` comes here for a suite file, a `--shard` or `--devices`; the multi-device parent
splits the units over per-device children that each come back here for their share. A problem
whose reference cannot be loaded becomes failed traces plus a `failures` entry, and the suite goes
on with the next problem.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

from harness.spec.manifest import display, is_suite, load_suite, with_bench_overrides
from harness.results.merge import merge_reports
from harness.spec.model import Manifest
from harness.run.progress import RunProgress, runner_callback
from harness.results.report import FORMAT, build_report
from harness.run.runner import RunError, RunOptions, Runner
from harness.spec.shard import Shard, Unit, restrict
from harness.results.trace import Status, Trace


def prepare(path: Path, overrides: dict[str, Any], solutions: Sequence[str] | None = None,
            workloads: Sequence[str] | None = None) -> list[Manifest]:
    """The suite as this run sees it: command-line timing overrides applied, `--solution` and
    `--workload` filters applied (a problem with nothing left keeps its place, empty, so problem
    indices agree between the parent, its children and every shard)."""
    out = []
    for m in load_suite(path):
        m = with_bench_overrides(m, overrides)
        out.append(replace(m, solutions=tuple(s for s in m.solutions if not solutions or s.name in solutions),
                           workloads=tuple(w for w in m.workloads if not workloads or w.id in workloads)))
    return out


def plan_of(name: str, path: Path, manifests: Sequence[Manifest]) -> dict[str, Any]:
    """What a complete run of the suite produces; stored in every report so `merge` can order the
    traces and tell a complete set of shards from a partial one."""
    return {"name": name, "path": display(path),
            "problems": [{"definition": m.definition.name, "manifest": display(m.path),
                          "solutions": [s.name for s in m.solutions], "workloads": [w.id for w in m.workloads]}
                         for m in manifests]}


def trace_count(manifests: Sequence[Manifest], units: Sequence[Unit]) -> int:
    return sum(len(manifests[u.problem].solutions) for u in units)


def failed_traces(m: Manifest, device: str, message: str) -> list[Trace]:
    """Traces standing in for results that were never produced (broken reference, dead device)."""
    return [Trace(definition=m.definition.name, workload=w.id, axes=dict(w.axes), solution=s.name, language=s.language,
                  device=device, status=Status.RUNTIME_ERROR, message=message, expected_status=s.expected_status)
            for s in m.solutions for w in m.workloads]


def stub_report(m: Manifest, device: str, run_seed: int, traces: list[Trace]) -> dict[str, Any]:
    return {"format": FORMAT, "manifest": str(m.path), "definition": m.definition.name, "device": device,
            "run_seed": run_seed, "bench": None, "environment": {}, "traces": [t.to_dict() for t in traces]}


def run_problems(manifests: Sequence[Manifest], units: Sequence[Unit], options: RunOptions, run_seed: int,
                 progress: RunProgress, lane: str = "") -> dict[str, Any]:
    """Run `units` of the suite here, problem by problem, and merge the per-problem reports."""
    reports, failures, done = [], [], 0
    for _, m in restrict(manifests, units):
        if not m.solutions:
            continue
        try:
            callback = runner_callback(progress, lane, m.definition.name)
            result = Runner(m, replace(options, run_seed=run_seed), callback).run()
        except RunError as exc:
            traces = failed_traces(m, options.device, str(exc))
            failures.append({"where": lane or "local", "definition": m.definition.name, "message": str(exc)})
            progress.log(f"{lane + ': ' if lane else ''}{m.definition.name}: {exc}")
            reports.append(stub_report(m, options.device, run_seed, traces))
            done += len(traces)
        else:
            reports.append(build_report(result))
            done += len(result.traces)
        progress.sync(done)
    if not reports:
        return {"format": FORMAT, "traces": [], "failures": failures, "parts": []}
    return merge_reports(reports, failures=failures, allow_partial=True)


def run_command(args: Any, path: Path) -> int:
    """`harness run` for a suite, a shard or several devices (exit codes as in `cli`)."""
    import secrets
    import sys

    from harness.spec.knobs import knob_overrides
    from harness.run.multidevice import parse_devices, run_on_devices
    from harness.run.progress import make_progress
    from harness.results.report import render_table, write_reports
    from harness.run.runner import resolve_device
    from harness.spec.schema import ManifestError
    from harness.spec.shard import select, units_of

    overrides = knob_overrides(args)
    try:
        manifests = prepare(path, overrides, args.solution, args.workload)
        shard = Shard.parse(args.shard) if args.shard else None
        kind = resolve_device(args.device)
        devices = parse_devices(args.devices, kind) if args.devices else None
    except ManifestError as exc:
        print(f"invalid manifest: {len(exc.errors)} problem(s)", file=sys.stderr)
        for err in exc.errors:
            print(f"  {err}", file=sys.stderr)
        return 2
    except (ValueError, RunError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    units = units_of(manifests)
    if trace_count(manifests, units) == 0:
        print("error: no solution and workload left to run (check --solution/--workload)", file=sys.stderr)
        return 2
    if shard:
        units = select(units, shard)
    run_seed = args.seed if args.seed is not None else secrets.randbits(62)
    name = path.stem if is_suite(path) else manifests[0].definition.name
    plan = plan_of(name, path, manifests)
    shards = {"count": shard.count, "indices": [shard.index]} if shard else None

    progress = make_progress(args.quiet)
    progress.start(trace_count(manifests, units))
    try:
        if devices:
            job_args = {"overrides": overrides, "solutions": args.solution, "workloads": args.workload,
                        "run_seed": run_seed}
            child_root = args.out / shard.slug if shard else args.out  # shards may share one --out
            reports, failures = run_on_devices(path, manifests, units, kind, devices, job_args, child_root, progress)
        else:
            options = RunOptions(device=kind, device_index=args.device_index, log_dir=args.out / "logs")
            reports, failures = [run_problems(manifests, units, options, run_seed, progress)], []
    finally:
        progress.close()
    # partial: a result that never came back is counted under summary.missing (not ok), not a crash
    report = merge_reports(reports, failures=failures, suite=plan, shards=shards, allow_partial=True)
    stem = f"{name}-{kind}" + (f"-{shard.slug}" if shard else "")
    json_path, jsonl_path = write_reports(report, args.out, stem)
    traces = [Trace.from_dict(t) for t in report["traces"]]
    print(render_table(traces, args.table_format) if traces else "no work in this shard")
    where = f"devices {', '.join(devices)}" if devices else f"{kind}:{args.device_index}"
    print(f"suite: {name} ({len(manifests)} problem(s)); {len(units)} workload(s)"
          f"{f' in shard {shard}' if shard else ''} on {where}; run seed: {run_seed}")
    print(f"report: {json_path}\ntraces: {jsonl_path}")
    for failure in report["failures"]:
        print(f"FAILED {failure['where']}: {failure['message'].splitlines()[0]}", file=sys.stderr)
    for line in report["summary"]["unexpected"]:
        print(f"UNEXPECTED {line}", file=sys.stderr)
    return 0 if report["summary"]["ok"] else 1
