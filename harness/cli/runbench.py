"""`opbench run-bench`: the Ascend bench-gen / run-bench workflow's runner, on opbench's isolated path.

    opbench run-bench --bench-file bench_rmsnorm.py --operator-file rmsnorm.py [--bench-mode MODE]
                      [--output PATH] [--baseline-operator-file opt_rmsnorm.py] [-m auto|kernel|total-op|all]
                      [--npu-devices LIST] [--skip-error]

The cases run in a worker in the bench mode the runner owns (bench_time in harness/benchmod/run.py).
What the workflow's tooling reads:
- the perf file (default `<operator dir>/<operator stem>_perf.txt`), one line per case and a summary;
- a JSONL artifact beside it (`..._perf.jsonl`), one object per case in declared order: `case_label`,
  `kernel_names`, `kernel_source` (where each name came from: header, operator file, both),
  `kernel_avg_time_us` (profiler modes), `ops` [{op_type, avg_time_us}], `total_op_avg_time_us`,
  `error_message`, `case_wall_clock_seconds`, `bench_mode`; written even when cases fail;
- stdout `Perf file: <absolute path>`; with a baseline operator, a line per case, the average
  improvement, the geometric-mean speedup, the metric used, and PASS or FAIL;
- the full opbench report (JSON/JSONL) under --out.

Times are means over the case's `repeats` (the workflow reports the mean); the opbench report keeps
the median and every raw sample. Exit codes: 0 every case ran, 1 a case failed (FAIL), 2 bad usage.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import InputError
from harness.results.report import Report, atomic_write
from harness.results.trace import Status, Trace
from harness.spec.benchmodule import MODES, PROFILER_MODES
from harness.spec.model import BenchConfig

METRICS = ("auto", "kernel", "total-op", "all")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bench-file", type=Path, required=True, help="the bench module (bench_<op>.py)")
    p.add_argument("--operator-file", type=Path, required=True, help="the operator file it times")
    p.add_argument("--bench-mode", default="events", choices=MODES)
    p.add_argument("--output", type=Path, help="perf file (default: <operator dir>/<operator stem>_perf.txt)")
    p.add_argument("--baseline-operator-file", type=Path, help="time this operator with the same bench module too, "
                   "and compare")
    p.add_argument("-m", "--metric", default="auto", choices=METRICS,
                   help="kernel: the named kernels (profiler modes); total-op: all device work of a call; "
                        "auto: kernel in profiler modes, else total-op")
    p.add_argument("--npu-devices", help="device indices (e.g. 0 or 0,1); the first is used")
    p.add_argument("--skip-error", action="store_true", help="run the cases after a failed one (default: stop)")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda", "npu"])
    p.add_argument("--device-index", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("out"), help="folder for the full opbench report")
    p.add_argument("--quiet", action="store_true")
    from harness.spec.knobs import add_knob_options
    add_knob_options(p)


@dataclass(frozen=True)
class CaseRecord:
    """One case as the workflow's tooling reads it (the JSONL artifact's line)."""

    case_label: str
    kernel_names: list[str]
    kernel_source: dict[str, str]
    kernel_avg_time_us: float | None
    ops: list[dict[str, Any]]
    total_op_avg_time_us: float | None
    error_message: str
    case_wall_clock_seconds: float | None
    bench_mode: str

    @property
    def ok(self) -> bool:
        return not self.error_message

    def metric(self, name: str) -> float | None:
        return self.kernel_avg_time_us if name == "kernel" else self.total_op_avg_time_us


def record(t: Trace, mode: str) -> CaseRecord:
    att = (t.correctness or {}).get("attribution") or {}
    sources = dict(att.get("kernel_source") or {})
    ok = t.status == Status.PASSED and t.timing is not None
    mean_us = t.timing.mean_ms * 1e3 if ok and t.timing is not None else None
    named = mode in PROFILER_MODES and not att.get("total_op_only")  # -m total-op alone: no kernel was named
    ops = sorted(({"op_type": k, "avg_time_us": v} for k, v in (att.get("ops_us") or {}).items()),
                 key=lambda o: -o["avg_time_us"])
    return CaseRecord(case_label=t.workload, kernel_names=list(sources), kernel_source=sources,
                      kernel_avg_time_us=mean_us if ok and named else None, ops=ops,
                      total_op_avg_time_us=att.get("total_op_us") if ok else None,
                      error_message="" if ok else f"{t.status}: {t.message}".strip(),
                      case_wall_clock_seconds=t.timing.wall_s if t.timing is not None else None, bench_mode=mode)


def metric_of(requested: str, mode: str) -> list[str]:
    if requested == "all":
        return ["kernel", "total-op"] if mode in PROFILER_MODES else ["total-op"]
    if requested == "auto":
        return ["kernel" if mode in PROFILER_MODES else "total-op"]
    if requested == "kernel" and mode not in PROFILER_MODES:
        raise InputError(f"-m kernel needs a profiler mode ({', '.join(PROFILER_MODES)}); {mode} times the whole call")
    return [requested]


def _us(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f} us"


def perf_lines(records: list[CaseRecord], metrics: list[str]) -> list[str]:
    lines = []
    for r in records:
        if not r.ok:
            lines.append(f"case {r.case_label}: ERROR {r.error_message.splitlines()[0] if r.error_message else ''}")
            continue
        values = ", ".join(f"{m} {_us(r.metric(m))}" for m in metrics)
        lines.append(f"case {r.case_label}: {values}; kernels {', '.join(r.kernel_names) or '-'}; mode {r.bench_mode}")
    ok = [r for r in records if r.ok]
    for m in metrics:
        total = sum(r.metric(m) or 0.0 for r in ok)
        lines.append(f"total {m} time over {len(ok)} case(s): {total:.3f} us")
    return lines


def comparison(base: list[CaseRecord], cand: list[CaseRecord], metric: str) -> tuple[list[str], bool]:
    """Per-case lines, the average improvement, the geometric-mean speedup and PASS/FAIL (every case
    ran in both)."""
    by_label = {r.case_label: r for r in base}
    lines, speedups, gains, ok = [], [], [], True
    for c in cand:
        b = by_label.get(c.case_label)
        bv, cv = (b.metric(metric) if b else None), c.metric(metric)
        if b is None or not b.ok or not c.ok or not bv or not cv:
            ok = False
            lines.append(f"case {c.case_label}: cannot compare ({(b.error_message if b else 'no baseline case') or c.error_message})")
            continue
        speedups.append(bv / cv)
        gains.append((bv - cv) / bv * 100)
        lines.append(f"case {c.case_label}: baseline {bv:.3f} us -> candidate {cv:.3f} us, speedup {bv / cv:.3f}x, "
                     f"improvement {(bv - cv) / bv * 100:+.2f}%")
    if speedups:
        lines.append(f"average improvement: {sum(gains) / len(gains):+.2f}%")
        lines.append(f"geomean speedup: {math.exp(sum(math.log(s) for s in speedups) / len(speedups)):.4f}x")
    lines.append(f"metric source: {metric}")
    lines.append("PASS" if ok and speedups else "FAIL")
    return lines, ok and bool(speedups)


def check_contract(bench: Path, operator: Path) -> None:
    """The lint (spec/benchlint.py): errors are bad input (exit 2, all of them), warnings are said."""
    from harness.execute.benchmodule import BenchModuleError, parse_header
    from harness.spec.benchlint import lint
    if not bench.is_file() or not operator.is_file():
        return  # loading says so
    header = parse_header(bench.read_text(), str(bench))
    findings = lint(bench, operator, header.api_kind)
    for f in findings:
        if f.level == "warning":
            print(f, file=sys.stderr)
    errors = [str(f) for f in findings if f.level == "error"]
    if errors:
        raise BenchModuleError(str(bench), errors)


def _run(args: argparse.Namespace, operator: Path, kind: str, total_op: bool,
         say: Any, role: str = "") -> tuple[Report, list[CaseRecord]]:
    """One operator's cases; `role` ("-baseline") keeps the baseline's report and profiler files apart
    from the candidate's when both operator files share a stem (opt/rmsnorm.py against rmsnorm.py)."""
    from harness.benchmod.run import run_bench_module
    from harness.spec.benchmodule import BenchModuleSpec
    from harness.spec.knobs import apply_overrides, knob_overrides
    spec = BenchModuleSpec(path=args.bench_file.resolve(), name=None, operator=operator.resolve(),
                           bench=args.bench_file.resolve(), mode=args.bench_mode, devices=("cpu", "cuda", "npu"),
                           config=apply_overrides(BenchConfig(), knob_overrides(args)),
                           total_op=total_op)
    folder = args.out / f"{operator.stem}{role}"
    report = run_bench_module(spec, kind, args.device_index, folder, (), None, say,
                              stop_on_error=not args.skip_error)
    report.write(folder, f"{operator.stem}-{kind}-{args.bench_mode}{role}")
    return report, [record(t, args.bench_mode) for t in report.traces]


def cmd_run_bench(args: argparse.Namespace) -> int:
    from harness.errors import require_torch
    require_torch("opbench run-bench")
    from harness.run.runner import resolve_device
    for f in (args.bench_file, args.operator_file, args.baseline_operator_file):
        if f is not None and not f.is_file():
            raise InputError(f"no such file: {f}")
    metrics = metric_of(args.metric, args.bench_mode)
    total_op = metrics == ["total-op"]  # the total-op metric alone: profiler modes need no kernel names
    for operator in filter(None, (args.operator_file, args.baseline_operator_file)):
        check_contract(args.bench_file, operator)
    if args.npu_devices:
        try:
            args.device_index = int(args.npu_devices.split(",")[0])
        except ValueError:
            raise InputError(f"--npu-devices: expected indices like 0 or 0,1, got {args.npu_devices!r}") from None
    kind = resolve_device(args.device)
    say = (lambda msg: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr))
    output = (args.output or args.operator_file.with_name(f"{args.operator_file.stem}_perf.txt")).resolve()
    artifact = output.with_suffix(".jsonl")
    report, records = _run(args, args.operator_file, kind, total_op, say)
    lines = perf_lines(records, metrics)
    ok = all(r.ok for r in records) and bool(records)
    if args.baseline_operator_file is not None:
        _, base = _run(args, args.baseline_operator_file, kind, total_op, say, "-baseline")
        compared, ok = comparison(base, records, metrics[0])
        lines += ["", f"baseline: {args.baseline_operator_file}", *compared]
    atomic_write(artifact, "".join(json.dumps(r.__dict__) + "\n" for r in records))
    atomic_write(output, "\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"Perf file: {output}")
    print(f"Perf artifact: {artifact}")
    return 0 if ok else 1
