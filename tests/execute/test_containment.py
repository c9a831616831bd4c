"""A solution's processes stay in its box: frozen while the other side is timed, killed with it, and
nothing it started (even a double fork out of its session) outlives the run (real workers, CPU)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from factories import axpy_document, solution
from harness.execute import containment
from harness.execute.containment import descendants, kill_strays, session_members
from harness.measure.devices.cpu import CpuDevice
from harness.results.trace import Status
from harness.run.runner import Runner, RunOptions
from harness.spec.manifest import load_manifest

# Big enough that a call takes measurable time on a slow machine; a generous stopping rule.
BENCH = {"run_timeout_s": 120, "max_time_s": 2, "min_samples": 20, "correctness_rounds": 1}


def _report(tmp: Path, sols: list[dict], **bench: object):
    path = tmp / "axpy.yaml"
    path.write_text(yaml.safe_dump(axpy_document(sols, {**BENCH, **bench}, n=1 << 18), sort_keys=False))
    return Runner(load_manifest(path), RunOptions(device="cpu", run_seed=7, log_dir=tmp / "logs")).run()


def _run(tmp: Path, sols: list[dict], **bench: object) -> dict:
    return {t.solution: t for t in _report(tmp, sols, **bench).traces}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_slower_solution_is_never_reported_faster(tmp_path: Path) -> None:
    """The order, not a time: 8x the reference's work must come out slower than the reference. On a
    16-core host it came out 6-15x faster while idle OpenMP threads spun (`spawn.WORKER_ENV`)."""
    report = _report(tmp_path, [solution("slow", "slow.py")])
    t = report.traces[0]
    assert t.status == Status.PASSED, t.message
    assert t.speedup < 1.0, f"a solution doing 8x the work reported {t.speedup:.2f}x"
    device = report.environment["device"]
    assert device["omp_wait_policy"] == os.environ.get("OMP_WAIT_POLICY", "PASSIVE")
    assert device["resume_ms"] > 0
    assert device["malloc"].startswith("heap kept")


def test_an_idle_workers_burners_are_frozen_while_the_reference_is_timed(tmp_path: Path) -> None:
    """Two CPU burners started by the solution would slow the reference down 2-3x on a 2-core
    machine; frozen with their worker's session while the reference is timed, they cannot."""
    t = _run(tmp_path, [solution("burner", "cpu_burner.py")])["burner"]
    assert t.status == Status.PASSED, t.message
    assert t.speedup < 1.8, f"burners in the solution's session inflated its speedup to {t.speedup:.2f}x"


def test_a_process_that_escaped_its_session_does_not_outlive_the_run(tmp_path: Path) -> None:
    t = _run(tmp_path, [solution("escapee", "escapee.py")])["escapee"]
    assert t.status == Status.PASSED, t.message
    pid = int((tmp_path / "logs" / "escapee.log").read_text().split("ESCAPEE ")[1].split()[0])
    assert not _alive(pid), f"the escaped process {pid} is still running after the run"
    assert not session_members(pid)


def test_kill_strays_spares_what_was_there_before(tmp_path: Path) -> None:
    import subprocess
    import sys
    before = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        spared = descendants(os.getpid())
        stray = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        killed = kill_strays(keep=spared)
        assert stray.pid in killed and before.pid not in killed
        deadline = time.monotonic() + 5
        while _alive(stray.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(stray.pid) and _alive(before.pid)
    finally:
        before.kill()
        before.wait()


def test_kill_strays_never_takes_a_child_a_kept_process_starts_during_the_sweep(tmp_path: Path) -> None:
    """A build in flight (ninja starting nvcc's stages) is kept through the sweeps after each solution:
    a child it starts between the sweep's scans of /proc is its own, not a stray (the H100's cold make
    bench lost a build to this: "ninja exited with status 137")."""
    import subprocess
    import sys
    record = tmp_path / "killed"
    build = subprocess.Popen([sys.executable, "-c", f"""
import subprocess, time
end, killed = time.monotonic() + 2, 0
while time.monotonic() < end:
    killed += subprocess.run(['/bin/true']).returncode < 0
open({str(record)!r}, 'w').write(str(killed))
"""])
    try:
        sweeps = 0
        while build.poll() is None:
            assert build.pid not in kill_strays(keep={build.pid})
            sweeps += 1
        assert build.returncode == 0 and record.read_text() == "0", (sweeps, record.read_text())
    finally:
        build.kill()
        build.wait()


def test_kill_strays_spares_what_a_kept_worker_orphaned_in_its_own_session() -> None:
    """A kept worker leads its own session; a process it started whose parent then exited comes back to
    this subreaper, still in that session, and is the kept worker's, not a stray."""
    import subprocess
    import sys
    from harness.execute.containment import PR_SET_CHILD_SUBREAPER, _prctl
    assert _prctl(PR_SET_CHILD_SUBREAPER, 1)  # as the run's parent is (`guard_parent`)
    kept = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time\n"
                             "subprocess.Popen(['/bin/sh', '-c', 'sleep 30 & echo $!'], stdout=sys.stdout).wait()\n"
                             "time.sleep(30)"], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        orphan = int(kept.stdout.readline())
        deadline = time.monotonic() + 5
        while orphan not in descendants(os.getpid()) - descendants(kept.pid) and time.monotonic() < deadline:
            time.sleep(0.05)  # until the shell has exited and the sleep is re-parented here
        assert orphan in descendants(os.getpid()) and orphan not in descendants(kept.pid)
        assert orphan not in kill_strays(keep={kept.pid}) and _alive(orphan)
    finally:
        os.killpg(kept.pid, 9)
        kept.wait()


def test_a_timer_scaled_in_the_workers_process_is_caught(tmp_path: Path) -> None:
    """The solution scales its own timer by 1/3: the device's event class is on the watched timing
    path, so the worker reports it at import."""
    t = _run(tmp_path, [solution("forged", "forged_clock.py")])["forged"]
    assert t.status == Status.TAMPERED and "CpuEvent.elapsed_ms" in t.message, (t.status, t.message)


def test_a_worker_that_skips_the_hidden_work_check_where_calls_queue_work_is_caught(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The parent, not the worker, says which devices may skip the check. Here the parent holds that the
    CPU queues work, as CUDA does, while the worker skips it: what a solution that cleared
    `CudaDevice.queues_work` in its own process would make a CUDA worker do."""
    monkeypatch.setattr(CpuDevice, "queues_work", True)
    t = _run(tmp_path, [solution("good", "good.py")])["good"]
    assert t.status == Status.TAMPERED and "skipped the hidden-work check" in t.message, (t.status, t.message)


def test_the_cheats_manifest_gets_every_expected_status_and_leaves_nothing_behind(tmp_path: Path) -> None:
    """manifests/cheats.yaml through the CLI on the CPU: exit 0 means every adversarial solution got
    the status it names; no process of the run survives it and no file outside --out changed."""
    import subprocess
    import sys
    from factories import ROOT
    def files() -> dict[Path, int]:  # files only: a first import here may add a __pycache__ folder (parent's own)
        return {p: p.stat().st_mtime_ns for d in ("harness", "manifests", "tests/solutions")
                for p in (ROOT / d).rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    tree = files()
    before = descendants(os.getpid())
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "cheats.yaml", "--device", "cpu", "--quiet",
                           "--out", str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # The harness's multiprocessing resource tracker leaves by itself once the harness has exited (it is
    # re-parented here: this process is a subreaper since a runner ran in it); zombies only wait for a reap.
    for _ in range(100):
        left = {pid: Path(f"/proc/{pid}/cmdline").read_bytes()[:300] for pid in descendants(os.getpid()) - before
                if _alive(pid)}
        if not left:
            break
        time.sleep(0.1)
    assert not left
    escaped = int((tmp_path / "out" / "logs" / "escapee.log").read_text().split("ESCAPEE ")[1].split()[0])
    assert not _alive(escaped)
    assert files() == tree
    # destination buffers are refilled with NaN before every call the harness makes: no early exit
    assert "EARLY EXIT" not in (tmp_path / "out" / "logs" / "dps-early-exit.log").read_text()


def test_a_frozen_worker_is_stopped_when_the_block_begins() -> None:
    """SIGSTOP is taken when the process next runs: right after a thaw, or waiting for a core, a worker read
    R at the block's start (a build seen running at a timed call on the 2-core CI machine)."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
    try:
        time.sleep(0.3)
        for _ in range(300):
            with containment.stopped(proc.pid):
                state = containment._stat(proc.pid)
                assert state is not None and state[0] == "T", state
    finally:
        proc.kill()
        proc.wait()
