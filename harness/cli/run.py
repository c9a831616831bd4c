"""`harness validate` and `harness run`: the commands that read manifests and run them.

`run` builds a `RunRequest` from the options and hands it to the one run path
(`harness.run.orchestrate`); `finish` is the one epilogue every command that ends in a report uses:
the tables, the file paths, what was not as expected, the exit code.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Iterator

from harness.errors import InputError
from harness.execute import spawn
from harness.paths import MANIFESTS_DIR
from harness.results.render import WIDTH, outcome_lines, render_table
from harness.results.trace import Status
from harness.results.report import Report
from harness.results.interrupt import EXIT_CODE as INTERRUPTED
from harness.spec.benchmodule import MODES, is_bench_module_manifest, load_bench_manifest
from harness.spec.flashinfer import Problem
from harness.spec.manifest import is_suite, load_suite, resolve_manifest_path
from harness.spec.knobs import add_knob_options, knob_overrides
from harness.spec.schema import ManifestError
from harness.spec.shard import Shard


def add_validate_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("manifests", nargs="+")


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("manifest")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda", "npu"])
    p.add_argument("--device-index", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("out"), help="folder for the JSON/JSONL reports")
    p.add_argument("--seed", type=int, help="private run seed (default: random; recorded in the report)")
    p.add_argument("--resume", type=Path, help="an interrupted run's report (REPORT.json): keep its rows, run the rest")
    p.add_argument("--solution", action="append", default=[],
                   help="only this solution (repeatable); a .json file: that upstream solution (hpc-bench's --solution)")
    p.add_argument("--workload", action="append", default=[],
                   help="only this workload id (repeatable); a .jsonl file: those upstream workloads")
    p.add_argument("--definition", type=Path, help="an upstream definition.json (with --workload and --solution files)")
    p.add_argument("--table-format", default="simple", help="tabulate format for the terminal table")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--mode", choices=list(MODES),
                   help="bench-module manifests only: how cases are timed (default: the manifest's, else events)")
    p.add_argument("--devices", help="'all' or indices like 0,1: one worker process per device, pinned to it, "
                   "results merged (with --device cpu, N processes fake N devices)")
    p.add_argument("--shard", help="i/n: run only shard i of n of the suite's workloads "
                   "(1-based; see `harness merge`)")
    p.add_argument("--owner", type=_owner, help="UID:GID to hand the output files to (the container launcher "
                   "runs the harness as root, so that each worker can get a uid of its own)")
    add_export_arguments(p)
    add_knob_options(p)  # generated from BenchConfig's knob table (harness/spec/knobs.py)


def add_export_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--wide", action="store_true", help="every column, notes unwrapped (default: fit 120 columns)")
    p.add_argument("--junit", type=Path, help="also write JUnit XML (a test case per solution and workload)")
    p.add_argument("--csv", type=Path, help="also write CSV (a line per solution and workload)")


def write_exports(report: Report, junit: Path | None, csv_path: Path | None) -> None:
    from harness.results.export import to_csv, to_junit
    from harness.results.report import atomic_write
    if junit is not None:
        atomic_write(junit, to_junit(report))
        print(f"junit: {junit}")
    if csv_path is not None:
        atomic_write(csv_path, to_csv(report))
        print(f"csv: {csv_path}")


def _owner(text: str) -> tuple[int, int]:
    try:
        uid, gid = (int(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected UID:GID (two integers), got {text!r}") from None
    return uid, gid


def cmd_validate(args: argparse.Namespace) -> int:
    """Every manifest checked, every problem of each listed; exit 2 if any is invalid."""
    bad = 0
    for name in args.manifests:
        path = resolve_manifest_path(name, MANIFESTS_DIR)
        try:
            print(f"OK {name}: {_describe(path)}")
        except ManifestError as exc:
            bad += 1
            print("\n".join(exc.lines(f"INVALID {name}")), file=sys.stderr)
        except InputError as exc:  # a bench module that breaks the contract (spec/benchlint.py)
            bad += 1
            print("\n".join([f"INVALID {name}", *exc.lines()]), file=sys.stderr)
    return 2 if bad else 0


def _describe(path: Path) -> str:
    if is_bench_module_manifest(path):
        from harness.cli.runbench import check_contract
        from harness.execute.benchmodule import default_bench_file
        spec = load_bench_manifest(path)
        check_contract(spec.bench or default_bench_file(spec.operator), spec.operator)
        return f"bench module {spec.operator.name}, mode {spec.mode}, devices {', '.join(spec.devices)}"
    manifests = load_suite(path)
    if is_suite(path):
        parts = ", ".join(f"{m.definition.name} ({len(m.workloads)} workloads, {len(m.solutions)} solutions)"
                          for m in manifests)
        return f"suite of {len(manifests)} problems: {parts}"
    m = manifests[0]
    return f"{m.definition.name}, {len(m.workloads)} workloads, {len(m.solutions)} solutions"


def split_files(values: list[str], suffix: str) -> tuple[tuple[str, ...], tuple[Path, ...]]:
    """(names, files) of a --solution/--workload list: a value ending in `suffix` is a file."""
    files = tuple(Path(v) for v in values if v.endswith(suffix))
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise InputError(f"no such file: {', '.join(missing)}")
    return tuple(v for v in values if not v.endswith(suffix)), files


def upstream_problem(target: Path | None, definition: Path | None, workloads: tuple[Path, ...],
                     solutions: tuple[Path, ...]) -> Problem | None:
    """The upstream files named one by one, or None when only a manifest or directory was named."""
    if definition is None and not workloads and not solutions:
        return None
    folder = target if target is not None and target.is_dir() else None
    if folder is None and definition is None and target is not None and target.name.endswith(".json"):
        definition = target  # `run definition.json --workload w.jsonl --solution s.json`
    if folder is None and definition is None:
        raise InputError("solution or workload files need a problem directory or --definition FILE")
    if definition is not None and not definition.is_file():
        raise InputError(f"no such file: {definition}")
    return Problem(folder=folder, definition=definition, workloads=workloads, solutions=solutions)


@contextlib.contextmanager
def early_workers(target: Path | None, devices: str | None = None) -> Iterator[tuple[spawn.Early, ...]]:
    """Processes for the run's first workers (the reference, then the first solutions'), started before
    this process imports torch so that the imports run at once (execute/spawn): one per two CPUs, at
    least two (on a 2-core VM a one-row run took 3.9-4.8 s instead of 4.9-5.7 s), at most the reference
    and a window of prepared workers (`spawn.BATCH`). None where the run starts its workers elsewhere
    (one child per device) or has none (a bench module). Those the run did not take are killed on the
    way out, however it ends (bad input included)."""
    started: list[spawn.Early] = []
    try:
        if not (devices or target is None or is_bench_module_manifest(target)):
            cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
            with contextlib.suppress(OSError):  # no more processes to be had: the run starts the rest itself
                for _ in range(max(2, min(1 + spawn.BATCH, cpus // 2))):
                    started.append(spawn.Early())
        yield tuple(started)
    finally:
        for process in started:
            process.close()


def cmd_run(args: argparse.Namespace) -> int:
    from harness.errors import require_torch
    require_torch("opbench run")
    target = resolve_manifest_path(args.manifest, MANIFESTS_DIR)
    with early_workers(target, args.devices) as early:
        from harness.run.orchestrate import RunRequest, run  # torch comes with the run path, not with the CLI
        from harness.run.progress import make_progress
        solutions, solution_files = split_files(args.solution, ".json")
        workloads, workload_files = split_files(args.workload, ".jsonl")
        request = RunRequest(target=target, out=args.out, device=args.device,
                             device_index=args.device_index, devices=args.devices,
                             shard=Shard.parse(args.shard) if args.shard else None,
                             solutions=solutions, workloads=workloads,
                             overrides=knob_overrides(args), mode=args.mode, seed=args.seed,
                             owner=args.owner,
                             problem=upstream_problem(target, args.definition, workload_files, solution_files),
                             resume=args.resume, early=early)
        outcome = run(request, make_progress(args.quiet))
    write_exports(outcome.report, args.junit, args.csv)
    rc = finish(outcome.report, args.table_format, outcome.headline, (outcome.json_path, outcome.jsonl_path), args.wide)
    return INTERRUPTED if outcome.interrupted else rc


def finish(report: Report, table_format: str, headline: str, paths: tuple[Path, Path] | None = None,
           wide: bool = False) -> int:
    """The epilogue of every command that ends in a report: 0 when everything is as expected, else 1."""
    print(render_table(report.traces, table_format, None if wide else WIDTH) if report.traces
          else "no work in this run (an empty shard?)")
    print(headline)
    if paths:
        print(f"report: {paths[0]}\ntraces: {paths[1]}")
    return exit_status(report)


def exit_status(report: Report) -> int:
    """What is not as expected, on stderr; 0 when everything is, 2 when a reference is invalid (the
    manifest's fault: bad input), else 1."""
    for line in outcome_lines(report):
        print(line, file=sys.stderr)
    if any(t.status == Status.INVALID_REFERENCE for t in report.traces):
        return 2
    return 0 if report.summary.ok else 1
