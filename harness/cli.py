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

from .manifest import load_manifest, resolve_manifest_path, with_bench_overrides
from .schema import ManifestError

MANIFESTS_DIR = Path(__file__).resolve().parent.parent / "manifests"


def _add_timing_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("timing (override the manifest's bench section)")
    g.add_argument("--warm-cache", dest="cache", action="store_const", const="warm", help="do not flush L2 between samples")
    g.add_argument("--cold-cache", dest="cache", action="store_const", const="cold")
    g.add_argument("--cuda-graph", dest="cuda_graph", action="store_true", default=None, help="time replays of a CUDA graph")
    g.add_argument("--graph-batch", type=int)
    g.add_argument("--warmup-ms", type=float)
    g.add_argument("--warmup-count", type=int)
    g.add_argument("--min-samples", type=int)
    g.add_argument("--max-samples", type=int)
    g.add_argument("--min-time-ms", type=float)
    g.add_argument("--max-time-s", type=float)
    g.add_argument("--rse-threshold", type=float, help="stop when the relative standard error of the median is below this")
    g.add_argument("--rounds", dest="correctness_rounds", type=int, help="correctness rounds of fresh inputs")
    g.add_argument("--compile-timeout-s", type=float)
    g.add_argument("--run-timeout-s", type=float)
    g.add_argument("--no-fresh-inputs", dest="fresh_inputs", action="store_false", default=None)


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
    _add_timing_options(r)
    return parser


def _load(name: str) -> Any:
    return load_manifest(resolve_manifest_path(name, MANIFESTS_DIR))


def cmd_validate(args: argparse.Namespace) -> int:
    bad = 0
    for name in args.manifests:
        try:
            m = _load(name)
        except ManifestError as exc:
            bad += 1
            print(f"INVALID {name}: {len(exc.errors)} problem(s)", file=sys.stderr)
            for err in exc.errors:
                print(f"  {err}", file=sys.stderr)
            continue
        print(f"OK {name}: {m.definition.name}, {len(m.workloads)} workloads, {len(m.solutions)} solutions")
    return 2 if bad else 0


def _progress(quiet: bool) -> Any:
    start = time.monotonic()

    def say(msg: str) -> None:
        if not quiet:
            print(f"[{time.monotonic() - start:7.1f}s] {msg}", file=sys.stderr, flush=True)
    return say


def cmd_run(args: argparse.Namespace) -> int:
    from .report import build_report, render_table, write_reports
    from .runner import RunError, RunOptions, Runner

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
    try:
        runner = Runner(manifest, options, _progress(args.quiet))
        result = runner.run()
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = build_report(result)
    json_path, jsonl_path = write_reports(report, args.out, f"{manifest.definition.name}-{result.device}")
    print(render_table(result.traces, args.table_format))
    dev = report["environment"].get("device", {})
    print(f"device: {result.device} ({dev.get('name', '?')}); cache: {manifest.bench.cache}; run seed: {result.run_seed}")
    print(f"report: {json_path}\ntraces: {jsonl_path}")
    for line in report["summary"]["unexpected"]:
        print(f"UNEXPECTED {line}", file=sys.stderr)
    return 0 if report["summary"]["ok"] else 1


COMMANDS = {"validate": cmd_validate, "run": cmd_run}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return COMMANDS[args.command](args)
