"""A workload too large for the device or the host is an OUT_OF_MEMORY row and the run goes on: said
from the declared sizes before anything is allocated, or from the reference running out of memory,
never a failure charged to the manifest (real workers, CPU)."""
from __future__ import annotations

from pathlib import Path

import yaml

from factories import axpy_document, solution
from harness.results.trace import Status, Trace
from harness.run.runner import Runner, RunOptions, host_available_bytes, too_large, unsupported_hint
from harness.spec.manifest import load_manifest

GIB = 1024 ** 3
BENCH = {"max_time_s": 0.5, "correctness_rounds": 1, "run_timeout_s": 120}


def _traces(tmp: Path, doc: dict, said: list[str] | None = None) -> dict[str, Trace]:
    path = tmp / "axpy.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    report = Runner(load_manifest(path), RunOptions(device="cpu", run_seed=3, log_dir=tmp / "logs"),
                    progress=(said.append if said is not None else None)).run()
    return {t.workload: t for t in report.traces}


def test_the_declared_sizes_decide_before_anything_is_allocated() -> None:
    assert too_large("cuda", 100 * GIB, 50 * GIB, 139 * GIB, 500 * GIB).startswith("workload too large for the device")
    assert too_large("cuda", 10 * GIB, 5 * GIB, 139 * GIB, 500 * GIB) is None
    assert too_large("cuda", 10 * GIB, 5 * GIB, 139 * GIB, 12 * GIB).startswith("workload too large for this host")
    assert too_large("cpu", 10 * GIB, 5 * GIB, None, 24 * GIB).startswith("workload too large for this host")
    assert too_large("cpu", 1 * GIB, 0.5 * GIB, None, 24 * GIB) is None
    assert too_large("npu", 1 * GIB, 0.5 * GIB, None, None) is None  # nothing known: let it try
    # the CPU's pooled redraws (inputs.pool_bytes) count in both workers
    assert too_large("cpu", 2 * GIB, 1 * GIB, None, 24 * GIB, input_sets=3) is None
    assert too_large("cpu", 2 * GIB, 1 * GIB, None, 24 * GIB, input_sets=3, pools=7 * GIB).startswith(
        "workload too large for this host")
    # outputs handed over in device memory: the parent's copies move from the host to the device
    assert too_large("cuda", 10 * GIB, 5 * GIB, 139 * GIB, 12 * GIB, outputs_on_device=True) is None
    assert too_large("cuda", 60 * GIB, 30 * GIB, 139 * GIB, 500 * GIB, outputs_on_device=True).startswith(
        "workload too large for the device")
    assert too_large("cuda", 60 * GIB, 30 * GIB, 139 * GIB, 500 * GIB) is None
    # timed: both workers hold every input set (and the kept outputs) at once
    assert too_large("cuda", 30 * GIB, 10 * GIB, 139 * GIB, 500 * GIB, input_sets=3, kept=4).startswith(
        "workload too large for the device")
    assert too_large("cuda", 10 * GIB, 5 * GIB, 139 * GIB, 500 * GIB, input_sets=3, kept=4) is None


def test_host_memory_is_read_from_meminfo(tmp_path: Path) -> None:
    (tmp_path / "meminfo").write_text("MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n")
    assert host_available_bytes(tmp_path / "meminfo") == 20000000 * 1024
    assert host_available_bytes(tmp_path / "missing") is None


def test_a_workload_too_large_for_the_host_is_out_of_memory_and_the_run_goes_on(tmp_path: Path) -> None:
    doc = axpy_document([solution("good", "good.py")], BENCH, n=1 << 40)  # 4 TiB per tensor
    doc["workloads"].append({"id": "small", "axes": {"n": 1024}})
    said: list[str] = []
    got = _traces(tmp_path, doc, said)
    builds = [m for m in said if "(buil" in m]  # the progress says when a worker is being built, and how long it took
    assert len(builds) == 2 and builds[1].startswith("good :: n4096 (built in "), said
    assert got["n4096"].status == Status.OUT_OF_MEMORY and "too large for this host" in got["n4096"].message
    assert got["small"].status == Status.PASSED, got["small"].message
    # the solution's worker was not to blame, so it was kept: the next row needed no new build
    assert "build" in got["n4096"].cost_s and "build" not in got["small"].cost_s, (got["n4096"].cost_s, got["small"].cost_s)
    assert {"correctness", "timing_start", "sampling", "timing_end", "total"} <= set(got["small"].cost_s)


def test_a_reference_out_of_memory_is_the_workloads_size_not_a_broken_reference(tmp_path: Path) -> None:
    doc = axpy_document([solution("good", "good.py"), solution("again", "good.py")], BENCH, n=4096)
    doc["definition"]["reference"] = ("import torch\n\ndef run(x, w):\n    if x.numel() > 2000:\n"
                                      "        torch.empty(1 << 50)  # 4 PiB of temporaries\n    return x * w + 1.0\n")
    doc["workloads"].append({"id": "small", "axes": {"n": 1024}})
    path = tmp_path / "axpy.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    report = Runner(load_manifest(path), RunOptions(device="cpu", run_seed=3, log_dir=tmp_path / "logs")).run()
    rows = {(t.solution, t.workload): t for t in report.traces}
    for sol in ("good", "again"):  # every solution's row says so: nothing is remembered against the next
        assert rows[(sol, "n4096")].status == Status.OUT_OF_MEMORY, rows[(sol, "n4096")].message
        assert "reference ran out of memory" in rows[(sol, "n4096")].message
        assert rows[(sol, "small")].status == Status.PASSED


def test_reference_outputs_beyond_the_cache_budget_are_recomputed_not_kept(tmp_path: Path) -> None:
    """Two solutions over three workloads with room for one workload's outputs: every row still
    compares against the right reference outputs, and the parent holds no more than the budget."""
    doc = axpy_document([solution("good", "good.py"), solution("wrong", "wrong.py")], BENCH, n=4096)
    doc["workloads"] += [{"id": "n2048", "axes": {"n": 2048}}, {"id": "n1024", "axes": {"n": 1024}}]
    path = tmp_path / "axpy.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    runner = Runner(load_manifest(path), RunOptions(device="cpu", run_seed=3, log_dir=tmp_path / "logs",
                                                    expected_cache_bytes=4096 * 4))
    report = runner.run()
    got = {(t.solution, t.workload): t.status for t in report.traces}
    assert all(got[("good", w)] == Status.PASSED for w in ("n4096", "n2048", "n1024")), got
    assert all(got[("wrong", w)] == Status.INCORRECT_NUMERICAL for w in ("n4096", "n2048", "n1024")), got
    assert [workload for workload, _seed in runner.expected] == ["n4096"]  # the first fits; the rest did not


def test_a_reference_the_device_cannot_run_gets_a_hint() -> None:
    """SOL-ExecBench's NVFP4 references on an H100: cuBLASLt says CUBLAS_STATUS_NOT_SUPPORTED."""
    assert "Blackwell" in unsupported_hint("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasLtMatmul`")
    assert unsupported_hint("RuntimeError: shapes cannot be multiplied") == ""
    assert unsupported_hint("cuDNN error: CUDNN_STATUS_NOT_SUPPORTED") == ""  # mostly a shape or a layout
