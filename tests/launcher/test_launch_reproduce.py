"""Reading a report back into the run that made it."""
from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest

from harness.cli import build_parser, main
from harness.launcher.errors import LaunchError
from harness.launcher.reproduce import recorded
from harness.results.report import Report
from harness.results.trace import Status, Trace
from harness.spec.knobs import knob_overrides
from harness.spec.model import BenchConfig
from launch_workspace import FAST_BENCH

BENCH = {"warmup_ms": 0.0, "warmup_count": 1, "min_samples": 3, "max_samples": 2000, "min_time_ms": 5.0,
         "max_time_s": 0.3, "rse_threshold": 0.5, "chunk": 3, "correctness_rounds": 2, "cache": "warm",
         "cuda_graph": False, "graph_batch": 20, "compile_timeout_s": 300.0, "run_timeout_s": 60.0,
         "suspicious_speedup": 20.0, "fresh_inputs": False, "timer": "events"}


def report(manifest: str, image: bool = True, run_seed: int | None = 1234, bench: Any = BENCH) -> Report:
    env = {"opbench_image": "opbench-cuda:abc", "opbench_image_digest": "sha256:def"} if image else {}
    traces = [Trace(definition="m", workload=w, axes={}, solution=s, language="pytorch", device="cpu",
                    status=Status.SKIPPED) for s, w in (("a", "w1"), ("a", "w2"), ("b", "w1"))]
    return Report.of_problem(definition="m", manifest=manifest, device="cpu", run_seed=run_seed, bench=bench,
                             environment=env, traces=traces)


def test_recorded_pins_every_knob() -> None:
    flags = list(recorded(report("/workspace/m.yaml")).run_args)
    assert flags[flags.index("--max-time-s") + 1] == "0.3" and flags[flags.index("--rounds") + 1] == "2"
    assert flags[flags.index("--chunk") + 1] == "3"   # pinned too, though the same manifest sets it
    assert "--warm-cache" in flags and "--no-fresh-inputs" in flags and "--no-cuda-graph" in flags
    pinned = knob_overrides(build_parser().parse_args(["run", "m.yaml", *flags]))
    assert pinned == BENCH


def test_no_seed_and_cupti_timer_are_reproduced_without_a_crash() -> None:
    """A bench-module report records no seed; its cupti timer must not fall back to events."""
    bench = {**asdict(BenchConfig(timer="cupti")), "mode": "events", "bench_module": "/workspace/bench_op.py"}
    rec = recorded(report("/workspace/m.yaml", run_seed=None, bench=bench))
    args = " ".join(rec.run_args)
    assert rec.run_seed is None and "--seed" not in rec.run_args
    assert "--timer cupti" in args and "--mode events" in args and "bench_op.py" not in args
    assert rec.notes == ("the report recorded no run seed (bench-module runs draw none); re-running without --seed",)


def test_merged_report_with_mixed_seeds_and_bench() -> None:
    one = report("/workspace/m.yaml", run_seed=5)
    other = report("/workspace/m.yaml", run_seed=7, bench={**BENCH, "cache": "cold"})
    rec = recorded(replace(one, parts=one.parts + other.parts))
    assert rec.run_seed is None and rec.run_args[:2] == ("--solution", "a")  # no seed, no knob flags
    assert len(rec.notes) == 2 and "different seeds (5, 7)" in rec.notes[0] and "bench section applies" in rec.notes[1]


def test_reproduce_of_a_report_without_seed_says_so_in_one_line(axpy_manifest: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture) -> None:
    """End to end through `harness reproduce` (a local report, so no engine is needed): no traceback, one
    line about the seed, and the re-run uses the recorded knobs, not the manifest's."""
    bench = asdict(BenchConfig(**{**FAST_BENCH, "max_time_s": 0.25, "chunk": 4}))
    trace = Trace(definition="axpy", workload="n1024", axes={"n": 1024}, solution="torch-axpy", language="pytorch",
                  device="cpu", status=Status.SKIPPED)
    path, _ = Report.of_problem(definition="axpy", manifest=str(axpy_manifest), device="cpu", run_seed=None,
                                bench=bench, environment={}, traces=[trace]).write(tmp_path, "report")
    assert main(["reproduce", str(path), "--out", str(tmp_path / "again")]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if "seed" in line] == [
        "opbench: the report recorded no run seed (bench-module runs draw none); re-running without --seed",
        "opbench: report came from a local run; re-running locally with no seed"]
    (again,) = (tmp_path / "again").glob("*.json")
    assert json.loads(again.read_text())["bench"] == bench


def test_recorded_container_run(tmp_path: Path) -> None:
    rec = recorded(report("/workspace/sub/m.yaml"))
    assert rec.in_container and rec.image_digest == "sha256:def" and rec.run_seed == 1234
    assert rec.run_args[:2] == ("--seed", "1234")
    assert " ".join(rec.run_args).endswith("--solution a --solution b --workload w1 --workload w2")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "m.yaml").write_text("x")
    assert rec.host_manifest(tmp_path) == tmp_path / "sub" / "m.yaml"
    with pytest.raises(LaunchError, match="pass --workspace"):
        rec.host_manifest(tmp_path / "sub")


def test_recorded_local_run(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text("x")
    rec = recorded(report(str(tmp_path / "m.yaml"), image=False))
    assert not rec.in_container and rec.host_manifest(Path("/nowhere")) == tmp_path / "m.yaml"
