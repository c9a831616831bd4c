"""The commands that read finished reports: `compare`, `merge`, `report`.

compare: two reports -> per solution and workload, a verdict from the raw samples (`results.compare`).
merge: shard (or device, or any) reports -> one report, as a CI job after a matrix of runners.
report: one report -> terminal table, markdown (job summary) and/or a self-contained HTML page.
Exit codes: 0 all results as expected; 1 some not (or a device/shard failed); 2 bad input.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict
from pathlib import Path

from harness.cli.run import add_export_arguments, exit_status, finish, write_exports
from harness.results import compare
from harness.results.html import render_html
from harness.results.merge import merge
from harness.results.render import render_markdown, render_table
from harness.results.report import Report, atomic_write


def threshold_arg(text: str) -> float:
    """`5%` or `0.05`."""
    value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    if not 0 < value < 10 or math.isnan(value):
        raise argparse.ArgumentTypeError(f"threshold {text!r}: expected e.g. 5% or 0.05")
    return value


def add_compare_arguments(p: argparse.ArgumentParser) -> None:
    defaults = compare.Settings()
    p.add_argument("base", type=Path, help="report of the baseline run")
    p.add_argument("new", type=Path, help="report of the run to judge")
    p.add_argument("--threshold", type=threshold_arg, default=defaults.threshold,
                   help="relative change that counts, e.g. 5%% or 0.05 (default 5%%)")
    p.add_argument("--confidence", type=float, default=defaults.confidence, help="bootstrap interval level (default 0.95)")
    p.add_argument("--resamples", type=int, default=defaults.resamples, help="bootstrap resamples (default 2000)")
    p.add_argument("--seed", type=int, default=defaults.seed, help="bootstrap seed (default 0: verdicts are reproducible)")
    p.add_argument("--normalize", action="store_true",
                   help="compare solution/reference ratios: cancels a different machine between base and new")
    p.add_argument("--markdown", type=Path, help="also write a markdown table here ('-' = stdout instead of the table); "
                   "append it to $GITHUB_STEP_SUMMARY or post it as a PR comment")
    p.add_argument("--json", type=Path, help="also write the rows as JSON here")
    p.add_argument("--table-format", default="simple", help="tabulate format of the terminal table")
    p.add_argument("--fail-on-regression", action="store_true", help="exit 1 if anything is SLOWER or BROKEN")
    p.add_argument("--strict", action="store_true", help="exit 1 also on UNCERTAIN or MISSING, and call FASTER/SLOWER "
                   "even on NOISY or few-sample rows")


def add_merge_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("reports", nargs="+", type=Path, help="reports to join (e.g. one per shard)")
    p.add_argument("--out", type=Path, required=True, help="merged report (JSON; the JSONL traces go beside it)")
    p.add_argument("--allow-partial", action="store_true",
                   help="merge even if shards or results are missing (the summary then says not ok)")
    p.add_argument("--table-format", default="simple")


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("report", type=Path)
    p.add_argument("--html", type=Path, help="write a self-contained HTML page (table + chart per workload)")
    p.add_argument("--markdown", type=Path, help="write markdown tables ('-' = stdout instead of the terminal table)")
    p.add_argument("--title", help="page title")
    p.add_argument("--table-format", default="simple")
    add_export_arguments(p)


def cmd_compare(args: argparse.Namespace) -> int:
    """Exit codes: 0 no gated verdict; 1 a gated verdict (see --fail-on-regression/--strict); 2 bad input."""
    base, new = Report.load(args.base), Report.load(args.new)
    settings = compare.Settings(args.threshold, args.confidence, args.resamples, args.seed, args.normalize, args.strict)
    for line in compare.settings_differ(base, new):
        print(f"warning: the runs differ in {line}", file=sys.stderr)
    rows = compare.compare_traces(base.traces, new.traces, settings)
    md = compare.render_markdown(rows, settings, args.base.name, args.new.name)
    if args.markdown is not None and str(args.markdown) == "-":
        print(md)
    else:
        print(compare.render_table(rows, settings, args.table_format))
        if args.markdown is not None:
            atomic_write(args.markdown, md)
    if args.json is not None:
        atomic_write(args.json, json.dumps({"settings": asdict(settings), "counts": compare.counts(rows),
                                            "rows": [r.to_dict() for r in rows]}, indent=2) + "\n")
    machines = [f"{r.device} ({r.device_name})" for r in (base, new)]
    if machines[0] != machines[1] and not args.normalize:
        print(f"note: base ran on {machines[0]}, new on {machines[1]}; --normalize compares speedups over the "
              "reference instead, which cancels the machine", file=sys.stderr)
    code = compare.exit_code(rows, args.fail_on_regression, args.strict)
    if code:
        gated = compare.STRICT if args.strict else compare.REGRESSIONS
        print(f"regression: {sum(r.verdict in gated for r in rows)} row(s) {'/'.join(sorted(map(str, gated)))}",
              file=sys.stderr)
    return code


def cmd_merge(args: argparse.Namespace) -> int:
    merged = merge([Report.load(p) for p in args.reports], allow_partial=args.allow_partial)
    out: Path = args.out if args.out.suffix == ".json" else args.out.with_suffix(".json")
    paths = merged.write(out.parent, out.stem)
    shards = merged.shards
    where = f"shards {', '.join(map(str, shards.indices))} of {shards.count}" if shards else f"{len(args.reports)} report(s)"
    return finish(merged, args.table_format, f"merged {where}: {len(merged.traces)} results", paths)


def cmd_report(args: argparse.Namespace) -> int:
    report = Report.load(args.report)
    md = render_markdown(report)
    if args.markdown is not None and str(args.markdown) == "-":
        print(md)
    else:
        print(render_table(report.traces, args.table_format, None if args.wide else 120))
        if args.markdown is not None:
            atomic_write(args.markdown, md + "\n")
    if args.html is not None:
        atomic_write(args.html, render_html(report, args.title))
        print(f"html: {args.html}")
    write_exports(report, args.junit, args.csv)
    return exit_status(report)
