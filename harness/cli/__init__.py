"""`opbench ...` / `python -m harness ...`: the command line behind `make bench` and the CI workflows.

Exit codes: 0 every solution got its expected status; 1 some did not; 2 the input was bad
(manifest, device, options, report) and nothing was run; 3 the machine cannot do it (no Docker
engine, image build failed). Errors are raised where they are found and turned into a message and
an exit code here, once.
"""
from __future__ import annotations

import argparse
import sys
from functools import partial
from typing import Callable, NoReturn, Sequence

from harness.cli import benchgen, launch, results, runbench
from harness.cli import run as run_cmd
from harness.cli.exit import command
from harness.errors import OpbenchError
from harness.results.interrupt import EXIT_CODE as INTERRUPTED
from harness.spec.text import clean

Command = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="opbench", description="opbench: check and time accelerator operators")
    sub = parser.add_subparsers(dest="command", required=True)
    sections = [
        ("validate", "validate manifests; exit 2 on any error", run_cmd.add_validate_arguments),
        ("run", "check and time every solution of a manifest on this machine", run_cmd.add_run_arguments),
        ("compare", "compare two reports: per solution and workload, SAME/FASTER/SLOWER/UNCERTAIN from the raw samples",
         results.add_compare_arguments),
        ("merge", "join shard (or any) reports into one", results.add_merge_arguments),
        ("report", "show a report as a table, markdown or an HTML page", results.add_report_arguments),
        ("run-bench", "time a bench module's cases (the Ascend run-bench workflow), optionally against a baseline operator",
         runbench.add_arguments),
        ("bench-gen", "write the bench module of an operator file (cases from a manifest's workloads)",
         benchgen.add_arguments),
        ("launch", "run a manifest in the cuda/npu/cpu container image (built or reused by content tag), or locally",
         launch.add_launch_arguments),
        ("reproduce", "re-run a report's manifest in the same image", launch.add_reproduce_arguments),
    ]
    for name, help_text, add in sections:
        add(sub.add_parser(name, help=help_text))
    return parser


def commands() -> dict[str, Command]:
    return {"validate": run_cmd.cmd_validate, "run": run_cmd.cmd_run, "compare": results.cmd_compare,
            "merge": results.cmd_merge, "report": results.cmd_report, "run-bench": runbench.cmd_run_bench,
            "bench-gen": benchgen.cmd_bench_gen,
            "launch": partial(launch.cmd_launch, run_local=main), "reproduce": partial(launch.cmd_reproduce, run_local=main)}


def cli() -> NoReturn:
    """The `opbench` and `python -m harness` entry point."""
    command(main)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return commands()[args.command](args)
    except OpbenchError as exc:
        print("\n".join(clean(line) for line in exc.lines()), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:  # before a run began (a run itself writes what finished: results/interrupt)
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
