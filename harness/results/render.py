"""A report as text: one table per workload (terminal or markdown) and the lines that say what
went wrong (failed problems or devices, missing results, unexpected statuses).

Names and messages come from manifests and solutions: every cell, title and line goes through
`clean`, so an escape code in an error message cannot repaint a row (RUNTIME_ERROR shown as PASSED)."""
from __future__ import annotations

from typing import Iterable, Sequence

from tabulate import tabulate

from harness.results.report import Report
from harness.results.trace import NOT_RUN, Trace
from harness.spec.text import clean

HEADERS = ["solution", "language", "status", "latency", "iqr", "reference", "speedup", "GB/s", "TFLOP/s", "SOL", "notes"]


def fmt_time(ms: float | None) -> str:
    if ms is None:
        return "-"
    if ms < 1.0:
        return f"{ms * 1e3:.2f} us"
    if ms < 1000.0:
        return f"{ms:.3f} ms"
    return f"{ms / 1e3:.3f} s"


def _num(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def row(t: Trace) -> list[str]:
    tm, ref = t.timing, t.reference_timing
    notes = list(t.flags)
    message = clean(t.message).strip()
    if message:
        notes.append(message.splitlines()[0][:90])
    if not t.as_expected and t.expected_status != "PASSED":
        notes.append(f"expected {t.expected_status}")
    sol = t.throughput.get("sol_fraction")
    cells = [t.solution, t.language, str(t.status), fmt_time(tm.median_ms if tm else None),
             fmt_time(tm.iqr_ms if tm else None), fmt_time(ref.median_ms if ref else None),
             "-" if t.speedup is None else f"{t.speedup:.2f}x", _num(t.throughput.get("gb_per_s"), ".1f"),
             _num(t.throughput.get("tflop_per_s"), ".2f"), "-" if sol is None else f"{sol * 100:.1f}%", "; ".join(notes)]
    return [clean(cell).replace("\n", " ") for cell in cells]  # a cell is one line with no escape codes


def group_by_workload(traces: Iterable[Trace]) -> dict[tuple[str, str], list[Trace]]:
    groups: dict[tuple[str, str], list[Trace]] = {}
    for t in traces:
        groups.setdefault((t.definition, t.workload), []).append(t)
    return groups


def _title(group: Sequence[Trace]) -> str:
    axes = ", ".join(f"{k}={v}" for k, v in group[0].axes.items())
    return clean(f"{group[0].definition} / {group[0].workload} ({axes})").replace("\n", " ")


def render_table(traces: Sequence[Trace], fmt: str = "simple") -> str:
    parts = []
    for group in group_by_workload(traces).values():
        parts += [_title(group), tabulate([row(t) for t in group], headers=HEADERS, tablefmt=fmt, disable_numparse=True), ""]
    return "\n".join(parts)


def render_markdown(report: Report) -> str:
    out = [clean(f"### opbench: {report.definition} on {report.device}").replace("\n", " "), ""]
    for group in group_by_workload(report.traces).values():
        out += [f"#### {_title(group)}", "",
                tabulate([row(t) for t in group], headers=HEADERS, tablefmt="github", disable_numparse=True), ""]
    return "\n".join(out)


def outcome_lines(report: Report) -> list[str]:
    """What is not as expected, one line each, for stderr (the exit code says the same in one bit)."""
    lines = [f"FAILED {f.where}: {f.headline}" for f in report.failures]
    if report.summary.missing:
        lines.append(f"MISSING {report.summary.missing} result(s) of the suite")
    return [clean(line) for line in lines + [f"UNEXPECTED {line}" for line in report.summary.unexpected]]
