"""A report as text: one table per workload (terminal or markdown) and the lines that say what
went wrong (failed problems or devices, missing results, unexpected statuses).

Names and messages come from manifests and solutions: every cell, title and line goes through
`clean`, so an escape code in an error message cannot repaint a row (RUNTIME_ERROR shown as PASSED)."""
from __future__ import annotations

from typing import Iterable, Sequence

from tabulate import tabulate

from harness.results.report import Report
from harness.results.trace import NOT_RUN, Status, Trace
from harness.spec.text import clean

HEADERS = ["solution", "language", "status", "latency", "iqr", "reference", "speedup", "GB/s", "FLOP/s", "SOL", "notes"]
WIDTH = 120      # the terminal table fits this many columns: notes wrap into what is left (`--wide`: no limit)
MIN_NOTES = 20   # ... but never narrower than this
MAX_NAME = 20    # a longer solution name wraps in the 120-column table
NARROW_DROPS = ("language", "iqr")  # columns the 120-column table leaves out (`--wide` shows them)
MAX_NOTE = 300   # characters of a row's message in its notes (cut at a word, marked with ...)


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


def si(value: float | None) -> str:
    """A rate with the SI prefix that fits it (a CPU's 35.2G FLOP/s, a GPU's 1.20P), not 0.00 T."""
    if value is None:
        return "-"
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{prefix}"
    return f"{value:.3g}"


def _note(message: str) -> str:
    first = message.splitlines()[0]
    if len(first) <= MAX_NOTE:
        return first
    return first[:MAX_NOTE].rsplit(" ", 1)[0] + " ..."


def row(t: Trace) -> list[str]:
    tm, ref = t.timing, t.reference_timing
    notes = list(t.flags)
    message = clean(t.message).strip()
    if message:
        notes.append(_note(message))
    if not t.as_expected and t.expected_status != "PASSED":
        notes.append(f"expected {t.expected_status}")
    if t.as_expected and t.status != Status.PASSED and t.status not in NOT_RUN:
        notes.insert(0, "as expected")  # a deliberately broken solution that got its status: not an error
    status = str(t.status)
    sol = t.throughput.get("sol_fraction")
    cells = [t.solution, t.language, status, fmt_time(tm.median_ms if tm else None),
             fmt_time(tm.iqr_ms if tm else None), fmt_time(ref.median_ms if ref else None),
             "-" if t.speedup is None else f"{t.speedup:.2f}x", _num(t.throughput.get("gb_per_s"), ".1f"),
             si(t.throughput["tflop_per_s"] * 1e12 if t.throughput.get("tflop_per_s") is not None else None),
             "-" if sol is None else f"{sol * 100:.1f}%", "; ".join(notes)]
    return [clean(cell).replace("\n", " ") for cell in cells]  # a cell is one line with no escape codes


def group_by_workload(traces: Iterable[Trace]) -> dict[tuple[str, str], list[Trace]]:
    groups: dict[tuple[str, str], list[Trace]] = {}
    for t in traces:
        groups.setdefault((t.definition, t.workload), []).append(t)
    return groups


def _title(group: Sequence[Trace]) -> str:
    axes = ", ".join(f"{k}={v}" for k, v in group[0].axes.items())
    return clean(f"{group[0].definition} / {group[0].workload} ({axes})").replace("\n", " ")


def skipped_throughout(traces: Iterable[Trace]) -> dict[tuple[str, str], str]:
    """(definition, solution) -> reason, for solutions SKIPPED on every workload of their problem for
    one reason (GPU solutions in a CPU run): said once under the problem's tables, not in a row each."""
    by: dict[tuple[str, str], list[Trace]] = {}
    for t in traces:
        by.setdefault((t.definition, t.solution), []).append(t)
    return {key: group[0].message for key, group in by.items()
            if all(t.status == Status.SKIPPED for t in group) and len({t.message for t in group}) == 1}


def _skipped_lines(definition: str, skipped: dict[tuple[str, str], str]) -> list[str]:
    names = [(sol, why) for (d, sol), why in skipped.items() if d == definition]
    if not names:
        return []
    return [clean(f"{definition}: SKIPPED on every workload").replace("\n", " ")] + \
        [clean(f"  {sol}: {_note(why) if why else 'skipped'}").replace("\n", " ") for sol, why in names] + [""]


def render_table(traces: Sequence[Trace], fmt: str = "simple", width: int | None = WIDTH) -> str:
    """A table per workload; with `width`, the notes column wraps (at words) so a line fits it.
    Solutions skipped on every workload (skipped_throughout) get a line each after their problem."""
    parts: list[str] = []
    skipped = skipped_throughout(traces)
    groups = list(group_by_workload(traces).values())
    for i, everything in enumerate(groups):
        definition = everything[0].definition
        group = [t for t in everything if (t.definition, t.solution) not in skipped]
        last = i + 1 == len(groups) or groups[i + 1][0].definition != definition
        if not group:
            parts += _skipped_lines(definition, skipped) if last else []
            continue
        rows, headers = [row(t) for t in group], list(HEADERS)
        table = tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True)
        if width is not None:
            keep = [i for i, h in enumerate(HEADERS) if h not in NARROW_DROPS]
            rows, headers = [[r[i] for i in keep] for r in rows], [HEADERS[i] for i in keep]
            notes = max(len(headers[-1]), *(len(r[-1]) for r in rows))
            for _ in range(2):  # wrap the notes by what the widest line is over, measured
                table = tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True,
                                 maxcolwidths=[MAX_NAME] + [None] * (len(headers) - 2) + [notes])
                over = max(len(line) for line in table.splitlines()) - width
                if over <= 0 or notes <= MIN_NOTES:
                    break
                notes = max(MIN_NOTES, notes - over)
        parts += [_title(group), table, ""] + (_skipped_lines(definition, skipped) if last else [])
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
