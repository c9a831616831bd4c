"""torch_npu.profiler output: locating and parsing kernel_details.csv (documented format, fixture files)."""
from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from factories import FIXTURES

from harness.measure.profilers import AttributionError, attribute
from harness.measure.profilers.kernel_details import find_kernel_details, parse_kernel_details

FIX = FIXTURES / "torch_npu_profiler"


def test_finds_the_file_under_the_ascend_pt_folder() -> None:
    path = find_kernel_details(FIX)
    assert path.parent.name == "ASCEND_PROFILER_OUTPUT" and path.parent.parent.name.endswith("_ascend_pt")


def test_parses_rows_with_tab_suffixed_timestamps() -> None:
    rows = parse_kernel_details(find_kernel_details(FIX))
    assert len(rows) == 15 * 2 + 1  # flush + kernel per call, one copy
    first = rows[1]
    assert first.name == "rmsnorm_kernel" and first.duration_us == 95.0
    assert first.core == "AI_VECTOR_CORE" and first.start_us == pytest.approx(1764673200000200.0)


def test_attributes_like_do_bench_npu() -> None:
    """5 warmup calls dropped, 10 active: mean of the named kernel only (flushes and copies left out)."""
    att = attribute(parse_kernel_details(find_kernel_details(FIX)), ["rmsnorm"], calls=15, skip=5)
    assert att.per_call == 1 and att.kernels == {"rmsnorm_kernel": 10}
    assert statistics.fmean(att.samples_ms) == pytest.approx(0.02045)
    assert att.unmatched == {"aclnnInplaceZero_ZerosLikeAiCore_ZerosLike": 15, "MemcpyAsync": 1}


def test_wrong_kernel_name_fails_with_what_was_seen() -> None:
    with pytest.raises(AttributionError, match=r"no kernel named softmax.*rmsnorm_kernel x15"):
        attribute(parse_kernel_details(find_kernel_details(FIX)), ["softmax"], calls=15, skip=5)


def test_no_profiler_output(tmp_path: Path) -> None:
    with pytest.raises(AttributionError, match="no \\*_ascend_pt folder"):
        find_kernel_details(tmp_path)
    (tmp_path / "h_1_2_ascend_pt" / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    with pytest.raises(AttributionError, match="Level0"):
        find_kernel_details(tmp_path)


def test_several_processes_are_refused(tmp_path: Path) -> None:
    for pid in (1, 2):
        d = tmp_path / f"h_{pid}_3_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
        d.mkdir(parents=True)
        (d / "kernel_details.csv").write_text("Name,Duration(us)\n")
    with pytest.raises(AttributionError, match="2 kernel_details.csv"):
        find_kernel_details(tmp_path)


def test_missing_columns_are_named(tmp_path: Path) -> None:
    bad = tmp_path / "kernel_details.csv"
    bad.write_text("Name,Type\nk,k\n")
    with pytest.raises(ValueError, match=r"Duration\(us\)"):
        parse_kernel_details(bad)


def test_without_kernel_details_the_op_statistic_totals_give_the_mean_per_call() -> None:
    from harness.measure.profilers.attribution import attribute_totals
    from harness.measure.profilers.kernel_details import find_op_statistic, parse_op_statistic
    root = FIXTURES / "torch_npu_profiler_level_none"
    with pytest.raises(AttributionError, match="no ASCEND_PROFILER_OUTPUT/kernel_details.csv"):
        find_kernel_details(root)
    path = find_op_statistic(root)
    assert path is not None
    att = attribute_totals(parse_op_statistic(path), ["rmsnorm"], calls=10, source=str(path), required=["rmsnorm"])
    assert att.samples_ms == [pytest.approx(20.45e-3)] and att.per_call == 1  # the 10 active calls' mean
    assert att.unmatched == {"ZerosLike": 10, "MEMCPY_ASYNC": 1} and att.total_op_us == pytest.approx(20.45 + 180 + 0.32)
    with pytest.raises(AttributionError, match="rmsnorm_bwd named in the header never ran"):
        attribute_totals(parse_op_statistic(path), ["rmsnorm", "rmsnorm_bwd"], 10, str(path), ["rmsnorm", "rmsnorm_bwd"])
