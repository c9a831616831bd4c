"""CANN msprof output: command lines, and parsers for its per-task CSVs.

- `msprof --output=DIR <app>` writes `DIR/PROF_*/mindstudio_profiler_output/op_summary_*.csv`
  (older CANN: `PROF_*/device_*/summary/op_summary_*.csv`), one row per task, with `Op Name`,
  `OP Type`, `Task Type`, `Task Start Time(us)` and `Task Duration(us)`.
- `msprof op --kernel-name=PREFIX --output=DIR <app>` writes `DIR/OPPROF_*/OpBasicInfo.csv`, one
  row per profiled launch, with `Op Name`, `Op Type`, `Task Duration(us)`, `Block Dim`, frequencies.

Only one profiling task may run per device, and ASCEND_RT_VISIBLE_DEVICES is documented as not
supported with profiling, so the harness selects the device with `torch.npu.set_device` instead.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from harness.measure.profilers.attribution import AttributionError, KernelRecord
from harness.measure.profilers.csvutil import kernel_records

OP_NAME, OP_TYPE, TASK_TYPE, START, DURATION = "Op Name", "OP Type", "Task Type", "Task Start Time(us)", "Task Duration(us)"


def msprof_command(output: Path, app: Sequence[str]) -> list[str]:
    """Whole-application task profiling; the app runs warmup + repeats calls of one case."""
    return ["msprof", f"--output={output}", *app]


def find_op_summaries(root: Path) -> list[Path]:
    root = Path(root)
    hits = sorted(root.glob("**/mindstudio_profiler_output/op_summary_*.csv"))
    return hits or sorted(root.glob("**/summary/op_summary_*.csv"))


def find_op_basic_info(root: Path) -> list[Path]:
    return sorted(Path(root).glob("**/OPPROF_*/OpBasicInfo.csv"))


def parse_op_summary(path: Path) -> list[KernelRecord]:
    return kernel_records(path, OP_NAME, DURATION, START, OP_TYPE, TASK_TYPE)


def parse_op_basic_info(path: Path) -> list[KernelRecord]:
    return kernel_records(path, "Op Name", "Task Duration(us)", type_="Op Type")


def load_msprof_records(root: Path) -> tuple[list[KernelRecord], str]:
    """Task records from whichever msprof output is under `root`, and which file they came from."""
    summaries = find_op_summaries(root)
    if len(summaries) > 1:
        raise AttributionError(f"{root}: {len(summaries)} op_summary files (several devices or runs); expected one")
    if summaries:
        return parse_op_summary(summaries[0]), str(summaries[0])
    basic = find_op_basic_info(root)
    if len(basic) == 1:
        return parse_op_basic_info(basic[0]), str(basic[0])
    raise AttributionError(f"{root}: no msprof output (PROF_*/mindstudio_profiler_output/op_summary_*.csv or "
                           f"OPPROF_*/OpBasicInfo.csv); did msprof run and export its summaries?")
