"""`hpc-bench` (also `sol-execbench`): SOL-ExecBench's command line, run by opbench's one run path.

    hpc-bench PROBLEM_DIR --solution path/to/solution.json [-v] [-o trace.jsonl] [--json]
    hpc-bench --definition definition.json --workload workload.jsonl --solution solution.json

Options keep their upstream names and meaning: `--compile-timeout` (s, building a solution),
`--timeout` (s, each call into a solution or the reference), `-o/--output` (traces in the upstream
`Trace` shape, results/upstream.py), `--json` (those traces on stdout instead of the table),
`--keep-staging` (keep the staged sources and build folders, printed with -v), `-v` (progress and
where things are). opbench's own timing options (`--max-time-s`, `--warm-cache`, ...) and `--device`
come along. Exit codes: 0 every row PASSED (or got its expected status), 1 not, 2 bad input.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import NoReturn, Sequence

from harness.cli.exit import command
from harness.errors import InputError, OpbenchError
from harness.execute import spawn
from harness.results.interrupt import EXIT_CODE as INTERRUPTED
from harness.results.report import atomic_write
from harness.results.upstream import upstream_traces
from harness.spec.flashinfer import Problem
from harness.spec.knobs import add_knob_options, knob_overrides
from harness.spec.text import clean


def build_parser(prog: str = "hpc-bench") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Check and time a SOL-ExecBench / FlashInfer-Bench solution "
                                "(the hpc-bench command line, run by opbench).")
    p.add_argument("problem_dir", nargs="?", type=Path, help="folder with definition.json and workload.jsonl")
    p.add_argument("--definition", type=Path, help="definition.json (default: PROBLEM_DIR/definition.json)")
    p.add_argument("--workload", type=Path, action="append", default=[], help="workload.jsonl (repeatable)")
    p.add_argument("--solution", type=Path, action="append", default=[], help="solution JSON (repeatable)")
    p.add_argument("--compile-timeout", type=float, help="seconds to build a solution (upstream default 120)")
    p.add_argument("--timeout", type=float, help="seconds for each call into a solution or the reference")
    p.add_argument("-o", "--output", type=Path, help="write the traces, upstream Trace shape, one JSON per line")
    p.add_argument("--json", action="store_true", help="print the traces as JSON lines instead of the table")
    p.add_argument("--keep-staging", action="store_true", help="keep the staged sources and builds (see -v)")
    p.add_argument("-v", "--verbose", action="store_true", help="progress, and where the logs and builds are")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda", "npu"])
    p.add_argument("--device-index", type=int, default=0)
    p.add_argument("--out", type=Path, help="folder for opbench's own JSON/JSONL report (default: a temporary one)")
    p.add_argument("--seed", type=int, help="private run seed (default: random; recorded in the report)")
    add_knob_options(p)
    return p


def problem_of(args: argparse.Namespace) -> Problem:
    for f in [args.definition, *args.workload, *args.solution]:
        if f is not None and not f.is_file():
            raise InputError(f"no such file: {f}")
    if args.problem_dir is not None and not args.problem_dir.is_dir():
        raise InputError(f"{args.problem_dir}: expected a problem directory (definition.json, workload.jsonl)")
    if args.problem_dir is None and args.definition is None:
        raise InputError("name a problem directory, or --definition FILE with --workload FILE")
    return Problem(folder=args.problem_dir, definition=args.definition, workloads=tuple(args.workload),
                   solutions=tuple(args.solution))


def main(argv: Sequence[str] | None = None, prog: str = "hpc-bench") -> int:
    args = build_parser(prog).parse_args(argv)
    try:
        return _main(args)
    except OpbenchError as exc:
        print("\n".join(clean(line) for line in exc.lines()), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return INTERRUPTED


def _main(args: argparse.Namespace) -> int:
    from harness.cli.run import early_workers
    from harness.errors import require_torch
    require_torch("hpc-bench")
    problem = problem_of(args)
    target = problem.folder or problem.definition
    assert target is not None
    with early_workers(target) as early:  # before torch comes with the run path
        return _run(args, problem, early)


def _run(args: argparse.Namespace, problem: Problem, early: tuple[spawn.Early, ...]) -> int:
    from harness.cli.run import exit_status
    from harness.results.render import render_table
    from harness.run.orchestrate import RunRequest, run
    from harness.run.progress import make_progress
    overrides = knob_overrides(args)
    if args.compile_timeout is not None:
        overrides["compile_timeout_s"] = args.compile_timeout
    if args.timeout is not None:
        overrides["run_timeout_s"] = args.timeout
    target = problem.folder or problem.definition
    out = args.out or Path(tempfile.mkdtemp(prefix="hpc-bench-"))
    if args.keep_staging:  # builds and staged copies outlive the run, under the report folder
        os.environ["OPBENCH_BUILD_DIR"] = str((out / "build").resolve())
    request = RunRequest(target=target, out=out, device=args.device, device_index=args.device_index,
                         overrides=overrides, seed=args.seed, problem=problem, early=early)
    outcome = run(request, make_progress(not args.verbose))
    traces = upstream_traces(outcome.report, list(outcome.manifests))
    lines = "".join(json.dumps(t, allow_nan=True) + "\n" for t in traces)
    if args.output:
        atomic_write(args.output, lines)  # a reader never sees half a file
    if args.json:
        sys.stdout.write(lines)
    else:
        print(render_table(outcome.report.traces) if outcome.report.traces else "nothing ran")
        print(outcome.headline)
    if args.verbose:
        print(f"report: {outcome.json_path}\nlogs: {out / 'logs'}" + (f"\nbuilds: {out / 'build'}" if args.keep_staging else ""),
              file=sys.stderr)
    rc = exit_status(outcome.report)
    return INTERRUPTED if outcome.interrupted else rc


def sol_execbench(argv: Sequence[str] | None = None) -> int:
    return main(argv, prog="sol-execbench")


def cli() -> NoReturn:
    """The `hpc-bench` entry point (`command`: no interpreter teardown after the report)."""
    command(main)


def sol_execbench_cli() -> NoReturn:
    """The `sol-execbench` entry point."""
    command(sol_execbench)


if __name__ == "__main__":
    cli()
