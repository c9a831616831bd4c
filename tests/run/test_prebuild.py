"""Compiled solutions build at once while the reference starts, in throwaway workers that are gone
before anything is timed; a failed prebuild is not a verdict. C++ builds need a CUDA device, so the
test counts pytorch as a prebuilt language: its Build (the module's import, which here takes 3 s and
notes when it ran) stands in for a compile."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from factories import axpy_document
from harness.execute import containment, sandbox
from harness.run import prebuild
from harness.run.runner import Runner, RunOptions
from harness.spec.manifest import load_manifest

SLOW_IMPORT = '''import os, time
with open({log!r}, "a") as fh:
    fh.write(f"{{os.getpid()}} {name} start {{time.time()}}\\n")
time.sleep(3)
with open({log!r}, "a") as fh:
    fh.write(f"{{os.getpid()}} {name} end {{time.time()}}\\n")

def run(x, w):
    return x * w + 1.0
'''


def test_solutions_build_at_once_in_workers_gone_before_timing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prebuild, "PREBUILT", ("pytorch",))
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # workers may run as their own uids
    log = shared / "imports.log"
    for name in ("a", "b"):
        (tmp_path / f"{name}.py").write_text(SLOW_IMPORT.format(log=str(log), name=name))
    (tmp_path / "broken.py").write_text("raise ImportError('not today')\n")
    sols = [{"name": n, "language": "pytorch", "entry_point": f"{tmp_path / f'{n}.py'}::run"} for n in ("a", "b")]
    sols.append({"name": "broken", "language": "pytorch", "entry_point": f"{tmp_path / 'broken.py'}::run",
                 "expected_status": "COMPILE_ERROR"})
    sols.append({"name": "gpu", "language": "pytorch", "entry_point": f"{tmp_path / 'a.py'}::run", "devices": ["cuda"]})
    path = tmp_path / "axpy.yaml"
    path.write_text(yaml.safe_dump(axpy_document(sols, {"max_time_s": 0.1}), sort_keys=False))
    before = containment.descendants(os.getpid())  # helpers of earlier tests (multiprocessing's tracker)
    report = Runner(load_manifest(path), RunOptions(device="cpu", log_dir=tmp_path / "logs")).run()

    assert [(t.solution, str(t.status)) for t in report.traces] == [
        ("a", "PASSED"), ("b", "PASSED"), ("broken", "COMPILE_ERROR"), ("gpu", "SKIPPED")]
    built = report.parts[0].environment["prebuild"]
    assert set(built) == {"a", "b", "broken"}  # not the solution this device skips
    assert isinstance(built["a"], float) and built["a"] >= 3 and "COMPILE_ERROR" in str(built["broken"])
    events = [line.split() for line in log.read_text().splitlines()]
    first = {}
    for pid, name, what, when in events:
        first.setdefault((name, what), (int(pid), float(when)))
    assert len(events) == 8  # each module imported twice: by its prebuild and by its real worker
    assert first["b", "start"][1] < first["a", "end"][1] and first["a", "start"][1] < first["b", "end"][1]  # at once
    prebuild_pids = {first["a", "start"][0], first["b", "start"][0]}
    assert not any(os.path.exists(f"/proc/{pid}") for pid in prebuild_pids)
    left = containment.descendants(os.getpid()) - before - containment._own_helpers()  # (the resource tracker)
    assert not left, {pid: Path(f"/proc/{pid}/cmdline").read_bytes()[:200] for pid in left}  # nothing left behind
    assert (tmp_path / "logs" / "a.prebuild.log").is_file()


def test_a_solution_built_by_an_earlier_run_starts_no_prebuild(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm run: the build cache holds the module an earlier run built from the same files and options,
    so no throwaway worker starts to find ninja with nothing to do (11-13 s each on a warm H100 run)."""
    monkeypatch.setattr(prebuild, "PREBUILT", ("pytorch",))
    log = tmp_path / "imports.log"
    for name in ("a", "b"):
        (tmp_path / f"{name}.py").write_text(SLOW_IMPORT.format(log=str(log), name=name).replace("time.sleep(3)", "pass"))
    sols = [{"name": n, "language": "pytorch", "entry_point": f"{tmp_path / f'{n}.py'}::run"} for n in ("a", "b")]
    path = tmp_path / "axpy.yaml"
    path.write_text(yaml.safe_dump(axpy_document(sols, {"max_time_s": 0.1}), sort_keys=False))
    manifest = load_manifest(path)
    runner = Runner(manifest, RunOptions(device="cpu", log_dir=tmp_path / "logs"))
    a = next(s for s in manifest.solutions if s.name == "a")
    module = (runner.policy.cache_root / sandbox.solution_key(a) / sandbox.CPP_BUILDS / "a-0123456789ab" / "opbench_a.so")
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_bytes(b"")
    try:
        report = runner.run()
    finally:
        shutil.rmtree(module.parent)
    assert [(t.solution, str(t.status)) for t in report.traces] == [("a", "PASSED"), ("b", "PASSED")]
    built = report.parts[0].environment["prebuild"]
    assert built["a"] == "cached" and isinstance(built["b"], float)
    starts = [line.split()[1] for line in log.read_text().splitlines() if line.split()[2] == "start"]
    assert sorted(starts) == ["a", "b", "b"]  # a: its real worker only; b: its prebuild and its real worker
