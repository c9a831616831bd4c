"""Solution workers start ahead of their turn, a window of them, with harness code only (Prepare), and wait
stopped (or start stopped) while another is timed; each turn takes its own and moves the window on; the
stray sweep after a solution spares them; whatever is not taken is gone at the end (real workers, CPU)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from factories import axpy_document, solution
from harness.execute import containment
from harness.execute.isolation import Worker
from harness.execute.protocol import Build, Built
from harness.run import spares as spares_mod
from harness.run.runner import Runner, RunOptions
from harness.run.spares import Spares
from harness.spec.manifest import load_manifest


def _manifest(tmp_path: Path, names: list[str]):
    path = tmp_path / "axpy.yaml"
    path.write_text(yaml.safe_dump(axpy_document([solution(n, "good.py") for n in names],
                                                 {"max_time_s": 0.1}), sort_keys=False))
    return load_manifest(path)


def _state(pid: int, want: str = "T", settle_s: float = 2.0) -> str:
    """The process's state, read until it is `want` or `settle_s` passed (a signal is delivered
    asynchronously: a loaded machine read 'R' right after SIGSTOP)."""
    import time
    end = time.monotonic() + settle_s
    while True:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if (state == want) or time.monotonic() > end:
            return state
        time.sleep(0.01)


def test_a_window_starts_at_once_and_each_turn_takes_its_own_and_moves_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spares_mod, "BATCH", 2)
    m = _manifest(tmp_path, ["a", "b", "c"])
    made: list[Worker] = []

    def make(sol):
        made.append(Worker(sol.name, tmp_path / "logs"))
        return made[-1]

    spares = Spares(list(m.solutions), make, "cpu", 0, 120).fill()
    try:
        assert [w.label for w in made] == ["a", "b"] and all(w.alive for w in made)  # a batch, not one by one
        a = spares.take(m.solutions[0])  # the window moves on: c starts, b may still be starting
        assert a is made[0] and [w.label for w in made] == ["a", "b", "c"]
        assert spares.pids() == {made[1].pid, made[2].pid}
        with spares.frozen():  # stopped while another solution is timed, started or still starting
            assert _state(made[1].pid) == "T" and _state(made[2].pid) == "T"
        assert _state(made[1].pid, want="S") != "T"
        assert isinstance(a.call(Build(m.solutions[0], m.definition, "cpu", 0), timeout=120), Built)
        c = spares.take(m.solutions[2])  # its own Prepare answered; b's goes on
        assert c is made[2] and spares.pids() == {made[1].pid}
    finally:
        spares.close()
        for w in made:
            w.kill()
    assert not any(w.alive for w in made)


def test_a_run_uses_each_prepared_worker_and_leaves_none(tmp_path: Path) -> None:
    before = containment.descendants(os.getpid())
    report = Runner(_manifest(tmp_path, ["a", "b", "c"]), RunOptions(device="cpu", log_dir=tmp_path / "logs")).run()
    assert [str(t.status) for t in report.traces] == ["PASSED"] * 3
    for name in "abc":  # one worker each: a spare the stray sweep killed would have been restarted
        log = (tmp_path / "logs" / f"{name}.log").read_text()
        assert " started " in log and " restarted " not in log
    left = containment.descendants(os.getpid()) - before - containment._own_helpers()
    assert not left


def test_a_prepared_worker_imports_its_languages_runtime_and_a_missing_one_proves_nothing(tmp_path: Path) -> None:
    from harness.execute.protocol import Prepare, Prepared
    from harness.execute.solutions import runtime_module
    assert [runtime_module(lang) for lang in ("pytorch", "cuda_cpp", "triton", "tilelang", "cute_dsl", "cutile")] == \
        [None, "torch.utils.cpp_extension", "triton", "tilelang", "cutlass", "cuda.tile"]
    for language in ("triton", "cutile"):  # not installed on a CPU machine: the Build, not the Prepare, says so
        worker = Worker(language, tmp_path / "logs")
        try:
            assert isinstance(worker.call(Prepare("cpu", 0, False, language), timeout=120), Prepared)
        finally:
            worker.kill()
