"""A report as one self-contained HTML page: the table per workload and an inline SVG chart of
latency (median with IQR whiskers, reference included) and speedup per solution.

No scripts, fonts, images or stylesheets are fetched, so the page opens from a CI artifact, a mail
attachment or an air-gapped machine exactly as it was written.
"""
from __future__ import annotations

import math
from html import escape
from typing import Any, Sequence

from harness.results.render import HEADERS, fmt_time, group_by_workload, row
from harness.results.report import Report
from harness.results.trace import NOT_RUN, Status, Trace
from harness.spec.text import clean

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem;color:#1b1f24;max-width:1200px}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem;border-bottom:1px solid #d0d7de;padding-bottom:.3rem}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left}
th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.PASSED td.status{color:#1a7f37}tr.SKIPPED td.status{color:#6e7781}tr.fail td.status{color:#cf222e;font-weight:600}
tr.expected td.status{color:#6e7781}tr.expected td.status::after{content:" (expected)"}
.meta{color:#57606a;font-size:.85rem}.chart{margin:.5rem 0 1rem}.chart text{font-size:11px;fill:#1b1f24}
.ok{color:#1a7f37}.bad{color:#cf222e}details{margin:.5rem 0}pre{white-space:pre-wrap;font-size:.8rem}
.scale{font-size:.85rem}.logscale{display:none}#log:checked~section .logscale{display:block}
#log:checked~section .linearscale{display:none}
"""
LOG_BY_DEFAULT = 10.0  # a workload whose slowest bar is this many times its fastest opens on the log scale
BAR_W, LABEL_W, ROW_H = 420, 190, 22
NUMERIC = {"latency", "iqr", "reference", "speedup", "GB/s", "FLOP/s", "SOL"}


def _h(text: object) -> str:
    """Untrusted text (names, messages) as HTML: control characters removed, then escaped."""
    return escape(clean(str(text)))


def _bars(traces: Sequence[Trace]) -> list[tuple[str, Any, float | None, bool]]:
    bars: list[tuple[str, Any, float | None, bool]] = []  # label, timing, speedup, is_reference
    ref = next((t.reference_timing for t in traces if t.reference_timing is not None), None)
    if ref is not None:
        bars.append(("reference", ref, None, True))
    bars += [(t.solution, t.timing, t.speedup, False) for t in traces if t.status == Status.PASSED and t.timing is not None]
    return bars


def _spread(traces: Sequence[Trace]) -> float:
    bars = _bars(traces)
    medians = [b[1].median_ms for b in bars if b[1].median_ms > 0]
    return max(medians) / min(medians) if medians else 1.0


def _chart(traces: Sequence[Trace], log: bool = False) -> str:
    """Horizontal bars: each timed solution's median (whiskers q1..q3) and the reference's, on one
    scale, linear from 0 or logarithmic (a fast bar next to a slow one stays visible)."""
    bars = _bars(traces)
    if not bars:
        return ""
    top = max(b[1].q3_ms for b in bars) or 1.0
    low = min((b[1].q1_ms for b in bars if b[1].q1_ms > 0), default=top) / 2  # the log axis starts below every bar

    def at(ms: float) -> float:  # position along the bar area, 0..1
        if not log:
            return ms / top
        return max(0.0, math.log(max(ms, low) / low) / math.log(top / low)) if top > low else 1.0

    height = ROW_H * len(bars) + 46  # the axis values, then the caption on its own line
    width = LABEL_W + BAR_W + 150
    kind = "log" if log else "linear"
    out = [f'<svg class="chart {kind}scale" role="img" aria-label="latency per solution ({kind} scale)" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">']
    for i, (label, tm, speedup, is_ref) in enumerate(bars):
        y = 4 + i * ROW_H
        w = max(1.0, BAR_W * at(tm.median_ms))
        x1, x3 = LABEL_W + BAR_W * at(tm.q1_ms), LABEL_W + BAR_W * at(tm.q3_ms)
        colour = "#8c959f" if is_ref else ("#1f6feb" if (speedup or 0) >= 1 else "#d29922")
        value = fmt_time(tm.median_ms) + ("" if speedup is None else f"  {speedup:.2f}x")
        out.append(f'<g class="bar" data-solution="{_h(label)}">'
                   f'<text x="{LABEL_W - 6}" y="{y + 14}" text-anchor="end">{_h(label)}</text>'
                   f'<rect x="{LABEL_W}" y="{y + 3}" width="{w:.1f}" height="{ROW_H - 8}" fill="{colour}"/>'
                   f'<line x1="{x1:.1f}" x2="{x3:.1f}" y1="{y + 11}" y2="{y + 11}" stroke="#1b1f24" stroke-width="1.5"/>'
                   f'<text x="{LABEL_W + max(w, BAR_W * at(tm.q3_ms)) + 6:.1f}" y="{y + 14}">{_h(value)}</text></g>')
    axis_y = 4 + len(bars) * ROW_H + 4
    out.append(f'<line x1="{LABEL_W}" x2="{LABEL_W + BAR_W}" y1="{axis_y}" y2="{axis_y}" stroke="#8c959f"/>'
               f'<text class="axis" x="{LABEL_W}" y="{axis_y + 14}">{_h(fmt_time(low)) if log else "0"}</text>'
               f'<text class="axis" x="{LABEL_W + BAR_W}" y="{axis_y + 14}" text-anchor="end">{_h(fmt_time(top))}</text>'
               f'<text class="caption" x="{LABEL_W}" y="{axis_y + 32}">median latency ({kind} scale) · whisker: '
               f'IQR · label: speedup over the reference</text></svg>')
    return "".join(out)


def _table(traces: Sequence[Trace]) -> str:
    head = "".join(f"<th>{_h(h)}</th>" for h in HEADERS)
    body = []
    for t in traces:
        cls = (str(t.status) if t.status in (Status.PASSED, Status.SKIPPED) else "SKIPPED" if t.status in NOT_RUN
               else "expected" if t.as_expected else "fail")  # a deliberately broken solution that got its status
        cells = "".join(f'<td class="{"num" if h in NUMERIC else "status" if h == "status" else ""}">{_h(c)}</td>'
                        for h, c in zip(HEADERS, row(t)))
        body.append(f'<tr class="{cls}" data-solution="{_h(t.solution)}" data-workload="{_h(t.workload)}">{cells}</tr>')
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render_html(report: Report, title: str | None = None) -> str:
    summary = report.summary
    title = title or f"opbench: {report.definition} on {report.device}"
    counts = ", ".join(f"{v} {k}" for k, v in sorted(summary.by_status.items()))
    ok = summary.ok
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_h(title)}</title>"
             f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><style>{CSS}</style></head><body>",
             f"<h1>{_h(title)}</h1>",
             f'<p class="meta">device: {_h(report.device)} ({_h(report.device_name)}) · '
             f'created {_h(report.created)} · run seed {_h(str(report.run_seed))} · '
             f'{len(report.traces)} results: {_h(counts)} · '
             f'<span class="{"ok" if ok else "bad"}">{"all as expected" if ok else "NOT all as expected"}</span></p>']
    for line in summary.unexpected:
        parts.append(f'<p class="bad">unexpected: {_h(line)}</p>')
    for failure in report.failures:
        parts.append(f'<details class="failure"><summary class="bad">failed: {_h(failure.where)}</summary>'
                     f'<pre>{_h(failure.message)}</pre></details>')
    groups = list(group_by_workload(report.traces).values())
    log = any(_spread(g) >= LOG_BY_DEFAULT for g in groups)
    parts.append(f'<input type="checkbox" id="log"{" checked" if log else ""}>'
                 f'<label class="scale" for="log"> log scale</label>')  # CSS shows one of each chart's two scales
    for group in groups:
        definition, workload = group[0].definition, group[0].workload
        axes = ", ".join(f"{k}={v}" for k, v in group[0].axes.items())
        parts.append(f'<section class="workload" data-definition="{_h(definition)}" data-workload="{_h(workload)}">'
                     f"<h2>{_h(definition)} / {_h(workload)} <span class=\"meta\">({_h(axes)})</span></h2>"
                     f"{_chart(group)}{_chart(group, log=True)}{_table(group)}</section>")
    if len(report.parts) > 1:
        lines = "\n".join(f"{p.definition} on {p.lane or p.device} (seed {p.run_seed})" for p in report.parts)
        parts.append(f"<details><summary>{len(report.parts)} part(s) merged</summary><pre>{_h(lines)}</pre></details>")
    parts.append("</body></html>\n")
    return "".join(parts)
