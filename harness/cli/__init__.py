"""`python -m harness ...`: the command line behind `make bench` and the CI workflows.

Exit codes: 0 every solution got its expected status; 1 some did not; 2 the input was bad
(manifest, device, options) and nothing was run.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from harness.spec.manifest import is_suite, load_manifest, load_suite, resolve_manifest_path, with_bench_overrides
from harness.spec.knobs import add_knob_options
from harness.spec.schema import ManifestError

from harness.paths import MANIFESTS_DIR


def _add_timing_options(p: argparse.ArgumentParser) -> None:
    add_knob_options(p)  # generated from BenchConfig's knob table (harness/spec/knobs.py)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="harness", description="opbench: check and time accelerator operators")
    sub = parser.add_subparsers(dest="command", required=True)

    v = sub.add_parser("validate", help="validate manifests; exit non-zero on any error")
    v.add_argument("manifests", nargs="+")

    r = sub.add_parser("run", help="check and time every solution of a manifest on this machine")
    r.add_argument("manifest")
    r.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda", "npu"])
    r.add_argument("--device-index", type=int, default=0)
    r.add_argument("--out", type=Path, default=Path("out"), help="folder for the JSON/JSONL reports")
    r.add_argument("--seed", type=int, help="private run seed (default: random; recorded in the report)")
    r.add_argument("--solution", action="append", help="only this solution (repeatable)")
    r.add_argument("--workload", action="append", help="only this workload id (repeatable)")
    r.add_argument("--table-format", default="simple", help="tabulate format for the terminal table")
    r.add_argument("--quiet", action="store_true", help="no progress lines")
    r.add_argument("--mode", choices=["events", "torch-profiler", "torch-npu-profiler", "msprof"],
                   help="bench-module manifests only: how cases are timed (default: the manifest's, else events)")
    r.add_argument("--devices", help="'all' or indices like 0,1: one worker process per device, pinned to it, "
                   "results merged (with --device cpu, N processes fake N devices)")
    r.add_argument("--shard", help="i/n: run only shard i of n of the suite's workloads (1-based; see `harness merge`)")
    _add_timing_options(r)
    _add_results_commands(sub)
    _add_launcher_commands(sub)
    return parser


def _add_results_commands(sub: Any) -> None:
    """Subcommands that read reports: compare two runs, merge shards, render one (table, markdown, HTML)."""
    from harness.results import compare
    from harness.cli import results
    compare.add_arguments(sub.add_parser("compare", help="compare two reports: per solution and workload, "
                                         "SAME/FASTER/SLOWER/UNCERTAIN from the raw samples"))
    results.add_merge_arguments(sub.add_parser("merge", help="join shard (or any) reports into one"))
    results.add_report_arguments(sub.add_parser("report", help="show a report as a table, markdown or an HTML page"))


def _add_launcher_commands(sub: Any) -> None:
    """Subcommands that run the harness inside a container image (harness/launcher)."""
    from harness.cli.launch import add_launch_arguments, add_reproduce_arguments
    add_launch_arguments(sub.add_parser("launch", help="run a manifest in the cuda/npu/cpu container image "
                                        "(built or reused by content tag), or locally"))
    add_reproduce_arguments(sub.add_parser("reproduce", help="re-run a report's manifest in the same image"))


def _load(name: str) -> Any:
    return load_manifest(resolve_manifest_path(name, MANIFESTS_DIR))


def cmd_validate(args: argparse.Namespace) -> int:
    bad = 0
    for name in args.manifests:
        if is_suite(resolve_manifest_path(name, MANIFESTS_DIR)):
            bad += _validate_suite(resolve_manifest_path(name, MANIFESTS_DIR))
            continue
        if _bench_module_path(name) is not None:
            bad += _validate_bench_module(_bench_module_path(name))
            continue
        try:
            m = _load(name)
        except ManifestError as exc:
            bad += _print_invalid(name, exc)
            continue
        print(f"OK {name}: {m.definition.name}, {len(m.workloads)} workloads, {len(m.solutions)} solutions")
    return 2 if bad else 0


def _print_invalid(name: str | Path, exc: ManifestError) -> int:
    """Every problem of one manifest on stderr; returns 1 to count it as bad."""
    print(f"INVALID {name}: {len(exc.errors)} problem(s)", file=sys.stderr)
    for err in exc.errors:
        print(f"  {err}", file=sys.stderr)
    return 1


def _progress(quiet: bool) -> Any:
    start = time.monotonic()

    def say(msg: str) -> None:
        if not quiet:
            print(f"[{time.monotonic() - start:7.1f}s] {msg}", file=sys.stderr, flush=True)
    return say


def _bench_module_path(name: str) -> Path | None:
    """The manifest's path when it is a bench-module manifest (top-level `bench_module:`)."""
    from harness.benchmod.run import is_bench_module_manifest
    path = resolve_manifest_path(name, MANIFESTS_DIR)
    return path if is_bench_module_manifest(path) else None


def _validate_bench_module(path: Path) -> int:
    from harness.benchmod.run import load_bench_manifest
    try:
        spec = load_bench_manifest(path)
    except ManifestError as exc:
        return _print_invalid(path, exc)
    print(f"OK {path}: bench module {spec.operator.name}, mode {spec.mode}, devices {', '.join(spec.devices)}")
    return 0


def _validate_suite(path: Path) -> int:
    try:
        manifests = load_suite(path)
    except ManifestError as exc:
        return _print_invalid(path, exc)
    parts = ", ".join(f"{m.definition.name} ({len(m.workloads)} workloads, {len(m.solutions)} solutions)" for m in manifests)
    print(f"OK {path}: suite of {len(manifests)} problems: {parts}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from harness.results.report import build_report, render_table, write_reports
    from harness.run.runner import RunError, RunOptions, Runner

    bench_path = _bench_module_path(args.manifest)
    if bench_path is not None:
        from harness.benchmod.run import cmd_run_bench_module
        return cmd_run_bench_module(args, bench_path, _progress(args.quiet))
    path = resolve_manifest_path(args.manifest, MANIFESTS_DIR)
    if args.devices or args.shard or is_suite(path):
        from harness.run.suite import run_command
        return run_command(args, path)
    try:
        manifest = _load(args.manifest)
    except ManifestError as exc:
        print(f"invalid manifest: {len(exc.errors)} problem(s)", file=sys.stderr)
        for err in exc.errors:
            print(f"  {err}", file=sys.stderr)
        return 2
    manifest = with_bench_overrides(manifest, vars(args))
    options = RunOptions(device=args.device, device_index=args.device_index, run_seed=args.seed,
                         solutions=args.solution, workloads=args.workload, log_dir=args.out / "logs")
    from harness.run.progress import make_progress, runner_callback
    progress = make_progress(args.quiet)
    progress.start(sum(1 for s in manifest.solutions if not args.solution or s.name in args.solution)
                   * sum(1 for w in manifest.workloads if not args.workload or w.id in args.workload))
    try:
        runner = Runner(manifest, options, runner_callback(progress))
        result = runner.run()
    except RunError as exc:
        progress.close()
        print(f"error: {exc}", file=sys.stderr)
        return 2
    progress.sync(len(result.traces))  # skipped solutions make traces without progress messages
    progress.close()
    report = build_report(result)
    json_path, jsonl_path = write_reports(report, args.out, f"{manifest.definition.name}-{result.device}")
    print(render_table(result.traces, args.table_format))
    dev = report["environment"].get("device", {})
    print(f"device: {result.device} ({dev.get('name', '?')}); cache: {manifest.bench.cache}; run seed: {result.run_seed}")
    print(f"report: {json_path}\ntraces: {jsonl_path}")
    for line in report["summary"]["unexpected"]:
        print(f"UNEXPECTED {line}", file=sys.stderr)
    return 0 if report["summary"]["ok"] else 1


def cmd_compare(args: argparse.Namespace) -> int:
    from harness.results.compare import command
    return command(args)


def cmd_merge(args: argparse.Namespace) -> int:
    from harness.cli.results import merge_command
    return merge_command(args)


def cmd_report(args: argparse.Namespace) -> int:
    from harness.cli.results import report_command
    return report_command(args)


def cmd_launch(args: argparse.Namespace) -> int:
    from harness.cli.launch import cmd_launch as launch
    return launch(args)


def cmd_reproduce(args: argparse.Namespace) -> int:
    from harness.cli.launch import cmd_reproduce as reproduce
    return reproduce(args)


COMMANDS = {"validate": cmd_validate, "run": cmd_run, "compare": cmd_compare, "merge": cmd_merge, "report": cmd_report,
            "launch": cmd_launch, "reproduce": cmd_reproduce}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return COMMANDS[args.command](args)
