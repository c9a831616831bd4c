"""Several devices on one host. With no GPU pair here, two CPU "devices" are faked as two processes:
the same code path (job files, pinned children, progress relay, merge) minus the pinning itself."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.run.multidevice import DeviceJob, child_command, child_env, parse_devices, run_on_devices
from harness.results.merge import merge
from harness.run.progress import NullProgress
from harness.spec.shard import units_of
from harness.run.suite import plan_of, prepare

from opbench_data import load, write_suite

from factories import ROOT


def two(kind: str) -> int:
    return 2


def test_parse_devices() -> None:
    assert parse_devices("all", "cuda", {}, two) == ["0", "1"]
    assert parse_devices("all", "cuda", {"CUDA_VISIBLE_DEVICES": "4,5"}, two) == ["4", "5"]
    assert parse_devices("1", "cuda", {"CUDA_VISIBLE_DEVICES": "4,5"}, two) == ["5"]  # indices as this process sees them
    assert parse_devices("0,1", "npu", {"ASCEND_RT_VISIBLE_DEVICES": "6,7"}, two) == ["6", "7"]
    assert parse_devices("0,1,2", "cpu", {}) == ["0", "1", "2"]  # fake devices: any count
    assert parse_devices("all", "cpu", {}) == ["0"]
    for bad in ("0,0", "2", "-1", "x", ""):
        with pytest.raises(ValueError):
            parse_devices(bad, "cuda", {}, two)


def test_children_are_pinned() -> None:
    assert child_env("cuda", "5", 2, {})["CUDA_VISIBLE_DEVICES"] == "5"
    assert child_env("npu", "3", 2, {})["ASCEND_RT_VISIBLE_DEVICES"] == "3"
    cpu = child_env("cpu", "1", 2, {"PYTHONPATH": "/x"})
    assert "CUDA_VISIBLE_DEVICES" not in cpu and int(cpu["OMP_NUM_THREADS"]) >= 1
    assert cpu["PYTHONPATH"].endswith("/x") and str(ROOT) in cpu["PYTHONPATH"]


def test_two_fake_devices_end_to_end(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", sizes=(64, 128))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "harness", "run", str(suite), "--device", "cpu", "--devices", "0,1",
                           "--out", str(out), "--seed", "3"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "cpu:0" in proc.stderr and "cpu:1" in proc.stderr  # progress relayed from both children
    report = load(out / "suite-tiny-cpu.json")
    keys = [(t["definition"], t["workload"]) for t in report["traces"]]
    assert keys == [("vadd", "n64"), ("vadd", "n128"), ("vmul", "n64"), ("vmul", "n128")]  # suite order, not finish order
    assert {t["status"] for t in report["traces"]} == {"PASSED"}
    assert {p["lane"] for p in report["parts"]} == {"cpu:0", "cpu:1"} and report["run_seed"] == 3
    assert (out / "devices" / "cpu-1" / "report.json").is_file()


def test_a_failing_device_is_reported_and_the_others_go_on(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", sizes=(64,))
    manifests = prepare(suite, {})
    units = units_of(manifests)  # vadd/n64 -> device 0, vmul/n64 -> device 1

    def command(job: DeviceJob) -> list[str]:
        if job.device_id == "1":
            return [sys.executable, "-c", "import sys; print('device lost', file=sys.stderr); sys.exit(3)"]
        return child_command(job)

    reports = run_on_devices(suite, manifests, units, "cpu", ["0", "1"], {"run_seed": 1}, tmp_path / "out",
                             NullProgress(), command=command)
    merged = merge(reports, suite=plan_of("tiny", suite, manifests))
    by_def = {t.definition: t for t in merged.traces}
    assert by_def["vadd"].status == "PASSED"
    assert by_def["vmul"].status == "RUNTIME_ERROR" and "device cpu:1 failed" in by_def["vmul"].message
    failure, = merged.failures
    assert failure.returncode == 3 and "device lost" in failure.message
    assert not merged.summary.ok and merged.summary.failures == 1
