"""Reading Ascend profiler CSVs: BOM-tolerant, header names trimmed, numbers that carry a trailing tab
(torch_npu and msprof write timestamps as text with '\\t' so spreadsheets keep every digit)."""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Any


def read_rows(path: Path, required: tuple[str, ...]) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        header = [h.strip() for h in (reader.fieldnames or [])]
        missing = [c for c in required if c not in header]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)}; header is {header}")
        return [{(k or "").strip(): (v or "").strip() for k, v in row.items()} for row in reader]


def number(text: str) -> float | None:
    text = text.strip().strip("\t")
    if text in ("", "N/A", "NA", "nan", "-"):
        return None
    return float(text)


def kernel_records(path: Path, name: str, duration: str, start: str = "", type_: str = "", core: str = "") -> list[Any]:
    """KernelRecords from a profiler CSV, given which columns hold what; rows without a duration
    (summary lines) are skipped."""
    from harness.measure.profilers.attribution import KernelRecord
    out = []
    for row in read_rows(path, (name, duration)):
        dur = number(row[duration])
        if dur is None:
            continue
        out.append(KernelRecord(name=row[name], duration_us=dur, start_us=number(row.get(start, "")) if start else None,
                                type=row.get(type_, ""), core=row.get(core, "")))
    return out
