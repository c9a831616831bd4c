"""torch_npu.profiler output: find and parse `kernel_details.csv` (or, without it, `op_statistic.csv`).

torch_npu writes `<dir>/<host>_<pid>_<ts>_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv`, one
row per device task, with columns including `Name`, `Type`, `Accelerator Core`, `Start Time(us)` and
`Duration(us)` (and `Step Id` when a schedule is used). The file exists only at profiler Level0 or
higher; at Level_none there is none, which is reported as such. `op_statistic.csv` (columns
`OP Type`, `Count`, `Total Time(us)`, ...) holds only totals per op type: used when kernel_details.csv
is missing, it gives the mean per call and no distribution, and the result says so.
"""
from __future__ import annotations

from pathlib import Path

from harness.measure.profilers.attribution import AttributionError, KernelRecord
from harness.measure.profilers.csvutil import kernel_records

NAME, DURATION, START, TYPE, CORE = "Name", "Duration(us)", "Start Time(us)", "Type", "Accelerator Core"


def find_kernel_details(root: Path) -> Path:
    """The one kernel_details.csv under `root` (one profiled process per run)."""
    hits = sorted(Path(root).glob("**/ASCEND_PROFILER_OUTPUT/kernel_details.csv"))
    if not hits:
        dirs = sorted(p.name for p in Path(root).glob("*_ascend_pt"))
        why = (f"profiler output {', '.join(dirs)} has no ASCEND_PROFILER_OUTPUT/kernel_details.csv "
               "(profiler_level must be Level0 or higher, and the profile must have been parsed)") if dirs else \
              "no *_ascend_pt folder: torch_npu.profiler wrote nothing (was on_trace_ready set?)"
        raise AttributionError(f"{root}: {why}")
    if len(hits) > 1:
        raise AttributionError(f"{root}: {len(hits)} kernel_details.csv files (several profiled processes); expected one")
    return hits[0]


def parse_kernel_details(path: Path) -> list[KernelRecord]:
    return kernel_records(path, NAME, DURATION, START, TYPE, CORE)


def find_op_statistic(root: Path) -> Path | None:
    hits = sorted(Path(root).glob("**/ASCEND_PROFILER_OUTPUT/op_statistic.csv"))
    return hits[0] if len(hits) == 1 else None


def parse_op_statistic(path: Path) -> list[tuple[str, int, float]]:
    """(op type, count, total us) per row."""
    from harness.measure.profilers.csvutil import number, read_rows
    out = []
    for row in read_rows(path, ("OP Type", "Count", "Total Time(us)")):
        total, count = number(row["Total Time(us)"]), number(row["Count"])
        if total is not None and count is not None:
            out.append((row["OP Type"], int(count), total))
    return out
