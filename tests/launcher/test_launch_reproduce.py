"""Reading a report back into the run that made it."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.launcher.errors import LaunchError
from harness.launcher.reproduce import bench_flags, recorded

BENCH = {"warmup_ms": 0.0, "warmup_count": 1, "min_samples": 3, "max_samples": 2000, "min_time_ms": 5.0,
         "max_time_s": 0.3, "rse_threshold": 0.5, "chunk": 3, "correctness_rounds": 2, "cache": "warm",
         "cuda_graph": False, "graph_batch": 20, "compile_timeout_s": 300.0, "run_timeout_s": 60.0,
         "suspicious_speedup": 20.0, "fresh_inputs": False}


def report(manifest: str, image: bool = True) -> dict[str, Any]:
    env = {"opbench_image": "opbench-cuda:abc", "opbench_image_digest": "sha256:def"} if image else {}
    return {"format": "opbench-report/1", "manifest": manifest, "device": "cpu", "run_seed": 1234, "bench": BENCH,
            "environment": env, "traces": [{"solution": "a", "workload": "w1"}, {"solution": "a", "workload": "w2"},
                                           {"solution": "b", "workload": "w1"}]}


def test_bench_flags_pin_every_knob() -> None:
    flags = bench_flags(BENCH)
    assert flags[flags.index("--max-time-s") + 1] == "0.3" and flags[flags.index("--rounds") + 1] == "2"
    assert "--warm-cache" in flags and "--no-fresh-inputs" in flags and "--cuda-graph" not in flags
    assert "chunk" not in " ".join(flags)   # manifest-only knob: comes back with the same manifest


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
