"""Ctrl-C or SIGTERM in the middle of a run: exit 130, a report of what finished, nothing left running
(the real CLI in a subprocess, real workers, CPU)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from factories import ROOT, axpy_document, solution
from harness.execute.containment import descendants

BENCH = {"run_timeout_s": 3600, "correctness_rounds": 1}  # the sleeper hangs until the signal comes


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for(paths: list[Path], proc: subprocess.Popen) -> None:
    """Until every sleeper's log says it is in its first call, so the good solution has finished (a log
    exists earlier: workers start ahead of their turn, run/spares)."""
    deadline = time.monotonic() + 300
    while not all(p.exists() and "sleeping" in p.read_text() for p in paths):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never reached the sleeping solution"
        time.sleep(0.2)


@pytest.mark.parametrize("sig, devices", [(signal.SIGINT, None), (signal.SIGTERM, "0,1")])
def test_an_interrupted_run_writes_what_finished(tmp_path: Path, sig: signal.Signals, devices: str | None) -> None:
    doc = axpy_document([solution("good", "good.py"), solution("sleeper", "sleeper.py")], BENCH)
    doc["workloads"] = [{"id": "a", "axes": {"n": 4096}}, {"id": "b", "axes": {"n": 2048}}]
    path = tmp_path / "axpy.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    out = tmp_path / "out"
    before = descendants(os.getpid())
    cmd = [sys.executable, "-m", "harness", "run", str(path), "--device", "cpu", "--quiet", "--out", str(out)]
    proc = subprocess.Popen(cmd + (["--devices", devices] if devices else []), cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    logs = ([out / "devices" / f"cpu-{d}" / "logs" / "sleeper.log" for d in devices.split(",")] if devices
            else [out / "logs" / "sleeper.log"])
    _wait_for(logs, proc)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stdout[-2000:] + stderr[-2000:]

    report = json.loads((out / "axpy-cpu.json").read_text())
    done = {(t["solution"], t["workload"]): t["status"] for t in report["traces"]}
    # one device ran both workloads of the good solution; two devices each ran one before its sleeper
    assert done == {("good", "a"): "PASSED", ("good", "b"): "PASSED",
                    ("sleeper", "a"): "INTERRUPTED", ("sleeper", "b"): "INTERRUPTED"}  # what never ran says so
    assert not report["summary"]["ok"]
    assert report["summary"]["unexpected"] == []  # rows never run are said once, in the failure, not as UNEXPECTED
    assert any(f["message"].startswith(f"interrupted by {sig.name}") for f in report["failures"])
    assert f"interrupted by {sig.name}" in stderr
    assert "good" in stdout  # the table of what finished was printed
    for _ in range(100):  # workers and device children are gone (zombies only wait for a reap)
        if not any(_alive(pid) for pid in descendants(os.getpid()) - before):
            break
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in descendants(os.getpid()) - before)
    if devices is None:  # --resume keeps what finished and runs the rest (the sleeper fixed meanwhile)
        doc["solutions"][1] = solution("sleeper", "good.py")
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        again = subprocess.run(cmd[:-1] + [str(tmp_path / "resumed"), "--resume", str(out / "axpy-cpu.json")],
                               cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
        resumed = json.loads((tmp_path / "resumed" / "axpy-cpu.json").read_text())
        rows = {(t["solution"], t["workload"]): t for t in resumed["traces"]}
        assert {k: t["status"] for k, t in rows.items()} == {k: "PASSED" for k in done}
        first = {(t["solution"], t["workload"]): t for t in report["traces"]}
        assert rows[("good", "a")]["timing"] == first[("good", "a")]["timing"]  # kept, not re-run


def test_a_shard_cut_by_another_scheme_is_not_resumed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A shard report from an opbench that dealt units round-robin (no `split` recorded) holds another share
    than this shard's: resuming it would run the wrong rows, so it is refused before anything runs."""
    from harness.cli import main
    from harness.results.report import Shards, atomic_write
    from opbench_data import report, trace, write_suite
    suite = write_suite(tmp_path / "suite", sizes=(8, 16))
    old = report([trace("x", "n8", "vadd")], shards=Shards(2, (1,), "round-robin"))
    atomic_write(tmp_path / "old.json", json.dumps(old.to_json()))
    code = main(["run", str(suite), "--device", "cpu", "--shard", "1/2", "--out", str(tmp_path / "o"),
                 "--resume", str(tmp_path / "old.json")])
    assert code == 2 and "cut round-robin" in capsys.readouterr().err
    assert not (tmp_path / "o").exists() or not list((tmp_path / "o").glob("*.json"))
