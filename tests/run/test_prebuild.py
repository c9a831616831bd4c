"""Compiled solutions build at once while the reference starts and the solutions that need no build run,
in throwaway workers that are stopped whenever a row is timed and gone before the run ends; a failed
prebuild is not a verdict. C++ builds need a CUDA device, so the
test counts pytorch as a prebuilt language: its Build (the module's import, which here takes 3 s and
notes when it ran) stands in for a compile."""
from __future__ import annotations

import os
import re
import shutil
import time
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


# A compiled solution whose build lasts until the watcher has been called 15 times and a quick one has run (at most
# a minute).
BUILD_UNTIL = '''import os, time
with open({pid!r}, "w") as fh:
    fh.write(str(os.getpid()))
deadline = time.time() + 60
while time.time() < deadline and not (os.path.exists({states!r}) and os.path.getsize({states!r}) >= 15
                                      and os.path.exists({ran!r})):
    time.sleep(0.01)

def run(x, w):
    return x * w + 1.0
'''

# A solution that needs no build: each call notes the build worker's state (T: stopped, X: gone) and nice value,
# the first once the build has begun.
WATCH_BUILD = '''import os, time

def run(x, w):
    deadline = time.time() + 30
    while not os.path.exists({pid!r}) and time.time() < deadline:
        time.sleep(0.01)
    try:
        with open({pid!r}) as fh, open(f"/proc/{{fh.read()}}/stat") as st:
            fields = st.read().rsplit(")", 1)[1].split()
        state, nice = fields[0], fields[16]
    except (OSError, ValueError):
        state, nice = "X", ""
    with open({states!r}, "a") as fh:
        fh.write(state)
    with open({states!r} + ".nice", "a") as fh:
        fh.write(nice + " ")
    return x * w + 1.0
'''


def test_rows_that_need_no_build_run_while_builds_go_on_stopped_when_timed(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold make bench on the H100 waited 31 s for its C++ builds before its first row (2026-12-07): now
    the solutions that need no build run first, beside the builds, then each compiled one once its own build
    is done. On the CPU the builds are stopped while a row is timed."""
    monkeypatch.setattr(prebuild, "PREBUILT", ("pytorch",))
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # workers may run as their own uids
    pid, states = str(shared / "build.pid"), str(shared / "states")
    ran = str(shared / "quick.ran")
    (tmp_path / "slow.py").write_text(BUILD_UNTIL.format(pid=pid, states=states, ran=ran))
    (tmp_path / "watch.py").write_text(WATCH_BUILD.format(pid=pid, states=states))
    (tmp_path / "quick.py").write_text(f"def run(x, w):\n    open({ran!r}, 'w').close()\n    return x * w + 1.0\n")
    sols = [{"name": n, "language": "pytorch", "entry_point": f"{tmp_path / f'{n}.py'}::run"} for n in ("slow", "quick", "watch")]
    path = tmp_path / "axpy.yaml"
    bench = {"max_time_s": 1.0, "min_samples": 30, "chunk": 10}
    path.write_text(yaml.safe_dump(axpy_document(sols, bench), sort_keys=False))
    manifest = load_manifest(path)
    said: list[str] = []
    runner = Runner(manifest, RunOptions(device="cpu", log_dir=tmp_path / "logs"), said.append)
    watch = next(s for s in manifest.solutions if s.name == "watch")
    module = (runner.policy.cache_root / sandbox.solution_key(watch) / sandbox.CPP_BUILDS / "watch-0123456789ab"
              / "opbench_watch.so")  # built by an earlier run: it waits for nothing
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_bytes(b"")
    began = time.monotonic()
    try:
        report = runner.run()
    finally:
        shutil.rmtree(module.parent)

    assert time.monotonic() - began < 50  # the build ended on the others' calls, not on its minute
    assert [(t.solution, str(t.status)) for t in report.traces] == [  # the manifest's order
        ("slow", "PASSED"), ("quick", "PASSED"), ("watch", "PASSED")]
    order = list(dict.fromkeys(m.split(" :: ")[0] for m in said if " :: " in m))
    assert order == ["watch", "quick", "slow"], said  # no build first; then each compiled one once its build is done
    built = report.parts[0].environment["prebuild"]
    assert built["watch"] == "cached" and isinstance(built["slow"], float) and isinstance(built["quick"], float)
    seen = Path(states).read_text()
    # its correctness calls ran beside the build (S: sleeping, R: running), its timed calls with the build
    # stopped (T), until the build ended (X)
    assert re.fullmatch("[SR]+T+X*", seen), seen
    assert set(Path(states + ".nice").read_text().split()) == {str(prebuild.NICE)}  # the lowest CPU priority
    clock = report.parts[0].environment["run_clock_s"]
    assert clock["reference_ready"] <= clock["builds_done"] <= clock["rows_done"]
