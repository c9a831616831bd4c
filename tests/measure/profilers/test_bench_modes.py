"""Bench modes on the CPU for real (events, torch-profiler); NPU-only modes refuse other devices clearly."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from harness.measure.devices import make_device
from harness.spec.model import BenchConfig
from harness.measure.profilers import AttributionError
from harness.measure.profilers.modes import MODES, CaseRun, ModeError, check_mode, run_mode

from factories import ROOT
FAST = BenchConfig(warmup_ms=0, max_time_s=0.5, rse_threshold=0.5, chunk=5, cache="warm")


@pytest.fixture(scope="module")
def cpu():
    dev = make_device("cpu")
    dev.setup()
    return dev


def _case(kernels: tuple[str, ...], warmup: int = 2, repeats: int = 6) -> CaseRun:
    x = torch.randn(64, 256)
    w = torch.rand(256)
    return CaseRun(lambda: torch.nn.functional.rms_norm(x, (256,), w), kernels, warmup, repeats)


def test_events_uses_the_sampler_and_counts_repeats(cpu, tmp_path: Path) -> None:
    res = run_mode("events", cpu, _case(("aten::rms_norm",)), FAST, tmp_path)
    assert res.stats.n >= 6 and res.stats.median_ms > 0 and res.stats.mode == "events"
    assert res.attributed == "whole call (device events)"


def test_torch_profiler_attributes_named_ops(cpu, tmp_path: Path) -> None:
    res = run_mode("torch-profiler", cpu, _case(("aten::rms_norm",)), FAST, tmp_path)
    assert res.stats.n == 6 and res.stats.median_ms > 0
    assert res.details["kernels"] == {"aten::rms_norm": 6} and res.details["per_call"] == 1
    assert "aten::mul" in res.details["not_counted"]  # what it did not count is listed


def test_torch_profiler_with_cold_cache_leaves_the_flush_out(cpu, tmp_path: Path) -> None:
    cold = BenchConfig(warmup_ms=0, max_time_s=0.5, rse_threshold=0.5, chunk=5, cache="cold")
    res = run_mode("torch-profiler", cpu, _case(("aten::rms_norm",), warmup=1, repeats=3), cold, tmp_path)
    assert res.details["kernels"] == {"aten::rms_norm": 3} and "aten::zero_" in res.details["not_counted"]


def test_torch_profiler_refuses_unknown_kernels(cpu, tmp_path: Path) -> None:
    with pytest.raises(AttributionError, match="no kernel named rmsnorm"):
        run_mode("torch-profiler", cpu, _case(("rmsnorm",)), FAST, tmp_path)


@pytest.mark.parametrize("mode", ["torch-npu-profiler", "msprof"])
def test_npu_modes_refuse_other_devices(mode: str) -> None:
    with pytest.raises(ModeError, match="runs on npu, not cpu"):
        check_mode(mode, "cpu")


def test_unknown_mode() -> None:
    with pytest.raises(ModeError, match="unknown bench mode"):
        check_mode("nsys", "cuda")
    assert set(MODES) == {"events", "torch-profiler", "torch-npu-profiler", "msprof", "perf-counter"}


def test_msprof_child_runs_a_case_on_cpu() -> None:
    """The process msprof would profile re-creates the case from the (staged) files and exits cleanly."""
    folder = ROOT / "manifests" / "bench_rmsnorm_torch"
    proc = subprocess.run([sys.executable, "-m", "harness.benchmod.child", "--operator", str(folder / "rmsnorm_torch.py"),
                           "--bench", str(folder / "bench_rmsnorm_torch.py"), "--case", "b16-h512-fp32",
                           "--device", "cpu", "--cache", "warm"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""


def test_msprof_mode_without_msprof_says_how_to_get_it(cpu, tmp_path: Path, monkeypatch) -> None:
    from harness.measure.profilers.modes import run_msprof
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty PATH: no CANN toolkit here
    with pytest.raises(ModeError, match="msprof is not on PATH .*set_env.sh"):
        run_msprof(cpu, _case(("rmsnorm",)), FAST, tmp_path, 10.0)
