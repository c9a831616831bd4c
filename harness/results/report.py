"""Reports: a terminal table per workload (tabulate), a JSON report and a JSONL trace file.

Files are written atomically (temp file in the same folder, fsync, rename), so a reader or a CI
artifact upload never sees half a report.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from tabulate import tabulate

from harness.results.trace import Trace

FORMAT = "opbench-report/1"
HEADERS = ["solution", "language", "status", "latency", "iqr", "reference", "speedup", "GB/s", "TFLOP/s", "SOL", "notes"]


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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
    if t.message:
        notes.append(t.message.splitlines()[0][:90])
    if str(t.status) != t.expected_status and t.expected_status != "PASSED" and str(t.status) != "SKIPPED":
        notes.append(f"expected {t.expected_status}")
    sol = t.throughput.get("sol_fraction")
    return [t.solution, t.language, str(t.status), fmt_time(tm.median_ms if tm else None), fmt_time(tm.iqr_ms if tm else None),
            fmt_time(ref.median_ms if ref else None), "-" if t.speedup is None else f"{t.speedup:.2f}x",
            _num(t.throughput.get("gb_per_s"), ".1f"), _num(t.throughput.get("tflop_per_s"), ".2f"),
            "-" if sol is None else f"{sol * 100:.1f}%", "; ".join(notes)]


def group_by_workload(traces: Iterable[Trace]) -> dict[tuple[str, str], list[Trace]]:
    groups: dict[tuple[str, str], list[Trace]] = {}
    for t in traces:
        groups.setdefault((t.definition, t.workload), []).append(t)
    return groups


def render_table(traces: list[Trace], fmt: str = "simple") -> str:
    parts = []
    for (definition, workload), rows in group_by_workload(traces).items():
        axes = ", ".join(f"{k}={v}" for k, v in rows[0].axes.items())
        parts.append(f"{definition} / {workload} ({axes})")
        parts.append(tabulate([row(t) for t in rows], headers=HEADERS, tablefmt=fmt, disable_numparse=True))
        parts.append("")
    return "\n".join(parts)


def summary(traces: list[Trace]) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for t in traces:
        counts[str(t.status)] = counts.get(str(t.status), 0) + 1
    unexpected = [f"{t.solution}/{t.workload}: {t.status} (expected {t.expected_status})" for t in traces if not t.as_expected]
    return {"total": len(traces), "by_status": counts, "unexpected": unexpected, "ok": not unexpected}


def build_report(result: Any, created: datetime | None = None) -> dict[str, Any]:
    """The JSON report: everything the table shows plus raw samples, config and environment."""
    return {
        "format": FORMAT,
        "created": (created or datetime.now(timezone.utc)).isoformat(),
        "manifest": str(result.manifest.path),
        "definition": result.manifest.definition.name,
        "device": result.device,
        "run_seed": result.run_seed,
        "bench": asdict(result.manifest.bench),
        "environment": result.environment,
        "summary": summary(result.traces),
        "traces": [t.to_dict() for t in result.traces],
    }


def write_reports(report: dict[str, Any], out_dir: Path, stem: str) -> tuple[Path, Path]:
    json_path, jsonl_path = out_dir / f"{stem}.json", out_dir / f"{stem}.jsonl"
    atomic_write(json_path, json.dumps(report, indent=2) + "\n")
    atomic_write(jsonl_path, "".join(json.dumps(t) + "\n" for t in report["traces"]))
    return json_path, jsonl_path


def format_problem(data: dict[str, Any]) -> str | None:
    """Why `data` is not a report this version reads, or None when it is."""
    if data.get("format") != FORMAT:
        return f"not an opbench report (format {data.get('format')!r}, expected {FORMAT!r})"
    return None


def load_report(path: Path) -> dict[str, Any]:
    data = json.loads(Path(path).read_text())
    problem = format_problem(data)
    if problem:
        raise ValueError(f"{path}: {problem}")
    return data


def traces_of(report: dict[str, Any]) -> list[Trace]:
    return [Trace.from_dict(t) for t in report["traces"]]
