"""`harness merge` and `harness report`: the commands that read finished reports.

merge: shard (or device, or any) reports -> one report, as a CI job after a matrix of runners.
report: one report -> terminal table, markdown (job summary) and/or a self-contained HTML page.
Exit codes: 0 all results as expected; 1 some not (or a device/shard failed); 2 bad input.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tabulate import tabulate

from harness.results.merge import MergeError, merge_reports
from harness.results.report import HEADERS, atomic_write, group_by_workload, load_report, render_table, row, traces_of, write_reports
from harness.results.trace import Trace


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


def render_markdown(report: dict[str, Any], traces: list[Trace]) -> str:
    out = [f"### opbench: {report.get('definition')} on {report.get('device')}", ""]
    for (definition, workload), group in group_by_workload(traces).items():
        axes = ", ".join(f"{k}={v}" for k, v in group[0].axes.items())
        out += [f"#### {definition} / {workload} ({axes})", "",
                tabulate([row(t) for t in group], headers=HEADERS, tablefmt="github", disable_numparse=True), ""]
    return "\n".join(out)


def _print_outcome(report: dict[str, Any]) -> int:
    for failure in report.get("failures", []):
        print(f"FAILED {failure.get('where')}: {str(failure.get('message', '')).splitlines()[0]}", file=sys.stderr)
    for line in report["summary"].get("unexpected", []):
        print(f"UNEXPECTED {line}", file=sys.stderr)
    return 0 if report["summary"].get("ok") else 1


def merge_command(args: argparse.Namespace) -> int:
    try:
        merged = merge_reports([load_report(p) for p in args.reports], allow_partial=args.allow_partial)
    except (OSError, ValueError, KeyError) as exc:  # MergeError is a ValueError
        kind = "cannot merge" if isinstance(exc, MergeError) else "error"
        print(f"{kind}: {exc}", file=sys.stderr)
        return 2
    out: Path = args.out if args.out.suffix == ".json" else args.out.with_suffix(".json")
    json_path, jsonl_path = write_reports(merged, out.parent, out.stem)
    print(render_table(traces_of(merged), args.table_format))
    shards = merged.get("shards")
    where = f"shards {', '.join(map(str, shards['indices']))} of {shards['count']}" if shards else f"{len(args.reports)} report(s)"
    print(f"merged {where}: {len(merged['traces'])} results\nreport: {json_path}\ntraces: {jsonl_path}")
    if merged["summary"].get("missing"):
        print(f"MISSING {merged['summary']['missing']} result(s) of the suite", file=sys.stderr)
    return _print_outcome(merged)


def report_command(args: argparse.Namespace) -> int:
    from harness.results.html import render_html
    try:
        report = load_report(args.report)
        traces = traces_of(report)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    md = render_markdown(report, traces)
    if args.markdown is not None and str(args.markdown) == "-":
        print(md)
    else:
        print(render_table(traces, args.table_format))
        if args.markdown is not None:
            atomic_write(args.markdown, md + "\n")
    if args.html is not None:
        atomic_write(args.html, render_html(report, traces, args.title))
        print(f"html: {args.html}")
    return _print_outcome(report)


__all__ = ["add_merge_arguments", "add_report_arguments", "merge_command", "report_command"]
