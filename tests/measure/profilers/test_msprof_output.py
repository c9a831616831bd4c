"""msprof output: op_summary (msprof --output) and OpBasicInfo (msprof op), on fixture files."""
from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from factories import FIXTURES

from harness.measure.profilers import AttributionError, attribute
from harness.measure.profilers.msprof import (find_op_summaries, load_msprof_records, msprof_command,
                                      parse_op_basic_info, parse_op_summary)

FIX = FIXTURES


def test_op_summary_is_found_and_parsed() -> None:
    [path] = find_op_summaries(FIX / "msprof")
    assert path.parent.name == "mindstudio_profiler_output" and path.parent.parent.name.startswith("PROF_")
    rows = parse_op_summary(path)
    assert len(rows) == 31
    assert rows[1].name == "rmsnorm_kernel" and rows[1].core == "AI_VECTOR_CORE"
    assert rows[1].start_us == pytest.approx(1764673200000200.0)


def test_op_summary_attribution() -> None:
    records, source = load_msprof_records(FIX / "msprof")
    assert source.endswith(".csv")
    att = attribute(records, ["rmsnorm"], calls=15, skip=5, source=source)
    assert statistics.fmean(att.samples_ms) == pytest.approx(0.02045)
    assert att.kernels == {"rmsnorm_kernel": 10}


def test_older_layout_is_found(tmp_path: Path) -> None:
    d = tmp_path / "PROF_1" / "device_0" / "summary"
    d.mkdir(parents=True)
    (d / "op_summary_0_1.csv").write_text("Op Name,Task Duration(us)\nk,1.5\n")
    assert [r.name for r in load_msprof_records(tmp_path)[0]] == ["k"]


def test_op_basic_info() -> None:
    records, source = load_msprof_records(FIX / "msprof_op")
    assert source.endswith("OpBasicInfo.csv")
    assert [r.duration_us for r in records] == [20.0, 20.1, 20.2]
    assert parse_op_basic_info(Path(source))[0].type == "vector"


def test_nothing_there(tmp_path: Path) -> None:
    with pytest.raises(AttributionError, match="no msprof output"):
        load_msprof_records(tmp_path)


def test_uneven_split_is_refused() -> None:
    """16 launches over 15 calls cannot be assigned to calls: fail rather than average them."""
    records, _ = load_msprof_records(FIX / "msprof")
    with pytest.raises(AttributionError, match="do not split evenly"):
        attribute(records + records[1:2], ["rmsnorm_kernel"], calls=15, skip=5)


def test_command_lines(tmp_path: Path) -> None:
    app = ["python3", "-m", "harness.benchmod.child", "--case", "a"]
    assert msprof_command(tmp_path, app) == ["msprof", f"--output={tmp_path}", *app]
