"""A process started before its worker is known becomes that worker, with what it printed before in
the worker's log; one never taken, or gone, costs nothing: the worker spawns afresh, and a run that
stops on bad input leaves no process behind (real processes, CPU)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from factories import axpy_document, solution
from harness.cli import main
from harness.execute import spawn
from harness.execute.containment import descendants
from harness.execute.isolation import Worker
from harness.execute.protocol import Prepare, Prepared
from harness.run.runner import Runner, RunOptions
from harness.spec.manifest import load_manifest


def test_an_early_process_becomes_the_worker_and_its_imports_output_goes_to_the_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPROFILEIMPORTTIME", "1")  # the child prints every import it makes, on stderr
    early = spawn.Early()
    pid = early.pid
    worker = Worker("early", tmp_path / "logs", early=early)
    try:
        assert isinstance(worker.call(Prepare("cpu", 0), timeout=120), Prepared)
        assert worker.pid == pid and early.pid is None  # taken: the same process, and only once
        log = (tmp_path / "logs" / "early.log").read_text()
        assert log.startswith("== opbench run -: early started")
        assert "import time:" in log and "| torch" in log  # imported before it knew its log, kept there
    finally:
        worker.close()
    early.close()  # already taken: nothing to do


def test_an_early_process_that_died_is_replaced_and_one_never_taken_is_killed(tmp_path: Path) -> None:
    dead = spawn.Early()
    dead_pid = dead.pid
    dead.proc.kill()
    dead.proc.join(10)
    worker = Worker("fresh", tmp_path / "logs", early=dead)
    try:
        assert isinstance(worker.call(Prepare("cpu", 0), timeout=120), Prepared)
        assert worker.pid not in (None, dead_pid) and dead.pid is None
    finally:
        worker.close()
    unused = spawn.Early()
    pid = unused.pid
    unused.close()
    assert pid not in descendants(os.getpid()) and unused.pid is None


def test_a_run_takes_the_first_early_process_for_its_reference_and_the_next_for_its_solutions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "axpy.yaml"
    path.write_text(yaml.safe_dump(axpy_document([solution("good", "good.py"), solution("also", "good.py")],
                                                 {"max_time_s": 0.1}), sort_keys=False))
    early = [spawn.Early() for _ in range(4)]
    pids = [e.pid for e in early]
    taken: dict[int | None, str] = {}
    take = spawn.Early.take
    monkeypatch.setattr(spawn.Early, "take", lambda self, log, box: taken.setdefault(self.pid, Path(log).stem)
                        and take(self, log, box))
    report = Runner(load_manifest(path), RunOptions(device="cpu", log_dir=tmp_path / "logs"), early=early).run()
    assert report.summary.ok
    assert taken == {pids[0]: "reference.axpy", pids[1]: "good", pids[2]: "also"}  # in order
    assert [e.pid for e in early] == [None] * 4 and not {pids[3]} & descendants(os.getpid())  # the fourth killed


def test_no_early_process_where_the_run_starts_its_workers_elsewhere() -> None:
    from harness.cli.run import early_workers
    from harness.paths import MANIFESTS_DIR
    with early_workers(MANIFESTS_DIR / "rmsnorm.yaml", devices="all") as early:
        assert early == ()
    with early_workers(MANIFESTS_DIR / "bench_rmsnorm.yaml") as early:
        assert early == ()


def test_a_run_stopped_by_bad_input_leaves_no_early_process(tmp_path: Path) -> None:
    before = descendants(os.getpid())
    assert main(["run", "rmsnorm.yaml", "--device", "cpu", "--solution", "no-such", "--out", str(tmp_path)]) == 2
    assert descendants(os.getpid()) <= before
